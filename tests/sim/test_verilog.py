"""cocotb testbenches on the emitted Verilog.

Icarus runs the small units; it slows down steeply with bundle width (E = 16: about 8
cycles/s against 30,000 in Verilator), so the wide units run in Verilator by default and in
Icarus only under the ``slow`` marker.
"""

import re
from pathlib import Path

import pytest

from topsort_hdl.sim.runner import VERILATOR_WAIVERS, run_bench, write_unit
from topsort_hdl.targets.units import build_unit, emit_verilog
from topsort_hdl.targets.verilog_text import verilog_instances

MMS_CASES = [
    (1, "icarus"), (2, "icarus"), (4, "icarus"), (8, "icarus"),
    # E = 4 in Verilator too: with its signals public, Verilator reports loops through its
    # multi-bit wires (UNOPTFLAT, waived).
    (4, "verilator"), (8, "verilator"), (16, "verilator"),
    pytest.param(16, "icarus", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("rate,sim", MMS_CASES)
def test_mms_verilog(rate, sim):
    case = f"mms_e{rate}_{sim}"
    source = write_unit("mms", case, rate=rate)
    run_bench([source], "mms", "cocotb_mms", case, env={"TOPSORT_RATE": rate}, sim=sim)


# FLiMS: the rates Icarus runs fast (the wide ones in Verilator under `slow`; the kernel's lint
# has FLiMS units too).
FLIMS_CASES = [(1, "icarus"), (2, "icarus"), (4, "icarus"), (8, "icarus"),
               pytest.param(8, "verilator", marks=pytest.mark.slow),
               pytest.param(16, "verilator", marks=pytest.mark.slow),
               pytest.param(32, "verilator", marks=pytest.mark.slow)]


@pytest.mark.parametrize("rate,sim", FLIMS_CASES)
def test_flims_verilog(rate, sim):
    case = f"flims_e{rate}_{sim}"
    source = write_unit("flims", case, rate=rate)
    run_bench([source], "flims", "cocotb_mms", case,
              env={"TOPSORT_RATE": rate, "TOPSORT_UNIT": "flims"}, sim=sim)


def test_mms_verilog_narrow_records():
    # Narrow keys make equal keys the rule rather than the exception.
    case = "mms_e4_k8v8"
    source = write_unit("mms", case, rate=4, key_bits=8, value_bits=8)
    run_bench([source], "mms", "cocotb_mms", case,
              env={"TOPSORT_RATE": 4, "TOPSORT_KEY_BITS": 8, "TOPSORT_VALUE_BITS": 8})


@pytest.mark.parametrize("rate", [1, 2, 4, 8])
@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_verilog(rate, descending):
    case = f"bitonic_e{rate}_{'desc' if descending else 'asc'}"
    source = write_unit("bitonic", case, rate=rate, descending=descending)
    run_bench([source], "bitonic", "cocotb_bitonic", case,
              env={"TOPSORT_RATE": rate, "TOPSORT_DESCENDING": int(descending)})


@pytest.mark.parametrize("descending", [False, True])
def test_cas_verilog(descending):
    case = f"cas_{'desc' if descending else 'asc'}"
    source = write_unit("cas", case, descending=descending)
    run_bench([source], "cas", "cocotb_cas", case,
              env={"TOPSORT_DESCENDING": int(descending)})


TREE_CASES = [
    (1, 2, "icarus"), (2, 4, "icarus"), (4, 8, "icarus"),
    # The u280 phase-1 tree: 7 minutes, mostly Verilator's build, so under `slow` (the
    # default suite keeps the wide units in Verilator and every tree shape of `tiny`).
    pytest.param(8, 16, "verilator", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("rate,leaves,sim", TREE_CASES)
def test_tree_verilog(rate, leaves, sim):
    case = f"tree_p{rate}_l{leaves}_{sim}"
    source = write_unit("tree", case, rate=rate, leaves=leaves, leaf_depth=16)
    run_bench([source], "tree", "cocotb_tree", case, sim=sim,
              env={"TOPSORT_RATE": rate, "TOPSORT_LEAVES": leaves,
                   "TOPSORT_GROUPS": 6 if leaves < 16 else 12})


REUSE_CASES = [
    (2, 2, 4, "icarus"),
    pytest.param(4, 8, 16, "verilator", marks=pytest.mark.slow),  # the paper's phase 2
]


@pytest.mark.parametrize("trees,rate,leaves,sim", REUSE_CASES)
def test_reuse_verilog(trees, rate, leaves, sim):
    case = f"reuse_r{trees}_p{rate}_l{leaves}_{sim}"
    source = write_unit("reuse", case, trees=trees, rate=rate, leaves=leaves, leaf_depth=16)
    run_bench([source], "reuse", "cocotb_tree", case, sim=sim,
              env={"TOPSORT_RATE": rate, "TOPSORT_LEAVES": leaves, "TOPSORT_TREES": trees,
                   "TOPSORT_GROUPS": 4})


def test_reuse_switch_instantiates_each_tree_once():
    # The trees serve both modes: the emitted design holds r trees of l - 1 units each (one
    # tree module, instantiated r times) and r - 1 extra units, and no second copy of a tree.
    text = emit_verilog(build_unit("reuse", trees=4, rate=1, leaves=4), "reuse")
    paths = verilog_instances(text, "reuse")
    trees = {path: module for path, module in paths.items() if re.fullmatch(r"tree\d+", path)}
    assert sorted(trees) == [f"tree{t}" for t in range(4)] and len(set(trees.values())) == 1
    units = [path for path in paths if re.fullmatch(r"(tree\d+/|extra_)l\d+u\d+", path)]
    assert len([u for u in units if u.startswith("tree")]) == 4 * 3
    assert len([u for u in units if u.startswith("extra_")]) == 3
    assert text.count(f"module {trees['tree0']}(") == 1


# (data_width, leaves, burst_bytes, outstanding, simulator)
READER_CASES = [(64, 4, 64, 3, "icarus"), (512, 16, 1024, 4, "verilator")]


@pytest.mark.parametrize("width,leaves,burst,outstanding,sim", READER_CASES)
def test_axi_reader_verilog(width, leaves, burst, outstanding, sim):
    case = f"reader_w{width}_l{leaves}_{sim}"
    source = write_unit("reader", case, data_width=width, leaves=leaves, burst_bytes=burst,
                        outstanding=outstanding)
    run_bench([source], "reader", "cocotb_axi", case, sim=sim, env={
        "TOPSORT_ENGINE": "reader", "TOPSORT_DATA_WIDTH": width, "TOPSORT_LEAVES": leaves,
        "TOPSORT_BURST_BYTES": burst, "TOPSORT_OUTSTANDING": outstanding})


# (data_width, ports, slots, burst_bytes, batch_bytes, simulator)
WRITER_CASES = [(64, 1, 1, 64, 4096, "icarus"), (64, 4, 1, 128, 256, "icarus"),
                (64, 2, 2, 128, 256, "icarus"), (512, 4, 4, 4096, 4096, "verilator")]


@pytest.mark.parametrize("width,ports,slots,burst,batch,sim", WRITER_CASES)
def test_axi_writer_verilog(width, ports, slots, burst, batch, sim):
    case = f"writer_w{width}_p{ports}_s{slots}_{sim}"
    source = write_unit("writer", case, data_width=width, ports=ports, slots=slots,
                        burst_bytes=burst, batch_bytes=batch, outstanding=3)
    run_bench([source], "writer", "cocotb_axi", case, sim=sim, env={
        "TOPSORT_ENGINE": "writer", "TOPSORT_DATA_WIDTH": width, "TOPSORT_PORTS": ports,
        "TOPSORT_SLOTS": slots, "TOPSORT_BURST_BYTES": burst, "TOPSORT_BATCH_BYTES": batch,
        "TOPSORT_OUTSTANDING": 3})


def test_the_docs_list_the_verilator_waivers_the_code_uses():
    page = (Path(__file__).resolve().parents[2] / "docs" / "verification.md").read_text()
    listed = set(re.findall(r"-Wno-[A-Z]+", page))
    assert listed == set(VERILATOR_WAIVERS)
