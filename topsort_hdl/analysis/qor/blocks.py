"""The kernel's blocks as its emitted Verilog holds them, and its groups as the floorplan places
them.

The estimate synthesises the design ``generate`` writes, not a second construction of it: the
kernel is emitted hierarchically (:func:`~topsort_hdl.hardware.block.hierarchical_verilog`, each
distinct block one module), and its *parts* are the cells the floorplan places
(:func:`~topsort_hdl.targets.vitis.floorplan.tree_cells` of every tree, phase 2's units, packer and
writer), the control block and each port's register stages. Each distinct module among the
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
"""

import fnmatch
from dataclasses import dataclass

from ...hardware.block import verilog_instances, verilog_modules, verilog_subset
from ...hardware.kernel.kernel import merge_record
from ...hardware.merge import FlimsMergeUnit, MmsMergeUnit, SelectMergeUnit
from ...hardware.records import tree_record
from ...hardware.tree.merge_tree import tree_merge_unit
from ...targets.kernel_verilog import kernel_verilog

__all__ = ["DesignBlock", "KernelParts", "kernel_parts", "compose", "merge_unit", "GROUPS"]

TOP = "topsort"
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

    plan = board_floorplan(config)
    return tuple(plan.stages) if plan is not None else (0,) * config.trees


def _describe(block):
    summary = (block.__doc__ or type(block).__name__).strip().splitlines()[0].rstrip(".")
    return f"{block.module_tag()}: {summary[0].lower()}{summary[1:]}"


def _names(design, modules):
    """A short name per module: its tag, or the module name where two modules share one."""
    tags = {module: design.blocks[module].module_tag() for module in modules}
    shared = {tag for tag in tags.values() if list(tags.values()).count(tag) > 1}
    return {module: module.removeprefix(f"{TOP}_") if tag in shared else tag
            for module, tag in tags.items()}


def _part(path, pattern):
    """Whether cell ``path`` is one ``pattern`` names (in the pattern's own parent, not
    below)."""
    parent, _ = pattern.rsplit("/", 1)
    return path.rsplit("/", 1)[0] == parent and fnmatch.fnmatchcase(path, pattern)


def kernel_parts(config, port_stages=None):
    """Emit ``config``'s kernel (``port_stages`` as :func:`generate` would give it, by default
    its floorplan's) and split it into its parts; a :class:`KernelParts`."""
    c = config
    if port_stages is None:
        port_stages = _port_stages(c)
    from ...targets.vitis.floorplan import CONTROL_CELL, PHASE2_CELLS, tree_cells

    design, _ = kernel_verilog(c, TOP, port_stages)
    paths = verilog_instances(design.text, TOP)
    modules = verilog_modules(design.text)
    reused = set(c.reused_trees)
    phase1 = next(t for t in range(c.trees) if t not in reused)
    cells = {
        "phase-1 tree": tree_cells(c, phase1),
        "reused tree": tree_cells(c, min(reused)),
        "phase-2 extras": [path for path in paths if any(_part(path, p) for p in PHASE2_CELLS)],
        "control": [CONTROL_CELL],
        "register slices": [f"kernel/port{t}" for t in range(c.trees)],
    }
    # Every tree, not only the two of the groups: the kernel counts each once.
    cells["kernel"] = ([cell for t in range(c.trees) for cell in tree_cells(c, t)]
                       + cells["phase-2 extras"] + cells["control"] + cells["register slices"])
    parts = list(dict.fromkeys(paths[cell] for cell in cells["kernel"]))
    units = sorted((m for m, b in design.blocks.items()
                    if isinstance(b, (FlimsMergeUnit, MmsMergeUnit, SelectMergeUnit))),
                   key=lambda m: getattr(design.blocks[m], "rate", 1))
    names = _names(design, parts)
    names.update({m: f"merge_unit_{getattr(design.blocks[m], 'rate', 1)}" for m in units})
    blocks = {names[m]: DesignBlock(names[m], m, verilog_subset(modules, m),
                                    _describe(design.blocks[m]))
              for m in dict.fromkeys(parts + units)}
    groups = {group: [names[paths[cell]] for cell in group_cells]
              for group, group_cells in cells.items()}
    return KernelParts(c, blocks, groups, tuple(port_stages))


def compose(groups, usage):
    """Each group's total: the sum of ``usage`` (block name -> Utilization) over its cells."""
    from .synth import Utilization

    return {group: sum((usage[name] for name in names), Utilization())
            for group, names in groups.items()}
