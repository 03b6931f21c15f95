"""Vitis RTL-kernel packaging: kernel.xml, packaging script, link configuration, hosts.

:func:`write_project` (:mod:`.project`) writes, next to the kernel's Verilog, everything a Vitis
user needs to go from ``topsort-hdl generate`` to an xclbin and a running host (see the
generated Makefile). Every file is built from the same tables as the RTL.
"""

from .connectivity import link_config, port_channels
from .kernel_xml import kernel_xml
from .package import package_tcl
from .project import board_floorplan, config_header, floorplan_estimates, write_project

__all__ = ["write_project", "board_floorplan", "floorplan_estimates", "port_channels",
           "kernel_xml", "link_config", "package_tcl", "config_header"]
