"""Padding: how runs that do not fill whole bundles, and empty runs, travel through a tree.

Inside a merge tree every record has one more key bit, at the top: the *pad* flag. A pad record
(flag set, key and value zero) sorts after every real key, so merge units need no special case:
pads stay at the end of each run and are dropped by whoever writes the run out. A run whose
length is not a multiple of the bundle width ends with pads; an empty run is one bundle of pads
with ``last`` set. Every real key value, 0 and all-ones included, stays legal.
"""

from .layout import RecordLayout

__all__ = ["tree_record", "pad_key", "is_pad", "pad_run", "strip_pads"]


def tree_record(record):
    """Return the layout of ``record`` inside a tree: the key widened by the pad flag."""
    if not isinstance(record, RecordLayout):
        raise TypeError(f"record must be a RecordLayout, not {record!r}")
    return RecordLayout(record.key_bits + 1, record.value_bits)


def pad_key(padded):
    """Return the key of a pad record in the tree record layout ``padded``."""
    return 1 << (padded.key_bits - 1)


def is_pad(padded, key):
    """Return whether ``key`` (of the tree record layout ``padded``) marks a pad record."""
    return bool(key >> (padded.key_bits - 1))


def pad_run(records, rate, padded):
    """Split one sorted run of ``(key, value)`` records into bundles of ``rate``, filling the
    last bundle with pad records; an empty run becomes one bundle of pads."""
    pad = (pad_key(padded), 0)
    bundles = [list(records[i : i + rate]) for i in range(0, len(records), rate)] or [[]]
    bundles[-1] += [pad] * (rate - len(bundles[-1]))
    return bundles


def strip_pads(records, padded):
    """Return ``records`` without the pad records."""
    return [record for record in records if not is_pad(padded, record[0])]
