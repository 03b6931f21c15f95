"""The record format in NumPy (topsort_hdl/host/records.py): dtypes, packing, unpacking."""

import random
import struct

import numpy as np
import pytest

from topsort_hdl.host import pack_records, record_dtype, unpack_array, unpack_records


@pytest.mark.parametrize("key_bits,value_bits,dtype", [
    (32, 32, [("value", "<u4"), ("key", "<u4")]),
    (64, 64, [("value", "<u8"), ("key", "<u8")]),
    (64, 32, [("value", "<u4"), ("key", "<u8")]),
    (32, 0, "<u4"),
    (64, 0, "<u8"),
    (32, 96, [("value", "<u4", (3,)), ("key", "<u4")]),
])
def test_record_dtypes(key_bits, value_bits, dtype):
    assert record_dtype(key_bits, value_bits) == np.dtype(dtype)
    assert record_dtype(key_bits, value_bits).itemsize * 8 == key_bits + value_bits


@pytest.mark.parametrize("key_bits,value_bits,message", [
    (40, 24, "key_bits must be 32 or 64 for a NumPy record, not 40"),
    (64, 96, "value_bits must be 0, 32 or 64 \\(96 with 32-bit keys\\) for a NumPy record, not 96"),
])
def test_record_dtype_errors(key_bits, value_bits, message):
    with pytest.raises(ValueError, match=message):
        record_dtype(key_bits, value_bits)


def test_pairs_pack_as_the_record_file_format():
    rng = random.Random(2)
    pairs = [(0, 0), (2**32 - 1, 2**32 - 1), (7, 1)] + [
        (rng.getrandbits(32), rng.getrandbits(32)) for _ in range(500)]
    data = pack_records(pairs)
    assert data == b"".join(struct.pack("<II", value, key) for key, value in pairs)
    assert unpack_records(data) == pairs
    assert pack_records([]) == b"" and unpack_records(b"") == []


@pytest.mark.parametrize("key_bits,value_bits", [(32, 32), (64, 64), (32, 0), (64, 0),
                                                 (32, 96)])
def test_arrays_round_trip_as_little_endian_words(key_bits, value_bits):
    rng = random.Random(key_bits + value_bits)
    pairs = [(rng.getrandbits(key_bits), rng.getrandbits(value_bits) if value_bits else 0)
             for _ in range(300)] + [((1 << key_bits) - 1, 0)]
    data = pack_records(pairs, key_bits, value_bits)
    width = (key_bits + value_bits) // 8
    # One little-endian integer per record, the key in its upper bits.
    assert data == b"".join(((k << value_bits) | v).to_bytes(width, "little") for k, v in pairs)
    array = unpack_array(data, key_bits, value_bits)
    assert array.dtype == record_dtype(key_bits, value_bits) and len(array) == len(pairs)
    assert pack_records(array, key_bits, value_bits) == data
    assert unpack_records(data, key_bits, value_bits) == pairs
    array[0] = array[1]     # a copy: the caller's bytes stay as they were
    assert unpack_records(data, key_bits, value_bits) == pairs


def test_arrays_in_another_byte_order_or_type_pack_by_value():
    big = np.array([(1, 2)], dtype=[("value", ">u4"), ("key", ">u4")])
    assert pack_records(big) == pack_records([(2, 1)])
    assert pack_records(np.array([-1], dtype=np.int32), 32, 0) == b"\xff" * 4
    with pytest.raises(TypeError, match="records must be an array of uint32 .the record's "
                                        "bits., not float32"):
        pack_records(np.array([1.5], dtype=np.float32), 32, 0)
