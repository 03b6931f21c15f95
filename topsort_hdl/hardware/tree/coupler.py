"""The 2:1 coupler between tree levels."""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from ..block import Block
from ..records import BundleLayout, RecordLayout, check_power_of_two, pad_key

__all__ = ["Coupler"]


class Coupler(Block):
    """Pack two consecutive ``rate``-record bundles of a run into one of ``2 * rate``.

    A run with an odd number of bundles ends with a bundle whose upper half is pad records
    (see :mod:`.records.padding`); ``last`` moves to the packed bundle. One input
    bundle is taken every cycle while the output drains.

    Parameters
    ----------
    record : RecordLayout
        The tree record layout (its top key bit is the pad flag).
    rate : int
        Records per input bundle, a power of two.

    Members
    -------
    i : In(stream.Signature(BundleLayout(record, rate)))
    o : Out(stream.Signature(BundleLayout(record, 2 * rate)))
    """

    module_tag_format = "coupler_e{rate}"

    def __init__(self, record, rate):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("rate", rate)
        self._record = record
        self._rate = rate
        super().__init__({
            "i": In(stream.Signature(BundleLayout(record, rate))),
            "o": Out(stream.Signature(BundleLayout(record, 2 * rate))),
        })

    def elaborate(self, platform):
        m = Module()
        rate = self._rate
        held = Signal(data.ArrayLayout(self._record, rate))
        holding = Signal()  # held is the first half of the next output bundle
        pad = self._record.pack(pad_key(self._record), 0)
        pads = Const(sum(pad << (i * self._record.size) for i in range(rate)),
                     rate * self._record.size)
        free = ~self.o.valid | self.o.ready
        with m.If(self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        # A first half that does not end its run only needs room in `held`.
        m.d.comb += self.i.ready.eq(free | ~holding & ~self.i.payload.last)
        with m.If(self.i.valid & self.i.ready):
            with m.If(holding):
                m.d.sync += [
                    self.o.payload.records.eq(Cat(held, self.i.payload.records)),
                    self.o.payload.last.eq(self.i.payload.last),
                    self.o.valid.eq(1),
                    holding.eq(0),
                ]
            with m.Elif(self.i.payload.last):
                m.d.sync += [
                    self.o.payload.records.eq(Cat(self.i.payload.records, pads)),
                    self.o.payload.last.eq(1),
                    self.o.valid.eq(1),
                ]
            with m.Else():
                m.d.sync += [held.eq(self.i.payload.records), holding.eq(1)]
        return m
