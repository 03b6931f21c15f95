"""The root packer: a tree root's records, pads dropped, packed into full memory words."""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..records import BundleLayout, RecordLayout, check_power_of_two, check_range, tree_record

__all__ = ["RootPacker", "packer_command_layout"]

MAX_RATE = 64


def packer_command_layout(count_bits):
    """A packer command: the number of real records of one job."""
    return data.StructLayout({"records": count_bits})


class RootPacker(wiring.Component):
    """Pack the real records of a tree root's bundles densely into ``rate``-record words.

    In every root bundle the real records come first and pad records (pad flag set, see
    :mod:`topsort_hdl.records.padding`) last; runs are stored back to back. Output transfer
    ``t`` of a job holds its real records ``t*rate`` to ``t*rate+rate-1`` as plain records (the
    pad flag dropped). Once the job's ``records``-th real record is in, its final partial word
    goes out with the unused slots zero; the packer then takes the rest of that record's run,
    up to the bundle with ``last`` (a merge unit's output run can end in bundles of pads), so
    that a job leaves nothing behind in the tree: a reused tree's root feeds phase 2 next, where
    a stray run would pair with a real one. A job of zero records takes its command and sends
    nothing; no bundle is taken without a job.

    The records wait in a ``2*rate``-record ring of two words: a bundle's records go in at the
    write position, rotated there as a whole (``log2(rate)`` stages of 2:1 multiplexers, no
    per-slot choice of record), and a word leaves from a word boundary; so bundles go in and
    words come out every cycle without shifting the whole store each cycle.

    Parameters
    ----------
    record : RecordLayout
        Layout of the records in memory; ``i`` carries ``tree_record(record)``.
    rate : int
        Records per bundle and per output word, a power of two from 1 to 64.
    count_bits : int
        Width of the command's record count, 1 to 64. Default 40.

    Members
    -------
    cmd : In(stream.Signature(packer_command_layout(count_bits)))
    i : In(stream.Signature(BundleLayout(tree_record(record), rate)))
    o : Out(stream.Signature(data.ArrayLayout(record.size, rate)))
    busy : Out(1)
        High from taking a command with records until its final word has been transferred.
    """

    def __init__(self, record, rate, count_bits=40):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("rate", rate, MAX_RATE)
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
        slots = 2 * rate

        remaining = Signal(self._count_bits)        # real records still to take
        ring = [Signal(width, name=f"slot{s}") for s in range(slots)]
        word = Signal()                              # the word that leaves next (0 or 1)
        fill = Signal(range(slots + 1))              # records waiting, from that word on
        at = Signal(range(slots))                    # where the next record goes
        out_valid = Signal()
        out_data = Signal(rate * width)

        # The word leaving the ring this cycle, if any: whole, or the job's final records with
        # the slots past them zero.
        free = ~out_valid | self.o.ready
        emit = Signal()
        kept = Signal.like(fill)                    # fill once the word has left
        m.d.comb += [
            emit.eq(free & ((fill >= rate) | (remaining == 0) & (fill != 0))),
            kept.eq(Mux(emit, Mux(fill >= rate, fill - rate, 0), fill)),
        ]
        leaving = Cat(Mux(fill > j, Mux(word, ring[rate + j], ring[j]), 0) for j in range(rate))

        # The bundle entering it: its real records, at most the job's remainder of them.
        bundle = self.i.payload.records
        reals = Signal(range(rate + 1))
        count = Signal(range(rate + 1))
        m.d.comb += reals.eq(sum((~bundle[j].as_value()[pad_bit]).as_unsigned()
                                 for j in range(rate)))
        m.d.comb += count.eq(Mux(remaining < reals, remaining, reals))
        take = Signal()
        tail = Signal()     # the final record is in; its run's last bundle is not
        m.d.comb += [
            self.i.ready.eq(((remaining != 0) | tail) & (kept <= rate)),
            take.eq(self.i.valid & self.i.ready),
        ]
        with m.If(take):
            m.d.sync += tail.eq(~self.i.payload.last & (remaining == count))

        # Where the records go once the word has left: a partial final word leaves the rest of
        # its slots unused, so the next job starts on the other word.
        start = Signal.like(at)
        m.d.comb += start.eq(Mux(emit & (fill < rate), Mux(word, 0, rate), at))
        # Record k of the bundle to slot start + k: rotate the bundle by start mod rate, then
        # slot s takes rotated record s mod rate when it is among the next count slots.
        rotated = Cat(bundle[j].as_value()[:width] for j in range(rate))
        for bit in range(exact_log2(rate)):
            step = (1 << bit) * width
            rotated = Mux(start[bit], rotated.rotate_left(step), rotated)
        rotated_records = Signal(rate * width)
        m.d.comb += rotated_records.eq(rotated)
        for s in range(slots):
            offset = (C(s, len(at) + 1) - start)[:len(at)]      # (s - start) mod slots
            with m.If(take & (offset < count)):
                m.d.sync += ring[s].eq(rotated_records.word_select(s % rate, width))
        with m.If(take):
            m.d.sync += [
                at.eq(start + count),
                fill.eq(kept + count),
                remaining.eq(remaining - count),
            ]
        with m.Else():
            m.d.sync += [at.eq(start), fill.eq(kept)]

        with m.If(self.o.ready):
            m.d.sync += out_valid.eq(0)
        with m.If(emit):
            m.d.sync += [out_data.eq(leaving), out_valid.eq(1), word.eq(~word)]
        m.d.comb += [
            self.o.valid.eq(out_valid),
            self.o.payload.eq(out_data),
        ]

        idle = Signal()
        m.d.comb += [
            idle.eq((remaining == 0) & ~tail & (fill == 0)),
            self.cmd.ready.eq(idle),
            self.busy.eq(~idle | out_valid),
        ]
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += remaining.eq(self.cmd.payload.records)
        return m
