"""Couplers, merge trees and the reuse switch: models, then hardware in the Amaranth simulator."""

import random
import re

import pytest

from tests.conftest import constructor_error
from topsort_hdl.core.golden import reference_sort
from topsort_hdl.core.golden.workloads import GROUP_PATTERNS, make_group
from topsort_hdl.hardware.records import BundleLayout, RecordLayout, pad_run, tree_record
from topsort_hdl.hardware.tree import Coupler, MergeTree, ReuseSwitch
from topsort_hdl.sim.amaranth.stream_harness import Job, run_jobs, run_streams
from topsort_hdl.sim.tree_model import MergeTreeModel, ReuseTreeModel, couple

RECORD = RecordLayout()
PADDED = tree_record(RECORD)
PAD = (1 << 32, 0)


def test_pad_run_and_couple():
    assert pad_run([], 2, PADDED) == [[PAD, PAD]]
    assert pad_run([(1, 0), (2, 0), (3, 0)], 2, PADDED) == [[(1, 0), (2, 0)], [(3, 0), PAD]]
    assert couple([[(1, 0)], [(2, 0)], [(3, 0)]], PADDED) == [[(1, 0), (2, 0)], [(3, 0), PAD]]


@pytest.mark.parametrize("rate,leaves", [(1, 2), (2, 4), (4, 8), (8, 16), (4, 16), (16, 16)])
@pytest.mark.parametrize("pattern", GROUP_PATTERNS)
def test_tree_model_sorts_every_group(rate, leaves, pattern):
    rng = random.Random(f"{rate}-{leaves}-{pattern}")
    model = MergeTreeModel(RECORD, rate, leaves)
    for _ in range(10):
        group = make_group(rng, leaves, pattern)
        bundles = model.merge_group(group)
        assert all(len(bundle) == rate for bundle in bundles)
        records = model.records(bundles)
        everything = [record for run in group for record in run]
        assert [k for k, _ in records] == [k for k, _ in reference_sort(everything)]
        assert sorted(records) == sorted(everything)


def test_reuse_model_phase2_sorts_every_group():
    rng = random.Random(4)
    model = ReuseTreeModel(RECORD, 4, 2, 4)
    group = [run for _ in range(4) for run in make_group(rng, 4, "few")]
    records = model.records(model.phase2(group))
    assert sorted(records) == sorted(r for run in group for r in run)
    assert [k for k, _ in records] == sorted(k for run in group for k, _ in run)


@pytest.mark.parametrize("rate", [1, 2, 4])
def test_coupler_matches_model(rate):
    rng = random.Random(rate)
    dut = Coupler(PADDED, rate)
    runs = [pad_run(sorted((rng.randrange(1 << 32), i) for i in range(rng.randint(0, 9))),
                    rate, PADDED) for _ in range(30)]
    words = [w for run in runs for w in BundleLayout(PADDED, rate).pack_run(run)]
    expected = [(b, i == len(c) - 1) for run in runs for c in [couple(run, PADDED)]
                for i, b in enumerate(c)]
    result = run_streams(dut, {"i": words}, {"o": len(expected)}, gap=0.3, stall=0.4)
    wide = BundleLayout(PADDED, 2 * rate)
    assert [wide.unpack(w) for w in result.outputs["o"]] == expected


def tree_jobs(model_groups, leaf_bundle, root_bundle):
    """Inputs and expected root words for groups already merged by a model."""
    inputs, expected = {}, []
    for runs, bundles in model_groups:
        for leaf, run in enumerate(runs):
            inputs.setdefault(f"i[{leaf}]", []).extend(leaf_bundle.pack_run(run))
        expected.extend(root_bundle.pack_run(bundles))
    return inputs, expected


def check_tree(dut, model, groups, seed, gap, stall):
    leaf_bundle = BundleLayout(PADDED, model.leaf_rate)
    root_bundle = BundleLayout(PADDED, model.rate)
    merged = [([model.leaf_bundles(run) for run in group], model.merge_group(group))
              for group in groups]
    inputs, expected = tree_jobs(merged, leaf_bundle, root_bundle)
    result = run_streams(dut, inputs, {"o": len(expected)}, seed=seed, gap=gap, stall=stall)
    got = result.outputs["o"]
    for index, (have, want) in enumerate(zip(got, expected, strict=True)):
        assert have == want, (f"root bundle {index}: got {root_bundle.unpack(have)}, "
                              f"expected {root_bundle.unpack(want)}")
    return result


@pytest.mark.parametrize("rate,leaves,kind", [(1, 2, "mms"), (2, 4, "mms"), (4, 8, "mms"),
                                              (1, 4, "mms"), (4, 4, "mms"), (2, 4, "flims"),
                                              (4, 8, "flims"), (4, 4, "flims")])
@pytest.mark.parametrize("gap,stall", [(0.0, 0.0), (0.3, 0.4)])
def test_tree_matches_model(rate, leaves, kind, gap, stall):
    rng = random.Random(f"tree-{rate}-{leaves}-{gap}")
    groups = [make_group(rng, leaves, rng.choice(GROUP_PATTERNS), max_records=24)
              for _ in range(8)]
    groups.append([[] for _ in range(leaves)])  # a group of empty runs
    groups.append([[(0, 1)] if i % 2 else [] for i in range(leaves)])
    check_tree(MergeTree(RECORD, rate, leaves, leaf_depth=16, merge_unit=kind),
               MergeTreeModel(RECORD, rate, leaves, kind), groups, 1, gap, stall)


@pytest.mark.parametrize("kind", ["mms", "flims"])
@pytest.mark.parametrize("pattern", ["equal", "extremes", "figure7"])
def test_tree_adversarial_keys(pattern, kind):
    rng = random.Random(pattern)
    groups = [make_group(rng, 8, pattern, max_records=20) for _ in range(5)]
    check_tree(MergeTree(RECORD, 4, 8, leaf_depth=8, merge_unit=kind),
               MergeTreeModel(RECORD, 4, 8, kind), groups, 2, 0.2, 0.3)


@pytest.mark.parametrize("trees,rate,leaves,kind", [(2, 1, 2, "mms"), (2, 2, 4, "mms"),
                                                    (4, 1, 2, "mms"), (2, 2, 4, "flims"),
                                                    (4, 1, 2, "flims")])
def test_reuse_switch_both_modes_without_reset(trees, rate, leaves, kind):
    rng = random.Random(trees * 100 + rate * 10 + leaves)
    dut = ReuseSwitch(RECORD, trees, rate, leaves, leaf_depth=8, merge_unit=kind)
    model = ReuseTreeModel(RECORD, trees, rate, leaves, kind)
    leaf_bundle = BundleLayout(PADDED, model.trees[0].leaf_rate)
    narrow, wide = BundleLayout(PADDED, rate), BundleLayout(PADDED, trees * rate)
    jobs, expected = [], []
    for mode in (0, 1, 0, 1, 1):
        inputs, outputs = {}, {f"o[{t}]": [] for t in range(trees)} | {"wide": []}
        for _ in range(2):
            runs = [run for _ in range(trees) for run in make_group(
                rng, leaves, rng.choice(GROUP_PATTERNS), max_records=12)]
            for leaf, run in enumerate(runs):
                tree = model.trees[leaf // leaves]
                inputs.setdefault(f"i[{leaf}]", []).extend(
                    leaf_bundle.pack_run(tree.leaf_bundles(run)))
            if mode == 0:
                groups = [runs[t * leaves:(t + 1) * leaves] for t in range(trees)]
                for t, bundles in enumerate(model.phase1(groups)):
                    outputs[f"o[{t}]"] += narrow.pack_run(bundles)
            else:
                outputs["wide"] += wide.pack_run(model.phase2(runs))
        jobs.append(Job(inputs, {name: len(words) for name, words in outputs.items()},
                        {"mode": mode}))
        expected.append(outputs)
    results = run_jobs(dut, jobs, seed=3, gap=0.2, stall=0.3)
    for index, (result, outputs) in enumerate(zip(results, expected, strict=True)):
        for name, words in outputs.items():
            assert result.outputs[name] == words, f"job {index} ({name})"


@pytest.mark.parametrize("build,error,message", [
    (lambda: MergeTree(RECORD, 8, 4), ValueError,
     "rate must be a power of two no larger than leaves (4), not 8"),
    (lambda: MergeTree(RECORD, 3, 8), ValueError, "rate must be a power of two, not 3"),
    (lambda: MergeTree(RECORD, 1, 6), ValueError,
     "leaves must be a power of two between 2 and 256, not 6"),
    (lambda: MergeTree(RECORD, 1, 1), ValueError,
     "leaves must be a power of two between 2 and 256, not 1"),
    (lambda: MergeTree(RECORD, 2, 4, leaf_depth=0), ValueError,
     "leaf_depth must be a positive integer, not 0"),
    (lambda: ReuseSwitch(RECORD, 3, 2, 4), ValueError,
     "trees must be a power of two of at least 2, not 3"),
    (lambda: ReuseSwitch(RECORD, 1, 2, 4), ValueError,
     "trees must be a power of two of at least 2, not 1"),
    (lambda: Coupler(RECORD, 3), ValueError, "rate must be a power of two, not 3"),
    (lambda: ReuseSwitch(RECORD, 2, 2, 4, merge_unit="bms"), ValueError,
     "merge_unit must be one of mms, flims, not 'bms'"),
])
def test_tree_shape_errors(build, error, message):
    assert constructor_error(build) == (error, message)


@pytest.mark.parametrize("depth,style", [(16, "distributed"), (256, "block")])
def test_leaf_buffer_ram_style_follows_depth(depth, style):
    from topsort_hdl.targets.units import build_unit, emit_verilog

    text = emit_verilog(build_unit("tree", rate=1, leaves=2, leaf_depth=depth), "tree")
    # The leaves' buffers are alike: one module, holding the memory, instantiated per leaf.
    assert text.count(f'(* ram_style = "{style}" *)') == 1
    buffer = re.findall(r"^module (\S+) \(", text[:text.index("ram_style")], re.MULTILINE)[-1]
    assert len(re.findall(rf"^  {re.escape(buffer)}  leaf\d+ \(", text, re.MULTILINE)) == 2
