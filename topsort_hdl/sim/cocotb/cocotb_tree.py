"""cocotb testbench for an emitted merge tree or reuse switch, exact against the tree models.

Parameters from the environment: TOPSORT_RATE (p), TOPSORT_LEAVES (l), TOPSORT_TREES (r; 0 for
a plain tree), TOPSORT_GROUPS (groups per job), TOPSORT_SEED.
"""

import os
import random

import cocotb

from topsort_hdl.core.golden.workloads import GROUP_PATTERNS, make_group
from topsort_hdl.hardware.records import BundleLayout, RecordLayout
from topsort_hdl.sim.tree_model import MergeTreeModel, ReuseTreeModel

from .stream_driver import reset, run_streams

RATE = int(os.environ.get("TOPSORT_RATE", "2"))
LEAVES = int(os.environ.get("TOPSORT_LEAVES", "4"))
TREES = int(os.environ.get("TOPSORT_TREES", "0"))
GROUPS = int(os.environ.get("TOPSORT_GROUPS", "6"))
SEED = int(os.environ.get("TOPSORT_SEED", "1"))
RECORD = RecordLayout()


def leaf_words(tree_model, runs, first_leaf, inputs):
    leaf = BundleLayout(tree_model.padded, tree_model.leaf_rate)
    for index, run in enumerate(runs):
        inputs.setdefault(f"i__{first_leaf + index}", []).extend(
            leaf.pack_run(tree_model.leaf_bundles(run)))


async def run_and_check(dut, inputs, expected, rng, gap, stall, layouts):
    result = await run_streams(dut, inputs, {n: len(w) for n, w in expected.items()}, rng=rng,
                               gap=gap, stall=stall)
    for name, words in expected.items():
        for index, (have, want) in enumerate(zip(result.outputs[name], words, strict=True)):
            assert have == want, (f"{name} bundle {index}: got {layouts[name].unpack(have)}, "
                                  f"expected {layouts[name].unpack(want)}")
    return result


def groups(rng, count, leaves, max_records=40):
    return [make_group(rng, leaves, rng.choice(GROUP_PATTERNS), max_records)
            for _ in range(count)] + [[[] for _ in range(leaves)]]


@cocotb.test(skip=TREES != 0)
async def tree_groups_with_gaps_and_backpressure(dut):
    """Groups back to back: random lengths (0 and 1 included), adversarial keys, stalls."""
    await reset(dut)
    rng = random.Random(SEED)
    model = MergeTreeModel(RECORD, RATE, LEAVES)
    root = BundleLayout(model.padded, RATE)
    for gap, stall in ((0.0, 0.0), (0.3, 0.4)):
        inputs, expected = {}, {"o": []}
        for group in groups(rng, GROUPS, LEAVES):
            leaf_words(model, group, 0, inputs)
            expected["o"] += root.pack_run(model.merge_group(group))
        await run_and_check(dut, inputs, expected, rng, gap, stall, {"o": root})


@cocotb.test(skip=TREES == 0)
async def reuse_switch_modes_without_reset(dut):
    """Phase-1 and phase-2 jobs in turn, no reset between them; idle outputs stay idle."""
    await reset(dut)
    rng = random.Random(SEED)
    model = ReuseTreeModel(RECORD, TREES, RATE, LEAVES)
    layouts = {f"o__{t}": BundleLayout(model.padded, RATE) for t in range(TREES)}
    layouts["wide"] = BundleLayout(model.padded, TREES * RATE)
    for mode in (0, 1, 0, 1):
        dut.mode.value = mode
        inputs, expected = {}, {name: [] for name in layouts}
        for _ in range(max(1, GROUPS // 2)):
            runs = [run for _ in range(TREES)
                    for run in make_group(rng, LEAVES, rng.choice(GROUP_PATTERNS), 24)]
            for t, tree in enumerate(model.trees):
                leaf_words(tree, runs[t * LEAVES:(t + 1) * LEAVES], t * LEAVES, inputs)
            if mode == 0:
                groups_per_tree = [runs[t * LEAVES:(t + 1) * LEAVES] for t in range(TREES)]
                for t, bundles in enumerate(model.phase1(groups_per_tree)):
                    expected[f"o__{t}"] += layouts[f"o__{t}"].pack_run(bundles)
            else:
                expected["wide"] += layouts["wide"].pack_run(model.phase2(runs))
        await run_and_check(dut, inputs, expected, rng, 0.2, 0.3, layouts)


@cocotb.test(skip=TREES == 0)
async def phase2_throughput(dut):
    """Phase 2 with every leaf streaming 64-record random runs: logs root records per cycle
    (a measurement, checked for exactness, not for speed)."""
    await reset(dut)
    dut.mode.value = 1
    rng = random.Random(SEED + 5)
    model = ReuseTreeModel(RECORD, TREES, RATE, LEAVES)
    wide = BundleLayout(model.padded, TREES * RATE)
    inputs, expected = {}, {"wide": []}
    groups = 3
    for _ in range(groups):
        runs = make_group(rng, TREES * LEAVES, "uniform", lengths=[64] * (TREES * LEAVES))
        for t, tree in enumerate(model.trees):
            leaf_words(tree, runs[t * LEAVES:(t + 1) * LEAVES], t * LEAVES, inputs)
        expected["wide"] += wide.pack_run(model.phase2(runs))
    result = await run_and_check(dut, inputs, expected, rng, 0.0, 0.0, {"wide": wide})
    cycles = result.cycles["wide"]
    span = cycles[-1] - cycles[0] + 1
    records = groups * 64 * TREES * LEAVES
    dut._log.info("phase 2, %d x (%d, %d): %d records in %d cycles = %.2f records/cycle of %d "
                  "(%.3f)", TREES, RATE, LEAVES, records, span, records / span, TREES * RATE,
                  records / span / (TREES * RATE))
