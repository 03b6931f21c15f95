"""cocotb benches on the emitted Verilog.

Icarus runs the small units; it slows down steeply with bundle width (E = 16: about 8
cycles/s against 30,000 in Verilator), so the wide units run in Verilator by default and in
Icarus only under the ``slow`` marker.
"""

import pytest

from sim.runner import run_bench, write_unit

MMS_CASES = [
    (1, "icarus"), (2, "icarus"), (4, "icarus"), (8, "icarus"),
    (8, "verilator"), (16, "verilator"),
    pytest.param(16, "icarus", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("rate,sim", MMS_CASES)
def test_mms_verilog(rate, sim):
    case = f"mms_e{rate}_{sim}"
    source = write_unit("mms", case, rate=rate)
    run_bench([source], "mms", "sim.cocotb_mms", case, env={"TOPSORT_RATE": rate}, sim=sim)


def test_mms_verilog_narrow_records():
    # Narrow keys make equal keys the rule rather than the exception.
    case = "mms_e4_k8v8"
    source = write_unit("mms", case, rate=4, key_bits=8, value_bits=8)
    run_bench([source], "mms", "sim.cocotb_mms", case,
              env={"TOPSORT_RATE": 4, "TOPSORT_KEY_BITS": 8, "TOPSORT_VALUE_BITS": 8})


@pytest.mark.parametrize("rate", [1, 2, 4, 8])
@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_verilog(rate, descending):
    case = f"bitonic_e{rate}_{'desc' if descending else 'asc'}"
    source = write_unit("bitonic", case, rate=rate, descending=descending)
    run_bench([source], "bitonic", "sim.cocotb_bitonic", case,
              env={"TOPSORT_RATE": rate, "TOPSORT_DESCENDING": int(descending)})


@pytest.mark.parametrize("descending", [False, True])
def test_cas_verilog(descending):
    case = f"cas_{'desc' if descending else 'asc'}"
    source = write_unit("cas", case, descending=descending)
    run_bench([source], "cas", "sim.cocotb_cas", case,
              env={"TOPSORT_DESCENDING": int(descending)})
