"""Key types and orders as the kernel sorts them.

The merge logic compares unsigned keys only. Every key type and order maps to unsigned keys
whose ascending order is the one asked for, by an order-preserving bijection on the key's bits
(``T``): the identity for unsigned keys, the sign bit flipped for two's complement, and for IEEE
754 floats every bit inverted when the sign bit is set, else the sign bit set (totalOrder:
-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN, NaNs by payload); descending inverts every bit
of that. The kernel applies it where records enter it and undoes it where they leave
(docs/record-formats.md); the golden model sorts by it.

Keys are NumPy arrays of unsigned integers (``uint32`` up to 32 key bits, ``uint64`` up to 64),
their bits as the host wrote them.
"""

import numpy as np

from ..contract import KEY_TYPE_CODES
from ..params import check_range

__all__ = ["KEY_TYPES", "FLOAT_KEY_BITS", "check_key_order", "key_dtype", "order_keys",
           "restore_keys", "ordered"]

KEY_TYPES = tuple(KEY_TYPE_CODES)
FLOAT_KEY_BITS = (32, 64)       # IEEE 754 binary32 and binary64


def check_key_order(key_type, key_bits):
    """Raise ``ValueError`` unless ``key_type`` is one of :data:`KEY_TYPES` for keys of
    ``key_bits`` (1 to 64; 32 or 64 for floats)."""
    if key_type not in KEY_TYPES:
        raise ValueError(f"key_type must be one of {', '.join(KEY_TYPES)}, not {key_type!r}")
    check_range("key_bits", key_bits, 1, 64)
    if key_type == "float" and key_bits not in FLOAT_KEY_BITS:
        raise ValueError(f"key_bits must be 32 or 64 for float keys (binary32, binary64), not "
                         f"{key_bits}")


def key_dtype(key_bits):
    """The unsigned NumPy type that holds keys of ``key_bits``."""
    return np.dtype(np.uint32 if key_bits <= 32 else np.uint64)


def _masks(key_bits):
    dtype = key_dtype(key_bits)
    return dtype, dtype.type((1 << key_bits) - 1), dtype.type(1 << (key_bits - 1))


def order_keys(keys, key_type="unsigned", key_bits=32, descending=False):
    """``T(keys)``: unsigned keys whose ascending order is ``key_type``'s order of ``keys``
    (``descending``: its reverse), as an array of :func:`key_dtype`."""
    check_key_order(key_type, key_bits)
    dtype, mask, sign = _masks(key_bits)
    keys = np.asarray(keys, dtype=dtype)
    if key_type == "signed":
        keys = keys ^ sign
    elif key_type == "float":
        keys = np.where(keys & sign, ~keys & mask, keys | sign).astype(dtype)
    return (~keys & mask).astype(dtype) if descending else keys


def restore_keys(ordered_keys, key_type="unsigned", key_bits=32, descending=False):
    """The inverse of :func:`order_keys`: the host's keys back from ``T(keys)``."""
    check_key_order(key_type, key_bits)
    dtype, mask, sign = _masks(key_bits)
    keys = np.asarray(ordered_keys, dtype=dtype)
    if descending:
        keys = (~keys & mask).astype(dtype)
    if key_type == "signed":
        keys = keys ^ sign
    elif key_type == "float":       # a set sign bit here was a clear one in the key
        keys = np.where(keys & sign, keys & ~sign & mask, ~keys & mask).astype(dtype)
    return keys


def ordered(keys, key_type="unsigned", key_bits=32, descending=False):
    """The indices that put ``keys`` in the order asked for, equal keys in their input order
    (a stable sort: the order the kernel gives when equal keys are ordered by a row index)."""
    return np.argsort(order_keys(keys, key_type, key_bits, descending), kind="stable")
