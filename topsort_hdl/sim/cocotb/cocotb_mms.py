"""cocotb testbench for an emitted streaming merge unit (MMS or FLiMS: one contract), driving
only the documented ports.

Parameters come from the environment: TOPSORT_UNIT (``mms``, the default, or ``flims``),
TOPSORT_RATE, TOPSORT_KEY_BITS, TOPSORT_VALUE_BITS, TOPSORT_SEED. Every output bundle is
compared with the unit's golden model, ``last`` included.
"""

import os
import random

import cocotb

from topsort_hdl.core.golden import MmsModel
from topsort_hdl.core.golden.flims import FlimsModel
from topsort_hdl.core.golden.workloads import KEY_PATTERNS, make_run_pair, make_runs
from topsort_hdl.hardware.records import BundleLayout, RecordLayout

from .stream_driver import reset, run_streams

MODEL = {"mms": MmsModel, "flims": FlimsModel}[os.environ.get("TOPSORT_UNIT", "mms")]
RATE = int(os.environ.get("TOPSORT_RATE", "4"))
RECORD = RecordLayout(int(os.environ.get("TOPSORT_KEY_BITS", "32")),
                      int(os.environ.get("TOPSORT_VALUE_BITS", "32")))
BUNDLE = BundleLayout(RECORD, RATE)
SEED = int(os.environ.get("TOPSORT_SEED", "1"))
LIMITS = {"max_key": RECORD.max_key, "max_value": RECORD.max_value}


def _check_ports(dut):
    width = BUNDLE.size
    for name in ("a", "b", "o"):
        got = len(getattr(dut, f"{name}__payload"))
        assert got == width, f"{name}__payload is {got} bits wide, expected {width}"


async def merge_and_check(dut, model, runs, rng, gap, stall):
    """Send the run pairs, compare every output bundle with the model; return the result.

    ``model`` must have seen everything the unit has since its reset (it tracks the side
    preferred on the next tie).
    """
    expected = model.merge(runs)
    words = {side: [w for pair in runs for w in BUNDLE.pack_run(pair[i])]
             for i, side in enumerate("ab")}
    result = await run_streams(dut, words, {"o": len(expected)}, rng=rng, gap=gap, stall=stall)
    got = [BUNDLE.unpack(word) for word in result.outputs["o"]]
    for index, (have, (records, last)) in enumerate(zip(got, expected, strict=True)):
        assert have == (list(records), last), (
            f"bundle {index}: got {have}, expected {(records, last)}")
    sent = sorted(r for pair in runs for run in pair for bundle in run for r in bundle)
    assert sorted(r for records, _ in got for r in records) == sent, "records lost or added"
    return result


@cocotb.test()
async def random_runs_with_gaps_and_backpressure(dut):
    """Random runs of 1 to 40 bundles and one of hundreds, random input gaps and stalls."""
    _check_ports(dut)
    await reset(dut)
    model = MODEL(RATE)
    rng = random.Random(SEED)
    runs = make_runs(rng, RATE, 24, max_bundles=40, **LIMITS)
    long_keys = [rng.randint(0, RECORD.max_key) for _ in range(2 * 150 * RATE)]
    runs.insert(len(runs) // 2, _split_run(sorted(long_keys), rng, 200 if RATE < 16 else 120))
    for gap, stall in ((0.3, 0.3), (0.0, 0.6), (0.6, 0.0)):
        await merge_and_check(dut, model, runs[:8] if gap != 0.3 else runs, rng, gap, stall)


def _split_run(keys, rng, a_bundles):
    records = [(key, rng.randint(0, RECORD.max_value)) for key in keys]
    chosen = set(rng.sample(range(len(records) // RATE), a_bundles))
    a, b = [], []
    # Deal whole bundles of a shuffled deck to each side, then sort each side's records.
    rng.shuffle(records)
    for index in range(len(records) // RATE):
        (a if index in chosen else b).extend(records[index * RATE:(index + 1) * RATE])
    a.sort(key=lambda r: r[0])
    b.sort(key=lambda r: r[0])
    return ([a[i:i + RATE] for i in range(0, len(a), RATE)],
            [b[i:i + RATE] for i in range(0, len(b), RATE)])


@cocotb.test()
async def adversarial_keys(dut):
    """All-equal keys, only 0 and all-ones, few keys, disjoint and twin inputs."""
    await reset(dut)
    model = MODEL(RATE)
    rng = random.Random(SEED + 1)
    for pattern in sorted(KEY_PATTERNS):
        runs = [make_run_pair(rng, RATE, pattern, max_bundles=10, **LIMITS)
                for _ in range(6)]
        await merge_and_check(dut, model, runs, rng, 0.2, 0.3)


@cocotb.test()
async def back_to_back_runs_at_full_rate(dut):
    """With no gaps and no backpressure, one bundle leaves every cycle, across run ends."""
    await reset(dut)
    model = MODEL(RATE)
    rng = random.Random(SEED + 2)
    runs = [make_run_pair(rng, RATE, "uniform", max_bundles=1, **LIMITS)
            for _ in range(24)]
    runs += make_runs(rng, RATE, 8, max_bundles=12, **LIMITS)
    result = await merge_and_check(dut, model, runs, rng, 0.0, 0.0)
    cycles = result.cycles["o"]
    idle = (cycles[-1] - cycles[0] + 1) - len(cycles)
    dut._log.info("E=%d: %d bundles in %d cycles (%.3f records/cycle), latency %d cycles",
                  RATE, len(cycles), cycles[-1] - cycles[0] + 1,
                  len(cycles) * RATE / (cycles[-1] - cycles[0] + 1),
                  cycles[0] - result.first_input_cycle)
    assert idle == 0, f"{idle} idle output cycles between the first and the last bundle"
