"""Per-tree pass controller: phase 1 of one tree, and the phase-2 leaves of a reused tree.

It computes :mod:`topsort_hdl.core.plan` in hardware, one step per cycle: the number of
passes follows from the record count (the host never computes passes), the last pass is tuned
to leave at most F runs, and each pass ping-pongs between the tree's two channels.
"""

from dataclasses import dataclass

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.params import COUNT_BITS
from ..axi.commands import region_layout, write_command_layout
from ..block import Block
from ..properties import check, is_formal, stream_rules
from ..queue import SkidBuffer
from .feeder import feeder_command_layout
from .packer import packer_command_layout

__all__ = ["TreeController", "ControllerShape", "PassPlanner", "LeafRegions"]


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


# Record positions inside a half: below twice the record count (runs of the current length
# cover the records with less than one run to spare), so COUNT_BITS + 1 bits.
SPAN_BITS = COUNT_BITS + 1


def pass_layout(shape):
    """A pass as the leaf pipeline reads it: phase 1's run counts (the a active leaves take
    ``q`` runs each, active leaf k one more from k >= a - rem) as spans of records and how the
    active leaves are spread; the tree's source half; the feeders' runs."""
    leaf_bits = exact_log2(shape.leaves)
    return data.StructLayout({
        "q_span": SPAN_BITS,                    # q runs, in records
        "q1_span": SPAN_BITS,                   # q + 1 runs
        "spread_mask": leaf_bits,               # l / a - 1
        "threshold": leaf_bits + 1,             # a - rem
        "threshold_less": leaf_bits + 1,        # threshold - 1
        "source": shape.axi.addr_width,
        "run_log2": range(COUNT_BITS + 1),      # the feeders' runs
        "groups": COUNT_BITS,
    })


def stage_layout(shape):
    """A leaf in the leaf pipeline: its region as each step leaves it."""
    return data.StructLayout({
        "valid": 1,
        "leaf": range(shape.leaves),
        "restart": 1,                      # the first leaf of its run sequence
        "span": SPAN_BITS,                 # records covered by the leaf's runs
        "nonzero": 1,                      # span != 0
        "read": 1,                         # valid and nonzero: a reader command
        "first": SPAN_BITS,
        "end": SPAN_BITS,
        "limit": COUNT_BITS,               # records of the tree the leaf reads
        "source": shape.axi.addr_width,    # that tree's source half
    })


def group_members(shape):
    """What a reused tree's phase 2 reads of its group's trees: their records, halves, the
    half their runs are in and their runs' length."""
    p, group = shape.axi, shape.group
    return {
        "group_records": In(data.ArrayLayout(COUNT_BITS, group)),
        "group_halves": In(data.ArrayLayout(data.ArrayLayout(p.addr_width, 2), group)),
        "group_half": In(data.ArrayLayout(1, group)),
        "group_run_log2": In(data.ArrayLayout(range(COUNT_BITS + 1), group)),
    }


class TreeController(Block):
    """Drive one tree's read engine, leaf feeders, root packer and write engine.

    Phase 1 (``start`` pulse, with ``records`` and ``halves`` steady: the byte addresses of the
    tree's two buffer halves, its records at the start of half 0): passes until the tree holds
    at most ``shape.runs_per_tree`` runs; then ``done`` rises and ``half`` and ``run_log2``
    tell where the runs are and how long. Phase 2 (``start_phase2`` pulse, reused trees only):
    point leaf j at run ``j % F`` of group tree ``j // F`` (described by the ``group_*``
    inputs); ``phase2_issued`` rises when every leaf command is out.

    Every command stream is driven from registers (payload and valid): the controller is
    never on a path into the engines or feeders it commands. ``records`` is sampled at
    ``start``; the ``group_*`` inputs as phase 2 reads them.
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
            members.update({"start_phase2": In(1), "phase2_issued": Out(1),
                            **group_members(config)})
        super().__init__(members)

    def elaborate(self, platform):
        # start, records, halves --> PassPlanner --> writer_cmd, packer_cmd
        #                 writer_done -->  | plan, begin_*  ^ issued
        #                                  v                |
        #                 group_* --> LeafRegions --> feeder_cmd[j], reader_cmd
        m = Module()
        m.submodules.planner = planner = PassPlanner(self.shape, self.reused)
        m.submodules.regions = regions = LeafRegions(self.shape, self.reused)
        wiring.connect(m, planner.writer_cmd, wiring.flipped(self.writer_cmd))
        wiring.connect(m, planner.packer_cmd, wiring.flipped(self.packer_cmd))
        wiring.connect(m, regions.reader_cmd, wiring.flipped(self.reader_cmd))
        for j, feeder in enumerate(self.feeder_cmd):
            wiring.connect(m, regions.feeder_cmd[j], wiring.flipped(feeder))
        m.d.comb += [
            planner.start.eq(self.start), planner.records.eq(self.records),
            planner.halves.eq(self.halves), planner.writer_done.eq(self.writer_done),
            planner.issued.eq(regions.issued),
            self.done.eq(planner.done), self.half.eq(planner.half),
            self.run_log2.eq(planner.run_log2),
            regions.plan.eq(planner.plan), regions.records.eq(planner.tree_records),
            regions.begin_leaves.eq(planner.begin_leaves),
            regions.hold.eq(planner.hold),
        ]
        if self.shape.presort:
            m.d.comb += self.sort_beats.eq(planner.sort_beats)
        if self.reused:
            m.d.comb += [planner.start_phase2.eq(self.start_phase2),
                         self.phase2_issued.eq(planner.phase2_issued),
                         regions.begin_phase2.eq(planner.begin_phase2)]
            for name in group_members(self.shape):
                m.d.comb += getattr(regions, name).eq(getattr(self, name))
        if is_formal(platform):
            self._properties(m)
        return m

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


class PassPlanner(wiring.Component):
    """The passes of a tree: decide, size and begin each until at most F runs are left
    (phase 1), or begin a reused tree's phase-2 leaves.

    A pass is decided from its runs R, the compares registered first: phase 1 ends when
    R <= F; otherwise a leaves are active, all of them while R > F * l, else the smallest
    power of two leaving at most F runs (ceil(R / F) - 1 = (R - 1) // F, and R - 1 needs only
    its low bits when R <= F * l). Before the first pass, with presort, a
    :class:`PresortChoice` says whether the tree starts from runs of a beat. A
    :class:`PassSizer` sizes the pass, a step each; the pass's write and packer commands go
    first (:class:`PassCommands`: the tree's output needs them), then ``begin_leaves`` pulses with
    ``plan`` for the leaf pipeline, which says ``issued`` once its commands are out. The pass
    ends with the write engine's ``writer_done``, and the next reads the half this one wrote.
    ``records``: the tree's, latched at ``start``.
    """

    def __init__(self, shape, reused):
        p = shape.axi
        self.shape, self.reused = shape, reused
        members = {
            "start": In(1),
            "records": In(COUNT_BITS),
            "halves": In(data.ArrayLayout(p.addr_width, 2)),
            "writer_done": In(1),
            "issued": In(1),
            "done": Out(1),
            "half": Out(1),                        # the source half
            "run_log2": Out(range(COUNT_BITS + 1)),
            "writer_cmd": Out(stream.Signature(write_command_layout(p, 1, 1,
                                                                    shape.length_bits))),
            "packer_cmd": Out(stream.Signature(packer_command_layout(COUNT_BITS))),
            "tree_records": Out(COUNT_BITS),
            "plan": Out(pass_layout(shape)),
            "begin_leaves": Out(1),                       # a phase-1 pass's leaves
            "hold": Out(1),                        # the pass's commands are not yet taken
        }
        if shape.presort:
            members["sort_beats"] = Out(1)
        if reused:
            members.update({"start_phase2": In(1), "phase2_issued": Out(1),
                            "begin_phase2": Out(1)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        c, records = self.shape, self.tree_records
        final, leaf_bits = c.runs_per_tree, exact_log2(c.leaves)
        final_bits = exact_log2(final)
        m.submodules.commands = commands = PassCommands(c)
        m.submodules.sizer = sizer = PassSizer(c)
        wiring.connect(m, commands.writer_cmd, wiring.flipped(self.writer_cmd))
        wiring.connect(m, commands.packer_cmd, wiring.flipped(self.packer_cmd))
        runs = Signal(COUNT_BITS)                 # runs in the source half
        fewer_active = Signal(range(leaf_bits + 1))   # log2 of the active leaves R needs
        per_run = (runs[:final_bits + leaf_bits] - 1)[final_bits:]
        for bit in range(leaf_bits):
            with m.If(per_run[bit]):
                m.d.comb += fewer_active.eq(bit + 1)
        last_pass = Signal()                      # R <= F: phase 1 ends
        m.d.comb += [
            commands.records.eq(records), commands.writer_done.eq(self.writer_done),
            commands.issue.eq(sizer.issue),
            commands.addr.eq(Mux(self.half, self.halves[0], self.halves[1])),
            self.hold.eq(commands.hold),
            sizer.runs.eq(runs), sizer.run_log2.eq(self.run_log2),
            sizer.source.eq(Mux(self.half, self.halves[1], self.halves[0])),
            self.plan.eq(sizer.plan), self.begin_leaves.eq(sizer.begin_leaves),
        ]
        first_decision = Signal()                 # the job's first decision is still to come
        if c.presort:
            m.submodules.presort = presort = PresortChoice(c)
            m.d.comb += presort.records.eq(records)
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [records.eq(self.records), runs.eq(self.records),
                                 self.run_log2.eq(0), self.half.eq(0), self.done.eq(0)]
                    if c.presort:
                        m.d.sync += [first_decision.eq(1), self.sort_beats.eq(0)]
                    m.next = "DECIDE"
                if self.reused:
                    with m.If(self.start_phase2):
                        m.d.comb += [self.begin_phase2.eq(1), sizer.phase2.eq(1)]
                        m.d.sync += self.phase2_issued.eq(0)
                        m.next = "PHASE2"
            with m.State("DECIDE"):
                m.d.sync += [sizer.every_leaf.eq(runs > (final << leaf_bits)),
                             sizer.last_active_log2.eq(fewer_active),
                             last_pass.eq(runs <= final)]
                m.next = "DECIDED"
            with m.State("DECIDED"):
                with m.If(last_pass):
                    m.d.sync += self.done.eq(1)
                    m.next = "IDLE"
                if c.presort:
                    with m.Elif(first_decision):
                        m.d.sync += first_decision.eq(0)
                        m.d.comb += presort.start.eq(1)
                        m.next = "PRESORT"
                with m.Else():
                    m.d.comb += sizer.start.eq(1)
                    m.next = "SIZE"
            if c.presort:
                with m.State("PRESORT"):
                    with m.If(presort.done):
                        with m.If(presort.saves):
                            m.d.sync += [runs.eq(presort.beat_runs),
                                         self.run_log2.eq(exact_log2(c.rate)),
                                         self.sort_beats.eq(1)]
                        m.next = "DECIDE"
            with m.State("SIZE"):
                with m.If(sizer.begin_leaves):
                    m.next = "LEAVES"
            with m.State("LEAVES"):
                with m.If(self.issued):
                    m.next = "WAIT"
            with m.State("WAIT"):
                with m.If(commands.written):
                    m.d.sync += [runs.eq(sizer.groups),
                                 self.run_log2.eq(self.run_log2 + sizer.active_log2),
                                 self.half.eq(~self.half)]
                    if c.presort:
                        m.d.sync += self.sort_beats.eq(0)
                    m.next = "DECIDE"
            if self.reused:
                with m.State("PHASE2"):
                    with m.If(self.issued):
                        m.d.sync += self.phase2_issued.eq(1)
                        m.next = "IDLE"
        return m


class PassSizer(wiring.Component):
    """A phase-1 pass's sizes, a step each after ``start``, from its ``runs`` of
    ``2**run_log2`` records: the active leaves a (all of them with ``every_leaf``, else
    ``2**last_active_log2``) and their spread, every (l / a)-th leaf; q = R / a runs per
    active leaf and rem of them one more (see plan.leaf_regions), the runs the pass leaves
    (``groups``); then the spans in records. ``issue`` pulses in the second step (the pass's
    write and packer commands go then), ``begin_leaves`` in the fourth, with ``plan`` whole.
    ``phase2``: the plan for phase 2's leaves (the feeders' runs whole, one group)."""

    def __init__(self, shape):
        leaf_bits = exact_log2(shape.leaves)
        self.shape = shape
        super().__init__({
            "start": In(1),
            "phase2": In(1),
            "runs": In(COUNT_BITS),
            "run_log2": In(range(COUNT_BITS + 1)),
            "every_leaf": In(1),                   # (registered by the planner's DECIDE)
            "last_active_log2": In(range(leaf_bits + 1)),
            "source": In(shape.axi.addr_width),
            "plan": Out(pass_layout(shape)),
            "groups": Out(COUNT_BITS),
            "active_log2": Out(range(leaf_bits + 1)),
            "issue": Out(1),
            "begin_leaves": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        plan, leaf_bits = self.plan, exact_log2(self.shape.leaves)
        q, q1, rem = Signal(COUNT_BITS), Signal(COUNT_BITS + 1), Signal(leaf_bits + 1)
        steps = Signal(4)                          # one-hot: the step under way
        m.d.sync += steps.eq(Cat(self.start, steps[:3]))
        m.d.comb += [self.issue.eq(steps[1]), self.begin_leaves.eq(steps[3])]
        a_log2 = self.active_log2
        with m.If(steps[0]):
            m.d.sync += [a_log2.eq(Mux(self.every_leaf, leaf_bits, self.last_active_log2)),
                         plan.spread_mask.eq(C((1 << leaf_bits) - 1, leaf_bits) >>
                                             Mux(self.every_leaf, leaf_bits,
                                                 self.last_active_log2))]
        with m.If(steps[1]):
            m.d.sync += [q.eq(self.runs >> a_log2),
                         rem.eq(self.runs[:leaf_bits] & ((1 << a_log2) - 1)),
                         plan.source.eq(self.source)]
        with m.If(steps[2]):
            m.d.sync += [self.groups.eq(q + (rem != 0)), q1.eq(q + 1),
                         plan.threshold.eq((1 << a_log2) - rem),
                         plan.threshold_less.eq((1 << a_log2) - rem - 1)]
        with m.If(steps[3]):
            m.d.sync += [plan.q_span.eq(q << self.run_log2),
                         plan.q1_span.eq(q1 << self.run_log2),
                         plan.run_log2.eq(self.run_log2), plan.groups.eq(self.groups)]
        with m.If(self.phase2):
            m.d.sync += [plan.run_log2.eq(COUNT_BITS), plan.groups.eq(1)]
        return m


class PassCommands(wiring.Component):
    """A pass's write engine and packer commands, from registers: ``issue`` loads them (the
    write engine's address from ``addr``; both take the tree's ``records``), each valid a
    flip-flop cleared by its transfer. ``hold`` while either is not yet taken, in a flip-flop
    of its own (the leaf pipeline waits for both, and a shared OR of four flags was a chain of
    LUTs into every pipeline register); ``written`` from the write engine's done until the
    next ``issue``."""

    def __init__(self, shape):
        p = shape.axi
        self.shape = shape
        super().__init__({
            "issue": In(1),
            "records": In(COUNT_BITS),
            "addr": In(p.addr_width),
            "writer_done": In(1),
            "writer_cmd": Out(stream.Signature(write_command_layout(p, 1, 1,
                                                                    shape.length_bits))),
            "packer_cmd": Out(stream.Signature(packer_command_layout(COUNT_BITS))),
            "hold": Out(1),
            "written": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        writer, packer = self.writer_cmd, self.packer_cmd
        addr = Signal(len(self.addr))
        m.d.comb += [
            writer.payload.addr[0].eq(addr),
            writer.payload.bytes.eq(self.records << exact_log2(self.shape.record_bytes)),
            packer.payload.records.eq(self.records),
        ]
        with m.If(writer.ready):
            m.d.sync += writer.valid.eq(0)
        with m.If(packer.ready):
            m.d.sync += packer.valid.eq(0)
        m.d.sync += self.hold.eq((writer.valid & ~writer.ready) | (packer.valid & ~packer.ready))
        with m.If(self.writer_done):
            m.d.sync += self.written.eq(1)
        with m.If(self.issue):
            m.d.sync += [writer.valid.eq(1), packer.valid.eq(1), addr.eq(self.addr),
                         self.hold.eq(1), self.written.eq(0)]
        return m


class PresortChoice(wiring.Component):
    """Whether a tree of ``records`` starts from runs of a beat, each sorted by the read engine
    as pass 1 reads it (see plan.tree_plan): when that saves a pass, that is when the reach of
    its passes from runs of a beat, F * l**k >= ``beat_runs`` (ceil(records / rate)), is below
    the record count; otherwise (the same passes, and a last pass at least as wide without) it
    starts from runs of one record. k is found by shifts, a step each, the compares
    registered. ``start`` begins; ``done`` pulses with ``saves``."""

    def __init__(self, shape):
        self.shape = shape
        super().__init__({
            "start": In(1),
            "records": In(COUNT_BITS),
            "done": Out(1),
            "saves": Out(1),
            "beat_runs": Out(COUNT_BITS),
        })

    def elaborate(self, platform):
        m = Module()
        c = self.shape
        final, leaf_bits = c.runs_per_tree, exact_log2(c.leaves)
        reach = Signal(COUNT_BITS + leaf_bits)   # F * l**k
        reach_short = Signal()                   # reach < beat_runs
        with m.FSM():
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [reach.eq(final), self.beat_runs.eq(
                        (self.records + (c.rate - 1)) >> exact_log2(c.rate))]
                    m.next = "COMPARE"
            with m.State("COMPARE"):
                m.d.sync += [reach_short.eq(reach < self.beat_runs),
                             self.saves.eq((self.beat_runs > final) & (self.records > reach))]
                m.next = "SHIFT"
            with m.State("SHIFT"):
                with m.If(reach_short):
                    m.d.sync += reach.eq(reach << leaf_bits)
                    m.next = "COMPARE"
                with m.Else():
                    m.d.comb += self.done.eq(1)
                    m.next = "IDLE"
        return m


class LeafRegions(wiring.Component):
    """A pass's leaf commands: a pipeline computes one leaf's region per step (its span of
    records, then its first and end records, then the end clipped to the tree's records, then
    its length and byte address) into two :class:`~topsort_hdl.hardware.queue.SkidBuffer`
    queues, one for the feeders' commands and one for the read engine's (non-empty regions
    only), whose heads drive ``feeder_cmd`` and ``reader_cmd``.

    The pipeline moves when neither queue's second entry is taken, which it knows from
    flip-flops: no ready reaches its registers, and both streams can still take a command
    every cycle (the read engine then serves every leaf's first burst before any second one).
    It waits while ``hold``. ``begin_leaves`` starts a phase-1 pass's leaves, ``begin_phase2`` phase
    2's (leaf j reading run ``j % F`` of group tree ``j // F``); ``issued`` (registered) once
    the last leaf's commands have left the queues.
    """

    def __init__(self, shape, reused):
        p = shape.axi
        self.shape, self.reused = shape, reused
        # (the feeder queue's entries name their leaf; its head, one-hot, drives the valids)
        self.feeder_layout = data.StructLayout({"leaf": range(shape.leaves),
                                                "records": COUNT_BITS})
        self.feeder_head_layout = data.StructLayout({"hot": shape.leaves,
                                                     "records": COUNT_BITS})
        self.reader_layout = data.StructLayout({"target": range(shape.leaves),
                                                "addr": p.addr_width, "records": COUNT_BITS})
        members = {
            "plan": In(pass_layout(shape)),
            "records": In(COUNT_BITS),             # the tree's
            "begin_leaves": In(1),
            "hold": In(1),
            "feeder_cmd": Out(stream.Signature(feeder_command_layout(COUNT_BITS)))
            .array(shape.leaves),
            "reader_cmd": Out(stream.Signature(region_layout(p, shape.length_bits,
                                                             shape.leaves))),
            "issued": Out(1),
        }
        if reused:
            members.update({"begin_phase2": In(1), **group_members(shape)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        c, plan = self.shape, self.plan
        record_bits = exact_log2(c.record_bytes)
        s2, s3 = (Signal(stage_layout(c), name=f"step{k}") for k in (2, 3))
        m.submodules.feeder_queue = feeders = SkidBuffer(
            self.feeder_layout, self.feeder_head_layout,
            lambda entry: Cat(Cat(entry.leaf == j for j in range(c.leaves)), entry.records))
        m.submodules.reader_queue = readers = SkidBuffer(self.reader_layout)
        self._feeder_heads(m, feeders)
        reader = self.reader_cmd.payload
        m.d.comb += [self.reader_cmd.valid.eq(readers.o.valid),
                     reader.target.eq(readers.o.payload.target),
                     reader.addr.eq(readers.o.payload.addr),
                     reader.bytes.eq(readers.o.payload.records << record_bits),
                     readers.o.ready.eq(self.reader_cmd.ready)]
        advance = Signal()
        m.d.comb += advance.eq(feeders.i.ready & readers.i.ready & ~self.hold)

        # Step 1: the leaf's span (LeafSpans). Step 2: first and end records, before clipping.
        m.submodules.spans = spans = LeafSpans(c, self.reused)
        m.d.comb += [spans.plan.eq(plan), spans.records.eq(self.records),
                     spans.begin_leaves.eq(self.begin_leaves), spans.advance.eq(advance)]
        if self.reused:
            m.d.comb += spans.begin_phase2.eq(self.begin_phase2)
            for name in group_members(c):
                m.d.comb += getattr(spans, name).eq(getattr(self, name))
        s1 = spans.step
        position = Signal(SPAN_BITS)           # end of the previous leaf's runs
        base = Mux(s1.restart, 0, position)
        end = Signal(SPAN_BITS)
        m.d.comb += end.eq(base + s1.span)
        # Step 3: the end clipped to the tree's records; empty past it.
        limit = s2.limit if self.reused else self.records
        nonzero = s2.nonzero & (s2.first < limit)
        with m.If(advance):
            m.d.sync += [s2.eq(s1), s2.first.eq(base), s2.end.eq(end)]
            with m.If(s1.valid):
                m.d.sync += position.eq(end)
            m.d.sync += [s3.eq(s2), s3.end.eq(Mux(s2.end < limit, s2.end, limit)),
                         s3.nonzero.eq(nonzero), s3.read.eq(s2.valid & nonzero)]

        # Step 4, into the queues: the length and the byte address.
        length = Signal(COUNT_BITS)
        m.d.comb += [
            length.eq(Mux(s3.nonzero, s3.end - s3.first, 0)),
            feeders.i.valid.eq(s3.valid & readers.i.ready & ~self.hold),
            feeders.i.payload.leaf.eq(s3.leaf),
            feeders.i.payload.records.eq(length),
            readers.i.valid.eq(s3.read & feeders.i.ready & ~self.hold),
            readers.i.payload.target.eq(s3.leaf),
            readers.i.payload.addr.eq((s3.source if self.reused else plan.source) +
                                      (s3.first << record_bits)),
            readers.i.payload.records.eq(length),
        ]
        # Registered for the planner, which moves on a cycle later: the feeders' handshakes
        # stay out of its state logic. (The last leaf's commands leave the queues this cycle.)
        with m.If(self.begin_leaves | (self.begin_phase2 if self.reused else 0)):
            m.d.sync += self.issued.eq(0)
        with m.Else():
            m.d.sync += self.issued.eq(~spans.injecting & ~s1.valid & ~s2.valid & ~s3.valid &
                                       feeders.emptying & readers.emptying)
        return m

    def _feeder_heads(self, m, feeders):
        """The feeder queue's head, to the feeder it names (one-hot) with the pass's runs."""
        head = feeders.o.payload
        # (ready whether or not the head is valid: the feeder it names is ready)
        m.d.comb += feeders.o.ready.eq((head.hot & Cat(f.ready for f in self.feeder_cmd)).any())
        for j, feeder in enumerate(self.feeder_cmd):
            m.d.comb += [
                feeder.valid.eq(feeders.o.valid & head.hot[j]),
                feeder.payload.records.eq(head.records),
                feeder.payload.run_log2.eq(self.plan.run_log2),
                feeder.payload.groups.eq(self.plan.groups),
            ]


class LeafSpans(wiring.Component):
    """Step 1 of the leaf pipeline: the leaves in turn from ``begin_leaves``, one per ``advance``,
    each with its span of records (``step``). Phase 1: active leaves are spread, every
    (l / a)-th one, and active leaf k takes q + (k >= a - rem) runs (see plan.leaf_regions);
    which leaves are active and which take q + 1 runs is counted along with the leaf, in
    flip-flops (a shift of the leaf index by l / a and a compare were 6 LUT levels). Phase 2:
    leaf j reads run j % F of group tree j // F. ``injecting`` while leaves are still to
    enter."""

    def __init__(self, shape, reused):
        self.shape, self.reused = shape, reused
        members = {
            "plan": In(pass_layout(shape)),
            "records": In(COUNT_BITS),             # the tree's
            "begin_leaves": In(1),
            "advance": In(1),
            "step": Out(stage_layout(shape)),
            "injecting": Out(1),
        }
        if reused:
            members.update({"begin_phase2": In(1), **group_members(shape)})
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        c, plan, s1 = self.shape, self.plan, self.step
        leaves, final = c.leaves, c.runs_per_tree
        leaf_bits, final_bits = exact_log2(leaves), exact_log2(final)
        leaf = Signal(range(leaves))              # the next leaf to enter
        gap = Signal(leaf_bits)                   # leaves to the next active one
        k_next = Signal(leaf_bits + 1)            # the next active leaf's k
        takes_more = Signal()                     # k_next >= threshold: q + 1 runs
        in_phase2 = Signal()
        is_active = gap == 0
        span = Signal(SPAN_BITS)
        m.d.comb += span.eq(Mux(is_active, Mux(takes_more, plan.q1_span, plan.q_span), 0))
        tree = Signal(range(max(2, c.group)))     # the group tree a phase-2 leaf reads
        m.d.comb += tree.eq(leaf >> final_bits)
        with m.If(self.advance):
            m.d.sync += s1.valid.eq(self.injecting)
            with m.If(self.injecting):
                m.d.sync += leaf.eq(leaf + 1)
                with m.If(is_active):
                    m.d.sync += [gap.eq(plan.spread_mask), k_next.eq(k_next + 1),
                                 takes_more.eq(takes_more | (k_next == plan.threshold_less))]
                with m.Else():
                    m.d.sync += gap.eq(gap - 1)
                with m.If(leaf == leaves - 1):
                    m.d.sync += self.injecting.eq(0)
                m.d.sync += [s1.leaf.eq(leaf), s1.restart.eq(leaf == 0), s1.span.eq(span),
                             s1.nonzero.eq(is_active)]   # q + 1 >= 1 and q >= 1 when a <= R
                if self.reused:
                    m.d.sync += [s1.limit.eq(self.records), s1.source.eq(plan.source)]
                    halves = self.group_halves[tree]
                    with m.If(in_phase2):
                        m.d.sync += [
                            s1.restart.eq((leaf & (final - 1)) == 0),
                            s1.span.eq(C(1, SPAN_BITS) << self.group_run_log2[tree]),
                            s1.nonzero.eq(1),
                            s1.limit.eq(self.group_records[tree]),
                            s1.source.eq(Mux(self.group_half[tree], halves[1], halves[0])),
                        ]
        with m.If(self.begin_leaves):
            m.d.sync += [leaf.eq(0), self.injecting.eq(1), in_phase2.eq(0), gap.eq(0),
                         k_next.eq(0), takes_more.eq(plan.threshold == 0)]
        if self.reused:
            with m.If(self.begin_phase2):
                m.d.sync += [leaf.eq(0), self.injecting.eq(1), in_phase2.eq(1)]
        return m
