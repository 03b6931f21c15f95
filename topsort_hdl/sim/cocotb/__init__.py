"""cocotb testbenches for the emitted Verilog (run in Icarus or Verilator by
:mod:`topsort_hdl.sim.runner`), and the helpers they share."""
