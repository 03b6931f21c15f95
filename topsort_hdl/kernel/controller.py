"""Per-tree pass controller: phase 1 of one tree, and the phase-2 leaves of a reused tree.

It computes :mod:`topsort_hdl.kernel.plan` in hardware, one step per cycle: the number of
passes follows from the record count (the host never computes passes), the last pass is tuned
to leave at most F runs, and each pass ping-pongs between the tree's two channels.
"""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..axi.reader import region_layout
from .feeder import feeder_command_layout
from .packer import packer_command_layout

__all__ = ["TreeController", "COUNT_BITS"]

COUNT_BITS = 40      # record counts: 2^40 records is far beyond any HBM board


def writer_command_layout(params, ports, slots, length_bits):
    return data.StructLayout({
        "addr": data.ArrayLayout(params.addr_width, ports * slots),
        "bytes": length_bits,
    })


class TreeController(wiring.Component):
    """Drive one tree's read engine, leaf feeders, root packer and write engine.

    Phase 1 (``start`` pulse, with ``records`` and ``halves`` steady: the byte addresses of the
    tree's two buffer halves, its records at the start of half 0): passes until the tree holds
    at most ``config.runs_per_tree`` runs; then ``done`` rises and ``half`` and ``run_log2``
    tell where the runs are and how long. Phase 2 (``start2`` pulse, reused trees only):
    point leaf j at run ``j % F`` of group tree ``j // F`` (described by the ``group_*``
    inputs); ``done2`` rises when every leaf command is out.
    """

    def __init__(self, config, *, reused=False):
        self.config = config
        self.reused = reused
        p = config.axi
        length_bits = COUNT_BITS + exact_log2(config.record_bytes)
        self.length_bits = length_bits
        members = {
            "start": In(1),
            "records": In(COUNT_BITS),
            "halves": In(data.ArrayLayout(p.addr_width, 2)),
            "done": Out(1),
            "half": Out(1),
            "run_log2": Out(range(COUNT_BITS + 1)),
            "reader_cmd": Out(stream.Signature(region_layout(p, length_bits, config.leaves))),
            "feeder_cmd": Out(stream.Signature(feeder_command_layout(COUNT_BITS)))
            .array(config.leaves),
            "packer_cmd": Out(stream.Signature(packer_command_layout(COUNT_BITS))),
            "writer_cmd": Out(stream.Signature(writer_command_layout(p, 1, 1, length_bits))),
            "writer_done": In(1),
        }
        if reused:
            group = config.group
            members.update({
                "start2": In(1),
                "done2": Out(1),
                "group_records": In(data.ArrayLayout(COUNT_BITS, group)),
                "group_halves": In(data.ArrayLayout(data.ArrayLayout(p.addr_width, 2), group)),
                "group_half": In(data.ArrayLayout(1, group)),
                "group_run_log2": In(data.ArrayLayout(range(COUNT_BITS + 1), group)),
            })
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        leaves, final = c.leaves, c.runs_per_tree
        leaf_bits, final_bits = exact_log2(leaves), exact_log2(final)
        record_bits = exact_log2(c.record_bytes)

        runs = Signal(COUNT_BITS)              # runs in the source half
        run_log2 = self.run_log2               # their length
        half = self.half                       # the source half
        active_log2 = Signal(range(leaf_bits + 1))
        groups = Signal(COUNT_BITS)
        q = Signal(COUNT_BITS)
        rem = Signal(leaf_bits + 1)
        leaf = Signal(range(leaves + 1))
        run = Signal(COUNT_BITS + 1)           # first run of the current leaf
        fed = Signal()                         # the current leaf's feeder command is taken
        read = Signal()                        # ... and its reader command
        wrote = Signal()                       # the pass's writer command is taken
        packed = Signal()                      # ... and its packer command
        records = self.records

        # Active leaves of the last pass: the smallest power of two leaving <= F runs.
        per_run = Signal(COUNT_BITS)
        m.d.comb += per_run.eq(((runs + final - 1) >> final_bits) - 1)   # ceil(R / F) - 1
        last_active_log2 = Signal(range(leaf_bits + 1))
        for bit in range(leaf_bits):
            with m.If(per_run[bit]):
                m.d.comb += last_active_log2.eq(bit + 1)

        # The current leaf's region: active leaves are spread, every (l / a)-th one.
        active = Signal(leaves + 1)
        m.d.comb += active.eq(1 << active_log2)
        spread_log2 = Signal(range(leaf_bits + 1))
        m.d.comb += spread_log2.eq(leaf_bits - active_log2)
        is_active = (leaf & ((1 << spread_log2) - 1)) == 0
        count = Signal(COUNT_BITS + 1)
        m.d.comb += count.eq(Mux(is_active, q + ((leaf >> spread_log2) >= active - rem), 0))
        first = Signal(COUNT_BITS + 1)
        end = Signal(COUNT_BITS + 1)
        m.d.comb += [
            first.eq(run << run_log2),
            end.eq(Mux(((run + count) << run_log2) < records, (run + count) << run_log2,
                       records)),
        ]
        length = Signal(COUNT_BITS)
        m.d.comb += length.eq(Mux((count != 0) & (end > first), end - first, 0))
        source = Signal(64)
        m.d.comb += source.eq(Mux(half, self.halves[1], self.halves[0]))

        feeder_payload = Signal(feeder_command_layout(COUNT_BITS))
        reader_payload = Signal.like(self.reader_cmd.payload)
        for j in range(leaves):
            m.d.comb += self.feeder_cmd[j].payload.eq(feeder_payload)
        m.d.comb += self.reader_cmd.payload.eq(reader_payload)

        def issue_leaf(next_state, advance=()):
            """Hand the current leaf its feeder and reader commands; then the next leaf."""
            for j in range(leaves):
                m.d.comb += self.feeder_cmd[j].valid.eq(~fed & (leaf == j))
            m.d.comb += self.reader_cmd.valid.eq(~read & (reader_payload.bytes != 0))
            fed_now = fed | Cat(self.feeder_cmd[j].valid & self.feeder_cmd[j].ready
                                for j in range(leaves)).any()
            read_now = read | (reader_payload.bytes == 0) | \
                (self.reader_cmd.valid & self.reader_cmd.ready)
            with m.If(fed_now & read_now):
                m.d.sync += [fed.eq(0), read.eq(0), leaf.eq(leaf + 1), *advance]
                with m.If(leaf == leaves - 1):
                    m.next = next_state
            with m.Else():
                m.d.sync += [fed.eq(fed_now), read.eq(read_now)]

        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [runs.eq(records), run_log2.eq(0), half.eq(0),
                                 self.done.eq(0)]
                    m.next = "DECIDE"
                if self.reused:
                    with m.If(self.start2):
                        m.d.sync += [leaf.eq(0), fed.eq(0), read.eq(0), self.done2.eq(0)]
                        m.next = "PHASE2"
            with m.State("DECIDE"):
                with m.If(runs <= final):
                    m.d.sync += self.done.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    a_log2 = Mux(runs > (final << leaf_bits), leaf_bits, last_active_log2)
                    m.d.sync += active_log2.eq(a_log2)
                    m.next = "SIZE"
            with m.State("SIZE"):
                m.d.sync += [
                    groups.eq((runs + active - 1) >> active_log2),
                    q.eq(runs >> active_log2),
                    rem.eq(runs & (active - 1)),
                    leaf.eq(0), run.eq(0), fed.eq(0), read.eq(0), wrote.eq(0), packed.eq(0),
                ]
                m.next = "WRITE"
            with m.State("WRITE"):
                # The write engine and the packer first: the tree's output needs them.
                m.d.comb += [
                    self.writer_cmd.valid.eq(~wrote),
                    self.writer_cmd.payload.addr[0].eq(Mux(half, self.halves[0],
                                                           self.halves[1])),
                    self.writer_cmd.payload.bytes.eq(records << record_bits),
                    self.packer_cmd.valid.eq(~packed),
                    self.packer_cmd.payload.records.eq(records),
                ]
                wrote_now = wrote | self.writer_cmd.ready
                packed_now = packed | self.packer_cmd.ready
                m.d.sync += [wrote.eq(wrote_now), packed.eq(packed_now)]
                with m.If(wrote_now & packed_now):
                    m.next = "LEAVES"
            with m.State("LEAVES"):
                m.d.comb += [
                    feeder_payload.records.eq(length),
                    feeder_payload.run_log2.eq(run_log2),
                    feeder_payload.groups.eq(groups),
                    reader_payload.target.eq(leaf),
                    reader_payload.addr.eq(source + (first << record_bits)),
                    reader_payload.bytes.eq(length << record_bits),
                ]
                issue_leaf("WAIT", [run.eq(run + count)])
            with m.State("WAIT"):
                with m.If(self.writer_done):
                    m.d.sync += [
                        runs.eq(groups),
                        run_log2.eq(run_log2 + active_log2),
                        half.eq(~half),
                    ]
                    m.next = "DECIDE"
            if self.reused:
                with m.State("PHASE2"):
                    tree = Signal(range(max(2, c.group)))
                    k = Signal(range(max(2, final)))
                    m.d.comb += [tree.eq(leaf >> final_bits), k.eq(leaf & (final - 1))]
                    g_records = self.group_records[tree]
                    g_log2 = self.group_run_log2[tree]
                    g_first = Signal(COUNT_BITS + 1)
                    g_end = Signal(COUNT_BITS + 1)
                    m.d.comb += [
                        g_first.eq(k << g_log2),
                        g_end.eq(Mux(((k + 1) << g_log2) < g_records, (k + 1) << g_log2,
                                     g_records)),
                    ]
                    g_length = Mux(g_end > g_first, g_end - g_first, 0)
                    g_halves = self.group_halves[tree]
                    g_source = Mux(self.group_half[tree], g_halves[1], g_halves[0])
                    m.d.comb += [
                        feeder_payload.records.eq(g_length),
                        feeder_payload.run_log2.eq(COUNT_BITS),
                        feeder_payload.groups.eq(1),
                        reader_payload.target.eq(leaf),
                        reader_payload.addr.eq(g_source + (g_first << record_bits)),
                        reader_payload.bytes.eq(g_length << record_bits),
                    ]
                    issue_leaf("ISSUED2")
                with m.State("ISSUED2"):
                    m.d.sync += self.done2.eq(1)
                    m.next = "IDLE"
        return m
