"""The record and bundle layouts: the single source of truth for widths.

Hardware uses these objects as shapes; golden models and testbenches use the same objects to
pack and unpack integers, so a width changes in exactly one place.
"""

from amaranth.hdl import Shape, ShapeCastable, Value
from amaranth.lib import data

from ...core.params import check_positive, check_record_widths

__all__ = ["RecordLayout", "BundleLayout", "flat_field"]


def flat_field(view, *path):
    """The part of ``view`` at ``path`` (field names and array indices: ``flat_field(v,
    "records", 3, "key")`` is ``v.records[3].key``), as one slice of the value under ``view``.

    The same bits as the view's own access, which slices each step's result again: Amaranth
    copies an expression into every place it is used before building the netlist, and each
    copy of a step's slice costs that step's whole width (a bundle's records field: thousands
    of bits per use of a key). A layout's part is a view, a plain shape's a value."""
    layout, offset = view.shape(), 0
    for step in path:
        field = layout[step]
        layout, offset = field.shape, offset + field.offset
    shape = Shape.cast(layout)
    bits = Value.cast(view)[offset:offset + shape.width]
    if isinstance(layout, data.Layout):
        return data.View(layout, bits)
    if isinstance(layout, ShapeCastable):
        raise TypeError(f"flat_field gives layouts and plain shapes, not {layout!r}")
    return bits.as_signed() if shape.signed else bits


class RecordLayout(data.StructLayout):
    """Layout of one key-value record: the value in the low bits, the key in the upper bits.

    Records are ordered by key only. Every key value, 0 and all-ones included, is a real key:
    run boundaries travel as flags beside the records, never as reserved key values.

    Parameters
    ----------
    key_bits : int
        Width of the key, 1 to 128. Default 32.
    value_bits : int
        Width of the value, 0 to 128. Default 32.

    Raises
    ------
    ValueError
        If a width is out of range.
    """

    def __init__(self, key_bits=32, value_bits=32):
        check_record_widths(key_bits, value_bits)
        self._key_bits = key_bits
        self._value_bits = value_bits
        super().__init__({"value": value_bits, "key": key_bits})

    @property
    def key_bits(self):
        return self._key_bits

    @property
    def value_bits(self):
        return self._value_bits

    @property
    def max_key(self):
        return (1 << self._key_bits) - 1

    @property
    def max_value(self):
        return (1 << self._value_bits) - 1

    def pack(self, key, value):
        """Return the record ``(key, value)`` as an integer of :attr:`size` bits."""
        if not 0 <= key <= self.max_key:
            raise ValueError(f"key must be between 0 and {self.max_key}, not {key}")
        if not 0 <= value <= self.max_value:
            raise ValueError(f"value must be between 0 and {self.max_value}, not {value}")
        return (key << self._value_bits) | value

    def unpack(self, word):
        """Return ``(key, value)`` from a record packed by :meth:`pack`."""
        return (word >> self._value_bits) & self.max_key, word & self.max_value

    def __repr__(self):
        return f"RecordLayout(key_bits={self._key_bits}, value_bits={self._value_bits})"


class BundleLayout(data.StructLayout):
    """Layout of a bundle: ``count`` records (record ``i`` at bits ``[i*W+W-1 : i*W]``,
    ascending within the bundle) followed by a ``last`` flag at the top bit, set on the final
    bundle of a sorted run.

    Parameters
    ----------
    record : RecordLayout
        Layout of one record.
    count : int
        Records per bundle.
    """

    def __init__(self, record, count):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_positive("count", count)
        self._record = record
        self._count = count
        super().__init__({"records": data.ArrayLayout(record, count), "last": 1})

    @property
    def record(self):
        return self._record

    @property
    def count(self):
        return self._count

    def pack(self, records, last=False):
        """Return a bundle of ``(key, value)`` pairs and a ``last`` flag as one integer."""
        if len(records) != self._count:
            raise ValueError(f"a bundle holds {self._count} records, not {len(records)}")
        word = int(bool(last)) << (self._count * self._record.size)
        for i, (key, value) in enumerate(records):
            word |= self._record.pack(key, value) << (i * self._record.size)
        return word

    def pack_run(self, bundles):
        """Return the words of one run: each bundle packed, ``last`` on the final one."""
        return [self.pack(bundle, i == len(bundles) - 1) for i, bundle in enumerate(bundles)]

    def unpack(self, word):
        """Return ``(records, last)`` from a bundle packed by :meth:`pack`."""
        width = self._record.size
        mask = (1 << width) - 1
        records = [self._record.unpack((word >> (i * width)) & mask) for i in range(self._count)]
        return records, bool(word >> (self._count * width) & 1)

    def __repr__(self):
        return f"BundleLayout({self._record!r}, count={self._count})"

