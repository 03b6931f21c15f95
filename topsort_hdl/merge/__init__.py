"""Merge units: compare-swap cells, bitonic merge networks and the MMS streaming merge unit."""

from .bitonic import BitonicMergeNetwork, BitonicMerger, merge_layers
from .cas import CompareSwap
from .mms import MmsMergeUnit

__all__ = ["CompareSwap", "BitonicMergeNetwork", "BitonicMerger", "merge_layers",
           "MmsMergeUnit"]
