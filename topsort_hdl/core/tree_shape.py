"""The shape of merge trees, in plain Python: which shapes (p, l) are allowed and the rate of
the merge units on each level.

The trees (:mod:`topsort_hdl.hardware.tree`) are built from these and the performance model
(:mod:`topsort_hdl.analysis.perf.model`) predicts from them, so both read one rule. (The golden tree
model writes the paper's rule again on purpose: it does not take the hardware's.)
"""

from .params import check_int, check_power_of_two

__all__ = ["MAX_LEAVES", "check_tree_shape", "tree_rates", "extra_rates"]

MAX_LEAVES = 256


def tree_rates(rate, leaves):
    """Return the merge-unit rate of each level, root first: ``max(1, rate >> level)``."""
    levels = leaves.bit_length() - 1
    return [max(1, rate >> level) for level in range(levels)]


def check_tree_shape(rate, leaves):
    """Validate a tree shape (p, l); raise naming the parameter and what is allowed."""
    check_int("leaves", leaves)
    if leaves < 2 or leaves > MAX_LEAVES or leaves & (leaves - 1):
        raise ValueError(f"leaves must be a power of two between 2 and {MAX_LEAVES}, "
                         f"not {leaves}")
    check_power_of_two("rate", rate)
    if rate > leaves:
        raise ValueError(f"rate must be a power of two no larger than leaves ({leaves}), "
                         f"not {rate}")


def extra_rates(rate, trees):
    """Rates of the merge units phase 2 adds over ``trees`` trees of ``rate``, root first."""
    return [rate * trees >> level for level in range(trees.bit_length() - 1)]
