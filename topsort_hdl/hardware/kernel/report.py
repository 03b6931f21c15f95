"""The completion report's writer: one AXI4 burst of the report's words at the end of a job."""

from amaranth.hdl import Module, Signal
from amaranth.lib.wiring import In, Out

from ..axi.signature import (
    AXI_CACHE_MODIFIABLE,
    BURST_INCR,
    MAX_BURST_BEATS,
    RESP_OKAY,
    Axi4Signature,
)
from ..block import Block
from ..records import check_range

__all__ = ["ReportWriter"]


class ReportWriter(Block):
    """Write ``beats`` beats of ``data`` from ``addr`` in one INCR burst.

    ``start`` (a pulse, with ``addr`` and ``data`` steady) latches the data, so the report is
    the state of that cycle whatever changes while it is written; AW and W go out together
    (AXI lets W lead AW). ``done`` pulses with the write response, ``error`` (sticky until
    reset) flags an error response. Only the write half of ``axi`` is driven.

    Parameters
    ----------
    params : AxiParams
    beats : int
        The report's beats, 1 to 256 (one burst); the caller keeps it inside a 4 KB page.
    """

    module_tag_format = "report_writer_b{beats}"

    def __init__(self, params, beats):
        check_range("beats", beats, 1, MAX_BURST_BEATS)
        self.params = params
        self.beats = beats
        super().__init__({
            "axi": Out(Axi4Signature(params)),
            "start": In(1),
            "addr": In(params.addr_width),
            "data": In(beats * params.data_width),
            "done": Out(1),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, axi = self.params, self.axi
        width = p.data_width
        words = Signal(self.beats * width)
        left = Signal(range(self.beats + 1))        # beats still to send
        m.d.comb += [
            axi.awsize.eq(p.size_code), axi.awburst.eq(BURST_INCR),
            axi.awcache.eq(AXI_CACHE_MODIFIABLE), axi.awlen.eq(self.beats - 1),
            axi.wdata.eq(words[:width]), axi.wstrb.eq((1 << p.beat_bytes) - 1),
            axi.wvalid.eq(left != 0), axi.wlast.eq(left == 1),
            axi.bready.eq(1),
        ]
        m.d.sync += self.done.eq(0)
        with m.If(axi.awready):
            m.d.sync += axi.awvalid.eq(0)
        with m.If(axi.wvalid & axi.wready):
            m.d.sync += [words.eq(words >> width), left.eq(left - 1)]
        with m.If(self.start):
            m.d.sync += [axi.awvalid.eq(1), axi.awaddr.eq(self.addr), words.eq(self.data),
                         left.eq(self.beats)]
        with m.If(axi.bvalid):
            m.d.sync += self.done.eq(1)
            with m.If(axi.bresp != RESP_OKAY):
                m.d.sync += self.error.eq(1)
        return m
