"""``topsort-hdl sort``: sort a record file on the kernel's RTL in simulation."""

import sys
from pathlib import Path

from .options import PROG, UsageError, add_config_options, config_of

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
    sort.add_argument("--sim", choices=["icarus", "verilator"], default="icarus",
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
        note = None if config.board == "sim" else (
            f"{config.name} is a full-size kernel: generating it takes about a minute and "
            f"simulating it all is slow (--sim verilator is faster; "
            f"{' and '.join(SORT_CONFIGS)} simulate in seconds)")
        return config, note
    for name in SORT_CONFIGS:
        args.config = name
        config = config_of(args)
        if size // config.record_bytes <= config.capacity:
            break
    return config, (f"no --config: sorting on {config.name} (capacity {config.capacity:,} "
                    f"records); --config u280 is the paper's kernel")


def run(args):
    from ..sim.kernel_sort import SimulationError, simulate_sort

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
    if not 0 <= args.pause < 1:
        raise UsageError(f"--pause must be at least 0 and below 1, not {args.pause}")
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_bytes(b"")
    except OSError as error:
        raise UsageError(f"cannot write {args.output}: {error.strerror}") from None
    if note:
        print(f"{PROG}: {note}", file=sys.stderr, flush=True)
    try:
        stats = simulate_sort(config, args.input, args.output, sim=args.sim, seed=args.seed,
                              pause=args.pause, waves=args.waves, build_root=args.build)
    except SimulationError as error:
        print(f"{PROG}: simulation failed: {error}", file=sys.stderr)
        return 1
    report = stats["report"]
    for line in report:
        print(line)
    return 0
