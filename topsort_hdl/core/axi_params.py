"""The widths of an AXI4 master port and the AXI4 limits on bursts, in plain Python.

The configuration checks its burst sizes with these; the AXI signatures and engines
(:mod:`topsort_hdl.hardware.axi`) are built from an :class:`AxiParams`.
"""

from .params import check_int, check_range

__all__ = ["PAGE_BYTES", "MAX_BURST_BEATS", "MAX_DATA_WIDTH", "MAX_OUTSTANDING",
           "AXI4_CHANNELS", "AxiParams"]

PAGE_BYTES = 4096          # no INCR burst may cross a 4 KB boundary
MAX_BURST_BEATS = 256      # AxLEN is 8 bits in AXI4
MAX_DATA_WIDTH = 1024      # the widest data bus AXI4 defines
MAX_OUTSTANDING = 256      # the most bursts a read or write engine keeps in flight

# An AXI4 port's channels (INCR bursts; no region or user signals), named as AMBA, Vitis and
# cocotbext-axi name them: each channel's payload signals and whether it runs from master to
# subordinate; VALID and READY follow each payload. A port lists its signals channel by
# channel in PORT_ORDER.
AXI4_CHANNELS = {
    "aw": (("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos"), True),
    "w": (("data", "strb", "last"), True),
    "b": (("id", "resp"), False),
    "ar": (("id", "addr", "len", "size", "burst", "lock", "cache", "prot", "qos"), True),
    "r": (("id", "data", "resp", "last"), False),
}
PORT_ORDER = ("aw", "ar", "w", "b", "r")


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

    def port_signals(self):
        """A master port's signals in port order, as ``(channel, name, bits, from_master)``
        (see :data:`AXI4_CHANNELS`): the one table the signature, the kernel's wiring and the
        floorplan's count of the wires crossing a die read."""
        bits = {"id": self.id_width, "addr": self.addr_width, "len": 8, "size": 3, "burst": 2,
                "lock": 1, "cache": 4, "prot": 3, "qos": 4, "data": self.data_width,
                "strb": self.data_width // 8, "last": 1, "resp": 2}
        signals = []
        for channel in PORT_ORDER:
            payload, forward = AXI4_CHANNELS[channel]
            signals += [(channel, channel + name, bits[name], forward) for name in payload]
            signals += [(channel, f"{channel}valid", 1, forward),
                        (channel, f"{channel}ready", 1, not forward)]
        return signals

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
