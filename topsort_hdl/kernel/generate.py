"""Write a configuration's kernel: its Verilog, the register map, the layout descriptor, and
(for a board with Vitis platforms) everything Vitis needs next to it."""

import json
import time
from pathlib import Path

from ..contract import STATUS_BITS, layout_descriptor
from ..vitis.connectivity import port_channels
from ..vitis.identity import KERNEL_NAME
from .kernel import kernel_verilog

__all__ = ["generate", "TOP_NAME"]

TOP_NAME = KERNEL_NAME


def generate(config, out_dir, vitis=True, port_stages=None):
    """Write ``<out_dir>/topsort.v``, ``registers.json``, ``layout.json`` (the layout
    descriptor, :func:`topsort_hdl.contract.layout_descriptor`) and, when ``vitis`` and the
    board has Vitis platforms, the Vitis project files
    (:func:`topsort_hdl.vitis.project.write_project`), the floorplan among them: it decides the
    register stages on each tree's port unless ``port_stages`` does. Returns a dict of what
    was done."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    plan = None
    if vitis:
        from ..vitis.project import board_floorplan

        plan = board_floorplan(config)
        if plan is not None and port_stages is None:
            port_stages = plan.stages
    design, kernel = kernel_verilog(config, TOP_NAME, port_stages)
    text = design.text
    (out_dir / f"{TOP_NAME}.v").write_text(text)
    registers = kernel.register_map
    (out_dir / "registers.json").write_text(json.dumps({
        "config": config.name,
        "registers": [{"name": e.name, "offset": e.offset, "bytes": e.bytes, "access": e.access}
                      for e in registers.entries],
        "status_bits": STATUS_BITS,
    }, indent=2) + "\n")
    (out_dir / "layout.json").write_text(json.dumps(layout_descriptor(
        config, {e.name: e.offset for e in registers.entries}, port_channels(config),
        KERNEL_NAME),
        indent=2) + "\n")
    written = []
    if vitis:
        from ..vitis.project import write_project

        written = write_project(config, out_dir, plan)
    return {"verilog": out_dir / f"{TOP_NAME}.v", "seconds": time.perf_counter() - start,
            "bytes": len(text), "modules": len(design.modules),
            "instances": sum(design.instances.values()), "vitis": written}
