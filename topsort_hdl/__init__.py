"""topsort-hdl: the TopSort HBM sorting accelerator in Amaranth HDL.

Layout (dependencies point from the edges to the core):

- ``records``: record and bundle layouts, parameter validation;
- ``merge``: compare-swap cells, bitonic merge networks, the MMS merge unit;
- ``tree``: merge trees and the phase-2 reuse switch;
- ``axi``: HBM read/write engines and the AXI4-Lite control block;
- ``kernel``: the two-phase kernel;
- ``vitis``: Vitis packaging;
- ``models``: golden models and workloads (never import hardware);
- ``sim``: every simulation: Amaranth-simulator harnesses and benchmarks, cocotb benches, their
  runner and the profiler;
- ``golden``: the golden figures' file format and policy (``make bench``, ``make qor``);
- ``units`` and ``cli``: standalone Verilog and the command line.
"""

__version__ = "0.1.0"
