"""``topsort-hdl bench``: measure blocks in simulation, against golden figures if asked."""

import json
from pathlib import Path

from ..core.params import MERGE_UNITS
from .format import axi_line, merge_unit_line, tree_line
from .options import UsageError, output_file

__all__ = ["add_parser", "run"]


def add_parser(commands):
    from ..analysis.regression import BENCH_KEYS

    bench = commands.add_parser("bench", help="measure blocks in simulation")
    bench.add_argument("block", choices=list(BENCH_KEYS),
                       help="mms, flims: merge unit per E; tree: merge trees and the phase-2 "
                            "tree; axi: read and write engine bandwidth")
    bench.add_argument("--rate", type=int, action="append",
                       help="mms and flims only: records per bundle E; repeat for several "
                            "(default 1 2 4 8 16)")
    bench.add_argument("--json", type=Path, help="also write the results to this JSON file")
    bench.add_argument("--golden", type=Path,
                       help="compare with these golden figures; exit 1 when one leaves its band")
    bench.add_argument("--update", action="store_true",
                       help="with --golden: rewrite the golden file with the new figures")


def run(args):
    from ..analysis import regression as goldens

    if args.update and not args.golden:
        raise UsageError("--update needs --golden")
    output_file("--json", args.json)
    if args.update:
        output_file("--golden", args.golden)
    golden = {}
    if args.golden and (args.golden.exists() or not args.update):
        try:
            golden = goldens.load(args.golden)
        except (ValueError, OSError) as error:
            raise UsageError(f"cannot read golden results {args.golden}: {error}") from None
    if args.block in MERGE_UNITS:
        results = _bench_merge_unit(args)
    else:
        if args.rate:
            raise UsageError("--rate applies to 'bench mms' and 'bench flims' only")
        results = _bench_tree() if args.block == "tree" else _bench_axi()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({args.block: results}, indent=2) + "\n")
    if not args.golden:
        return 0
    figures = goldens.bench_figures(args.block, results)
    if args.update:
        # Every row measured again: the block is replaced whole; some rates: those rows.
        replace = ([goldens.bench_name(args.block, row) for row in results] if args.rate
                   else [args.block])
        goldens.save(args.golden, goldens.update(golden, figures, replace),
                     goldens.bench_about(args.block))
        print(f"updated {args.golden} ({len(figures)} figures)")
        return 0
    failures, notes = goldens.check(golden, figures, refresh=goldens.BENCH_REFRESH)
    for line in notes + failures:
        print(line)
    if failures:
        return 1
    print(f"matches the golden results in {args.golden}")
    return 0


def _bench_merge_unit(args):
    from ..hardware.records import MAX_MERGE_RATE, check_power_of_two
    from ..sim.amaranth.bench_merge_unit import measure_merge_unit

    rates = args.rate or [1, 2, 4, 8, 16]
    try:
        for rate in rates:
            check_power_of_two("rate", rate, MAX_MERGE_RATE)
    except ValueError as error:
        raise UsageError(str(error)) from None
    results = []
    for rate in rates:
        m = measure_merge_unit(args.block, rate)
        results.append(m.as_dict())
        print(merge_unit_line(args.block, m, rate), flush=True)
    return results


def _bench_axi():
    from ..sim.amaranth.bench_axi import BENCH_CASES

    results = []
    for measure, params in BENCH_CASES:
        m = measure(**params)
        results.append(m.as_dict())
        print(axi_line(m), flush=True)
    return results


def _bench_tree():
    from ..sim.amaranth.bench_tree import BENCH_CASES

    results = []
    for measure, params, workload in BENCH_CASES:
        m = measure(*params, workload)
        results.append(m.as_dict())
        print(tree_line(m), flush=True)
    return results
