"""A UART transmitter (8N1) and the text lines the self test reports through it."""

from amaranth.hdl import Array, C, Cat, Module, Signal, Value
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...hardware.records import check_at_least

__all__ = ["UartTx", "TextLine", "Hex", "Chars", "uart_decode"]


class UartTx(wiring.Component):
    """Send each byte of ``i`` as 8N1 on ``tx``, ``divisor`` clock cycles per bit, LSB first.

    Members
    -------
    i : In(stream.Signature(8))
    tx : Out(1)
        Idle high.
    """

    def __init__(self, divisor):
        check_at_least("divisor", divisor, 2)
        self.divisor = divisor
        super().__init__({"i": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform):
        m = Module()
        shift = Signal(10)            # stop, data, start: the start bit goes out first
        bits = Signal(range(11))      # bits still to send
        timer = Signal(range(self.divisor))
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [shift.eq(Cat(C(0, 1), self.i.payload, C(1, 1))), bits.eq(10),
                         timer.eq(0)]
        with m.Elif(bits != 0):
            with m.If(timer == 0):
                m.d.sync += [self.tx.eq(shift[0]), shift.eq(shift >> 1), bits.eq(bits - 1),
                             timer.eq(self.divisor - 1)]
            with m.Else():
                m.d.sync += timer.eq(timer - 1)
        # The stop bit must last a whole bit time before the next start bit.
        with m.If((bits == 0) & (timer != 0)):
            m.d.sync += timer.eq(timer - 1)
        m.d.comb += self.i.ready.eq((bits == 0) & (timer == 0))
        return m


class Hex:
    """A text field: the low ``4 * digits`` bits of ``value`` in hexadecimal."""

    def __init__(self, value, digits):
        self.value, self.digits = value, digits

    def chars(self):
        digits = Array(C(ord(ch), 8) for ch in "0123456789abcdef")
        value = Value.cast(self.value)
        return [digits[value[4 * d:4 * d + 4]] for d in reversed(range(self.digits))]


class Chars:
    """A text field: ``count`` characters from the bytes of ``value``, the highest first."""

    def __init__(self, value, count):
        self.value, self.count = value, count

    def chars(self):
        value = Value.cast(self.value)
        return [value[8 * i:8 * i + 8] for i in reversed(range(self.count))]


class TextLine:
    """One line of text from constant strings and :class:`Hex` and :class:`Chars` fields;
    ``column`` gives its characters as 8-bit values, a column of the line cut into rows."""

    def __init__(self, *parts):
        chars = []
        for part in parts:
            if isinstance(part, str):
                chars.extend(C(ord(ch), 8) for ch in part)
            else:
                chars.extend(part.chars())
        self._chars = chars

    def __len__(self):
        return len(self._chars)

    def column(self, column, columns, row):
        """The character at ``row * columns + column`` (``row`` a value): the line cut into
        rows of ``columns`` characters, one column of them; past the line's end, its last
        character in that column."""
        return Array(self._chars[column::columns])[row]


def uart_decode(samples, divisor):
    """Decode 8N1 bytes from ``samples`` of a TX line (one per clock cycle); for tests."""
    out, t = bytearray(), 0
    while t < len(samples):
        if samples[t] == 0:                       # a start bit: sample each bit mid-way
            middle = t + divisor // 2
            if middle + 9 * divisor >= len(samples):
                break
            byte = sum(samples[middle + (b + 1) * divisor] << b for b in range(8))
            if samples[middle + 9 * divisor] != 1:
                raise ValueError(f"no stop bit after the byte at cycle {t}")
            out.append(byte)
            t = middle + 9 * divisor
        else:
            t += 1
    return bytes(out)
