"""What the package knows of a board: the records the board files of ``platforms/`` (at the top
of the repository) are read into. Plain data, no Amaranth."""

from dataclasses import dataclass

__all__ = ["HbmBoard", "Resources", "VitisShell", "DemoBoard", "RESOURCE_KINDS"]

RESOURCE_KINDS = ("lut", "ff", "bram", "uram", "dsp")


@dataclass(frozen=True)
class Resources:
    """FPGA resources: LUTs, flip-flops, block RAMs (RAMB36 equivalents), UltraRAMs, DSPs."""

    lut: int = 0
    ff: int = 0
    bram: float = 0      # RAMB36; a RAMB18 is 0.5
    uram: int = 0
    dsp: int = 0

    def __add__(self, other):
        return Resources(*(getattr(self, k) + getattr(other, k) for k in RESOURCE_KINDS))

    def __sub__(self, other):
        return Resources(*(getattr(self, k) - getattr(other, k) for k in RESOURCE_KINDS))

    def __mul__(self, factor):
        return Resources(*(getattr(self, k) * factor for k in RESOURCE_KINDS))

    __rmul__ = __mul__

    def fits(self, budget):
        """Whether every kind fits in ``budget``."""
        return all(getattr(self, k) <= getattr(budget, k) for k in RESOURCE_KINDS)

    def fractions(self, of):
        """Per kind, this amount as a fraction of ``of`` (kinds ``of`` lacks are left out)."""
        return {k: getattr(self, k) / getattr(of, k) for k in RESOURCE_KINDS if getattr(of, k)}


@dataclass(frozen=True)
class VitisShell:
    """A Vitis platform (shell) for a board: the name v++ takes, where kernels live in the
    hierarchy (floorplan XDC cell paths start there) and its per-SLR pblocks."""

    name: str
    region: str                   # the dynamic region's cell, parent of every kernel
    pblocks: tuple                # per SLR, the platform's pblock for that SLR's dynamic region


@dataclass(frozen=True)
class HbmBoard:
    """A board a kernel configuration runs on (``kind = "hbm"``), as the kernel sees it: HBM
    pseudo channels, or memories that stand in for them (the simulation's, the on-chip
    demo's block RAM).

    Members
    -------
    name, description : str
    part : str
        The FPGA part ("" for the simulation board).
    channels : int
        HBM pseudo channels, each an address range of ``channel_bytes`` (channel c at
        ``c * channel_bytes`` in the kernel's address map, ``HBM[c]`` in v++).
    channel_bytes : int
    channel_gbps : float
        Peak bandwidth of one channel in GB/s.
    channel_gbps_measured : float
        Sequential-burst bandwidth measured on a real card (performance model's derated figure).
    channel_group : int
        Channels behind one crossbar switch (reached without a lateral link).
    lateral_fraction : float
        What one lateral link between neighbouring switches carries, as a fraction of a
        channel's bandwidth, each way (1.0: no switch, or no loss).
    clock_hz : int
        Kernel clock the performance figures assume.
    hbm_slr : int
        The SLR with the HBM and its AXI ports.
    slrs : tuple of Resources
        Resources available to kernels in each SLR (the dynamic region), bottom die first.
    sll_per_crossing : int
        Super long lines between two neighbouring SLRs.
    vitis : tuple of VitisShell
        Public Vitis platforms for the board, the default first.
    part_resources : Resources
        The whole device, shell included.
    buffer_ram : str
        ``ram_style`` of the read engines' leaf buffers ("ultra": UltraRAM; "": the tool's
        choice).
    """

    name: str
    description: str
    channels: int
    channel_bytes: int
    channel_gbps: float
    clock_hz: int
    part: str = ""
    channel_gbps_measured: float = 0.0
    channel_group: int = 4
    lateral_fraction: float = 1.0
    hbm_slr: int = 0
    slrs: tuple = ()
    sll_per_crossing: int = 0
    vitis: tuple = ()
    part_resources: Resources = Resources()    # the whole device, shell included
    buffer_ram: str = ""

    @property
    def device(self):
        """Resources available to kernels on the whole device."""
        total = Resources()
        for slr in self.slrs:
            total = total + slr
        return total


@dataclass(frozen=True)
class DemoBoard:
    """An open-toolchain FPGA board the on-chip demo builds for.

    Members
    -------
    name, description : str
    module, amaranth_platform : str
        The amaranth-boards module and Amaranth platform class of the board (resolved, and
        the board built, by :mod:`topsort_hdl.targets.onchip.boards`).
    program : str
        The command that loads a bitstream into the board, with a ``{bitstream}`` field.
    """

    name: str
    module: str
    amaranth_platform: str
    description: str
    program: str
