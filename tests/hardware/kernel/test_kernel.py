"""The whole kernel's Verilog, driven through the host library (the cocotb testbench
``topsort_hdl/sim/cocotb/cocotb_kernel.py``)."""

import pytest

from topsort_hdl.core.config import config_from
from topsort_hdl.sim.runner import (
    SIM_BUILD,
    repeated_blocks,
    run_bench,
    verilator_lint,
    write_kernel,
)


def test_tiny_kernel_in_icarus():
    case = "kernel_tiny_icarus"
    source = write_kernel(config_from("tiny"), case)
    run_bench([source], "topsort", "cocotb_kernel", case,
              env={"TOPSORT_CONFIG": "tiny", "TOPSORT_PAUSE": 0.2})


@pytest.mark.slow
def test_u280_kernel_in_verilator():
    # The paper's shape, both phases in one run: 4096 records per tree.
    # Every block the kernel repeats is verilated once, as a model of its own: a third of the
    # CPU time of one flat model.
    case = "kernel_u280_verilator"
    source = write_kernel(config_from("u280"), case)
    run_bench([source], "topsort", "cocotb_kernel", case, sim="verilator",
              quick_compile=True, hierarchical_blocks=repeated_blocks(source, "topsort"),
              env={"TOPSORT_CONFIG": "u280", "TOPSORT_PAUSE": 0.0, "TOPSORT_MODE": "bulk",
                   "TOPSORT_RECORDS": 16 * 4096,
                   "TOPSORT_STATS": SIM_BUILD / case / "stats.json"})


def test_tiny_kernel_in_verilator_block_by_block():
    # The u280 run's build (above), on tiny: each repeated block a model of its own.
    case = "kernel_tiny_hierarchical"
    source = write_kernel(config_from("tiny"), case)
    blocks = repeated_blocks(source, "topsort")
    assert {"tree_p2_l4", "read_engine_l4_b512", "leaf_feeder"} <= {
        "_".join(name.split("_")[1:-1]) for name in blocks}
    run_bench([source], "topsort", "cocotb_kernel", case, sim="verilator",
              hierarchical_blocks=blocks, env={"TOPSORT_CONFIG": "tiny", "TOPSORT_PAUSE": 0.2})
    control = (SIM_BUILD / case / "model.vlt").read_text()
    assert control.count("hier_block") == len(blocks)


def test_tiny_kernel_at_capacity():
    case = "kernel_tiny_capacity"
    source = write_kernel(config_from("tiny"), case)
    run_bench([source], "topsort", "cocotb_kernel", case,
              env={"TOPSORT_CONFIG": "tiny", "TOPSORT_PAUSE": 0.05, "TOPSORT_MODE": "bulk",
                   "TOPSORT_STATS": SIM_BUILD / case / "stats.json"})


def test_tiny_kernel_with_port_register_stages():
    # Die-crossing register stages on the ports (0 to 4, as a floorplan gives them) change
    # latency only: exact results under random pauses on every channel.
    case = "kernel_tiny_stages"
    source = write_kernel(config_from("tiny"), case, port_stages=(2, 0, 4, 1))
    run_bench([source], "topsort", "cocotb_kernel", case,
              env={"TOPSORT_CONFIG": "tiny", "TOPSORT_PAUSE": 0.2, "TOPSORT_MODE": "bulk",
                   "TOPSORT_RECORDS": 700})


@pytest.mark.parametrize("name", ["tiny", pytest.param("small", marks=pytest.mark.slow),
                                  pytest.param("u280", marks=pytest.mark.slow)])
def test_kernel_verilator_lint_is_clean(name):
    # small and u280: a minute or more each to generate and lint, so under `slow`; u280 gets
    # its floorplan's port stages, tiny some too (the simulation board has no floorplan).
    stages = (2, 0, 4, 1) if name == "tiny" else None
    source = write_kernel(config_from(name), f"kernel_{name}_lint", port_stages=stages)
    verilator_lint([source], "topsort")
