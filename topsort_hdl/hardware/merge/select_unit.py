"""The rate-1 merge unit: the selector alone, no merge network."""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..block import Block
from ..records import BundleLayout, RecordLayout, check_at_least
from .credit import CreditCounter
from .lanes import LaneFIFO
from .run_selector import DEFAULT_INPUT_DEPTH, MIN_FIFO_DEPTH, RunSelector

__all__ = ["SelectMergeUnit"]

# Output FIFO entries: the records in flight between a take and their leaving at full rate.
OUTPUT_DEPTH = 4


class SelectMergeUnit(Block):
    """Merge two streams of sorted runs at one record per cycle.

    With one-record bundles the record the selector takes is the next one of the merged run,
    so no network, dummy or flush is needed. It emits exactly what an E = 1
    :class:`~topsort_hdl.hardware.merge.MmsMergeUnit` emits (ties alternate sides the same way) at a
    fraction of the cost.

    Parameters
    ----------
    record : RecordLayout
        Record layout.
    input_depth : int
        Depth of each input FIFO, at least :data:`.selector.MIN_FIFO_DEPTH`; default
        :data:`.selector.DEFAULT_INPUT_DEPTH`.

    Members
    -------
    a, b : In(stream.Signature(BundleLayout(record, 1)))
        Input runs, ``last`` on each run's final record.
    o : Out(stream.Signature(BundleLayout(record, 1)))
        Merged runs, ``last`` on each merged run's final record.
    """

    module_tag_format = "select_k{record.key_bits}_v{record.value_bits}"

    def __init__(self, record, *, input_depth=DEFAULT_INPUT_DEPTH):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_at_least("input_depth", input_depth, MIN_FIFO_DEPTH)
        self._bundle = BundleLayout(record, 1)
        self._input_depth = input_depth
        super().__init__({
            "a": In(stream.Signature(self._bundle)),
            "b": In(stream.Signature(self._bundle)),
            "o": Out(stream.Signature(self._bundle)),
        })

    @property
    def rate(self):
        return 1

    @property
    def bundle(self):
        return self._bundle

    def elaborate(self, platform):
        m = Module()
        m.submodules.selector = selector = RunSelector(self._bundle, self._input_depth)
        wiring.connect(m, wiring.flipped(self.a), selector.a)
        wiring.connect(m, wiring.flipped(self.b), selector.b)
        # The selector decides a cycle ahead, so the output is a small FIFO with credit
        # counting: a take is granted only if the FIFO has room whatever leaves this cycle.
        m.submodules.credit = credit = CreditCounter(OUTPUT_DEPTH)
        m.submodules.o_fifo = o_fifo = LaneFIFO(shape=self._bundle, depth=OUTPUT_DEPTH, lanes=1)
        wiring.connect(m, o_fifo.o, wiring.flipped(self.o))
        m.d.comb += [
            o_fifo.i.payload.records.eq(selector.chosen.records),
            o_fifo.i.payload.last.eq(selector.completes),
            o_fifo.i.valid.eq(selector.take),
            credit.add.eq(selector.take),
            credit.sub.eq(self.o.valid & self.o.ready),
            selector.accept_next.eq(credit.room_next),
        ]
        return m
