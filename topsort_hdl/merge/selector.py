"""The selector every merge unit shares: which head bundle goes next, and run bookkeeping."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..records import BundleLayout, check_at_least
from .cas import less_than
from .lanes import LaneQueue

__all__ = ["RunSelector"]


class RunSelector(wiring.Component):
    """Buffer two run streams and choose, each cycle, the head bundle with the smaller first key.

    Ties alternate sides (this keeps skewed data balanced in a tree). Within a run, a side
    whose last bundle has been taken is out of the competition; a new run starts only when
    both sides have finished the current one. The choice depends on both heads, so it waits
    for both unless one side is done.

    The choice is the unit's only loop, and it is cut in two. Each side's head bundle sits in
    a register in front of its FIFO, and the comparison of the two heads is itself a register,
    computed a cycle ahead: of the three pairs the next cycle can hold (the heads as they are,
    or one of them replaced by the bundle waiting at its FIFO's output), the one the current
    choice leads to is kept. So the key comparison ends at a flip-flop, and the choice that
    moves whole bundles starts from flip-flops and a few bits of state. A head that arrives
    while the other side's head changes too waits one cycle for its comparison.

    Parameters
    ----------
    bundle : BundleLayout
        Layout of the input bundles.
    depth : int
        Depth of each input FIFO, at least 3 (a buffered FIFO needs 3 to move one bundle per
        cycle); the head register holds one more bundle.

    Members
    -------
    a, b : In(stream.Signature(bundle))
        The two input run streams.
    valid : Out(1)
        A bundle can be taken this cycle.
    chosen : Out(bundle)
        The bundle that goes next; ``pick_a`` tells its side.
    a_head, b_head : Out(bundle)
        The head bundle of each side (registers): ``chosen`` is one of them.
    a_popped, b_popped : Out(bundle.count)
        Per record lane, that side's head is taken this cycle (``take`` on that side): one
        copy per lane, so a consumer that loads a record's bits with its lane's copy keeps
        every enable local to one record (see :class:`.lanes.LaneQueue`).
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
            "a_head": Out(bundle),
            "b_head": Out(bundle),
            "a_popped": Out(bundle.count),
            "b_popped": Out(bundle.count),
            "pick_a": Out(1),
            "first": Out(1),
            "completes": Out(1),
            "take": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        lanes = self._bundle.count
        queues = {}
        for side in ("a", "b"):
            port = getattr(self, side)
            queue = LaneQueue(width=self._bundle.size, depth=self._depth, lanes=lanes)
            m.submodules[f"{side}_queue"] = queue
            m.d.comb += [
                queue.w_data.eq(port.payload),
                queue.w_en.eq(port.valid),
                port.ready.eq(queue.w_rdy),
                getattr(self, f"{side}_head").eq(queue.head),
                getattr(self, f"{side}_popped").eq(queue.popped),
            ]
            queues[side] = queue
        a_queue, b_queue = queues["a"], queues["b"]
        a_head, b_head = self.a_head, self.b_head
        a_next = data.View(self._bundle, a_queue.next)
        b_next = data.View(self._bundle, b_queue.next)
        a_loaded, b_loaded = a_queue.head_valid, b_queue.head_valid

        in_run = Signal()  # a bundle of the current run has been taken
        a_done = Signal()  # the current run's last bundle from a has been taken
        b_done = Signal()
        prefer_b = Signal()  # side taken on the next tie of smallest keys
        # The comparison of the two heads' smallest keys, a register: `known` when both heads
        # are loaded and `less`/`tie` describe them.
        known = Signal()
        less = Signal()
        tie = Signal()

        m.d.comb += [
            self.valid.eq(Mux(a_done, b_loaded,
                              Mux(b_done, a_loaded, a_loaded & b_loaded & known))),
            self.pick_a.eq(Mux(a_done, 0, Mux(b_done, 1, less | tie & ~prefer_b))),
            self.chosen.eq(Mux(self.pick_a, a_head, b_head)),
            self.first.eq(~in_run),
            self.completes.eq(Mux(self.pick_a, a_head.last & b_done, b_head.last & a_done)),
            a_queue.pop.eq(self.take & self.pick_a),
            b_queue.pop.eq(self.take & ~self.pick_a),
        ]
        with m.If(self.take):
            m.d.sync += in_run.eq(~self.completes)
            with m.If(self.completes):
                m.d.sync += [a_done.eq(0), b_done.eq(0)]
            with m.Elif(self.pick_a):
                m.d.sync += a_done.eq(a_head.last)
            with m.Else():
                m.d.sync += b_done.eq(b_head.last)
            with m.If(~a_done & ~b_done & tie):
                m.d.sync += prefer_b.eq(~prefer_b)

        # The next cycle's comparison, from registers only: a head moves (to the entry behind
        # it) when it is taken or empty.
        def compare(a, b):
            a_key, b_key = a.records[0].key, b.records[0].key
            return less_than(a_key, b_key), a_key == b_key

        a_moves = a_queue.pop | ~a_loaded
        b_moves = b_queue.pop | ~b_loaded
        pairs = {"heads": compare(a_head, b_head), "a_next": compare(a_next, b_head),
                 "b_next": compare(a_head, b_next)}
        with m.If(a_moves & b_moves):
            m.d.sync += known.eq(0)
        with m.Elif(a_moves):
            m.d.sync += [known.eq(a_queue.next_valid & b_loaded),
                         less.eq(pairs["a_next"][0]), tie.eq(pairs["a_next"][1])]
        with m.Elif(b_moves):
            m.d.sync += [known.eq(a_loaded & b_queue.next_valid),
                         less.eq(pairs["b_next"][0]), tie.eq(pairs["b_next"][1])]
        with m.Else():
            m.d.sync += [known.eq(1), less.eq(pairs["heads"][0]), tie.eq(pairs["heads"][1])]
        return m
