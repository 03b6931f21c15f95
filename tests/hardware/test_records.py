"""records.flat_field: one slice of the signal under a view, the bits of the view's own access."""

import pytest
from amaranth.hdl import Signal, Value, signed
from amaranth.hdl._ast import Slice
from amaranth.lib import data

from topsort_hdl.hardware.records import BundleLayout, RecordLayout, flat_field


def _bits(value):
    """(signal, start, stop) of a value that is a slice of a signal, through nested slices."""
    value = Value.cast(value)
    start, stop = 0, len(value)
    while isinstance(value, Slice):
        start, stop = value.start + start, value.start + stop
        value = value.value
    return value, start, stop


@pytest.mark.parametrize("path", [("last",), ("records", 0, "key"), ("records", 3, "value"),
                                  ("records", 2)])
def test_flat_field_same_bits(path):
    bundle = Signal(BundleLayout(RecordLayout(33, 32), 4))
    through_view = bundle
    for step in path:
        through_view = through_view[step]
    flat = flat_field(bundle, *path)
    assert _bits(flat) == _bits(through_view)
    # one slice of the signal itself
    assert isinstance(Value.cast(flat), Slice)
    assert Value.cast(flat).value is Value.cast(bundle)
    assert isinstance(flat, data.View) == isinstance(through_view, data.View)


def test_flat_field_signed():
    view = Signal(data.StructLayout({"a": 3, "b": signed(5)}))
    assert flat_field(view, "b").shape() == view.b.shape()


def test_flat_field_bad_index():
    with pytest.raises(KeyError):    # the layout's own lookup
        flat_field(Signal(data.ArrayLayout(4, 2)), 2)
