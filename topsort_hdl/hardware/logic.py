"""Small pieces of logic the blocks share, each written once for its timing: arbiters, selects,
compares as carry chains, delay lines, pointers that wrap."""

from amaranth.hdl import Cat, Mux, Signal, Value

__all__ = ["round_robin", "one_hot_select", "borrow", "past_top", "delay", "next_slot"]


def round_robin(m, vector, above, name):
    """One-hot: the lowest set bit of ``vector`` among ``above``, else its lowest set bit; and
    whether any bit is set.

    ``x & -x`` keeps the lowest set bit of ``x``: the increment's carry chain does the
    priority, where prefix ORs over many bits become chains of LUTs. Over ``Cat(vector &
    above, vector)`` the lowest bit is in the first half if any is set there; the carry out
    of ``~x + 1`` is set when no bit is.
    """
    n = len(vector)
    both = Signal(2 * n, name=f"{name}_both")
    negated = Signal(2 * n + 1, name=f"{name}_negated")
    lowest = Signal(2 * n, name=f"{name}_lowest")
    m.d.comb += [
        both.eq(Cat(vector & above, vector)),
        negated.eq(~both + 1),
        lowest.eq(both & negated[:2 * n]),
    ]
    return lowest[:n] | lowest[n:], ~negated[2 * n]


def one_hot_select(one_hot, values):
    """``values[i]`` for the set bit ``i`` of ``one_hot`` (zero when none is): an OR of ANDs,
    no priority."""
    result = 0
    for i, value in enumerate(values):
        result = result | Mux(one_hot[i], value, 0)
    return result


def borrow(x, y):
    """``x < y`` for unsigned values, as the borrow of ``x - y``: a carry chain behind one LUT
    level, where a wide compare is a tree of LUTs."""
    x, y = Value.cast(x), Value.cast(y)
    return (x.as_unsigned() - y.as_unsigned())[max(len(x), len(y))]


def past_top(end, width):
    """``end`` (a ``width + 1``-bit sum) is past ``2 ** width``."""
    return end[width] & end[:width].any()


def delay(m, value, cycles, name, reset_less=False):
    """``value`` delayed by ``cycles`` registers named ``name_0``, ``name_1``, ...; a line
    ``reset_less`` can map to shift-register LUTs."""
    for index in range(cycles):
        registered = Signal.like(value, name=f"{name}_{index}", reset_less=reset_less)
        m.d.sync += registered.eq(value)
        value = registered
    return value


def next_slot(pointer, slots):
    """The slot after ``pointer`` in a ring of ``slots`` (not a power of two in general)."""
    return Mux(pointer == slots - 1, 0, pointer + 1)
