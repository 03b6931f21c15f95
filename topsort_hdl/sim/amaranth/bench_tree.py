"""Root throughput of merge trees and of the phase-2 reuse tree, in the Amaranth simulator."""

import random
import time
from dataclasses import asdict, dataclass

from ...core.golden.workloads import make_group
from ...hardware.records import BundleLayout, RecordLayout, is_pad
from ...hardware.tree import PHASE2, MergeTree, ReuseSwitch
from ..tree_model import MergeTreeModel, ReuseTreeModel
from .stream_harness import Job, run_jobs

__all__ = ["TreeMeasurement", "measure_tree", "WORKLOADS"]

# name -> (key pattern, run length per leaf: fixed, or a (low, high) random range)
WORKLOADS = {
    "equal": ("uniform", 64),  # every leaf streams random runs of one length
    "uneven": ("uniform", (8, 128)),  # run lengths vary from leaf to leaf
    "figure7": ("figure7", 64),  # leaf i holds the i-th key range (paper, Figure 7)
}


@dataclass
class TreeMeasurement:
    shape: str  # "p=8 l=16" or "r=4 p=2 l=4 phase2"
    workload: str
    rate: int  # records per cycle the root can emit
    records_per_cycle: float  # real records out of the root per cycle, first to last output
    efficiency: float  # records_per_cycle / rate
    records: int
    latency: int  # cycles from the first leaf transfer to the first root transfer
    seconds: float

    def as_dict(self):
        return asdict(self)


def _groups(rng, leaves, workload, count):
    pattern, length = WORKLOADS[workload]
    groups = []
    for _ in range(count):
        lengths = [length if isinstance(length, int) else rng.randint(*length)
                   for _ in range(leaves)]
        groups.append(make_group(rng, leaves, pattern, lengths=lengths))
    return groups


def _measure(dut, jobs, expected, padded, root_rate, shape, workload, start):
    (result,) = run_jobs(dut, jobs)
    (name,) = [n for n, count in jobs[0].outputs.items() if count]
    if result.outputs[name] != expected:
        raise AssertionError(f"{shape}: root output differs from the golden model")
    root = BundleLayout(padded, root_rate)
    real = sum(not is_pad(padded, key) for word in result.outputs[name]
               for key, _ in root.unpack(word)[0])
    cycles = result.transfer_cycles[name]
    span = cycles[-1] - cycles[0] + 1
    rate = real / span
    return TreeMeasurement(
        shape=shape, workload=workload, rate=root_rate, records_per_cycle=round(rate, 3),
        efficiency=round(rate / root_rate, 3), records=real,
        latency=cycles[0] - min(result.first_input_cycle.values()),
        seconds=round(time.perf_counter() - start, 1))


def measure_tree(rate, leaves, workload="equal", groups=4, seed=1):
    """Feed every leaf continuously (no gaps, no backpressure); measure the root."""
    start = time.perf_counter()
    rng = random.Random(seed)
    record = RecordLayout()
    model = MergeTreeModel(record, rate, leaves)
    leaf = BundleLayout(model.padded, model.leaf_rate)
    root = BundleLayout(model.padded, rate)
    inputs, expected = {}, []
    for group in _groups(rng, leaves, workload, 1 if workload == "figure7" else groups):
        for index, run in enumerate(group):
            inputs.setdefault(f"i[{index}]", []).extend(leaf.pack_run(model.leaf_bundles(run)))
        expected += root.pack_run(model.merge_group(group))
    dut = MergeTree(record, rate, leaves)
    return _measure(dut, [Job(inputs, {"o": len(expected)})], expected, model.padded, rate,
                    f"p={rate} l={leaves}", workload, start)


def measure_reuse(trees, rate, leaves, workload="equal", groups=4, seed=1):
    """The reuse switch in phase-2 mode, every leaf fed continuously; measure ``wide``."""
    start = time.perf_counter()
    rng = random.Random(seed)
    record = RecordLayout()
    model = ReuseTreeModel(record, trees, rate, leaves)
    leaf = BundleLayout(model.padded, model.trees[0].leaf_rate)
    wide = BundleLayout(model.padded, trees * rate)
    inputs, expected = {}, []
    for group in _groups(rng, trees * leaves, workload, groups):
        for index, run in enumerate(group):
            tree = model.trees[index // leaves]
            inputs.setdefault(f"i[{index}]", []).extend(leaf.pack_run(tree.leaf_bundles(run)))
        expected += wide.pack_run(model.phase2(group))
    dut = ReuseSwitch(record, trees, rate, leaves)
    job = Job(inputs, {"wide": len(expected)}, {"mode": PHASE2})
    return _measure(dut, [job], expected, model.padded, trees * rate,
                    f"r={trees} p={rate} l={leaves} phase2", workload, start)


# What `topsort-hdl bench tree` measures: (function, shape, workload).
BENCH_CASES = [
    *[(measure_tree, shape, workload) for shape in ((1, 2), (2, 4), (4, 8), (8, 16))
      for workload in ("equal", "uneven", "figure7")],
    (measure_reuse, (4, 2, 4), "equal"),
    (measure_reuse, (2, 4, 8), "equal"),
]
