"""The kernel's blocks as its emitted Verilog holds them, and its groups as the floorplan places
them.

The estimate synthesises the design ``generate`` writes, not a second construction of it: the
kernel is emitted hierarchically
(:func:`~topsort_hdl.targets.hierarchy.hierarchical_verilog`, each distinct block one module),
and its *parts* are the cells the floorplan places
(:func:`~topsort_hdl.targets.vitis.floorplan.tree_cells` of every tree, phase 2's units, packer
and writer), the control block and each port's register stages. Each distinct module among the
parts is synthesised once, with everything it instantiates, and a group is the sum over its
cells:

- a **phase-1 tree** and a **reused tree**: the cells of one tree of each kind (merge tree,
  leaf feeders, read and write engines, root packer, pass controller);
- the **phase-2 extras**: the reuse switch's couplers and extra merge units, the wide root
  packer and the phase-2 write engine;
- the **control** block and the **register slices** of every port;
- the **kernel**: every part, each tree once.

The glue above the parts (the kernel's job FSM and argument checks, the reuse switch's
multiplexers) is not counted: a few hundred LUTs at most. Each merge unit rate is reported too
(``merge_unit_<rate>``: inside the trees, not added again).

The parts are found without converting the kernel (:func:`kernel_bill`, a census of its
blocks: about 2 s for ``u280`` where converting it takes a minute), and each part's Verilog is
the text the whole kernel's emission holds for it (:func:`~topsort_hdl.targets.hierarchy.
block_verilog`; a test compares them), so the estimate still synthesises what ``generate``
writes and its cache serves both.
"""

import fnmatch
from dataclasses import dataclass

from ...hardware.kernel.kernel import TopSortKernel
from ...hardware.kernel.lane import TreeLane, merge_record
from ...hardware.merge import FlimsMergeUnit, MmsMergeUnit, SelectMergeUnit
from ...hardware.records import tree_record
from ...hardware.tree.merge_tree import MergeTree, tree_merge_unit
from ...hardware.tree.reuse import ReuseSwitch
from ...targets.hierarchy import block_census, block_verilog
from ...targets.kernel_verilog import TOP_NAME

__all__ = ["DesignBlock", "KernelBill", "kernel_bill", "KernelParts", "kernel_parts", "compose",
           "merge_unit", "GROUPS"]

TOP = TOP_NAME      # (module names carry the top's name: the same as generate's)
GROUPS = ("phase-1 tree", "reused tree", "phase-2 extras", "control", "register slices")


@dataclass(frozen=True)
class DesignBlock:
    """One distinct module of the kernel to synthesise: its ``name`` in the figures, its
    Verilog ``module``, the ``verilog`` of it and everything under it, and a ``description``."""

    name: str
    module: str
    verilog: str
    description: str


@dataclass(frozen=True)
class KernelBill:
    """The kernel of ``config`` as the estimate counts it, before any conversion: ``blocks``
    (name -> the :class:`~topsort_hdl.hardware.block.Block`: every part, then with ``units``
    every merge unit rate), ``modules`` (name -> its Verilog module), the cells of each group
    (``groups``: group -> [block name per cell]) and the ``port_stages``."""

    config: object
    blocks: dict
    modules: dict
    groups: dict
    port_stages: tuple


@dataclass(frozen=True)
class KernelParts:
    """The kernel of ``config`` as the estimate counts it: ``blocks`` (name ->
    :class:`DesignBlock`: every part's module, then every merge unit rate), the cells of each
    group (``groups``: group -> [block name per cell]) and the ``port_stages`` it was emitted
    with."""

    config: object
    blocks: dict
    groups: dict
    port_stages: tuple


def merge_unit(config, rate):
    """The merge unit of ``config``'s trees at ``rate``, built as the trees build it."""
    return tree_merge_unit(tree_record(merge_record(config)), rate, kind=config.merge_unit)


def _port_stages(config):
    from ...targets.vitis.project import board_floorplan

    try:
        plan = board_floorplan(config)
    except ValueError:
        # (no placement with the figures at hand: the paper's, before a new shape's own are
        # stored; the estimate then counts ports without stages, and plans with its figures)
        plan = None
    return tuple(plan.stages) if plan is not None else (0,) * config.trees


def _describe(block):
    summary = (block.__doc__ or type(block).__name__).strip().splitlines()[0].rstrip(".")
    return f"{block.module_tag()}: {summary[0].lower()}{summary[1:]}"


def _names(blocks, modules):
    """A short name per module (``blocks``: module -> block): its tag, or the module name where
    two modules share one."""
    tags = {module: blocks[module].module_tag() for module in modules}
    shared = {tag for tag in tags.values() if list(tags.values()).count(tag) > 1}
    return {module: module.removeprefix(f"{TOP}_") if tag in shared else tag
            for module, tag in tags.items()}


def _part(path, pattern):
    """Whether cell ``path`` is one ``pattern`` names (in the pattern's own parent, not
    below)."""
    parent, _ = pattern.rsplit("/", 1)
    return path.rsplit("/", 1)[0] == parent and fnmatch.fnmatchcase(path, pattern)


def kernel_bill(config, port_stages=None, units=False):
    """``config``'s kernel (``port_stages`` as :func:`generate` would give it, by default its
    floorplan's) as a :class:`KernelBill`, from a census of its blocks; with ``units``, the
    merge units inside its trees too."""
    from ...targets.vitis.floorplan import CONTROL_CELL, PHASE2_CELLS, tree_cells

    c = config
    if port_stages is None:
        port_stages = _port_stages(c)
    inside = (ReuseSwitch, TreeLane, MergeTree) if units else (ReuseSwitch, TreeLane)
    census = block_census(TopSortKernel(c, port_stages), TOP,
                          descend=lambda block: isinstance(block, inside))
    # (generate's top holds the kernel as its cell "kernel")
    paths = {f"kernel/{path}": module for path, module in census.cells.items()}
    reused = set(c.reused_trees)
    # (when phase 2 reuses every tree, as the on-chip demo does, no tree is phase 1's alone)
    phase1 = next((t for t in range(c.trees) if t not in reused), None)
    cells = {
        "phase-1 tree": tree_cells(c, phase1) if phase1 is not None else [],
        "reused tree": tree_cells(c, min(reused)),
        "phase-2 extras": [path for path in paths if any(_part(path, p) for p in PHASE2_CELLS)],
        "control": [CONTROL_CELL],
        "register slices": [f"kernel/port{t}" for t in range(c.trees)],
    }
    # Every tree, not only the two of the groups: the kernel counts each once.
    cells["kernel"] = ([cell for t in range(c.trees) for cell in tree_cells(c, t)]
                       + cells["phase-2 extras"] + cells["control"] + cells["register slices"])
    parts = list(dict.fromkeys(paths[cell] for cell in cells["kernel"]))
    found = census.blocks
    unit_modules = sorted((m for m, b in found.items()
                           if isinstance(b, (FlimsMergeUnit, MmsMergeUnit, SelectMergeUnit))),
                          key=lambda m: getattr(found[m], "rate", 1)) if units else []
    names = _names(found, parts)
    names.update({m: f"merge_unit_{getattr(found[m], 'rate', 1)}" for m in unit_modules})
    chosen = list(dict.fromkeys(parts + unit_modules))
    groups = {group: [names[paths[cell]] for cell in group_cells]
              for group, group_cells in cells.items()}
    return KernelBill(c, {names[m]: found[m] for m in chosen}, {names[m]: m for m in chosen},
                      groups, tuple(port_stages))


def kernel_parts(config, port_stages=None):
    """:func:`kernel_bill` with every merge unit rate and each block's Verilog: a
    :class:`KernelParts`."""
    bill = kernel_bill(config, port_stages, units=True)
    blocks = {name: DesignBlock(name, bill.modules[name], block_verilog(block, TOP),
                                _describe(block))
              for name, block in bill.blocks.items()}
    return KernelParts(config, blocks, bill.groups, bill.port_stages)


def compose(groups, usage):
    """Each group's total: the sum of ``usage`` (block name -> Utilization) over its cells."""
    from .synth import Utilization

    return {group: sum((usage[name] for name in names), Utilization())
            for group, names in groups.items()}
