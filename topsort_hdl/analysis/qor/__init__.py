"""Quality of results: resource estimates and logic levels (Yosys), RTL cycle counts of
benchmark sorts with the performance model checked against them, generator time and memory, and
Fmax and area after a real place and route (nextpnr-ecp5), kept as golden figures with a band
each (``make qor``, ``make qor-update``; format and policy in
:mod:`topsort_hdl.analysis.regression`)."""

from ..regression import check, load, save, update
from .resources import estimate_resources, resource_table
from .run import (
    MODEL_TOLERANCE,
    PARTS,
    RESOURCE_CONFIGS,
    model_errors,
    pnr_figures,
    pnr_table,
    resource_figures,
    run_qor,
    sort_figures,
)

__all__ = ["PARTS", "RESOURCE_CONFIGS", "MODEL_TOLERANCE", "run_qor", "model_errors",
           "resource_figures", "sort_figures", "pnr_figures", "pnr_table", "check", "load",
           "save", "update",
           "estimate_resources", "resource_table"]
