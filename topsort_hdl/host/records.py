"""The record format, in memory and in record files, with NumPy: one little-endian unsigned
integer of ``key_bits + value_bits`` bits per record, the key in its upper bits (the layout
descriptor's ``record``). A key-only record is the key itself; a key with a value is a
structured record, the value first (``[("value", "<u4"), ("key", "<u4")]`` for 32 + 32).
Packing and unpacking are NumPy operations: no Python loop over the records."""

import itertools

import numpy as np

__all__ = ["record_dtype", "pack_records", "unpack_array", "unpack_records"]


# A 96-bit value (beside a 32-bit key) is three little-endian 32-bit words, the lowest first.
WIDE_VALUE = (96, 3)


def record_dtype(key_bits=32, value_bits=32):
    """The NumPy dtype of one record: ``<u4``/``<u8`` for a key alone, else the structured
    ``[("value", ...), ("key", ...)]`` (keys of 32 or 64 bits, values of 0, 32, 64 or 96: a
    96-bit value is ``("value", "<u4", (3,))``, its lowest word first)."""
    if key_bits not in (32, 64):
        raise ValueError(f"key_bits must be 32 or 64 for a NumPy record, not {key_bits}")
    if value_bits == 0:
        return np.dtype(f"<u{key_bits // 8}")
    if value_bits == WIDE_VALUE[0] and key_bits == 32:
        return np.dtype([("value", "<u4", (WIDE_VALUE[1],)), ("key", "<u4")])
    if value_bits not in (32, 64):
        raise ValueError(f"value_bits must be 0, 32 or 64 (96 with 32-bit keys) for a NumPy "
                         f"record, not {value_bits}")
    return np.dtype([("value", f"<u{value_bits // 8}"), ("key", f"<u{key_bits // 8}")])


def _value_words(values):
    """Python integers of up to 96 bits as rows of three 32-bit words."""
    values = np.array(values, dtype=object)
    return np.stack([(values >> (32 * i) & 0xFFFFFFFF).astype(np.uint32)
                     for i in range(WIDE_VALUE[1])], axis=-1)


def pack_records(records, key_bits=32, value_bits=32):
    """The bytes of ``records`` in memory: an array of :func:`record_dtype` (or of the same
    fields in other integer types: their values are converted), or a sequence of ``(key,
    value)`` pairs."""
    dtype = record_dtype(key_bits, value_bits)
    if isinstance(records, np.ndarray):
        if records.dtype.names != dtype.names or (
                dtype.names is None and records.dtype.kind not in "ui"):
            raise TypeError(f"records must be an array of {dtype} (the record's bits), not "
                            f"{records.dtype}")
        return records.astype(dtype, copy=False).tobytes()     # (little-endian, C order)
    records = list(records)
    if value_bits == WIDE_VALUE[0]:
        array = np.empty(len(records), dtype)
        array["key"] = np.fromiter((key for key, _ in records), np.uint32, len(records))
        array["value"] = _value_words([value for _, value in records]).reshape(-1, 3)
        return array.tobytes()
    pairs = np.fromiter(itertools.chain.from_iterable(records), np.uint64,
                        2 * len(records)).reshape(-1, 2)
    if dtype.names is None:
        return pairs[:, 0].astype(dtype).tobytes()
    array = np.empty(len(pairs), dtype)
    array["key"], array["value"] = pairs[:, 0], pairs[:, 1]
    return array.tobytes()


def unpack_array(data, key_bits=32, value_bits=32):
    """The records of ``data`` (bytes in memory) as an array of :func:`record_dtype`."""
    return np.frombuffer(data, record_dtype(key_bits, value_bits)).copy()


def unpack_records(data, key_bits=32, value_bits=32):
    """The records of ``data`` as ``(key, value)`` pairs of Python integers."""
    array = unpack_array(data, key_bits, value_bits)
    if array.dtype.names is None:
        return [(key, 0) for key in array.tolist()]
    values = array["value"]
    if value_bits == WIDE_VALUE[0]:
        words = values.astype(object)
        values = words[:, 0] | words[:, 1] << 32 | words[:, 2] << 64
    return list(zip(array["key"].tolist(), values.tolist(), strict=True))
