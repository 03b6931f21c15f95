"""The performance model: against the RTL's cycle counts, and its own logic and command line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topsort_hdl.analysis.perf.model import estimate, lateral_rate, memory_rate
from topsort_hdl.analysis.perf.sweep import PAPER_U280, parse_size, plot_sweep, sweep, sweep_table
from topsort_hdl.analysis.qor import MODEL_TOLERANCE, check, load, model_errors, model_table
from topsort_hdl.analysis.qor.measure import BENCHMARK_SORTS, benchmark_config
from topsort_hdl.core.config import PRESETS, config_from
from topsort_hdl.core.plan import tree_plans
from topsort_hdl.sim.kernel_sort import simulate_sweep

GOLDEN = Path(__file__).resolve().parents[3] / "benchmarks" / "golden" / "qor.json"


def golden_rows(name):
    """The benchmark sorts' RTL cycle counts as the golden file keeps them."""
    return model_table.golden_rows(load(GOLDEN), name)


@pytest.mark.parametrize("name", list(BENCHMARK_SORTS))
def test_model_within_five_percent_of_the_golden_rtl_cycles(name):
    # `make qor` re-measures these on the RTL (and this test's RTL run below re-measures a
    # few of tiny's on every `make test`), so they are the RTL's, not the model's.
    config = benchmark_config(name)
    for records, phase, rtl, model, error in model_errors(config, golden_rows(name)):
        assert abs(error) <= MODEL_TOLERANCE, (name, records, phase, rtl, model)


def test_tiny_rtl_cycles_match_the_golden_figures_and_the_model():
    config = benchmark_config("tiny")
    counts = [257, 1234, 3001]        # one, tuned-last and five-pass sorts
    rows = simulate_sweep(config, counts)
    golden = {row["records"]: row for row in golden_rows("tiny")}
    figures = {f"cycles.tiny.{r['records']}.{phase}": r[f"{phase}_cycles"]
               for r in rows for phase in ("phase1", "phase2")}
    failures, notes = check(load(GOLDEN), figures)
    assert not failures and not notes, failures + notes
    for records, phase, rtl, model, error in model_errors(config, rows):
        assert rtl == golden[records][f"{phase}_cycles"]
        assert abs(error) <= MODEL_TOLERANCE, (records, phase, rtl, model)


def test_the_docs_model_table_is_current():
    """docs/performance-model.md's table is what the golden RTL cycles and the model give
    (``make docs`` rewrites it); a stale cell fails."""
    page = (GOLDEN.parents[2] / "docs" / "performance-model.md").read_text()
    figures = load(GOLDEN)
    assert model_table.render(page, figures) == page
    region = page[page.index(model_table.BEGIN):]
    row = next(line for line in region.splitlines() if line.startswith("| `tiny` |"))
    stale = page.replace(row, "| `tiny` | 1 | 1 / 1 (+0.0%) | 1 / 1 (+0.0%) |")
    assert stale != page and model_table.render(stale, figures) == page


def test_model_follows_the_plan_and_the_memory():
    config = PRESETS["u280"]
    records = 1 << 29 - 3          # 512 MB
    e = estimate(config, records, "ideal")
    plans = tree_plans(config, records)
    assert e.passes == max(len(p.passes) for p in plans)
    assert [p.active for p in e.tree_passes[0]] == [s.active for s in plans[0].passes]
    assert e.bound() == "compute"
    # A channel's measured 13.27 GB/s is below p * 8 bytes * 214 MHz = 13.7 GB/s.
    measured = estimate(config, records, "measured")
    assert measured.bound() == "memory"
    assert measured.phase1.cycles > e.phase1.cycles
    assert estimate(config, records, "peak").bound() == "compute"


def test_a_pass_with_fewer_active_leaves_than_p_merges_at_a():
    # The paper's Figure 7 effect: the tuned last pass of 1 GB on the paper's shape has 2
    # active leaves.
    config = PRESETS["u280-paper"]
    e = estimate(config, (1 << 30) // 8, "ideal")
    last = e.tree_passes[0][-1]
    assert (last.active, last.rate, last.bound) == (2, 2.0, "leaves")
    full = e.tree_passes[0][0]
    assert last.cycles > 3.5 * full.cycles


def test_phase2_sees_the_input_order_only_through_the_placement():
    # Measured on small, 16,000 records (make qor): blocks sorted 14,214 cycles, random 8,360.
    small = PRESETS["small"]
    blocks = config_from("small", ["placement=blocks"])
    random_, sorted_ = (estimate(small, 16000, "ideal", d) for d in ("random", "sorted"))
    assert sorted_.total.cycles == random_.total.cycles
    slow = estimate(blocks, 16000, "ideal", "sorted")
    assert slow.phase1.cycles == random_.phase1.cycles       # phase 1 never sees the order
    # F = 4 leaves at a time under one rate-2 unit: 2 records per cycle.
    assert (slow.phase2_pass.rate, slow.phase2_pass.bound) == (pytest.approx(2.0, rel=0.03),
                                                               "leaves")
    near = estimate(blocks, 16000, "ideal", "nearly-sorted").phase2_pass.rate
    assert slow.phase2_pass.rate < near < 2.2
    assert estimate(blocks, 16000, "ideal", "few-distinct").total == random_.total
    with pytest.raises(ValueError, match="distribution must be one of random, sorted, "):
        estimate(small, 10, "ideal", "zipf")


def test_lateral_links_of_the_hbm_switch():
    u280 = PRESETS["u280"]
    channel = memory_rate(u280, "measured")
    # The paper's layout: each phase-2 port reaches one neighbouring switch for half of its
    # traffic, on a link of its own (masters at channels 2i: M0 and M2), half a channel's
    # worth: exactly the link, no loss.
    assert lateral_rate(u280, "measured") == pytest.approx(channel)
    # Two phase-2 ports of 8 trees each reach three switches away: the first link carries
    # 6/8 of a port, so a port moves 0.5 / 0.75 of a channel.
    wide = config_from("u280", ["reuse=2"])
    assert lateral_rate(wide, "measured") == pytest.approx(channel * 0.5 / 0.75)
    assert estimate(wide, wide.capacity).phase2_pass.rate <= 2 * channel * 0.5 / 0.75
    assert lateral_rate(u280, "ideal") == lateral_rate(PRESETS["demo"], "measured") == \
        float("inf")


def test_model_errors_name_the_problem():
    config = PRESETS["tiny"]
    with pytest.raises(ValueError, match=r"records must be at most tiny's capacity \(8064\), "
                                         r"not 8065"):
        estimate(config, 8065)
    with pytest.raises(ValueError, match="records must be a non-negative integer, not -1"):
        estimate(config, -1)
    with pytest.raises(ValueError, match="memory must be one of ideal, peak, measured, not 'x'"):
        estimate(config, 10, "x")


@pytest.mark.parametrize("text,size", [("4G", 4 << 30), ("256M", 256 << 20), ("65536", 65536),
                                       ("64k", 64 << 10), ("1GiB", 1 << 30)])
def test_parse_size(text, size):
    assert parse_size(text) == size


def test_sweep_table_and_plot(tmp_path):
    config = PRESETS["u280-paper"]
    rows = sweep(config)
    assert [r["size"] for r in rows] == [32 << 20 << k for k in range(8)]
    assert rows[-1]["records"] == config.capacity          # 4 GB is clamped
    assert rows[-1]["passes"] == PAPER_U280["passes"]
    # The presort saves a pass at 4 GB.
    assert sweep(PRESETS["u280"])[-1]["passes"] == PAPER_U280["passes"] - 1
    lines = sweep_table(config, rows, "measured")
    assert any(line.lstrip().startswith("4 GB*") for line in lines)
    png = plot_sweep(config, rows, tmp_path / "sweep.png", "measured")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "topsort_hdl", *args], capture_output=True,
                          text=True, timeout=300)


def test_model_command(tmp_path):
    out = run_cli("model", "--config", "u280", "--bytes", "1G", "--json", str(tmp_path / "m.json"))
    assert out.returncode == 0, out.stderr
    assert "5 phase-1 passes" in out.stdout and "overall:" in out.stdout
    figures = json.loads((tmp_path / "m.json").read_text())
    assert figures["passes"] == 5 and figures["records"] == (1 << 30) // 8
    config = config_from("u280")
    assert figures["overall_gbps"] == estimate(config, (1 << 30) // 8).total.gbps


@pytest.mark.parametrize("args,message", [
    (["model", "--config", "u280", "--bytes", "4G"],
     "--bytes 4G is more than u280 holds (4294901760 bytes: each channel keeps a batch for "
     "other buffers); --bytes capacity models a full kernel"),
    (["model", "--config", "u280", "--bytes", "12"],
     "--bytes must be a multiple of the record size (8), not 12"),
    (["model", "--config", "u280", "--bytes", "lots"],
     "--bytes: size must be a byte count like 4G, 256M or 65536, not 'lots'"),
    (["model", "--config", "u280", "--bytes", "1G", "--plot", "x.png"], "--plot needs --sweep"),
    (["model", "--config", "u280"], "one of the arguments --bytes --sweep is required"),
    (["qor", "--update"], "--update needs --golden"),
    (["qor", "--golden", "x.json", "--set", "trees=2"],
     "--golden checks the presets' figures; drop --set"),
    (["qor", "--store-figures", "--set", "trees=2"],
     "--store-figures stores a preset's own figures; drop --set and --golden"),
    (["qor", "--golden", "missing.json"],
     "cannot read golden figures missing.json: [Errno 2] No such file or directory: "
     "'missing.json'"),
])
def test_model_and_qor_command_errors(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [f"topsort-hdl: error: {message}"]
