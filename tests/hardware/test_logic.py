"""The shared logic pieces against plain Python, exhaustively at small widths."""

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from topsort_hdl.hardware.logic import (
    borrow,
    delay,
    next_slot,
    one_hot_select,
    past_top,
    round_robin,
)


def _run(m, testbench, clock=False):
    sim = Simulator(m)
    if clock:
        sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()


def _lowest(bits):
    return bits & -bits


def test_round_robin_prefers_the_lowest_bit_above_then_wraps():
    m = Module()
    vector, above = Signal(4), Signal(4)
    pick, anything = round_robin(m, vector, above, "rr")
    got = Signal(4)
    any_set = Signal()
    m.d.comb += [got.eq(pick), any_set.eq(anything)]

    async def testbench(ctx):
        for v in range(16):
            for a in range(16):
                ctx.set(vector, v)
                ctx.set(above, a)
                expected = _lowest(v & a) or _lowest(v)
                assert (ctx.get(got), ctx.get(any_set)) == (expected, v != 0), (v, a)
    _run(m, testbench)


def test_one_hot_select_gives_the_chosen_value_or_zero():
    m = Module()
    one_hot = Signal(3)
    result = Signal(8)
    values = [0x15, 0xA2, 0x7F]
    m.d.comb += result.eq(one_hot_select(one_hot, values))

    async def testbench(ctx):
        for i, value in enumerate(values):
            ctx.set(one_hot, 1 << i)
            assert ctx.get(result) == value
        ctx.set(one_hot, 0)
        assert ctx.get(result) == 0
    _run(m, testbench)


def test_borrow_and_past_top_are_compares():
    m = Module()
    x, y, end = Signal(4), Signal(3), Signal(5)
    less, past = Signal(), Signal()
    m.d.comb += [less.eq(borrow(x, y)), past.eq(past_top(end, 4))]

    async def testbench(ctx):
        for a in range(16):
            for b in range(8):
                ctx.set(x, a)
                ctx.set(y, b)
                assert ctx.get(less) == (a < b), (a, b)
        for e in range(32):
            ctx.set(end, e)
            assert ctx.get(past) == (e > 16), e
    _run(m, testbench)


def test_delay_and_next_slot():
    m = Module()
    value = Signal(4)
    delayed = delay(m, value, 3, "line")
    pointer = Signal(range(5))
    m.d.sync += pointer.eq(next_slot(pointer, 5))
    sequence = [3, 9, 14, 0, 7, 7, 2, 11]

    async def testbench(ctx):
        seen, slots = [], []
        for item in sequence + [0] * 3:
            ctx.set(value, item)
            seen.append(ctx.get(delayed))
            slots.append(ctx.get(pointer))
            await ctx.tick()
        assert seen[3:] == sequence
        assert slots == [i % 5 for i in range(len(sequence) + 3)]
    _run(m, testbench, clock=True)
