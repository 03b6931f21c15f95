"""Standalone blocks for reuse or outside verification (``topsort-hdl unit KIND``)."""

import os

from amaranth.back import verilog

from .merge import BitonicMerger, CompareSwap, MmsMergeUnit
from .records import RecordLayout

__all__ = ["UNIT_KINDS", "build_unit", "emit_verilog"]

# Use the Yosys that ships with Amaranth, never whatever is on PATH (TOOLCHAIN gotcha 1).
os.environ.setdefault("AMARANTH_USE_YOSYS", "builtin")


def _cas(record, *, descending=False, **_):
    return CompareSwap(record, descending=descending)


def _bitonic(record, *, rate, stages=None, descending=False, **_):
    return BitonicMerger(record, rate, stages=stages, descending=descending)


def _mms(record, *, rate, stages=None, **_):
    return MmsMergeUnit(record, rate, network_stages=stages)


UNIT_KINDS = {
    "cas": (_cas, "compare-swap cell (combinational): a, b -> first, second"),
    "bitonic": (_bitonic, "bitonic merge of two sorted bundles: streams a, b -> o"),
    "mms": (_mms, "MMS streaming merge unit: run streams a, b -> o"),
}


def build_unit(kind, *, key_bits=32, value_bits=32, rate=4, stages=None, descending=False):
    """Return the component for ``kind``; parameters a kind does not use are ignored."""
    if kind not in UNIT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(UNIT_KINDS)}, not {kind!r}")
    record = RecordLayout(key_bits, value_bits)
    factory, _ = UNIT_KINDS[kind]
    return factory(record, rate=rate, stages=stages, descending=descending)


def emit_verilog(component, name):
    """Return the Verilog of ``component`` with top-level module ``name``."""
    if not name.isidentifier():
        raise ValueError(f"name must be a Verilog identifier, not {name!r}")
    return verilog.convert(component, name=name, emit_src=False)
