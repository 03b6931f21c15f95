"""Board and device facts the kernel configurations are built on: data only, no logic.

Sources: AMD/Xilinx DS963 (Alveo U280 data sheet: 8 GB HBM2 in 32 pseudo channels of 256 MB,
460 GB/s) and the TopSort paper (214 MHz achieved user clock on the U280).
"""

from dataclasses import dataclass

__all__ = ["Platform", "PLATFORMS"]


@dataclass(frozen=True)
class Platform:
    """An HBM board as the kernel sees it.

    Members
    -------
    name, description : str
    channels : int
        HBM pseudo channels, each an address range of ``channel_bytes`` (channel c at
        ``c * channel_bytes`` in the kernel's address map).
    channel_bytes : int
    channel_gbps : float
        Peak bandwidth of one channel in GB/s.
    clock_hz : int
        Kernel clock the performance figures assume.
    """

    name: str
    description: str
    channels: int
    channel_bytes: int
    channel_gbps: float
    clock_hz: int


PLATFORMS = {
    "u280": Platform("u280", "AMD Alveo U280 (xcu280-fsvh2892-2L-e), 8 GB HBM2", channels=32,
                     channel_bytes=256 << 20, channel_gbps=14.375, clock_hz=214_000_000),
    # A scaled-down HBM for simulation: small channels keep simulated sorts short.
    "sim": Platform("sim", "simulation only: 32 channels of 16 KB", channels=32,
                    channel_bytes=16 << 10, channel_gbps=14.375, clock_hz=214_000_000),
}
