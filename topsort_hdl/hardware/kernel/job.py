"""The kernel's job, from ap_start to ap_done: the arguments checked, phase 1 on every tree,
phase 2 on the reused trees, the report written; the status word, the cycle counters and the
report shaped from the register map and the report's layout."""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.contract import (
    KEY_ORDER_ARGUMENT,
    RECORDS_ARGUMENT,
    REPORT_ARGUMENT,
    REPORT_FIELDS,
    REPORT_TREE_BYTES,
    REPORT_TREE_FIELDS,
    REPORT_TREES_OFFSET,
    REPORT_VERSION,
    STATUS_BITS,
    half_argument,
    report_alignment,
    report_bytes,
)
from ...core.params import COUNT_BITS
from ..axi.commands import write_command_layout
from ..properties import check, is_formal
from .arguments import argument_checks
from .key_order import KEY_ORDER_CONTROL, decode_key_order
from .packer import packer_command_layout

__all__ = ["JobController", "PassCounter", "PASS_BITS"]

PASS_BITS = 8           # a tree's pass count (at most COUNT_BITS, with two leaves)


class JobController(wiring.Component):
    """The job of a :class:`~topsort_hdl.hardware.kernel.kernel.TopSortKernel` for one
    configuration and its control registers' map.

    On ``start`` (ap_start) it latches the key order, resets the datapath (``job_reset``, down
    the kernel's chain until ``reset_passed``), checks the arguments, then runs phase 1
    (``start_trees``; until every tree is ``trees_done`` and no root packer is busy), phase 2
    (``start_phase2``, ``phase2`` high; the phase-2 packer's and writer's commands; until
    ``phase2_written``), writes the report (``report_start``, ``reporting`` until
    ``report_done``) and ends with ap_done. Bad arguments skip both phases: the report alone is
    written, if its own address passed. ``status`` (:data:`STATUS_BITS`) and ``counters``
    (named as the register map's counters) are the control registers'; ``ready``, ``done``
    and ``idle`` are ap_ready, ap_done and ap_idle (idle from a register, 1 from reset).
    """

    def __init__(self, config, register_map):
        c = self.config = config
        self.report_size = report_bytes(c.trees, c.axi.beat_bytes)
        super().__init__({
            "start": In(1),
            "args": In(data.StructLayout(dict(register_map.args))),
            "ready": Out(1),
            "done": Out(1),
            "idle": Out(1, init=1),
            "status": Out(32),
            "counters": Out(data.StructLayout({name: 64 for name in register_map.counters})),
            "order": Out(KEY_ORDER_CONTROL),
            "job_reset": Out(1),
            "reset_passed": In(1),
            "read_errors": In(1),
            "write_errors": In(1),
            "trees_done": In(c.trees),
            "trees_half": In(c.trees),
            "packers_busy": In(1),
            "start_trees": Out(1),
            "start_phase2": Out(1),
            "phase2": Out(1),
            "phase2_write": Out(stream.Signature(
                write_command_layout(c.axi, c.reuse, c.group, c.length_bits))),
            "phase2_written": In(1),
            "phase2_pack": Out(stream.Signature(packer_command_layout(COUNT_BITS))),
            "report_start": Out(1),
            "report_addr": Out(64),
            "report": Out(self.report_size * 8),
            "report_done": In(1),
            "reporting": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self.config
        trees = c.trees
        records = self.args[RECORDS_ARGUMENT]
        halves = [[self.args[half_argument(i, h)] for h in (0, 1)] for i in range(trees)]
        m.d.comb += self.report_addr.eq(self.args[REPORT_ARGUMENT])
        status = self.status
        # The arguments, checked before the job touches memory (.arguments).
        checks = argument_checks(m, c, halves, self.report_addr, self.report_size, records,
                                 status)
        # Phase 1 ends when every tree's output is written and every root packer has taken the
        # pad bundles that end its last run: a reused tree's root feeds phase 2 next.
        # Registered: the packers' busy flags come from their ring's positions, and the state
        # logic after them reaches across the device (the trees' ends may be seen a cycle late:
        # once set, the flags stay until phase 2 starts).
        for_all_done = Signal()
        m.d.sync += for_all_done.eq(self.trees_done.all() & ~self.packers_busy)

        m.d.sync += self.job_reset.eq(0)
        # A job reset is on its way down the chain (a flag, not an OR of every tap).
        in_chain = Signal()
        with m.If(self.job_reset):
            m.d.sync += in_chain.eq(1)
        with m.Elif(self.reset_passed):
            m.d.sync += in_chain.eq(0)
        # (not the previous job's errors, from blocks not yet reset)
        resetting = self.job_reset | in_chain
        with m.If(self.read_errors & ~resetting):
            m.d.sync += status[STATUS_BITS["read_error"]].eq(1)
        with m.If(self.write_errors & ~resetting):
            m.d.sync += status[STATUS_BITS["write_error"]].eq(1)

        m.submodules.passes = passes = PassCounter(trees)
        m.d.comb += passes.halves.eq(self.trees_half)
        self._report(m, passes.passes)
        self._machine(m, checks, resetting, for_all_done, passes)
        if is_formal(platform):
            self._properties(m)
        return m

    def _properties(self, m):
        """Bad arguments touch no memory (formal builds only): a job whose records exceed the
        capacity, whose key order is unknown, whose halves or report are misaligned or run
        past the top of the address space, or whose buffers overlap (checked here on their
        own, from the arguments) never starts the trees nor phase 2, and writes its report
        only to an aligned report address. Phase 2 starts only after the trees of the same
        job, and each ap_start ends in one ap_done."""
        c, args = self.config, self.args
        records = args[RECORDS_ARGUMENT]
        regions = [(args[half_argument(i, h)], c.half_bytes, c.half_alignment)
                   for i in range(c.trees) for h in (0, 1)]
        report = (args[REPORT_ARGUMENT], self.report_size,
                  report_alignment(c.trees, c.axi.beat_bytes))

        def outside(base, size, alignment):
            return (base[:exact_log2(alignment)] != 0) | ((base + C(size - 1, 65))[64:] != 0)

        def overlap(a, b):
            (base_a, size_a, _), (base_b, size_b, _) = a, b
            return (base_a < base_b + C(size_b, 65)) & (base_b < base_a + C(size_a, 65))

        buffers = [*regions, report]
        bad_now = Cat(records > c.capacity, decode_key_order(args[KEY_ORDER_ARGUMENT])[1],
                      *(outside(*r) for r in buffers),
                      *(overlap(a, b) for i, a in enumerate(buffers)
                        for b in buffers[i + 1:])).any()
        bad, report_bad, started, trees_started = (
            Signal(name=n) for n in ("job_bad", "job_report_bad", "job_started",
                                     "job_trees_started"))
        with m.If(self.ready):
            m.d.sync += [bad.eq(bad_now), report_bad.eq(outside(*report)), started.eq(1),
                         trees_started.eq(0)]
        with m.If(self.start_trees):
            check(m, started & ~bad, "the trees start on bad arguments")
            m.d.sync += trees_started.eq(1)
        with m.If(self.start_phase2):
            check(m, trees_started & ~bad, "phase 2 starts before the trees or on bad arguments")
        with m.If(self.phase2_write.valid | self.phase2_pack.valid):
            check(m, self.phase2 & ~bad, "a phase-2 command outside phase 2")
        with m.If(self.report_start):
            check(m, ~report_bad, "a report written to a bad address")
        starts, ends = Signal(4, name="ap_starts"), Signal(4, name="ap_dones")
        m.d.sync += [starts.eq(starts + self.ready), ends.eq(ends + self.done)]
        check(m, (starts - ends)[:4] <= 1, "two jobs at once")
        with m.If(self.done):
            check(m, starts - ends == 1, "ap_done without ap_start")

    def _report(self, m, passes):
        """The report: every field at its byte offset, the trees' entries 0 after bad
        arguments."""
        status, counters = self.status, self.counters
        fields = {"version": C(REPORT_VERSION, 32), "status": status,
                  "records": self.args[RECORDS_ARGUMENT],
                  "phase1_cycles": counters.phase1_cycles,
                  "phase2_cycles": counters.phase2_cycles}
        report = self.report
        for name, offset, size in REPORT_FIELDS:
            m.d.comb += report[8 * offset:8 * (offset + size)].eq(fields[name])
        good = status == 0
        for i in range(self.config.trees):
            entry = {"passes": Mux(good, passes[i], 0),
                     "output_half": good & ~self.trees_half[i]}
            for name, offset, size in REPORT_TREE_FIELDS:
                base = REPORT_TREES_OFFSET + i * REPORT_TREE_BYTES + offset
                m.d.comb += report[8 * base:8 * (base + size)].eq(entry[name])
        # The report writer's start, from a register of its own set on the way into REPORT
        # (high exactly in that state when the report is written): it enables every bit of
        # the report's latch, across the device from the job's state register.
        m.d.sync += self.report_start.eq(0)

    def _machine(self, m, checks, resetting, for_all_done, passes):
        """The job's states: IDLE, the checks (CHECK, PAIRS, DRAIN, CHECKED), PHASE1, PHASE2,
        the report (REPORT, REPORTING) and DONE; ``passes`` counts in phase 1."""
        status, counters, idle = self.status, self.counters, self.idle
        order_control, bad_order = decode_key_order(self.args[KEY_ORDER_ARGUMENT])
        order_bad = Signal()            # the job's key order is unknown (latched at ap_start)
        report_ok = Signal()            # the report's address passed its check (in CHECK)
        in_phase1 = Signal()
        m.d.comb += passes.counting.eq(in_phase1)
        sent2, packed2 = Signal(name="sent2"), Signal(name="packed2")
        with m.FSM() as fsm:
            with m.State("IDLE"):
                with m.If(self.start):
                    m.d.sync += [self.job_reset.eq(1), status.eq(0), counters.eq(0),
                                 self.phase2.eq(0), checks.pair_a.eq(0), checks.pair_b.eq(1),
                                 idle.eq(0), self.order.eq(order_control),
                                 order_bad.eq(bad_order)]
                    m.d.comb += passes.clear.eq(1)
                    m.next = "CHECK"
            with m.State("CHECK"):
                with m.If(checks.over):
                    m.d.sync += status[STATUS_BITS["capacity"]].eq(1)
                with m.If(checks.misaligned):
                    m.d.sync += status[STATUS_BITS["alignment"]].eq(1)
                with m.If(order_bad):
                    m.d.sync += status[STATUS_BITS["key_order"]].eq(1)
                m.d.sync += report_ok.eq(~checks.bad_report)
                m.next = "PAIRS"
            with m.State("PAIRS"):
                m.d.comb += checks.checking.eq(1)
                with m.If(checks.pair_b == len(checks.regions) - 1):
                    m.d.sync += [checks.pair_a.eq(checks.pair_a + 1),
                                 checks.pair_b.eq(checks.pair_a + 2)]
                    with m.If(checks.pair_a == len(checks.regions) - 2):
                        m.next = "DRAIN"
                with m.Else():
                    m.d.sync += checks.pair_b.eq(checks.pair_b + 1)
            with m.State("DRAIN"):
                # the last pair is compared, every block reset
                with m.If(~checks.picked.valid & ~checks.summed.valid & ~resetting):
                    m.next = "CHECKED"
            with m.State("CHECKED"):
                with m.If(status != 0):
                    m.d.sync += self.report_start.eq(report_ok)
                    m.next = "REPORT"   # bad arguments: no memory traffic but the report
                with m.Else():
                    m.d.comb += self.start_trees.eq(1)
                    m.d.sync += in_phase1.eq(1)
                    m.next = "PHASE1"
            with m.State("PHASE1"):
                m.d.sync += counters.phase1_cycles.eq(counters.phase1_cycles + 1)
                with m.If(for_all_done):
                    m.d.sync += [self.phase2.eq(1), sent2.eq(0), packed2.eq(0),
                                 in_phase1.eq(0)]
                    m.d.comb += self.start_phase2.eq(1)
                    m.next = "PHASE2"
            with m.State("PHASE2"):
                m.d.sync += counters.phase2_cycles.eq(counters.phase2_cycles + 1)
                self._offer_phase2_commands(m, sent2, packed2)
                with m.If(self.phase2_written):    # every byte written and acknowledged
                    m.d.sync += [self.phase2.eq(0), self.report_start.eq(report_ok)]
                    m.next = "REPORT"
            with m.State("REPORT"):
                # (the status word in the report is this cycle's: every other write is done)
                with m.If(report_ok):
                    m.d.sync += self.reporting.eq(1)
                    m.next = "REPORTING"
                with m.Else():
                    m.next = "DONE"
            with m.State("REPORTING"):
                with m.If(self.report_done):
                    m.d.sync += self.reporting.eq(0)
                    m.next = "DONE"
            with m.State("DONE"):
                m.d.sync += idle.eq(1)
                m.next = "IDLE"
        m.d.comb += [self.ready.eq(fsm.ongoing("IDLE") & self.start),
                     self.done.eq(fsm.ongoing("DONE"))]

    def _offer_phase2_commands(self, m, sent, packed):
        """Phase 2's commands, each offered once while in PHASE2: the packer's (the job's
        records) and the writer's (its bytes, and the free half of every tree of every
        group)."""
        c = self.config
        write, pack = self.phase2_write, self.phase2_pack
        records = self.args[RECORDS_ARGUMENT]
        m.d.comb += [
            write.valid.eq(~sent),
            write.payload.bytes.eq(records << exact_log2(c.record_bytes)),
            pack.valid.eq(~packed),
            pack.payload.records.eq(records),
        ]
        for tree in range(c.reuse * c.group):
            halves = [self.args[half_argument(tree, h)] for h in (0, 1)]
            m.d.comb += write.payload.addr[tree].eq(Mux(self.trees_half[tree], halves[0],
                                                        halves[1]))
        with m.If(write.ready):
            m.d.sync += sent.eq(1)
        with m.If(pack.ready):
            m.d.sync += packed.eq(1)


class PassCounter(wiring.Component):
    """Each tree's passes, counted as its source half (``halves``) flips while ``counting``
    (phase 1: a tree's controller flips its half as a pass ends; it is 0 when phase 1
    starts); ``clear`` zeroes them."""

    def __init__(self, trees):
        super().__init__({
            "halves": In(trees),
            "counting": In(1),
            "clear": In(1),
            "passes": Out(data.ArrayLayout(PASS_BITS, trees)),
        })

    def elaborate(self, platform):
        m = Module()
        last_half = Signal(len(self.halves))
        for i, passes in enumerate(self.passes):
            with m.If(self.counting & (self.halves[i] != last_half[i])):
                m.d.sync += passes.eq(passes + 1)
        m.d.sync += last_half.eq(self.halves)
        with m.If(self.clear):
            m.d.sync += self.passes.eq(0)
        return m
