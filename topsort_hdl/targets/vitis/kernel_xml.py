"""kernel.xml: what XRT and v++ know about the RTL kernel (ports, arguments, register offsets).

Written from the same tables the RTL is built from (:func:`kernel_arguments`, the control
block's :class:`~topsort_hdl.core.register_map.RegisterMap`, :func:`argument_ports`), so the offsets
XRT writes are the ones the control block decodes.
"""

from xml.etree import ElementTree

from ...core.contract import (
    CONTROL_ADDR_WIDTH,
    CONTROL_PORT,
    argument_ports,
    kernel_arguments,
    kernel_counters,
    master_port,
)
from ...core.register_map import RegisterMap
from .identity import KERNEL_NAME, vlnv

__all__ = ["kernel_xml", "ADDRESS_RANGE"]

ADDRESS_RANGE = "0xFFFFFFFFFFFFFFFF"     # 64-bit masters


def kernel_xml(config):
    """The kernel.xml text for ``config``."""
    registers = RegisterMap(kernel_arguments(config), kernel_counters(config))
    ports_of = argument_ports(config)
    root = ElementTree.Element("root", versionMajor="1", versionMinor="6")
    kernel = ElementTree.SubElement(root, "kernel", {
        "name": KERNEL_NAME, "language": "ip_c", "vlnv": vlnv(), "attributes": "",
        "preferredWorkGroupSizeMultiple": "0", "workGroupSize": "1", "interrupt": "true",
        "hwControlProtocol": "ap_ctrl_hs",
    })
    ports = ElementTree.SubElement(kernel, "ports")
    ElementTree.SubElement(ports, "port", {
        "name": CONTROL_PORT, "mode": "slave", "range": f"{1 << CONTROL_ADDR_WIDTH:#x}",
        "dataWidth": "32", "portType": "addressable", "base": "0x0"})
    for tree in range(config.trees):
        ElementTree.SubElement(ports, "port", {
            "name": master_port(tree), "mode": "master", "range": ADDRESS_RANGE,
            "dataWidth": str(config.data_width), "portType": "addressable", "base": "0x0"})
    args = ElementTree.SubElement(kernel, "args")
    for index, (name, bits) in enumerate(kernel_arguments(config)):
        port = ports_of[name]
        pointer = port != CONTROL_PORT
        size = max(4, bits // 8)
        ElementTree.SubElement(args, "arg", {
            "name": name, "addressQualifier": "1" if pointer else "0", "id": str(index),
            "port": port, "size": f"{size:#x}", "offset": f"{registers.offset(name):#x}",
            "type": "void*" if pointer else ("ulong" if size == 8 else "uint"),
            "hostOffset": "0x0", "hostSize": f"{size:#x}"})
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(
        root, encoding="unicode") + "\n"
