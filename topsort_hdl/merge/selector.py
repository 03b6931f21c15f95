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

    The choice is the unit's only loop, and every part of it that fans out is a register.
    Each side's head bundle sits in a register in front of its FIFO, and the decision itself
    (take a bundle this cycle, and from which side) is a register, made a cycle ahead: of the
    three pairs of heads the next cycle can hold (the heads as they are, or one of them
    replaced by the bundle waiting at its FIFO's output), the one this cycle's decision leads
    to is compared and decided on. Each record lane has its own copy of the decision, built on
    that lane's own state, so the enables of a lane's head and FIFO start from a flip-flop next
    to them. A head that arrives while the other side's head changes too waits one cycle.

    The consumer grants the next cycle's take through ``accept_next``, computed from its own
    registers and the selector's registered outputs (``first_next`` among them): for example
    from a :class:`.credit.CreditCounter` of its output buffer.

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
        A bundle could be taken this cycle (a register).
    take : Out(1)
        ``chosen`` is taken this cycle (a register: ``valid`` and granted a cycle ahead).
    chosen : Out(bundle)
        The bundle that goes next; ``pick_a`` tells its side.
    a_head, b_head : Out(bundle)
        The head bundle of each side (registers): ``chosen`` is one of them.
    a_popped, b_popped : Out(bundle.count)
        Per record lane, that side's head is taken this cycle: one register per lane, so a
        consumer that loads a record's bits with its lane's copy keeps every enable local to
        one record.
    pick_a : Out(1)
        ``chosen`` is side a's head (a register).
    first : Out(1)
        ``chosen`` is the first bundle of a run (on either side).
    completes : Out(1)
        Taking ``chosen`` ends the run on both sides.
    first_next : Out(1)
        The bundle chosen in the next cycle will be the first of a run.
    accept_next : In(1)
        The consumer grants a take in the next cycle. Must not depend on ``take`` of the next
        cycle: compute it from registers and this cycle's outputs.
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
            "take": Out(1),
            "chosen": Out(bundle),
            "a_head": Out(bundle),
            "b_head": Out(bundle),
            "a_popped": Out(bundle.count),
            "b_popped": Out(bundle.count),
            "pick_a": Out(1),
            "first": Out(1),
            "completes": Out(1),
            "first_next": Out(1),
            "accept_next": In(1),
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
                queue.pop.eq(getattr(self, f"{side}_popped")),
            ]
            queues[side] = queue
        a_queue, b_queue = queues["a"], queues["b"]
        a_head, b_head = self.a_head, self.b_head
        take, pick_a, completes = self.take, self.pick_a, self.completes

        in_run = Signal()  # a bundle of the current run has been taken
        a_done = Signal()  # the current run's last bundle from a has been taken
        b_done = Signal()
        prefer_b = Signal()  # side taken on the next tie of smallest keys
        tie = Signal()  # the heads' smallest keys are equal (when both are loaded)

        m.d.comb += [
            self.chosen.eq(Mux(pick_a, a_head, b_head)),
            self.first.eq(~in_run),
            completes.eq(Mux(pick_a, a_head.last & b_done, b_head.last & a_done)),
        ]

        # Run bookkeeping for the next cycle, from registers and this cycle's decision.
        in_run_next = Mux(take, ~completes, in_run)
        a_done_next = Mux(take, ~completes & Mux(pick_a, a_head.last, a_done), a_done)
        b_done_next = Mux(take, ~completes & Mux(pick_a, b_done, b_head.last), b_done)
        prefer_b_next = prefer_b ^ (take & ~a_done & ~b_done & tie)
        m.d.comb += self.first_next.eq(~in_run_next)
        m.d.sync += [in_run.eq(in_run_next), a_done.eq(a_done_next), b_done.eq(b_done_next),
                     prefer_b.eq(prefer_b_next)]

        # Key comparisons of the three pairs the next cycle can hold, from registers only.
        # Both orders as subtractions: synthesis maps each to a carry chain, where an
        # equality would be a tree of LUTs.
        def compare(a, b):
            a_key, b_key = a.records[0].key, b.records[0].key
            a_less, b_less = less_than(a_key, b_key), less_than(b_key, a_key)
            return a_less, ~a_less & ~b_less

        a_next = data.View(self._bundle, a_queue.next)
        b_next = data.View(self._bundle, b_queue.next)
        pairs = {"heads": compare(a_head, b_head), "a_next": compare(a_next, b_head),
                 "b_next": compare(a_head, b_next)}

        a_loaded, b_loaded = a_queue.head_valid[0], b_queue.head_valid[0]
        a_next_valid, b_next_valid = a_queue.next_valid[0], b_queue.next_valid[0]

        def next_choice(taken):
            """``(valid, pick_a, tie)`` of the next cycle if this cycle takes ``taken``
            ("a", "b" or None): each case a small function of registers, the decision picks
            one at the end (so the decision register is not at the start of a long path)."""
            a_moves = 1 if taken == "a" else ~a_loaded  # a head moves when taken or empty
            b_moves = 1 if taken == "b" else ~b_loaded
            a_loaded_next = Mux(a_moves, a_next_valid, a_loaded)
            b_loaded_next = Mux(b_moves, b_next_valid, b_loaded)
            if taken == "a":    # completes = a.last & b_done clears both
                a_done_n, b_done_n = a_head.last & ~b_done, b_done & ~a_head.last
            elif taken == "b":
                a_done_n, b_done_n = a_done & ~b_head.last, b_head.last & ~a_done
            else:
                a_done_n, b_done_n = a_done, b_done
            prefer_b_n = prefer_b ^ (tie & ~a_done & ~b_done) if taken else prefer_b
            known = Mux(a_moves, ~b_moves & a_next_valid & b_loaded,
                        Mux(b_moves, a_loaded & b_next_valid, 1))
            less_n = Mux(a_moves, pairs["a_next"][0],
                         Mux(b_moves, pairs["b_next"][0], pairs["heads"][0]))
            tie_n = Mux(a_moves, pairs["a_next"][1],
                        Mux(b_moves, pairs["b_next"][1], pairs["heads"][1]))
            valid = Mux(a_done_n, b_loaded_next,
                        Mux(b_done_n, a_loaded_next, a_loaded_next & b_loaded_next & known))
            pick = Mux(a_done_n, 0, Mux(b_done_n, 1, less_n | tie_n & ~prefer_b_n))
            return valid, pick, tie_n

        cases = [next_choice(taken) for taken in ("a", "b", None)]
        valid_next, pick_a_next, tie_next = (
            Mux(take, Mux(pick_a, on_a, on_b), on_none)
            for on_a, on_b, on_none in zip(*cases, strict=True))
        take_next = valid_next & self.accept_next
        m.d.sync += [tie.eq(tie_next), self.valid.eq(valid_next), pick_a.eq(pick_a_next),
                     take.eq(take_next)]

        # Each lane's pops: a register of its own, next to the lane's head and FIFO. A side is
        # only taken with its head loaded, so `& loaded_next` of lanes 1 and up changes
        # nothing but builds each copy on that lane's own state: synthesis cannot merge the
        # copies into one flip-flop that fans out to the whole width.
        for queue, popped, side_next in ((a_queue, self.a_popped, pick_a_next),
                                         (b_queue, self.b_popped, ~pick_a_next)):
            m.d.sync += popped[0].eq(take_next & side_next)
            for lane in range(1, lanes):
                moves = popped[lane] | ~queue.head_valid[lane]
                loaded_next = Mux(moves, queue.next_valid[lane], queue.head_valid[lane])
                m.d.sync += popped[lane].eq(take_next & side_next & loaded_next)
        return m
