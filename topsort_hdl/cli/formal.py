"""``topsort-hdl formal``: prove the hardware blocks' properties with SymbiYosys and print a
table (block, assertions, mode, depth, result, time); ``--broken`` also runs each block's
deliberately broken variant, which its proof must catch."""

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .options import UsageError, output_folder

__all__ = ["add_parser", "run"]


def add_parser(commands):
    formal = commands.add_parser(
        "formal", help="prove the blocks' properties with SymbiYosys (table of results)")
    formal.add_argument("proofs", nargs="*", metavar="PROOF",
                        help="proofs to run, by name or prefix (default all; --list names them)")
    formal.add_argument("--list", action="store_true", help="list the proofs and stop")
    formal.add_argument("--broken", action="store_true",
                        help="also run each block's broken variant: its proof must fail")
    formal.add_argument("--work", type=Path, default=Path("build/formal"),
                        help="folder for designs, logs and counterexample traces "
                             "(default build/formal)")
    formal.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="proofs run at once (default one per core)")


def _result(r):
    if r.status == "PASS":
        return "proven" if r.mode == "prove" else f"holds {r.depth} cycles"
    if r.status == "FAIL":
        return f"FAIL: {r.trace or r.log}"
    return f"{r.status}: {r.log}"


def run(args):
    from ..formal.proofs import proofs_named
    from ..formal.sby import run_proof, tools_missing

    try:
        proofs = proofs_named(args.proofs)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if args.jobs < 1:
        raise UsageError(f"--jobs must be at least 1, not {args.jobs}")
    if args.list:
        for proof in proofs:
            print(f"{proof.name:<26} {proof.mode:<5} depth {proof.depth:<3} {proof.about}")
        return 0
    output_folder("--work", args.work)
    missing = tools_missing()
    if missing:
        raise UsageError(f"formal proofs need {', '.join(missing)}, which is not installed: "
                         "pip install 'topsort-hdl[formal]'")
    # (proof, name, the broken variant's build or None)
    jobs = [(proof, proof.name, None) for proof in proofs]
    if args.broken:
        jobs += [(proof, name, build) for proof in proofs
                 for name, build in proof.broken_variants]

    def prove(job):
        proof, name, build = job
        return run_proof(name, proof.design(build), proof.mode, proof.depth, args.work)

    print(f"{'proof':<26} {'asserts':>7} {'mode':<5} {'depth':>5} {'time':>7}  result")
    failed = 0
    with ThreadPoolExecutor(args.jobs) as pool:
        for (_, _, broken), r in zip(jobs, pool.map(prove, jobs), strict=True):
            if broken is not None:
                caught = r.status == "FAIL"
                failed += not caught
                outcome = "caught" if caught else f"NOT CAUGHT ({r.status}): {r.log}"
            else:
                failed += r.status != "PASS"
                outcome = _result(r)
            print(f"{r.name:<26} {r.assertions:>7} {r.mode:<5} {r.depth:>5} "
                  f"{r.seconds:>6.1f}s  {outcome}", flush=True)
    if failed:
        print(f"{failed} of {len(jobs)} proofs failed", file=sys.stderr)
        return 1
    return 0
