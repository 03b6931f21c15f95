"""A tree's lane of the kernel: everything that moves one tree's records between its port and
its tree, with the controller that runs its passes."""

from amaranth.hdl import ClockDomain, ClockSignal, DomainRenamer, Module, ResetSignal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ...core.boards import HBM_BOARDS
from ...core.params import COUNT_BITS
from ..axi import REFILL_CYCLES, AxiReadEngine, AxiWriteEngine
from ..axi.signature import Axi4Signature
from ..block import Block
from ..records import BundleLayout, RecordLayout, tree_record
from ..tree import MergeTree
from .controller import ControllerShape, TreeController, group_members
from .feeder import LeafFeeder
from .key_order import KEY_ORDER_CONTROL, KeyOrderBeat
from .packer import RootPacker

__all__ = ["TreeLane", "LEAF_DEPTH", "merge_record", "tree_read_engine", "leaf_beats"]

LEAF_DEPTH = 4          # the read engine's per-leaf buffers already hold two bursts


def merge_record(config):
    """The records as the merge logic sees them: the key compared, the value carried; with
    equal keys ordered by value, the whole record is the key (its bits are the same)."""
    record_bits = config.key_bits + config.value_bits
    return RecordLayout(config.compare_bits, record_bits - config.compare_bits)


def tree_read_engine(config, reused=False):
    """A tree's read engine (``reused``: one of the phase-2 trees), as the lane builds it (and
    the QoR estimate)."""
    c = config
    # A tree runs about l bursts behind its reader, a fixed cost per pass: the reused trees'
    # long phase-2 bursts would quadruple it in every phase-1 pass.
    return AxiReadEngine(c.axi, c.leaves,
                         burst_bytes=c.reuse_burst_bytes if reused else c.read_burst_bytes,
                         short_burst_bytes=c.read_burst_bytes,
                         max_outstanding=c.read_outstanding,
                         length_bits=c.length_bits,
                         buffer_style=HBM_BOARDS[c.board].buffer_ram or None,
                         leaf_beats=leaf_beats(c),
                         presort=merge_record(c) if c.presort else None)


def leaf_beats(config):
    """Beat registers per leaf in front of a read engine's buffer memory: a leaf feeder takes a
    beat every ``records per beat`` cycles at most, a register refills in
    :data:`REFILL_CYCLES`."""
    per_beat = config.data_width // (config.key_bits + config.value_bits)
    return min(4, -(-REFILL_CYCLES // per_beat))


def lane_blocks(config, reused):
    """The names of a lane's blocks in the order the kernel's reset chain reaches them."""
    return (["reader", "writer", "packer", "controller"] + ([] if reused else ["tree"])
            + [f"feeder{j}" for j in range(config.leaves)])


class TreeLane(Block):
    """One tree's lane::

        axi_read --R--> read_order --> reader ==leaf[j]==> feeder[j] ==> tree (or the reuse
                                         ^                   ^            switch's leaves)
                                         |   controller -----+                  |
                                         +---(reader_cmd, feeder_cmd,           v
                                              packer_cmd, writer_cmd) ----> packer
        axi_write <-- writer <-- write_order <------------------------------------+

    A reused lane (``reused``) leaves its tree to the reuse switch: its feeders drive
    ``leaves`` and its packer takes ``root``, and its controller also plans phase 2 on its
    group (``start_phase2`` and the ``group_*`` members).

    Each block runs in a clock domain of its own (the lane's clock) whose reset is the lane's
    or its tap of ``resets`` (one per :func:`lane_blocks` name, in that order): the kernel
    restarts the blocks one a cycle after ap_start, from a chain of registers (see
    :class:`~topsort_hdl.hardware.kernel.kernel.TopSortKernel`).

    Members
    -------
    start : In(1)
        Phase 1, with ``records`` (the tree's share) and ``halves`` (its buffers) steady.
    phase2 : In(1)
        The kernel is in phase 2: the read engine issues its long bursts.
    order : In(KEY_ORDER_CONTROL)
        The job's key order: keys are mapped as they arrive and back as they leave.
    axi_read, axi_write : Out(Axi4Signature)
        The read half of one and the write half of the other go to the tree's port.
    done, half, run_log2 : Out
        The controller's: its phase 1 is over, the half its runs are in, their length.
    read_error, write_error, packer_busy : Out(1)
    leaves : Out(stream.Signature(BundleLayout(tree record, 1))).array(leaves)
        (reused) The feeders' runs, to the reuse switch.
    root : In(stream.Signature(BundleLayout(tree record, rate)))
        (reused) The switch's root for this tree, to the packer.
    start_phase2, group_records, group_halves, group_half, group_run_log2 : In
        (reused) Phase 2's start, and what its controller reads of its group's lanes.
    """

    def __init__(self, config, reused):
        self.config, self.reused = config, reused
        p, merged = config.axi, merge_record(config)
        members = {
            "resets": In(len(lane_blocks(config, reused))),
            "start": In(1),
            "phase2": In(1),
            "order": In(KEY_ORDER_CONTROL),
            "records": In(COUNT_BITS),
            "halves": In(data.ArrayLayout(p.addr_width, 2)),
            "axi_read": Out(Axi4Signature(p)),
            "axi_write": Out(Axi4Signature(p)),
            "done": Out(1),
            "half": Out(1),
            "run_log2": Out(range(COUNT_BITS + 1)),
            "read_error": Out(1),
            "write_error": Out(1),
            "packer_busy": Out(1),
        }
        if reused:
            leaf, root = (stream.Signature(BundleLayout(tree_record(merged), rate))
                          for rate in (1, config.rate))
            members.update({"leaves": Out(leaf).array(config.leaves), "root": In(root),
                            "start_phase2": In(1), **group_members(ControllerShape.of(config))})
        super().__init__(members)

    def module_tag(self):
        return "reused_lane" if self.reused else "lane"

    def elaborate(self, platform):
        m = Module()
        c, p, merged = self.config, self.config.axi, merge_record(self.config)
        record = RecordLayout(c.key_bits, c.value_bits)     # in memory
        taps = dict(zip(lane_blocks(c, self.reused), self.resets, strict=True))

        def block(name, elaboratable):
            domain = f"job_{name}"
            m.domains += ClockDomain(domain, local=True)
            m.d.comb += [ClockSignal(domain).eq(ClockSignal()),
                         ResetSignal(domain).eq(ResetSignal(allow_reset_less=True) | taps[name])]
            m.submodules[name] = DomainRenamer(domain)(elaboratable)
            return elaboratable

        reader = block("reader", tree_read_engine(c, reused=self.reused))
        writer = block("writer", AxiWriteEngine(
            p, 1, burst_bytes=c.write_burst_bytes, batch_bytes=c.batch_bytes,
            max_outstanding=c.write_outstanding, length_bits=c.length_bits))
        packer = block("packer", RootPacker(merged, c.rate, COUNT_BITS))
        control = block("controller", TreeController(ControllerShape.of(c), reused=self.reused))
        if self.reused:
            leaf_ports, root = self.leaves, self.root
        else:
            tree = block("tree", MergeTree(merged, c.rate, c.leaves, leaf_depth=LEAF_DEPTH,
                                           merge_unit=c.merge_unit))
            leaf_ports, root = list(tree.i), tree.o
        read_order = m.submodules.read_order = KeyOrderBeat(record, c.rate, "read")
        write_order = m.submodules.write_order = KeyOrderBeat(record, c.rate, "write")

        for j in range(c.leaves):
            feeder = block(f"feeder{j}", LeafFeeder(merged, p, COUNT_BITS))
            wiring.connect(m, reader.leaf[j], feeder.beats)
            wiring.connect(m, feeder.o, wiring.flipped(leaf_ports[j]) if self.reused
                           else leaf_ports[j])
            wiring.connect(m, control.feeder_cmd[j], feeder.cmd)
        wiring.connect(m, control.reader_cmd, reader.cmd)
        wiring.connect(m, control.packer_cmd, packer.cmd)
        wiring.connect(m, root if not self.reused else wiring.flipped(root), packer.i)
        wiring.connect(m, control.writer_cmd, writer.cmd)
        wiring.connect(m, wiring.flipped(self.axi_write), writer.axi[0])
        self._read_through(m, reader, read_order)
        self._write_through(m, packer, writer, write_order)

        m.d.comb += [
            reader.short_bursts.eq(~self.phase2),
            read_order.order.eq(self.order),
            write_order.order.eq(self.order),
            control.start.eq(self.start),
            control.records.eq(self.records),
            control.halves.eq(self.halves),
            control.writer_done.eq(writer.done),
            self.done.eq(control.done),
            self.half.eq(control.half),
            self.run_log2.eq(control.run_log2),
            self.read_error.eq(reader.error),
            self.write_error.eq(writer.error),
            self.packer_busy.eq(packer.busy),
        ]
        if c.presort:
            m.d.comb += reader.sort_beats.eq(control.sort_beats)
        if self.reused:
            m.d.comb += control.start_phase2.eq(self.start_phase2)
            for name in group_members(ControllerShape.of(c)):
                m.d.comb += getattr(control, name).eq(getattr(self, name))
        return m

    def _read_through(self, m, reader, keys):
        """The read engine's port as the lane's, its data through the read key order."""
        outer, inner = self.axi_read, reader.axi
        for name, member in inner.signature.members.items():
            if member.flow == Out:
                m.d.comb += getattr(outer, name).eq(getattr(inner, name))
            elif name == "rdata":
                m.d.comb += [keys.i.eq(outer.rdata), inner.rdata.eq(keys.o)]
            else:
                m.d.comb += getattr(inner, name).eq(getattr(outer, name))

    @staticmethod
    def _write_through(m, packer, writer, keys):
        """The packer's beats into the write engine, their records through the write key
        order."""
        m.d.comb += [
            writer.i.valid.eq(packer.o.valid),
            keys.i.eq(packer.o.payload),
            writer.i.payload.eq(keys.o),
            packer.o.ready.eq(writer.i.ready),
        ]
