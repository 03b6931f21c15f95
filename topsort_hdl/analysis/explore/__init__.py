"""The design-space explorer (``topsort-hdl explore``): every configuration of a board's axes,
priced by the performance model, the Yosys estimate composed from the kernel's distinct blocks
and the floorplan; the Pareto front of GB/s against LUTs (docs/explorer.md)."""

from ..jobs import run_jobs
from ..qor.figures import BlockFigures
from .front import front_table, pareto, plot_front, save_preset
from .price import PricedPoint, price_points
from .space import AXES, Space, enumerate_space

__all__ = ["AXES", "Space", "enumerate_space", "BlockFigures", "run_jobs", "PricedPoint",
           "price_points", "pareto", "front_table", "plot_front", "save_preset"]
