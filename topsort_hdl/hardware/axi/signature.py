"""AXI4 and AXI4-Lite signatures, named as AMBA (and cocotbext-axi, and Vitis) name them.

Members are flat (``awaddr``, ``rready``...) rather than one sub-signature per channel, so a
port called ``m_axi`` flattens to ``m_axi__awaddr`` and cocotbext-axi finds it with the prefix
``"m_axi_"``; the kernel top renames it to Vitis' ``m00_axi_awaddr``.
"""

from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from ...core.axi_params import (
    AXI4_CHANNELS,
    MAX_BURST_BEATS,
    MAX_DATA_WIDTH,
    PAGE_BYTES,
    AxiParams,
)
from ...core.params import check_range

__all__ = [
    "BURST_INCR", "RESP_OKAY", "RESP_EXOKAY", "RESP_SLVERR", "RESP_DECERR",
    "PAGE_BYTES", "MAX_BURST_BEATS", "MAX_DATA_WIDTH", "AXI_CACHE_MODIFIABLE",
    "AxiParams", "Axi4Signature", "AxiLiteSignature", "channel_layout", "connect_channel",
]

BURST_INCR = 0b01
RESP_OKAY, RESP_EXOKAY, RESP_SLVERR, RESP_DECERR = 0b00, 0b01, 0b10, 0b11
AXI_CACHE_MODIFIABLE = 0b0011  # bufferable + modifiable: what Vitis' own kernels drive


class Axi4Signature(wiring.Signature):
    """An AXI4 master (INCR bursts; no region or user signals), seen from the master."""

    def __init__(self, params):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        self.params = params
        members = {name: Out(bits) if from_master else In(bits)
                   for _, name, bits, from_master in params.port_signals()}
        super().__init__(members)

    def __eq__(self, other):
        return isinstance(other, Axi4Signature) and self.params == other.params

    def __repr__(self):
        return f"Axi4Signature({self.params!r})"


class AxiLiteSignature(wiring.Signature):
    """An AXI4-Lite port with 32-bit data, seen from the master (Vitis' ``s_axi_control``
    is ``In(AxiLiteSignature(...))``). No AxPROT: Vitis control ports have none."""

    def __init__(self, addr_width):
        check_range("addr_width", addr_width, 4, 32)
        self.addr_width = addr_width
        super().__init__({
            "awaddr": Out(addr_width), "awvalid": Out(1), "awready": In(1),
            "wdata": Out(32), "wstrb": Out(4), "wvalid": Out(1), "wready": In(1),
            "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "araddr": Out(addr_width), "arvalid": Out(1), "arready": In(1),
            "rdata": In(32), "rresp": In(2), "rvalid": In(1), "rready": Out(1),
        })

    def __eq__(self, other):
        return isinstance(other, AxiLiteSignature) and self.addr_width == other.addr_width

    def __repr__(self):
        return f"AxiLiteSignature({self.addr_width})"


def channel_layout(params, channel, fields):
    """The payload of one AXI4 ``channel`` (``"ar"``, ``"r"``...) as a struct of ``fields``
    (``("id", "addr", "len")``), with the widths of ``params``' ports: what a block's part sees
    of the channel as a stream."""
    bits = {name[len(channel):]: width for ch, name, width, _ in params.port_signals()
            if ch == channel}
    return data.StructLayout({field: bits[field] for field in fields})


def connect_channel(m, axi, channel, channel_stream):
    """Wire a master port's ``channel`` to ``channel_stream`` (a stream of a
    :func:`channel_layout`): driven from the stream on a channel from the master, driving the
    stream on one from the memory (an always-ready stream drives no READY). The port's other
    payload signals of the channel are left to the caller."""
    forward = AXI4_CHANNELS[channel][1]
    port = {name: getattr(axi, channel + name)
            for name in (*channel_stream.payload.shape().members, "valid", "ready")}
    pairs = [(port[name], channel_stream.payload[name])
             for name in channel_stream.payload.shape().members]
    pairs.append((port["valid"], channel_stream.valid))
    if forward:
        m.d.comb += [signal.eq(value) for signal, value in pairs]
        if not channel_stream.signature.always_ready:
            m.d.comb += channel_stream.ready.eq(port["ready"])
    else:
        m.d.comb += [value.eq(signal) for signal, value in pairs]
        m.d.comb += port["ready"].eq(channel_stream.ready)
