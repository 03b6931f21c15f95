"""Records, bundles and the parameters every block shares (the checks live in the plain-Python
:mod:`topsort_hdl.core.params`, which the configuration and the golden models use without
Amaranth)."""

from ...core.params import (
    MAX_MERGE_RATE,
    check_at_least,
    check_int,
    check_positive,
    check_power_of_two,
    check_range,
)
from ...core.tree_shape import MAX_LEAVES
from .layout import BundleLayout, RecordLayout, flat_field
from .padding import is_pad, pad_key, pad_run, strip_pads, tree_record

__all__ = [
    "RecordLayout",
    "BundleLayout",
    "flat_field",
    "MAX_MERGE_RATE",
    "MAX_LEAVES",
    "check_int",
    "check_positive",
    "check_at_least",
    "check_power_of_two",
    "check_range",
    "tree_record",
    "pad_key",
    "is_pad",
    "pad_run",
    "strip_pads",
]
