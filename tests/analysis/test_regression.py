"""Golden figures: the one file format and the one policy of `make bench` and `make qor`, the
conversion of the earlier formats, and `topsort-hdl bench --golden/--update`."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from topsort_hdl.analysis.regression import (
    BENCH_KEYS,
    GoldenError,
    bench_figures,
    bench_name,
    check,
    convert,
    load,
    parse,
    rule,
    save,
    update,
)

GOLDEN = Path(__file__).resolve().parents[2] / "benchmarks" / "golden"
POLICY_PAGE = Path(__file__).resolve().parents[2] / "docs" / "qor.md"

FIGURES = {
    "resources.x.luts": {"value": 1000, "band": "1%", "better": "lower"},
    "records_per_cycle.y": {"value": 2.0, "band": "1%", "better": "higher"},
    "mms.rate=4.latency": {"value": 13, "band": 0, "better": "lower"},
    "tree.p=2 l=4.equal.efficiency": {"value": 0.987, "band": 0.005, "better": "higher"},
    "tree.p=2 l=4.equal.records": {"value": 1024, "band": 0, "better": "exact"},
    "tree.p=2 l=4.equal.seconds": {"value": 5.2},
}


def test_inside_the_band_matches():
    measured = {"resources.x.luts": 1009, "records_per_cycle.y": 1.99, "mms.rate=4.latency": 13,
                "tree.p=2 l=4.equal.efficiency": 0.983, "tree.p=2 l=4.equal.records": 1024,
                "tree.p=2 l=4.equal.seconds": 500.0}    # recorded only: never compared
    assert check(FIGURES, measured) == ([], [])


def test_a_regression_fails():
    failures, _ = check(FIGURES, {"resources.x.luts": 1011, "mms.rate=4.latency": 14,
                                  "tree.p=2 l=4.equal.efficiency": 0.98})
    assert failures == [
        "REGRESSION mms.rate=4.latency: 13 -> 14 (band +/-0)",
        "REGRESSION resources.x.luts: 1000 -> 1011 (band +/-1%)",
        "REGRESSION tree.p=2 l=4.equal.efficiency: 0.987 -> 0.98 (band +/-0.005)",
    ]


def test_an_improvement_beyond_the_band_fails_too():
    failures, _ = check(FIGURES, {"records_per_cycle.y": 2.1, "mms.rate=4.latency": 12},
                        refresh="make bench-update")
    assert failures == [
        "BETTER than golden mms.rate=4.latency: 13 -> 12 (band +/-0): refresh with "
        "`make bench-update` in a commit that says why",
        "BETTER than golden records_per_cycle.y: 2.0 -> 2.1 (band +/-1%): refresh with "
        "`make bench-update` in a commit that says why",
    ]


def test_an_exact_figure_fails_either_way_and_new_figures_are_notes():
    for records in (1023, 1025):
        (failure,), _ = check(FIGURES, {"tree.p=2 l=4.equal.records": records})
        assert failure.startswith(f"CHANGED tree.p=2 l=4.equal.records: 1024 -> {records}")
    assert check(FIGURES, {"cycles.z": 5}) == ([], ["NEW cycles.z = 5: not in the golden file"])


def test_update_keeps_bands_takes_new_ones_from_the_rules_and_replaces_groups():
    golden = dict(FIGURES)
    updated = update(golden, {"resources.x.luts": 900, "cycles.z": 5, "levels.t.b.lut": 6})
    assert updated["resources.x.luts"] == {"value": 900, "band": "1%", "better": "lower"}
    assert updated["cycles.z"] == {"value": 5, "band": "1%", "better": "lower"}
    assert updated["levels.t.b.lut"] == {"value": 6, "band": 0, "better": "lower"}
    # Levels are integers with a band of 0: one level either way leaves it.
    assert check(updated, {"levels.t.b.lut": 7})[0][0].startswith("REGRESSION levels.t.b.lut")
    assert check(updated, {"levels.t.b.lut": 5})[0][0].startswith("BETTER than golden levels")
    # A group measured again is replaced whole: a block that is gone leaves nothing behind.
    golden["resources.x.old.luts"] = golden["resources.y.luts"] = golden["resources.x.luts"]
    updated = update(golden, {"resources.x.luts": 900})
    assert "resources.x.old.luts" not in updated and "resources.y.luts" in updated
    # Benchmark rows: the key fields name the row; wall clock is recorded, not compared.
    row = {"shape": "p=2 l=4", "workload": "equal", "rate": 2, "records": 1024,
           "efficiency": 0.987, "seconds": 5.2}
    assert bench_name("tree", row) == "tree.p=2 l=4.equal"
    assert bench_name("mms", {"rate": 4}) == "mms.rate=4"
    figures = update({}, bench_figures("tree", [row]), replace=["tree"])
    assert figures["tree.p=2 l=4.equal.seconds"] == {"value": 5.2}
    assert figures["tree.p=2 l=4.equal.rate"] == {"value": 2, "band": 0, "better": "exact"}
    with pytest.raises(KeyError, match="no rule for figure 'mystery.x'"):
        rule("mystery.x")


def test_every_golden_file_is_in_the_one_format():
    for name in ("mms", "tree", "axi", "qor"):
        figures = load(GOLDEN / f"{name}.json")
        assert figures
        # Converting again changes nothing.
        data = json.loads((GOLDEN / f"{name}.json").read_text())
        assert convert(data)[1] == figures
        for figure, entry in figures.items():
            if name in BENCH_KEYS:
                assert figure.startswith(f"{name}.")
            if "band" in entry:     # the rules agree with the file
                assert rule(figure) == (entry["band"], entry["better"]), figure


def test_the_earlier_formats_convert_keeping_every_value_and_band():
    old_qor = {"about": "a", "figures": {
        "resources.x.luts": {"value": 1000, "tolerance": 0.01, "better": "lower"},
        "fmax_mhz.y": {"value": 80.5, "tolerance": 0.03, "better": "higher"},
        "levels.x.lut": {"value": 6, "tolerance": 0, "better": "lower"}}}
    about, figures = convert(old_qor)
    assert about == "a" and figures == {
        "resources.x.luts": {"value": 1000, "band": "1%", "better": "lower"},
        "fmax_mhz.y": {"value": 80.5, "band": "3%", "better": "higher"},
        "levels.x.lut": {"value": 6, "band": 0, "better": "lower"}}
    old_bench = {"mms": [{"rate": 1, "long_runs": 16, "records_per_cycle": 1.0, "latency": 9,
                          "seconds": 24.05}]}
    _, figures = convert(old_bench)
    assert figures == {
        "mms.rate=1.long_runs": {"value": 16, "band": 0, "better": "exact"},
        "mms.rate=1.records_per_cycle": {"value": 1.0, "band": 0.005, "better": "higher"},
        "mms.rate=1.latency": {"value": 9, "band": 0, "better": "lower"},
        "mms.rate=1.seconds": {"value": 24.05}}
    with pytest.raises(GoldenError, match="an earlier golden format; convert it with"):
        parse(old_bench, "old.json")


@pytest.mark.parametrize("data,message", [
    ([], "x.json: a golden file is an object with 'figures'"),
    ({"figures": {"a.b": 3}}, "x.json: figure 'a.b': an entry must be an object"),
    ({"figures": {"a.b": {"band": 0, "better": "lower"}}}, "x.json: figure 'a.b': no 'value'"),
    ({"figures": {"a.b": {"value": "12"}}}, "'value' must be a number, not '12'"),
    ({"figures": {"a.b": {"value": 1, "band": 0}}}, "'band' and 'better' go together"),
    ({"figures": {"a.b": {"value": 1, "band": "1 %x", "better": "lower"}}},
     "'band' must be a number of at least 0 or a percentage such as \"1%\", not '1 %x'"),
    ({"figures": {"a.b": {"value": 1, "band": -1, "better": "lower"}}},
     "'band' must be a number of at least 0"),
    ({"figures": {"a.b": {"value": 1, "band": 0, "better": "smaller"}}},
     "'better' must be one of lower, higher, exact, not 'smaller'"),
    ({"figures": {"a.b": {"value": 1, "tol": 0}}}, "figure 'a.b': unknown field 'tol'"),
])
def test_a_bad_golden_file_is_named_with_its_figure_and_field(data, message):
    with pytest.raises(GoldenError) as error:
        parse(data, "x.json")
    assert message in str(error.value)


def test_a_golden_file_that_is_not_json(tmp_path):
    path = tmp_path / "g.json"
    path.write_text("{")
    with pytest.raises(GoldenError, match=f"{path}: not JSON"):
        load(path)


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "topsort_hdl", *args], capture_output=True,
                          text=True, timeout=300)


def test_bench_golden_update_check_and_refusal(tmp_path):
    golden = tmp_path / "mms.json"
    save(golden, {"mms.rate=2.latency": {"value": 11, "band": 0, "better": "lower"}}, "x")
    out = run_cli("bench", "mms", "--rate", "1", "--golden", str(golden), "--update")
    assert out.returncode == 0, out.stderr
    figures = load(golden)
    assert figures["mms.rate=1.latency"] == {"value": 9, "band": 0, "better": "lower"}
    assert "mms.rate=2.latency" in figures       # a row not measured again stays
    out = run_cli("bench", "mms", "--rate", "1", "--golden", str(golden))
    assert out.returncode == 0 and "matches the golden results" in out.stdout, out.stdout
    for latency, verdict in ((8, "REGRESSION"), (10, "BETTER than golden")):
        figures["mms.rate=1.latency"]["value"] = latency
        save(golden, figures, "x")
        out = run_cli("bench", "mms", "--rate", "1", "--golden", str(golden))
        assert out.returncode == 1
        assert f"{verdict} mms.rate=1.latency: {latency} -> 9" in out.stdout
    golden.write_text('{"figures": {"mms.rate=1.latency": {"value": 9, "band": 0}}}')
    out = run_cli("bench", "mms", "--rate", "1", "--golden", str(golden))
    assert out.returncode == 2
    assert out.stderr.strip() == (
        f"topsort-hdl: error: cannot read golden results {golden}: {golden}: figure "
        "'mms.rate=1.latency': 'band' and 'better' go together (neither: recorded only)")
    out = run_cli("bench", "mms", "--update")
    assert out.returncode == 2 and "--update needs --golden" in out.stderr


def test_bench_flims_measures_the_flims_unit(tmp_path):
    golden = tmp_path / "flims.json"
    out = run_cli("bench", "flims", "--rate", "2", "--golden", str(golden), "--update")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("flims E=2 ")
    figures = load(golden)
    assert figures["flims.rate=2.records_per_cycle"]["value"] == 2.0
    assert figures["flims.rate=2.comparators"]["value"] == 3
    assert figures["flims.rate=2.short_bubbles"]["value"] == 0


def test_the_docs_state_the_one_policy():
    text = " ".join(POLICY_PAGE.read_text().split())
    assert "better than golden" in text.lower()
    assert "make bench-update" in text and "make qor-update" in text


def test_convert_and_apply_from_the_command_line(tmp_path):
    old = tmp_path / "qor.json"
    old.write_text(json.dumps({"about": "a", "figures": {
        "ecp5.u.luts": {"value": 100, "tolerance": 0.01, "better": "lower"},
        "ecp5.u.ff": {"value": 50, "tolerance": 0.01, "better": "lower"},
        "fmax_mhz.u": {"value": 90.0, "tolerance": 0.03, "better": "higher"}}}))
    for _ in range(2):      # a second run changes nothing
        out = subprocess.run([sys.executable, "-m", "topsort_hdl.analysis.regression", "convert",
                              str(old)],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert load(old)["fmax_mhz.u"] == {"value": 90.0, "band": "3%", "better": "higher"}
    measured = tmp_path / "figures.json"
    measured.write_text(json.dumps({"ecp5.u.luts": 120, "fmax_mhz.u": 85.5}))
    out = subprocess.run([sys.executable, "-m", "topsort_hdl.analysis.regression", "apply",
                          str(old),
                          str(measured)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert load(old) == {"ecp5.u.luts": {"value": 120, "band": "1%", "better": "lower"},
                         "fmax_mhz.u": {"value": 85.5, "band": "3%", "better": "higher"}}
    assert json.loads(old.read_text())["about"] == "a"
