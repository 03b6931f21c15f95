"""The selector every merge unit shares: which head bundle goes next, and run bookkeeping."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from ..records import BundleLayout, check_at_least

__all__ = ["RunSelector"]


class RunSelector(wiring.Component):
    """Buffer two run streams and choose, each cycle, the head bundle with the smaller first key.

    Ties alternate sides (this keeps skewed data balanced in a tree). Within a run, a side
    whose last bundle has been taken is out of the competition; a new run starts only when
    both sides have finished the current one. The choice depends on both heads, so it waits
    for both unless one side is done.

    Parameters
    ----------
    bundle : BundleLayout
        Layout of the input bundles.
    depth : int
        Depth of each input FIFO, at least 3 (a buffered FIFO needs 3 to move one bundle per
        cycle).

    Members
    -------
    a, b : In(stream.Signature(bundle))
        The two input run streams.
    valid : Out(1)
        A bundle can be taken this cycle.
    chosen : Out(bundle)
        The bundle that goes next; ``pick_a`` tells its side.
    pick_a : Out(1)
    first : Out(1)
        ``chosen`` is the first bundle of a run (on either side).
    completes : Out(1)
        Taking ``chosen`` ends the run on both sides.
    take : In(1)
        Take ``chosen`` (only while ``valid``).
    """

    def __init__(self, bundle, depth):
        if not isinstance(bundle, BundleLayout):
            raise TypeError(f"bundle must be a BundleLayout, not {bundle!r}")
        check_at_least("input_depth", depth, 3)
        self._bundle = bundle
        self._depth = depth
        super().__init__({
            "a": In(stream.Signature(bundle)),
            "b": In(stream.Signature(bundle)),
            "valid": Out(1),
            "chosen": Out(bundle),
            "pick_a": Out(1),
            "first": Out(1),
            "completes": Out(1),
            "take": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        heads = {}
        for side in ("a", "b"):
            port = getattr(self, side)
            queue = fifo.SyncFIFOBuffered(width=self._bundle.size, depth=self._depth)
            m.submodules[f"{side}_fifo"] = queue
            m.d.comb += [
                queue.w_data.eq(port.payload),
                queue.w_en.eq(port.valid),
                port.ready.eq(queue.w_rdy),
            ]
            heads[side] = (queue, data.View(self._bundle, queue.r_data))
        a_fifo, a_head = heads["a"]
        b_fifo, b_head = heads["b"]

        in_run = Signal()  # a bundle of the current run has been taken
        a_done = Signal()  # the current run's last bundle from a has been taken
        b_done = Signal()
        prefer_b = Signal()  # side taken on the next tie of smallest keys

        a_key = a_head.records[0].key
        b_key = b_head.records[0].key
        tie = a_key == b_key
        m.d.comb += [
            self.valid.eq(Mux(a_done, b_fifo.r_rdy,
                              Mux(b_done, a_fifo.r_rdy, a_fifo.r_rdy & b_fifo.r_rdy))),
            self.pick_a.eq(Mux(a_done, 0, Mux(b_done, 1, (a_key < b_key) | tie & ~prefer_b))),
            self.chosen.eq(Mux(self.pick_a, a_head, b_head)),
            self.first.eq(~in_run),
            self.completes.eq(self.chosen.last & Mux(self.pick_a, b_done, a_done)),
            a_fifo.r_en.eq(self.take & self.pick_a),
            b_fifo.r_en.eq(self.take & ~self.pick_a),
        ]
        with m.If(self.take):
            m.d.sync += in_run.eq(~self.completes)
            with m.If(self.completes):
                m.d.sync += [a_done.eq(0), b_done.eq(0)]
            with m.Elif(self.pick_a):
                m.d.sync += a_done.eq(self.chosen.last)
            with m.Else():
                m.d.sync += b_done.eq(self.chosen.last)
            with m.If(~a_done & ~b_done & tie):
                m.d.sync += prefer_b.eq(~prefer_b)
        return m
