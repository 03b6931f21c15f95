"""The built-in self test: fill block RAM with pseudo-random records, run the kernel through its
AXI4-Lite port, check the result's order and multiset checksum, report over a UART.

The jobs, the generator and the checksum are defined once, in plain Python (:mod:`.jobs`); the
hardware here is built from the same constants.
"""

from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.contract import (
    AP_DONE,
    AP_START,
    CONTROL,
    CONTROL_ADDR_WIDTH,
    REPORT_ARGUMENT,
    half_argument,
)
from ...core.plan import split_records
from ...hardware.axi.signature import AxiLiteSignature
from .jobs import (
    ERROR_BITS,
    INJECTIONS,
    MASK32,
    MIX_KEY,
    MIX_VALUE,
    SEED,
    BistJob,
    free_halves,
)
from .memory import BackdoorSignature
from .uart import Chars, Hex, TextLine

TEXT_COLUMNS = 8    # the report text's first choice: a character per column of a line's row

__all__ = ["SelfTest"]

def _hw_xorshift(state):
    state = state ^ (state << 13)[:64]
    state = state ^ (state >> 7)
    return state ^ (state << 17)[:64]


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
        # The job's running checksums (:func:`multiset_checksum` of what went in and what came
        # out), for simulations to read.
        self.sums = {name: Signal(width, name=name) for name, width in
                     (("in_total", 64), ("in_mix", 32), ("out_total", 64), ("out_mix", 32))}
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
        width = c.key_bits + c.value_bits
        half_words = self.half_words

        # Per-job constants, computed from the plan.
        layouts = [self.job_layout(job) for job in jobs]
        job = Signal(range(len(jobs)))
        count_bits = max(1, c.capacity.bit_length())
        total = Array(C(j.records, count_bits) for j in jobs)[job]
        tree_records = [Array(C(layout[0][t], count_bits) for layout in layouts)[job]
                        for t in range(trees)]
        free_half = [Array(C(layout[1][t], 1) for layout in layouts)[job]
                     for t in range(trees)]
        # The key mask and set in registers, off the generator's path (the job changes a cycle
        # before its fill starts).
        key_mask = Signal(32, init=jobs[0].key_mask)
        key_set = Signal(32, init=jobs[0].key_set)
        m.d.sync += [key_mask.eq(Array(C(j.key_mask, 32) for j in jobs)[job]),
                     key_set.eq(Array(C(j.key_set, 32) for j in jobs)[job])]

        # The generator: ``rate`` records per step.
        state = Signal(64, init=self.seed)
        states = [state]
        for _ in range(rate):
            states.append(_hw_xorshift(states[-1]))
        fresh = [Cat(s[:32], s[32:] & key_mask | key_set) for s in states[1:]]

        # Running checksums: of what went in, of what came out.
        in_total, out_total = self.sums["in_total"], self.sums["out_total"]
        in_mix, out_mix = self.sums["in_mix"], self.sums["out_mix"]

        # Results per job and per round.
        errors = Signal(len(ERROR_BITS))
        job_errors = Array(Signal(len(ERROR_BITS), name=f"job{j}_errors")
                           for j in range(len(jobs)))
        job_p1 = Array(Signal(32, name=f"job{j}_phase1") for j in range(len(jobs)))
        job_p2 = Array(Signal(32, name=f"job{j}_phase2") for j in range(len(jobs)))
        status_bad, phase1, phase2 = Signal(), Signal(32), Signal(32)
        round_failed = Signal()
        m.d.comb += self.errors.eq(errors)

        # Memory back doors, driven from registers (the block RAMs' address and data inputs
        # see no logic of ours): one address for all, data from the selected tree. States set
        # ``select`` and ``w_en`` for the next cycle; by default the back door lets go.
        select = Signal()
        addr = Signal(range(2 * half_words))
        w_en = Signal(trees)
        w_data = Signal(c.data_width)
        m.d.sync += [select.eq(0), w_en.eq(0)]
        for t in range(trees):
            m.d.comb += [
                self.memory[t].select.eq(select),
                self.memory[t].addr.eq(addr),
                self.memory[t].w_en.eq(w_en[t]),
                self.memory[t].w_data.eq(w_data),
            ]
        # Each RAM's data comes from a register next to it (the back door's): a block RAM
        # without its output register is slow (ECP5: 5.8 ns from clock to data), and it was the
        # demo's critical path through the choice of tree below.
        read_data = [self.memory[t].r_data for t in range(trees)]
        read_tree = Signal(range(max(2, trees)))     # the tree whose data arrives this cycle
        r_data = Array(read_data)[read_tree]

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
        # the completion report beside tree 0's half 0 (the self test reads the registers)
        writes.append((regs.offset(REPORT_ARGUMENT), C(c.half_bytes, 32)))
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

        # Output walk: word q of the result, batch by batch over the reused trees' ports;
        # ``out_left`` records of it still to read.
        batch_words = c.batch_bytes // c.axi.beat_bytes
        batch_log2, port_log2 = exact_log2(batch_words), exact_log2(c.reuse)
        word = Signal(count_bits)
        out_left = Signal(count_bits)
        out_tree = Signal(range(max(2, trees)))
        out_offset = Signal(exact_log2(half_words))
        m.d.comb += [
            out_tree.eq((word >> batch_log2) & (c.reuse - 1)),
            out_offset.eq(((word >> (batch_log2 + port_log2)) << batch_log2) |
                          (word & (batch_words - 1))),
        ]
        # Half 1 starts at word ``half_words``, a power of two: no adder.
        out_addr = Cat(out_offset, Array(free_half)[out_tree])

        # The read pipeline of the check: the word's address goes to a register (``addr``), the
        # RAM reads it a cycle later, its data is in ``read_data`` the cycle after that
        # (``arrive``: the records of it that count).
        ask = Signal(rate)
        ask_tree = Signal.like(read_tree)
        asked, asked_tree = Signal(rate), Signal.like(read_tree)     # the RAM reading
        arrive = Signal(rate)
        m.d.sync += [ask.eq(0), asked.eq(ask), asked_tree.eq(ask_tree),
                     arrive.eq(asked), read_tree.eq(asked_tree)]

        # Fill: tree ``fill_tree``, ``fill_left`` records still to write at word ``fill_addr``.
        # The generator's word goes to the back door's write register; ``filled`` marks the
        # records of it that count, ``flipped`` the injected fault in it.
        fill_tree = Signal(range(trees + 1))
        fill_left = Signal(count_bits)
        # ``fill_left != 0``, kept as a register: worked out from ``fill_left`` in the cycle it
        # is used, it was the demo's critical path (two carry chains).
        fill_more = Signal()
        fill_addr = Signal.like(addr)
        filled = Signal(rate)
        flipped = Signal()
        m.d.sync += filled.eq(0)
        flip_bit = 1 << (width // 2)            # key bit 0 of the first record
        # The fill runs in two stages of its own, beside the state machine: the counters
        # above (while ``filling``) choose the next word's place, the write stage (while
        # ``word_valid``) loads it with the generator's records. The write registers' enable
        # is then a register (``word_valid``) and not the state: as the state's decode it
        # fanned out to ~220 flip-flops and was the demo's critical path, back into the state.
        filling, word_valid = Signal(), Signal()
        word_addr, word_en = Signal.like(addr), Signal.like(w_en)
        word_filled, word_flip = Signal(rate), Signal()
        m.d.sync += word_valid.eq(0)
        with m.If(filling):
            taken = Mux(fill_left < rate, fill_left, rate)
            with m.If(fill_more):
                flip = C(0, 1)
                if self.inject == "input":
                    flip = (job == 0) & (fill_tree == 0) & (fill_addr == 0)
                m.d.sync += [word_valid.eq(1), word_addr.eq(fill_addr),
                             word_en.eq(1 << fill_tree), word_flip.eq(flip),
                             word_filled.eq(Cat(taken > i for i in range(rate))),
                             fill_left.eq(fill_left - taken), fill_more.eq(fill_left > rate),
                             fill_addr.eq(fill_addr + 1)]
            with m.Else():
                next_records = Array(tree_records + [C(0, count_bits)])[fill_tree + 1]
                m.d.sync += [fill_tree.eq(fill_tree + 1), fill_addr.eq(0),
                             fill_left.eq(next_records), fill_more.eq(next_records != 0)]
                with m.If(fill_tree == trees - 1):
                    m.d.sync += filling.eq(0)
        with m.If(word_valid):
            m.d.sync += [select.eq(1), addr.eq(word_addr), w_en.eq(word_en),
                         w_data.eq(Cat(fresh) ^ Mux(word_flip, flip_bit, 0)),
                         filled.eq(word_filled), flipped.eq(word_flip), state.eq(states[-1])]

        # The checksum pipeline, shared by the fill (what goes in: the word written, the fault
        # flipped back) and the check (what comes out: the word read). One adder, multiplier or
        # comparator per stage, every stage from registers; records that do not count enter as
        # zero terms, so an idle pipeline adds nothing.
        #   A: the records, and the mix operands (key ^ MIX_KEY, value ^ MIX_VALUE)
        #   B: the records that count; 16 x 16 partial products of the mix (mod 2^32, the
        #      high halves' product drops out); the order check's comparisons
        #   C: the 64-bit records summed; the two cross products summed
        #   D: each record's mix
        #   E: the mixes summed
        #   F: both into the job's running sums (``out`` says which)
        a_valid, a_out = Signal(rate), Signal()
        a_rec = [Signal(width, name=f"a_rec{i}") for i in range(rate)]
        a_key = [Signal(32, name=f"a_key{i}") for i in range(rate)]
        a_value = [Signal(32, name=f"a_value{i}") for i in range(rate)]
        source = Mux(filled[0], w_data ^ Mux(flipped, flip_bit, 0), r_data)
        m.d.sync += [a_valid.eq(filled | arrive), a_out.eq(arrive[0])]
        for i in range(rate):
            record = source[i * width:(i + 1) * width]
            m.d.sync += [a_rec[i].eq(record), a_key[i].eq(record[32:] ^ MIX_KEY),
                         a_value[i].eq(record[:32] ^ MIX_VALUE)]

        b_valid, b_out = Signal(rate), Signal()
        b_term = [Signal(width, name=f"b_term{i}") for i in range(rate)]
        b_low = [Signal(32, name=f"b_low{i}") for i in range(rate)]
        b_cross = [[Signal(16, name=f"b_cross{i}_{k}") for k in range(2)] for i in range(rate)]
        m.d.sync += [b_valid.eq(a_valid), b_out.eq(a_out)]
        for i in range(rate):
            key, value = a_key[i], a_value[i]
            m.d.sync += [
                b_term[i].eq(Mux(a_valid[i], a_rec[i], 0)),
                b_low[i].eq(key[:16] * value[:16]),
                b_cross[i][0].eq((key[16:] * value[:16])[:16]),
                b_cross[i][1].eq((key[:16] * value[16:])[:16]),
            ]

        c_valid, c_out = Signal(rate), Signal()
        c_total = Signal(64)
        c_low = [Signal(32, name=f"c_low{i}") for i in range(rate)]
        c_cross = [Signal(16, name=f"c_cross{i}") for i in range(rate)]
        m.d.sync += [c_valid.eq(b_valid), c_out.eq(b_out), c_total.eq(sum(b_term)[:64])]
        for i in range(rate):
            m.d.sync += [c_low[i].eq(b_low[i]), c_cross[i].eq(b_cross[i][0] + b_cross[i][1])]

        d_out, d_total = Signal(), Signal(64)
        d_mix = [Signal(32, name=f"d_mix{i}") for i in range(rate)]
        m.d.sync += [d_out.eq(c_out), d_total.eq(c_total)]
        for i in range(rate):
            mix = Cat(c_low[i][:16], c_low[i][16:] + c_cross[i])
            m.d.sync += d_mix[i].eq(Mux(c_valid[i], mix, 0))

        e_out, e_total, e_mix = Signal(), Signal(64), Signal(32)
        m.d.sync += [e_out.eq(d_out), e_total.eq(d_total), e_mix.eq(sum(d_mix)[:32])]

        with m.If(e_out):
            m.d.sync += [out_total.eq(out_total + e_total), out_mix.eq(out_mix + e_mix)]
        with m.Else():
            m.d.sync += [in_total.eq(in_total + e_total), in_mix.eq(in_mix + e_mix)]

        # Whether the sums differ, 16 bits at a time, then at all: two more stages.
        chunks = Signal(6)
        differ = Signal()
        ins, outs = Cat(in_total, in_mix), Cat(out_total, out_mix)
        m.d.sync += [chunks.eq(Cat(ins[16 * k:16 * k + 16] != outs[16 * k:16 * k + 16]
                                   for k in range(6))),
                     differ.eq(chunks != 0)]
        # From the last word read to ``differ``: the RAM and its data register (3 cycles),
        # A..F, the two above.
        settle = 3 + 6 + 2

        # The order check (stage B of the output): keys never decrease, across words too.
        # Records that count are a prefix of the word, so record i > 0 follows record i - 1.
        seen_any = Signal()
        previous = Signal(32)
        b_order_bad = Signal()
        order_bad = Signal()
        m.d.sync += b_order_bad.eq(0)
        with m.If(a_out):
            keys = [a_rec[i][32:] for i in range(rate)]
            bad = a_valid[0] & seen_any & (keys[0] < previous)
            for i in range(1, rate):
                bad = bad | a_valid[i] & (keys[i] < keys[i - 1])
            last_key = previous
            for i in range(rate):
                last_key = Mux(a_valid[i], keys[i], last_key)
            m.d.sync += [b_order_bad.eq(bad), previous.eq(last_key),
                         seen_any.eq(seen_any | a_valid[0])]
        with m.If(b_order_bad):
            m.d.sync += order_bad.eq(1)

        # Report: line ``line`` (jobs, then the round's), character ``char``, the next
        # character in a register in front of the UART. Each line's character at ``char`` is
        # chosen in two registered steps (``char_ready`` two cycles after ``char`` moves): the
        # character in each of the line's columns of TEXT_COLUMNS at ``char``'s row, then the
        # column. In one step the choice among the fields, their hex digits and the lines was
        # six LUTs deep; the UART takes a character every few thousand cycles.
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
        text_valid, text_char = Signal(), Signal(8)
        picked = [Signal(8, name=f"line{k}_char") for k in range(len(lines))]
        row, column = char // TEXT_COLUMNS, char % TEXT_COLUMNS
        for k, (text, p) in enumerate(zip(lines, picked, strict=True)):
            in_row = [Signal(8, name=f"line{k}_column{c}") for c in range(TEXT_COLUMNS)]
            m.d.sync += [*(r.eq(text.column(c, TEXT_COLUMNS, row)) for c, r in enumerate(in_row)),
                         p.eq(Array(in_row)[column])]
        char_chosen, char_ready = Signal(), Signal()
        m.d.sync += [char_chosen.eq(1), char_ready.eq(char_chosen)]
        m.d.comb += [self.text.valid.eq(text_valid), self.text.payload.eq(text_char)]
        with m.If(self.text.ready):
            m.d.sync += text_valid.eq(0)
        drain = Signal(range(settle + 1))

        # A job starts in state JOB, flagged by a register of its own (set on every way into
        # JOB): its ~230 loads and clears follow that flag, not the state's decode, which
        # was the demo's critical path into them.
        job_start = Signal(init=1)
        m.d.sync += job_start.eq(0)
        with m.If(job_start):
            m.d.sync += [filling.eq(1), fill_tree.eq(0), fill_left.eq(tree_records[0]),
                         fill_addr.eq(0), fill_more.eq(tree_records[0] != 0),
                         in_total.eq(0), in_mix.eq(0), out_total.eq(0), out_mix.eq(0),
                         order_bad.eq(0), seen_any.eq(0), step.eq(0),
                         aw_done.eq(0), w_done.eq(0)]

        m.d.comb += self.running.eq(0)
        with m.FSM():
            with m.State("JOB"):
                m.next = "FILL"
            with m.State("FILL"):
                m.d.sync += select.eq(1)
                with m.If(~filling & ~word_valid):
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
                    with m.If(step == 0):
                        m.d.sync += status_bad.eq(lite.rdata != 0)
                    for index, target in ((1, phase1), (2, phase2)):
                        with m.If(step == index):
                            m.d.sync += target.eq(lite.rdata)
                    with m.If(step == len(reads) - 1):
                        m.d.sync += [step.eq(0), word.eq(0), out_left.eq(total)]
                        m.next = "FAULT" if self.inject == "output" else "CHECK"
            if self.inject == "output":
                # Swap the first two records of the output in memory (job 0 only): address
                # out, the RAM reads, its data register, the swapped word goes to the write.
                with m.State("FAULT"):
                    m.d.sync += [select.eq(1), addr.eq(out_addr), read_tree.eq(out_tree)]
                    with m.If(job != 0):
                        m.next = "CHECK"
                    with m.Elif(step != 3):
                        m.d.sync += step.eq(step + 1)
                    with m.Else():
                        m.d.sync += [w_en.eq(1 << out_tree),
                                     w_data.eq(Cat(r_data[width:2 * width], r_data[:width],
                                                   r_data[2 * width:])),
                                     step.eq(0)]
                        m.next = "CHECK"
            with m.State("CHECK"):
                m.d.sync += select.eq(1)
                with m.If(out_left != 0):
                    taken = Mux(out_left < rate, out_left, rate)
                    m.d.sync += [addr.eq(out_addr), ask.eq(Cat(out_left > i for i in range(rate))),
                                 ask_tree.eq(out_tree), word.eq(word + 1),
                                 out_left.eq(out_left - taken)]
                with m.Else():
                    m.d.sync += drain.eq(0)
                    m.next = "DRAIN"
            with m.State("DRAIN"):
                # The last words through the RAM, the checks and the checksum pipeline.
                m.d.sync += [select.eq(1), drain.eq(drain + 1)]
                with m.If(drain == settle):
                    m.next = "VERDICT"
            with m.State("VERDICT"):
                verdict = Cat(status_bad, order_bad, differ, self.stray)
                m.d.sync += [job_errors[job].eq(verdict), job_p1[job].eq(phase1),
                             job_p2[job].eq(phase2)]
                with m.If(verdict != 0):
                    m.d.sync += [self.failed.eq(1), errors.eq(verdict), round_failed.eq(1)]
                with m.If(job == len(jobs) - 1):
                    # (the first character waits for the fields just written)
                    m.d.sync += [line.eq(0), char.eq(0), char_chosen.eq(0), char_ready.eq(0)]
                    m.next = "REPORT"
                with m.Else():
                    m.d.sync += [job.eq(job + 1), job_start.eq(1)]
                    m.next = "JOB"
            with m.State("REPORT"):
                with m.If(char_ready & (~text_valid | self.text.ready)):
                    m.d.sync += [text_valid.eq(1), char.eq(char + 1), char_chosen.eq(0),
                                 char_ready.eq(0), text_char.eq(Array(picked)[line])]
                    with m.If(char == lengths[line]):
                        m.d.sync += [char.eq(0), line.eq(line + 1)]
                        with m.If(line == len(lines) - 1):
                            m.next = "ROUND"
            with m.State("ROUND"):
                # The round ends as its last character goes to the UART.
                with m.If(~text_valid | self.text.ready):
                    m.d.sync += [job.eq(0), job_start.eq(1), self.rounds.eq(self.rounds + 1),
                                 round_failed.eq(0),
                                 self.passed.eq(~self.failed & ~round_failed)]
                    m.next = "JOB"
        return m
