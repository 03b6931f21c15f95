"""AXI4 read/write engines to HBM channels and the AXI4-Lite control block."""

from .control import ControlRegisters, RegisterMap
