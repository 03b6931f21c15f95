"""Write a configuration's kernel: its Verilog (:func:`kernel_verilog`, with the port names
Vitis expects), the register map, the layout descriptor, and (for a board with Vitis platforms)
everything Vitis needs next to it."""

import json
import time
from pathlib import Path

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal, Signal

from ..core.contract import CONTROL_PORT, STATUS_BITS, layout_descriptor, master_port
from ..hardware.kernel.kernel import TopSortKernel
from .hierarchy import hierarchical_verilog
from .vitis.connectivity import port_channels
from .vitis.identity import KERNEL_NAME

__all__ = ["generate", "kernel_verilog", "TOP_NAME"]

TOP_NAME = KERNEL_NAME


def generate(config, out_dir, vitis=True, port_stages=None):
    """Write ``<out_dir>/topsort.v``, ``registers.json``, ``layout.json`` (the layout
    descriptor, :func:`topsort_hdl.core.contract.layout_descriptor`) and, when ``vitis`` and the
    board has Vitis platforms, the Vitis project files
    (:func:`.vitis.project.write_project`), the floorplan among them: it decides the
    register stages on each tree's port unless ``port_stages`` does. Returns a dict of what
    was done."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    plan = None
    if vitis:
        from .vitis.project import board_floorplan

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
        from .vitis.project import write_project

        written = write_project(config, out_dir, plan)
    return {"verilog": out_dir / f"{TOP_NAME}.v", "seconds": time.perf_counter() - start,
            "bytes": len(text), "modules": len(design.modules),
            "instances": sum(design.instances.values()), "vitis": written}


def _vitis_name(path):
    head = path[0]
    if head == "control":
        return f"{CONTROL_PORT}_{path[1]}"
    if head == "m_axi":
        return f"{master_port(path[1])}_{path[2]}"
    return "_".join(map(str, path))


def kernel_verilog(config, name="topsort", port_stages=None):
    """The kernel's Verilog: top ``name`` with ports ``ap_clk``, ``ap_rst_n``,
    ``s_axi_control_*``, ``mNN_axi_*`` and ``interrupt``, every distinct block one module
    (:func:`~topsort_hdl.targets.hierarchy.hierarchical_verilog`); returns ``(design, kernel)``, the
    design a :class:`~topsort_hdl.targets.hierarchy.HierarchicalDesign`."""
    kernel = TopSortKernel(config, port_stages)
    top = Module()
    top.domains.sync = ClockDomain()
    ap_clk = Signal(name="ap_clk")
    ap_rst_n = Signal(name="ap_rst_n")
    top.d.comb += [ClockSignal().eq(ap_clk), ResetSignal().eq(~ap_rst_n)]
    top.submodules.kernel = kernel
    # Directions are left to Amaranth: what the design drives is an output.
    ports = {"ap_clk": (ap_clk, None), "ap_rst_n": (ap_rst_n, None)}
    for path, _member, value in kernel.signature.flatten(kernel):
        ports[_vitis_name(path)] = (value, None)
    return hierarchical_verilog(top, name, ports), kernel
