"""Validation of parameters: every error names the parameter, the value and what is allowed.

Plain Python (no Amaranth): the configuration, the golden models and the hardware blocks all
check their parameters with these.
"""

__all__ = ["COUNT_BITS", "MAX_MERGE_RATE", "MERGE_UNITS", "check_merge_unit", "check_bool",
           "check_int",
           "check_positive", "check_at_least", "check_power_of_two", "check_range",
           "MAX_FIELD_BITS", "check_record_widths"]

# The widest merge unit, in records per cycle: phase 2's root in the paper's U280 shape (4
# trees of 8 records per cycle). The MMS unit and its bitonic network, the root packer that
# packs a root's output, the MMS model and `topsort-hdl bench mms` all take this limit.
MAX_MERGE_RATE = 32
# The streaming merge units a tree can be built of: MMS (the paper's) and FLiMS (the same
# contract at about half the compare-swaps; docs/merge-units.md).
COUNT_BITS = 40         # record counts in the hardware: 2^40 records is far beyond any HBM board
MERGE_UNITS = ("mms", "flims")
# A field of a record: a 16-byte record compared whole (equal keys ordered by value) is a
# 128-bit key, and 129 bits inside a merge tree (its pad flag above the key).
MAX_FIELD_BITS = 256


def check_merge_unit(value, name="merge_unit"):
    """Return ``value`` if it names a merge unit in :data:`MERGE_UNITS`, else raise."""
    if value not in MERGE_UNITS:
        raise ValueError(f"{name} must be one of {', '.join(MERGE_UNITS)}, not {value!r}")
    return value


def check_bool(name, value):
    """Return ``value`` if it is ``True`` or ``False``, else raise ``TypeError`` (a string such
    as ``"no"`` is true in Python: taking it would do the opposite of what it says)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def check_int(name, value):
    """Return ``value`` if it is an integer (``bool`` excluded), else raise ``TypeError``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    return value


def check_positive(name, value):
    """Return ``value`` if it is an integer >= 1, else raise."""
    check_int(name, value)
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, not {value}")
    return value


def check_at_least(name, value, low):
    """Return ``value`` if it is an integer >= ``low``, else raise."""
    check_int(name, value)
    if value < low:
        raise ValueError(f"{name} must be at least {low}, not {value}")
    return value


def check_range(name, value, low, high):
    """Return ``value`` if it is an integer in ``[low, high]``, else raise."""
    check_int(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, not {value}")
    return value


def check_power_of_two(name, value, high=None, low=1):
    """Return ``value`` if it is a power of two (1, 2, 4, ...) in ``[low, high]``."""
    check_int(name, value)
    if value < 1 or value & (value - 1) or value < low or (high is not None and value > high):
        allowed = "a power of two"
        if high is not None:
            allowed += f" between {low} and {high}"
        elif low > 1:
            allowed += f" of at least {low}"
        raise ValueError(f"{name} must be {allowed}, not {value}")
    return value


def check_record_widths(key_bits, value_bits):
    """Check the widths of a key-value record: a key of 1 to :data:`MAX_FIELD_BITS` bits, a
    value of 0 to :data:`MAX_FIELD_BITS` (what :class:`~topsort_hdl.hardware.records.RecordLayout`
    accepts)."""
    check_range("key_bits", key_bits, 1, MAX_FIELD_BITS)
    check_range("value_bits", value_bits, 0, MAX_FIELD_BITS)
