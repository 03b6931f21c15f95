"""Golden models in pure Python: the oracle of every hardware test.

They describe *what* the hardware must emit, bundle by bundle, and never import hardware.
"""

from .bitonic import bitonic_merge, compare_swap
from .memory import batch_chunks, read_bursts
from .mms import MmsModel
from .sort import reference_sort

__all__ = ["reference_sort", "compare_swap", "bitonic_merge", "MmsModel", "batch_chunks",
           "read_bursts"]
