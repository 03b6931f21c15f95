"""The two-phase TopSort kernel that ties trees, switch and AXI engines together.

The package itself is plain Python: it gives the configuration, the pass plan and the kernel
model, which the host side and the analyses use without Amaranth. The gateware is in
:mod:`.kernel` (``TopSortKernel``) and the blocks beside it; the Verilog (``kernel_verilog``)
and Vitis files come from :mod:`.generate`.
"""

from .config import PRESETS, KernelConfig, config_from
from .model import KernelModel
from .plan import leaf_regions, split_records, tree_plan

__all__ = ["KernelConfig", "PRESETS", "config_from", "KernelModel", "tree_plan", "leaf_regions",
           "split_records"]
