"""Simulation harnesses shared by the benchmarks and the Amaranth-simulator tests."""
