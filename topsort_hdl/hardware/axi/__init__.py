"""AXI4 read/write engines to HBM channels and the AXI4-Lite control block (its register map is
plain Python: :mod:`topsort_hdl.core.register_map`)."""

from .beats import BeatLayout
from .control import ControlRegisters
from .reader import LEAF_BUFFER_MEMORY, REFILL_CYCLES, AxiReadEngine
from .signature import Axi4Signature, AxiLiteSignature, AxiParams
from .writer import AxiWriteEngine

__all__ = ["AxiParams", "Axi4Signature", "AxiLiteSignature", "BeatLayout", "AxiReadEngine",
           "REFILL_CYCLES", "LEAF_BUFFER_MEMORY", "AxiWriteEngine", "ControlRegisters"]
