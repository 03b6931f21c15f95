"""The two-phase TopSort kernel that ties trees, switch and AXI engines together."""
