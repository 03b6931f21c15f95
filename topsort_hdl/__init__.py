"""topsort-hdl: the TopSort HBM sorting accelerator in Amaranth HDL.

Each folder is a layer, lowest first; a module imports only from its own layer and those below
(``tests/test_layers.py`` holds the map and enforces it):

- ``core``: plain Python, no Amaranth: parameter checks, board files, configurations and the
  pass plan, the host contract and register map, stored block figures, the golden models;
- ``hardware``: the Amaranth blocks: ``records``, ``merge`` (compare-swap cells, bitonic merge
  networks, the MMS and rate-1 merge units), ``tree`` (merge trees, the phase-2 reuse switch),
  ``axi`` (HBM engines, the AXI4-Lite control block), ``kernel`` (the two-phase kernel);
- ``targets``: the kernel's Verilog, standalone blocks, the Vitis project, the on-chip demo;
- ``host``: the host library (the core only);
- ``sim``: every simulation: Amaranth-simulator harnesses and benchmarks, cocotb testbenches,
  their runner, ``topsort-hdl sort``, the profiler;
- ``analysis``: the performance model, quality of results, the golden figures' policy;
- ``cli``: the command line.
"""

__version__ = "0.1.0"
