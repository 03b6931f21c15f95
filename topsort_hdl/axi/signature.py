"""AXI4 and AXI4-Lite signatures, named as AMBA (and cocotbext-axi, and Vitis) name them.

Members are flat (``awaddr``, ``rready``...) rather than one sub-signature per channel, so a
port called ``m_axi`` flattens to ``m_axi__awaddr`` and cocotbext-axi finds it with the prefix
``"m_axi_"``; the kernel top renames it to Vitis' ``m00_axi_awaddr``.
"""

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..records import check_int, check_range

__all__ = [
    "BURST_INCR", "RESP_OKAY", "RESP_EXOKAY", "RESP_SLVERR", "RESP_DECERR",
    "PAGE_BYTES", "MAX_BURST_BEATS", "MAX_DATA_WIDTH", "AXI_CACHE_MODIFIABLE",
    "AxiParams", "Axi4Signature", "AxiLiteSignature",
]

BURST_INCR = 0b01
RESP_OKAY, RESP_EXOKAY, RESP_SLVERR, RESP_DECERR = 0b00, 0b01, 0b10, 0b11
PAGE_BYTES = 4096          # no INCR burst may cross a 4 KB boundary
MAX_BURST_BEATS = 256      # AxLEN is 8 bits in AXI4
MAX_DATA_WIDTH = 1024      # the widest data bus AXI4 defines
AXI_CACHE_MODIFIABLE = 0b0011  # bufferable + modifiable: what Vitis' own kernels drive


def check_power_in_range(name, value, low, high):
    """Return ``value`` if it is a power of two in ``[low, high]``, else raise."""
    check_int(name, value)
    if value < low or value > high or value & (value - 1):
        raise ValueError(f"{name} must be a power of two between {low} and {high}, not {value}")
    return value


class AxiParams:
    """Widths of one AXI4 master port; the single source of truth for the engines.

    Parameters
    ----------
    data_width : int
        RDATA/WDATA width in bits, a power of two from 32 to 1024 (512 on HBM).
    addr_width : int
        Address width in bits, 12 to 64 (64 for Vitis).
    id_width : int
        AxID width in bits, 1 to 16.
    """

    def __init__(self, data_width=512, addr_width=64, id_width=1):
        check_power_in_range("data_width", data_width, 32, MAX_DATA_WIDTH)
        check_range("addr_width", addr_width, 12, 64)
        check_range("id_width", id_width, 1, 16)
        self.data_width = data_width
        self.addr_width = addr_width
        self.id_width = id_width

    @property
    def beat_bytes(self):
        return self.data_width // 8

    @property
    def size_code(self):
        """AxSIZE for full-width beats."""
        return (self.beat_bytes - 1).bit_length()

    def check_burst_bytes(self, name, burst_bytes):
        """A burst size must be a power of two, at least one beat, at most 4 KB and 256 beats."""
        high = min(PAGE_BYTES, MAX_BURST_BEATS * self.beat_bytes)
        return check_power_in_range(name, burst_bytes, self.beat_bytes, high)

    def __eq__(self, other):
        return (isinstance(other, AxiParams) and
                (self.data_width, self.addr_width, self.id_width) ==
                (other.data_width, other.addr_width, other.id_width))

    def __repr__(self):
        return (f"AxiParams(data_width={self.data_width}, addr_width={self.addr_width}, "
                f"id_width={self.id_width})")


class Axi4Signature(wiring.Signature):
    """An AXI4 master (INCR bursts; no region or user signals), seen from the master."""

    def __init__(self, params):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        self.params = params
        a, d, i = params.addr_width, params.data_width, params.id_width
        members = {}
        for ch in ("aw", "ar"):
            members.update({
                f"{ch}id": Out(i), f"{ch}addr": Out(a), f"{ch}len": Out(8), f"{ch}size": Out(3),
                f"{ch}burst": Out(2), f"{ch}lock": Out(1), f"{ch}cache": Out(4),
                f"{ch}prot": Out(3), f"{ch}qos": Out(4), f"{ch}valid": Out(1),
                f"{ch}ready": In(1),
            })
        members.update({
            "wdata": Out(d), "wstrb": Out(d // 8), "wlast": Out(1), "wvalid": Out(1),
            "wready": In(1),
            "bid": In(i), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
            "rid": In(i), "rdata": In(d), "rresp": In(2), "rlast": In(1), "rvalid": In(1),
            "rready": Out(1),
        })
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
