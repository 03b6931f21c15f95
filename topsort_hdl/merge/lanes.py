"""A wide FIFO built as lanes, so that no control signal fans out to the whole width."""

from amaranth.hdl import Module
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from ..records import check_at_least

__all__ = ["LaneFIFO"]


class LaneFIFO(wiring.Component):
    """A buffered synchronous FIFO of ``width`` bits made of ``lanes`` narrower ones.

    Every lane is a :class:`amaranth.lib.fifo.SyncFIFOBuffered` with its own pointers and
    levels, written and read together, so the lanes always agree. What a wide FIFO loses
    timing on is its read enable: it drives the load enable of every bit of the output
    register. Here each lane's enable reaches only its own bits (synthesis keeps the copies:
    each lane's state feeds back on itself). ``w_rdy`` and ``r_rdy`` are lane 0's.

    Parameters
    ----------
    width : int
        Bits per entry.
    depth : int
        Entries, at least 2.
    lanes : int
        Number of lanes (at most ``width``); lane widths differ by at most one bit.

    Members
    -------
    w_data : In(width)
    w_en : In(1)
    w_rdy : Out(1)
    r_data : Out(width)
    r_en : In(1)
    r_rdy : Out(1)
        As in :class:`amaranth.lib.fifo.SyncFIFOBuffered`.
    """

    def __init__(self, *, width, depth, lanes):
        check_at_least("width", width, 1)
        check_at_least("depth", depth, 2)
        check_at_least("lanes", lanes, 1)
        if lanes > width:
            raise ValueError(f"lanes must be at most width ({width}), not {lanes}")
        self._width = width
        self._depth = depth
        self._lanes = lanes
        super().__init__({
            "w_data": In(width), "w_en": In(1), "w_rdy": Out(1),
            "r_data": Out(width), "r_en": In(1), "r_rdy": Out(1),
        })

    @property
    def depth(self):
        return self._depth

    def elaborate(self, platform):
        m = Module()
        start = 0
        for lane in range(self._lanes):
            end = start + (self._width - start) // (self._lanes - lane)
            queue = fifo.SyncFIFOBuffered(width=end - start, depth=self._depth)
            m.submodules[f"lane{lane}"] = queue
            m.d.comb += [
                queue.w_data.eq(self.w_data[start:end]),
                queue.w_en.eq(self.w_en),
                queue.r_en.eq(self.r_en),
                self.r_data[start:end].eq(queue.r_data),
            ]
            if lane == 0:
                m.d.comb += [self.w_rdy.eq(queue.w_rdy), self.r_rdy.eq(queue.r_rdy)]
            start = end
        return m
