"""Records, bundles and the parameters every block shares."""

from .layout import BundleLayout, RecordLayout, bundle_layout
from .params import check_positive, check_power_of_two, check_range

__all__ = [
    "RecordLayout",
    "BundleLayout",
    "bundle_layout",
    "check_positive",
    "check_power_of_two",
    "check_range",
]
