"""Reading and checking the board files: one TOML file per board in ``platforms/`` at the top
of the repository (installed as the package data of ``topsort_hdl.platform_data``).

A file names its ``kind``: ``hbm`` (the memory a kernel configuration runs on: channels, dies,
resources, Vitis shells, clock; read into a :class:`HbmBoard`) or ``demo-board`` (a board the
on-chip demo builds for; read into a :class:`DemoBoard`); ``order`` places it in the lists
(lower first, files without one last, by file name). Every number of an ``hbm`` file
carries its source: ``field = { value = 32, source = "DS963" }``, or a ``source`` key in a
table of resources, naming an entry of the file's ``[sources]`` table (the full citation).
Anything else is refused with a :class:`ValueError` naming the file, the field, the value and
what is allowed.
"""

import tomllib
from importlib import resources
from pathlib import Path

from .board import RESOURCE_KINDS, DemoBoard, HbmBoard, Resources, VitisShell

__all__ = ["load_boards", "board_files", "KINDS", "BUFFER_RAMS"]

KINDS = ("hbm", "demo-board")
# Vivado's ram_style values ("": the tool's choice).
BUFFER_RAMS = ("", "ultra", "block", "distributed", "registers")


class _File:
    """One board file being read: its path (for messages) and its ``[sources]``."""

    def __init__(self, path, data):
        self.path = path
        self.data = data
        self.cited = set()
        self.sources = self.table("sources", data.get("sources", {}))
        for key, text in self.sources.items():
            self.text(f"sources.{key}", text)

    def fail(self, field, problem):
        raise ValueError(f"{self.path}: {field}: {problem}")

    def check_type(self, field, value, types, what):
        # bool is an int to Python, never to a board file.
        if isinstance(value, bool) or not isinstance(value, types):
            self.fail(field, f"must be {what}, not {value!r} ({type(value).__name__})")
        return value

    def table(self, field, value):
        return self.check_type(field, value, dict, "a table")

    def text(self, field, value):
        return self.check_type(field, value, str, "a string")

    def count(self, field, value, low=1):
        self.check_type(field, value, int, "an integer")
        if value < low:
            self.fail(field, f"must be {'positive' if low else 'at least 0'}, not {value}")
        return value

    def number(self, field, value, low=1):
        self.check_type(field, value, (int, float), "a number")
        if value < 0 or (low and value == 0):
            self.fail(field, f"must be {'positive' if low else 'at least 0'}, not {value}")
        return value

    def cite(self, field, source):
        self.text(f"{field}.source", source)
        if source not in self.sources:
            known = ", ".join(self.sources) or "none: the file has no [sources] table"
            self.fail(f"{field}.source", f"{source!r} is not a key of [sources] ({known})")
        self.cited.add(source)

    def sourced(self, field, value, check, **limits):
        """A number with its source: ``{ value = ..., source = "KEY" }``."""
        if not isinstance(value, dict):
            self.fail(field, f"a number needs its source: write {{ value = {value!r}, "
                             f'source = "KEY" }} with KEY a key of [sources]')
        self.known_keys(field, value, ("value", "source"))
        for key in ("value", "source"):
            if key not in value:
                self.fail(field, f"missing {key!r} (write {{ value = ..., source = \"KEY\" }})")
        self.cite(field, value["source"])
        return check(self, f"{field}.value", value["value"], **limits)

    def known_keys(self, field, table, allowed, what="field"):
        for key in table:
            if key not in allowed:
                prefix = f"{field}: " if field else ""
                raise ValueError(f"{self.path}: {prefix}unknown {what} {key!r} = "
                                 f"{table[key]!r}; allowed: {', '.join(allowed)}")

    def resources(self, field, value):
        """A table of resources with its ``source``: ``lut``, ``ff``, ``bram`` (RAMB36, a
        RAMB18 is 0.5), ``uram``, ``dsp``; a kind left out is 0."""
        self.table(field, value)
        self.known_keys(field, value, RESOURCE_KINDS + ("source",), "resource kind")
        if "source" not in value:
            self.fail(field, "missing 'source' (a key of [sources] for the table's numbers)")
        self.cite(field, value["source"])
        amounts = {}
        for kind in RESOURCE_KINDS:
            if kind in value:
                check = self.number if kind == "bram" else self.count
                amounts[kind] = check(f"{field}.{kind}", value[kind], low=0)
        return Resources(**amounts)

    def array(self, field, value):
        return self.check_type(field, value, list, "an array")

    def vitis(self, field, value, dies):
        self.table(field, value)
        self.known_keys(field, value, ("name", "region", "pblocks"))
        for key in ("name", "region", "pblocks"):
            if key not in value:
                self.fail(field, f"missing required field {key!r}")
        pblocks = tuple(self.text(f"{field}.pblocks[{index}]", pblock)
                        for index, pblock in enumerate(self.array(f"{field}.pblocks",
                                                                  value["pblocks"])))
        if len(pblocks) != dies:
            self.fail(f"{field}.pblocks", f"must name one pblock per SLR ({dies} in slrs), "
                                          f"not {len(pblocks)}: {list(pblocks)}")
        return VitisShell(self.text(f"{field}.name", value["name"]),
                             self.text(f"{field}.region", value["region"]), pblocks)


def _field(name, check, required=False, sourced=False, **limits):
    return name, (check, required, sourced, limits)


# What each kind of file holds: field -> (check, required, sourced, limits). `name`, `kind`,
# `description` and `order` (where the board is listed: lower first) are every kind's.
_COMMON = dict([
    _field("name", _File.text, required=True),
    _field("kind", _File.text, required=True),
    _field("description", _File.text, required=True),
    _field("order", _File.count, low=0),
])
_FIELDS = {
    "hbm": _COMMON | dict([
        _field("part", _File.text),
        _field("buffer_ram", _File.text),
        _field("channels", _File.count, required=True, sourced=True),
        _field("channel_bytes", _File.count, required=True, sourced=True),
        _field("channel_gbps", _File.number, required=True, sourced=True),
        _field("channel_gbps_measured", _File.number, sourced=True),
        _field("channel_group", _File.count, sourced=True),
        _field("lateral_fraction", _File.number, sourced=True),
        _field("clock_hz", _File.count, required=True, sourced=True),
        _field("hbm_slr", _File.count, sourced=True, low=0),
        _field("sll_per_crossing", _File.count, sourced=True, low=0),
        _field("part_resources", _File.resources),
        _field("slrs", _File.array),
        _field("vitis", _File.array),
        _field("sources", _File.table),
    ]),
    "demo-board": _COMMON | dict([
        _field("module", _File.text, required=True),
        _field("amaranth_platform", _File.text, required=True),
        _field("program", _File.text, required=True),
        _field("sources", _File.table),
    ]),
}


def _read(path, text):
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
    file = _File(path, data)
    kind = data.get("kind")
    if kind not in KINDS:
        file.fail("kind", f"must be one of {', '.join(KINDS)}, not {kind!r}"
                  if "kind" in data else f"missing required field (one of {', '.join(KINDS)})")
    fields = _FIELDS[kind]
    file.known_keys("", data, tuple(fields))
    values = {}
    for name, (check, required, sourced, limits) in fields.items():
        if name not in data:
            if required:
                file.fail(name, "missing required field" +
                          (" (a number with its source: { value = ..., source = \"KEY\" })"
                           if sourced else ""))
            continue
        if sourced:
            values[name] = file.sourced(name, data[name], check, **limits)
        else:
            values[name] = check(file, name, data[name], **limits)
    order = values.pop("order", None)
    values.pop("kind")
    values.pop("sources", None)
    if kind == "demo-board":
        if "{bitstream}" not in values["program"]:
            file.fail("program", f"must have a {{bitstream}} field, not {values['program']!r}")
        board = DemoBoard(**values)
    else:
        slrs = tuple(file.resources(f"slrs[{index}]", slr)
                     for index, slr in enumerate(values.get("slrs", ())))
        values["slrs"] = slrs
        values["vitis"] = tuple(file.vitis(f"vitis[{index}]", shell, len(slrs))
                                for index, shell in enumerate(values.get("vitis", ())))
        if slrs and values.get("hbm_slr", 0) >= len(slrs):
            file.fail("hbm_slr.value", f"must be an SLR of slrs (0..{len(slrs) - 1}), "
                                       f"not {values['hbm_slr']}")
        if values.get("buffer_ram", "") not in BUFFER_RAMS:
            file.fail("buffer_ram", f"must be one of {', '.join(map(repr, BUFFER_RAMS))}, "
                                    f"not {values['buffer_ram']!r}")
        board = HbmBoard(**values)
    unused = [key for key in file.sources if key not in file.cited]
    if unused:
        file.fail("sources", f"{', '.join(unused)} cited by no field (remove, or cite)")
    return board, order


def board_files(directory=None):
    """The board files (``*.toml``) of ``directory`` (default: the installed ``platforms/``),
    by name."""
    if directory is None:
        try:
            directory = resources.files("topsort_hdl.platform_data")
        except ModuleNotFoundError:
            raise RuntimeError("the board files (platforms/) are not installed with topsort_hdl: "
                               "reinstall it (`make setup`, or pip install -e .)") from None
    else:
        directory = Path(directory)
    return sorted((entry for entry in directory.iterdir()
                   if entry.name.endswith(".toml") and entry.is_file()),
                  key=lambda entry: entry.name)


def load_boards(directory=None):
    """Every board of ``directory`` (default: the installed ``platforms/``): a dictionary from
    name to :class:`HbmBoard` or :class:`DemoBoard`, in ``order`` (boards without one last),
    then by file name. A bad file raises a :class:`ValueError` naming the file and the field."""
    boards, origin = [], {}
    for entry in board_files(directory):
        board, order = _read(entry, entry.read_text(encoding="utf-8"))
        if board.name in origin:
            raise ValueError(f"{entry}: name: {board.name!r} is already the name of the board "
                             f"in {origin[board.name]}; board names must be unique")
        origin[board.name] = entry
        boards.append((order is None, order or 0, board))
    boards.sort(key=lambda item: item[:2])
    return {board.name: board for *_, board in boards}
