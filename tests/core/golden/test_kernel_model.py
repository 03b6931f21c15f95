"""Kernel configurations, the pass plan and the golden kernel model."""

import dataclasses
import random

import pytest

from topsort_hdl.core.config import PRESETS, KernelConfig, config_from
from topsort_hdl.core.golden.kernel import KernelModel
from topsort_hdl.core.plan import (
    Pass,
    leaf_regions,
    presorts,
    split_records,
    tree_plan,
    tree_plans,
)


@pytest.mark.parametrize("name", ["tiny", "small", "u280"])
def test_model_sorts_any_count(name):
    config = PRESETS[name]
    model = KernelModel(config)
    rng = random.Random(len(name))
    sizes = list(range(0, 70)) + [rng.randrange(1, 5000) for _ in range(10)]
    for count in sizes:
        records = [(rng.choice([0, 5, 2**32 - 1, rng.randrange(2**32)]), i)
                   for i in range(count)]
        ch = config.channel_bytes    # halves anywhere: tree i's in channels 2i+1 and 2i
        halves = [((2 * i + 1) * ch, 2 * i * ch) for i in range(config.trees)]
        out = model.run(records, halves)
        assert [k for k, _ in out] == sorted(k for k, _ in records)
        assert sorted(out) == sorted(records)
        assert all(plan.final_runs <= config.runs_per_tree for plan in model.plans)
        assert sum(n for _, _, n in model.chunks) == count * config.record_bytes


@pytest.mark.parametrize("key_type", ["unsigned", "signed", "float"])
@pytest.mark.parametrize("descending", [False, True])
def test_model_with_equal_keys_by_value_is_a_stable_sort(key_type, descending):
    """With row indices as values, equal keys ordered by value is a stable sort in the order
    asked for, in memory after phase 1 too; without it the keys are in order all the same."""
    from topsort_hdl.core.golden.order import ordered

    rng = random.Random(7)
    keys = [rng.choice([0, 1, 2**31, 2**32 - 1, rng.randrange(2**32)]) for _ in range(3000)]
    records = [(k, i) for i, k in enumerate(keys)]
    stable = [records[i] for i in ordered(keys, key_type, 32, descending)]
    for equal_keys in ("by_value", "any"):
        model = KernelModel(config_from("tiny", [f"equal_keys={equal_keys}"]), key_type,
                            descending)
        out = model.run(records)
        if equal_keys == "by_value":
            assert out == stable
        else:
            assert [k for k, _ in out] == [k for k, _ in stable]
            assert sorted(out) == sorted(records)


def test_paper_pass_count():
    # 4 GB on the U280: 2^29 records, 2^25 per tree; 16 leaves, 4 runs per tree at the end.
    plan = tree_plan(1 << 25, 16, 4)
    assert len(plan.passes) == 6 and plan.final_runs == 4
    assert [p.active for p in plan.passes] == [16] * 5 + [8]


def test_presort_starts_from_runs_of_a_beat():
    # u280 at capacity: 33,553,920 records a tree; runs of 8 need 5 passes where runs of 1
    # need 6 (16^5 x 8 x 4 = 33,554,432).
    records = 33_553_920
    assert len(tree_plan(records, 16, 4).passes) == 6
    plan = tree_plan(records, 16, 4, 8)
    assert [(p.run_length, p.active) for p in plan.passes] == [
        (8, 16), (128, 16), (2048, 16), (32768, 16), (524288, 16)]
    assert plan.passes[0].runs == records // 8 and plan.final_runs == 4
    # Runs of a beat only where they save a pass: 65 records need 2 passes from runs of 1
    # (65 > 4 x 16) and 1 from 9 runs of 8; 64 or 33 records need 1 either way, and then the
    # last pass is as wide or wider from runs of 1.
    assert tree_plan(65, 16, 4, 8).passes == (Pass(0, 8, 9, 4, 3),)
    for records in (64, 33, 32, 4):
        assert tree_plan(records, 16, 4, 8) == tree_plan(records, 16, 4)
    assert tree_plan(4, 16, 4, 8).passes == ()      # at most F records: no pass
    assert (presorts(33_553_920, 16, 4, 8), presorts(67_108_352, 16, 4, 8)) == (True, False)
    # The plan of a configuration follows its presort.
    tiny = config_from("tiny")
    assert tiny.presort and tiny.first_run_length == tiny.rate
    assert tree_plans(tiny, 1000)[0] == tree_plan(250, 4, 2, 2)
    assert tree_plans(config_from("u280-paper"), 1000)[0] == tree_plan(63, 16, 4)


def test_leaf_regions_put_the_short_run_last():
    plan = tree_plan(1000, 16, 4)
    for step in plan.passes:
        regions = leaf_regions(1000, step, 16)
        assert sum(n for _, n, _ in regions) == 1000
        firsts = [f for f, n, _ in regions if n]
        assert firsts == sorted(firsts)
        assert all(g == step.groups for _, _, g in regions)
        # Active leaves are every (16 / a)-th, one per subtree of the tree's rate.
        used = [j for j, (_, n, _) in enumerate(regions) if n]
        assert all(j % (16 // step.active) == 0 for j in used), (step, used)


def test_a_partial_pass_spreads_its_leaves():
    plan = tree_plan(4 * 16 * 3, 16, 4)     # 192 runs of 1 -> 12 runs of 16 -> 4 runs (a = 4)
    step = plan.passes[-1]
    assert step.active == 4
    regions = leaf_regions(plan.records, step, 16)
    assert [j for j, (_, n, _) in enumerate(regions) if n] == [0, 4, 8, 12]
    assert [n for _, n, _ in regions if n] == [48, 48, 48, 48]


def test_split_records():
    assert split_records(10, 4) == [3, 3, 2, 2]
    assert split_records(0, 2) == [0, 0]


@pytest.mark.parametrize("overrides,message", [
    (["trees=3"], "trees must be a power of two"),
    (["rate=16"], "rate must be at most leaves / 2 .8. .*, not 16"),
    (["rate=32", "leaves=64"], "rate must be a power of two between 1 and 16, not 32"),
    (["rate=16", "leaves=32"], "reuse . rate must be at most 32 .phase 2's root is one merge "
                               "unit., not 64"),
    (["reuse=32"], "reuse must be a power of two between 2 and 16, not 32"),
    (["reuse=1"], "reuse must be a power of two between 2 and 16, not 1"),
    (["leaves=1"], "leaves must be a power of two between 2 and 256, not 1"),
    (["trees=1"], "trees must be a power of two between 2 and 64, not 1"),
    (["key_bits=40"], "key_bits must be 32 or 64, not 40"),
    (["equal_keys=stable"], "equal_keys must be one of any, by_value, not 'stable'"),
    (["key_bits=64"], "key_bits . value_bits must be 32, 64 or 128 .4, 8 or 16-byte "
                      "records., not 96"),
    (["key_bits=64", "value_bits=64", "rate=16", "leaves=32"],
     "rate must be a power of two between 1 and 8, not 16"),
    (["trees=32"], "trees must be at most 16 on u280"),
    (["batch_bytes=1024"], "batch_bytes must be at least 4096 .write_burst_bytes 4096, reuse "
                           ". the 64-byte beat 256., not 1024"),
    (["clock_hz=100"], "clock_hz must be between 1000000 and 1000000000, not 100"),
    (["clock_hz=2000000000"], "clock_hz must be between 1000000 and 1000000000"),
    (["channel_bytes=4294967296"], "capacity must be below 2..32 records"),
    (["reuse_burst_bytes=512"], "reuse_burst_bytes must be at least read_burst_bytes "
                                "..024., not 512"),
    (["frequency=3"], "--set takes KEY=VALUE with KEY one of board, trees"),
    (["trees"], "--set takes KEY=VALUE"),
    (["trees=many"], "trees must be an integer, not 'many'"),
    (["board=vu9p"], "board must be one of u280, u55c, u50, sim, onchip, not 'vu9p'"),
])
def test_config_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        config_from("u280", overrides)


def test_config_presets_and_overrides():
    assert config_from("tiny").data_width == 128
    assert config_from("u280").runs_per_tree == 4
    assert config_from("u280").length_bits == 43     # 2^40 records of 8 bytes
    assert config_from("u280").capacity * 8 > (4 << 30) - (1 << 20)
    small = config_from("u280", ["board=sim"])
    assert small.channel_bytes == 16 << 10
    with pytest.raises(ValueError, match="config must be one of u280, u280-paper, u55c, "):
        config_from("huge")
    # The paper's shape as the paper built it; the others presort and deal.
    paper = config_from("u280-paper")
    assert (paper.presort, paper.placement) == (0, "blocks")
    assert dataclasses.replace(paper, name="u280", presort=1, placement="dealt") == PRESETS["u280"]
    with pytest.raises(ValueError, match="presort must be 0 or 1, not 2"):
        config_from("tiny", ["presort=2"])
    with pytest.raises(ValueError, match=r"presort needs rate 2 or more \(records per beat to "):
        config_from("tiny", ["rate=1"])
    assert config_from("tiny", ["merge_unit=flims"]).merge_unit == "flims"
    with pytest.raises(ValueError, match="merge_unit must be one of mms, flims, not 'bitonic'"):
        config_from("tiny", ["merge_unit=bitonic"])
    assert KernelConfig().name == "custom"


def test_board_facts_follow_the_board_unless_set():
    # A value left to the board (0) is the board's, also in a configuration made from this
    # one for another board; a value set stays.
    u55c = dataclasses.replace(PRESETS["u280"], board="u55c")
    assert u55c == dataclasses.replace(PRESETS["u55c"], name="u280")
    assert u55c.channel_bytes == 512 << 20 and u55c.capacity == PRESETS["u55c"].capacity
    assert config_from("tiny", ["board=u280"]).channel_bytes == 256 << 20
    assert dataclasses.replace(PRESETS["small"], board="u280").channel_bytes == 64 << 10
    assert config_from("u280", ["clock_hz=300000000", "board=u55c"]).clock_hz == 300_000_000
