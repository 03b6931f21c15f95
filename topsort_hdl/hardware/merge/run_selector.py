"""The selector every merge unit shares: which head bundle goes next, and run bookkeeping."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from ..records import BundleLayout, check_at_least, flat_field
from .cas import less_than
from .lanes import LaneQueue

__all__ = ["RunSelector", "MIN_FIFO_DEPTH", "DEFAULT_INPUT_DEPTH"]

MIN_FIFO_DEPTH = 3       # a buffered FIFO needs 3 entries to move one bundle per cycle
# A merge unit's input FIFOs when built alone (`topsort-hdl unit`, `bench mms`); the trees
# build theirs deeper (topsort_hdl.hardware.tree.merge_tree.DEFAULT_FIFO_DEPTH).
DEFAULT_INPUT_DEPTH = 4


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
    to is compared and decided on. Everything but the key comparisons is a function of
    registers worked out for each case, so the comparisons, the latest signals, meet it only
    in the last two levels of logic before the decision registers. Each record lane has its
    own copy of the decision, built on that lane's own state, so the enables of a lane's head
    and FIFO start from a flip-flop next to them. A head that arrives while the other side's
    head changes too waits one cycle.

    The consumer grants the next cycle's take through ``accept_next``, computed from its own
    registers and the selector's registered outputs: for example from a
    :class:`.credit.CreditCounter` of its output buffer.

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
    accept_next : In(1)
        The consumer grants a take in the next cycle. Must not depend on ``take`` of the next
        cycle: compute it from registers and this cycle's outputs.
    """

    def __init__(self, bundle, depth):
        if not isinstance(bundle, BundleLayout):
            raise TypeError(f"bundle must be a BundleLayout, not {bundle!r}")
        check_at_least("input_depth", depth, MIN_FIFO_DEPTH)
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
            "accept_next": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        lanes = self._bundle.count
        a_queue, b_queue = (self._lane_queue(m, side, lanes) for side in ("a", "b"))
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
        m.d.sync += [in_run.eq(in_run_next), a_done.eq(a_done_next), b_done.eq(b_done_next),
                     prefer_b.eq(prefer_b_next)]

        # Key comparisons of the three pairs the next cycle can hold, from registers only.
        # Both orders as subtractions: synthesis maps each to a carry chain, where an
        # equality would be a tree of LUTs.
        def compare(a, b):
            # (one slice each: these comparisons are copied into every lane's pops)
            a_key, b_key = flat_field(a, "records", 0, "key"), flat_field(b, "records", 0, "key")
            return less_than(a_key, b_key), less_than(b_key, a_key)

        a_next = data.View(self._bundle, a_queue.next)
        b_next = data.View(self._bundle, b_queue.next)
        pairs = {"heads": compare(a_head, b_head), "a_next": compare(a_next, b_head),
                 "b_next": compare(a_head, b_next)}

        a_loaded, b_loaded = a_queue.head_valid[0], b_queue.head_valid[0]
        a_next_valid, b_next_valid = a_queue.next_valid[0], b_queue.next_valid[0]

        def next_choice(taken):
            """The next cycle's decision if this cycle takes ``taken`` ("a", "b" or None), as
            functions of registers only: ``valid``, the forced pick when a side is done
            (``forced``, ``forced_a``), the side preferred on a tie and the pair of heads
            compared (``pair``: one-hot over ``pairs``)."""
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
            known = Mux(a_moves, ~b_moves & a_next_valid & b_loaded,
                        Mux(b_moves, a_loaded & b_next_valid, 1))
            return {
                "valid": Mux(a_done_n, b_loaded_next,
                             Mux(b_done_n, a_loaded_next, a_loaded_next & b_loaded_next & known)),
                "forced": a_done_n | b_done_n,
                "forced_a": ~a_done_n,
                "prefer_b": prefer_b ^ (tie & ~a_done & ~b_done) if taken else prefer_b,
                "pair": {"a_next": a_moves, "b_next": ~a_moves & b_moves,
                         "heads": ~a_moves & ~b_moves},
            }

        # The case this cycle's decision leads to, picked among the three. Everything so far
        # is a function of registers; the key comparisons, the latest signals, meet it only in
        # the last two levels of logic before each pop register.
        cases = {taken: next_choice(taken) for taken in ("a", "b", None)}

        def pick_case(name, pair=None):
            on_a, on_b, on_none = ((case[name] if pair is None else case[name][pair])
                                   for case in cases.values())
            value = Signal(name=f"next_{name}" + (f"_{pair}" if pair else ""))
            m.d.comb += value.eq(Mux(take, Mux(pick_a, on_a, on_b), on_none))
            return value

        valid_next, forced, forced_a, prefer_b_n = (
            pick_case(name) for name in ("valid", "forced", "forced_a", "prefer_b"))
        pair_next = {pair: pick_case("pair", pair) for pair in pairs}
        # a wins a pair on a smaller key, or on a tie unless b is preferred.
        a_wins = {pair: Mux(prefer_b_n, a_less, ~b_less)
                  for pair, (a_less, b_less) in pairs.items()}
        tie_next = Signal()
        m.d.comb += tie_next.eq(Cat(pair_next[p] & ~a_less & ~b_less
                                    for p, (a_less, b_less) in pairs.items()).any())
        go = Signal()
        m.d.comb += go.eq(valid_next & self.accept_next)

        def pops(enable):
            """``(a popped, b popped)`` of the next cycle for a take granted by ``enable``."""
            free = enable & ~forced
            forced_on = enable & forced
            a_pop = Cat(*(free & pair_next[p] & a_wins[p] for p in pairs),
                        forced_on & forced_a).any()
            b_pop = Cat(*(free & pair_next[p] & ~a_wins[p] for p in pairs),
                        forced_on & ~forced_a).any()
            return a_pop, b_pop

        pick_a_next, _ = pops(1)
        m.d.sync += [tie.eq(tie_next), self.valid.eq(valid_next), pick_a.eq(pick_a_next),
                     take.eq(go)]

        self._lane_pops(m, lanes, a_queue, b_queue, pops, go, pick_a_next)
        return m

    def _lane_queue(self, m, side, lanes):
        """Side ``side``'s input into its lane queue, whose head is the side's head."""
        queue = LaneQueue(shape=self._bundle, depth=self._depth, lanes=lanes)
        m.submodules[f"{side}_queue"] = queue
        wiring.connect(m, wiring.flipped(getattr(self, side)), queue.i)
        m.d.comb += [
            getattr(self, f"{side}_head").eq(queue.head),
            queue.pop.eq(getattr(self, f"{side}_popped")),
        ]
        return queue

    def _lane_pops(self, m, lanes, a_queue, b_queue, pops, go, pick_a_next):
        """Each lane's pops: a register of its own, next to the lane's head and FIFO. A side is
        only taken with its head loaded, so ``& loaded_next`` of lanes 1 and up changes nothing
        but builds each copy on that lane's own state: synthesis cannot merge the copies into
        one flip-flop that fans out to the whole width. (At one lane the decision itself is the
        shallower pop: nothing fans out.)"""
        a_pop, b_pop = pops(go) if lanes > 1 else (go & pick_a_next, go & ~pick_a_next)
        m.d.sync += [self.a_popped[0].eq(a_pop), self.b_popped[0].eq(b_pop)]
        for lane in range(1, lanes):
            lane_loaded = []
            for queue, popped in ((a_queue, self.a_popped), (b_queue, self.b_popped)):
                moves = popped[lane] | ~queue.head_valid[lane]
                lane_loaded.append(Mux(moves, queue.next_valid[lane], queue.head_valid[lane]))
            a_pop, _ = pops(go & lane_loaded[0])
            _, b_pop = pops(go & lane_loaded[1])
            m.d.sync += [self.a_popped[lane].eq(a_pop), self.b_popped[lane].eq(b_pop)]
