"""cocotb testbench for an emitted bitonic merger: exact against the model, 0-1 exhaustive.

Parameters from the environment: TOPSORT_RATE, TOPSORT_DESCENDING.
"""

import itertools
import os
import random

import cocotb

from topsort_hdl.core.golden import bitonic_merge
from topsort_hdl.hardware.records import RecordLayout

from .stream_driver import reset, run_streams

RATE = int(os.environ.get("TOPSORT_RATE", "4"))
DESCENDING = bool(int(os.environ.get("TOPSORT_DESCENDING", "0")))
RECORD = RecordLayout()


def pack(bundle):
    return sum(RECORD.pack(*record) << (i * RECORD.size) for i, record in enumerate(bundle))


def unpack(word, count):
    mask = (1 << RECORD.size) - 1
    return [RECORD.unpack(word >> (i * RECORD.size) & mask) for i in range(count)]


async def merge_and_check(dut, pairs, rng, gap, stall):
    words = {"a": [pack(a) for a, _ in pairs], "b": [pack(b) for _, b in pairs]}
    result = await run_streams(dut, words, {"o": len(pairs)}, rng=rng, gap=gap, stall=stall)
    for (a, b), word in zip(pairs, result.outputs["o"], strict=True):
        assert unpack(word, 2 * RATE) == bitonic_merge(a, b, DESCENDING), (a, b)


@cocotb.test()
async def zero_one_principle(dut):
    """Every pair of sorted 0/1 bundles: proves the emitted network merges every input."""
    await reset(dut)
    bundles = [[0] * (RATE - ones) + [1] * ones for ones in range(RATE + 1)]
    pairs = []
    for a_keys, b_keys in itertools.product(bundles, repeat=2):
        if DESCENDING:
            a_keys, b_keys = a_keys[::-1], b_keys[::-1]
        pairs.append(([(k, i) for i, k in enumerate(a_keys)],
                      [(k, RATE + i) for i, k in enumerate(b_keys)]))
    await merge_and_check(dut, pairs, random.Random(1), 0.2, 0.2)


@cocotb.test()
async def random_bundles_with_gaps_and_backpressure(dut):
    """Random keys, many equal ones, 0 and all-ones; random gaps and stalls."""
    await reset(dut)
    rng = random.Random(RATE)
    pairs = []
    for _ in range(150):
        choices = rng.choice([[0, 2**32 - 1], [5], None])
        pairs.append((_draw(rng, choices), _draw(rng, choices)))
    await merge_and_check(dut, pairs, rng, 0.3, 0.3)


def _draw(rng, choices):
    """A sorted bundle with keys from ``choices`` (any key when None) and random values."""
    keys = [rng.choice(choices) if choices else rng.randrange(1 << 32) for _ in range(RATE)]
    return sorted(((k, rng.randrange(1 << 32)) for k in keys), key=lambda r: r[0],
                  reverse=DESCENDING)
