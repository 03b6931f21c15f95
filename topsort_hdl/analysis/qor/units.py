"""The merge units of each kind side by side: FLiMS units measured as the kernel's MMS units
are (the tree record of the presets' 8-byte records, the trees' input FIFO depth), Yosys xcup
resources and logic levels at E = 1 to 32, nextpnr-ecp5 Fmax and area where the trees' units
are placed and routed (E = 1 to 8). The MMS figures are the kernel's own
(``resources.u280.merge_unit_<E>``, ``fmax_mhz.merge_unit_<E>``)."""

from ...core.config import PRESETS
from ...hardware.kernel.lane import merge_record
from ...hardware.records import tree_record
from ...hardware.tree.merge_tree import tree_merge_unit
from .pnr import PnrBlock
from .synth import flow_figures, synthesize

__all__ = ["UNIT_RATES", "PNR_UNIT_RATES", "flims_unit", "unit_figures", "flims_pnr_blocks"]

UNIT_RATES = (1, 2, 4, 8, 16, 32)
PNR_UNIT_RATES = (1, 2, 4, 8)       # as the MMS units (16 and up do not fit the 85F's flow)


def flims_unit(rate, config=PRESETS["u280"]):
    """The FLiMS unit of ``rate`` for ``config``'s records, as a FLiMS tree would build it."""
    return tree_merge_unit(tree_record(merge_record(config)), rate, kind="flims")


def unit_figures(progress=None):
    """Yosys figures of the FLiMS units at :data:`UNIT_RATES`: ``resources.units.flims_e<E>.*``
    and ``levels.units.flims_e<E>.*``; and report lines beside MMS's."""
    figures, lines = {}, [f"{'unit':<12} {'LUT':>8} {'FF':>8} {'levels':>7}"]
    for rate in UNIT_RATES:
        result = synthesize(flims_unit(rate), top=f"flims_e{rate}")
        usage, name = result.utilization, f"units.flims_e{rate}"
        for kind in ("luts", "ff", "bram", "uram"):
            figures[f"resources.{name}.{kind}"] = getattr(usage, kind)
        figures[f"levels.{name}.lut"] = result.levels.lut
        figures[f"levels.{name}.cells"] = result.levels.cells
        figures.update(flow_figures(name, result.flow))
        lines.append(f"{'flims E=' + str(rate):<12} {usage.luts:>8,} {usage.ff:>8,} "
                     f"{result.levels.lut:>7}")
        if progress:
            progress(f"  FLiMS E={rate}: {usage.luts} LUT {usage.ff} FF "
                     f"{result.levels.lut} levels{' (cached)' if result.cached else ''}")
    return figures, lines


def flims_pnr_blocks(config):
    """The FLiMS units placed and routed beside the MMS ones, for ``config``'s records."""
    return [PnrBlock(f"flims_e{rate}", lambda rate=rate: flims_unit(rate, config),
                     f"FLiMS merge unit, {rate} record{'s' if rate > 1 else ''}/cycle")
            for rate in PNR_UNIT_RATES]
