"""Profile a kernel configuration: cycles per pass of one tree, and where they go.

    python -m topsort_hdl.sim.profile --config small --set trees=2 --records 32768 [--tree 0]
        [--sim verilator] [--pause 0] [--order random]

Sorts records (random keys, or ``--order``) on the RTL (ideal memory unless ``--pause``) with
the probe of :mod:`topsort_hdl.sim.cocotb.cocotb_profile` and prints one row per phase-1 pass
of the tree and one for phase 2, next to the ideal: ``rate`` records per cycle (fewer in a
pass with fewer active leaves), ``reuse * rate`` in phase 2.
"""

import argparse
import json
import sys

from topsort_hdl.core.config import config_from
from topsort_hdl.core.golden.workloads import INPUT_ORDERS
from topsort_hdl.core.plan import split_records, tree_plan

from .runner import SIM_BUILD, run_bench, write_kernel

COLUMNS = ["pass", "cycles", "ideal", "r", "root", "w", "first_root", "root_span", "tail",
           "memory_wait", "ar_wait", "root_stall"]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m topsort_hdl.sim.profile",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="small")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--records", type=int, required=True)
    parser.add_argument("--tree", type=int, default=0)
    parser.add_argument("--sim", default="verilator", choices=["icarus", "verilator"])
    parser.add_argument("--pause", type=float, default=0.0)
    parser.add_argument("--order", default="random", choices=INPUT_ORDERS,
                        help="how the input is ordered (default random)")
    args = parser.parse_args(argv)
    config = config_from(args.config, args.set)
    if not 0 <= args.tree < config.trees:
        parser.error(f"--tree must be between 0 and {config.trees - 1}, not {args.tree}")
    case = f"profile_{config.name}_{args.sim}"
    stats_path = SIM_BUILD / case / "profile.json"
    source = write_kernel(config, case)
    run_bench([source], "topsort", "cocotb_profile", case, sim=args.sim,
              quick_compile=True,
              env={"TOPSORT_CONFIG": args.config, "TOPSORT_SET": json.dumps(args.set),
                   "TOPSORT_RECORDS": args.records, "TOPSORT_STATS": stats_path,
                   "TOPSORT_PAUSE": args.pause, "TOPSORT_PROFILE_TREE": args.tree,
                   "TOPSORT_ORDER": args.order})
    stats = json.loads(stats_path.read_text())
    for line in profile_table(config, stats):
        print(line)


def profile_table(config, stats):
    """The probe's rows as a table, each with its ideal cycles."""
    records = split_records(stats["records"], config.trees)[stats["tree"]]
    plan = tree_plan(records, config.leaves, config.runs_per_tree, config.first_run_length)
    # A pass merges at most one record per active leaf per cycle.
    ideal = [-(-records // min(config.rate, step.active)) for step in plan.passes]
    ideal.append(-(-stats["records"] // (config.reuse * config.rate)))
    lines = [f"{config.name}, {stats['records']} records ({stats.get('order', 'random')}), "
             f"tree {stats['tree']} ({records} records, {len(plan.passes)} passes): phase 1 "
             f"{stats['phase1_cycles']} cycles, phase 2 {stats['phase2_cycles']} cycles",
             " ".join(f"{c:>11}" for c in COLUMNS)]
    for row, best in zip(stats["passes"], ideal, strict=False):
        row = {**row, "ideal": best}
        lines.append(" ".join(f"{row[c]:>11}" for c in COLUMNS))
    return lines


if __name__ == "__main__":
    sys.exit(main())
