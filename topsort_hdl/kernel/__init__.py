"""The two-phase TopSort kernel that ties trees, switch and AXI engines together."""

from .config import PRESETS, KernelConfig, config_from
from .kernel import STATUS_BITS, TopSortKernel, kernel_arguments, kernel_verilog
from .model import KernelModel
from .plan import leaf_regions, split_records, tree_plan

__all__ = ["KernelConfig", "PRESETS", "config_from", "TopSortKernel", "kernel_verilog",
           "kernel_arguments", "STATUS_BITS", "KernelModel", "tree_plan", "leaf_regions",
           "split_records"]
