"""Exact co-ranks against a brute-force merge in (key, run, position) order."""

import random

import pytest

from topsort_hdl.core.golden.corank import co_ranks, split_ranks


def runs_of(rng, count, key_bits):
    top = (1 << key_bits) - 1
    lengths = [rng.choice([0, 1, 2, rng.randrange(40)]) for _ in range(count)]
    return [sorted((rng.choice([0, top, top // 2, rng.randrange(top + 1)]), (r, p))
                   for p in range(n)) for r, n in enumerate(lengths)]


def brute_cuts(runs, rank):
    order = sorted((record[0], r, p) for r, run in enumerate(runs) for p, record in
                   enumerate(run))
    cuts = [0] * len(runs)
    for _, r, _ in order[:rank]:
        cuts[r] += 1
    return cuts


@pytest.mark.parametrize("key_bits", [2, 5, 32])
def test_co_ranks_are_exact_for_every_rank(key_bits):
    rng = random.Random(key_bits)
    for _ in range(40):
        runs = runs_of(rng, rng.choice([1, 2, 5, 8]), key_bits)
        total = sum(map(len, runs))
        for rank in range(total + 1):
            found = co_ranks(runs, rank, key_bits)
            assert list(found.cuts) == brute_cuts(runs, rank), (runs, rank)
            if rank < total:       # the key at the rank is the rank-th record's
                order = sorted(r[0] for run in runs for r in run)
                assert found.key == order[rank]


def test_parts_merge_to_the_whole_and_are_equal():
    rng = random.Random(7)
    runs = runs_of(rng, 16, 4)                     # 16 keys at most: ties everywhere
    total = sum(map(len, runs))
    ranks = split_ranks(total, 3)
    cuts = [co_ranks(runs, rank, 4).cuts for rank in ranks]
    whole = sorted((record[0], r, p) for r, run in enumerate(runs)
                   for p, record in enumerate(run))
    merged = []
    for start, end in zip(cuts, cuts[1:], strict=False):
        part = sorted((run[p][0], r, p) for r, run in enumerate(runs)
                      for p in range(start[r], end[r]))
        assert len(part) in (total // 3, total // 3 + 1)
        merged += part
    assert merged == whole


def test_probes_grow_with_key_bits_and_runs_not_records():
    # The engine's time: key bits x runs x log2(run length), for any data.
    runs = [[(k, 0) for k in sorted(random.Random(r).choices(range(1 << 32), k=1000))]
            for r in range(8)]
    probes = co_ranks(runs, 4000, 32).probes
    assert probes <= (32 + 2) * 8 * 10


def test_bad_ranks_and_the_ends():
    runs = [[(1, 0), (2, 0)], []]
    assert co_ranks(runs, 0, 8).cuts == (0, 0)
    assert co_ranks(runs, 2, 8).cuts == (2, 0)
    assert split_ranks(10, 3) == [0, 4, 7, 10]
    with pytest.raises(ValueError, match="rank must be between 0 and 2, not 3"):
        co_ranks(runs, 3, 8)
