"""The root packer: a tree root's records, pads dropped, packed into full memory words."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

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

    A ``2*rate``-record accumulator takes one bundle per cycle at its fill level and gives one
    word per cycle from its bottom, so bundles go in and words come out every cycle.

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

        remaining = Signal(self._count_bits)        # real records still to take
        acc = Signal(2 * rate * width)               # records [0, fill) valid, the rest zero
        fill = Signal(range(2 * rate + 1))
        out_valid = Signal()
        out_data = Signal(rate * width)

        # The word leaving the accumulator this cycle, if any.
        free = ~out_valid | self.o.ready
        emit = Signal()
        kept = Signal.like(fill)                    # fill once the word has left
        rest = Signal.like(acc)
        m.d.comb += [
            emit.eq(free & ((fill >= rate) | (remaining == 0) & (fill != 0))),
            kept.eq(Mux(emit, Mux(fill >= rate, fill - rate, 0), fill)),
            rest.eq(Mux(emit, acc >> (rate * width), acc)),
        ]

        # The bundle entering it: its real records, at most the job's remainder of them.
        bundle = self.i.payload.records
        reals = Signal(range(rate + 1))
        count = Signal(range(rate + 1))
        masked = Signal(rate * width)
        m.d.comb += reals.eq(sum((~bundle[j].as_value()[pad_bit]).as_unsigned()
                                 for j in range(rate)))
        m.d.comb += count.eq(Mux(remaining < reals, remaining, reals))
        m.d.comb += masked.eq(Cat(Mux(j < count, bundle[j].as_value()[:width], 0)
                                  for j in range(rate)))
        take = Signal()
        tail = Signal()     # the final record is in; its run's last bundle is not
        m.d.comb += [
            self.i.ready.eq(((remaining != 0) | tail) & (kept <= rate)),
            take.eq(self.i.valid & self.i.ready),
        ]
        with m.If(take):
            m.d.sync += tail.eq(~self.i.payload.last & (remaining == count))

        placed = Signal.like(acc)
        with m.Switch(kept):
            for level in range(rate + 1):
                with m.Case(level):
                    m.d.comb += placed.eq(masked << (level * width))
        with m.If(take):
            m.d.sync += [
                acc.eq(rest | placed),
                fill.eq(kept + count),
                remaining.eq(remaining - count),
            ]
        with m.Else():
            m.d.sync += [acc.eq(rest), fill.eq(kept)]

        with m.If(self.o.ready):
            m.d.sync += out_valid.eq(0)
        with m.If(emit):
            m.d.sync += [out_data.eq(acc[:rate * width]), out_valid.eq(1)]
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
