"""Logic depth: the longest path of a synthesised UltraScale+ netlist, in LUT levels and in
cells, counted on the Yosys JSON netlist of a ``synth_xilinx -family xcup`` run.

A timing proxy before Vivado: a path's delay on UltraScale+ is mostly its LUT levels and the
routes between them, so the deepest path says which block would limit the clock, and a change
that adds a level shows up as a figure. (Yosys' ``ltp`` is no use here: after ``synth_xilinx``
it runs straight through the flip-flops.)

What a path is, as in Vivado's timing reports:

- **start points**: the outputs of sequential cells (flip-flops and latches ``FD*``/``LD*``,
  distributed RAM contents, shift registers, block RAM, UltraRAM, DSPs, the last two taken as
  registered, as Yosys maps them with their registers), the block's input ports (the blocks are
  synthesised without registers on their ports, so a path from an input port counts like a
  path from a register) and constants;
- **end points**: the data, enable, reset and write-address inputs of sequential cells (not
  their clocks) and the block's output ports;
- **levels**: every combinational cell on the path counts one cell level; LUTs (``LUT1`` ..
  ``LUT6``, ``LUT6_2``, ``INV``, which Vivado places as a ``LUT1``) also count one LUT level
  each; ``MUXF7``/``MUXF8``/``MUXF9`` and ``CARRY4``/``CARRY8`` count a cell level and no LUT
  level (a chain of n ``CARRY4`` is n cell levels, 0 LUT levels); ``BUFG`` counts nothing.
- **distributed RAM and dynamic shift registers read asynchronously**: the read address goes
  through the RAM to its data output within the cycle, so that arc is combinational and counts
  one LUT level and one cell level (as Vivado times a ``RAMD32``/``RAMD64``): ``read pointer
  register -> LUTRAM -> LUT -> register`` is 2 LUT levels. The RAM's contents are also a start
  point at that output, at level 0: a path from data written earlier, the "FIFO data -> FIFO
  read" kind, is ``LUTRAM -> LUT -> register``, 1 LUT level. The write port (data, write
  address, write enable) is an end point; a read-only address is not (its path goes on through
  the RAM). A shift register's cascade output (``Q15``, ``Q31``) and the output of a shift
  register with a constant address are start points only. (Counting the LUTRAM as a start
  point only, no level, would shorten just the paths through a LUTRAM: a block's figure
  changes only if its deepest path goes through one, which the path's cells show.)

Carry cells are modelled bit by bit (``O[i]`` and ``CO[i]`` depend on ``S``/``DI`` up to bit i
and the carry in), ``LUT6_2``'s ``O5`` on ``I0`` .. ``I4`` only; every other combinational
output depends on all its cell's inputs. Cell types the counter does not know raise
:class:`LevelsError`, so that a new primitive is classified rather than guessed.
"""

import re
from dataclasses import asdict, dataclass

__all__ = ["Levels", "PathEnds", "LevelsError", "netlist_levels", "COMBINATIONAL",
           "SEQUENTIAL"]


class LevelsError(RuntimeError):
    pass


# Combinational cell type -> (LUT levels, cell levels) it adds to a path.
COMBINATIONAL = {
    **{lut: (1, 1) for lut in ("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "LUT6_2",
                               "INV")},
    **{mux: (0, 1) for mux in ("MUXF7", "MUXF8", "MUXF9")},
    "CARRY4": (0, 1), "CARRY8": (0, 1),
    "BUFG": (0, 0),
}
# Sequential cells (start and end points), by type name prefix. Distributed RAMs (RAM16X1S ..
# RAM512X1S, RAM16X1D .. RAM256X1D, RAM32M, RAM64M, RAM32M16, RAM64M8) and shift registers also
# have the asynchronous read arcs of _read_arcs.
SEQUENTIAL = ("FD", "LD", "RAM", "SRL", "URAM", "DSP48", "FIFO")
IGNORED = ("VCC", "GND", "$scopeinfo")
CLOCK = re.compile(r"C$|\w*CLK\w*$")      # C, CLK, WCLK, RDCLK, CLKARDCLK, ...
LUTRAM = re.compile(r"RAM\d+(X1[SD]|M|M16|M8)$")
SRL = re.compile(r"SRLC?(16|32)E$")


@dataclass(frozen=True)
class PathEnds:
    """A deepest path: its start and end point (a register by the net it drives, a RAM or
    another named cell by its name, a port by its name) and the types of its cells."""

    start: str
    end: str
    cells: tuple

    def __str__(self):
        return f"{self.start} -> {self.end}"

    def summary(self):
        """The path's cell types, a run of one type as ``TYPE*n``: ``LUT2*2 CARRY4 LUT5``."""
        runs = []
        for kind in self.cells:
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1])
        return " ".join(kind if n == 1 else f"{kind}*{n}" for kind, n in runs)


@dataclass(frozen=True)
class Levels:
    """A netlist's deepest path in LUT levels (``lut``, and that path: ``lut_path``) and in
    cell levels (``cells``, ``cell_path``; carries and wide muxes included)."""

    lut: int
    cells: int
    lut_path: PathEnds
    cell_path: PathEnds

    def as_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, saved):
        def path(p):
            return PathEnds(p["start"], p["end"], tuple(p["cells"]))
        return cls(saved["lut"], saved["cells"], path(saved["lut_path"]),
                   path(saved["cell_path"]))


def _bits(connection):
    """The net bits (ints) of a connection; constants ("0", "1", "x", "z") are dropped."""
    return [bit for bit in connection if isinstance(bit, int)]


def _carry_arcs(connections, width):
    """``(output port, bit) -> input bits`` of a CARRY4/CARRY8."""
    s, di = connections.get("S", []), connections.get("DI", [])
    carry_in = [*connections.get("CI", []), *connections.get("CYINIT", []),
                *connections.get("CI_TOP", [])]
    arcs = {}
    for i in range(width):
        arcs[("O", i)] = _bits(s[:i + 1] + di[:i] + carry_in)
        arcs[("CO", i)] = _bits(s[:i + 1] + di[:i + 1] + carry_in)
    return arcs


def _read_arcs(kind, connections):
    """``(output port, bit) -> read address bits`` of a distributed RAM or shift register's
    asynchronous read, and the set of its input ports that are read addresses only (not end
    points)."""
    arcs, read_only = {}, set()

    def address(prefix):
        # One bus (A, ADDRA, DPRA) or one port per bit (A0 .. A8, DPRA0 ..).
        names = [p for p in connections if p == prefix or re.fullmatch(prefix + r"\d+", p)]
        return names, [bit for p in sorted(names, key=lambda p: (len(p), p))
                       for bit in connections[p]]

    def add(output, ports_bits):
        for i, _ in enumerate(connections.get(output, [])):
            arcs[(output, i)] = _bits(ports_bits)

    if SRL.match(kind):
        names, bits = address("A")
        read_only.update(names)
        add("Q", bits)
    elif kind.endswith("X1S"):
        add("O", address("A")[1])
    elif kind.endswith("X1D"):
        add("SPO", address("A")[1])
        names, bits = address("DPRA")
        read_only.update(names)
        add("DPO", bits)
    else:       # RAM32M, RAM64M, RAM32M16, RAM64M8: port D (or H) is also the write port
        write = "D" if kind in ("RAM32M", "RAM64M") else "H"
        for output in connections:
            if output.startswith("DO"):
                port = output[2:]
                add(output, connections.get(f"ADDR{port}", []))
                if port != write:
                    read_only.add(f"ADDR{port}")
    return arcs, read_only


def _net_names(module):
    """Net bit -> the name a person finds in the design (public names first, then shorter)."""
    names = {}
    for name, net in sorted(module["netnames"].items(),
                            key=lambda item: (item[1].get("hide_name", 0), "$" in item[0],
                                              len(item[0]), item[0])):
        bits = net["bits"]
        offset = net.get("offset", 0)
        name = name.removeprefix("\\")       # a public name that starts with $: \$41
        for i, bit in enumerate(bits):
            if isinstance(bit, int) and bit not in names:
                index = offset + (len(bits) - 1 - i if net.get("upto") else i)
                names[bit] = name if len(bits) == 1 else f"{name}[{index}]"
    return names


def netlist_levels(netlist, top):
    """The :class:`Levels` of module ``top`` of a Yosys JSON netlist (a ``dict``, as
    ``write_json`` writes it after ``synth_xilinx -flatten``)."""
    module = netlist["modules"][top]
    names = _net_names(module)
    # Driven bit -> (LUT levels, cell levels) added, input bits, cell name, cell type.
    arcs = {}
    sources = {}            # start point bit -> its description
    ends = []               # (end point bit, description)

    def cell_label(name, cell, outputs):
        if not cell.get("hide_name"):
            return name
        for port in outputs:
            for bit in _bits(cell["connections"][port]):
                if bit in names:
                    return names[bit]
        return name

    for name, cell in module["cells"].items():
        kind = cell["type"]
        connections = cell["connections"]
        directions = cell.get("port_directions", {})
        outputs = [p for p, d in directions.items() if d == "output"]
        inputs = [p for p, d in directions.items() if d == "input"]
        if kind in IGNORED:
            continue
        if kind in COMBINATIONAL:
            weight = COMBINATIONAL[kind]
            if kind.startswith("CARRY"):
                cell_arcs = _carry_arcs(connections, 8 if kind == "CARRY8" else 4)
            else:
                every = _bits([bit for p in inputs if not (kind == "LUT6_2" and p == "I5")
                               for bit in connections[p]])
                six = _bits(every + connections.get("I5", []))
                cell_arcs = {(p, i): (six if p == "O6" else every)
                             for p in outputs for i in range(len(connections[p]))}
            for (port, i), deps in cell_arcs.items():
                bit = connections[port][i]
                if isinstance(bit, int):
                    arcs[bit] = (weight, deps, name, kind)
            continue
        if not kind.startswith(SEQUENTIAL):
            raise LevelsError(f"cell {name!r} of type {kind!r}: the level counter does not "
                              f"know whether it is combinational or sequential")
        read, read_only = ({}, set())
        if LUTRAM.match(kind) or SRL.match(kind):
            read, read_only = _read_arcs(kind, connections)
        label = cell_label(name, cell, outputs)
        for port in outputs:
            for i, bit in enumerate(connections[port]):
                if not isinstance(bit, int):
                    continue
                sources[bit] = f"{label} ({kind} {port})"
                if read.get((port, i)):
                    arcs[bit] = ((1, 1), read[(port, i)], name, kind)
        for port in inputs:
            if CLOCK.match(port) or port in read_only:
                continue
            for bit in _bits(connections[port]):
                ends.append((bit, f"{label} ({kind} {port})"))
    for port, info in module["ports"].items():
        for bit in _bits(info["bits"]):
            label = names.get(bit, port)
            if info["direction"] == "input":
                sources.setdefault(bit, f"{label} (input)")
            else:
                ends.append((bit, f"{label} (output)"))
    return _longest(arcs, sources, ends)


def _longest(arcs, sources, ends):
    """The deepest end point by LUT levels then cells, and by cells then LUT levels."""
    # Per bit: (best by LUT levels, best by cells), each (key, predecessor bit or None).
    best = {}
    for root, _ in ends:
        stack = [(root, False)]
        on_stack = set()
        while stack:
            bit, expanded = stack.pop()
            if bit in best:
                continue
            arc = arcs.get(bit)
            if arc is None:
                best[bit] = (((0, 0), None), ((0, 0), None))
                continue
            (lut, cells), deps, _, _ = arc
            if not expanded:
                if bit in on_stack:
                    raise LevelsError(f"combinational loop through net bit {bit}")
                on_stack.add(bit)
                stack.append((bit, True))
                stack.extend((dep, False) for dep in deps if dep not in best)
                continue
            for dep in deps:
                if dep not in best:
                    raise LevelsError(f"combinational loop through net bit {dep}")
            on_stack.discard(bit)
            by_lut = max((((best[d][0][0][0] + lut, best[d][0][0][1] + cells), d)
                          for d in deps), default=((lut, cells), None))
            by_cells = max((((best[d][1][0][0] + cells, best[d][1][0][1] + lut), d)
                            for d in deps), default=((cells, lut), None))
            if bit in sources:      # a RAM's contents: a start point at level 0 too
                by_lut = max(by_lut, ((0, 0), None))
                by_cells = max(by_cells, ((0, 0), None))
            best[bit] = (by_lut, by_cells)
    if not ends:
        empty = PathEnds("", "", ())
        return Levels(0, 0, empty, empty)
    # Ties go to the first end point in a sorted order, so the answer does not depend on the
    # order of the netlist's cells.
    ordered = sorted(ends, key=lambda end: end[1])
    lut_end = max(ordered, key=lambda end: best[end[0]][0][0])
    cell_end = max(ordered, key=lambda end: best[end[0]][1][0])

    def path(end, which):
        bit, label = end
        kinds = []
        while True:
            (_, previous) = best[bit][which]
            arc = arcs.get(bit)
            if arc is None or (previous is None and best[bit][which][0] == (0, 0)):
                start = sources.get(bit, f"net bit {bit}" if isinstance(bit, int) else bit)
                return PathEnds(start, label, tuple(reversed(kinds)))
            kinds.append(arc[3])
            if previous is None:        # a cell whose inputs are all constants
                return PathEnds(f"constant ({arc[2]})", label, tuple(reversed(kinds)))
            bit = previous

    lut, _ = best[lut_end[0]][0][0]
    cells, _ = best[cell_end[0]][1][0]
    return Levels(lut, cells, path(lut_end, 0), path(cell_end, 1))
