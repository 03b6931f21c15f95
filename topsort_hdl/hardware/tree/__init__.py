"""Merge trees (p, l), couplers, leaf buffers and the phase-2 merge-tree reuse switch."""

from .coupler import Coupler
from .merge_tree import MergeTree, tree_rates
from .reuse import PHASE1, PHASE2, ReuseSwitch

__all__ = ["Coupler", "MergeTree", "tree_rates", "ReuseSwitch", "PHASE1", "PHASE2"]
