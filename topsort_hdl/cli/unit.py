"""``topsort-hdl unit``: write one standalone block as Verilog."""

import sys
import time
import warnings
from pathlib import Path

from .options import UsageError, add_record_options, output_file

__all__ = ["add_parser", "run"]


def add_parser(commands):
    from ..targets.units import UNIT_KINDS

    unit = commands.add_parser("unit", help="write one standalone block as Verilog",
                               description="Write one standalone block as Verilog. Kinds: "
                               + "; ".join(f"{k}: {d}" for k, (_, d) in UNIT_KINDS.items()))
    unit.add_argument("kind", metavar="KIND", help=f"one of {', '.join(UNIT_KINDS)}")
    unit.add_argument("--rate", type=int, default=None,
                      help="records per bundle E, or root rate p of a tree (bitonic, mms, "
                           "flims, tree, reuse; default 4)")
    unit.add_argument("--stages", type=int, default=None,
                      help="pipeline registers per network (bitonic, mms, flims; default one "
                           "per layer)")
    unit.add_argument("--descending", action="store_true", help="descending order (cas, bitonic)")
    unit.add_argument("--leaves", type=int, default=None,
                      help="leaves per tree l (tree, reuse; default 16)")
    unit.add_argument("--trees", type=int, default=None,
                      help="trees reused in phase 2 r (reuse; default 4)")
    unit.add_argument("--leaf-depth", type=int, default=None,
                      help="bundles per leaf buffer (tree, reuse; default 256)")
    unit.add_argument("--data-width", type=int, default=None,
                      help="AXI data width in bits (reader, writer; default 512)")
    unit.add_argument("--burst-bytes", type=int, default=None,
                      help="largest burst (reader default 1024, writer 4096)")
    unit.add_argument("--outstanding", type=int, default=None,
                      help="bursts in flight per port (reader, writer; default 4)")
    unit.add_argument("--ports", type=int, default=None,
                      help="AXI ports the output is batched over (writer; default 1)")
    unit.add_argument("--slots", type=int, default=None,
                      help="regions per port the batches rotate over (writer; default 1)")
    unit.add_argument("--batch-bytes", type=int, default=None,
                      help="output batch size with several ports (writer; default 4096)")
    add_record_options(unit)
    unit.add_argument("--name", default=None, help="top-level module name (default: KIND)")
    unit.add_argument("--out", required=True, type=Path, help="Verilog file to write")


# The options of one kind or a few, by the parameter each sets.
KIND_OPTIONS = ("rate", "stages", "descending", "leaves", "trees", "leaf_depth", "data_width",
                "burst_bytes", "outstanding", "ports", "slots", "batch_bytes")


def run(args):
    from amaranth.hdl import UnusedElaboratable

    from ..targets.units import UNIT_KINDS, build_unit, emit_verilog, unit_parameters

    name = args.name or args.kind
    output_file("--out", args.out)
    if args.kind in UNIT_KINDS:     # (an unknown kind is build_unit's to name)
        for option in KIND_OPTIONS:
            given = getattr(args, option)
            if given not in (None, False) and option not in unit_parameters(args.kind):
                kinds = [k for k in UNIT_KINDS if option in unit_parameters(k)]
                raise UsageError(f"--{option.replace('_', '-')} applies to "
                                 f"{', '.join(kinds)} only, not {args.kind}")
    start = time.perf_counter()
    try:
        component = build_unit(args.kind, key_bits=args.key_bits, value_bits=args.value_bits,
                               rate=args.rate, stages=args.stages, descending=args.descending,
                               leaves=args.leaves, trees=args.trees, leaf_depth=args.leaf_depth,
                               data_width=args.data_width, burst_bytes=args.burst_bytes,
                               outstanding=args.outstanding, ports=args.ports, slots=args.slots,
                               batch_bytes=args.batch_bytes)
        text = emit_verilog(component, name)
    except (TypeError, ValueError) as error:
        # The half-built component of a rejected parameter is garbage, not a design mistake.
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        raise UsageError(str(error)) from None
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    except OSError as error:
        raise UsageError(f"cannot write {args.out}: {error.strerror}") from None
    print(f"wrote {args.out}: module {name}, {args.kind}, "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
