"""Throughput and latency of the streaming merge units (MMS, FLiMS), measured in the Amaranth
simulator."""

import random
import time
from dataclasses import asdict, dataclass

from ...core.golden import MmsModel
from ...core.golden.flims import FlimsModel
from ...core.golden.workloads import make_keys
from ...core.params import check_merge_unit
from ...hardware.merge import FlimsMergeUnit, MmsMergeUnit
from ...hardware.records import RecordLayout
from .stream_harness import run_streams

__all__ = ["MergeUnitMeasurement", "measure_merge_unit", "MERGE_UNIT_KINDS"]

# Each kind of streaming merge unit and its golden model.
MERGE_UNIT_KINDS = {"mms": (MmsMergeUnit, MmsModel), "flims": (FlimsMergeUnit, FlimsModel)}


@dataclass
class MergeUnitMeasurement:
    rate: int
    long_runs: int  # runs in the long-run scenario
    long_run_bundles: int  # bundles per input per run
    records_per_cycle: float  # output records per cycle, first to last output, long runs
    bubbles: int  # cycles without an output between the first and the last, long runs
    short_records_per_cycle: float  # the same with runs of one bundle per input
    short_bubbles: int
    latency: int  # cycles from the first input transfer to the first output transfer
    comparators: int
    seconds: float

    def as_dict(self):
        return asdict(self)


def _equal_runs(rng, rate, runs, bundles):
    def run():
        keys = sorted(make_keys(rng, bundles * rate, "uniform"))
        records = [(key, rng.randrange(1 << 32)) for key in keys]
        return [records[i : i + rate] for i in range(0, len(records), rate)]
    return [(run(), run()) for _ in range(runs)]


def _stream(dut, model, runs):
    """Simulate ``runs`` with no gaps and no backpressure; check the output against the model.

    Returns (records per cycle, bubbles, latency).
    """
    bundle = dut.bundle
    words = {side: [word for pair in runs for word in bundle.pack_run(pair[index])]
             for index, side in enumerate("ab")}
    expected = model(dut.rate).merge(runs)
    result = run_streams(dut, words, {"o": len(expected)})
    got = [bundle.unpack(word) for word in result.outputs["o"]]
    if got != [(list(records), last) for records, last in expected]:
        raise AssertionError(f"{type(dut).__name__} E={dut.rate} output differs from the "
                             f"golden model")
    cycles = result.transfer_cycles["o"]
    span = cycles[-1] - cycles[0] + 1
    latency = cycles[0] - min(result.first_input_cycle.values())
    return len(cycles) * dut.rate / span, span - len(cycles), latency


def measure_merge_unit(kind, rate, *, runs=16, bundles=32, short_runs=64, seed=1):
    """Measure one E-rate unit of ``kind`` (``"mms"`` or ``"flims"``) with a 32/32 record; see
    :class:`MergeUnitMeasurement`."""
    unit, model = MERGE_UNIT_KINDS[check_merge_unit(kind, "kind")]
    start = time.perf_counter()
    rng = random.Random(seed)
    dut = unit(RecordLayout(), rate)
    long_rate, long_bubbles, latency = _stream(dut, model, _equal_runs(rng, rate, runs, bundles))
    dut = unit(RecordLayout(), rate)
    short_rate, short_bubbles, _ = _stream(dut, model, _equal_runs(rng, rate, short_runs, 1))
    return MergeUnitMeasurement(
        rate=rate, long_runs=runs, long_run_bundles=bundles,
        records_per_cycle=round(long_rate, 4), bubbles=long_bubbles,
        short_records_per_cycle=round(short_rate, 4), short_bubbles=short_bubbles,
        latency=latency, comparators=dut.comparators,
        seconds=round(time.perf_counter() - start, 2))
