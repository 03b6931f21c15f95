"""The conventional cocotb Makefile flow under ``sim/`` runs the package's testbenches on the
units' Verilog, and reports a failing testbench as a failing make."""

import os
import subprocess
import sys
from pathlib import Path

SIM = Path(__file__).resolve().parents[2] / "sim"


def _make(folder, tmp_path, *variables):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(["make", "-C", str(SIM / folder), f"BUILD={tmp_path / 'verilog'}",
                           f"SIM_BUILD={tmp_path / 'sim_build'}", *variables],
                          capture_output=True, text=True, env=env, timeout=600)


def test_mms_makefile_flow_passes_and_fails(tmp_path):
    run = _make("mms", tmp_path, "SIM=icarus", "RATE=2")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "FAIL=0" in run.stdout and "PASS=3" in run.stdout
    assert (tmp_path / "verilog" / "mms_e2.v").exists()
    # The testbench told the wrong rate checks the ports' widths and fails: so does make.
    run = _make("mms", tmp_path, "SIM=icarus", "RATE=2", "TOPSORT_RATE=4")
    assert run.returncode != 0
    assert "FAIL=" in run.stdout and "FAIL=0" not in run.stdout
