"""Per-group resource figures stored with the presets, so that the floorplan needs no Yosys run.

``topsort-hdl qor --config NAME --store-figures`` synthesises (or takes from the cache) every
part of preset ``NAME``'s emitted kernel and writes its groups (a phase-1 tree, a reused tree,
the phase-2 extras ...: :func:`~.blocks.compose`) into ``topsort_hdl/kernel/block_figures.json``
with the preset's parameters; :func:`stored_groups` gives them back for a configuration whose
parameters are exactly the stored ones, and None otherwise (a configuration changed with
``--set`` is planned with the paper's figures).
"""

import dataclasses
import json
from pathlib import Path

from .synth import Utilization

__all__ = ["FIGURES_FILE", "config_shape", "load_figures", "stored_groups", "store_figures"]

FIGURES_FILE = Path(__file__).resolve().parent.parent / "kernel" / "block_figures.json"
ABOUT = ("Per-group Yosys synth_xilinx -family xcup figures of the presets, for the floorplan "
         "(topsort_hdl/vitis/floorplan.py); refresh with `topsort-hdl qor --config NAME "
         "--store-figures` (or `make figures`) after changing a block, in a commit that says why")


def config_shape(config):
    """The parameters the stored figures were measured with (everything but the name)."""
    shape = dataclasses.asdict(config)
    shape.pop("name")
    return shape


def load_figures(path=None):
    """The stored entries: preset name -> ``{"config": shape, "blocks": {name: figures}}``."""
    path = Path(path or FIGURES_FILE)
    if not path.exists():
        return {}
    return json.loads(path.read_text())["presets"]


def stored_groups(config, path=None):
    """``{group: Utilization}`` stored for ``config`` (:func:`~.blocks.compose`'s groups), or
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
