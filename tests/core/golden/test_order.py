"""The key orders (core/golden/order.py) against comparators written independently: Python's
integers for two's complement, and IEEE 754 totalOrder from its definition on decoded values."""

import math
import random
import struct

import numpy as np
import pytest

from topsort_hdl.core.contract import order_key
from topsort_hdl.core.golden.order import check_key_order, order_keys, ordered, restore_keys
from topsort_hdl.core.golden.workloads import special_keys

FLOAT = {32: ("<f", "<I", 23), 64: ("<d", "<Q", 52)}


def float_bits(width, value):
    pack, bits, _ = FLOAT[width]
    return struct.unpack(bits, struct.pack(pack, value))[0]


def total_order(width, bits):
    """A sort key of IEEE 754 totalOrder (clause 5.10), from the value a float decodes to:
    negative NaNs first (a larger payload first), then numbers by value with -0 before +0, then
    positive NaNs (a larger payload last)."""
    pack, pattern, fraction = FLOAT[width]
    value = struct.unpack(pack, struct.pack(pattern, bits))[0]
    negative = bits >> (width - 1)
    if math.isnan(value):
        payload = bits & ((1 << fraction) - 1)
        return (-1, -payload) if negative else (1, payload)
    return (0, value, not negative)


def adversarial_floats(width, rng):
    """The special keys (NaNs of both signs and several payloads, +-0, +-inf, subnormals, the
    extremes), twice (equal keys), and random bit patterns."""
    special = special_keys("float", width)
    return special + special + [rng.getrandbits(width) for _ in range(300)]


def test_special_float_keys_are_what_they_say():
    for width, (pack, bits, _) in FLOAT.items():
        values = [struct.unpack(pack, struct.pack(bits, k))[0] for k in special_keys("float",
                                                                                     width)]
        assert sum(map(math.isnan, values)) >= 8     # (all-ones is a NaN too)
        assert {1.0, -1.0, math.inf, -math.inf} <= set(values)
        assert any(v == 0 and math.copysign(1, v) < 0 for v in values)
        assert any(0 < abs(v) < (1.18e-38 if width == 32 else 2.3e-308) for v in values)


@pytest.mark.parametrize("width", [32, 64])
@pytest.mark.parametrize("descending", [False, True])
def test_float_keys_follow_total_order(width, descending):
    keys = adversarial_floats(width, random.Random(width))
    random.Random(1).shuffle(keys)
    got = [keys[i] for i in ordered(keys, "float", width, descending)]
    want = sorted(keys, key=lambda bits: total_order(width, bits), reverse=descending)
    assert [total_order(width, b) for b in got] == [total_order(width, b) for b in want]
    assert sorted(got) == sorted(keys)


@pytest.mark.parametrize("width", [8, 32, 64])
@pytest.mark.parametrize("descending", [False, True])
def test_signed_and_unsigned_keys(width, descending):
    rng = random.Random(width)
    top = (1 << width) - 1
    keys = [0, 1, top, top >> 1, (top >> 1) + 1, 7, 7] + [rng.getrandbits(width)
                                                           for _ in range(300)]

    def signed(bits):
        return bits - (1 << width) if bits >> (width - 1) else bits
    for key_type, value in (("unsigned", int), ("signed", signed)):
        got = [keys[i] for i in ordered(keys, key_type, width, descending)]
        assert [value(k) for k in got] == sorted(map(value, keys), reverse=descending)


def test_equal_keys_keep_their_input_order():
    keys = [3, 1, 3, 1, 3]
    assert list(ordered(keys)) == [1, 3, 0, 2, 4]
    assert list(ordered(keys, descending=True)) == [0, 2, 4, 1, 3]


@pytest.mark.parametrize("key_type,width", [("unsigned", 32), ("signed", 64), ("float", 32),
                                            ("float", 64)])
@pytest.mark.parametrize("descending", [False, True])
def test_the_transform_is_undone_bit_for_bit(key_type, width, descending):
    rng = random.Random(3)
    keys = np.array([rng.getrandbits(width) for _ in range(1000)]
                    + adversarial_floats(width, rng),
                    dtype=np.uint32 if width == 32 else np.uint64)
    there = order_keys(keys, key_type, width, descending)
    assert there.dtype == keys.dtype
    assert np.array_equal(restore_keys(there, key_type, width, descending), keys)


@pytest.mark.parametrize("key_type,width,message", [
    ("decimal", 32, "key_type must be one of unsigned, signed, float, not 'decimal'"),
    ("float", 16, "key_bits must be 32 or 64 for float keys"),
    ("signed", 65, "key_bits must be between 1 and 64, not 65"),
])
def test_key_order_errors(key_type, width, message):
    with pytest.raises(ValueError, match=message):
        check_key_order(key_type, width)


@pytest.mark.parametrize("key_type,width", [("unsigned", 32), ("signed", 32), ("signed", 64),
                                            ("float", 32), ("float", 64)])
@pytest.mark.parametrize("descending", [False, True])
def test_the_hosts_key_is_the_models(key_type, width, descending):
    """The contract's scalar order_key (what host.py checks with) is order_keys, key by key."""
    keys = special_keys(key_type, width) + [random.Random(width).getrandbits(width)
                                            for _ in range(100)]
    assert [order_key(k, width, key_type, descending) for k in keys] == \
        order_keys(keys, key_type, width, descending).tolist()
