"""Merge units: compare-swap cells, bitonic merge networks, the MMS and FLiMS streaming merge
units and the rate-1 selector merge unit."""

from .bitonic import BitonicMergeNetwork, BitonicMerger, merge_layers
from .cas import CompareSwap
from .flims import FlimsMergeUnit
from .mms import MmsMergeUnit
from .select_unit import SelectMergeUnit

__all__ = ["CompareSwap", "BitonicMergeNetwork", "BitonicMerger", "merge_layers",
           "FlimsMergeUnit", "MmsMergeUnit", "SelectMergeUnit"]
