"""Board and device facts the kernel configurations and the Vitis files are built on: data only.

Sources (numbers are cited where they are used below):
- [DS963] AMD DS963, Alveo U280 data sheet: xcu280-fsvh2892-2L-e, 8 GB HBM2 in 32 pseudo
  channels of 256 MB, 460 GB/s; 1,304K LUT, 2,607K FF, 2,016 RAMB36, 960 URAM, 9,024 DSP.
- [UG1120] AMD UG1120, Alveo data center accelerator card platforms: resources available to
  kernels (the dynamic region) per SLR, as quoted in Xilinx/finn src/finn/util/platforms.py.
- [UG949] AMD UG949, "Designing with HBM devices": the HBM and its 32 AXI ports are in SLR0.
- [UG1393] AMD UG1393 (Vitis), HBM configuration: 32 pseudo channels, 14.375 GB/s each; U55C
  has 16 GB (32 x 512 MB); memory resources are named HBM[0..31] in v++ connectivity.
- [PG276] AMD PG276, AXI HBM controller: eight 4x4 switches of 4 pseudo channels each; lateral
  links between switches run at most at half rate.
- [Shuhai] Wang et al., "Shuhai: benchmarking HBM on FPGAs", FCCM 2020 (arXiv 2005.04324):
  13.27 GB/s measured for sequential reads on one U280 pseudo channel (425 GB/s for 32).
- [RapidStream] rapidstream-org device model of the U280: 23,040 super long lines (SLLs) per
  SLR crossing. Not confirmed in an AMD document; Vivado's report on the platform tells.
- [Paper] The TopSort paper: 214 MHz achieved user clock on the U280.
"""

from dataclasses import dataclass

__all__ = ["Platform", "Resources", "VitisPlatform", "PLATFORMS", "RESOURCE_KINDS"]

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
class VitisPlatform:
    """A Vitis platform (shell) for a board: the name v++ takes, where kernels live in the
    hierarchy (floorplan XDC cell paths start there) and its per-SLR pblocks."""

    name: str
    region: str                   # the dynamic region's cell, parent of every kernel
    pblocks: tuple                # per SLR, the platform's pblock for that SLR's dynamic region


@dataclass(frozen=True)
class Platform:
    """An HBM board as the kernel sees it.

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
    clock_hz : int
        Kernel clock the performance figures assume.
    hbm_slr : int
        The SLR with the HBM and its AXI ports.
    slrs : tuple of Resources
        Resources available to kernels in each SLR (the dynamic region), bottom die first.
    sll_per_crossing : int
        Super long lines between two neighbouring SLRs.
    vitis : tuple of VitisPlatform
        Public Vitis platforms for the board, the default first.
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


# [DS963] the whole xcu280 (and xcu55c: the same fabric).
_XCU280 = Resources(lut=1_303_680, ff=2_607_360, bram=2_016, uram=960, dsp=9_024)
# [UG1120] per-SLR dynamic-region resources of the U280 (LUT, FF, RAMB36, URAM, DSP).
_U280_SLRS = (
    Resources(lut=369_000, ff=746_000, bram=507, uram=320, dsp=2_733),    # SLR0, with the HBM
    Resources(lut=333_000, ff=675_000, bram=468, uram=320, dsp=2_877),    # SLR1
    Resources(lut=367_000, ff=729_000, bram=512, uram=320, dsp=2_880),    # SLR2
)
_SLR_PBLOCKS = ("pblock_dynamic_SLR0", "pblock_dynamic_SLR1", "pblock_dynamic_SLR2")

PLATFORMS = {
    "u280": Platform(
        "u280", "AMD Alveo U280 (xcu280-fsvh2892-2L-e), 8 GB HBM2",
        part="xcu280-fsvh2892-2L-e",
        channels=32, channel_bytes=256 << 20,                      # [DS963]
        channel_gbps=14.375, channel_gbps_measured=13.27,          # [UG1393], [Shuhai]
        clock_hz=214_000_000,                                      # [Paper]
        hbm_slr=0, slrs=_U280_SLRS,                                # [UG949], [UG1120]
        sll_per_crossing=23_040,                                   # [RapidStream]
        part_resources=_XCU280,                                    # [DS963]
        # The device's 960 UltraRAMs are otherwise unused: the leaf buffers go there.
        buffer_ram="ultra",
        vitis=(
            # The current shell first; the 2019.2 shell the paper used keeps its kernels
            # under pfm_top_i/dynamic_region.
            VitisPlatform("xilinx_u280_gen3x16_xdma_1_202211_1", "level0_i/ulp", _SLR_PBLOCKS),
            VitisPlatform("xilinx_u280_xdma_201920_3", "pfm_top_i/dynamic_region",
                          _SLR_PBLOCKS),
        )),
    # The U55C's device is the U280's in the same package with twice the HBM ([UG1393]);
    # UG1120 gives it the U280's per-SLR figures (as quoted by FINN).
    "u55c": Platform(
        "u55c", "AMD Alveo U55C (xcu55c-fsvh2892-2L-e), 16 GB HBM2",
        part="xcu55c-fsvh2892-2L-e",
        channels=32, channel_bytes=512 << 20,
        channel_gbps=14.375, channel_gbps_measured=13.27,
        clock_hz=214_000_000,
        hbm_slr=0, slrs=_U280_SLRS, sll_per_crossing=23_040, part_resources=_XCU280,
        buffer_ram="ultra",
        vitis=(VitisPlatform("xilinx_u55c_gen3x16_xdma_3_202210_1", "level0_i/ulp",
                             _SLR_PBLOCKS),)),
    # A scaled-down HBM for simulation: small channels keep simulated sorts short.
    "sim": Platform("sim", "simulation only: 32 channels of 16 KB", channels=32,
                    channel_bytes=16 << 10, channel_gbps=14.375, clock_hz=214_000_000,
                    channel_gbps_measured=13.27),
    # Block RAM on an open-toolchain FPGA board (the on-chip demo): four 8 KB "channels" of
    # 128-bit words, one word per cycle at the ULX3S's 25 MHz.
    "onchip": Platform("onchip", "on-chip block RAM of an ECP5 board: 4 channels of 8 KB",
                       channels=4, channel_bytes=8 << 10, channel_gbps=0.4,
                       channel_gbps_measured=0.4, clock_hz=25_000_000),
}
