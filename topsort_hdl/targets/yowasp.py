"""The YoWASP tools (Yosys, nextpnr, SymbiYosys from PyPI): where they are, and a first run
that cannot break the runs beside it.

A YoWASP tool compiles its WebAssembly on its first run and keeps the machine code in a cache
file, which every later run maps into memory. On a cache miss the runtime (yowasp-runtime)
writes that file in place, truncating it first: when several runs start together on a machine
whose cache is empty, each compiles, and the second to finish truncates the file under a run
that has already mapped the first's. That run dies of SIGBUS (exit 135 from a shell, no
message): what made a fresh machine's first Yosys estimates fail now and then.
:func:`prepared` runs a tool once, alone under a lock, before a caller starts it for real: the
cache file is then complete and nobody rewrites it.
"""

import fcntl
import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = ["program", "prepared", "cache_dir"]


def program(name):
    """The path of YoWASP program ``name``: the one beside this Python (its environment's),
    else on ``PATH``; None when neither has it."""
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def cache_dir():
    """Where the YoWASP runtime keeps its compiled tools (as yowasp-runtime finds it)."""
    if os.environ.get("YOWASP_CACHE_DIR"):
        return Path(os.environ["YOWASP_CACHE_DIR"])
    import platformdirs  # a dependency of yowasp-runtime

    return Path(platformdirs.user_cache_dir("YoWASP", appauthor=False))


@functools.cache
def prepared(name):
    """The path of YoWASP program ``name`` (see :func:`program`), after one run of it that
    holds a lock on the YoWASP cache: the first caller of the machine compiles the tool while
    the others wait, so that no run maps a cache file that another is rewriting. Once per
    process and program; None when the program is not installed."""
    path = program(name)
    if path is None:
        return None
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".topsort-hdl.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run([path, "--version"], capture_output=True, check=False)
    return path
