"""``topsort-hdl qor``: resource estimates and logic levels (Yosys); with ``--golden``, the QoR
regression."""

import json
import sys
from pathlib import Path

from .options import (
    PROG,
    UsageError,
    add_config_options,
    add_job_options,
    check_job_options,
    config_of,
    output_file,
)

__all__ = ["add_parser", "run"]


def add_parser(commands):
    qor = commands.add_parser("qor", help="resource estimates and logic levels (Yosys); with "
                              "--golden, the QoR regression")
    add_config_options(qor)
    qor.add_argument("--part", action="append",
                     choices=["resources", "sorts", "generator", "pnr"],
                     help="what to measure (repeatable; default: resources of --config, or "
                          "everything with --golden); resources: Yosys cells and logic levels; "
                          "pnr: nextpnr-ecp5 Fmax and area of merge units, trees and the "
                          "on-chip demo")
    qor.add_argument("--open-pnr", action="append_const", dest="part", const="pnr",
                     help="the same as --part pnr")
    qor.add_argument("--golden", type=Path,
                     help="compare with these golden figures; exit 1 when one leaves its band")
    qor.add_argument("--update", action="store_true",
                     help="with --golden: rewrite the golden file with the new figures")
    qor.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    qor.add_argument("--store-figures", action="store_true",
                     help="store the preset's block figures with it (topsort_hdl/core/"
                          "block_figures.json), for the floorplan of `generate`")
    add_job_options(qor, "the synthesis, simulation and place-and-route jobs")


def run(args):
    from ..analysis.qor.run import PARTS, RESOURCE_CONFIGS, run_qor
    from ..analysis.qor.synth import SynthesisError
    from ..analysis.regression import QOR_ABOUT, check, load, save, update
    from ..core.config import config_from
    from ..sim.kernel_sort import SimulationError

    if args.update and not args.golden:
        raise UsageError("--update needs --golden")
    if args.set and args.golden:
        raise UsageError("--golden checks the presets' figures; drop --set")
    if args.store_figures and (args.set or args.golden):
        raise UsageError("--store-figures stores a preset's own figures; drop --set and "
                         "--golden")
    check_job_options(args)
    config = config_of(args)
    output_file("--json", args.json)
    if args.update:
        output_file("--golden", args.golden)
    golden = {}
    if args.golden and (args.golden.exists() or not args.update):
        try:
            golden = load(args.golden)
        except (ValueError, KeyError, OSError) as error:
            raise UsageError(f"cannot read golden figures {args.golden}: {error}") from None
    parts = args.part or (PARTS if args.golden else ["resources"])
    configs = ([config_from(name) for name in RESOURCE_CONFIGS] if args.golden
               else [config])

    def progress(line):
        print(line, file=sys.stderr, flush=True)

    try:
        figures, lines, failures = run_qor(parts, configs, progress,
                                           store_figures=args.store_figures,
                                           units=bool(args.golden),
                                           scheduler=args.scheduler, workers=args.workers)
    except (SynthesisError, SimulationError, RuntimeError) as error:
        print(f"{PROG}: qor failed: {error}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if not args.golden:
        return 1 if failures else 0
    if args.update:     # read again: another part may have been updated meanwhile
        golden = load(args.golden) if args.golden.exists() else {}
        save(args.golden, update(golden, figures), QOR_ABOUT)
        print(f"updated {args.golden} ({len(figures)} figures)")
        for line in failures:
            print(line)
        return 1 if failures else 0
    regressions, notes = check(golden, figures)
    for line in notes + regressions + failures:
        print(line)
    if regressions or failures:
        return 1
    print(f"every figure is within its band of {args.golden} ({len(figures)} figures)")
    return 0
