"""The hierarchical Verilog of a design: every :class:`~topsort_hdl.hardware.block.Block` in it
emitted once per identity, as one module that each of its copies instantiates.

Amaranth builds one netlist module per instance, and the cost of building grows with the number
of instances. While :func:`hierarchical_verilog` converts a design, every block other than the
one being converted elaborates to an :class:`~amaranth.hdl.Instance` of the module that stands
for its identity (:func:`~topsort_hdl.hardware.block.substituted`), and each distinct identity
is converted once, on its own, in the same way (so blocks inside blocks are shared too).
:func:`block_census` finds the same instances without converting anything, and
:func:`block_verilog` writes one block's modules exactly as a design holding it has them.
"""

import contextlib
import gc
import re
from dataclasses import dataclass

from amaranth.back import rtlil
from amaranth.hdl import ClockSignal, Fragment, Instance, ResetSignal, Value
from amaranth.lib import wiring

from ..hardware.block import module_name, substituted
from .verilog_text import VerilogWriter, rtlil_deduplicated, verilog_modules, verilog_subset

__all__ = ["HierarchicalDesign", "hierarchical_verilog", "BlockCensus", "block_census",
           "block_verilog"]


@dataclass(frozen=True)
class HierarchicalDesign:
    """The result of :func:`hierarchical_verilog`: the Verilog ``text`` (every module once),
    the shared modules in the order they were first met (``modules``: name -> identity), the
    block each was converted from (``blocks``: name -> block) and how many instances each has
    (``instances``: name -> count)."""

    text: str
    modules: dict
    blocks: dict
    instances: dict


_PORT = re.compile(r"^  wire (?:width \d+ )?(input|output|inout) \d+ +(?:signed )?\\(\S+)$",
                   re.MULTILINE)


def _module_ports(rtlil, name):
    """The ports ``{name: direction}`` of module ``name`` in Amaranth's RTLIL ``rtlil``."""
    start = rtlil.index(f"\nmodule \\{name}\n")
    end = rtlil.index("\nend\n", start)
    return {m.group(2): m.group(1) for m in _PORT.finditer(rtlil, start, end)}


@contextlib.contextmanager
def _rare_collections():
    """Python's cycle collector run less often while modules convert. Amaranth's netlist holds
    millions of objects the collector tracks (each net value a tuple subclass, never untracked),
    and with the default thresholds full collections walking them cost as much as the
    conversion itself (u280: 54 -> 28 s CPU for the RTLIL, peak memory 387 -> 419 MB)."""
    thresholds = gc.get_threshold()
    gc.set_threshold(10_000, 100, 100)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)


class _Converter:
    def __init__(self, prefix, writer):
        self.prefix = prefix
        self.writer = writer        # takes each converted module's RTLIL
        self.current = []           # the blocks being converted, innermost last
        self.modules = {}           # identity -> (name, ports)
        self.blocks = {}            # name -> the block converted for it
        self.names = {}             # name -> identity
        self.instances = {}         # name -> count

    def shares(self, block):
        return block.block_identity is not None and not (
            self.current and self.current[-1] is block)

    def convert(self, elaboratable, name, ports=None, top=False):
        self.current.append(elaboratable)
        try:
            text = rtlil.convert(elaboratable, name=name, ports=ports, emit_src=False)
        finally:
            self.current.pop()
        if not top:     # one module of the design is its top
            text = text.replace("attribute \\top 1\n", "")
        self.writer.add(rtlil_deduplicated(text))     # each module body once
        return text

    def instance(self, block):
        identity = block.block_identity
        if identity not in self.modules:
            name = module_name(block, self.prefix)
            if self.names.setdefault(name, identity) != identity:
                raise RuntimeError(f"two blocks share the module name {name}: "
                                   f"{self.names[name]} and {identity}")
            self.modules[identity] = (name, _module_ports(self.convert(block, name), name))
            self.blocks[name] = block
        name, ports = self.modules[identity]
        self.instances[name] = self.instances.get(name, 0) + 1
        connections = {}
        if "clk" in ports:
            connections["i_clk"] = ClockSignal()
        if "rst" in ports:
            connections["i_rst"] = ResetSignal()
        for path, member, value in block.signature.flatten(block):
            port = "__".join(map(str, path))
            if port in ports:
                connections[f"{'i' if member.flow == wiring.In else 'o'}_{port}"] = value
            elif len(Value.cast(value)):    # Amaranth leaves out only zero-width ports
                raise RuntimeError(f"port {port} of {identity} is not in module {name}")
        return Instance(name, **connections)


def hierarchical_verilog(elaboratable, name, ports=None):
    """Convert ``elaboratable`` (top module ``name``, ``ports`` as for ``verilog.convert``)
    with every :class:`~topsort_hdl.hardware.block.Block` in it emitted once per identity; a
    :class:`HierarchicalDesign`."""
    writer = VerilogWriter()
    writer.warm()
    converter = _Converter(name, writer)
    try:
        with substituted(converter), _rare_collections():
            converter.convert(elaboratable, name, ports, top=True)
    except BaseException:
        writer.close()
        raise
    modules = {name: identity for identity, (name, _) in converter.modules.items()}
    return HierarchicalDesign(writer.text(), modules, converter.blocks, converter.instances)


@dataclass(frozen=True)
class BlockCensus:
    """The blocks of a design without converting it (:func:`block_census`): ``cells`` (path
    -> module name, paths joined with ``/`` as :func:`~.verilog_text.verilog_instances` gives
    them) and ``blocks`` (module name -> the block it stands for)."""

    cells: dict
    blocks: dict


class _Census:
    """A converter that only records: each block met becomes an empty instance of its module."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.current = []
        self.blocks = {}

    def shares(self, block):
        return block.block_identity is not None and not (
            self.current and self.current[-1] is block)

    def instance(self, block):
        name = module_name(block, self.prefix)
        self.blocks.setdefault(name, block)
        return Instance(name)


def block_census(elaboratable, prefix, descend=lambda block: False):
    """Every :class:`~topsort_hdl.hardware.block.Block` instance in ``elaboratable`` as
    :func:`hierarchical_verilog` with top ``prefix`` would emit it, found by elaborating the
    design with blocks left as empty instances: a second or two where converting takes a
    minute. Blocks for which ``descend`` is true are elaborated too, so that the blocks inside
    them are counted (with their paths); the others are leaves. A :class:`BlockCensus`."""
    census = _Census(prefix)
    cells = {}

    def walk(fragment, path):
        for index, (child, name, _) in enumerate(fragment.subfragments):
            here = f"{path}{name if name is not None else f'U${index}'}"
            if isinstance(child, Instance):
                if child.type in census.blocks:
                    cells[here] = child.type
                    block = census.blocks[child.type]
                    if descend(block):
                        census.current.append(block)
                        try:
                            walk(Fragment.get(block, None), f"{here}/")
                        finally:
                            census.current.pop()
            else:
                walk(child, f"{here}/")

    with substituted(census):
        walk(Fragment.get(elaboratable, None), "")
    return BlockCensus(cells, dict(census.blocks))


def block_verilog(block, prefix):
    """The Verilog of ``block`` and every module under it, exactly as
    :func:`hierarchical_verilog` with top ``prefix`` writes them into a design that holds it
    (:func:`~.verilog_text.verilog_subset` of that design at its module)."""
    writer = VerilogWriter()
    converter = _Converter(prefix, writer)
    try:
        with substituted(converter), _rare_collections():
            converter.instance(block)
    except BaseException:
        writer.close()
        raise
    return verilog_subset(verilog_modules(writer.text()), module_name(block, prefix))
