"""The reference sort every simulated sort is checked against."""

import numpy as np

__all__ = ["reference_sort"]


def reference_sort(records):
    """Return ``records`` stably sorted by key.

    ``records`` is either a sequence of ``(key, value)`` pairs (a list comes back) or a NumPy
    structured array with ``key`` and ``value`` fields (an array comes back).
    """
    if isinstance(records, np.ndarray):
        return records[np.argsort(records["key"], kind="stable")]
    return sorted(records, key=lambda record: record[0])
