"""Yosys figures of the kernel's blocks, found by what a block *is* (its identity) so that a
point priced before costs a file read: the block's Verilog is written, and synthesised, only
when its identity has not been seen with this source of the package's hardware. Both run as
jobs (:func:`.run_jobs`: local processes or a Dask cluster): a job writing Verilog rebuilds its
block from its class and arguments, so that after a change of the hardware's source the index
is rebuilt on every worker, not in the caller alone."""

import functools
import hashlib
import json
from pathlib import Path

from ...targets.hierarchy import block_verilog
from ..jobs import run_jobs
from .blocks import TOP
from .synth import CACHE_DIR, cached_result, design_key, run_yosys, store_result

__all__ = ["BlockFigures", "source_digest"]

_PACKAGE = Path(__file__).resolve().parents[2]


# What a block is follows from its constructor's arguments: the configuration's code only
# computes them (and no block reads it), the golden models and stored figures are not hardware.
NOT_HARDWARE = ("core/config.py", "core/block_figures.py", "core/golden/")
# The code that writes a block's Verilog, outside the hardware.
VERILOG_WRITER = ("targets/hierarchy.py", "targets/verilog_text.py")


@functools.cache
def source_digest():
    """A hash of the code a block's Verilog follows from (``hardware/`` and ``core/``, less
    :data:`NOT_HARDWARE`, and :data:`VERILOG_WRITER`): an identity seen with another source is
    written again."""
    digest = hashlib.sha256()
    paths = [path for folder in ("hardware", "core") for path in (_PACKAGE / folder).rglob("*.py")]
    for path in sorted(paths + [_PACKAGE / name for name in VERILOG_WRITER]):
        name = path.relative_to(_PACKAGE).as_posix()
        if not name.startswith(NOT_HARDWARE):
            digest.update(name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:20]


class BlockFigures:
    """Synthesis results (:class:`~topsort_hdl.analysis.qor.synth.SynthesisResult`) of
    blocks, from the QoR cache (``cache_dir``, the same as ``make qor``'s) through an index by
    identity; the blocks not in it are converted here and synthesised by :func:`.run_jobs`
    (``scheduler``: a Dask scheduler's address, else ``workers`` local processes)."""

    def __init__(self, cache_dir=None, scheduler=None, workers=None, progress=None):
        self.cache = Path(cache_dir or CACHE_DIR)
        self.scheduler = scheduler
        self.workers = workers
        self.progress = progress or (lambda line: None)
        self.synthesised = 0        # blocks this object ran Yosys for
        self.cached = 0             # blocks found in the cache

    def _index(self, module, identity):
        key = hashlib.sha256("\0".join([module, identity, source_digest()])
                             .encode()).hexdigest()[:20]
        return self.cache / "blocks" / f"{key}.json"

    def _remember(self, module, block, digest):
        index = self._index(module, block.block_identity)
        index.parent.mkdir(parents=True, exist_ok=True)
        index.write_text(json.dumps({"module": module, "design": digest}) + "\n")

    def known(self, module, identity):
        """The cached result of the block of ``identity`` (Verilog module ``module``), or
        None."""
        index = self._index(module, identity)
        if not index.exists():
            return None
        return cached_result(json.loads(index.read_text())["design"], self.cache)

    def results(self, blocks):
        """``{module: SynthesisResult}`` for ``blocks`` (``{module: block}``; a block may be
        given by its identity alone, and is then left out of the results unless known)."""
        results, jobs, digests = {}, [], {}
        unknown = {}
        for module, block in blocks.items():
            identity = block if isinstance(block, str) else block.block_identity
            found = self.known(module, identity)
            if found is not None:
                results[module] = found
            elif not isinstance(block, str):
                unknown[module] = block
        self.cached += len(results)
        where = self.scheduler or "local processes"
        writes = [(module, (type(block), block.block_arguments))
                  for module, block in unknown.items()]
        for number, (module, text) in enumerate(run_jobs(_block_text, writes, self.scheduler,
                                                         self.workers), 1):
            self.progress(f"wrote the Verilog of {module} on {where} "
                          f"({number}/{len(unknown)})")
            # (the key is the caller's: its Yosys version and script, whoever wrote the text)
            digest = digests[module] = design_key(text, module)
            found = cached_result(digest, self.cache)
            if found is not None:
                self._remember(module, unknown[module], digest)
                results[module] = found
                self.cached += 1
            else:
                jobs.append((module, (text, module)))
        for done, (module, entry) in enumerate(run_jobs(run_yosys, jobs, self.scheduler,
                                                        self.workers), 1):
            results[module] = store_result(digests[module], entry, self.cache)
            self._remember(module, unknown[module], digests[module])
            self.synthesised += 1
            flow = ("" if entry["flow"] == "default" else
                    f" by the {entry['flow']} flow (the default failed: "
                    f"{entry['default_failure']})")
            self.progress(f"synthesised {module}{flow} in {entry['seconds']:.0f} s on {where} "
                          f"({done}/{len(jobs)}, {len(jobs) - done} left)")
        return results


def _block_text(cls, arguments):
    """The Verilog of the block ``cls(**arguments)`` as the kernel holds it (a job: what a
    worker of another machine sends back)."""
    return block_verilog(cls(**arguments), TOP)
