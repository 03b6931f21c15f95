"""The whole kernel's Verilog, driven through the host library (the cocotb testbench
``topsort_hdl/sim/cocotb/cocotb_kernel.py``)."""

import functools
import json
import os

import pytest

from topsort_hdl.analysis.qor import MODEL_TOLERANCE, model_errors
from topsort_hdl.core.config import config_from
from topsort_hdl.core.plan import tree_plans
from topsort_hdl.sim.runner import (
    SIM_BUILD,
    build_bench,
    repeated_blocks,
    run_bench,
    verilator_lint,
    write_kernel,
)

# Each xdist worker builds what it shares between tests once, in a directory of its own.
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


@functools.cache
def shared_kernel(name):
    """The preset ``name``'s kernel Verilog, written once per worker."""
    return write_kernel(config_from(name), f"kernel_{name}_{WORKER}")


@functools.cache
def first_job_bench(name):
    """The kernel of ``name`` built once per worker in Icarus with cocotb's default flags;
    each run on it is a simulation of its own, from power-up."""
    return build_bench([shared_kernel(name)], "topsort", f"first_jobs_{name}_{WORKER}")


def pass_boundaries(name, limit):
    """The record counts up to ``limit`` around which a tree's pass count changes: the count
    before the first tree takes one more pass, to the one at which every tree has."""
    config = config_from(name)
    counts, before = set(), None
    for count in range(limit + 1):
        passes = [len(plan.passes) for plan in tree_plans(config, count)]
        if before is not None and passes != before:
            counts |= {count - 1, count}
        before = passes
    return counts


# The first job after power-up, one simulation each (about 3 s, most of it the simulator's
# and cocotb's start): tiny's counts from 0 to 28 (the read engine's undefined address was at
# 1, 5-12 and 17-28), its second pass boundary (33-36) and 40, and small's first two pass
# boundaries; under `slow`, tiny's 29 to 39, the boundaries to about a thousand records and
# the rest of small's counts to 40.
DEFAULT_FIRST_JOBS = {("tiny", n) for n in (*range(29), *range(33, 37), 40)} | {
    ("small", n) for n in pass_boundaries("small", 200)}
FIRST_JOBS = sorted(DEFAULT_FIRST_JOBS) + [
    pytest.param(name, n, marks=pytest.mark.slow)
    for name, n in sorted({("tiny", n) for n in pass_boundaries("tiny", 520)}
                          | {("tiny", n) for n in range(41)}
                          | {("small", n) for n in pass_boundaries("small", 1030)}
                          | {("small", n) for n in range(41)})
    if (name, n) not in DEFAULT_FIRST_JOBS]


@pytest.mark.parametrize("name, count", FIRST_JOBS)
def test_first_job_after_power_up(name, count):
    # Icarus -g2012 (cocotb's default) gives a declaration's initial value no event at time
    # zero: a combinational block that waits for one stays X (the read engine's next address
    # was, for some of these counts). Each count is a simulation of its own on one build.
    first_job_bench(name).run("cocotb_kernel", {
        "TOPSORT_CONFIG": name, "TOPSORT_MODE": "first", "TOPSORT_RECORDS": count,
        "TOPSORT_PAUSE": 0.2}, results=f"results_{count}.xml")


@functools.cache
def format_bench(key_bits, value_bits, equal_keys="any"):
    """tiny's kernel for records of ``key_bits + value_bits`` (equal keys as ``equal_keys``
    says), built once per worker."""
    overrides = [f"key_bits={key_bits}", f"value_bits={value_bits}", f"equal_keys={equal_keys}"]
    tiny = config_from("tiny")
    if (key_bits, value_bits, equal_keys) == (tiny.key_bits, tiny.value_bits, tiny.equal_keys):
        return first_job_bench("tiny"), overrides
    case = f"first_jobs_tiny_k{key_bits}_v{value_bits}_{equal_keys}_{WORKER}"
    source = write_kernel(config_from("tiny", overrides), case)
    return build_bench([source], "topsort", case), overrides


# Records of 4 and 16 bytes (8-byte keys alone under `slow`) on tiny's shape: the first job
# after power-up past the third pass boundary (once every tree makes a pass, and both sides of
# the first two boundaries, under `slow`; the key-order bench's first job, 64 records, is the
# first after power-up on these same builds).
@pytest.mark.parametrize("count", [130, pytest.param(12, marks=pytest.mark.slow),
                                   pytest.param(1, marks=pytest.mark.slow),
                                   pytest.param(36, marks=pytest.mark.slow)])
@pytest.mark.parametrize("key_bits, value_bits", [
    (32, 0), (64, 64), pytest.param(64, 0, marks=pytest.mark.slow)])
def test_records_of_every_width_sort_exactly(key_bits, value_bits, count):
    bench, overrides = format_bench(key_bits, value_bits)
    bench.run("cocotb_kernel", {
        "TOPSORT_CONFIG": "tiny", "TOPSORT_SET": json.dumps(overrides), "TOPSORT_MODE": "first",
        "TOPSORT_RECORDS": count, "TOPSORT_PAUSE": 0.2}, results=f"results_{count}.xml")


# Every key type and order, back to back on one kernel of tiny's shape: 8 and 16-byte records
# (32-bit keys with 32-bit values, 64-bit keys with 64-bit values), and 8-byte records with
# equal keys ordered by value (the output then exactly a stable sort's); under `slow`, 4-byte
# records (by default their float keys go through the RTL in tests/sim/test_arrays.py), 64-bit
# keys alone, 32-bit keys with 96-bit values and 16-byte records ordered by value.
@pytest.mark.parametrize("key_bits, value_bits, equal_keys", [
    (32, 32, "any"), (64, 64, "any"), (32, 32, "by_value"),
    pytest.param(32, 0, "any", marks=pytest.mark.slow),
    pytest.param(64, 0, "any", marks=pytest.mark.slow),
    pytest.param(32, 96, "any", marks=pytest.mark.slow),
    pytest.param(64, 64, "by_value", marks=pytest.mark.slow)])
def test_every_key_type_and_order_sorts_exactly(key_bits, value_bits, equal_keys):
    bench, overrides = format_bench(key_bits, value_bits, equal_keys)
    bench.run("cocotb_kernel", {
        "TOPSORT_CONFIG": "tiny", "TOPSORT_SET": json.dumps(overrides),
        "TOPSORT_MODE": "orders", "TOPSORT_PAUSE": 0.2}, results="results_orders.xml")


@pytest.mark.parametrize("name, flags", [
    ("tiny", ()), ("tiny", ("-g2005",)), ("small", ()),
    pytest.param("small", ("-g2005",), marks=pytest.mark.slow)],
    ids=["tiny-cocotb-default", "tiny-g2005", "small-cocotb-default", "small-g2005"])
def test_every_signal_defined_from_power_up(name, flags):
    case = f"power_up_{name}_{'_'.join(flags) or 'default'}_{WORKER}"
    run_bench([shared_kernel(name)], "topsort", "cocotb_kernel", case, build_args=flags,
              env={"TOPSORT_CONFIG": name, "TOPSORT_MODE": "power_up"})


@functools.cache
def flims_bench():
    """tiny's kernel with FLiMS merge units, built once per worker."""
    case = f"kernel_tiny_flims_{WORKER}"
    return build_bench([write_kernel(config_from("tiny", FLIMS), case)], "topsort", case)


FLIMS = ["merge_unit=flims"]


# tiny with FLiMS units: every workload back to back, every key type and order, the first job
# after power-up past the third pass boundary and every signal defined from power-up, on one
# build (each mode a simulation of its own).
@pytest.mark.parametrize("mode, env", [
    ("suite", {"TOPSORT_PAUSE": 0.2}), ("orders", {"TOPSORT_PAUSE": 0.2}),
    ("first", {"TOPSORT_RECORDS": 130, "TOPSORT_PAUSE": 0.2}), ("power_up", {})])
def test_tiny_kernel_with_flims_units(mode, env):
    flims_bench().run("cocotb_kernel", {
        "TOPSORT_CONFIG": "tiny", "TOPSORT_SET": json.dumps(FLIMS), "TOPSORT_MODE": mode,
        **env}, results=f"results_{mode}.xml")


# The other record widths with FLiMS units, every key type and order (under `slow`: the units
# take any record layout, which the unit tests cover at 8-bit keys and the trees at 33 bits).
@pytest.mark.slow
@pytest.mark.parametrize("key_bits, value_bits", [(32, 0), (64, 64)])
def test_flims_kernel_sorts_every_record_width(key_bits, value_bits):
    overrides = [*FLIMS, f"key_bits={key_bits}", f"value_bits={value_bits}"]
    case = f"kernel_tiny_flims_k{key_bits}_v{value_bits}_{WORKER}"
    bench = build_bench([write_kernel(config_from("tiny", overrides), case)], "topsort", case)
    bench.run("cocotb_kernel", {
        "TOPSORT_CONFIG": "tiny", "TOPSORT_SET": json.dumps(overrides), "TOPSORT_MODE": "orders",
        "TOPSORT_PAUSE": 0.2}, results="results_orders.xml")


def test_tiny_kernel_in_icarus():
    case = "kernel_tiny_icarus"
    source = write_kernel(config_from("tiny"), case)
    run_bench([source], "topsort", "cocotb_kernel", case,
              env={"TOPSORT_CONFIG": "tiny", "TOPSORT_PAUSE": 0.2})


@pytest.mark.slow
@pytest.mark.parametrize("name", ["u280", "u280_flims", "u50", "u280_kv64_flims"])
def test_hbm_kernel_in_verilator(name):
    # The paper's shape, and the explorer's (FLiMS units; the U50's 8 trees), both phases in
    # one run: 4096
    # records per tree, exact, and the performance model within its tolerance of the RTL's
    # cycles in each phase. Every block the kernel repeats is verilated once, as a model of
    # its own: a third of the CPU time of one flat model.
    case = f"kernel_{name}_verilator"
    config = config_from(name)
    source = write_kernel(config, case)
    stats = SIM_BUILD / case / "stats.json"
    run_bench([source], "topsort", "cocotb_kernel", case, sim="verilator",
              quick_compile=True, hierarchical_blocks=repeated_blocks(source, "topsort"),
              env={"TOPSORT_CONFIG": name, "TOPSORT_PAUSE": 0.0, "TOPSORT_MODE": "bulk",
                   "TOPSORT_RECORDS": config.trees * 4096, "TOPSORT_STATS": stats})
    rows = [json.loads(stats.read_text())]      # (one job: its counters)
    for records, phase, rtl, model, error in model_errors(config, rows):
        assert abs(error) <= MODEL_TOLERANCE, (records, phase, rtl, model)


def test_tiny_kernel_in_verilator_block_by_block():
    # The u280 run's build (above), on tiny: each repeated block a model of its own.
    case = "kernel_tiny_hierarchical"
    source = write_kernel(config_from("tiny"), case)
    blocks = repeated_blocks(source, "topsort")
    # (the outermost repeated modules: a lane of each kind, their trees and feeders inside)
    assert {"lane", "reused_lane"} <= {
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


@pytest.mark.parametrize("name, overrides", [
    ("tiny", ()), ("tiny", tuple(FLIMS)), pytest.param("small", (), marks=pytest.mark.slow),
    pytest.param("u280", (), marks=pytest.mark.slow),
    pytest.param("u280_flims", (), marks=pytest.mark.slow),
    pytest.param("u55c_flims", (), marks=pytest.mark.slow),
    pytest.param("u50", (), marks=pytest.mark.slow),
    pytest.param("u280_kv64_flims", (), marks=pytest.mark.slow)])
def test_kernel_verilator_lint_is_clean(name, overrides):
    # small and u280: a minute or more each to generate and lint, so under `slow`; u280 gets
    # its floorplan's port stages, tiny some too (the simulation board has no floorplan).
    stages = (2, 0, 4, 1) if name == "tiny" else None
    case = f"kernel_{name}{'_flims' if overrides else ''}_lint"
    source = write_kernel(config_from(name, overrides), case, port_stages=stages)
    verilator_lint([source], "topsort")
