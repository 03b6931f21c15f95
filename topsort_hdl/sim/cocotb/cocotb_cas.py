"""cocotb testbench for an emitted compare-swap cell (combinational), against the model."""

import itertools
import os
import random

import cocotb
from cocotb.triggers import Timer

from topsort_hdl.core.golden import compare_swap
from topsort_hdl.hardware.records import RecordLayout

DESCENDING = bool(int(os.environ.get("TOPSORT_DESCENDING", "0")))
RECORD = RecordLayout()


@cocotb.test()
async def corner_keys_and_ties(dut):
    """Keys 0, 1, 2^31 and all-ones in every combination; ties keep their places."""
    rng = random.Random(3)
    keys = [0, 1, 2**31, 2**32 - 1]
    for key_a, key_b in itertools.product(keys, repeat=2):
        a, b = (key_a, rng.randrange(1 << 32)), (key_b, rng.randrange(1 << 32))
        dut.a.value = RECORD.pack(*a)
        dut.b.value = RECORD.pack(*b)
        await Timer(1, unit="ns")
        got = (RECORD.unpack(dut.first.value.to_unsigned()),
               RECORD.unpack(dut.second.value.to_unsigned()))
        assert got == compare_swap(a, b, DESCENDING), (a, b, got)
