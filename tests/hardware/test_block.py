"""Blocks (topsort_hdl/hardware/block.py) and the hierarchical Verilog writer
(topsort_hdl/targets/hierarchy.py, verilog_text.py)."""

import gc
import re
import warnings

import pytest
from amaranth.hdl import Module, Signal, UnusedElaboratable, Value
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from topsort_hdl.core.config import config_from
from topsort_hdl.hardware.block import module_name
from topsort_hdl.hardware.merge import MmsMergeUnit, SelectMergeUnit
from topsort_hdl.hardware.merge.cas import CompareSwap, record_key
from topsort_hdl.hardware.records import RecordLayout, tree_record
from topsort_hdl.hardware.tree import MergeTree
from topsort_hdl.targets import verilog_text
from topsort_hdl.targets.hierarchy import hierarchical_verilog
from topsort_hdl.targets.kernel_verilog import kernel_verilog
from topsort_hdl.targets.verilog_text import verilog_instances

RECORD = RecordLayout(32, 32)


def modules_of(text):
    return re.findall(r"^module (\S+?) ?\(", text, re.MULTILINE)


def names(*builds):
    """``(identity, module name)`` of each block ``build()`` makes; the blocks are collected
    here, without the "never used" warning they would give during a later test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        out = []
        for build in builds:
            block = build()
            out.append((block.block_identity,
                        None if block.block_identity is None else module_name(block, "t")))
            del block
        gc.collect()
    return out


PADDED = tree_record(RECORD)


def test_identity_is_the_class_and_the_bound_arguments():
    (one, name), *same = names(lambda: MmsMergeUnit(PADDED, 4, input_depth=8),
                               lambda: MmsMergeUnit(PADDED, rate=4, input_depth=8))
    assert [identity for identity, _ in same] == [one]
    assert re.fullmatch(r"t_mms_e4_k33_v32_[0-9a-f]{6}", name)
    # Defaults are filled in: the same hardware is the same block however it was asked for.
    default, explicit = names(lambda: MmsMergeUnit(PADDED, 4),
                              lambda: MmsMergeUnit(PADDED, 4, input_depth=4, output_depth=None))
    assert default == explicit
    others = names(lambda: MmsMergeUnit(PADDED, 8, input_depth=8),
                   lambda: MmsMergeUnit(PADDED, 4),
                   lambda: MmsMergeUnit(RecordLayout(40, 24), 4, input_depth=8))
    assert len({one, *(identity for identity, _ in others)}) == 4
    assert len({name, *(module for _, module in others)}) == 4
    ((select, _),) = names(lambda: SelectMergeUnit(PADDED))
    assert select.startswith(
        "topsort_hdl.hardware.merge.select_unit.SelectMergeUnit(record=RecordLayout("
                             "key_bits=33, value_bits=32), input_depth=4)")


def test_an_argument_without_a_stable_repr_makes_no_identity():
    # A named function is known by its name; a lambda or a local function could be any code.
    ((named, _), (anonymous, _)) = names(
        lambda: CompareSwap(RECORD, order_key=record_key),
        lambda: CompareSwap(RECORD, order_key=lambda r: r.value))
    assert "order_key=topsort_hdl.hardware.merge.cas.record_key" in named
    assert anonymous is None


def two_trees():
    """Three trees, two of them alike, with their ports as the top's (the writer drops logic
    that no port sees)."""
    m = Module()
    ports = []
    for name, leaf_depth in (("left", 4), ("right", 4), ("other", 8)):
        tree = m.submodules[name] = MergeTree(RECORD, 2, 4, leaf_depth=leaf_depth)
        ports += [Value.cast(value) for _, _, value in tree.signature.flatten(tree)]
    return hierarchical_verilog(m, "top", ports=ports)


@pytest.mark.parametrize("batching", ["one_at_a_time", "all_at_the_end"])
def test_the_text_does_not_depend_on_which_modules_yosys_writes_together(monkeypatch,
                                                                        batching):
    # Yosys writes modules in the background while the next ones convert; the batches depend
    # on timing, the text must not (caches and golden sizes key on it).
    usual = two_trees().text

    def add(writer, rtlil_text):
        writer._pending.append(rtlil_text)
        if batching == "one_at_a_time":
            writer._submit()
            writer._running[-1].result()

    monkeypatch.setattr(verilog_text.VerilogWriter, "add", add)
    forced = two_trees().text
    assert forced == usual
    assert len(re.findall(r"^endmodule$", usual, re.MULTILINE)) == len(modules_of(usual)) > 3
    assert "dump_module$1 " in usual


def test_each_distinct_block_is_emitted_once_and_instantiated_where_used():
    design = two_trees()
    names = modules_of(design.text)
    assert len(names) == len(set(names))
    trees = [name for name in design.modules if "_tree_p2_l4_" in name]
    assert sorted(design.instances[name] for name in trees) == [1, 2]
    # Units are shared across the trees: 2 rate-1 units and 1 rate-2 unit in each of three.
    (select,) = [name for name in design.modules if "_select_" in name]
    assert design.instances[select] == 2 * len(trees)
    (mms,) = [name for name in design.modules if "_mms_e2_" in name]
    assert design.instances[mms] == len(trees)
    paths = verilog_instances(design.text, "top")
    assert paths["left"] == paths["right"] != paths["other"]
    assert paths["left/l0u0"] == paths["other/l0u0"] == mms
    assert paths["right/l1u1"] == select


def test_output_is_deterministic():
    first = two_trees().text
    assert two_trees().text == first


@pytest.mark.parametrize("name", ["tiny"])
def test_kernel_modules_are_distinct_and_every_block_is_shared(name):
    design, kernel = kernel_verilog(config_from(name), "topsort")
    names = modules_of(design.text)
    assert len(names) == len(set(names))
    paths = verilog_instances(design.text, "topsort")
    config = kernel.config
    feeders = [paths[f"kernel/datapath/lane{t}/feeder{j}"] for t in range(config.trees)
               for j in range(config.leaves)]
    assert len(set(feeders)) == 1
    # (each lane module, a phase-1 one and a reused one, instantiates a feeder per leaf)
    lanes = {paths[f"kernel/datapath/lane{t}"] for t in range(config.trees)}
    assert len(lanes) == 2
    assert design.instances[feeders[0]] == len(lanes) * config.leaves


class _Stored(wiring.Component):
    """A struct port into two memories, one all zeros and one with contents."""

    def __init__(self):
        super().__init__({"i": In(data.StructLayout({"key": 8, "value": 8})),
                          "addr": In(2), "zero": Out(8), "table": Out(8)})

    def elaborate(self, platform):
        m = Module()
        held = Signal.like(self.i, name="held")      # a struct signal of the module's own
        m.d.sync += held.eq(self.i)
        zero = m.submodules.zero = Memory(shape=8, depth=4, init=[])
        table = m.submodules.table = Memory(shape=8, depth=4, init=[5, 0, 7, 0])
        for memory, out in ((zero, self.zero), (table, self.table)):
            write = memory.write_port()
            read = memory.read_port(domain="comb")
            m.d.comb += [write.addr.eq(held.key), write.data.eq(held.value),
                         write.en.eq(1), read.addr.eq(self.addr), out.eq(read.data)]
        return m


def test_the_writer_drops_field_aliases_and_writes_zero_contents_as_a_loop():
    top = _Stored()
    text = hierarchical_verilog(top, "top", ports=[
        Value.cast(value) for _, _, value in top.signature.flatten(top)]).text
    assert "held" in text and "held." not in text     # the signal stays, its fields' aliases go
    assert re.search(r"for \(\\\$word  = 0; \\\$word  < 4; .*\n +\\?zero\S* ?\[\\\$word \] = 8'h0;",
                     text)
    # Contents that are not all zero keep their line per word.
    assert all(re.search(rf"\\?table\S* ?\[{word}\] = 8'h{value:02x};", text)
               for word, value in enumerate([5, 0, 7, 0]))
