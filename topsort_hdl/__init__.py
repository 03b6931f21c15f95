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
__all__ = ["sort"]


def sort(array, config="tiny", *, descending=False, **options):
    """``array`` (a NumPy array of keys, or of records with ``key`` and ``value`` fields)
    sorted on the TopSort kernel, ascending or ``descending``: by default its RTL in
    simulation on ``config``'s shape. See :func:`topsort_hdl.sim.arrays.sort_array`, which
    this calls, for the arrays it takes and ``options``.

    ``import topsort_hdl`` stays light: the simulation is imported on the first call."""
    from .sim.arrays import sort_array

    return sort_array(array, config, descending=descending, **options)
