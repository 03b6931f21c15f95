"""Vitis RTL-kernel packaging: kernel.xml, packaging scripts, connectivity, floorplan."""
