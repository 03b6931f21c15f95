"""The built-in self test: fill block RAM with pseudo-random records, run the kernel through its
AXI4-Lite port, check the result's order and multiset checksum, report over a UART.

The generator and checksum are defined here once, in Python, and built into hardware from the
same constants; tests use the Python versions to reason about what the hardware does.
"""

from dataclasses import dataclass

from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..axi.control import AP_DONE, AP_START, CONTROL
from ..axi.signature import AxiLiteSignature
from ..kernel.kernel import CONTROL_ADDR_WIDTH, half_argument
from ..kernel.plan import ceil_div, split_records, tree_plan
from ..records import check_int
from .memory import BackdoorSignature
from .uart import Chars, Hex, TextLine

__all__ = ["BistJob", "SelfTest", "xorshift64", "job_records", "output_words",
           "multiset_checksum",
           "ERROR_BITS", "INJECTIONS", "SEED"]

SEED = 0x2545_F491_4F6C_DD1D
MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
MIX_KEY, MIX_VALUE = 0x9E37_79B9, 0x85EB_CA6B   # the checksum's key-value mix
# A job's error bits, as the report prints them (e=...) and the LEDs show them.
ERROR_BITS = {"status": 0, "order": 1, "checksum": 2, "stray": 3}
# Faults the self test can inject, to show that its checks fail: a corrupted input word
# (the checksum must catch it) and two output records swapped (the order check must).
INJECTIONS = (None, "input", "output")


@dataclass(frozen=True)
class BistJob:
    """One sort of the self test: ``records`` records whose keys are the generator's bits
    ANDed with ``key_mask`` and ORed with ``key_set`` (narrow masks give many equal keys;
    a set mask pushes keys up to all-ones)."""

    records: int
    key_mask: int = MASK32
    key_set: int = 0

    def __post_init__(self):
        check_int("records", self.records)
        for name in ("key_mask", "key_set"):
            value = getattr(self, name)
            check_int(name, value)
            if not 0 <= value <= MASK32:
                raise ValueError(f"{name} must be a 32-bit value, not {value:#x}")

    def key(self, bits):
        return bits & self.key_mask | self.key_set


def xorshift64(state):
    """Marsaglia's xorshift64 (a linear feedback generator over GF(2)): the next state."""
    state ^= (state << 13) & MASK64
    state ^= state >> 7
    state ^= (state << 17) & MASK64
    return state


def job_records(state, job, trees, rate):
    """The records the self test writes for ``job`` from generator ``state``, in order: tree
    by tree (split as the host library splits them), one record per generator step (key and
    value from the high and low halves), ``rate`` steps per memory word, so the unused slots of
    a tree's last word advance the generator too. Returns ``(records, next state)``."""
    records = []
    for count in split_records(job.records, trees):
        for index in range(ceil_div(count, rate) * rate):
            state = xorshift64(state)
            if index < count:
                records.append((job.key(state >> 32), state & MASK32))
    return records, state


def free_halves(config, counts):
    """Per tree holding ``counts[i]`` records, the half phase 2 writes to: the one its last
    phase-1 pass did not."""
    return [tree_plan(n, config.leaves, config.runs_per_tree).final_half ^ 1 for n in counts]


def output_words(config, job):
    """Where the self test reads the sorted result, in order: ``(tree, word)`` per memory word
    of ``config.rate`` records (phase 2 writes batches round robin over the reused trees'
    free halves; word 0 of half 1 is word ``channel_bytes / beat_bytes``)."""
    free = free_halves(config, split_records(job.records, config.trees))
    half_words = config.channel_bytes // config.axi.beat_bytes
    batch_words = config.batch_bytes // config.axi.beat_bytes
    out = []
    for word in range(ceil_div(job.records, config.rate)):
        batch, offset = divmod(word, batch_words)
        tree = batch % config.reuse
        out.append((tree, free[tree] * half_words + batch // config.reuse * batch_words
                    + offset))
    return out


def _mix(key, value):
    return ((key ^ MIX_KEY) * (value ^ MIX_VALUE)) & MASK32


def multiset_checksum(records):
    """Order-independent checksum of ``(key, value)`` records: the sum of the 64-bit records
    and the sum of a key-value product (a plain sum cannot see two records trade values)."""
    total = sum((k << 32) | v for k, v in records) & MASK64
    return total, sum(_mix(k, v) for k, v in records) & MASK32


def _hw_xorshift(state):
    state = state ^ (state << 13)[:64]
    state = state ^ (state >> 7)
    return state ^ (state << 17)[:64]


def _hw_mix(key, value):
    return ((key ^ MIX_KEY) * (value ^ MIX_VALUE))[:32]


class SelfTest(wiring.Component):
    """Sort ``jobs`` over and over through a two-phase kernel whose tree ``i`` has its two
    halves in ``memory[i]`` (half 0 at word 0, half 1 at ``half_words``, the kernel
    addressing them at ``(2i + h) * channel_bytes``), checking each result.

    Per job: write the records to the trees' half 0 (split as the host library splits them),
    summing them; write the kernel's arguments and ap_start over AXI4-Lite; poll ap_done; read
    ``status`` and the phase cycle counters; read the output where phase 2 writes it (batches
    round robin over the reused trees' free halves) and check that keys never decrease and
    that the checksum matches. After each round, one report line per job and one for the
    round go out on ``text``; then the next round, with new records.

    The output layout is computed at elaboration from the plan, so each tree's port must reach
    only its own two halves: ``trees == reuse`` (no crossbar between ports and channels).

    Members
    -------
    control : Out(AxiLiteSignature)
    memory : Out(BackdoorSignature).array(trees)
    stray : In(1)
        A memory saw an access outside its range (sticky): counted against every later job.
    text : Out(stream.Signature(8))
    passed, failed : Out(1)
        ``passed``: at least one round done and no job failed yet; ``failed``: sticky.
    errors : Out(4)
        Error bits (:data:`ERROR_BITS`) of the latest failed job.
    rounds : Out(16)
        Rounds completed.
    running : Out(1)
        The kernel is sorting.
    """

    def __init__(self, config, register_map, jobs, *, inject=None, seed=SEED):
        if config.trees != config.reuse:
            raise ValueError(f"config.trees must equal config.reuse ({config.reuse}) for the "
                             f"on-chip demo: each port reaches only its own tree's memory, "
                             f"not {config.trees}")
        if (config.key_bits, config.value_bits) != (32, 32):
            raise ValueError(f"config key_bits and value_bits must be 32 for the self test's "
                             f"generator and checker, not {config.key_bits} and "
                             f"{config.value_bits}")
        if inject not in INJECTIONS:
            raise ValueError(f"inject must be one of {INJECTIONS}, not {inject!r}")
        jobs = tuple(jobs)
        if not jobs or not all(isinstance(job, BistJob) for job in jobs):
            raise ValueError(f"jobs must be a non-empty sequence of BistJob, not {jobs!r}")
        for index, job in enumerate(jobs):
            if not 0 <= job.records <= config.capacity:
                raise ValueError(f"jobs[{index}].records must be between 0 and the capacity "
                                 f"{config.capacity}, not {job.records}")
        if inject and jobs[0].records < 2:
            raise ValueError(f"jobs[0].records must be at least 2 to inject a fault, not "
                             f"{jobs[0].records}")
        self.config = config
        self.register_map = register_map
        self.jobs = jobs
        self.inject = inject
        self.seed = seed
        self.half_words = config.channel_bytes // config.axi.beat_bytes
        super().__init__({
            "control": Out(AxiLiteSignature(CONTROL_ADDR_WIDTH)),
            "memory": Out(BackdoorSignature(2 * self.half_words, config.data_width))
            .array(config.trees),
            "stray": In(1),
            "text": Out(stream.Signature(8)),
            "passed": Out(1),
            "failed": Out(1),
            "errors": Out(len(ERROR_BITS)),
            "rounds": Out(16),
            "running": Out(1),
        })

    def job_layout(self, job):
        """Per tree, its records and the half its output batches go to (the free half)."""
        counts = split_records(job.records, self.config.trees)
        return counts, free_halves(self.config, counts)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        rate, trees, jobs = c.rate, c.trees, self.jobs
        width = c.record.size
        half_words = self.half_words

        # Per-job constants, computed from the plan.
        layouts = [self.job_layout(job) for job in jobs]
        job = Signal(range(len(jobs)))
        count_bits = max(1, c.capacity.bit_length())
        total = Array(C(j.records, count_bits) for j in jobs)[job]
        key_mask = Array(C(j.key_mask, 32) for j in jobs)[job]
        key_set = Array(C(j.key_set, 32) for j in jobs)[job]
        tree_records = [Array(C(layout[0][t], count_bits) for layout in layouts)[job]
                        for t in range(trees)]
        free_half = [Array(C(layout[1][t], 1) for layout in layouts)[job]
                     for t in range(trees)]

        # The generator: ``rate`` records per step.
        state = Signal(64, init=self.seed)
        states = [state]
        for _ in range(rate):
            states.append(_hw_xorshift(states[-1]))
        fresh = [Cat(s[:32], s[32:] & key_mask | key_set) for s in states[1:]]

        # Running checksums: of what went in, of what came out.
        in_total, out_total = Signal(64), Signal(64)
        in_mix, out_mix = Signal(32), Signal(32)

        def sums(records, valid):
            """The checksum terms of ``records`` (plain 64-bit values) counted where valid."""
            total_terms = [Mux(v, r, 0) for r, v in zip(records, valid, strict=True)]
            mix_terms = [Mux(v, _hw_mix(r[32:], r[:32]), 0)
                         for r, v in zip(records, valid, strict=True)]
            return sum(total_terms)[:64], sum(mix_terms)[:32]

        # Results per job and per round.
        errors = Signal(len(ERROR_BITS))
        job_errors = Array(Signal(len(ERROR_BITS), name=f"job{j}_errors")
                           for j in range(len(jobs)))
        job_p1 = Array(Signal(32, name=f"job{j}_phase1") for j in range(len(jobs)))
        job_p2 = Array(Signal(32, name=f"job{j}_phase2") for j in range(len(jobs)))
        status, phase1, phase2 = Signal(32), Signal(32), Signal(32)
        round_failed = Signal()
        m.d.comb += self.errors.eq(errors)

        # Memory back doors: one address for all, data from the selected tree.
        select = Signal()
        addr = Signal(range(2 * half_words))
        w_en = Signal(trees)
        w_data = Signal(c.data_width)
        for t in range(trees):
            m.d.comb += [
                self.memory[t].select.eq(select),
                self.memory[t].addr.eq(addr),
                self.memory[t].w_en.eq(w_en[t]),
                self.memory[t].w_data.eq(w_data),
            ]
        read_tree = Signal(range(max(2, trees)))     # the tree whose data arrives this cycle
        r_data = Array(self.memory[t].r_data for t in range(trees))[read_tree]

        # AXI4-Lite: one write or read at a time.
        lite = self.control
        aw_done, w_done = Signal(), Signal()
        regs = self.register_map
        writes = [(regs.offset("records"), total)]
        for t in range(trees):
            for h in (0, 1):
                offset = regs.offset(half_argument(t, h))
                address = (2 * t + h) * c.channel_bytes
                writes += [(offset, C(address & MASK32, 32)), (offset + 4, C(address >> 32, 32))]
        writes.append((CONTROL, C(1 << AP_START, 32)))
        reads = [regs.offset("status"), regs.offset("phase1_cycles"),
                 regs.offset("phase2_cycles")]
        step = Signal(range(max(len(writes), len(reads)) + 1))

        def lite_write(next_state):
            offset = Array(C(o, CONTROL_ADDR_WIDTH) for o, _ in writes)[step]
            value = Array(v for _, v in writes)[step]
            m.d.comb += [
                lite.awaddr.eq(offset), lite.awvalid.eq(~aw_done),
                lite.wdata.eq(value), lite.wstrb.eq(0xF), lite.wvalid.eq(~w_done),
                lite.bready.eq(aw_done & w_done),
            ]
            with m.If(lite.awvalid & lite.awready):
                m.d.sync += aw_done.eq(1)
            with m.If(lite.wvalid & lite.wready):
                m.d.sync += w_done.eq(1)
            with m.If(lite.bvalid & lite.bready):
                m.d.sync += [aw_done.eq(0), w_done.eq(0), step.eq(step + 1)]
                with m.If(step == len(writes) - 1):
                    m.d.sync += step.eq(0)
                    m.next = next_state

        # Output walk: word q of the result, batch by batch over the reused trees' ports.
        batch_words = c.batch_bytes // c.axi.beat_bytes
        batch_log2, port_log2 = exact_log2(batch_words), exact_log2(c.reuse)
        word = Signal(count_bits)
        words_total = Signal(count_bits)
        m.d.comb += words_total.eq((total + rate - 1) >> exact_log2(rate))
        out_tree = Signal(range(max(2, trees)))
        out_offset = Signal(range(half_words))
        m.d.comb += [
            out_tree.eq((word >> batch_log2) & (c.reuse - 1)),
            out_offset.eq(((word >> (batch_log2 + port_log2)) << batch_log2) |
                          (word & (batch_words - 1))),
        ]
        out_addr = Mux(Array(free_half)[out_tree], half_words, 0) + out_offset

        arriving = Signal()          # read data of the output word ``arrived`` is valid
        arrived = Signal(count_bits)
        seen_any = Signal()
        previous = Signal(32)
        order_bad = Signal()

        # Fill: tree ``fill_tree``, ``fill_left`` records still to write at word ``addr``.
        fill_tree = Signal(range(trees + 1))
        fill_left = Signal(count_bits)
        fill_addr = Signal.like(addr)

        # Report: line ``line`` (jobs, then the round's), character ``char``.
        lines = []
        for j, b in enumerate(jobs):
            verdict = Mux(job_errors[j] == 0, C(int.from_bytes(b"PASS", "big"), 32),
                          C(int.from_bytes(b"FAIL", "big"), 32))
            lines.append(TextLine(
                f"job {j} n={b.records} ", Chars(verdict, 4), " e=", Hex(job_errors[j], 1),
                " p1=", Hex(job_p1[j], 8), " p2=", Hex(job_p2[j], 8), "\r\n"))
        round_verdict = Mux(round_failed, C(int.from_bytes(b"FAIL", "big"), 32),
                            C(int.from_bytes(b"PASS", "big"), 32))
        lines.append(TextLine("round ", Hex(self.rounds, 4), " ", Chars(round_verdict, 4),
                              "\r\n"))
        line = Signal(range(len(lines)))
        char = Signal(range(max(len(text) for text in lines)))
        lengths = Array(C(len(text) - 1, char.shape()) for text in lines)

        m.d.comb += self.running.eq(0)
        with m.FSM():
            with m.State("JOB"):
                m.d.sync += [fill_tree.eq(0), fill_left.eq(tree_records[0]), fill_addr.eq(0),
                             in_total.eq(0), in_mix.eq(0), out_total.eq(0), out_mix.eq(0),
                             order_bad.eq(0), seen_any.eq(0), step.eq(0),
                             aw_done.eq(0), w_done.eq(0)]
                m.next = "FILL"
            with m.State("FILL"):
                m.d.comb += [select.eq(1), addr.eq(fill_addr)]
                taken = Mux(fill_left < rate, fill_left, rate)
                valid = [taken > i for i in range(rate)]
                with m.If(fill_left != 0):
                    data = Cat(fresh)
                    if self.inject == "input":   # flip key bit 0 of the first record
                        data = Mux((job == 0) & (fill_tree == 0) & (fill_addr == 0),
                                   data ^ (1 << (width // 2)), data)
                    m.d.comb += [w_en.eq(1 << fill_tree), w_data.eq(data)]
                    total_sum, mix_sum = sums(fresh, valid)
                    m.d.sync += [state.eq(states[-1]), fill_left.eq(fill_left - taken),
                                 fill_addr.eq(fill_addr + 1), in_total.eq(in_total + total_sum),
                                 in_mix.eq(in_mix + mix_sum)]
                with m.Else():
                    m.d.sync += [fill_tree.eq(fill_tree + 1), fill_addr.eq(0),
                                 fill_left.eq(Array(tree_records + [C(0, count_bits)])
                                              [fill_tree + 1])]
                    with m.If(fill_tree == trees - 1):
                        m.next = "ARGS"
            with m.State("ARGS"):
                lite_write("POLL")
            with m.State("POLL"):
                m.d.comb += self.running.eq(1)
                m.d.comb += [lite.araddr.eq(CONTROL), lite.arvalid.eq(~aw_done),
                             lite.rready.eq(1)]
                with m.If(lite.arvalid & lite.arready):
                    m.d.sync += aw_done.eq(1)
                with m.If(lite.rvalid):
                    m.d.sync += aw_done.eq(0)
                    with m.If(lite.rdata[AP_DONE]):
                        m.next = "RESULTS"
            with m.State("RESULTS"):
                m.d.comb += [lite.araddr.eq(Array(C(o, CONTROL_ADDR_WIDTH) for o in reads)[step]),
                             lite.arvalid.eq(~aw_done), lite.rready.eq(1)]
                with m.If(lite.arvalid & lite.arready):
                    m.d.sync += aw_done.eq(1)
                with m.If(lite.rvalid):
                    m.d.sync += [aw_done.eq(0), step.eq(step + 1)]
                    for index, target in enumerate((status, phase1, phase2)):
                        with m.If(step == index):
                            m.d.sync += target.eq(lite.rdata)
                    with m.If(step == len(reads) - 1):
                        m.d.sync += [step.eq(0), word.eq(0)]
                        m.next = "FAULT" if self.inject == "output" else "CHECK"
            if self.inject == "output":
                # Swap the first two records of the output in memory (job 0 only).
                with m.State("FAULT"):
                    m.d.comb += [select.eq(1), addr.eq(out_addr)]
                    m.d.sync += read_tree.eq(out_tree)
                    with m.If(job != 0):
                        m.next = "CHECK"
                    with m.Elif(step == 0):
                        m.d.sync += step.eq(1)
                    with m.Else():
                        m.d.comb += [w_en.eq(1 << out_tree),
                                     w_data.eq(Cat(r_data[width:2 * width], r_data[:width],
                                                   r_data[2 * width:]))]
                        m.d.sync += step.eq(0)
                        m.next = "CHECK"
            with m.State("CHECK"):
                m.d.comb += [select.eq(1), addr.eq(out_addr)]
                m.d.sync += [arriving.eq(word < words_total), arrived.eq(word),
                             read_tree.eq(out_tree)]
                with m.If(word < words_total):
                    m.d.sync += word.eq(word + 1)
                with m.Elif(~arriving):
                    m.next = "VERDICT"
            with m.State("VERDICT"):
                verdict = Cat(status != 0, order_bad,
                              (in_total != out_total) | (in_mix != out_mix), self.stray)
                m.d.sync += [job_errors[job].eq(verdict), job_p1[job].eq(phase1),
                             job_p2[job].eq(phase2)]
                with m.If(verdict != 0):
                    m.d.sync += [self.failed.eq(1), errors.eq(verdict), round_failed.eq(1)]
                with m.If(job == len(jobs) - 1):
                    m.d.sync += [line.eq(0), char.eq(0)]
                    m.next = "REPORT"
                with m.Else():
                    m.d.sync += job.eq(job + 1)
                    m.next = "JOB"
            with m.State("REPORT"):
                m.d.comb += [self.text.valid.eq(1),
                             self.text.payload.eq(Array(text.char(char) for text in lines)
                                                  [line])]
                with m.If(self.text.ready):
                    m.d.sync += char.eq(char + 1)
                    with m.If(char == lengths[line]):
                        m.d.sync += [char.eq(0), line.eq(line + 1)]
                        with m.If(line == len(lines) - 1):
                            m.d.sync += [job.eq(0), self.rounds.eq(self.rounds + 1),
                                         round_failed.eq(0),
                                         self.passed.eq(~self.failed & ~round_failed)]
                            m.next = "JOB"

        # Output words arrive a cycle after their address: check order and sum them.
        valid_out = Signal(rate)
        left = Signal(count_bits)
        m.d.comb += left.eq(total - (arrived << exact_log2(rate)))
        for i in range(rate):
            m.d.comb += valid_out[i].eq(arriving & (left > i))
        out_records = [r_data[i * width:(i + 1) * width] for i in range(rate)]
        with m.If(arriving):
            total_sum, mix_sum = sums(out_records, list(valid_out))
            m.d.sync += [out_total.eq(out_total + total_sum), out_mix.eq(out_mix + mix_sum)]
            last_key, have, bad = previous, seen_any, C(0, 1)
            for i in range(rate):
                key = out_records[i][32:]
                bad = bad | valid_out[i] & have & (key < last_key)
                last_key = Mux(valid_out[i], key, last_key)
                have = have | valid_out[i]
            m.d.sync += [previous.eq(last_key), seen_any.eq(have)]
            with m.If(bad):
                m.d.sync += order_bad.eq(1)
        return m

