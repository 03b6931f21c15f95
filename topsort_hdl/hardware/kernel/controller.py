"""Per-tree pass controller: phase 1 of one tree, and the phase-2 leaves of a reused tree.

It computes :mod:`topsort_hdl.core.plan` in hardware, one step per cycle: the number of
passes follows from the record count (the host never computes passes), the last pass is tuned
to leave at most F runs, and each pass ping-pongs between the tree's two channels.
"""

from dataclasses import dataclass
from types import SimpleNamespace

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.params import COUNT_BITS
from ..axi.commands import region_layout, write_command_layout
from ..block import Block
from ..properties import check, is_formal, stream_rules
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
        # The shape's figures, and the registers and wires the steps share (each adds its own).
        st = SimpleNamespace(c=c, leaves=leaves, final=final, leaf_bits=leaf_bits,
                             final_bits=final_bits, record_bits=record_bits, span_bits=span_bits)

        st.total = Signal(COUNT_BITS)             # the tree's records, latched at start
        st.runs = Signal(COUNT_BITS)              # runs in the source half
        st.run_log2 = self.run_log2               # their length
        st.half = self.half                       # the source half
        st.active_log2 = Signal(range(leaf_bits + 1))
        st.many = Signal()                        # more than F * l runs: every leaf active
        st.fits = Signal()                        # at most F runs: phase 1 ends
        st.last_active_log2 = Signal(range(leaf_bits + 1))
        st.groups = Signal(COUNT_BITS)
        st.q = Signal(COUNT_BITS)
        st.q1 = Signal(COUNT_BITS + 1)
        st.rem = Signal(leaf_bits + 1)
        st.threshold = Signal(leaf_bits + 1)      # active leaf k takes q + 1 runs from k >= a - rem
        st.threshold_less = Signal(leaf_bits + 1)  # threshold - 1
        st.q_span = Signal(span_bits)             # q runs, in records
        st.q1_span = Signal(span_bits)            # q + 1 runs
        st.source = Signal(64)                    # the pass's source half
        self._commands(m, st)
        self._leaf_regions(m, st)
        self._leaf_queues(m, st)
        self._pass_sizes(m, st)
        self._pass_machine(m, st)
        if is_formal(platform):
            self._properties(m)
        return m

    def _limit_of(self, st, stage):
        """The records of the tree a leaf reads (phase 1 alone reads one tree: a constant of
        the pass)."""
        return stage.limit if self.reused else st.total

    def _source_of(self, st, stage):
        """The source half of the tree a leaf reads."""
        return stage.source if self.reused else st.source


    def _commands(self, m, st):
        """The commands' streams, driven from registers: the write engine's and the packer's
        one per pass, the feeders' and the reader's from the heads of two-entry queues."""
        leaves, record_bits = st.leaves, st.record_bits
        # Every command leaves from registers: payloads are loaded a step ahead and held, and
        # each valid is a flip-flop cleared by its transfer.
        st.writer_valid = Signal()
        st.packer_valid = Signal()
        st.writer_addr = Signal(64)
        m.d.comb += [
            self.writer_cmd.valid.eq(st.writer_valid),
            self.writer_cmd.payload.addr[0].eq(st.writer_addr),
            self.writer_cmd.payload.bytes.eq(st.total << record_bits),
            self.packer_cmd.valid.eq(st.packer_valid),
            self.packer_cmd.payload.records.eq(st.total),
        ]
        with m.If(self.writer_cmd.ready):
            m.d.sync += st.writer_valid.eq(0)
        with m.If(self.packer_cmd.ready):
            m.d.sync += st.packer_valid.eq(0)
        # writer_valid | packer_valid, in a flip-flop of its own: the leaf pipeline waits for
        # both commands to be taken, and a shared OR of four flags was a chain of LUTs into
        # every pipeline register.
        st.ahead = Signal()
        m.d.sync += st.ahead.eq((st.writer_valid & ~self.writer_cmd.ready) |
                             (st.packer_valid & ~self.packer_cmd.ready))

        # The leaf commands: a pipeline computes one leaf's region per step (its span of
        # records, then its first and end records, the end clipped to the record count, then
        # its length and byte address) into two queues of two entries, one for the feeder
        # commands and one for the reader commands (non-empty regions only). Each queue's head
        # drives its stream from registers and moves on its own consumer's ready; the pipeline
        # pushes a leaf when neither queue's second entry is taken, which it knows from
        # flip-flops: no ready reaches the pipeline's registers, and both streams can still
        # take a command every cycle (the read engine then serves every leaf's first burst
        # before any second one, as when the commands were combinational).
        st.feeder_valid = Signal(leaves)          # the feeder head's command is for feeder j
        st.feeder_length = Signal(COUNT_BITS)
        st.feeder_next = Signal(data.StructLayout({"valid": 1, "leaf": range(leaves),
                                                "length": COUNT_BITS}))
        st.reader_valid = Signal()
        st.reader_head = Signal(data.StructLayout({"target": range(leaves), "addr": 64,
                                                "length": COUNT_BITS}))
        st.reader_next = Signal(data.StructLayout({"valid": 1, "target": range(leaves),
                                                "addr": 64, "length": COUNT_BITS}))
        st.feeder_log2 = Signal(range(COUNT_BITS + 1))
        st.feeder_groups = Signal(COUNT_BITS)
        for j in range(leaves):
            m.d.comb += [
                self.feeder_cmd[j].valid.eq(st.feeder_valid[j]),
                self.feeder_cmd[j].payload.records.eq(st.feeder_length),
                self.feeder_cmd[j].payload.run_log2.eq(st.feeder_log2),
                self.feeder_cmd[j].payload.groups.eq(st.feeder_groups),
            ]
        m.d.comb += [
            self.reader_cmd.valid.eq(st.reader_valid),
            self.reader_cmd.payload.target.eq(st.reader_head.target),
            self.reader_cmd.payload.addr.eq(st.reader_head.addr),
            self.reader_cmd.payload.bytes.eq(st.reader_head.length << record_bits),
        ]
        # A head is free this cycle when it is empty or its command is being taken.
        st.feeder_free = Signal()
        st.reader_free = Signal()
        m.d.comb += [
            st.feeder_free.eq(~(st.feeder_valid & ~Cat(self.feeder_cmd[j].ready
                                                 for j in range(leaves))).any()),
            st.reader_free.eq(~st.reader_valid | self.reader_cmd.ready),
        ]

    def _leaf_regions(self, m, st):
        """The region arithmetic: one leaf's span of records, its first and end records, the
        end clipped to the record count, a step each (steps 1 to 3)."""
        leaves, final, leaf_bits = st.leaves, st.final, st.leaf_bits
        final_bits, span_bits = st.final_bits, st.span_bits
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

        s2 = Signal(stage_layout)
        st.s3 = Signal(stage_layout)
        position = Signal(span_bits)           # end of the previous leaf's runs
        st.injecting = Signal()                   # leaves still to enter the pipeline
        st.leaf_in = Signal(range(leaves))
        st.advance = Signal()
        m.d.comb += st.advance.eq(~st.feeder_next.valid & ~st.reader_next.valid & ~st.ahead)
        # The last leaf's commands leave the queues this cycle: the pipeline is empty after it.
        issued = ~st.injecting & ~s1.valid & ~s2.valid & ~st.s3.valid &\
            ~st.feeder_next.valid & ~st.reader_next.valid & st.feeder_free & st.reader_free
        # Both registered for the state machine, which moves on a cycle later: the feeders'
        # handshakes stay out of its state logic. The writer's done pulse is kept until the
        # pass's commands are all out.
        st.all_issued = Signal()
        st.written = Signal()
        m.d.sync += st.all_issued.eq(issued)
        with m.If(self.writer_done):
            m.d.sync += st.written.eq(1)

        # Step 1: the leaf's span. Phase 1: active leaves are spread, every (l / a)-th one, and
        # active leaf k takes q + (k >= a - rem) runs (see plan.leaf_regions). Phase 2: leaf j
        # reads run j % F of group tree j // F.
        # Which leaves are active and which take q + 1 runs is counted along with leaf_in, in
        # flip-flops (a shift of leaf_in by l / a and a compare were 6 LUT levels).
        phase1_span = Signal(span_bits)
        st.gap = Signal(leaf_bits)                # leaves to the next active one
        st.spread_mask = Signal(leaf_bits)        # l / a - 1
        st.k_next = Signal(leaf_bits + 1)         # the next active leaf's k
        st.more = Signal()                        # k_next >= threshold
        is_active = st.gap == 0
        m.d.comb += phase1_span.eq(Mux(is_active, Mux(st.more, st.q1_span, st.q_span), 0))
        st.in_phase2 = Signal()
        with m.If(st.advance):
            m.d.sync += s1.valid.eq(st.injecting)
            with m.If(st.injecting):
                m.d.sync += st.leaf_in.eq(st.leaf_in + 1)
                with m.If(is_active):
                    m.d.sync += [st.gap.eq(st.spread_mask), st.k_next.eq(st.k_next + 1),
                                 st.more.eq(st.more | (st.k_next == st.threshold_less))]
                with m.Else():
                    m.d.sync += st.gap.eq(st.gap - 1)
                with m.If(st.leaf_in == leaves - 1):
                    m.d.sync += st.injecting.eq(0)
                m.d.sync += [
                    s1.leaf.eq(st.leaf_in),
                    s1.restart.eq(st.leaf_in == 0),
                    s1.span.eq(phase1_span),
                    s1.nonzero.eq(is_active),   # q + 1 >= 1 and q >= 1 when a <= R
                ]
                if self.reused:
                    m.d.sync += [s1.limit.eq(st.total), s1.source.eq(st.source)]
                    tree = st.leaf_in >> final_bits
                    g_halves = self.group_halves[tree]
                    with m.If(st.in_phase2):
                        m.d.sync += [
                            s1.restart.eq((st.leaf_in & (final - 1)) == 0),
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
            nonzero = s2.nonzero & (s2.first < self._limit_of(st, s2))
            m.d.sync += [
                st.s3.eq(s2),
                st.s3.end.eq(Mux(s2.end < self._limit_of(st, s2), s2.end, self._limit_of(st, s2))),
                st.s3.nonzero.eq(nonzero),
                st.s3.read.eq(s2.valid & nonzero),
            ]

    def _leaf_queues(self, m, st):
        """Step 4: each leaf's length and byte address into the feeder and reader queues."""
        record_bits = st.record_bits
        # Step 4, into the queues: the length and the byte address.
        push = st.advance & st.s3.valid
        st.length = Signal(COUNT_BITS)
        st.addr = Signal(64)
        m.d.comb += [
            st.length.eq(Mux(st.s3.nonzero, st.s3.end - st.s3.first, 0)),
            st.addr.eq(self._source_of(st, st.s3) + (st.s3.first << record_bits)),
        ]
        with m.If(st.feeder_free):
            with m.If(st.feeder_next.valid):
                m.d.sync += [st.feeder_valid.eq(1 << st.feeder_next.leaf),
                             st.feeder_length.eq(st.feeder_next.length), st.feeder_next.valid.eq(0)]
            with m.Elif(push):
                m.d.sync += [st.feeder_valid.eq(1 << st.s3.leaf), st.feeder_length.eq(st.length)]
            with m.Else():
                m.d.sync += st.feeder_valid.eq(0)
        with m.Elif(push):
            m.d.sync += [st.feeder_next.valid.eq(1), st.feeder_next.leaf.eq(st.s3.leaf),
                         st.feeder_next.length.eq(st.length)]
        push_read = st.advance & st.s3.read
        with m.If(st.reader_free):
            with m.If(st.reader_next.valid):
                m.d.sync += [st.reader_valid.eq(1), st.reader_head.target.eq(st.reader_next.target),
                             st.reader_head.addr.eq(st.reader_next.addr),
                             st.reader_head.length.eq(st.reader_next.length),
                             st.reader_next.valid.eq(0)]
            with m.Elif(push_read):
                m.d.sync += [st.reader_valid.eq(1), st.reader_head.target.eq(st.s3.leaf),
                             st.reader_head.addr.eq(st.addr), st.reader_head.length.eq(st.length)]
            with m.Else():
                m.d.sync += st.reader_valid.eq(0)
        with m.Elif(push_read):
            m.d.sync += [st.reader_next.valid.eq(1), st.reader_next.target.eq(st.s3.leaf),
                         st.reader_next.addr.eq(st.addr), st.reader_next.length.eq(st.length)]

    def _pass_sizes(self, m, st):
        """The wires the pass's sizing reads: the active leaves' count, the presort's state."""
        c, final_bits, leaf_bits = st.c, st.final_bits, st.leaf_bits
        # The pass's sizes, one step each: how many leaves are active (the smallest power of
        # two leaving <= F runs on the last pass: ceil(R / F) - 1 = (R - 1) // F, and R - 1
        # needs only its low bits when R <= F * l), then q and rem, then the spans.
        decrement = Signal(final_bits + leaf_bits)
        m.d.comb += decrement.eq(st.runs[:final_bits + leaf_bits] - 1)
        per_run = decrement[final_bits:]
        st.encoded = Signal(range(leaf_bits + 1))
        for bit in range(leaf_bits):
            with m.If(per_run[bit]):
                m.d.comb += st.encoded.eq(bit + 1)

        # Presort (shape.presort): a tree starts from runs of a beat, each sorted by the read
        # engine as pass 1 reads it, when that saves a pass (see plan.tree_plan): when the
        # reach of its passes from runs of a beat, F * l**k >= ceil(records / rate), is below
        # the record count. Otherwise (the same passes, and a last pass at least as wide
        # without) it starts from runs of one record. k is found by shifts, a step each.
        st.fresh = Signal()                       # the job's first decision is still to come
        st.beat_runs = Signal(COUNT_BITS)         # runs of a beat: ceil(records / rate)
        st.reach = Signal(COUNT_BITS + leaf_bits)  # F * l**k
        st.below = Signal()                       # reach < beat_runs
        st.saves = Signal()                       # presort saves a pass (with this reach)
        st.beat_log2 = exact_log2(c.rate) if c.presort else 0

    def _pass_machine(self, m, st):
        """The passes: decide, size and issue each, until at most F runs are left (phase 1);
        the phase-2 leaves of a reused tree."""
        c, final, leaf_bits = st.c, st.final, st.leaf_bits
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [st.total.eq(self.records), st.runs.eq(self.records),
                                 st.run_log2.eq(0), st.half.eq(0), self.done.eq(0)]
                    if c.presort:
                        m.d.sync += [st.fresh.eq(1), self.sort_beats.eq(0)]
                    m.next = "DECIDE"
                if self.reused:
                    with m.If(self.start2):
                        m.d.sync += [
                            st.leaf_in.eq(0), st.injecting.eq(1), st.in_phase2.eq(1),
                            st.all_issued.eq(0),
                            st.feeder_log2.eq(COUNT_BITS), st.feeder_groups.eq(1),
                            self.done2.eq(0),
                        ]
                        m.next = "PHASE2"
            with m.State("DECIDE"):
                # (the compares registered first: their carry chains end at flip-flops, not
                # in the state logic and the done flag the kernel's own state logic reads)
                m.d.sync += [st.many.eq(st.runs > (final << leaf_bits)),
                             st.last_active_log2.eq(st.encoded),
                             st.fits.eq(st.runs <= final)]
                m.next = "DECIDED"
            with m.State("DECIDED"):
                with m.If(st.fits):
                    m.d.sync += self.done.eq(1)
                    m.next = "IDLE"
                if c.presort:
                    with m.Elif(st.fresh):
                        m.d.sync += [st.fresh.eq(0), st.reach.eq(final),
                                     st.beat_runs.eq((st.total + (c.rate - 1)) >> st.beat_log2)]
                        m.next = "PRESORT"
                with m.Else():
                    m.next = "ACTIVE"
            if c.presort:
                with m.State("PRESORT"):
                    # (the compares registered: their carry chains end at flip-flops)
                    m.d.sync += [st.below.eq(st.reach < st.beat_runs),
                                 st.saves.eq((st.beat_runs > final) & (st.total > st.reach))]
                    m.next = "PRESORT2"
                with m.State("PRESORT2"):
                    with m.If(st.below):
                        m.d.sync += st.reach.eq(st.reach << leaf_bits)
                        m.next = "PRESORT"
                    with m.Else():
                        with m.If(st.saves):
                            m.d.sync += [st.runs.eq(st.beat_runs), st.run_log2.eq(st.beat_log2),
                                         self.sort_beats.eq(1)]
                        m.next = "DECIDE"
            with m.State("ACTIVE"):
                a_log2 = Mux(st.many, leaf_bits, st.last_active_log2)
                m.d.sync += [st.active_log2.eq(a_log2),
                             st.spread_mask.eq(C((1 << leaf_bits) - 1, leaf_bits) >> a_log2)]
                m.next = "SIZE"
            with m.State("SIZE"):
                # The write engine and the packer first: the tree's output needs them.
                m.d.sync += [
                    st.q.eq(st.runs >> st.active_log2),
                    st.rem.eq(st.runs[:leaf_bits] & ((1 << st.active_log2) - 1)),
                    st.writer_valid.eq(1),
                    st.ahead.eq(1),
                    st.written.eq(0),
                    st.writer_addr.eq(Mux(st.half, self.halves[0], self.halves[1])),
                    st.packer_valid.eq(1),
                    st.source.eq(Mux(st.half, self.halves[1], self.halves[0])),
                ]
                m.next = "SIZE2"
            with m.State("SIZE2"):
                m.d.sync += [
                    st.groups.eq(st.q + (st.rem != 0)),
                    st.q1.eq(st.q + 1),
                    st.threshold.eq((1 << st.active_log2) - st.rem),
                    st.threshold_less.eq((1 << st.active_log2) - st.rem - 1),
                ]
                m.next = "SIZE3"
            with m.State("SIZE3"):
                m.d.sync += [
                    st.q_span.eq(st.q << st.run_log2),
                    st.q1_span.eq(st.q1 << st.run_log2),
                    st.feeder_log2.eq(st.run_log2),
                    st.feeder_groups.eq(st.groups),
                    st.leaf_in.eq(0), st.injecting.eq(1), st.in_phase2.eq(0),
                    st.gap.eq(0), st.k_next.eq(0), st.more.eq(st.threshold == 0),
                    st.all_issued.eq(0),
                ]
                m.next = "LEAVES"
            with m.State("LEAVES"):
                with m.If(st.all_issued):
                    m.next = "WAIT"
            with m.State("WAIT"):
                with m.If(st.written):
                    m.d.sync += [
                        st.runs.eq(st.groups),
                        st.run_log2.eq(st.run_log2 + st.active_log2),
                        st.half.eq(~st.half),
                    ]
                    if c.presort:
                        m.d.sync += self.sort_beats.eq(0)
                    m.next = "DECIDE"
            if self.reused:
                with m.State("PHASE2"):
                    with m.If(st.all_issued):
                        m.d.sync += self.done2.eq(1)
                        m.next = "IDLE"

    def _properties(self, m):
        """The pass accounting of phase 1, from the ports (formal builds only), given jobs
        started only while none runs (before the first, or once ``done``): every pass's write
        command writes the job's bytes to the half its reads do not come from, starting with
        half 1 from half 0; within a pass, the
        feeders are commanded the job's records in all and the read engine its bytes, each
        region inside the source half's records; ``done`` rises once the last pass's write is
        done, ``half`` then the half that pass wrote. Every command stream keeps its command
        until taken."""
        c = self.shape
        record_bits = exact_log2(c.record_bytes)
        for name in ("reader_cmd", "packer_cmd", "writer_cmd"):
            stream_rules(m, getattr(self, name), name)
        for j, port in enumerate(self.feeder_cmd):
            stream_rules(m, port, f"feeder_cmd{j}")
        running = Signal(name="job_running")
        total = Signal(COUNT_BITS, name="job_records")
        passes = Signal(4, name="job_passes")     # write commands taken: passes begun
        fed = Signal(COUNT_BITS + 2, name="pass_fed")
        read = Signal(self.length_bits + 2, name="pass_read")
        writes = Signal(3, name="writes_pending")
        done_before = Signal(name="done_before")
        m.d.sync += done_before.eq(self.done)
        finishing = self.done & ~done_before & running
        write = self.writer_cmd
        write_taken = write.valid & write.ready
        with m.If((write_taken | finishing) & (passes != 0)):
            check(m, fed == total, "a pass commands its feeders other than the job's records")
            check(m, read == total << record_bits,
                  "a pass commands its read engine other than the job's bytes")
        # Pass k reads half k % 2 and writes the other (its write command comes first).
        with m.If(write_taken):
            check(m, write.payload.bytes == total << record_bits,
                  "a pass writes other than the job's bytes")
            check(m, write.payload.addr[0] == self.halves[~passes[0]],
                  "a pass writes to the half it reads")
            m.d.sync += [passes.eq(passes + 1), fed.eq(0), read.eq(0)]
        source = self.halves[~passes[0]]
        feeder_taken = Cat(f.valid & f.ready for f in self.feeder_cmd)
        fed_now = sum(Mux(feeder_taken[j], f.payload.records, 0)
                      for j, f in enumerate(self.feeder_cmd))
        region = self.reader_cmd.payload
        reader_taken = self.reader_cmd.valid & self.reader_cmd.ready
        with m.If(reader_taken):
            check(m, (region.addr >= source) &
                  (region.addr + region.bytes <= source + (total << record_bits)),
                  "a leaf region outside the source half's records")
        with m.If(~write_taken):
            m.d.sync += [fed.eq(fed + fed_now),
                         read.eq(read + Mux(reader_taken, region.bytes, 0))]
        m.d.sync += writes.eq(writes + write_taken - self.writer_done)
        with m.If(finishing):
            check(m, writes == 0, "done before the last pass's write is done")
            check(m, self.half == passes[0], "half is not the one the last pass wrote")
            m.d.sync += running.eq(0)
        # (a job starts in the cycle the previous one is seen done, or later)
        with m.If(self.start):
            m.d.sync += [running.eq(1), total.eq(self.records), passes.eq(0)]
