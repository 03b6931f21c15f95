"""The design-space explorer: enumeration, pricing against the model and the estimate, the
front, saved presets, the synthesis jobs on a Dask cluster against local processes, and a
point's validation in RTL."""

import dataclasses
import hashlib

import pytest

from topsort_hdl.analysis.explore import (
    BlockFigures,
    Space,
    enumerate_space,
    front_table,
    pareto,
    price_points,
    run_jobs,
    save_preset,
)
from topsort_hdl.analysis.explore.price import PricedPoint, records_for
from topsort_hdl.analysis.explore.validate import validation_records
from topsort_hdl.analysis.perf.model import estimate
from topsort_hdl.analysis.qor.blocks import TOP, compose, kernel_bill, merge_unit
from topsort_hdl.analysis.qor.levels import Levels, PathEnds
from topsort_hdl.analysis.qor.synth import SynthesisResult, Utilization
from topsort_hdl.core.boards import HBM_BOARDS
from topsort_hdl.core.config import PRESETS, KernelConfig, config_from, saved_presets
from topsort_hdl.hardware.block import module_name

TINY_SPACE = Space("sim", trees=(4,), leaves=(4, 8), rate=(2,), reuse=(2,), presort=(1,))


def test_the_space_is_every_valid_configuration_and_names_each_point():
    configs, refused = enumerate_space(Space("sim", trees=(2, 4), leaves=(2, 4), rate=(1, 2),
                                             reuse=(2, 4), presort=(0, 1)))
    names = [c.name for c in configs]
    assert len(names) == len(set(names))
    # Every combination is either a configuration or refused by KernelConfig's own rules.
    assert len(configs) + sum(refused.values()) == 2 * 2 * 2 * 2 * 2 * 2
    for config in configs:
        assert config.reuse <= config.trees and 2 * config.rate <= config.leaves
        again = KernelConfig(**{f.name: getattr(config, f.name)
                                for f in dataclasses.fields(config)})
        assert again == config
    assert "sim-t4-l4-r2-u2-mms-ps" in names
    assert any(reason.startswith("rate must be at most leaves / 2") for reason in refused)
    # By default every axis the board and records allow: 512-bit beats at most.
    space = Space("u280")
    assert space.values("trees") == (2, 4, 8, 16) and space.values("rate") == (1, 2, 4, 8)
    assert Space("u280", 64, 64).values("rate") == (1, 2, 4)
    clocks = (100_000_000, 200_000_000)
    clocked, _ = enumerate_space(dataclasses.replace(TINY_SPACE, clocks_hz=clocks))
    assert {c.clock_hz for c in clocked} == {100_000_000, 200_000_000}
    assert any(c.name.endswith("@200") for c in clocked)


def test_a_size_is_held_when_it_fills_the_channels_but_for_the_room_each_keeps():
    u280 = PRESETS["u280"]
    assert records_for(u280, 4 << 30) == u280.capacity
    assert records_for(u280, 1 << 30) == (1 << 30) // 8
    assert records_for(dataclasses.replace(u280, trees=8), 4 << 30) is None


class FakeFigures:
    """Figures that follow from the module's name: what the pricing does with them is what is
    under test, not Yosys."""

    cache = None

    def __init__(self):
        self.asked = {}

    def results(self, blocks):
        self.asked.update(blocks)
        out = {}
        for module in blocks:
            n = int(hashlib.sha256(module.encode()).hexdigest()[:6], 16)
            path = PathEnds("a (FDRE Q)", "b (FDRE D)", ("LUT6",))
            out[module] = SynthesisResult(Utilization(lut=100 + n % 900, ff=50 + n % 500),
                                          0.0, True, module, Levels(1 + n % 7, 2, path, path))
        return out


def test_every_point_is_priced_as_the_model_and_the_composed_estimate_say():
    configs, _ = enumerate_space(TINY_SPACE)
    figures = FakeFigures()
    size = 32 << 10
    points, unpriced = price_points(configs, size, figures)
    assert not unpriced and len(points) == len(configs) == 4
    for point in points:
        c = point.config
        records = size // c.record_bytes
        assert point.records == records
        for order in ("random", "sorted"):
            assert point.gbps[order] == estimate(c, records, "measured", order).total.gbps
        assert point.speed == min(point.gbps.values())
        bill = kernel_bill(c, port_stages=(0,) * c.trees)
        results = figures.results({bill.modules[n]: b for n, b in bill.blocks.items()})
        usage = {n: results[bill.modules[n]].utilization for n in bill.blocks}
        assert point.usage == compose(bill.groups, usage)["kernel"]
        assert point.share is None and point.plan is None      # the sim board: no device
        assert point.levels == max(results[m].levels.lut for m in bill.modules.values())
        assert ("timing risk" in " ".join(point.marks)) == (point.levels > 6)
    front = pareto(points)
    assert front and all(p.fits for p in front)
    assert [p.speed for p in front] == sorted(p.speed for p in front)
    assert all(not (q.speed >= p.speed and q.usage.luts < p.usage.luts)
               for p in front for q in points if q.fits and q is not p)
    lines = front_table(points, unpriced, size, 0.65)
    assert any(front[-1].config.name in line for line in lines)
    assert "GB/s modelled" in lines[0] and "LUT estimated" in lines[0]


def test_points_that_do_not_fit_are_marked_with_the_reason():
    config = dataclasses.replace(PRESETS["u280"], name="u280-x")

    def point(share, marks):
        return PricedPoint(config, 1, {"random": 20.0}, "memory", {"phase1": 1, "phase2": 1},
                           Utilization(lut=int(share * 1e6)), share, 5, "tree", None,
                           tuple(marks), not marks)

    fits, over = point(0.5, []), point(0.7, ["over the 65% LUT budget"])
    assert pareto([fits, over]) == [fits]
    lines = front_table([fits, over], {"u280-y": "holds 2048 MB at most"}, 4 << 30, 0.65)
    assert any("over the 65% LUT budget" in line for line in lines)
    assert any("1 points do not hold 4 GB" in line for line in lines)


def test_a_saved_preset_is_read_back_as_the_same_configuration(tmp_path, monkeypatch):
    monkeypatch.setenv("TOPSORT_PRESETS", str(tmp_path))
    config = dataclasses.replace(PRESETS["u280"], name="x", merge_unit="flims", leaves=32,
                                 clock_hz=250_000_000)
    save_preset(config, "mine", tmp_path)
    loaded = config_from("mine", ["reuse=2"])
    assert dataclasses.replace(loaded, name="x", reuse=4) == config
    assert loaded.name == "mine" and loaded.reuse == 2
    (tmp_path / "bad.toml").write_text("trees = 3\n")
    with pytest.raises(ValueError, match=r"saved preset .*bad.toml: trees must be"):
        saved_presets(tmp_path)
    (tmp_path / "bad.toml").unlink()
    with pytest.raises(ValueError, match="config must be one of .*, mine, not 'nothing'"):
        config_from("nothing")


@pytest.mark.parametrize("name", ["../escape", "bad name", "a/b", "a.b", "", "mine\n"])
def test_a_preset_name_is_a_plain_word(tmp_path, name):
    # What `configs` prints in a column and a file name in the presets folder: nothing else.
    with pytest.raises(ValueError, match="name must be a preset name of letters, digits, _ and "
                                         "-, not "):
        save_preset(PRESETS["tiny"], name, tmp_path / "presets")
    assert not (tmp_path / "presets").exists()
    if name and "/" not in name:     # one a user wrote into the folder is refused on reading
        (tmp_path / f"{name}.toml").write_text("trees = 4\n")
        with pytest.raises(ValueError, match="(?s)saved preset .*: its file name must be a preset"):
            saved_presets(tmp_path)


def test_every_built_in_preset_has_a_plain_name():
    from topsort_hdl.core.config import check_preset_name

    for name in PRESETS:
        assert check_preset_name(name) == name


def test_a_refused_value_gives_its_whole_rule():
    # The reason a combination is refused keeps the list of what is allowed ("mms, flims"),
    # dropping only the value ("..., not 'foo'").
    _, refused = enumerate_space(dataclasses.replace(TINY_SPACE, merge_unit=("foo",)))
    assert list(refused) == ["merge_unit must be one of mms, flims"]


def _square(x):
    return x * x


def test_local_jobs_return_each_result_under_its_key():
    assert dict(run_jobs(_square, [(k, (k,)) for k in range(5)], workers=2)) == \
        {k: k * k for k in range(5)}
    assert list(run_jobs(_square, [])) == []


def test_a_dask_cluster_gives_the_figures_local_processes_give(tmp_path):
    """Two blocks synthesised by a two-worker Dask cluster on the loopback address and by
    local processes, each into a cache of its own: the same figures, and a second run takes
    every block from the cache."""
    distributed = pytest.importorskip("distributed")
    tiny = PRESETS["tiny"]
    blocks = {}
    for rate in (1, 2):
        block = merge_unit(tiny, rate)
        blocks[module_name(block, TOP)] = block
    local = BlockFigures(tmp_path / "local", workers=2).results(blocks)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                                  dashboard_address=":0", processes=True) as cluster:
        remote_figures = BlockFigures(tmp_path / "dask", scheduler=cluster.scheduler_address)
        remote = remote_figures.results(blocks)
    assert remote_figures.synthesised == 2
    assert {m: (r.utilization, r.levels) for m, r in remote.items()} == \
        {m: (r.utilization, r.levels) for m, r in local.items()}
    again = BlockFigures(tmp_path / "dask")
    assert again.results(blocks).keys() == blocks.keys() and again.cached == 2
    assert again.synthesised == 0


def test_a_point_is_validated_only_when_the_model_is_within_tolerance_of_its_rtl():
    """The validation's verdict follows each order's and phase's error (here RTL cycles made
    up against the model's own): within 5% everywhere is validated, one phase out is not."""
    from topsort_hdl.analysis.explore.validate import Validation, validation_lines

    config = PRESETS["tiny"]
    model = estimate(config, 4000, "ideal", "sorted")
    rows = [{"records": 4000, "order": order, "phase1_cycles": model.phase1.cycles,
             "phase2_cycles": round(model.phase2.cycles * 1.04)}
            for order in ("random", "sorted")]
    rows[0]["phase1_cycles"] = estimate(config, 4000, "ideal", "random").phase1.cycles
    good = Validation(config, 4000, rows, 1.0)
    assert good.within_tolerance and validation_lines(good)[-1].startswith("validated")
    assert [round(e, 3) for *_, e in good.errors()][1::2] == [round(1 / 1.04 - 1, 3)] * 2
    bad = Validation(config, 4000, [rows[0], {**rows[1], "phase1_cycles": 2 * rows[1][
        "phase1_cycles"]}], 1.0)
    lines = validation_lines(bad)
    assert not bad.within_tolerance and lines[-1].startswith("NOT VALIDATED")
    assert [line.split()[:2] for line in lines if line.endswith("out of tolerance")] == [
        ["sorted", "phase1"]]


def test_the_u50_points_of_the_papers_shape_are_marked_not_fitting():
    """On the U50 the paper's 16 trees hold 4 GB but do not floorplan on its two dies: marked,
    never on the front (figures from the u280 presets' stored estimates scale)."""
    board = HBM_BOARDS["u50"]
    configs, _ = enumerate_space(Space("u50", trees=(16,), leaves=(16,), rate=(8,),
                                       reuse=(4,), merge_unit=("mms",), presort=(1,)))
    points, _ = price_points(configs, 4 << 30, _ScaledFigures(), 0.65)
    assert len(points) == 1 and not points[0].fits
    assert any("does not floorplan" in mark for mark in points[0].marks)
    assert len(board.slrs) == 2


class _ScaledFigures(FakeFigures):
    """Every block 20,000 LUTs: 16 trees of them cannot share two dies."""

    def results(self, blocks):
        out = super().results(blocks)
        return {m: dataclasses.replace(r, utilization=Utilization(lut=20_000))
                for m, r in out.items()}


def test_the_command_prints_the_front_plots_it_and_saves_its_fastest_point(tmp_path):
    """`topsort-hdl explore` end to end on the simulation board (tiny's blocks through Yosys,
    cached after the first run): the front's row agrees with the model, the JSON holds every
    point, the PNG is written, and --save makes a preset `configs` lists and `generate`
    takes."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "TOPSORT_PRESETS": str(tmp_path / "presets")}
    args = ["explore", "--board", "sim", "--bytes", "32K", "--trees", "4", "--leaves", "4",
            "--rate", "2", "--reuse", "2", "--presort", "1", "--merge-unit", "mms",
            "--plot", str(tmp_path / "new" / "front.png"),       # (folders made as written)
            "--json", str(tmp_path / "new" / "front.json"),
            "--save", "found", "--validate"]
    done = subprocess.run([sys.executable, "-m", "topsort_hdl", *args], capture_output=True,
                          text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    config = dataclasses.replace(PRESETS["tiny"], name="sim-t4-l4-r2-u2-mms-ps",
                                 read_burst_bytes=1024, reuse_burst_bytes=4096,
                                 write_burst_bytes=4096, batch_bytes=4096,
                                 read_outstanding=16, write_outstanding=8)
    records = (32 << 10) // 8
    gbps = estimate(config, records, "measured", "random").total.gbps
    row = next(line for line in done.stdout.splitlines() if line.startswith(config.name))
    assert f"{gbps:6.2f}" in row
    (point,) = json.loads((tmp_path / "new" / "front.json").read_text())
    assert point["name"] == config.name and point["fits"] and point["luts"] > 0
    assert (tmp_path / "new" / "front.png").read_bytes()[:4] == b"\x89PNG"
    assert "priced 1 points" in done.stderr
    # --validate: the point sorted in Verilator (each order priced, exact), its cycles within
    # the model's tolerance, before --save saves it.
    table = done.stdout[done.stdout.index(f"{config.name} in RTL"):].splitlines()
    assert f"{validation_records(config)} records sorted exactly" in table[0]
    assert [line.split()[:2] for line in table[2:6]] == [
        [order, phase] for order in ("random", "sorted") for phase in ("phase1", "phase2")]
    assert table[6].startswith("validated: exact")
    assert table[7].startswith("saved ")
    listed = subprocess.run([sys.executable, "-m", "topsort_hdl", "configs"],
                            capture_output=True, text=True, env=env, timeout=300)
    assert any(line.startswith("found ") for line in listed.stdout.splitlines())
    saved = saved_presets(tmp_path / "presets")["found"]
    assert dataclasses.replace(saved, name=config.name) == config
