"""The distinct blocks of a kernel configuration, and the whole kernel by composition.

Each block is built exactly as :class:`~topsort_hdl.kernel.kernel.TopSortKernel` builds it
(same parameters), synthesised once, and multiplied by how often the kernel instantiates it:

- a **phase-1 tree**: the merge tree (every merge unit and coupler, leaf buffers), its ``l``
  leaf feeders, read engine, root packer, write engine and pass controller;
- a **reused tree**: the same with the phase-2 read bursts and controller (its tree's merge
  units are the same; the paper's Table III counts the larger bursts' buffers here);
- the **phase-2 extras**: the merge units of rates 2p .. rp with their couplers, the wide root
  packer and the r-port write engine;
- each **merge unit** rate on its own (1 .. rp), to see where a tree's logic goes;
- the **control** block (AXI4-Lite registers) and the die-crossing **register slices** of the
  configuration's floorplan.

The kernel's top-level glue (its job FSM and argument checks) is not counted: a few hundred
LUTs at most.
"""

from dataclasses import dataclass

from ..axi import AxiWriteEngine, ControlRegisters
from ..axi.register_slice import AxiRegisterSlice
from ..kernel.controller import COUNT_BITS, TreeController
from ..kernel.feeder import LeafFeeder
from ..kernel.kernel import (
    CONTROL_ADDR_WIDTH,
    LEAF_DEPTH,
    PORT_ALWAYS_READY,
    kernel_arguments,
    kernel_counters,
    tree_read_engine,
)
from ..kernel.packer import RootPacker
from ..records import tree_record
from ..tree import MergeTree
from ..tree.coupler import Coupler
from ..tree.merge_tree import tree_merge_unit, tree_rates
from ..tree.reuse import extra_rates
from .synth import Utilization

__all__ = ["Block", "kernel_blocks", "merge_unit_blocks", "compose"]


@dataclass(frozen=True)
class Block:
    """A block to synthesise: ``name``, a factory of its component, and its parameters."""

    name: str
    build: object
    description: str


def _length_bits(config):
    return COUNT_BITS + (config.record_bytes.bit_length() - 1)


def merge_unit(config, rate):
    """The merge unit of ``config``'s trees at ``rate``, built as the trees build it."""
    return tree_merge_unit(tree_record(config.record), rate)


def merge_unit_blocks(config):
    """One block per merge-unit rate of the trees and of the phase-2 extras."""
    rates = sorted(set(tree_rates(config.rate, config.leaves))
                   | set(extra_rates(config.rate, config.reuse)))
    return [Block(f"merge_unit_{rate}", lambda rate=rate: merge_unit(config, rate),
                  f"merge unit, {rate} record{'s' if rate > 1 else ''}/cycle "
                  f"({'selector' if rate == 1 else 'MMS'})") for rate in rates]


def kernel_blocks(config):
    """Every distinct block of ``config``'s kernel (see the module docstring)."""
    c = config
    p = c.axi
    record = c.record
    length_bits = _length_bits(c)
    padded = tree_record(record)
    blocks = [
        Block("merge_tree", lambda: MergeTree(record, c.rate, c.leaves, leaf_depth=LEAF_DEPTH),
              f"merge tree p={c.rate}, l={c.leaves} (units, couplers, leaf buffers)"),
        Block("leaf_feeder", lambda: LeafFeeder(record, p, COUNT_BITS), "leaf feeder"),
        Block("read_engine", lambda: tree_read_engine(c),
              f"AXI read engine, {c.read_burst_bytes} B bursts"),
        Block("read_engine_reused", lambda: tree_read_engine(c, reused=True),
              f"AXI read engine, {c.reuse_burst_bytes} B phase-2 bursts"),
        Block("write_engine", lambda: AxiWriteEngine(
            p, 1, burst_bytes=c.write_burst_bytes, batch_bytes=c.batch_bytes,
            max_outstanding=c.write_outstanding, length_bits=length_bits),
            "AXI write engine, 1 port"),
        Block("root_packer", lambda: RootPacker(record, c.rate, COUNT_BITS),
              f"root packer, {c.rate} records"),
        Block("controller", lambda: TreeController(c), "pass controller"),
        Block("controller_reused", lambda: TreeController(c, reused=True),
              "pass controller with phase-2 leaves"),
        Block("coupler", lambda: Coupler(padded, c.rate), f"coupler {c.rate} -> {2 * c.rate}"),
        *[Block(f"coupler_{rate}", lambda rate=rate: Coupler(padded, rate),
                f"coupler {rate} -> {2 * rate}") for rate in extra_rates(c.rate, c.reuse)[1:]],
        Block("phase2_packer", lambda: RootPacker(record, c.reuse * c.rate, COUNT_BITS),
              f"root packer, {c.reuse * c.rate} records"),
        Block("phase2_write_engine", lambda: AxiWriteEngine(
            p, c.reuse, slots=c.group, burst_bytes=c.write_burst_bytes,
            batch_bytes=c.batch_bytes, max_outstanding=c.write_outstanding,
            length_bits=length_bits), f"AXI write engine, {c.reuse} ports"),
        Block("control", lambda: ControlRegisters(kernel_arguments(c), kernel_counters(c),
                                                  addr_width=CONTROL_ADDR_WIDTH),
              "AXI4-Lite control registers"),
        *[Block(name, lambda stages=stages: AxiRegisterSlice(
            p, stages, always_ready=PORT_ALWAYS_READY), f"AXI register slice, {stages} "
            f"stage{'s' if stages > 1 else ''} (R, B forward only)")
          for name, stages in (("register_slice", 1), ("register_slice_2", 2))],
    ]
    # Every merge-unit rate is reported; those of the trees count inside "merge_tree".
    return blocks + merge_unit_blocks(c)


def compose(config, usage, port_stages=()):
    """The kernel's groups from per-block ``usage`` (name -> Utilization): returns
    ``{"phase-1 tree", "reused tree", "phase-2 extras", "control", "register slices",
    "kernel"}`` -> Utilization."""
    c = config
    tree_common = (usage["merge_tree"] + usage["leaf_feeder"] * c.leaves
                   + usage["write_engine"] + usage["root_packer"])
    phase1_tree = tree_common + usage["read_engine"] + usage["controller"]
    reused_tree = tree_common + usage["read_engine_reused"] + usage["controller_reused"]
    rates = extra_rates(c.rate, c.reuse)
    extras = usage["coupler"] * c.reuse
    for level, rate in enumerate(rates):
        extras = extras + usage[f"merge_unit_{rate}"] * (1 << level)
        if level:
            extras = extras + usage[f"coupler_{rate}"] * (1 << level)
    extras = extras + usage["phase2_packer"] + usage["phase2_write_engine"]
    # A port's first stage holds its credit FIFOs; each further stage costs the difference.
    one, two = usage["register_slice"], usage["register_slice_2"]
    slices = Utilization()
    for stages in port_stages:
        if stages:
            slices = slices + one * (2 - stages) + two * (stages - 1)
    groups = {
        "phase-1 tree": phase1_tree,
        "reused tree": reused_tree,
        "phase-2 extras": extras,
        "control": usage["control"],
        "register slices": slices,
    }
    groups["kernel"] = (phase1_tree * (c.trees - c.reuse) + reused_tree * c.reuse + extras
                        + usage["control"] + slices)
    return groups
