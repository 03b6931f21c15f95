"""Harnesses run by Amaranth's Python simulator, shared by the tests and by the benchmarks of
``topsort-hdl bench``."""
