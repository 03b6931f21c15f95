"""The root packer: a tree root's records, pads dropped, packed into full memory words."""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
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

        # The real records still to take (while ~done), kept inverted (~x + n is ~(x - n), an
        # addition with no LUT before its carry chain), split in two: the low log2(rate)+2 bits
        # take `reals`, and the carry out of that addition (a borrow of the count) adds one to
        # the (inverted) bits above, in chunks of CHUNK_BITS, a chunk's carry registered into
        # the next one (a borrow comes at most once in four cycles, so carries never queue up).
        # So no carry chain is longer than a chunk: Yosys' ABC maps for delay, and a 40-bit
        # carry chain let it deepen other paths to as long in LUTs (the final-bundle lookup).
        low_bits = log_rate + 2
        low_n = Signal(low_bits)
        high_bits = max(self._count_bits - low_bits, 0)
        high_n = [Signal(min(CHUNK_BITS, high_bits - b), name=f"high{b // CHUNK_BITS}_n")
                  for b in range(0, high_bits, CHUNK_BITS)]
        # A chunk's pending carry, from the one below it (all ones wrapped to 0) a cycle ago.
        carry_in = [Signal(name=f"carry{k}") for k in range(1, len(high_n))]
        many = Signal()     # remaining >= 3*rate: this bundle is not the job's last
        # The job's final record is in (or it has none): two registers, so that a command's
        # zero test is loaded on its own (a flip-flop enable) and not chained with the rest.
        done = Signal()
        empty = Signal(init=1)                      # the job has no records (or no job yet)
        ended = Signal()                            # the job's final record is in
        tail = Signal()     # the final record is in; its run's last bundle is not
        ring = [Signal(width, name=f"slot{s}") for s in range(slots)]
        # Positions count records mod 4*rate: the low log2(rate) bits are the slot within a
        # word, the two above the word number, so that `at` and `rd` tell every fill from 0 to
        # 2*rate apart (a ring position mod 2*rate could not tell empty from full).
        at = Signal(log_rate + 2)                   # where the next record goes
        rd = Signal(2)                              # the word that leaves next
        end_word = Signal(2)    # the word after the job's final one: `at` once done
        end_mask = Signal(rate)  # the slots of the job's final word that hold records
        # The words leave through a two-entry queue whose flags are flip-flops, in place of an
        # output register (the same latency): the ring sees the writer's READY only as the
        # queue's registered room, so the writer's port choice and buffer room do not run
        # through the ring into the tree's root, blocks a placer spreads apart.
        m.submodules.out = out = RegisteredFlagsFIFO(width=rate * width, capacity=2,
                                                     buffered=False)

        m.d.comb += done.eq(empty | ended)
        off = at[:log_rate]
        part = Signal()                             # off != 0, kept in a register
        # Whole words waiting, (at's word - rd) mod 4, told by plain logic (a subtraction
        # would cost a LUT level and a carry chain): 0, 1 or 2.
        x0 = at[log_rate] ^ rd[0]
        x1 = at[log_rate + 1] ^ rd[1]
        full = x0 | x1                              # the word at rd is complete
        over = ~x0 & x1 | x0 & ~(x1 ^ rd[0]) & part  # more than one word waiting

        # A word leaves when complete. Once the job's final record is in, `at` is rounded up
        # to a word boundary, so the final partial word is complete too; its slots past the
        # final record are zeroed on the way out.
        free = out.w_rdy
        emit = Signal()
        m.d.comb += emit.eq(free & full)
        final = done & ~over                        # the leaving word is the job's last
        # (a record-wide Mux, not an AND with a replicated bit: the same logic, which Amaranth
        # would otherwise write out bit by bit, a tenth of the u280 kernel's Verilog)
        leaving = Cat(Mux(end_mask[j] | ~final, Mux(rd[0], ring[rate + j], ring[j]), 0)
                      for j in range(rate))
        with m.If(emit):
            m.d.sync += rd.eq(rd + 1)
        m.d.comb += [
            out.w_data.eq(leaving),
            out.w_en.eq(emit),
            self.o.valid.eq(out.r_rdy),
            self.o.payload.eq(out.r_data),
            out.r_en.eq(out.r_rdy & self.o.ready),
        ]

        # A bundle goes in when there is a free word for it (at most one word waiting once
        # the word at rd has left). Its real records come first, so their count is a
        # thermometer code: decoded, not summed.
        bundle = self.i.payload.records
        real = [~bundle[j].as_value()[pad_bit] for j in range(rate)]
        reals = Signal(log_rate + 1)
        for b in range(log_rate):
            step = 1 << b
            m.d.comb += reals[b].eq(
                Cat(real[lo - 1] & ~real[lo + step - 1]
                    for lo in range(step, rate, 2 * step)).any())
        m.d.comb += reals[log_rate].eq(real[rate - 1])
        # (tail implies done: a bundle of the job's records goes in on `fresh`, without the
        # i.ready net, so that the slot enables do not wait for it.)
        go = Signal()
        fresh = Signal()
        take = Signal()
        m.d.comb += [
            go.eq(~done & (~over | free)),
            fresh.eq(self.i.valid & go),
            self.i.ready.eq(go | tail),
            take.eq(self.i.valid & self.i.ready),
        ]

        # The whole bundle is written at `at`, rotated there (log2(rate) stages of 2:1
        # multiplexers); the slots past its real records take pads or the records past the
        # job's final one, which the next bundle overwrites or the final word's mask zeroes.
        rotated = Cat(bundle[j].as_value()[:width] for j in range(rate))
        for bit in range(log_rate):
            rotated = Mux(off[bit], rotated.rotate_left((1 << bit) * width), rotated)
        rotated_records = Signal(rate * width)
        m.d.comb += rotated_records.eq(rotated)
        # The `rate` slots from `at` on: the rest of its word and the start of the other.
        here = at[log_rate]
        for s in range(slots):
            word, j = s // rate, s % rate
            window = Mux(below(off, j + 1), here == word, here != word)
            with m.If(fresh & window):
                m.d.sync += ring[s].eq(rotated_records.word_select(j, width))

        # The bundle with the job's final record: while `many` is low, remaining < 4*rate.
        low = ~low_n                                # remaining, when ~many
        # reals >= low, looked up in the pads (a thermometer) rather than compared with the
        # decoded count: the low-th record is real, or low is 0. Written out by the two bits
        # above a word's slots (low <= rate: the word's slots, or the bundle's last record),
        # not as one lookup of 4*rate bits: the u280's wide packer was a LUT level deeper.
        slot, above = low[:log_rate], low[log_rate:]
        head = Cat(C(1, 1), *real[:rate - 1])     # the lookup for low < rate
        in_word = head.bit_select(slot, 1) if log_rate else head[0]
        last_in = Signal()
        m.d.comb += last_in.eq(~many & Mux(above == 0, in_word,
                                           (above == 1) & (slot == 0) & real[rate - 1]))
        # remaining >= 4*rate now: at least 3*rate next cycle (a bundle takes at most rate).
        # A pending carry is no matter: the chunk below it has just wrapped to 0 (~all ones).
        m.d.sync += many.eq((~Cat(*high_n)).any())
        low_sum = Signal(low_bits + 1)
        m.d.comb += low_sum.eq(low_n + reals)
        carries = [fresh & low_sum[low_bits], *carry_in]
        for k, chunk in enumerate(high_n):
            with m.If(carries[k]):
                m.d.sync += chunk.eq(chunk + 1)
            if k + 1 < len(high_n):
                m.d.sync += carry_in[k].eq(carries[k] & chunk.all())
        next_at = Signal.like(at)
        m.d.comb += next_at.eq(at + reals)
        with m.If(fresh):
            m.d.sync += [
                low_n.eq(low_sum[:low_bits]),
                at.eq(Mux(last_in, Cat(C(0, log_rate), end_word), next_at)),
                part.eq(~last_in & next_at[:log_rate].any()),
                ended.eq(last_in),
            ]
        with m.If(take):
            m.d.sync += tail.eq(~self.i.payload.last & (done | last_in))

        idle = Signal()
        m.d.comb += [
            idle.eq(done & ~tail & ~full),
            self.cmd.ready.eq(idle),
            self.busy.eq(~idle | out.r_rdy),
        ]
        # A job starts on the word at rd, where `at` already is (the ring is empty).
        records = Cat(self.cmd.payload.records, C(0, log_rate + 2))
        in_last = records[:log_rate]               # records in the final word, 0 if whole
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                low_n.eq(~records[:low_bits]),
                *(chunk.eq(~records[low_bits + k * CHUNK_BITS:][:len(chunk)])
                  for k, chunk in enumerate(high_n)),
                *(c.eq(0) for c in carry_in),
                many.eq(records[log_rate + 2:].any()),
                empty.eq(self.cmd.payload.records == 0),
                ended.eq(0),
                end_word.eq(rd + records[log_rate:log_rate + 2] + in_last.any()),
                end_mask.eq(Cat(~below(in_last, j + 1) | ~in_last.any() for j in range(rate))),
            ]
        return m
