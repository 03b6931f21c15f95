"""topsort-hdl: the TopSort HBM sorting accelerator in Amaranth HDL.

Layout (imports point one way, lowest layer first: core, hardware, targets, host, simulation,
analysis, cli; ``tests/test_layers.py`` holds the map and enforces it):

- ``contract``, ``params``, ``axi_params``, ``tree_shape``, ``platforms``, the configuration,
  pass plan and kernel model in ``kernel``, and ``models``: the plain-Python core (golden
  models never import hardware; the tree model, whose padded layout is the Amaranth record
  layout, sits with the simulation harnesses);
- ``records``: record and bundle layouts;
- ``merge``: compare-swap cells, bitonic merge networks, the MMS merge unit;
- ``tree``: merge trees and the phase-2 reuse switch;
- ``axi``: HBM read/write engines and the AXI4-Lite control block;
- ``kernel``: the two-phase kernel;
- ``vitis``, ``onchip`` and ``units``: Vitis packaging, the on-chip demo, standalone Verilog;
- ``host``: the host library (the core only);
- ``sim``: every simulation: Amaranth-simulator harnesses and benchmarks, cocotb benches, their
  runner and the profiler;
- ``perf`` and ``qor``: the performance model and quality of results;
- ``golden``: the golden figures' file format and policy (``make bench``, ``make qor``);
- ``cli``: the command line.
"""

__version__ = "0.1.0"
