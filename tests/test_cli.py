"""The command line: outputs, exit status 2 with one line on a user mistake."""

import gc
import shutil
import subprocess
import sys
import tomllib
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from tests.conftest import ROOT
from topsort_hdl.cli import main
from topsort_hdl.sim.runner import SIM_BUILD, run_bench


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "topsort_hdl", *args], capture_output=True,
                          text=True, timeout=900)


@pytest.mark.parametrize("args,message", [
    ([], "the following arguments are required: COMMAND"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["unit", "mms"], "the following arguments are required: --out"),
    (["explore"], "the following arguments are required: --board"),
    (["explore", "--board", "u9"], "--board must be one of u280, "),
    (["explore", "--board", "sim", "--record", "32"],
     "--record takes KEY+VALUE bits such as 32+32, not '32'"),
    (["explore", "--board", "sim", "--record", "32+16"],
     "key_bits + value_bits must be 32, 64 or 128 (4, 8 or 16-byte records), not 48"),
    (["explore", "--board", "sim", "--trees", "2", "--reuse", "4"],
     "no configuration of sim is in the space asked for: reuse must be a power of two"),
    (["explore", "--board", "sim", "--trees", "x"],
     "--trees takes comma-separated values, not 'x'"),
    (["explore", "--board", "sim", "--budget", "0"],
     "--budget must be a percentage in (0, 100], not 0"),
    (["explore", "--board", "sim", "--save", "tiny"],
     "--save must not name a built-in preset, not 'tiny'"),
    (["explore", "--board", "sim", "--save", "../escape"],
     "--save must be a preset name of letters, digits, _ and -, not '../escape'"),
    (["explore", "--board", "sim", "--save", "bad name"],
     "--save must be a preset name of letters, digits, _ and -, not 'bad name'"),
    (["explore", "--board", "sim", "--save", "a/b"],
     "--save must be a preset name of letters, digits, _ and -, not 'a/b'"),
    (["explore", "--board", "sim", "--clock", "0"],
     "--clock must be between 1 and 1000 MHz, not 0"),
    (["explore", "--board", "sim", "--clock", "300", "2000"],
     "--clock must be between 1 and 1000 MHz, not 2000"),
    (["explore", "--board", "sim", "--clock", "nan"],
     "--clock must be between 1 and 1000 MHz, not nan"),
    (["explore", "--board", "sim", "--merge-unit", "mms,foo"],
     "--merge-unit must be one of mms, flims, not 'foo'"),
    (["sort", "--config", "tiny", "--input", "/dev/null", "--output", "o", "--sim", "xsim"],
     "argument --sim: invalid choice: 'xsim'"),
    (["explore", "--board", "sim", "--distribution", "upside-down"],
     "--distribution must be among random, "),
    (["explore", "--board", "sim", "--workers", "0"], "--workers must be 1 or more, not 0"),
    (["qor", "--part", "pnr", "--scheduler", "8786"],
     "--scheduler takes a Dask scheduler's address such as tcp://HOST:8786, not '8786'"),
    (["qor", "--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"],
     "--workers counts local processes; with --scheduler the cluster's workers run the jobs"),
    (["unit", "tree2", "--out", "x.v"],
     "kind must be one of cas, bitonic, mms, flims, tree, reuse, reader, writer, not 'tree2'"),
    (["unit", "reader", "--burst-bytes", "8192", "--out", "x.v"],
     "burst_bytes must be a power of two between 64 and 4096, not 8192"),
    (["unit", "writer", "--ports", "3", "--out", "x.v"],
     "ports must be a power of two between 1 and 16, not 3"),
    (["unit", "reader", "--data-width", "100", "--out", "x.v"],
     "data_width must be a power of two between 32 and 1024, not 100"),
    (["unit", "mms", "--rate", "6", "--out", "x.v"],
     "rate must be a power of two between 1 and 32, not 6"),
    (["unit", "mms", "--rate", "four", "--out", "x.v"], "invalid int value: 'four'"),
    (["unit", "mms", "--stages", "9", "--out", "x.v"],
     "network_stages must be between 0 and 3, not 9"),
    (["unit", "bitonic", "--key-bits", "0", "--out", "x.v"],
     "key_bits must be between 1 and 256, not 0"),
    (["unit", "cas", "--name", "2bad", "--out", "x.v"],
     "name must be a Verilog identifier, not '2bad'"),
    (["bench", "mms", "--rate", "3"], "rate must be a power of two between 1 and 32, not 3"),
    (["bench", "tree", "--rate", "2"], "--rate applies to 'bench mms' and 'bench flims' only"),
    (["unit", "tree", "--rate", "32", "--leaves", "16", "--out", "x.v"],
     "rate must be a power of two no larger than leaves (16), not 32"),
    (["unit", "tree", "--leaves", "6", "--out", "x.v"],
     "leaves must be a power of two between 2 and 256, not 6"),
    (["unit", "reuse", "--trees", "3", "--out", "x.v"],
     "trees must be a power of two of at least 2, not 3"),
    (["unit", "tree", "--leaf-depth", "0", "--out", "x.v"],
     "leaf_depth must be a positive integer, not 0"),
    (["generate", "--config", "huge"],
     "config must be one of u280, u280-paper, u55c, u280_flims, u55c_flims, u50, "
     "u280_kv64_flims, u280_kv64, u280_k32, tiny, small, demo, not 'huge'"),
    (["generate", "--set", "trees=3"], "trees must be a power of two"),
    (["generate", "--set", "speed=3"], "--set takes KEY=VALUE with KEY one of"),
    (["sort", "--config", "tiny", "--input", "/nonexistent", "--output", "o"],
     "cannot read /nonexistent"),
    (["generate", "--set", "key_bits=64", "--set", "value_bits=32"],
     "key_bits + value_bits must be 32, 64 or 128 (4, 8 or 16-byte records), not 96"),
    (["generate", "--set", "key_bits=40", "--set", "value_bits=24"],
     "key_bits must be 32 or 64, not 40"),
    (["unit", "mms", "--descending", "--out", "x.v"],
     "--descending applies to cas, bitonic only, not mms"),
    (["unit", "reader", "--rate", "2", "--out", "x.v"],
     "--rate applies to bitonic, mms, flims, tree, reuse only, not reader"),
    (["generate", "--set", "clock_hz=1000000000000000"],
     "clock_hz must be between 1000000 and 1000000000, not 1000000000000000"),
    (["generate", "--set", "write_burst_bytes=64", "--set", "batch_bytes=128"],
     "batch_bytes must be at least 256 (write_burst_bytes 64, reuse * the 64-byte beat 256), "
     "not 128"),
    (["bitstream", "--board", "ulx3s"],
     "board must be one of ulx3s-85f, ecp5-5g-evn, not 'ulx3s'"),
    (["qor", "--part", "place"], "invalid choice: 'place'"),
])
def test_user_mistakes_exit_2_with_one_line(args, message, capsys):
    with warnings.catch_warnings():
        # A rejected component is collected here, not as a warning in some later test.
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(SystemExit) as stop:
            main(args)
        code = stop.value.code
        del stop
        gc.collect()
    assert code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("topsort-hdl: error: ")
    assert message in captured.err


# Every path a command writes: its arguments ({path} the path under test, {input} a records
# file, {tmp} the test's folder), the option and whether it names a file or a folder.
OUTPUT_PATHS = [
    ("sort --config tiny --input {input} --output {path}", "--output", "file"),
    ("sort --config tiny --input {input} --output {tmp}/o.bin --waves {path}", "--waves", "file"),
    ("sort --config tiny --input {input} --output {tmp}/o.bin --build {path}", "--build",
     "folder"),
    ("generate --config tiny --out {path}", "--out", "folder"),
    ("unit mms --out {path}", "--out", "file"),
    ("bench mms --json {path}", "--json", "file"),
    ("bench tree --golden {path} --update", "--golden", "file"),
    ("model --config tiny --bytes 1M --json {path}", "--json", "file"),
    ("model --config tiny --sweep --plot {path}", "--plot", "file"),
    ("explore --board sim --json {path}", "--json", "file"),
    ("explore --board sim --plot {path}", "--plot", "file"),
    ("explore --board sim --save fast", "--save: the presets folder", "folder"),
    ("qor --config tiny --json {path}", "--json", "file"),
    ("qor --golden {path} --update", "--golden", "file"),
    ("formal --work {path}", "--work", "folder"),
    ("bitstream --out {path}", "--out", "folder"),
]


@pytest.mark.parametrize("wrong", ["under a file", "the other kind"])
@pytest.mark.parametrize("command,option,kind", OUTPUT_PATHS,
                         ids=[f"{c.split()[0]} {o}" for c, o, _ in OUTPUT_PATHS])
def test_a_bad_output_path_is_refused_before_any_work(tmp_path, capsys, monkeypatch, command,
                                                      option, kind, wrong):
    """One rule for every output (core/output_paths.py), checked before the command does
    anything: one line naming the option and the path, exit 2, nothing written, no time
    spent (each command's work, from a kernel's generation to a cold exploration, takes
    longer than the bound; what prints progress would have printed it)."""
    import time

    records = tmp_path / "records.bin"
    _records_file(records, 5)
    folder = tmp_path / "folder"
    folder.mkdir()
    suffix = ".png" if option == "--plot" else ".out"
    path = {("under a file", "file"): records / f"x{suffix}",
            ("under a file", "folder"): records / "sub",
            ("the other kind", "file"): folder,
            ("the other kind", "folder"): records}[wrong, kind]
    if "{path}" not in command:      # --save writes in the presets folder
        monkeypatch.setenv("TOPSORT_PRESETS", str(path))
    args = command.format(path=path, input=records, tmp=tmp_path).split()
    start = time.perf_counter()
    with pytest.raises(SystemExit) as stop:
        main(args)
    seconds = time.perf_counter() - start
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"topsort-hdl: error: {option} {path}"), captured.err
    reason = {"under a file": f"{records} is a file, not a folder",
              "the other kind": "is a folder, not a file" if kind == "file"
              else "is a file, not a folder"}[wrong]
    assert reason in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "records.bin"]
    assert not any(folder.iterdir())
    assert seconds < 10, f"{seconds:.1f} s: the path was checked after some work"


@pytest.mark.parametrize("command", ["model --config tiny --sweep --plot {tmp}/{name}",
                                     "explore --board sim --plot {tmp}/{name}"])
@pytest.mark.parametrize("name", ["front.txt", "front"])
def test_a_plot_must_name_a_format_matplotlib_writes(tmp_path, capsys, command, name):
    with pytest.raises(SystemExit) as stop:
        main(command.format(tmp=tmp_path, name=name).split())
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--plot {tmp_path / name}: name a file ending in one of " \
        in err and ".png, " in err and ".svg" in err, err


def test_missing_folders_of_an_output_are_made(tmp_path, capsys):
    out = tmp_path / "new" / "deeper" / "cas.v"
    with pytest.raises(SystemExit) as stop:
        main(["unit", "cas", "--out", str(out)])
    assert stop.value.code == 0 and "module cas(" in out.read_text()
    figures = tmp_path / "figures" / "model.json"
    with pytest.raises(SystemExit) as stop:
        main(["model", "--config", "tiny", "--bytes", "1K", "--json", str(figures)])
    assert stop.value.code == 0 and '"records": 128' in figures.read_text()


def test_model_takes_the_papers_size_in_one_command(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["model", "--bytes", "capacity"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("4194240 KB (536862720 records, random, placed dealt) on u280 at "
                          "214 MHz"), out
    assert "5 phase-1 passes, then phase 2" in out, out


def test_model_shows_the_input_order_through_the_placement(capsys):
    # Dealt input gives every order random's phase 2; in blocks (the paper's placement)
    # sorted input drains phase 2 through one tree's F = 4 leaves at a time: 2 records/cycle.
    overall = {}
    for placement in ("dealt", "blocks"):
        for order in ("random", "sorted"):
            with pytest.raises(SystemExit) as stop:
                main(["model", "--bytes", "capacity", "--distribution", order,
                      "--set", f"placement={placement}"])
            assert stop.value.code == 0
            out = capsys.readouterr().out
            assert f"records, {order}, placed {placement})" in out, out
            overall[placement, order] = float(out.split("overall: ")[1].split(" ms, ")[1]
                                              .split(" GB/s")[0])
    assert overall["dealt", "sorted"] == overall["dealt", "random"] == \
        overall["blocks", "random"]
    assert overall["blocks", "sorted"] < overall["blocks", "random"] / 5
    with pytest.raises(SystemExit) as stop:
        main(["model", "--bytes", "1M", "--distribution", "zipf"])
    assert stop.value.code == 2


def test_report_lines_say_what_happened_where_there_is_no_rate():
    from topsort_hdl.core.config import config_from
    from topsort_hdl.core.contract import Report
    from topsort_hdl.sim.kernel_sort import report_lines

    tiny = config_from("tiny")
    lines = report_lines(tiny, Report(1, 0, 7, 4, 74, (0, 0, 0, 0), (1, 1, 1, 1)))
    assert lines[1] == "phase 1: no pass (4 cycles)"
    assert lines[2].startswith("phase 2: 74 cycles, 0.09 records/cycle of 4 ideal")
    assert lines[3].startswith("overall: 78 cycles, ")
    assert lines[0].endswith(": 0 phase-1 passes, then one phase-2 pass")
    lines = report_lines(tiny, Report(1, 0, 0, 4, 9, (0, 0, 0, 0), (1, 1, 1, 1)))
    assert lines[0] == ("sorted 0 records (0 bytes) on tiny by unsigned 32-bit keys, "
                        "ascending: nothing to sort")
    assert lines[1:4] == ["phase 1: no pass (4 cycles)", "phase 2: no records (9 cycles)",
                          "overall: 13 cycles"]
    lines = report_lines(tiny, Report(1, 0, 100, 60, 80, (1, 1, 0, 0), (1, 1, 1, 1)))
    assert lines[0].endswith(": 1 phase-1 pass, then one phase-2 pass")
    lines = report_lines(tiny, Report(1, 0, 100, 60, 80, (2, 1, 0, 0), (1, 1, 1, 1)))
    assert lines[0].endswith(": 2 phase-1 passes, then one phase-2 pass")


@pytest.mark.parametrize("size,passes", [("400", "1 phase-1 pass,"), ("1M", "3 phase-1 passes,")])
def test_model_counts_passes_in_words(capsys, size, passes):
    with pytest.raises(SystemExit) as stop:
        main(["model", "--config", "u280_k32", "--bytes", size])
    assert stop.value.code == 0
    assert f"): {passes} then phase 2" in capsys.readouterr().out.splitlines()[0]


def test_configs_exists():
    result = run_cli("configs")
    assert result.returncode == 0, result.stderr


def test_unit_mms_from_the_command_line_merges_at_full_rate():
    # What the "done" asks: the CLI's Verilog, driven only through its documented ports
    # by the cocotb testbench (which checks every bundle and one bundle per cycle at full rate).
    case = "cli_mms4"
    out = SIM_BUILD / case / "merge4.v"
    result = run_cli("unit", "mms", "--rate", "4", "--name", "merge4", "--out", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "module merge4(" in text
    for port in ("clk", "rst", "a__valid", "a__ready", "a__payload", "b__valid", "b__ready",
                 "b__payload", "o__valid", "o__ready", "o__payload"):
        assert port in text
    run_bench([out], "merge4", "cocotb_mms", case, env={"TOPSORT_RATE": 4})


def test_unit_tree_and_reuse_ports(tmp_path):
    out = tmp_path / "tree.v"
    result = run_cli("unit", "tree", "--rate", "2", "--leaves", "4", "--out", str(out))
    assert result.returncode == 0, result.stderr
    header = out.read_text().split(");", 1)[0]
    for port in ("i__0__payload", "i__3__valid", "i__3__ready", "o__payload", "o__ready"):
        assert port in header
    out = tmp_path / "reuse.v"
    result = run_cli("unit", "reuse", "--trees", "2", "--rate", "1", "--leaves", "2",
                     "--name", "switch", "--out", str(out))
    assert result.returncode == 0, result.stderr
    header = out.read_text().split(");", 1)[0]
    assert "module switch(" in header
    for port in ("mode", "i__3__payload", "o__0__valid", "o__1__payload", "wide__payload",
                 "wide__ready"):
        assert port in header


def test_unit_axi_engine_ports(tmp_path):
    out = tmp_path / "writer.v"
    result = run_cli("unit", "writer", "--ports", "2", "--data-width", "64", "--burst-bytes",
                     "256", "--batch-bytes", "512", "--out", str(out))
    assert result.returncode == 0, result.stderr
    header = out.read_text().split(");", 1)[0]
    for port in ("axi__0__awaddr", "axi__1__wstrb", "cmd__payload", "i__payload", "done",
                 "error"):
        assert port in header
    assert "input [127:0] i__payload;" in out.read_text()   # two 64-bit beats per transfer
    out = tmp_path / "reader.v"
    result = run_cli("unit", "reader", "--leaves", "3", "--data-width", "128", "--out", str(out))
    assert result.returncode == 0, result.stderr
    header = out.read_text().split(");", 1)[0]
    for port in ("axi__arid", "axi__rdata", "leaf__2__payload", "leaf__2__ready", "idle"):
        assert port in header


def test_configs_lists_the_presets(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["configs"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    for name in ("u280", "u55c", "tiny", "small", "demo"):
        assert name in out
    assert "16 trees x 16 leaves x 8 records/cycle" in out


@pytest.mark.parametrize("size,extra,message", [
    (12, [], "holds 12 bytes, not a whole number of 8-byte records"),
    (8 * 8065, [], "holds 8065 records, more than tiny holds (8064)"),
    (16, ["--sim", "verilator", "--waves", "w.vcd"], "--waves needs --sim icarus"),
    (16, ["--pause", "1.5"], "--pause must be at least 0 and below 1 (a memory channel's "
                             "chance of pausing in a cycle), not 1.5"),
    (16, ["--pause", "1"], "--pause must be at least 0 and below 1 (a memory channel's "
                           "chance of pausing in a cycle), not 1.0"),
    (16, ["--pause", "-0.5"], "--pause must be at least 0 and below 1"),
])
def test_sort_rejects_bad_input_files(tmp_path, capsys, size, extra, message):
    source = tmp_path / "in.bin"
    source.write_bytes(bytes(size))
    with pytest.raises(SystemExit) as stop:
        main(["sort", "--config", "tiny", "--input", str(source), "--output",
              str(tmp_path / "out.bin"), *extra])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


@pytest.mark.parametrize("records,chosen", [(1, "tiny"), (8064, "tiny"), (8065, "small"),
                                            (32256, "small"), (32257, "small")])
def test_sort_without_a_config_takes_the_smallest_that_holds_the_input(records, chosen):
    import argparse

    from topsort_hdl.cli.sort import sort_config

    config, note = sort_config(argparse.Namespace(config=None, set=[]), 8 * records)
    assert config.name == chosen
    assert note.startswith(f"no --config: sorting on {chosen} (capacity ")


def test_sort_without_a_config_names_the_way_out_of_a_too_large_input(tmp_path, capsys):
    source = tmp_path / "in.bin"
    source.write_bytes(bytes(8 * 32257))
    with pytest.raises(SystemExit) as stop:
        main(["sort", "--input", str(source), "--output", str(tmp_path / "out.bin")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert ("holds 32257 records, more than small holds (32256); name a larger one with "
            "--config") in err


def test_sort_warns_before_simulating_a_full_size_kernel():
    import argparse

    from topsort_hdl.cli.sort import sort_config

    config, note = sort_config(argparse.Namespace(config="u280", set=[]), 8)
    assert config.name == "u280"
    assert "full-size kernel" in note and "tiny and small simulate in seconds" in note
    # The kernel's size decides, not its board.
    for name, overrides in (("tiny", []), ("small", []), ("demo", []),
                            ("tiny", ["board=u280"])):
        assert sort_config(argparse.Namespace(config=name, set=overrides), 8)[1] is None


def _records_file(path, count, seed=5):
    import random
    import struct

    rng = random.Random(seed)
    records = [(rng.choice([0, 2**32 - 1, 7, rng.randrange(2**32)]), i) for i in range(count)]
    path.write_bytes(b"".join(struct.pack("<II", v, k) for k, v in records))
    return records


def _simulation_must_not_run(monkeypatch):
    import topsort_hdl.sim.kernel_sort as kernel_sort

    def refuse(*args, **kwargs):
        raise AssertionError("the simulation ran before the paths were checked")
    monkeypatch.setattr(kernel_sort, "simulate_sort", refuse)


@pytest.mark.parametrize("where,message", [
    ("output-under-a-file", "--output {tmp}/in.bin/out.bin: {tmp}/in.bin is a file, not a "
                            "folder"),
    ("output-is-folder", "--output {tmp} is a folder, not a file"),
    ("waves-under-a-file", "--waves {tmp}/in.bin/w.vcd: {tmp}/in.bin is a file, not a folder"),
    ("build-is-file", "--build {tmp}/in.bin is a file, not a folder"),
])
def test_sort_checks_every_path_before_any_work(tmp_path, capsys, monkeypatch, where, message):
    _simulation_must_not_run(monkeypatch)
    source = tmp_path / "in.bin"
    _records_file(source, 5)
    args = {"output-under-a-file": ["--output", str(source / "out.bin")],
            "output-is-folder": ["--output", str(tmp_path)],
            "waves-under-a-file": ["--output", str(tmp_path / "o.bin"), "--waves",
                                   str(source / "w.vcd")],
            "build-is-file": ["--output", str(tmp_path / "o.bin"), "--build", str(source)],
            }[where]
    with pytest.raises(SystemExit) as stop:
        main(["sort", "--config", "tiny", "--input", str(source), *args])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message.format(tmp=tmp_path) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.bin"]     # nothing written


@pytest.mark.parametrize("failure", ["simulation", "interrupt"])
def test_a_failed_sort_leaves_the_previous_output_as_it_was(tmp_path, capsys, monkeypatch,
                                                           failure):
    import topsort_hdl.sim.kernel_sort as kernel_sort

    def fail(config, input_path, output_path, **kwargs):
        output_path.write_bytes(b"half a result")
        if failure == "interrupt":
            raise KeyboardInterrupt
        raise kernel_sort.SimulationError("AxiProtocolError: m00_axi, cycle 135: araddr is X "
                                          "or Z while arvalid is high (log sim.log)")
    monkeypatch.setattr(kernel_sort, "simulate_sort", fail)
    source, out = tmp_path / "in.bin", tmp_path / "out.bin"
    _records_file(source, 5)
    out.write_bytes(b"an earlier good result")
    with pytest.raises(SystemExit) as stop:
        main(["sort", "--config", "tiny", "--input", str(source), "--output", str(out)])
    assert stop.value.code == (1 if failure == "simulation" else 130)
    assert out.read_bytes() == b"an earlier good result"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.bin", "out.bin"]
    if failure == "simulation":
        assert capsys.readouterr().err == (
            "topsort-hdl: simulation failed: AxiProtocolError: m00_axi, cycle 135: araddr is X "
            "or Z while arvalid is high (log sim.log)\n")


def test_a_simulation_failure_names_the_first_error_of_its_log(tmp_path):
    from topsort_hdl.sim.kernel_sort import first_error

    log = tmp_path / "sim.log"
    log.write_text(
        "     0.00ns INFO     cocotb   Running on Icarus Verilog\n"
        "                     raise AxiProtocolError(f'{self.name}: {message}')\n"
        "                     topsort_hdl.sim.axi_protocol.AxiProtocolError: m00_axi, cycle "
        "135: araddr is X or Z while arvalid is high\n"
        "AssertionError: 1 of 7 cocotb tests failed\n")
    assert first_error(log) == ("AxiProtocolError: m00_axi, cycle 135: araddr is X or Z while "
                                "arvalid is high")
    log.write_text("topsort.v:12: syntax error: I give up.\n")
    assert first_error(log) == "topsort.v:12: syntax error: I give up."
    log.write_text("all is well\n")
    assert first_error(log) is None


def test_sort_in_place(tmp_path):
    # The same file in and out: read before the sorted records replace it. Float keys,
    # descending (IEEE 754 totalOrder reversed: NaNs, infinities and zeros of both signs).
    import struct

    import numpy as np

    from topsort_hdl.core.golden.order import order_keys

    path = tmp_path / "data.bin"
    floats = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), -float("nan"), 1.5, -2.5]
    keys = [struct.unpack("<I", struct.pack("<f", f))[0] for f in floats * 4] + [1, 2**31 + 1]
    records = [(k, i) for i, k in enumerate(keys)]
    path.write_bytes(b"".join(struct.pack("<II", v, k) for k, v in records))
    result = run_cli("sort", "--config", "tiny", "--input", str(path), "--output", str(path),
                     "--build", str(tmp_path / "build"), "--key-type", "float", "--descending")
    assert result.returncode == 0, result.stderr
    assert "sorted 34 records (272 bytes) on tiny by float 32-bit keys, descending" in \
        result.stdout
    got = [(k, v) for v, k in struct.iter_unpack("<II", path.read_bytes())]
    ordered = order_keys([k for k, _ in got], "float", 32, descending=True)
    assert np.all(ordered[:-1] <= ordered[1:])
    assert sorted(got) == sorted(records)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "data.bin"]


def test_sort_a_file_through_the_rtl(tmp_path):
    import random
    import struct

    rng = random.Random(11)
    records = [(rng.choice([0, 2**32 - 1, rng.randrange(2**32)]), i) for i in range(77)]
    source = tmp_path / "in.bin"
    source.write_bytes(b"".join(struct.pack("<II", v, k) for k, v in records))
    # (in folders that do not exist yet: made as the outputs are written)
    out, waves = tmp_path / "sorted" / "out.bin", tmp_path / "waves" / "ports.vcd"
    # No --config: a newcomer's first sort runs on the smallest configuration, in seconds.
    result = run_cli("sort", "--input", str(source), "--output", str(out),
                     "--pause", "0.2", "--waves", str(waves))
    assert result.returncode == 0, result.stderr
    assert "no --config: sorting on tiny" in result.stderr
    got = [(k, v) for v, k in struct.iter_unpack("<II", out.read_bytes())]
    assert [k for k, _ in got] == sorted(k for k, _ in records)
    assert sorted(got) == sorted(records)
    assert "phase 1:" in result.stdout and "records/cycle of 8 ideal" in result.stdout
    dump = waves.read_text()
    for port in ("ap_clk", "s_axi_control_awaddr", "m00_axi_arvalid", "m03_axi_wdata"):
        assert port in dump


@pytest.mark.slow
def test_a_sort_finishes_at_any_pause_the_option_takes(tmp_path):
    import struct

    # Memory pausing 99 cycles in 100 makes a long job about 100 times slower (tiny, 2,000
    # records: 65,475 cycles at --pause 0.97); the testbench's deadline, there to catch
    # hangs, grows with it, where it stood at 40 cycles a record before and ended the sort.
    source, out = tmp_path / "in.bin", tmp_path / "out.bin"
    records = _records_file(source, 1000)
    result = run_cli("sort", "--config", "tiny", "--input", str(source), "--output", str(out),
                     "--pause", "0.99")
    assert result.returncode == 0, result.stderr
    got = [(k, v) for v, k in struct.iter_unpack("<II", out.read_bytes())]
    assert sorted(got) == sorted(records) and [k for k, _ in got] == sorted(k for k, _ in records)


def test_sort_from_an_installed_package_outside_the_checkout(tmp_path, install_package):
    """`pip install .` (with its dependencies) into a fresh venv, then `topsort-hdl sort` run
    from a directory outside the checkout: the child simulation imports the installed bench,
    and the build goes under that directory."""
    import os
    import random
    import struct

    bin_dir = install_package(deps=True)
    work = tmp_path / "work"
    work.mkdir()
    rng = random.Random(5)
    records = sorted(zip(rng.sample(range(2**32), 90), range(90), strict=True),
                     key=lambda r: rng.random())
    (work / "in.bin").write_bytes(b"".join(struct.pack("<II", v, k) for k, v in records))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([bin_dir / "topsort-hdl", "sort", "--config", "tiny", "--input",
                             "in.bin", "--output", "out.bin"], cwd=work, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    got = [(k, v) for v, k in struct.iter_unpack("<II", (work / "out.bin").read_bytes())]
    assert got == sorted(records)   # the keys are distinct: one order, record by record
    assert (work / "build" / "sort" / "tiny-icarus" / "topsort.v").exists()
    where = subprocess.run([bin_dir / "python", "-c", "import topsort_hdl.sim.runner as r; "
                            "print(r.__file__)"], cwd=work, env=env, capture_output=True,
                           text=True, check=True).stdout
    assert "site-packages" in where
    # No extras: what needs one says which, in one line, before any work.
    def cli(*args):
        return subprocess.run([bin_dir / "topsort-hdl", *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
    needs = [(["model", "--sweep", "--plot", "p.png"], "plot")]
    if not shutil.which("verilator"):       # (a system Verilator needs no extra)
        needs.append((["sort", "--config", "tiny", "--input", "in.bin", "--output", "o.bin",
                       "--sim", "verilator"], "verilator"))
    for args, extra in needs:
        result = cli(*args)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert f"pip install 'topsort-hdl[{extra}]'" in result.stderr, result.stderr
    version = cli("--version")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert version.returncode == 0 and version.stdout.strip() == f"topsort-hdl {declared}"
