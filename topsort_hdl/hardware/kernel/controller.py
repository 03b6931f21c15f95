"""Per-tree pass controller: phase 1 of one tree, and the phase-2 leaves of a reused tree.

It computes :mod:`topsort_hdl.core.plan` in hardware, one step per cycle: the number of
passes follows from the record count (the host never computes passes), the last pass is tuned
to leave at most F runs, and each pass ping-pongs between the tree's two channels.
"""

from dataclasses import dataclass

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.params import COUNT_BITS
from ..axi.reader import region_layout
from ..axi.writer import write_command_layout
from ..block import Block
from .feeder import feeder_command_layout
from .packer import packer_command_layout

__all__ = ["TreeController", "ControllerShape"]


@dataclass(frozen=True)
class ControllerShape:
    """What a tree controller's hardware follows from: the parts of a configuration it reads.
    (A block is identified by its arguments: a whole configuration would make controllers
    that differ only in, say, their clock or name distinct modules.)"""

    axi: object             # AxiParams
    length_bits: int
    rate: int
    leaves: int
    runs_per_tree: int      # F
    group: int              # S
    presort: int
    record_bytes: int

    @classmethod
    def of(cls, config):
        return cls(config.axi, config.length_bits, config.rate, config.leaves,
                   config.runs_per_tree, config.group, config.presort, config.record_bytes)


class TreeController(Block):
    """Drive one tree's read engine, leaf feeders, root packer and write engine.

    Phase 1 (``start`` pulse, with ``records`` and ``halves`` steady: the byte addresses of the
    tree's two buffer halves, its records at the start of half 0): passes until the tree holds
    at most ``shape.runs_per_tree`` runs; then ``done`` rises and ``half`` and ``run_log2``
    tell where the runs are and how long. Phase 2 (``start2`` pulse, reused trees only):
    point leaf j at run ``j % F`` of group tree ``j // F`` (described by the ``group_*``
    inputs); ``done2`` rises when every leaf command is out.

    Every command stream is driven from registers (payload and valid), and the leaf regions
    are computed in pipeline steps of one adder or comparator each, one leaf per cycle, into
    two-entry queues whose heads drive the feeder and reader streams: the controller is never
    on a path into the engines or feeders it commands.
    ``records`` is sampled at ``start``; the ``group_*`` inputs as phase 2 reads them.
    """

    def module_tag(self):
        return "tree_controller_reused" if self.reused else "tree_controller"

    def __init__(self, shape, *, reused=False):
        config = self.shape = shape
        self.reused = reused
        p = config.axi
        length_bits = self.length_bits = config.length_bits
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
            "writer_cmd": Out(stream.Signature(write_command_layout(p, 1, 1, length_bits))),
            "writer_done": In(1),
        }
        if config.presort:
            members["sort_beats"] = Out(1)     # the read engine sorts each beat (pass 1)
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
        c = self.shape
        leaves, final = c.leaves, c.runs_per_tree
        leaf_bits, final_bits = exact_log2(leaves), exact_log2(final)
        record_bits = exact_log2(c.record_bytes)
        # Record positions inside a half: below twice the record count (runs of the current
        # length cover the records with less than one run to spare), so COUNT_BITS + 1 bits.
        span_bits = COUNT_BITS + 1

        total = Signal(COUNT_BITS)             # the tree's records, latched at start
        runs = Signal(COUNT_BITS)              # runs in the source half
        run_log2 = self.run_log2               # their length
        half = self.half                       # the source half
        active_log2 = Signal(range(leaf_bits + 1))
        many = Signal()                        # more than F * l runs: every leaf active
        fits = Signal()                        # at most F runs: phase 1 ends
        last_active_log2 = Signal(range(leaf_bits + 1))
        groups = Signal(COUNT_BITS)
        q = Signal(COUNT_BITS)
        q1 = Signal(COUNT_BITS + 1)
        rem = Signal(leaf_bits + 1)
        threshold = Signal(leaf_bits + 1)      # active leaf k takes q + 1 runs from k >= a - rem
        threshold_less = Signal(leaf_bits + 1)  # threshold - 1
        q_span = Signal(span_bits)             # q runs, in records
        q1_span = Signal(span_bits)            # q + 1 runs
        source = Signal(64)                    # the pass's source half

        # Every command leaves from registers: payloads are loaded a step ahead and held, and
        # each valid is a flip-flop cleared by its transfer.
        writer_valid = Signal()
        packer_valid = Signal()
        writer_addr = Signal(64)
        m.d.comb += [
            self.writer_cmd.valid.eq(writer_valid),
            self.writer_cmd.payload.addr[0].eq(writer_addr),
            self.writer_cmd.payload.bytes.eq(total << record_bits),
            self.packer_cmd.valid.eq(packer_valid),
            self.packer_cmd.payload.records.eq(total),
        ]
        with m.If(self.writer_cmd.ready):
            m.d.sync += writer_valid.eq(0)
        with m.If(self.packer_cmd.ready):
            m.d.sync += packer_valid.eq(0)
        # writer_valid | packer_valid, in a flip-flop of its own: the leaf pipeline waits for
        # both commands to be taken, and a shared OR of four flags was a chain of LUTs into
        # every pipeline register.
        ahead = Signal()
        m.d.sync += ahead.eq((writer_valid & ~self.writer_cmd.ready) |
                             (packer_valid & ~self.packer_cmd.ready))

        # The leaf commands: a pipeline computes one leaf's region per step (its span of
        # records, then its first and end records, the end clipped to the record count, then
        # its length and byte address) into two queues of two entries, one for the feeder
        # commands and one for the reader commands (non-empty regions only). Each queue's head
        # drives its stream from registers and moves on its own consumer's ready; the pipeline
        # pushes a leaf when neither queue's second entry is taken, which it knows from
        # flip-flops: no ready reaches the pipeline's registers, and both streams can still
        # take a command every cycle (the read engine then serves every leaf's first burst
        # before any second one, as when the commands were combinational).
        feeder_valid = Signal(leaves)          # the feeder head's command is for feeder j
        feeder_length = Signal(COUNT_BITS)
        feeder_next = Signal(data.StructLayout({"valid": 1, "leaf": range(leaves),
                                                "length": COUNT_BITS}))
        reader_valid = Signal()
        reader_head = Signal(data.StructLayout({"target": range(leaves), "addr": 64,
                                                "length": COUNT_BITS}))
        reader_next = Signal(data.StructLayout({"valid": 1, "target": range(leaves),
                                                "addr": 64, "length": COUNT_BITS}))
        feeder_log2 = Signal(range(COUNT_BITS + 1))
        feeder_groups = Signal(COUNT_BITS)
        for j in range(leaves):
            m.d.comb += [
                self.feeder_cmd[j].valid.eq(feeder_valid[j]),
                self.feeder_cmd[j].payload.records.eq(feeder_length),
                self.feeder_cmd[j].payload.run_log2.eq(feeder_log2),
                self.feeder_cmd[j].payload.groups.eq(feeder_groups),
            ]
        m.d.comb += [
            self.reader_cmd.valid.eq(reader_valid),
            self.reader_cmd.payload.target.eq(reader_head.target),
            self.reader_cmd.payload.addr.eq(reader_head.addr),
            self.reader_cmd.payload.bytes.eq(reader_head.length << record_bits),
        ]
        # A head is free this cycle when it is empty or its command is being taken.
        feeder_free = Signal()
        reader_free = Signal()
        m.d.comb += [
            feeder_free.eq(~(feeder_valid & ~Cat(self.feeder_cmd[j].ready
                                                 for j in range(leaves))).any()),
            reader_free.eq(~reader_valid | self.reader_cmd.ready),
        ]

        stage_layout = data.StructLayout({
            "valid": 1,
            "leaf": range(leaves),
            "restart": 1,                      # the first leaf of its run sequence
            "span": span_bits,                 # records covered by the leaf's runs
            "nonzero": 1,                      # span != 0
            "read": 1,                         # valid and nonzero: a reader command
            "first": span_bits,
            "end": span_bits,
            "limit": COUNT_BITS,               # records of the tree the leaf reads
            "source": 64,                      # that tree's source half
        })
        s1 = Signal(stage_layout)
        # Phase 1 alone reads one tree: its record count and source half are pass constants.

        def limit_of(stage):
            return stage.limit if self.reused else total

        def source_of(stage):
            return stage.source if self.reused else source

        s2 = Signal(stage_layout)
        s3 = Signal(stage_layout)
        position = Signal(span_bits)           # end of the previous leaf's runs
        injecting = Signal()                   # leaves still to enter the pipeline
        leaf_in = Signal(range(leaves))
        advance = Signal()
        m.d.comb += advance.eq(~feeder_next.valid & ~reader_next.valid & ~ahead)
        # The last leaf's commands leave the queues this cycle: the pipeline is empty after it.
        issued = ~injecting & ~s1.valid & ~s2.valid & ~s3.valid & \
            ~feeder_next.valid & ~reader_next.valid & feeder_free & reader_free
        # Both registered for the state machine, which moves on a cycle later: the feeders'
        # handshakes stay out of its state logic. The writer's done pulse is kept until the
        # pass's commands are all out.
        all_issued = Signal()
        written = Signal()
        m.d.sync += all_issued.eq(issued)
        with m.If(self.writer_done):
            m.d.sync += written.eq(1)

        # Step 1: the leaf's span. Phase 1: active leaves are spread, every (l / a)-th one, and
        # active leaf k takes q + (k >= a - rem) runs (see plan.leaf_regions). Phase 2: leaf j
        # reads run j % F of group tree j // F.
        # Which leaves are active and which take q + 1 runs is counted along with leaf_in, in
        # flip-flops (a shift of leaf_in by l / a and a compare were 6 LUT levels).
        phase1_span = Signal(span_bits)
        gap = Signal(leaf_bits)                # leaves to the next active one
        spread_mask = Signal(leaf_bits)        # l / a - 1
        k_next = Signal(leaf_bits + 1)         # the next active leaf's k
        more = Signal()                        # k_next >= threshold
        is_active = gap == 0
        m.d.comb += phase1_span.eq(Mux(is_active, Mux(more, q1_span, q_span), 0))
        in_phase2 = Signal()
        with m.If(advance):
            m.d.sync += s1.valid.eq(injecting)
            with m.If(injecting):
                m.d.sync += leaf_in.eq(leaf_in + 1)
                with m.If(is_active):
                    m.d.sync += [gap.eq(spread_mask), k_next.eq(k_next + 1),
                                 more.eq(more | (k_next == threshold_less))]
                with m.Else():
                    m.d.sync += gap.eq(gap - 1)
                with m.If(leaf_in == leaves - 1):
                    m.d.sync += injecting.eq(0)
                m.d.sync += [
                    s1.leaf.eq(leaf_in),
                    s1.restart.eq(leaf_in == 0),
                    s1.span.eq(phase1_span),
                    s1.nonzero.eq(is_active),   # q + 1 >= 1 and q >= 1 when a <= R
                ]
                if self.reused:
                    m.d.sync += [s1.limit.eq(total), s1.source.eq(source)]
                    tree = leaf_in >> final_bits
                    g_halves = self.group_halves[tree]
                    with m.If(in_phase2):
                        m.d.sync += [
                            s1.restart.eq((leaf_in & (final - 1)) == 0),
                            s1.span.eq(C(1, span_bits) << self.group_run_log2[tree]),
                            s1.nonzero.eq(1),
                            s1.limit.eq(self.group_records[tree]),
                            s1.source.eq(Mux(self.group_half[tree], g_halves[1], g_halves[0])),
                        ]

            # Step 2: first and end records, before clipping.
            base = Mux(s1.restart, 0, position)
            end = Signal(span_bits)
            m.d.comb += end.eq(base + s1.span)
            m.d.sync += [s2.eq(s1), s2.first.eq(base), s2.end.eq(end)]
            with m.If(s1.valid):
                m.d.sync += position.eq(end)

            # Step 3: the end clipped to the record count; empty past it.
            nonzero = s2.nonzero & (s2.first < limit_of(s2))
            m.d.sync += [
                s3.eq(s2),
                s3.end.eq(Mux(s2.end < limit_of(s2), s2.end, limit_of(s2))),
                s3.nonzero.eq(nonzero),
                s3.read.eq(s2.valid & nonzero),
            ]

        # Step 4, into the queues: the length and the byte address.
        push = advance & s3.valid
        length = Signal(COUNT_BITS)
        addr = Signal(64)
        m.d.comb += [
            length.eq(Mux(s3.nonzero, s3.end - s3.first, 0)),
            addr.eq(source_of(s3) + (s3.first << record_bits)),
        ]
        with m.If(feeder_free):
            with m.If(feeder_next.valid):
                m.d.sync += [feeder_valid.eq(1 << feeder_next.leaf),
                             feeder_length.eq(feeder_next.length), feeder_next.valid.eq(0)]
            with m.Elif(push):
                m.d.sync += [feeder_valid.eq(1 << s3.leaf), feeder_length.eq(length)]
            with m.Else():
                m.d.sync += feeder_valid.eq(0)
        with m.Elif(push):
            m.d.sync += [feeder_next.valid.eq(1), feeder_next.leaf.eq(s3.leaf),
                         feeder_next.length.eq(length)]
        push_read = advance & s3.read
        with m.If(reader_free):
            with m.If(reader_next.valid):
                m.d.sync += [reader_valid.eq(1), reader_head.target.eq(reader_next.target),
                             reader_head.addr.eq(reader_next.addr),
                             reader_head.length.eq(reader_next.length),
                             reader_next.valid.eq(0)]
            with m.Elif(push_read):
                m.d.sync += [reader_valid.eq(1), reader_head.target.eq(s3.leaf),
                             reader_head.addr.eq(addr), reader_head.length.eq(length)]
            with m.Else():
                m.d.sync += reader_valid.eq(0)
        with m.Elif(push_read):
            m.d.sync += [reader_next.valid.eq(1), reader_next.target.eq(s3.leaf),
                         reader_next.addr.eq(addr), reader_next.length.eq(length)]

        # The pass's sizes, one step each: how many leaves are active (the smallest power of
        # two leaving <= F runs on the last pass: ceil(R / F) - 1 = (R - 1) // F, and R - 1
        # needs only its low bits when R <= F * l), then q and rem, then the spans.
        decrement = Signal(final_bits + leaf_bits)
        m.d.comb += decrement.eq(runs[:final_bits + leaf_bits] - 1)
        per_run = decrement[final_bits:]
        encoded = Signal(range(leaf_bits + 1))
        for bit in range(leaf_bits):
            with m.If(per_run[bit]):
                m.d.comb += encoded.eq(bit + 1)

        # Presort (shape.presort): a tree starts from runs of a beat, each sorted by the read
        # engine as pass 1 reads it, when that saves a pass (see plan.tree_plan): when the
        # reach of its passes from runs of a beat, F * l**k >= ceil(records / rate), is below
        # the record count. Otherwise (the same passes, and a last pass at least as wide
        # without) it starts from runs of one record. k is found by shifts, a step each.
        fresh = Signal()                       # the job's first decision is still to come
        beat_runs = Signal(COUNT_BITS)         # runs of a beat: ceil(records / rate)
        reach = Signal(COUNT_BITS + leaf_bits)  # F * l**k
        below = Signal()                       # reach < beat_runs
        saves = Signal()                       # presort saves a pass (with this reach)
        beat_log2 = exact_log2(c.rate) if c.presort else 0
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [total.eq(self.records), runs.eq(self.records), run_log2.eq(0),
                                 half.eq(0), self.done.eq(0)]
                    if c.presort:
                        m.d.sync += [fresh.eq(1), self.sort_beats.eq(0)]
                    m.next = "DECIDE"
                if self.reused:
                    with m.If(self.start2):
                        m.d.sync += [
                            leaf_in.eq(0), injecting.eq(1), in_phase2.eq(1),
                            all_issued.eq(0),
                            feeder_log2.eq(COUNT_BITS), feeder_groups.eq(1),
                            self.done2.eq(0),
                        ]
                        m.next = "PHASE2"
            with m.State("DECIDE"):
                # (the compares registered first: their carry chains end at flip-flops, not
                # in the state logic and the done flag the kernel's own state logic reads)
                m.d.sync += [many.eq(runs > (final << leaf_bits)), last_active_log2.eq(encoded),
                             fits.eq(runs <= final)]
                m.next = "DECIDED"
            with m.State("DECIDED"):
                with m.If(fits):
                    m.d.sync += self.done.eq(1)
                    m.next = "IDLE"
                if c.presort:
                    with m.Elif(fresh):
                        m.d.sync += [fresh.eq(0), reach.eq(final),
                                     beat_runs.eq((total + (c.rate - 1)) >> beat_log2)]
                        m.next = "PRESORT"
                with m.Else():
                    m.next = "ACTIVE"
            if c.presort:
                with m.State("PRESORT"):
                    # (the compares registered: their carry chains end at flip-flops)
                    m.d.sync += [below.eq(reach < beat_runs),
                                 saves.eq((beat_runs > final) & (total > reach))]
                    m.next = "PRESORT2"
                with m.State("PRESORT2"):
                    with m.If(below):
                        m.d.sync += reach.eq(reach << leaf_bits)
                        m.next = "PRESORT"
                    with m.Else():
                        with m.If(saves):
                            m.d.sync += [runs.eq(beat_runs), run_log2.eq(beat_log2),
                                         self.sort_beats.eq(1)]
                        m.next = "DECIDE"
            with m.State("ACTIVE"):
                a_log2 = Mux(many, leaf_bits, last_active_log2)
                m.d.sync += [active_log2.eq(a_log2),
                             spread_mask.eq(C((1 << leaf_bits) - 1, leaf_bits) >> a_log2)]
                m.next = "SIZE"
            with m.State("SIZE"):
                # The write engine and the packer first: the tree's output needs them.
                m.d.sync += [
                    q.eq(runs >> active_log2),
                    rem.eq(runs[:leaf_bits] & ((1 << active_log2) - 1)),
                    writer_valid.eq(1),
                    ahead.eq(1),
                    written.eq(0),
                    writer_addr.eq(Mux(half, self.halves[0], self.halves[1])),
                    packer_valid.eq(1),
                    source.eq(Mux(half, self.halves[1], self.halves[0])),
                ]
                m.next = "SIZE2"
            with m.State("SIZE2"):
                m.d.sync += [
                    groups.eq(q + (rem != 0)),
                    q1.eq(q + 1),
                    threshold.eq((1 << active_log2) - rem),
                    threshold_less.eq((1 << active_log2) - rem - 1),
                ]
                m.next = "SIZE3"
            with m.State("SIZE3"):
                m.d.sync += [
                    q_span.eq(q << run_log2),
                    q1_span.eq(q1 << run_log2),
                    feeder_log2.eq(run_log2),
                    feeder_groups.eq(groups),
                    leaf_in.eq(0), injecting.eq(1), in_phase2.eq(0),
                    gap.eq(0), k_next.eq(0), more.eq(threshold == 0), all_issued.eq(0),
                ]
                m.next = "LEAVES"
            with m.State("LEAVES"):
                with m.If(all_issued):
                    m.next = "WAIT"
            with m.State("WAIT"):
                with m.If(written):
                    m.d.sync += [
                        runs.eq(groups),
                        run_log2.eq(run_log2 + active_log2),
                        half.eq(~half),
                    ]
                    if c.presort:
                        m.d.sync += self.sort_beats.eq(0)
                    m.next = "DECIDE"
            if self.reused:
                with m.State("PHASE2"):
                    with m.If(all_issued):
                        m.d.sync += self.done2.eq(1)
                        m.next = "IDLE"
        return m
