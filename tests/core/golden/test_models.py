"""The golden models, checked against plain sorts on random and adversarial data."""

import random

import numpy as np
import pytest

from topsort_hdl.core.golden import MmsModel, bitonic_merge, reference_sort
from topsort_hdl.core.golden.flims import FlimsModel, flims_comparators
from topsort_hdl.core.golden.workloads import (
    FEW_DISTINCT_KEYS,
    INPUT_ORDERS,
    KEY_PATTERNS,
    make_input,
    make_run_pair,
    make_runs,
)
from topsort_hdl.hardware.records import BundleLayout, RecordLayout


def test_reference_sort_is_stable_on_lists_and_arrays():
    records = [(3, 0), (1, 1), (3, 2), (0, 3), (1, 4)]
    assert reference_sort(records) == [(0, 3), (1, 1), (1, 4), (3, 0), (3, 2)]
    array = np.array(records, dtype=[("key", "<u4"), ("value", "<u4")])
    assert reference_sort(array)["value"].tolist() == [3, 1, 4, 0, 2]


@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16, 32])
@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_merge_sorts_and_keeps_records(rate, descending):
    rng = random.Random(rate)
    for _ in range(200):
        high = rng.choice([1, 3, 2**32 - 1])
        a = sorted(((rng.randint(0, high), rng.randrange(1 << 32)) for _ in range(rate)),
                   reverse=descending)
        b = sorted(((rng.randint(0, high), rng.randrange(1 << 32)) for _ in range(rate)),
                   reverse=descending)
        merged = bitonic_merge(a, b, descending)
        assert sorted(merged) == sorted(a + b)
        keys = [key for key, _ in merged]
        assert keys == sorted(keys, reverse=descending)


def test_bitonic_merge_rejects_bad_bundles():
    with pytest.raises(ValueError, match="same length"):
        bitonic_merge([(1, 0)], [(1, 0), (2, 0)])
    with pytest.raises(ValueError, match="power of two, not 3"):
        bitonic_merge([(1, 0)] * 3, [(1, 0)] * 3)


def test_mms_model_worked_example():
    # The MMS walk-through, E = 4.
    a = [[(1, 0), (2, 0), (9, 0), (10, 0)], [(11, 0), (12, 0), (13, 0), (14, 0)]]
    b = [[(3, 0), (4, 0), (5, 0), (6, 0)], [(7, 0), (8, 0), (15, 0), (16, 0)]]
    out = MmsModel(4).merge_run(a, b)
    assert [[key for key, _ in bundle] for bundle, _ in out] == [
        [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]]
    assert [last for _, last in out] == [False, False, False, True]


@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("pattern", sorted(KEY_PATTERNS))
def test_mms_model_merges_exactly(rate, pattern):
    rng = random.Random(f"{rate}-{pattern}")
    model = MmsModel(rate)
    for _ in range(20):
        a, b = make_run_pair(rng, rate, pattern, max_bundles=12)
        out = model.merge_run(a, b)
        assert len(out) == len(a) + len(b)
        assert [last for _, last in out] == [False] * (len(out) - 1) + [True]
        records = [record for bundle, _ in out for record in bundle]
        inputs = [record for run in (a, b) for bundle in run for record in bundle]
        assert [key for key, _ in records] == [key for key, _ in reference_sort(inputs)]
        assert sorted(records) == sorted(inputs)


def test_mms_model_alternates_on_ties():
    model = MmsModel(2)
    run = [[(5, 0), (5, 1)], [(5, 2), (5, 3)]]
    other = [[(5, 10), (5, 11)], [(5, 12), (5, 13)]]
    out = model.merge_run(run, other)
    values = [value for bundle, _ in out for _, value in bundle]
    # A, B, A, B: equal keys keep the order in which their bundles were taken.
    assert values == [0, 1, 10, 11, 2, 3, 12, 13]
    assert model.ties == 3  # the fourth step has only B left: no comparison


def test_mms_model_rejects_empty_runs_and_bad_bundles():
    with pytest.raises(ValueError, match="a_run must hold at least one bundle"):
        MmsModel(2).merge_run([], [[(1, 0), (2, 0)]])
    with pytest.raises(ValueError, match="every bundle of b_run must hold 2 records"):
        MmsModel(2).merge_run([[(1, 0), (2, 0)]], [[(1, 0)]])


def test_layout_packs_like_the_file_format():
    record = RecordLayout()
    assert record.size == 64
    word = record.pack(0xDEADBEEF, 0x12345678)
    assert word == 0xDEADBEEF_12345678  # key in the upper 32 bits
    array = np.array([word], dtype="<u8").view([("value", "<u4"), ("key", "<u4")])
    assert (int(array["key"][0]), int(array["value"][0])) == (0xDEADBEEF, 0x12345678)
    bundle = BundleLayout(record, 2)
    packed = bundle.pack([(1, 2), (3, 4)], last=True)
    assert packed >> 128 == 1
    assert bundle.unpack(packed) == ([(1, 2), (3, 4)], True)


@pytest.mark.parametrize("key_bits", [32, 64])
def test_input_orders_are_what_they_say(key_bits):
    rng = random.Random(5)
    for order in INPUT_ORDERS:
        records = make_input(rng, 1000, order, key_bits)
        keys = [k for k, _ in records]
        assert [v for _, v in records] == list(range(1000))
        assert all(0 <= k < 1 << key_bits for k in keys)
        if order == "sorted":
            assert keys == sorted(keys)
        elif order == "reversed":
            assert keys == sorted(keys, reverse=True)
        elif order == "nearly-sorted":       # 1% replaced: at most 2 x 10 descents
            assert 0 < sum(a > b for a, b in zip(keys, keys[1:], strict=False)) <= 20
        elif order == "few-distinct":
            assert {0, (1 << key_bits) - 1} <= set(keys) and len(set(keys)) <= FEW_DISTINCT_KEYS
        else:
            assert keys != sorted(keys) and len(set(keys)) > 990
    with pytest.raises(ValueError, match="order must be one of random, sorted, reversed, "):
        make_input(rng, 10, "zipf")


@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16, 32])
@pytest.mark.parametrize("pattern", list(KEY_PATTERNS))
def test_flims_model_merges_exactly(rate, pattern):
    # Its own invariants are asserted on every cycle; here: the output is the merge by key, the
    # same records (equal keys, 0 and all-ones among the patterns), one bundle per input bundle.
    rng = random.Random(rate * 31 + len(pattern))
    model = FlimsModel(rate)
    for a_run, b_run in make_runs(rng, rate, 12, [pattern], max_bundles=6):
        out = model.merge_run(a_run, b_run)
        records = [r for bundle, _ in out for r in bundle]
        assert [last for _, last in out] == [False] * (len(out) - 1) + [True]
        assert len(out) == len(a_run) + len(b_run)
        assert all(len(bundle) == rate for bundle, _ in out)
        a = [r for bundle in a_run for r in bundle]
        b = [r for bundle in b_run for r in bundle]
        assert [k for k, _ in records] == sorted(k for k, _ in a + b)
        assert sorted(records) == sorted(a + b)


def test_flims_model_against_mms_and_its_comparators():
    # The same merge as MMS up to the order of equal keys; half MMS's compare-swaps or fewer.
    rng = random.Random(3)
    for rate in (2, 4, 8):
        for a_run, b_run in make_runs(rng, rate, 20):
            flims = FlimsModel(rate).merge_run(a_run, b_run)
            mms = MmsModel(rate).merge_run(a_run, b_run)
            assert [[k for k, _ in bundle] for bundle, _ in flims] == \
                [[k for k, _ in bundle] for bundle, _ in mms]
    assert [flims_comparators(e) for e in (1, 2, 4, 8, 16, 32)] == [1, 3, 8, 20, 48, 112]
    with pytest.raises(ValueError, match="every bundle of b_run must hold 4 records"):
        FlimsModel(4).merge_run([[(1, 0)] * 4], [[(1, 0)] * 3])


def test_flims_model_alternates_the_side_given_equal_keys():
    # Every selector gives a tie to one side in a cycle, the side alternating by cycle (kept
    # across runs): all-equal keys come out a bundle of A's, then one of B's, and so on.
    model = FlimsModel(2)
    a_run = [[(5, 0), (5, 1)], [(5, 2), (5, 3)]]
    b_run = [[(5, 10), (5, 11)], [(5, 12), (5, 13)]]
    values = [[v for _, v in bundle] for bundle, _ in model.merge_run(a_run, b_run)]
    assert values == [[0, 1], [11, 10], [2, 3], [13, 12]]
    model.merge_run([[(1, 0), (2, 0)]], [[(3, 0), (4, 0)]])
    out = model.merge_run([[(7, 0), (7, 1)]], [[(7, 2), (7, 3)]])
    assert [[v for _, v in bundle] for bundle, _ in out] == [[0, 1], [3, 2]]
