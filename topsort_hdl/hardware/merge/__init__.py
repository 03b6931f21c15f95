"""Merge units: compare-swap cells, bitonic merge networks, the MMS streaming merge unit and
the rate-1 selector merge unit."""

from .bitonic import BitonicMergeNetwork, BitonicMerger, merge_layers
from .cas import CompareSwap
from .mms import MmsMergeUnit
from .select_unit import SelectMergeUnit

__all__ = ["CompareSwap", "BitonicMergeNetwork", "BitonicMerger", "merge_layers",
           "MmsMergeUnit", "SelectMergeUnit"]
