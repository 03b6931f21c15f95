"""Per-group resource figures stored with the presets, so that the floorplan needs no Yosys run.

``topsort-hdl qor --config NAME --store-figures`` synthesises (or takes from the cache) every
part of preset ``NAME``'s emitted kernel and writes its groups (a phase-1 tree, a reused tree,
the phase-2 extras ...: :func:`topsort_hdl.analysis.qor.blocks.compose`) into ``block_figures.json``
beside this file with the preset's parameters; :func:`stored_groups` gives them back for a
configuration whose parameters are exactly the stored ones, and None otherwise (a configuration
changed with ``--set`` is planned with the paper's figures).

Plain Python, like the presets they are stored with: the Vitis floorplan reads them and QoR
writes them, and neither direction needs the other.
"""

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from .boards import Resources

__all__ = ["Utilization", "FIGURES_FILE", "config_shape", "load_figures", "stored_groups",
           "store_figures"]

FIGURES_FILE = Path(__file__).resolve().parent / "block_figures.json"
ABOUT = ("Per-group Yosys synth_xilinx -family xcup figures of the presets, for the floorplan "
         "(topsort_hdl/targets/vitis/floorplan.py); refresh with `topsort-hdl qor --config NAME "
         "--store-figures` (or `make figures`) after changing a block, in a commit that says why")


@dataclass(frozen=True)
class Utilization:
    """One block's cells, grouped as Vivado reports them."""

    lut: int = 0          # LUTs as logic
    lutram: int = 0       # LUTs as distributed RAM
    srl: int = 0          # LUTs as shift registers
    ff: int = 0
    bram: float = 0.0     # RAMB36 equivalents
    uram: int = 0
    dsp: int = 0
    carry: int = 0

    @property
    def luts(self):
        """Every LUT site used: logic, memory and shift registers."""
        return self.lut + self.lutram + self.srl

    def resources(self):
        return Resources(lut=self.luts, ff=self.ff, bram=self.bram, uram=self.uram,
                         dsp=self.dsp)

    def __add__(self, other):
        return Utilization(*(a + b for a, b in zip(asdict(self).values(),
                                                    asdict(other).values(), strict=True)))

    def __mul__(self, factor):
        return Utilization(*(v * factor for v in asdict(self).values()))

    __rmul__ = __mul__

    def as_dict(self):
        return asdict(self)


def config_shape(config):
    """The parameters the stored figures were measured with: everything but the name and the
    input's placement (the hosts', not the hardware's)."""
    shape = asdict(config)
    shape.pop("name")
    shape.pop("placement")
    return shape


def load_figures(path=None):
    """The stored entries: preset name -> ``{"config": shape, "blocks": {name: figures}}``."""
    path = Path(path or FIGURES_FILE)
    if not path.exists():
        return {}
    return json.loads(path.read_text())["presets"]


def stored_groups(config, path=None):
    """``{group: Utilization}`` stored for ``config`` (the groups of
    :func:`topsort_hdl.analysis.qor.blocks.compose`), or
    None when nothing is stored for its name or it differs from the stored parameters."""
    entry = load_figures(path).get(config.name)
    if entry is None or entry["config"] != config_shape(config) or "groups" not in entry:
        return None
    return {name: Utilization(**figures) for name, figures in entry["groups"].items()}


def store_figures(config, groups, path=None):
    """Write ``groups`` ({group: Utilization}) as ``config``'s entry; return the file."""
    path = Path(path or FIGURES_FILE)
    presets = load_figures(path)
    presets[config.name] = {
        "config": config_shape(config),
        "groups": {name: usage.as_dict() for name, usage in groups.items()},
    }
    path.write_text(json.dumps({"about": ABOUT, "presets": dict(sorted(presets.items()))},
                               indent=1) + "\n")
    return path
