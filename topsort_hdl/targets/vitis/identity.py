"""The kernel's name and IP identity: one place for what kernel.xml, the packaging script and
the link configuration must agree on."""

__all__ = ["KERNEL_NAME", "VENDOR", "LIBRARY", "VERSION", "vlnv", "compute_unit"]

KERNEL_NAME = "topsort"          # the Verilog top, the IP name and the kernel name
VENDOR = "topsort-hdl"
LIBRARY = "kernel"
VERSION = "1.0"


def vlnv():
    return f"{VENDOR}:{LIBRARY}:{KERNEL_NAME}:{VERSION}"


def compute_unit():
    """The one compute unit's name in the link configuration and the floorplan."""
    return f"{KERNEL_NAME}_1"
