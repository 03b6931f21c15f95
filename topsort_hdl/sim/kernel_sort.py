"""``topsort-hdl sort``: a record file through the kernel's RTL, the way a host drives a card.

The simulation runs the cocotb testbench :mod:`topsort_hdl.sim.cocotb.cocotb_kernel` (file mode)
in a child process that imports the same ``topsort_hdl`` as this one (installed or a
checkout's), in its build directory ``build/sort/<config>-<sim>/`` under the current directory
(log ``sim.log``); progress comes back through a small JSON file the testbench rewrites while it
polls ap_done.
"""

import hashlib
import json
import numbers
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..core.contract import Report
from ..targets.kernel_verilog import TOP_NAME, generate
from . import SIMULATORS

__all__ = ["SimulationError", "check_run_options", "simulate_sort",
           "simulate_sweep", "report_lines"]

PACKAGE = Path(__file__).resolve().parents[1]     # the topsort_hdl being run
BUILD = Path("build")   # relative to the current directory, as `make` and pytest use it


class SimulationError(RuntimeError):
    pass


def check_run_options(sim, seed, pause, prefix=""):
    """Raise ``TypeError`` or ``ValueError`` naming the first of ``sim``, ``seed`` and
    ``pause`` a simulated sort cannot take (``prefix`` before each name: ``"--"`` for the
    command line's options). ``pause``, a memory channel's chance of pausing in a cycle, is
    in [0, 1): at 1 no channel ever moves and the job runs into the testbench's deadline."""
    if sim not in SIMULATORS:
        raise ValueError(f"{prefix}sim must be one of {', '.join(SIMULATORS)}, not {sim!r}")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{prefix}seed must be an integer, not {seed!r}")
    if isinstance(pause, bool) or not isinstance(pause, numbers.Real):
        raise TypeError(f"{prefix}pause must be a number, not {pause!r}")
    if not 0 <= pause < 1:
        raise ValueError(f"{prefix}pause must be at least 0 and below 1 (a memory channel's "
                         f"chance of pausing in a cycle), not {pause}")


# What ends a failed simulation, as its log shows it: a Python exception's last line (the
# testbench's checks, cocotb, the AXI monitor) or a compiler's error.
_ERROR_LINE = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception)(?:: .+)?)$"
                         r"|^(\S+:\d+: (?:syntax )?error: .+)$|^(%Error: .+)$", re.MULTILINE)


def first_error(log):
    """The first error line of the simulation log ``log``, or None."""
    try:
        text = Path(log).read_text(errors="replace")
    except OSError:
        return None
    match = _ERROR_LINE.search(text)
    return next(group for group in match.groups() if group) if match else None


def _failure(log, status):
    """A :class:`SimulationError` naming the log's first error and the log."""
    what = first_error(log) or f"the simulation ended with status {status}"
    return SimulationError(f"{what} (log {log})")


def _source_stamp(config):
    digest = hashlib.sha256(repr(config).encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _kernel_source(config, build):
    """The kernel Verilog for ``config`` under ``build``, regenerated only when stale."""
    stamp = build / "stamp"
    verilog = build / f"{TOP_NAME}.v"
    current = _source_stamp(config)
    if not verilog.exists() or not stamp.exists() or stamp.read_text() != current:
        print(f"generating the {config.name} kernel ...", file=sys.stderr, flush=True)
        generate(config, build)
        stamp.write_text(current)
    return verilog


def report_lines(config, report, key_type="unsigned", descending=False):
    """Cycles per phase, records/cycle against the ideal, and what that means in GB/s, from
    the kernel's completion report (a :class:`topsort_hdl.core.contract.Report`)."""
    records, phase1_cycles, phase2_cycles = (report.records, report.phase1_cycles,
                                             report.phase2_cycles)
    passes = max(report.passes, default=0)
    clock = config.clock_hz
    nbytes = records * config.record_bytes
    order = f"{key_type} {config.key_bits}-bit keys, {'de' if descending else 'a'}scending"
    plan = (f"{passes} phase-1 {'pass' if passes == 1 else 'passes'}, then one phase-2 pass"
            if records else "nothing to sort")
    lines = [f"sorted {records} records ({nbytes} bytes) on {config.name} by {order}: {plan}"]
    ideal1 = config.trees * config.rate
    ideal2 = config.reuse * config.rate
    for name, cycles, work, ideal in (("phase 1", phase1_cycles, records * passes, ideal1),
                                      ("phase 2", phase2_cycles, records, ideal2)):
        if not work or not cycles:      # (no rate to speak of: say what happened)
            what = "no pass" if name == "phase 1" else "no records"
            lines.append(f"{name}: {what} ({cycles} cycles)")
            continue
        rate = work / cycles
        gbps = nbytes / (cycles / clock) / 1e9
        lines.append(f"{name}: {cycles} cycles, {rate:.2f} records/cycle of {ideal} ideal "
                     f"({rate / ideal:.1%}), {gbps:.2f} GB/s at {clock / 1e6:g} MHz")
    total = phase1_cycles + phase2_cycles
    if total and records:
        lines.append(f"overall: {total} cycles, {nbytes / (total / clock) / 1e9:.2f} GB/s")
    elif total:
        lines.append(f"overall: {total} cycles")
    lines.append(f"report: status {report.status}, passes per tree "
                 f"{' '.join(map(str, report.passes))}, output halves "
                 f"{' '.join(map(str, report.output_halves))}")
    return lines


def _run_bench(config, sim, build, env, sources, extra=(), progress_path=None,
               hierarchical=False):
    """Run the cocotb testbench ``cocotb_kernel`` on ``sources`` in a child process (log in
    ``build``; ``hierarchical``: Verilator builds each repeated block once)."""
    env = {**os.environ, **env,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(PACKAGE.parent),
                                                       os.environ.get("PYTHONPATH")])),
           "TOPSORT_CONFIG": _base_preset(config), "TOPSORT_SET": json.dumps(_overrides(config))}
    # hierarchical (Verilator): every block the kernel repeats verilated once, as a model of
    # its own, a third of the CPU time of one flat model for an HBM board's kernel.
    blocks = (f"repeated_blocks({str(sources[0])!r}, {TOP_NAME!r})" if hierarchical
              else "None")
    script = ("import sys; from topsort_hdl.sim.runner import repeated_blocks, run_bench; "
              f"run_bench({[str(s) for s in sources]!r}, {TOP_NAME!r}, 'cocotb_kernel', "
              f"{str(build)!r}, sim=sys.argv[1], build_args=sys.argv[2:], "
              f"quick_compile=sys.argv[1] == 'verilator', hierarchical_blocks={blocks})")
    log = build / "sim.log"
    start = time.perf_counter()
    with open(log, "w") as out:
        # In a process group of its own, which ends with this call however it ends (an
        # interrupt too): else the simulator would run on and write the output afterwards.
        child = subprocess.Popen([sys.executable, "-c", script, sim, *extra], cwd=build,
                                 env=env, stdout=out, stderr=subprocess.STDOUT,
                                 process_group=0)
        try:
            shown = 0.0
            while child.poll() is None:
                time.sleep(0.5)
                if progress_path and time.perf_counter() - shown > (0.5 if sys.stderr.isatty()
                                                                    else 15):
                    shown = time.perf_counter()
                    _show_progress(progress_path, time.perf_counter() - start)
        finally:
            _end_process_group(child)
            if progress_path and sys.stderr.isatty():   # (off the progress line)
                print(file=sys.stderr)
    return child.returncode, log, time.perf_counter() - start


# How long a simulation's processes have to end on SIGTERM (make, in a Verilator build, then
# deletes the file it was making) before SIGKILL.
_END_GRACE_SECONDS = 5.0


def _end_process_group(child):
    """End every process left in ``child``'s process group (the simulator, a compiler; none
    after a run that ended by itself), and return once none is: SIGTERM, then SIGKILL."""
    for signum, seconds in ((signal.SIGTERM, _END_GRACE_SECONDS), (signal.SIGKILL, 1.0)):
        try:
            os.killpg(child.pid, signum)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            child.poll()    # (reaps the group's leader)
            if not _group_runs(child.pid):
                return
            time.sleep(0.02)


def _group_runs(group):
    """Whether a process of the process group ``group`` still runs. A zombie does not: dead,
    its parent gone, it waits for init to reap it (1.5 s on some machines, forever in a
    container whose init reaps nothing), so Linux's /proc is asked about the members' states."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():     # (no /proc: a zombie counts)
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:    # pid (command) state ppid pgrp ...; the command may hold spaces and ")"
            state, _, pgrp = stat.read_text().rpartition(")")[2].split()[:3]
        except (OSError, ValueError):
            continue    # (a process that ended meanwhile)
        if int(pgrp) == group and state != "Z":
            return True
    return False


def simulate_sort(config, input_path, output_path, *, sim="icarus", seed=1, pause=0.0,
                  waves=None, progress=True, build_root=BUILD, key_type="unsigned",
                  descending=False):
    """Sort ``input_path`` into ``output_path`` on the RTL, by keys of ``key_type`` in
    ascending order or ``descending``; return the run's statistics. The kernel's Verilog and
    the simulation go to ``build_root/sort/<config>-<sim>/``."""
    check_run_options(sim, seed, pause)
    build = _build_folder(config, build_root, sim)
    build.mkdir(parents=True, exist_ok=True)
    source = _kernel_source(config, build)
    sources = [source]
    extra = []
    if waves:
        dump = build / "waves.v"
        dump.write_text(f"module {TOP_NAME}_waves;\n  initial begin\n"
                        f"    $dumpfile(\"{Path(waves).resolve()}\");\n"
                        f"    $dumpvars(1, {TOP_NAME});\n  end\nendmodule\n")
        sources.append(dump)
        extra = ["-s", f"{TOP_NAME}_waves"]
    stats_path = build / "stats.json"
    progress_path = build / "progress.json"
    for path in (stats_path, progress_path):
        path.unlink(missing_ok=True)
    env = {
        "TOPSORT_MODE": "file", "TOPSORT_INPUT": str(Path(input_path).resolve()),
        "TOPSORT_OUTPUT": str(Path(output_path).resolve()), "TOPSORT_STATS": str(stats_path),
        "TOPSORT_PROGRESS": str(progress_path), "TOPSORT_PAUSE": str(pause),
        "TOPSORT_SEED": str(seed), "TOPSORT_KEY_TYPE": key_type,
        "TOPSORT_DESCENDING": "1" if descending else "0",
    }
    if waves:   # the runner silences Icarus' dumps ("-none"); a later "-vcd" wins
        env["SIM_CMD_SUFFIX"] = "-vcd"
    status, log, seconds = _run_bench(config, sim, build, env, sources, extra,
                                      progress_path if progress else None)
    if status or not stats_path.exists():
        raise _failure(log, status)
    stats = json.loads(stats_path.read_text())
    stats["seconds"] = seconds
    stats["report"] = report_lines(config, Report(**stats["kernel_report"]), key_type,
                                   descending) + [
        f"simulated in {stats['seconds']:.0f} s ({sim}); log {log}"]
    return stats


def simulate_sweep(config, counts, *, sim="icarus", seed=1, build_root=BUILD,
                   orders=("random",), hierarchical=False):
    """One job per record count of ``counts`` and input order of ``orders`` on the RTL (ideal
    memory, every result checked exactly); return ``[{"records", "order", "phase1_cycles",
    "phase2_cycles"}, ...]``. ``hierarchical`` (Verilator): each block the kernel repeats is
    built once, as a model of its own (for an HBM board's kernel)."""
    check_run_options(sim, seed, 0)
    if hierarchical and sim != "verilator":
        raise ValueError(f"hierarchical simulation is Verilator's, not {sim}'s")
    build = _build_folder(config, build_root, sim, "-sweep" + ("-blocks" if hierarchical else ""))
    build.mkdir(parents=True, exist_ok=True)
    source = _kernel_source(config, build)
    stats_path = build / "sweep.json"
    stats_path.unlink(missing_ok=True)
    env = {"TOPSORT_MODE": "sweep", "TOPSORT_COUNTS": json.dumps(list(counts)),
           "TOPSORT_ORDERS": json.dumps(list(orders)),
           "TOPSORT_STATS": str(stats_path), "TOPSORT_PAUSE": "0", "TOPSORT_SEED": str(seed)}
    status, log, _ = _run_bench(config, sim, build, env, [source], hierarchical=hierarchical)
    if status or not stats_path.exists():
        raise _failure(log, status)
    return json.loads(stats_path.read_text())


def _build_folder(config, build_root, sim, suffix=""):
    """Where ``config``'s simulations go: a preset changed with --set, such as another record
    format, builds in a folder of its own."""
    changed = _overrides(config)
    shape = config.name + (f"-{hashlib.sha256(repr(changed).encode()).hexdigest()[:8]}"
                           if changed else "")
    return Path(build_root).resolve() / "sort" / f"{shape}-{sim}{suffix}"


def _base_preset(config):
    """The built-in preset the testbench rebuilds ``config`` from (with :func:`_overrides`):
    its own, or for a saved preset or an explorer's point (which a child process or a
    cluster's worker may not know by name) the default one."""
    from ..core.config import PRESETS

    return config.name if config.name in PRESETS else "u280"


def _overrides(config):
    from dataclasses import fields

    from ..core.config import PRESETS

    preset = PRESETS[_base_preset(config)]
    return [f"{f.name}={getattr(config, f.name)}" for f in fields(config)
            if f.name != "name" and getattr(config, f.name) != getattr(preset, f.name)]


def _show_progress(path, seconds):
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        state = {"cycles": 0, "phase": "starting"}
    line = (f"simulating: {state.get('phase', '?')}, {state.get('cycles', 0)} cycles, "
            f"{seconds:.0f} s")
    end = "\r" if sys.stderr.isatty() else "\n"
    print(line, end=end, file=sys.stderr, flush=True)
