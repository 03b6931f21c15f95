"""Key types and orders at the kernel's memory boundary.

The merge logic compares unsigned keys. A job's key type and order (its ``key_order``
argument) become unsigned keys by an order-preserving bijection on each key's bits, ``T``
(the golden model's :func:`~topsort_hdl.core.golden.order.order_keys`): the sign bit flipped
for signed and float keys, every other bit inverted too for a float whose sign bit is set, and
every bit inverted for descending. :class:`KeyOrderBeat` applies ``T`` to every record of a
beat as it arrives from memory, or its inverse as it leaves, so memory holds the host's records
in every pass and nothing between the engines knows the order.

Per key bit that is one LUT of four inputs (the bit, the key's sign, two control bits): a
single logic level, no register.
"""

from amaranth.hdl import Cat, Module, Mux
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ...core.contract import KEY_ORDER_DESCENDING, KEY_TYPE_CODES
from ..block import Block
from ..records import RecordLayout, check_positive

__all__ = ["KEY_ORDER_CONTROL", "KeyOrderBeat", "decode_key_order"]

# A job's key order as the transforms take it.
KEY_ORDER_CONTROL = data.StructLayout({
    "sign": 1,          # signed or float keys: the sign bit flips
    "float": 1,         # float keys: a set sign bit inverts the other bits
    "descending": 1,    # every bit inverts
})
KEY_SIDES = ("read", "write")


def decode_key_order(word):
    """``(control, bad)`` from a ``key_order`` argument ``word``: its
    :data:`KEY_ORDER_CONTROL` value, and whether it names no key type or sets a bit the
    kernel does not use."""
    kind = word[:2]
    used = (max(KEY_TYPE_CODES.values()) | KEY_ORDER_DESCENDING).bit_length()
    bad = (kind > max(KEY_TYPE_CODES.values())) | (word[used:] != 0)
    control = Cat(kind != KEY_TYPE_CODES["unsigned"], kind == KEY_TYPE_CODES["float"],
                  (word & KEY_ORDER_DESCENDING) != 0)   # (KEY_ORDER_CONTROL's field order)
    return control, bad


class KeyOrderBeat(Block):
    """``T`` (``side="read"``) or its inverse (``side="write"``) on the key of every record of
    a beat of ``lanes`` records; values pass unchanged. Combinational.

    Parameters
    ----------
    record : RecordLayout
        The records' layout (record ``r`` of a beat at bits ``[r*W, r*W+W)``, its key in the
        upper ``key_bits``).
    lanes : int
        Records per beat.
    side : str
        ``"read"``: host keys in, ordered keys out; ``"write"``: the reverse.

    Members
    -------
    order : In(KEY_ORDER_CONTROL)
    i : In(lanes * W)
    o : Out(lanes * W)
    """

    module_tag_format = "key_order_{side}_x{lanes}"

    def __init__(self, record, lanes, side):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_positive("lanes", lanes)
        if side not in KEY_SIDES:
            raise ValueError(f"side must be one of {', '.join(KEY_SIDES)}, not {side!r}")
        self._record = record
        self._lanes = lanes
        self._side = side
        width = lanes * record.size
        super().__init__({"order": In(KEY_ORDER_CONTROL), "i": In(width), "o": Out(width)})

    def elaborate(self, platform):
        m = Module()
        record, order = self._record, self.order
        w, v, k = record.size, record.value_bits, record.key_bits
        for r in range(self._lanes):
            key = self.i[r * w + v:(r + 1) * w]
            top = key[k - 1] ^ order.sign ^ order.descending   # the other side's sign bit
            # The key's own sign bit: on the read side it is the input's, on the write side
            # the output's.
            sign = key[k - 1] if self._side == "read" else top
            invert = order.descending ^ (order.float & sign)
            m.d.comb += [
                self.o[r * w:r * w + v].eq(self.i[r * w:r * w + v]),
                self.o[r * w + v:(r + 1) * w - 1].eq(
                    key[:k - 1] ^ Mux(invert, (1 << (k - 1)) - 1, 0)),
                self.o[(r + 1) * w - 1].eq(top),
            ]
        return m
