"""QoR: Yosys resource estimates and logic levels, their composition, and the golden-figure
regression."""

import dataclasses
import functools
import json
from pathlib import Path

import pytest
from amaranth.hdl import Cat, Const, Instance, Module, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from topsort_hdl.analysis.qor import check, load, synth
from topsort_hdl.analysis.qor.blocks import TOP, compose, kernel_bill, kernel_parts, merge_unit
from topsort_hdl.analysis.qor.levels import Levels, LevelsError, PathEnds, netlist_levels
from topsort_hdl.analysis.qor.resources import ResourceEstimate, resource_table
from topsort_hdl.analysis.qor.synth import (
    SynthesisError,
    Utilization,
    cached_result,
    cell_utilization,
    design_key,
    flow_figures,
    synthesize,
)
from topsort_hdl.core.config import PRESETS
from topsort_hdl.hardware.kernel.kernel import TopSortKernel
from topsort_hdl.hardware.kernel.lane import TreeLane
from topsort_hdl.hardware.tree.reuse import ReuseSwitch
from topsort_hdl.targets.hierarchy import block_census
from topsort_hdl.targets.kernel_verilog import kernel_verilog
from topsort_hdl.targets.verilog_text import verilog_instances, verilog_modules, verilog_subset
from topsort_hdl.targets.vitis.project import board_floorplan

GOLDEN = Path(__file__).resolve().parents[3] / "benchmarks" / "golden" / "qor.json"


def test_cells_are_grouped_as_vivado_reports_them():
    usage = cell_utilization({"LUT6": 10, "LUT2": 5, "INV": 1, "FDRE": 7, "FDSE": 1,
                              "RAM32M16": 3, "RAM64X1D": 2, "SRLC32E": 4, "RAMB36E2": 2,
                              "RAMB18E2": 3, "DSP48E2": 1, "CARRY4": 6, "MUXF7": 9,
                              "BUFG": 1, "$scopeinfo": 4})
    assert usage == Utilization(lut=16, lutram=28, srl=4, ff=8, bram=3.5, uram=0, dsp=1,
                                carry=6)
    assert usage.luts == 48
    assert usage.resources().lut == 48 and usage.resources().bram == 3.5
    with pytest.raises(SynthesisError, match="unexpected cell type 'XORCY'"):
        cell_utilization({"XORCY": 1})


@functools.cache
def parts(name):
    return kernel_parts(PRESETS[name])


def test_parts_are_the_emitted_kernels_and_groups_count_every_instance():
    config = PRESETS["small"]
    kernel = parts("small")
    names = list(kernel.blocks)
    assert len(names) == len(set(names))
    groups = kernel.groups
    tree = groups["phase-1 tree"]
    assert tree.count("leaf_feeder") == config.leaves
    assert sorted(set(tree) - {"leaf_feeder"}) == sorted(
        ["tree_p4_l8", "read_engine_l8_b512", "write_engine_p1", "root_packer_e4",
         "tree_controller", "key_order_read_x4", "key_order_write_x4"])
    assert set(groups["reused tree"]) - set(tree) == {"read_engine_l8_b1024",
                                                       "tree_controller_reused"}
    assert sorted(groups["phase-2 extras"]) == sorted(
        ["coupler_e4", "coupler_e4", "merge_unit_8", "root_packer_e8", "write_engine_p2",
         "key_order_write_x8"])
    everything = groups["kernel"]
    assert everything.count("tree_p4_l8") == config.trees
    assert everything.count("leaf_feeder") == config.trees * config.leaves
    assert everything.count("read_engine_l8_b1024") == config.reuse
    assert everything.count("control_registers") == 1
    assert len(groups["register slices"]) == config.trees
    # Every merge unit rate is reported, each block's Verilog is a design of its own.
    assert {f"merge_unit_{rate}" for rate in (1, 2, 4, 8)} <= set(names)
    for block in kernel.blocks.values():
        assert block.verilog.startswith(f"module {block.module}(")
    usage = {name: Utilization(lut=1) for name in names}
    assert compose(groups, usage)["kernel"].lut == len(everything)


@pytest.mark.parametrize("name,unit", [("tiny", "mms"), ("tiny", "flims")])
def test_parts_are_found_without_converting_and_written_as_the_kernels_emission_has_them(
        name, unit):
    """The census finds the cells the emitted Verilog instantiates, each of the same module,
    and each part's own Verilog is the text the whole kernel's emission holds for it: the
    estimate synthesises what `generate` writes."""

    config = dataclasses.replace(PRESETS[name], merge_unit=unit)
    kernel = kernel_parts(config)
    design, _ = kernel_verilog(config, TOP, kernel.port_stages)
    modules = verilog_modules(design.text)
    for block in kernel.blocks.values():
        assert block.verilog == verilog_subset(modules, block.module), block.name
    emitted = verilog_instances(design.text, TOP)
    bill = kernel_bill(config, kernel.port_stages, units=True)
    assert set(bill.modules.values()) <= set(emitted.values())
    census = block_census(TopSortKernel(config, kernel.port_stages), TOP,
                          descend=lambda block: isinstance(block, (ReuseSwitch, TreeLane)))
    # Every block cell of the kernel, of its reuse switch and of its lanes (not the ones
    # inside other blocks).
    parents = ("kernel", "kernel/datapath", "kernel/datapath/reuse",
               *(f"kernel/datapath/lane{t}" for t in range(config.trees)))
    counted = {path: module for path, module in emitted.items() if module in design.modules
               and path.rsplit("/", 1)[0] in parents}
    assert {f"kernel/{path}": module for path, module in census.cells.items()} == counted


def test_synthesis_is_cached_by_design(tmp_path):
    # The smallest real block: one compare-swap cell's worth of selector logic.
    first = synthesize(merge_unit(PRESETS["tiny"], 1), top="unit", cache_dir=tmp_path)
    again = synthesize(merge_unit(PRESETS["tiny"], 1), top="unit", cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert first.utilization == again.utilization and first.design_hash == again.design_hash
    assert first.levels == again.levels and first.levels.lut > 0
    assert first.utilization.luts > 0 and first.utilization.ff > 0
    assert len(list(tmp_path.glob("*.json"))) == 1


def _unit_text():
    from amaranth.back import verilog

    return verilog.convert(merge_unit(PRESETS["tiny"], 1), name="unit", emit_src=False)


def test_a_run_that_dies_is_run_again_in_the_same_flow(tmp_path, monkeypatch):
    """A Yosys run killed by what happens beside it (SIGBUS when another process rewrites
    YoWASP's compiled module under it) is run again: the figures stay the default flow's."""
    real = synth.subprocess.run
    calls = []

    def dies_once(command, **kwargs):
        calls.append(command)
        if len(calls) == 1:
            return synth.subprocess.CompletedProcess(command, -7, "", "")
        return real(command, **kwargs)

    monkeypatch.setattr(synth.subprocess, "run", dies_once)
    result = synthesize(_unit_text(), top="unit", cache_dir=tmp_path)
    assert len(calls) == 2 and calls[0] == calls[1]
    assert result.flow == "default" and result.utilization.luts > 0


def test_the_fallback_flow_is_named_kept_apart_and_never_compared_with_the_default(
        tmp_path, monkeypatch):
    """When the default flow fails on a design every time, the figures are the next flow's:
    the result, the cache and the golden figures say so, and a golden figure measured with the
    default is not matched by them."""
    text = _unit_text()
    default = synthesize(text, top="unit", cache_dir=tmp_path / "good")
    # A default flow that cannot map this design (here: an option Yosys refuses).
    monkeypatch.setitem(synth.FLOWS, "default", " -no-such-option")
    result = synthesize(text, top="unit", cache_dir=tmp_path / "bad")
    assert result.flow == "dff"
    again = cached_result(design_key(text, "unit"), tmp_path / "bad")
    assert again.cached and again.flow == "dff" and again.utilization == result.utilization
    golden = {name: {"value": value, "band": 0, "better": "exact"}
              for name, value in flow_figures("tiny.unit", default.flow).items()}
    failures, _ = check(golden, flow_figures("tiny.unit", result.flow))
    assert failures == ["CHANGED synthesis_flow.tiny.unit: 0 -> 1 (band +/-0): a parameter "
                        "of the measurement; if the change is meant, refresh with "
                        "`make qor-update` in a commit that says why"]


def test_a_cache_entry_made_by_another_script_than_its_keys_is_not_used(tmp_path):
    """A cache written before the flow was part of the key holds, under the default's key,
    figures of the -dff flow where a default run had failed once: they are synthesised again,
    never taken for the default's."""
    text = _unit_text()
    first = synthesize(text, top="unit", cache_dir=tmp_path)
    key = design_key(text, "unit")
    entry = json.loads((tmp_path / f"{key}.json").read_text())
    assert entry["script"] == synth.script("unit") and cached_result(key, tmp_path).cached
    entry["script"] = synth.script("unit", "dff")
    (tmp_path / f"{key}.json").write_text(json.dumps(entry))
    assert cached_result(key, tmp_path) is None
    assert synthesize(text, top="unit", cache_dir=tmp_path).utilization == first.utilization


def test_a_design_every_flow_fails_on_is_an_error_naming_each_flow(tmp_path, monkeypatch):
    monkeypatch.setattr(synth, "FLOWS", {"default": " -no-such-option", "dff": " -nor-this"})
    with pytest.raises(SynthesisError, match=r"(?s)yosys failed on unit, 2 runs of each flow .*"
                                             r"default flow: exit 1: .*; dff flow: exit 1"):
        synthesize(_unit_text(), top="unit", cache_dir=tmp_path)
    assert not list(tmp_path.glob("*.json"))


# The cheap part of `make qor` (which synthesises every part of tiny and u280): a few of
# tiny's blocks, about a minute of Yosys, against the same golden figures.
CHEAP_BLOCKS = ("merge_unit_1", "merge_unit_2", "coupler_e2", "leaf_feeder", "control_registers")


@pytest.mark.parametrize("name", CHEAP_BLOCKS)
def test_tiny_block_resources_and_levels_match_the_golden_figures(name):
    block = parts("tiny").blocks[name]
    result = synthesize(block.verilog, top=block.module)
    usage, levels = result.utilization, result.levels
    figures = {f"resources.tiny.{name}.{kind}": value
               for kind, value in (("luts", usage.luts), ("ff", usage.ff),
                                   ("bram", usage.bram))}
    figures[f"levels.tiny.{name}.lut"] = levels.lut
    figures[f"levels.tiny.{name}.cells"] = levels.cells
    figures.update(flow_figures(f"tiny.{name}", result.flow))
    failures, notes = check(load(GOLDEN), figures)
    assert not failures and not notes, failures + notes


def test_resource_table_without_device_figures():
    kernel = parts("tiny")
    usage = {name: Utilization(lut=10, ff=20) for name in kernel.blocks}
    config = PRESETS["tiny"]
    path = PathEnds("a[0] (FDRE Q)", "b (FDRE D)", ("LUT6", "CARRY4", "CARRY4", "LUT2"))
    levels = {name: Levels(1 + (name == "coupler_e2"), 2, path, path) for name in usage}
    estimate = ResourceEstimate(config, usage, {}, {}, compose(kernel.groups, usage),
                                kernel.port_stages, levels)
    lines = resource_table(estimate)
    assert "no device figures for board sim" in lines[0]
    assert lines[1].endswith(" levels") and lines[2].endswith("    1/2")
    assert any(line.startswith("kernel ") and line.rstrip().endswith("-") for line in lines)
    assert "  coupler_e2: 2 LUT levels, a[0] (FDRE Q) -> b (FDRE D) (LUT6 CARRY4*2 LUT2)" \
        in lines


def test_golden_file_covers_every_kind_of_figure():
    figures = load(GOLDEN)
    kinds = {name.split(".")[0] for name in figures}
    assert kinds == {"resources", "levels", "cycles", "records_per_cycle", "generator", "ecp5",
                     "fmax_mhz", "synthesis_flow"}
    assert {f"levels.tiny.{name}.{kind}" for name in CHEAP_BLOCKS
            for kind in ("lut", "cells")} <= set(figures)
    assert {f"synthesis_flow.tiny.{name}" for name in CHEAP_BLOCKS} <= set(figures)
    assert {"generator.seconds.u280", "generator.peak_mb.u280"} <= set(figures)
    assert "resources.u280.kernel.luts" in figures
    assert {f"fmax_mhz.merge_unit_{rate}" for rate in (1, 2, 4, 8)} <= set(figures)
    json.dumps(figures)     # plain JSON values only


def test_merge_unit_after_place_and_route_matches_the_golden_figures(tmp_path):
    """The cheap part of `make qor`'s pnr part: the rate-1 unit through Yosys and nextpnr-ecp5
    (about 10 s per seed), uncached, against the golden Fmax (the median of its seeds) and
    area; and the cache hit after it."""
    from topsort_hdl.analysis.qor import pnr_figures
    from topsort_hdl.analysis.qor.pnr import place_and_route, pnr_blocks

    block = next(b for b in pnr_blocks(PRESETS["demo"]) if b.name == "merge_unit_1")
    first = place_and_route(block.build(), block.name, cache_dir=tmp_path)
    again = place_and_route(block.build(), block.name, cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert first.fmax_mhz == again.fmax_mhz and first.luts == again.luts
    assert first.fmax_by_seed == again.fmax_by_seed and len(first.fmax_by_seed) == 3
    assert first.fmax_mhz == sorted(first.fmax_by_seed)[1]
    assert "block." in first.critical_path and " -> " in first.critical_path
    failures, notes = check(load(GOLDEN), pnr_figures({block.name: first}))
    assert not failures and not notes, failures + notes



def test_the_demo_figure_is_the_median_build_over_its_seeds(monkeypatch):
    """`demo_pnr` builds once per seed (here stand-ins, cached or not) and reports the build
    with the median Fmax, every seed's Fmax in order and the builds' total time."""
    from topsort_hdl.analysis.qor import pnr
    from topsort_hdl.analysis.qor.pnr import PnrBuild, PnrResult, demo_pnr

    fmax = {None: 104.7, 1: 96.5, 2: 101.2, 3: 99.0, 4: 120.0}
    built = []

    def builds(board, seeds):
        return [PnrBuild(f"demo-{board}", seed, b"", None, ()) for seed in seeds]

    def run(builds, cache_dir=None, **jobs):
        built.extend(build.seed for build in builds)
        return [PnrResult(fmax[b.seed], 34_789, 28_797, 24, 6, f"path of seed {b.seed}",
                          1_500.0, cached=b.seed is None) for b in builds]

    monkeypatch.setattr(pnr, "demo_builds", builds)
    monkeypatch.setattr(pnr, "run_builds", run)
    result = demo_pnr()
    assert built == list(pnr.DEMO_SEEDS) == [None, 1, 2]
    assert result.fmax_mhz == 101.2 and result.critical_path == "path of seed 2"
    assert result.fmax_by_seed == (104.7, 96.5, 101.2)
    assert result.seconds == 4_500.0 and not result.cached and result.luts == 34_789
    assert demo_pnr(seeds=(1, 3, 4, 2, None)).fmax_mhz == 101.2


def test_qors_place_and_route_is_one_batch_and_each_block_gets_its_own_builds(monkeypatch):
    """`run_pnr` hands every block's seeds and the demo's to one `run_builds` (the demo's
    first: the longest) and gives each block the median of its own builds, in the table's
    order (here stand-in blocks and builds)."""
    from topsort_hdl.analysis.qor import pnr, units
    from topsort_hdl.analysis.qor.pnr import PnrBlock, PnrBuild, PnrResult
    from topsort_hdl.analysis.qor.run import run_pnr

    monkeypatch.setattr(pnr, "pnr_blocks", lambda config: [
        PnrBlock(name, lambda: None, f"block {name}") for name in ("a", "b")])
    monkeypatch.setattr(units, "flims_pnr_blocks", lambda config: [
        PnrBlock("c", lambda: None, "block c")])
    monkeypatch.setattr(pnr, "block_builds", lambda block, name: [
        PnrBuild(name, seed, b"", None, ()) for seed in (1, 2, 3)])
    monkeypatch.setattr(pnr, "demo_builds", lambda board: [
        PnrBuild("demo", seed, b"", None, ()) for seed in (None, 1, 2)])
    batches = []
    base = {"demo": 90.0, "a": 100.0, "b": 200.0, "c": 300.0}

    def run(builds, scheduler=None, workers=None, progress=None):
        batches.append(([build.name for build in builds], scheduler, workers))
        return [PnrResult(base[b.name] + (b.seed or 0) * (-1) ** (b.seed or 0), 1, 1, 0, 0,
                          b.name, 1.0) for b in builds]

    monkeypatch.setattr(pnr, "run_builds", run)
    results, descriptions = run_pnr(progress=lambda line: None, workers=2)
    ((names, scheduler, workers),) = batches
    assert names == ["demo"] * 3 + ["a"] * 3 + ["b"] * 3 + ["c"] * 3 and workers == 2
    assert list(results) == list(descriptions) == ["a", "b", "c", "demo"]
    assert results["a"].fmax_by_seed == (99.0, 102.0, 97.0) and results["a"].fmax_mhz == 99.0
    assert results["c"].critical_path == "c" and results["demo"].fmax_by_seed == (90.0, 89.0,
                                                                                   92.0)


def _stand_in_build(fmax, fail):
    """A place-and-route job's stand-in: a nextpnr report with ``fmax``, or an error."""
    if fail:
        raise RuntimeError(f"the build of {fmax} failed")
    return {"fmax": {"clk": {"achieved": fmax}}, "utilization": {"TRELLIS_COMB": {"used": 7}},
            "detailed_net_timings": ["dropped before caching"]}, 1.5


def test_builds_run_as_jobs_and_each_result_is_cached_by_its_key(tmp_path):
    """`run_builds` runs the builds not in the cache on local processes, returns every result
    in the builds' order, caches each (without the report's net timings), and takes them from
    the cache next time without running a job; a job's error reaches the caller."""
    from topsort_hdl.analysis.qor.pnr import PnrBuild, run_builds

    builds = [PnrBuild("block", seed, f"key {seed}".encode(), _stand_in_build,
                       (100.0 + seed, False)) for seed in (1, 2, 3)]
    lines = []
    first = run_builds(builds, tmp_path, workers=2, progress=lines.append)
    assert [r.fmax_mhz for r in first] == [101.0, 102.0, 103.0]
    assert [r.luts for r in first] == [7, 7, 7] and not any(r.cached for r in first)
    assert len(lines) == 3 and lines[-1].endswith("(3/3, 0 left)")
    assert all("seed" in line and "local processes" in line for line in lines)
    entries = sorted(tmp_path.glob("*.json"))
    assert len(entries) == 3
    assert all("detailed_net_timings" not in e.read_text() for e in entries)
    failing = [PnrBuild("block", seed, f"key {seed}".encode(), _stand_in_build, (0.0, True))
               for seed in (1, 2, 3)]
    again = run_builds(failing, tmp_path, workers=2)       # every one cached: no job runs
    assert again == [dataclasses.replace(r, cached=True) for r in first]
    with pytest.raises(RuntimeError, match="the build of 0.0 failed"):
        run_builds([dataclasses.replace(failing[0], key=b"new")], tmp_path, workers=1)


# Logic levels (qor/levels.py): hand-made netlists first (no Yosys), then hand-made designs
# through the real flow, whose depth is known by construction.

def _netlist(cells, ports=()):
    """A Yosys JSON netlist of module ``top``: ``cells`` are ``(name, type, {port: bits})``
    (a port is an output when its name is O, O5, O6, CO, Q, DO*, SPO or DPO), ``ports``
    ``(name, direction, bits)``."""
    def direction(port):
        return "output" if port in ("O", "O5", "O6", "CO", "Q", "Q31", "SPO", "DPO") or \
            port.startswith("DO") else "input"
    return {"modules": {"top": {
        "ports": {name: {"direction": d, "bits": bits} for name, d, bits in ports},
        "cells": {name: {"hide_name": 0, "type": kind,
                         "port_directions": {p: direction(p) for p in pins},
                         "connections": pins} for name, kind, pins in cells},
        "netnames": {}}}}


def _ff(name, d, q, clock=1):
    return (name, "FDRE", {"C": [clock], "CE": ["1"], "R": ["0"], "D": [d], "Q": [q]})


def _lut(name, inputs, out):
    return (name, f"LUT{len(inputs)}", {**{f"I{i}": [b] for i, b in enumerate(inputs)},
                                        "O": [out]})


def _chain(name, start, length, first=100):
    """``length`` LUT1s from bit ``start``; returns the cells and the last bit."""
    cells, bit = [], start
    for i in range(length):
        cells.append(_lut(f"{name}{i}", [bit], first + i))
        bit = first + i
    return cells, bit


def test_levels_count_luts_and_cells_separately():
    # a -> 3 LUTs -> x; b -> LUT -> CARRY4 -> CARRY4 -> MUXF7 -> y (1 LUT level, 4 cells); a
    # gated clock of 5 LUTs is not a path (clock pins are not end points).
    chain, end = _chain("l", 10, 3)
    clock, gated = _chain("g", 10, 5, first=200)
    cells = [_ff("a", 2, 10), _ff("b", 3, 11), *chain, _ff("x", end, 12, clock=gated), *clock,
             _lut("s", [11], 20),
             ("c0", "CARRY4", {"CI": ["0"], "CYINIT": ["0"], "DI": ["0"] * 4,
                               "S": [20, "0", "0", "0"], "CO": [21, 22, 23, 24],
                               "O": [25, 26, 27, 28]}),
             ("c1", "CARRY4", {"CI": [24], "CYINIT": ["0"], "DI": ["0"] * 4, "S": ["0"] * 4,
                               "CO": [31, 32, 33, 34], "O": [35, 36, 37, 38]}),
             ("m", "MUXF7", {"I0": [35], "I1": [11], "S": [10], "O": [40]}),
             _ff("y", 40, 13), ("gnd", "GND", {"G": ["0"]}), ("s0", "$scopeinfo", {})]
    levels = netlist_levels(_netlist(cells), "top")
    assert (levels.lut, levels.cells) == (3, 4)
    assert levels.lut_path == PathEnds("a (FDRE Q)", "x (FDRE D)", ("LUT1",) * 3)
    assert levels.cell_path == PathEnds("b (FDRE Q)", "y (FDRE D)",
                                        ("LUT1", "CARRY4", "CARRY4", "MUXF7"))


def test_levels_carry_and_lut6_2_outputs_depend_on_their_own_inputs_only():
    # S[3] and I5 come from 4 LUTs, but only O[0] and O5 are used: 1 LUT level.
    deep, bit = _chain("d", 10, 4)
    cells = [_ff("a", 2, 10), *deep, _lut("s", [10], 20),
             ("c", "CARRY4", {"CI": ["0"], "CYINIT": ["0"], "DI": [10, 10, 10, bit],
                              "S": [20, 10, 10, bit], "CO": [21, 22, 23, 24],
                              "O": [25, 26, 27, 28]}),
             ("l62", "LUT6_2", {**{f"I{i}": [20] for i in range(5)}, "I5": [bit],
                                "O5": [30], "O6": [31]}),
             _ff("x", 25, 11), _ff("y", 30, 12)]
    levels = netlist_levels(_netlist(cells), "top")
    assert (levels.lut, levels.cells) == (2, 2)
    assert levels.lut_path.cells == ("LUT1", "LUT6_2")
    # Use O[3]: the deep chain counts (4 LUTs, then the carry).
    cells[-2] = _ff("x", 28, 11)
    assert netlist_levels(_netlist(cells), "top").cell_path.cells == ("LUT1",) * 4 + ("CARRY4",)


def _ram(read_a, read_b, write):
    """A RAM32M: ports A and B read at these address bits, D (also the write port) at
    ``write``; port C reads at a constant address."""
    return ("fifo", "RAM32M", {"ADDRA": [read_a] * 5, "ADDRB": [read_b] * 5,
                               "ADDRC": ["0"] * 5, "ADDRD": [write] * 5, "DIA": [10, 10],
                               "DIB": ["0"] * 2, "DIC": ["0"] * 2, "DID": ["0"] * 2,
                               "DOA": [40, 41], "DOB": [42, 43], "DOC": [44, 45],
                               "DOD": [46, 47], "WCLK": [1], "WE": [10]})


def test_levels_through_an_asynchronous_lutram_read():
    """A read address goes through the RAM (one LUT level); the write port's data and address
    are end points; a read-only address whose data is unused is not; a RAM's contents (a
    constant read address) are a start point."""
    read, read_bit = _chain("ra", 10, 1)
    unused, unused_bit = _chain("rb", 10, 5, first=200)
    tail = [_lut("o", [40], 50), _ff("x", 50, 11)]
    cells = [_ff("a", 2, 10), *read, *unused, _ram(read_bit, unused_bit, 10), *tail]
    levels = netlist_levels(_netlist(cells), "top")
    assert levels.lut == 3
    assert levels.lut_path == PathEnds("a (FDRE Q)", "x (FDRE D)", ("LUT1", "RAM32M", "LUT1"))
    write, write_bit = _chain("wa", 10, 4, first=300)
    cells = [_ff("a", 2, 10), *write, _ram(10, 10, write_bit), *tail]
    levels = netlist_levels(_netlist(cells), "top")
    assert levels.lut == 4 and levels.lut_path.end == "fifo (RAM32M ADDRD)"
    cells = [_ff("a", 2, 10), _ram(10, 10, 10), _lut("c", [44], 51), _ff("y", 51, 12)]
    path = netlist_levels(_netlist(cells), "top").lut_path
    assert path == PathEnds("fifo (RAM32M DOC)", "y (FDRE D)", ("LUT1",))


def test_levels_of_shift_registers_and_ports():
    srl = ("srl", "SRLC32E", {"A": ["1"] * 5, "CE": [10], "CLK": [1], "D": [3], "Q": [20],
                              "Q31": [21]})
    cells = [_ff("a", 2, 10), srl, _lut("q", [20], 30), _ff("x", 30, 11)]
    path = netlist_levels(_netlist(cells), "top").lut_path
    assert path == PathEnds("srl (SRLC32E Q)", "x (FDRE D)", ("LUT1",))
    cells[1] = (*srl[:2], {**srl[2], "A": [10] * 5})        # a dynamic shift register
    assert netlist_levels(_netlist(cells), "top").lut_path.cells == ("SRLC32E", "LUT1")
    # Ports are start and end points: input -> 2 LUTs -> output.
    ports = [("i", "input", [3, 4]), ("o", "output", [41])]
    cells = [_lut("p", [4], 40), _lut("r", [40], 41)]
    levels = netlist_levels(_netlist(cells, ports), "top")
    assert levels.lut == 2 and str(levels.lut_path) == "i (input) -> o (output)"


def test_levels_refuse_loops_and_unknown_cells():
    loop = [_lut("p", [10], 11), _lut("q", [11], 10), _ff("x", 11, 12)]
    with pytest.raises(LevelsError, match="combinational loop"):
        netlist_levels(_netlist(loop), "top")
    with pytest.raises(LevelsError, match="'XORCY'"):
        netlist_levels(_netlist([("x", "XORCY", {"O": [1]})]), "top")


class _Primitives(wiring.Component):
    """Registers -> three LUT6 -> a register (3 LUT levels); registers -> LUT2 -> four CARRY4
    -> MUXF7 -> a register (1 LUT level, 6 cells): instantiated primitives, which Yosys keeps
    as they are."""

    def __init__(self):
        super().__init__({"i": In(32), "o": Out(2)})

    def elaborate(self, platform):
        m = Module()
        r = Signal(32)
        m.d.sync += r.eq(self.i)
        bit = r[0]
        for k in range(3):
            out = Signal(name=f"lut{k}")
            m.submodules[f"lut{k}"] = Instance(
                "LUT6", p_INIT=Const(0x6996966996696996, 64), o_O=out,
                **{f"i_I{j}": bit if j == 0 else r[5 * k + j] for j in range(6)})
            bit = out
        s = Signal()
        m.submodules.lut_s = Instance("LUT2", p_INIT=Const(6, 4), i_I0=r[20], i_I1=r[21], o_O=s)
        carry = Const(0)
        for k in range(4):
            co, o = Signal(4, name=f"co{k}"), Signal(4, name=f"o{k}")
            m.submodules[f"carry{k}"] = Instance(
                "CARRY4", i_CI=carry, i_CYINIT=Const(0), i_DI=r[22:26],
                i_S=Cat(s, r[26:29]) if k == 0 else r[24:28], o_CO=co, o_O=o)
            carry = co[3]
        f7 = Signal()
        m.submodules.f7 = Instance("MUXF7", i_I0=carry, i_I1=r[30], i_S=r[31], o_O=f7)
        m.d.sync += self.o.eq(Cat(bit, f7))
        return m


class _LutramRead(wiring.Component):
    """A 32 x 8 memory read asynchronously at a registered address, 3 of its bits XORed into a
    register: 2 LUT levels (the LUTRAM, then a LUT3)."""

    def __init__(self):
        super().__init__({"wa": In(5), "wd": In(8), "we": In(1), "ra": In(5), "o": Out(8)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=8, depth=32, init=[])
        write, read = mem.write_port(), mem.read_port(domain="comb")
        m.d.comb += [write.addr.eq(self.wa), write.data.eq(self.wd), write.en.eq(self.we)]
        m.d.sync += [read.addr.eq(self.ra),
                     self.o.eq(read.data ^ read.data.rotate_left(1) ^ read.data.rotate_left(2))]
        return m


class _Compare(wiring.Component):
    """``a < b`` of two 32-bit registers into a register: LUTs (2 bits each) into a carry
    chain of 3 CARRY4: 1 LUT level, 4 cells."""

    def __init__(self):
        super().__init__({"a": In(32), "b": In(32), "o": Out(1)})

    def elaborate(self, platform):
        m = Module()
        a, b = Signal(32), Signal(32)
        m.d.sync += [a.eq(self.a), b.eq(self.b), self.o.eq(a < b)]
        return m


@pytest.mark.parametrize("design, lut, cells, lut_cells", [
    (_Primitives, 3, 6, ("LUT6",) * 3),
    (_LutramRead, 2, 2, ("RAM32M16", "LUT3")),
    (_Compare, 1, 4, None),
])
def test_levels_of_hand_made_designs_through_yosys(design, lut, cells, lut_cells):
    levels = synthesize(design(), top="levels").levels
    assert (levels.lut, levels.cells) == (lut, cells), levels
    if lut_cells:
        assert levels.lut_path.cells == lut_cells
    assert levels.lut_path.start.endswith("(FDRE Q)") and levels.lut_path.end.endswith(
        "(FDRE D)")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="the child's VmHWM is Linux's")
def test_the_generators_peak_memory_is_its_own_not_the_parents():
    """The child generating a kernel reports its own high-water mark: ru_maxrss carries the
    parent's over the exec, so a parent holding 400 MB made tiny's 60 MB read as 400."""
    from topsort_hdl.analysis.qor.measure import measure_generator

    held = bytearray(400 << 20)
    held[::4096] = b"\1" * len(held[::4096])     # touched: resident, not only reserved
    measured = measure_generator("tiny")
    assert measured["modules"] > 0 and 0 < measured["peak_mb"] < 300
    del held


def test_a_shape_the_papers_figures_cannot_place_is_estimated_without_port_stages():
    """A new shape too big for the paper's per-tree figures (8 reused trees of 16-byte
    records): its estimate counts its ports without register stages rather than failing, so
    that its own figures can be measured and stored (the floorplan then uses them)."""
    config = dataclasses.replace(PRESETS["u280_kv64_flims"], name="custom")
    with pytest.raises(ValueError, match="does not fit on u280"):
        board_floorplan(config)
    bill = kernel_bill(config)
    assert bill.port_stages == (0,) * config.trees
    assert bill.groups["register slices"] == ["register_slice_s0"] * config.trees
