"""QoR: Yosys resource estimates, their composition, and the golden-figure regression."""

import json
from pathlib import Path

import pytest

from topsort_hdl.kernel.config import PRESETS
from topsort_hdl.qor import check, load, update
from topsort_hdl.qor.blocks import compose, kernel_blocks
from topsort_hdl.qor.resources import ResourceEstimate, resource_table
from topsort_hdl.qor.synth import SynthesisError, Utilization, cell_utilization, synthesize

GOLDEN = Path(__file__).resolve().parents[1] / "benchmarks" / "golden" / "qor.json"


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


def test_composition_counts_every_instance():
    config = PRESETS["u280"]
    names = [block.name for block in kernel_blocks(config)]
    assert len(names) == len(set(names))
    # Give every block a distinct power of 1000 of LUTs to read the multiplicities back.
    usage = {name: Utilization(lut=1000 ** i) for i, name in enumerate(names)}
    groups = compose(config, usage, port_stages=(2,) * 4 + (0,) * 12)

    def count(group, name):
        return groups[group].lut // 1000 ** names.index(name) % 1000

    assert count("phase-1 tree", "leaf_feeder") == config.leaves
    assert count("kernel", "merge_tree") == config.trees
    assert count("kernel", "read_engine") == config.trees - config.reuse
    assert count("kernel", "read_engine_reused") == config.reuse
    assert count("kernel", "write_engine") == config.trees
    assert count("kernel", "phase2_write_engine") == 1
    assert count("kernel", "merge_unit_32") == 1 and count("kernel", "merge_unit_16") == 2
    assert count("kernel", "coupler") == 4 and count("kernel", "coupler_16") == 2
    assert count("kernel", "register_slice_2") == 4 and count("kernel", "register_slice") == 0
    assert count("kernel", "control") == 1


def test_synthesis_is_cached_by_design(tmp_path):
    # The smallest real block: one compare-swap cell's worth of selector logic.
    block = next(b for b in kernel_blocks(PRESETS["tiny"]) if b.name == "merge_unit_1")
    first = synthesize(block.build(), top="unit", cache_dir=tmp_path)
    again = synthesize(block.build(), top="unit", cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert first.utilization == again.utilization and first.design_hash == again.design_hash
    assert first.utilization.luts > 0 and first.utilization.ff > 0
    assert len(list(tmp_path.glob("*.json"))) == 1


# The cheap part of `make qor` (which synthesises every block of tiny and u280): a few of
# tiny's blocks, about a minute of Yosys, against the same golden figures.
CHEAP_BLOCKS = ("merge_unit_1", "merge_unit_2", "coupler", "leaf_feeder", "control",
                "register_slice")


@pytest.mark.parametrize("name", CHEAP_BLOCKS)
def test_tiny_block_resources_match_the_golden_figures(name):
    block = next(b for b in kernel_blocks(PRESETS["tiny"]) if b.name == name)
    usage = synthesize(block.build(), top=block.name).utilization
    figures = {f"resources.tiny.{name}.{kind}": value
               for kind, value in (("luts", usage.luts), ("ff", usage.ff),
                                   ("bram", usage.bram))}
    failures, notes = check(load(GOLDEN), figures)
    assert not failures and not notes, failures + notes


def test_composition_counts_a_ports_further_stages_as_the_difference():
    """A port's first stage holds its credit FIFOs, each further one only registers."""
    config = PRESETS["u280"]
    usage = {block.name: Utilization() for block in kernel_blocks(config)}
    usage["register_slice"] = Utilization(lut=100, ff=1000)
    usage["register_slice_2"] = Utilization(lut=105, ff=2000)
    slices = compose(config, usage, port_stages=(1, 2, 4) + (0,) * 13)["register slices"]
    assert (slices.lut, slices.ff) == (100 + 105 + 115, 1000 + 2000 + 4000)


def test_resource_table_without_device_figures():
    usage = {b.name: Utilization(lut=10, ff=20) for b in kernel_blocks(PRESETS["tiny"])}
    config = PRESETS["tiny"]
    estimate = ResourceEstimate(config, usage, {}, {}, compose(config, usage), (0,) * 4)
    lines = resource_table(estimate)
    assert "no device figures for platform sim" in lines[0]
    assert any(line.startswith("kernel ") and line.rstrip().endswith("-") for line in lines)


def test_golden_check_flags_both_directions_and_new_figures():
    golden = {"resources.x.luts": {"value": 1000, "tolerance": 0.01, "better": "lower"},
              "records_per_cycle.y": {"value": 2.0, "tolerance": 0.01, "better": "higher"}}
    assert check(golden, {"resources.x.luts": 1009, "records_per_cycle.y": 1.99}) == ([], [])
    failures, _ = check(golden, {"resources.x.luts": 1011, "records_per_cycle.y": 2.1})
    assert failures[0].startswith("IMPROVED records_per_cycle.y: 2.0 -> 2.1")
    assert failures[1].startswith("REGRESSION resources.x.luts: 1000 -> 1011")
    _, notes = check(golden, {"cycles.z": 5})
    assert notes == ["NEW cycles.z = 5: not in the golden file"]
    updated = update(golden, {"resources.x.luts": 900, "cycles.z": 5})
    assert updated["resources.x.luts"] == {"value": 900, "tolerance": 0.01, "better": "lower"}
    assert updated["cycles.z"]["better"] == "lower"


def test_golden_file_covers_every_kind_of_figure():
    figures = load(GOLDEN)
    kinds = {name.split(".")[0] for name in figures}
    assert kinds == {"resources", "cycles", "records_per_cycle", "generator", "ecp5",
                     "fmax_mhz"}
    assert {"generator.seconds.u280", "generator.peak_mb.u280"} <= set(figures)
    assert "resources.u280.kernel.luts" in figures
    assert {f"fmax_mhz.merge_unit_{rate}" for rate in (1, 2, 4, 8)} <= set(figures)
    json.dumps(figures)     # plain JSON values only


def test_merge_unit_after_place_and_route_matches_the_golden_figures(tmp_path):
    """The cheap part of `make qor`'s pnr part: the rate-1 unit through Yosys and nextpnr-ecp5
    (about 10 s), uncached, against the golden Fmax and area; and the cache hit after it."""
    from topsort_hdl.qor import pnr_figures
    from topsort_hdl.qor.pnr import place_and_route, pnr_blocks

    block = next(b for b in pnr_blocks(PRESETS["demo"]) if b.name == "merge_unit_1")
    first = place_and_route(block.build(), block.name, cache_dir=tmp_path)
    again = place_and_route(block.build(), block.name, cache_dir=tmp_path)
    assert not first.cached and again.cached
    assert first.fmax_mhz == again.fmax_mhz and first.luts == again.luts
    assert "block." in first.critical_path and " -> " in first.critical_path
    failures, notes = check(load(GOLDEN), pnr_figures({block.name: first}))
    assert not failures and not notes, failures + notes
