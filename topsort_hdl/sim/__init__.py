"""Simulation: every testbench and harness of the package, in one home that installs with it.

One home, because the two simulators check the same blocks against the same models and share
the AXI protocol rules, and because ``topsort-hdl sort`` and ``topsort-hdl bench`` run them from
an installed package, not only from a checkout. The folder names say which simulator drives the
code inside:

- ``amaranth/``: harnesses run by Amaranth's Python simulator on the elaborated design
  (``stream_harness``, ``axi_memory``, ``axi_engine_harness``, ``axilite_master``) and the
  benchmarks of ``topsort-hdl bench`` built on them (``bench_merge_unit``, ``bench_tree``,
  ``bench_axi``);
- ``cocotb/``: cocotb testbenches on the emitted Verilog, run in Icarus or Verilator
  (``cocotb_*``), and the helpers they share (``stream_driver``, ``axi_ram``);
- next to them: ``axi_protocol`` (the AXI4 rules every master must keep, fed by both
  simulators), ``runner`` (builds Verilog in Icarus or Verilator and runs a cocotb testbench on
  it) and ``profile`` (``python -m topsort_hdl.sim.profile``: cycles per pass of one tree).
"""

__all__ = ["SIMULATORS"]

# The simulators the package's testbenches and runner are written for (cocotb knows more). Here,
# where the command line reads it without importing a simulation.
SIMULATORS = ("icarus", "verilator")
