"""The ``topsort-hdl`` entry point: the parser, assembled from the subcommands' modules, and
:func:`main`, which runs one and turns a user mistake into one line and exit status 2, an
interrupt into one line and 128 + the signal's number (:mod:`.interrupts`)."""

import os
import signal
import sys

from . import bench, bitstream, configs, explore, formal, generate, model, qor, sort, unit
from .interrupts import interrupted, signals_interrupt
from .options import PROG, Parser, UsageError

__all__ = ["main", "parser"]

# In the order `topsort-hdl --help` lists them.
COMMANDS = {"configs": configs, "generate": generate, "sort": sort, "unit": unit,
            "bench": bench, "model": model, "explore": explore, "qor": qor,
            "formal": formal, "bitstream": bitstream}


def version():
    """The installed package's version (unknown for a checkout never installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("topsort-hdl")
    except PackageNotFoundError:
        return "unknown (not installed)"


def parser():
    top = Parser(prog=PROG, description="TopSort sorting accelerator in Amaranth HDL.")
    top.add_argument("--version", action="version", version=f"{PROG} {version()}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                  parser_class=Parser)
    for command in COMMANDS.values():
        command.add_parser(commands)
    return top


def main(argv=None):
    """Run the command line; return (as the exit status) 0 on success."""
    with signals_interrupt():
        try:
            args = parser().parse_args(argv)
            status = COMMANDS[args.command].run(args) or 0
            sys.stdout.flush()      # a reader gone (`| head`) is found here, not at exit
        except UsageError as error:
            print(f"{PROG}: error: {error}", file=sys.stderr)
            status = 2
        except KeyboardInterrupt as interrupt:
            status = interrupted(interrupt)
        except BrokenPipeError:
            status = _reader_gone()
    sys.exit(status)


def _reader_gone():
    """The reader of standard output has gone (``topsort-hdl configs | head -1``): what it
    did not read is not wanted, so nothing is said; the exit status is a SIGPIPE's, 141."""
    # Python's last flush of stdout, at exit, would fail again: it goes nowhere.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE
