"""The beat stream between the AXI engines and the data path."""

from amaranth.lib import data

from .signature import AxiParams

__all__ = ["BeatLayout"]


class BeatLayout(data.StructLayout):
    """One data beat of a memory region and the bytes of it that belong to the region.

    Bytes ``[begin, end)`` of ``data`` (little-endian byte lanes) are the region's; ``begin`` is
    non-zero only on the first beat of a region that starts inside a beat, ``end`` is less than
    the beat width only on the last beat of one that ends inside a beat. ``last`` marks the last
    beat of the region.
    """

    def __init__(self, params):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        self.params = params
        lanes = params.beat_bytes
        super().__init__({
            "data": params.data_width,
            "begin": range(lanes),
            "end": range(1, lanes + 1),
            "last": 1,
        })

    def pack(self, data_word, begin=0, end=None, last=0):
        """The integer value of a beat (for testbenches)."""
        end = self.params.beat_bytes if end is None else end
        fields = {"data": data_word, "begin": begin, "end": end, "last": int(last)}
        return sum(value << self[name].offset for name, value in fields.items())

    def unpack(self, value):
        """``(data, begin, end, last)`` of an integer beat value."""
        return tuple((value >> self[name].offset) & ((1 << self[name].width) - 1)
                     for name in ("data", "begin", "end", "last"))

