"""The compare-swap cell."""

from amaranth.hdl import Module, Mux, Shape, Value
from amaranth.lib.wiring import In, Out

from ..block import Block

__all__ = ["CompareSwap", "record_key"]


def record_key(record):
    """Order key of a plain record view: its key field."""
    return record.key


class CompareSwap(Block):
    """Order two records by key (combinational).

    Equal keys never swap, so the cell is stable: ``first`` is ``a`` on a tie.

    Parameters
    ----------
    layout : shape-like
        Layout of the elements, usually a :class:`~topsort_hdl.hardware.records.RecordLayout`.
    descending : bool
        Put the larger key first instead of the smaller.
    order_key : callable
        Maps an element view to the value it is ordered by; default: its ``key`` field.

    Members
    -------
    a, b : In(layout)
        The two elements.
    first, second : Out(layout)
        The elements in order: ``first`` has the smaller key (the larger when ``descending``).
    """

    def __init__(self, layout, *, descending=False, order_key=record_key):
        Shape.cast(layout)  # raises TypeError naming the bad shape
        if not isinstance(descending, bool):
            raise TypeError(f"descending must be a bool, not {descending!r}")
        self._layout = layout
        self._descending = descending
        self._order_key = order_key
        super().__init__({
            "a": In(layout), "b": In(layout), "first": Out(layout), "second": Out(layout),
        })

    @property
    def layout(self):
        return self._layout

    @property
    def descending(self):
        return self._descending

    def elaborate(self, platform):
        m = Module()
        swap = swap_condition(self.a, self.b, self._descending, self._order_key)
        m.d.comb += [
            self.first.eq(Mux(swap, self.b, self.a)),
            self.second.eq(Mux(swap, self.a, self.b)),
        ]
        return m


def swap_condition(a, b, descending=False, order_key=record_key):
    """Return the condition under which ``a`` and ``b`` are out of order (ties stay put)."""
    key_a, key_b = order_key(a), order_key(b)
    return less_than(key_a, key_b) if descending else less_than(key_b, key_a)


def less_than(x, y):
    """``x < y`` for unsigned values, as the borrow of ``x - y``: synthesis maps a subtraction
    to a carry chain (one LUT level and the chain), where a comparison may become a tree of
    LUTs several levels deep."""
    x, y = Value.cast(x), Value.cast(y)
    width = max(len(x), len(y))
    return (x.as_unsigned() - y.as_unsigned())[width]
