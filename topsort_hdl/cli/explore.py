"""``topsort-hdl explore``: the configurations of a board, priced by the performance model,
the Yosys estimate and the floorplan; the Pareto front of GB/s against LUTs."""

import json
import shutil
import sys
from pathlib import Path

from ..core.params import MERGE_UNITS
from .options import (
    UsageError,
    add_job_options,
    check_job_options,
    output_file,
    output_folder,
    plot_file,
    require,
)

__all__ = ["add_parser", "run"]


def add_parser(commands):
    explore = commands.add_parser(
        "explore", help="find the best configurations for a board (Pareto front of GB/s "
        "against LUTs: model, Yosys estimate, floorplan)")
    explore.add_argument("--board", required=True, help="board name (u280, u55c, u50, sim)")
    explore.add_argument("--bytes", default="4G", help="data size to price at (default 4G)")
    explore.add_argument("--record", default="32+32", metavar="KEY+VALUE",
                         help="record format: key and value bits (default 32+32)")
    explore.add_argument("--distribution", nargs="+", default=None, metavar="ORDER",
                         help="input orders to price (default random sorted): a point's "
                              "speed is its slowest")
    explore.add_argument("--clock", nargs="+", type=float, metavar="MHZ",
                         help="kernel clocks to try (default the board's)")
    explore.add_argument("--budget", type=float, default=65.0, metavar="PCT",
                         help="LUTs a point may take, %% of the device (default 65)")
    for axis, about in (("trees", "trees"), ("leaves", "leaves per tree"),
                        ("rate", "records per cycle of a tree"),
                        ("reuse", "trees phase 2 reuses"),
                        ("merge-unit", f"merge unit kinds ({', '.join(MERGE_UNITS)})"),
                        ("presort", "presort 0 and/or 1")):
        explore.add_argument(f"--{axis}", metavar="V,V,...",
                             help=f"{about} to enumerate (default every value that fits)")
    add_job_options(explore, "the Verilog writing, synthesis and validation jobs")
    explore.add_argument("--plot", type=Path, help="write a PNG of the front here")
    explore.add_argument("--json", type=Path, help="also write every priced point here")
    explore.add_argument("--save", metavar="NAME",
                         help="save the fastest point on the front as preset NAME")
    explore.add_argument("--validate", action="store_true",
                         help="sort the fastest point on the front in RTL (Verilator, 4,096 "
                              "records a tree, each order priced) and compare its cycles with "
                              "the model; --save then saves it only if it passes")


def _values(text, axis, kind=int):
    try:
        return tuple(kind(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--{axis} takes comma-separated values, not {text!r}") from None


def _space(args):
    from ..analysis.explore.space import Space
    from ..core.boards import HBM_BOARDS
    from ..core.config import CLOCK_HZ_RANGE
    from ..core.params import check_merge_unit

    if args.board not in HBM_BOARDS:
        raise UsageError(f"--board must be one of {', '.join(HBM_BOARDS)}, not {args.board!r}")
    key, sep, value = args.record.partition("+")
    try:
        key_bits, value_bits = int(key), int(value)
        if not sep:
            raise ValueError
    except ValueError:
        raise UsageError(f"--record takes KEY+VALUE bits such as 32+32, not "
                         f"{args.record!r}") from None
    axes = {}
    for axis in ("trees", "leaves", "rate", "reuse", "presort"):
        text = getattr(args, axis)
        if text:
            axes[axis] = _values(text, axis)
    if args.merge_unit:
        axes["merge_unit"] = _values(args.merge_unit, "merge-unit", str)
        for kind in axes["merge_unit"]:
            try:
                check_merge_unit(kind, "--merge-unit")
            except ValueError as error:
                raise UsageError(str(error)) from None
    low, high = (hz / 1e6 for hz in CLOCK_HZ_RANGE)
    for mhz in args.clock or ():
        if not low <= mhz <= high:
            raise UsageError(f"--clock must be between {low:g} and {high:g} MHz, not {mhz:g}")
    clocks = tuple(round(mhz * 1e6) for mhz in args.clock) if args.clock else None
    return Space(args.board, key_bits, value_bits, clocks_hz=clocks, **axes)


def run(args):
    from ..analysis.explore import (
        BlockFigures,
        enumerate_space,
        front_table,
        pareto,
        plot_front,
        price_points,
        save_preset,
    )
    from ..analysis.explore.price import DISTRIBUTIONS
    from ..analysis.explore.validate import validate_points, validation_lines
    from ..analysis.perf.model import DISTRIBUTIONS as ORDERS
    from ..analysis.perf.sweep import parse_size
    from ..analysis.qor.synth import SynthesisError
    from ..core.config import PRESETS, check_preset_name, presets_dir
    from ..sim.kernel_sort import SimulationError

    try:
        size = parse_size(args.bytes)
    except ValueError as error:
        raise UsageError(f"--bytes: {error}") from None
    if not 0 < args.budget <= 100:
        raise UsageError(f"--budget must be a percentage in (0, 100], not {args.budget:g}")
    orders = tuple(args.distribution or DISTRIBUTIONS)
    for order in orders:
        if order not in ORDERS:
            raise UsageError(f"--distribution must be among {', '.join(ORDERS)}, not "
                             f"{order!r}")
    check_job_options(args)
    if args.validate and not shutil.which("verilator"):
        require("verilator", "--validate", "verilator")
    if args.save is not None:
        try:
            check_preset_name(args.save, "--save")
        except ValueError as error:
            raise UsageError(str(error)) from None
        if args.save in PRESETS:
            raise UsageError(f"--save must not name a built-in preset, not {args.save!r}")
        output_folder("--save: the presets folder", presets_dir())
    plot_file("--plot", args.plot)
    output_file("--json", args.json)
    space = _space(args)
    try:
        configs, refused = enumerate_space(space)
    except ValueError as error:
        raise UsageError(str(error)) from None

    if not configs:
        reason = max(refused, key=refused.get) if refused else "nothing to enumerate"
        raise UsageError(f"no configuration of {space.board} is in the space asked for: "
                         f"{reason}")

    def progress(line):
        print(f"explore: {line}", file=sys.stderr, flush=True)

    progress(f"{len(configs)} configurations on {space.board}"
             + (f" ({sum(refused.values())} combinations refused by the configuration's "
                f"rules)" if refused else ""))
    figures = BlockFigures(scheduler=args.scheduler, workers=args.workers, progress=progress)
    budget = args.budget / 100
    try:
        points, unpriced = price_points(configs, size, figures, budget, orders, progress)
    except SynthesisError as error:     # (a tool's failure, not the user's: status 1)
        print(f"topsort-hdl: explore: {error}", file=sys.stderr)
        return 1
    progress(f"priced {len(points)} points: {figures.cached} blocks from the cache, "
             f"{figures.synthesised} synthesised")
    for line in front_table(points, unpriced, size, budget, _reference(points, space.board)):
        print(line)
    front = pareto(points)
    if args.plot and points:
        print(f"wrote {plot_front(points, args.plot, size, budget)}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps([_figures(p) for p in points], indent=1) + "\n")
    if (args.save or args.validate) and not front:
        raise UsageError(f"{'--save' if args.save else '--validate'}: no point fits, "
                         f"nothing to {'save' if args.save else 'validate'}")
    best = front[-1] if front else None
    if args.validate:
        try:
            (validation,) = validate_points([best.config], orders, args.scheduler,
                                            args.workers, progress)
        except SimulationError as error:
            print(f"topsort-hdl: explore: {best.config.name} failed in RTL: {error}",
                  file=sys.stderr)
            return 1
        print()
        for line in validation_lines(validation):
            print(line)
        if not validation.within_tolerance:
            return 1
    if args.save:
        path = save_preset(best.config, args.save, presets_dir())
        print(f"saved {best.config.name} as preset {args.save} ({path})")
    return 0


def _reference(points, board):
    """The priced point that is the board's preset (``u280``, ``u55c``), if the space held it."""
    from ..analysis.explore.space import AXES
    from ..core.config import PRESETS

    preset = PRESETS.get(board)
    if preset is None:
        return None
    return next((p for p in points if p.config.clock_hz == preset.clock_hz and all(
        getattr(p.config, axis) == getattr(preset, axis) for axis in AXES)), None)


def _figures(point):
    c = point.config
    return {"name": c.name, "trees": c.trees, "leaves": c.leaves, "rate": c.rate,
            "reuse": c.reuse, "merge_unit": c.merge_unit, "presort": c.presort,
            "clock_hz": c.clock_hz, "records": point.records, "gbps": point.gbps,
            "phases": point.phases, "luts": point.usage.luts, "ff": point.usage.ff,
            "share": point.share, "levels": point.levels, "deepest": point.deepest,
            "slr": list(point.plan.slr) if point.plan else None, "marks": list(point.marks),
            "fits": point.fits}
