"""``topsort-hdl model``: predict passes, cycles and GB/s with the performance model."""

import json
from pathlib import Path

from ..core.golden.workloads import INPUT_ORDERS as DISTRIBUTIONS
from .format import estimate_lines
from .options import UsageError, add_config_options, config_of, output_file, plot_file

__all__ = ["add_parser", "run"]


def add_parser(commands):
    model = commands.add_parser("model", help="predict passes, cycles and GB/s (performance "
                                "model)")
    add_config_options(model)
    size = model.add_mutually_exclusive_group(required=True)
    size.add_argument("--bytes", help="data size: 256M, 65536, or capacity (the "
                      "configuration's: 64 KB short of 4G on u280, the paper's 4 GB)")
    size.add_argument("--sweep", action="store_true",
                      help="32 MB .. 4 GB next to the paper's measurements")
    model.add_argument("--memory", choices=["measured", "peak", "ideal"], default="measured",
                       help="HBM per channel: measured sequential bandwidth (default), the "
                            "peak figure, or ideal (one beat per cycle, as in simulation)")
    model.add_argument("--distribution", choices=DISTRIBUTIONS, default="random",
                       help="how the input is ordered (default random): phase 2 depends on it "
                            "when the configuration's placement is blocks")
    model.add_argument("--plot", type=Path, help="with --sweep: write a PNG plot here")
    model.add_argument("--json", type=Path, help="also write the figures to this JSON file")


def run(args):
    from ..analysis.perf.model import estimate
    from ..analysis.perf.sweep import format_size, parse_size, plot_sweep, sweep, sweep_table

    config = config_of(args)
    if args.plot and not args.sweep:
        raise UsageError("--plot needs --sweep")
    plot_file("--plot", args.plot)
    output_file("--json", args.json)
    if args.sweep:
        rows = sweep(config, memory=args.memory, distribution=args.distribution)
        for line in sweep_table(config, rows, args.memory, args.distribution):
            print(line)
        if args.plot:
            print(f"wrote {plot_sweep(config, rows, args.plot, args.memory)}")
        figures = rows
    else:
        capacity = config.capacity * config.record_bytes
        try:
            size = capacity if args.bytes == "capacity" else parse_size(args.bytes)
        except ValueError as error:
            raise UsageError(f"--bytes: {error}") from None
        if size % config.record_bytes:
            raise UsageError(f"--bytes must be a multiple of the record size "
                             f"({config.record_bytes}), not {size}")
        if size > capacity:
            raise UsageError(f"--bytes {args.bytes} is more than {config.name} holds "
                             f"({capacity} bytes: each channel keeps a batch for other "
                             f"buffers); --bytes capacity models a full kernel")
        try:
            e = estimate(config, size // config.record_bytes, args.memory, args.distribution)
        except ValueError as error:
            raise UsageError(str(error)) from None
        for line in estimate_lines(e, format_size(size)):
            print(line)
        figures = {"records": e.records, "distribution": e.distribution, "passes": e.passes,
                   "phase1_cycles": e.phase1.cycles, "phase2_cycles": e.phase2.cycles,
                   "phase1_gbps": e.phase1.gbps, "phase2_gbps": e.phase2.gbps,
                   "overall_gbps": e.total.gbps, "seconds": e.total.seconds,
                   "bound": e.bound()}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
