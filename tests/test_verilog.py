"""cocotb benches on the emitted Verilog (Icarus by default; SIM=verilator to switch)."""

import pytest

from sim.runner import run_bench, write_unit


@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16])
def test_mms_verilog(rate):
    case = f"mms_e{rate}"
    source = write_unit("mms", case, rate=rate)
    run_bench([source], "mms", "sim.cocotb_mms", case, env={"TOPSORT_RATE": rate})


def test_mms_verilog_named_and_narrow():
    # --name renames the module; narrow keys make equal keys the rule rather than the exception.
    case = "mms_e4_k8v8"
    source = write_unit("mms", case, name="merge4", rate=4, key_bits=8, value_bits=8)
    run_bench([source], "merge4", "sim.cocotb_mms", case,
              env={"TOPSORT_RATE": 4, "TOPSORT_KEY_BITS": 8, "TOPSORT_VALUE_BITS": 8})
