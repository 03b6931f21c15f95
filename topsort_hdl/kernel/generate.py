"""Write a configuration's kernel: its Verilog and the register map next to it."""

import json
import time
from pathlib import Path

from .kernel import STATUS_BITS, kernel_verilog

__all__ = ["generate", "TOP_NAME"]

TOP_NAME = "topsort"


def generate(config, out_dir):
    """Write ``<out_dir>/topsort.v`` and ``registers.json``; return a dict of what was done."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    text, kernel = kernel_verilog(config, TOP_NAME)
    (out_dir / f"{TOP_NAME}.v").write_text(text)
    registers = kernel.register_map
    (out_dir / "registers.json").write_text(json.dumps({
        "config": config.name,
        "registers": [{"name": e.name, "offset": e.offset, "bytes": e.bytes, "access": e.access}
                      for e in registers.entries],
        "status_bits": STATUS_BITS,
    }, indent=2) + "\n")
    return {"verilog": out_dir / f"{TOP_NAME}.v", "seconds": time.perf_counter() - start,
            "bytes": len(text)}
