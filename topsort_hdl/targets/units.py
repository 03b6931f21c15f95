"""Standalone blocks for reuse or outside verification (``topsort-hdl unit KIND``)."""

import inspect

from ..hardware.axi import AxiParams, AxiReadEngine, AxiWriteEngine
from ..hardware.merge import BitonicMerger, CompareSwap, FlimsMergeUnit, MmsMergeUnit
from ..hardware.records import RecordLayout
from ..hardware.tree import MergeTree, ReuseSwitch
from ..hardware.tree.merge_tree import DEFAULT_LEAF_DEPTH
from .hierarchy import hierarchical_verilog

__all__ = ["UNIT_KINDS", "build_unit", "emit_verilog", "unit_parameters"]


def _cas(record, *, descending=False, **_):
    return CompareSwap(record, descending=descending)


def _bitonic(record, *, rate, stages=None, descending=False, **_):
    return BitonicMerger(record, rate, stages=stages, descending=descending)


def _mms(record, *, rate, stages=None, **_):
    return MmsMergeUnit(record, rate, network_stages=stages)


def _flims(record, *, rate, stages=None, **_):
    return FlimsMergeUnit(record, rate, network_stages=stages)


def _tree(record, *, rate, leaves=16, leaf_depth=DEFAULT_LEAF_DEPTH, **_):
    return MergeTree(record, rate, leaves, leaf_depth=leaf_depth)


def _reuse(record, *, rate, leaves=16, trees=4, leaf_depth=DEFAULT_LEAF_DEPTH, **_):
    return ReuseSwitch(record, trees, rate, leaves, leaf_depth=leaf_depth)


def _axi_params(data_width=512, leaves=1, **_):
    return AxiParams(data_width=data_width, id_width=max(1, (leaves - 1).bit_length()))


def _reader(record, *, leaves=16, data_width=512, burst_bytes=1024, outstanding=4, **_):
    return AxiReadEngine(_axi_params(data_width, leaves), leaves, burst_bytes=burst_bytes,
                         max_outstanding=outstanding)


def _writer(record, *, ports=1, slots=1, data_width=512, burst_bytes=4096, batch_bytes=4096,
            outstanding=4, **_):
    return AxiWriteEngine(_axi_params(data_width), ports, slots=slots, burst_bytes=burst_bytes,
                          batch_bytes=batch_bytes, max_outstanding=outstanding)


UNIT_KINDS = {
    "cas": (_cas, "compare-swap cell (combinational): a, b -> first, second"),
    "bitonic": (_bitonic, "bitonic merge of two sorted bundles: streams a, b -> o"),
    "mms": (_mms, "MMS streaming merge unit: run streams a, b -> o"),
    "flims": (_flims, "FLiMS streaming merge unit (MMS's ports and contract): a, b -> o"),
    "tree": (_tree, "merge tree (p, l): leaf streams i[0..l-1] -> root o"),
    "reuse": (_reuse, "trees plus phase-2 units: leaves i[...], mode -> o[0..r-1] or wide"),
    "reader": (_reader, "AXI4 read engine: region commands cmd -> axi master, beats leaf[...]"),
    "writer": (_writer, "AXI4 write engine: job cmd, beats i -> axi[0..ports-1] masters"),
}


def unit_parameters(kind):
    """The parameters ``kind`` takes besides the record's widths (``rate``, ``leaves``, ...)."""
    factory, _ = UNIT_KINDS[kind]
    return [name for name, parameter in inspect.signature(factory).parameters.items()
            if parameter.kind == parameter.KEYWORD_ONLY]


def build_unit(kind, *, key_bits=32, value_bits=32, **params):
    """Return the component for ``kind``.

    ``params`` are those of the kind's factory (``rate``, ``stages``, ``descending``,
    ``leaves``, ``trees``, ``leaf_depth``, ``data_width``, ``burst_bytes``, ``batch_bytes``,
    ``outstanding``, ``ports``, ``slots``); ones a kind does not use are ignored.
    """
    if kind not in UNIT_KINDS:
        raise ValueError(f"kind must be one of {', '.join(UNIT_KINDS)}, not {kind!r}")
    record = RecordLayout(key_bits, value_bits)
    factory, _ = UNIT_KINDS[kind]
    if params.get("rate") is None:
        params["rate"] = 4
    return factory(record, **{k: v for k, v in params.items() if v is not None})


def emit_verilog(component, name):
    """Return the Verilog of ``component`` with top-level module ``name``, each distinct block
    inside it one module named ``name_...`` (:func:`~.hierarchy.hierarchical_verilog`,
    which runs the Yosys that ships with Amaranth, whatever the environment says)."""
    if not name.isidentifier():
        raise ValueError(f"name must be a Verilog identifier, not {name!r}")
    return hierarchical_verilog(component, name).text
