"""The root packer: a tree root's records, pads dropped, packed into full memory words."""

from types import SimpleNamespace

from amaranth.hdl import C, Cat, Module, Mux, Shape, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.params import COUNT_BITS
from ..block import Block
from ..queue import RegisteredFlagsFIFO
from ..records import (
    MAX_MERGE_RATE,
    BundleLayout,
    RecordLayout,
    check_power_of_two,
    check_range,
    tree_record,
)

__all__ = ["RootPacker", "packer_command_layout"]

# The remaining count's bits above the low ones count down in chunks of this many bits.
CHUNK_BITS = 16


def packer_command_layout(count_bits):
    """A packer command: the number of real records of one job."""
    return data.StructLayout({"records": count_bits})


def below(value, bound):
    """``value < bound`` for a constant ``bound``, as a table lookup (a comparison would go
    through a carry chain and the LUT level before it)."""
    if len(value) == 0:
        return C(int(bound > 0), 1)
    table = sum(1 << v for v in range(min(bound, 1 << len(value))))
    return C(table, 1 << len(value)).bit_select(value, 1)


class RootPacker(Block):
    """Pack the real records of a tree root's bundles densely into ``rate``-record words.

    In every root bundle the real records come first and pad records (pad flag set, see
    :mod:`topsort_hdl.hardware.records.padding`) last; runs are stored back to back. Output transfer
    ``t`` of a job holds its real records ``t*rate`` to ``t*rate+rate-1`` as plain records (the
    pad flag dropped). Once the job's ``records``-th real record is in, its final partial word
    goes out with the unused slots zero; the packer then takes the rest of that record's run,
    up to the bundle with ``last`` (a merge unit's output run can end in bundles of pads), so
    that a job leaves nothing behind in the tree: a reused tree's root feeds phase 2 next, where
    a stray run would pair with a real one. A job of zero records takes its command and sends
    nothing; no bundle is taken without a job.

    The records wait in a ``2*rate``-record ring of two words: a bundle goes in whole at the
    write position, rotated there (``log2(rate)`` stages of 2:1 multiplexers, no per-slot
    choice of record) into the ``rate`` slots from that position on, pads and records past the
    job's final one included: the next bundle writes over them from just past its last real
    record, as the real records come first (their count is the pads' thermometer code,
    decoded). A word leaves from a word boundary once complete, into a two-entry output queue
    with registered flags (:class:`~topsort_hdl.hardware.queue.RegisteredFlagsFIFO`: ``o.valid`` is
    a flip-flop, and ``o.ready`` reaches only the queue); so bundles go in and words
    come out every cycle without shifting the whole store each cycle. The job's final word is
    made complete by rounding the write position up to the next word boundary when the final
    record goes in; a mask set from the command zeroes its slots past that record on the way
    out. The job's next command is taken only when the packer is idle (the ring empty and the
    run drained), so every job starts on a word boundary.

    The decisions are kept short for the clock: the write position and the word that leaves
    are counted modulo four words, so their difference tells every fill apart without a
    counter of waiting records; a registered flag is set when at least ``4*rate`` of the job's
    records were left a cycle earlier (so at least ``3*rate`` are left now: a bundle takes at
    most ``rate``), and while it is low fewer than ``4*rate`` are left, so only the low
    ``log2(rate)+2`` bits of the remaining count matter: the bundle with the job's final record
    is found by looking that count up in the bundle's pad flags, not by comparing it with a
    decoded count. The count's bits above those count down a chunk at a time, a chunk's borrow
    taken by the next one a cycle later, so that no carry chain is longer than a chunk.

    Parameters
    ----------
    record : RecordLayout
        Layout of the records in memory; ``i`` carries ``tree_record(record)``.
    rate : int
        Records per bundle and per output word, a power of two up to
        :data:`~topsort_hdl.hardware.records.MAX_MERGE_RATE` (a merge unit's widest output).
    count_bits : int
        Width of the command's record count, 1 to 64. Default :data:`.config.COUNT_BITS`.

    Members
    -------
    cmd : In(stream.Signature(packer_command_layout(count_bits)))
    i : In(stream.Signature(BundleLayout(tree_record(record), rate)))
    o : Out(stream.Signature(data.ArrayLayout(record.size, rate)))
    busy : Out(1)
        High from taking a command with records until its final word has been transferred.
    """

    module_tag_format = "root_packer_e{rate}"

    def __init__(self, record, rate, count_bits=COUNT_BITS):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("rate", rate, MAX_MERGE_RATE)
        check_range("count_bits", count_bits, 1, 64)
        self._record = record
        self._rate = rate
        self._count_bits = count_bits
        super().__init__({
            "cmd": In(stream.Signature(packer_command_layout(count_bits))),
            "i": In(stream.Signature(BundleLayout(tree_record(record), rate))),
            "o": Out(stream.Signature(data.ArrayLayout(record.size, rate))),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        rate = self._rate
        width = self._record.size
        pad_bit = width  # the pad flag sits just above a plain record in a tree record
        log_rate = exact_log2(rate)
        slots = 2 * rate
        low_bits = log_rate + 2
        high_bits = max(self._count_bits - low_bits, 0)
        # The figures, and the registers and wires the steps share (each adds its own).
        st = SimpleNamespace(rate=rate, width=width, pad_bit=pad_bit, log_rate=log_rate,
                             slots=slots, low_bits=low_bits, high_bits=high_bits)

        # The real records still to take (while ~done), kept inverted (~x + n is ~(x - n), an
        # addition with no LUT before its carry chain), split in two: the low log2(rate)+2 bits
        # take `reals`, and the carry out of that addition (a borrow of the count) adds one to
        # the (inverted) bits above, in chunks of CHUNK_BITS, a chunk's carry registered into
        # the next one (a borrow comes at most once in four cycles, so carries never queue up).
        # So no carry chain is longer than a chunk: Yosys' ABC maps for delay, and a 40-bit
        # carry chain let it deepen other paths to as long in LUTs (the final-bundle lookup).
        st.low_n = Signal(low_bits)
        st.high_n = [Signal(min(CHUNK_BITS, high_bits - b), name=f"high{b // CHUNK_BITS}_n")
                     for b in range(0, high_bits, CHUNK_BITS)]
        # A chunk's pending carry, from the one below it (all ones wrapped to 0) a cycle ago.
        st.carry_in = [Signal(name=f"carry{k}") for k in range(1, len(st.high_n))]
        st.many = Signal()  # remaining >= 3*rate: this bundle is not the job's last
        # The job's final record is in (or it has none): two registers, so that a command's
        # zero test is loaded on its own (a flip-flop enable) and not chained with the rest.
        st.done = Signal()
        st.empty = Signal(init=1)                   # the job has no records (or no job yet)
        st.ended = Signal()                         # the job's final record is in
        st.tail = Signal()  # the final record is in; its run's last bundle is not
        st.ring = [Signal(width, name=f"slot{s}") for s in range(slots)]
        # Positions count records mod 4*rate: the low log2(rate) bits are the slot within a
        # word, the two above the word number, so that `at` and `rd` tell every fill from 0 to
        # 2*rate apart (a ring position mod 2*rate could not tell empty from full).
        st.at = Signal(log_rate + 2)                # where the next record goes
        st.rd = Signal(2)                           # the word that leaves next
        st.end_word = Signal(2)    # the word after the job's final one: `at` once done
        st.end_mask = Signal(rate)  # the slots of the job's final word that hold records
        # The words leave through a two-entry queue whose flags are flip-flops, in place of an
        # output register (the same latency): the ring sees the writer's READY only as the
        # queue's registered room, so the writer's port choice and buffer room do not run
        # through the ring into the tree's root, blocks a placer spreads apart.
        m.submodules.out = st.out = RegisteredFlagsFIFO(shape=self.o.payload.shape(),
                                                        capacity=2, buffered=False)

        m.d.comb += st.done.eq(st.empty | st.ended)
        self._words_out(m, st)
        self._bundles_in(m, st)
        self._count_down(m, st)
        self._jobs(m, st)
        return m

    def _words_out(self, m, st):
        """Whole words of the ring out through a two-entry queue, the job's last one masked."""
        log_rate, rate = st.log_rate, st.rate
        st.off = st.at[:log_rate]
        st.part = Signal()                          # off != 0, kept in a register
        # Whole words waiting, (at's word - rd) mod 4, told by plain logic (a subtraction
        # would cost a LUT level and a carry chain): 0, 1 or 2.
        x0 = st.at[log_rate] ^ st.rd[0]
        x1 = st.at[log_rate + 1] ^ st.rd[1]
        st.full = x0 | x1                           # the word at rd is complete
        st.over = ~x0 & x1 | x0 & ~(x1 ^ st.rd[0]) & st.part  # more than one word waiting

        # A word leaves when complete. Once the job's final record is in, `at` is rounded up
        # to a word boundary, so the final partial word is complete too; its slots past the
        # final record are zeroed on the way out.
        st.free = st.out.i.ready
        emit = Signal()
        m.d.comb += emit.eq(st.free & st.full)      # (the queue's write)
        final = st.done & ~st.over                        # the leaving word is the job's last
        # (a record-wide Mux, not an AND with a replicated bit: the same logic, which Amaranth
        # would otherwise write out bit by bit, a tenth of the u280 kernel's Verilog)
        leaving = Cat(Mux(st.end_mask[j] | ~final, Mux(st.rd[0], st.ring[rate + j], st.ring[j]), 0)
                      for j in range(rate))
        with m.If(emit):
            m.d.sync += st.rd.eq(st.rd + 1)
        m.d.comb += [st.out.i.payload.eq(leaving), st.out.i.valid.eq(st.full)]
        wiring.connect(m, st.out.o, wiring.flipped(self.o))

    def _bundles_in(self, m, st):
        """Each bundle's real records into the ring at ``at``, rotated there."""
        log_rate, pad_bit, rate, slots, width = st.log_rate, st.pad_bit, st.rate, st.slots, st.width
        # A bundle goes in when there is a free word for it (at most one word waiting once
        # the word at rd has left). Its real records come first, so their count is a
        # thermometer code: decoded, not summed.
        # Each record's bits sliced from the payload signal itself, not through the records'
        # field: Amaranth copies an expression for every use of it before it builds the
        # netlist, and each copy of a slice of that 2,080-bit field costs its whole width (the
        # rotation below uses each record 243 times: most of the u280 packer's conversion).
        payload = Value.cast(self.i.payload)
        field = self.i.payload.shape()["records"]
        first, stride = field.offset, Shape.cast(field.shape.elem_shape).width
        bundle = [payload[first + j * stride:first + (j + 1) * stride] for j in range(rate)]
        st.real = [~bundle[j][pad_bit] for j in range(rate)]
        st.reals = Signal(log_rate + 1)
        for b in range(log_rate):
            step = 1 << b
            m.d.comb += st.reals[b].eq(
                Cat(st.real[lo - 1] & ~st.real[lo + step - 1]
                    for lo in range(step, rate, 2 * step)).any())
        m.d.comb += st.reals[log_rate].eq(st.real[rate - 1])
        # (tail implies done: a bundle of the job's records goes in on `fresh`, without the
        # i.ready net, so that the slot enables do not wait for it.)
        go = Signal()
        st.fresh = Signal()
        st.take = Signal()
        m.d.comb += [
            go.eq(~st.done & (~st.over | st.free)),
            st.fresh.eq(self.i.valid & go),
            self.i.ready.eq(go | st.tail),
            st.take.eq(self.i.valid & self.i.ready),
        ]

        # The whole bundle is written at `at`, rotated there (log2(rate) stages of 2:1
        # multiplexers); the slots past its real records take pads or the records past the
        # job's final one, which the next bundle overwrites or the final word's mask zeroes.
        rotated = Cat(bundle[j][:width] for j in range(rate))
        for bit in range(log_rate):
            rotated = Mux(st.off[bit], rotated.rotate_left((1 << bit) * width), rotated)
        rotated_records = Signal(rate * width)
        m.d.comb += rotated_records.eq(rotated)
        # The `rate` slots from `at` on: the rest of its word and the start of the other.
        here = st.at[log_rate]
        for s in range(slots):
            word, j = s // rate, s % rate
            window = Mux(below(st.off, j + 1), here == word, here != word)
            with m.If(st.fresh & window):
                m.d.sync += st.ring[s].eq(rotated_records.word_select(j, width))

    def _count_down(self, m, st):
        """The records still to take, counted down in chunks; the bundle with the job's
        final record."""
        log_rate, low_bits, rate = st.log_rate, st.low_bits, st.rate
        # The bundle with the job's final record: while `many` is low, remaining < 4*rate.
        low = ~st.low_n                                # remaining, when ~many
        # reals >= low, looked up in the pads (a thermometer) rather than compared with the
        # decoded count: the low-th record is real, or low is 0. Written out by the two bits
        # above a word's slots (low <= rate: the word's slots, or the bundle's last record),
        # not as one lookup of 4*rate bits: the u280's wide packer was a LUT level deeper.
        slot, above = low[:log_rate], low[log_rate:]
        head = Cat(C(1, 1), *st.real[:rate - 1])     # the lookup for low < rate
        in_word = head.bit_select(slot, 1) if log_rate else head[0]
        last_in = Signal()
        m.d.comb += last_in.eq(~st.many & Mux(above == 0, in_word,
                                           (above == 1) & (slot == 0) & st.real[rate - 1]))
        # remaining >= 4*rate now: at least 3*rate next cycle (a bundle takes at most rate).
        # A pending carry is no matter: the chunk below it has just wrapped to 0 (~all ones).
        m.d.sync += st.many.eq((~Cat(*st.high_n)).any())
        low_sum = Signal(low_bits + 1)
        m.d.comb += low_sum.eq(st.low_n + st.reals)
        carries = [st.fresh & low_sum[low_bits], *st.carry_in]
        for k, chunk in enumerate(st.high_n):
            with m.If(carries[k]):
                m.d.sync += chunk.eq(chunk + 1)
            if k + 1 < len(st.high_n):
                m.d.sync += st.carry_in[k].eq(carries[k] & chunk.all())
        next_at = Signal.like(st.at)
        m.d.comb += next_at.eq(st.at + st.reals)
        with m.If(st.fresh):
            m.d.sync += [
                st.low_n.eq(low_sum[:low_bits]),
                st.at.eq(Mux(last_in, Cat(C(0, log_rate), st.end_word), next_at)),
                st.part.eq(~last_in & next_at[:log_rate].any()),
                st.ended.eq(last_in),
            ]
        with m.If(st.take):
            m.d.sync += st.tail.eq(~self.i.payload.last & (st.done | last_in))

    def _jobs(self, m, st):
        """A job's command: its record count loaded, once the previous job has left."""
        log_rate, low_bits, rate = st.log_rate, st.low_bits, st.rate
        idle = Signal()
        m.d.comb += [
            idle.eq(st.done & ~st.tail & ~st.full),
            self.cmd.ready.eq(idle),
            self.busy.eq(~idle | st.out.o.valid),
        ]
        # A job starts on the word at rd, where `at` already is (the ring is empty).
        records = Cat(self.cmd.payload.records, C(0, log_rate + 2))
        in_last = records[:log_rate]               # records in the final word, 0 if whole
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                st.low_n.eq(~records[:low_bits]),
                *(chunk.eq(~records[low_bits + k * CHUNK_BITS:][:len(chunk)])
                  for k, chunk in enumerate(st.high_n)),
                *(c.eq(0) for c in st.carry_in),
                st.many.eq(records[log_rate + 2:].any()),
                st.empty.eq(self.cmd.payload.records == 0),
                st.ended.eq(0),
                st.end_word.eq(st.rd + records[log_rate:log_rate + 2] + in_last.any()),
                st.end_mask.eq(Cat(~below(in_last, j + 1) | ~in_last.any() for j in range(rate))),
            ]
