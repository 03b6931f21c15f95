"""Bitonic merge of two sorted bundles, comparison by comparison.

The model performs the same compare-swaps as the hardware network (half-cleaners applied
recursively to ``a + reversed(b)``), with the same tie rule (equal keys never swap), so it
predicts where every record lands, equal keys included.
"""

__all__ = ["compare_swap", "bitonic_merge", "half_clean"]


def compare_swap(low, high, descending=False):
    """Return ``(low, high)`` ordered by key; records with equal keys keep their places."""
    if (low[0] < high[0]) if descending else (low[0] > high[0]):
        return high, low
    return low, high


def bitonic_merge(a, b, descending=False):
    """Merge two sorted bundles of ``(key, value)`` records into one sorted list.

    Parameters
    ----------
    a, b : sequence of (key, value)
        Bundles of the same power-of-two length, each sorted (ascending, or descending when
        ``descending``).

    Returns
    -------
    list of (key, value)
        The ``2 * len(a)`` records in order.
    """
    if len(a) != len(b):
        raise ValueError(f"bundles must have the same length, not {len(a)} and {len(b)}")
    n = len(a)
    if n < 1 or n & (n - 1):
        raise ValueError(f"bundle length must be a power of two, not {n}")
    sequence = list(a) + list(reversed(b))
    _half_clean(sequence, 0, 2 * n, descending)
    return sequence


def half_clean(sequence, descending=False):
    """Sort a bitonic sequence (rotations included) of power-of-two length by the cascade of
    half-cleaners a bitonic merge network ends with, the same compare-swaps and tie rule."""
    n = len(sequence)
    if n < 1 or n & (n - 1):
        raise ValueError(f"sequence length must be a power of two, not {n}")
    sequence = list(sequence)
    _half_clean(sequence, 0, n, descending)
    return sequence


def _half_clean(sequence, start, length, descending):
    if length == 1:
        return
    half = length // 2
    for i in range(start, start + half):
        sequence[i], sequence[i + half] = compare_swap(sequence[i], sequence[i + half], descending)
    _half_clean(sequence, start, half, descending)
    _half_clean(sequence, start + half, half, descending)
