"""cocotb test benches for the emitted Verilog, and the helpers they share."""
