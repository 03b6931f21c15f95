"""Golden figures: the one file format and the one policy of ``make bench`` and ``make qor``.

A golden file (``benchmarks/golden/*.json``) is ``{"about": text, "figures": {name: entry}}``.
An entry is ``{"value": v, "band": b, "better": d}``:

- ``band`` is how far a measurement may move from ``value`` and still match: a number in the
  figure's own unit (``0.005`` records/cycle), or a percentage of ``value`` (``"1%"``);
- ``better`` is ``"lower"`` or ``"higher"`` (which way is an improvement) or ``"exact"`` (a
  parameter of the measurement, such as a workload's record count: no way is better).

An entry of ``{"value": v}`` alone is recorded next to the figures and never compared (a
benchmark's wall-clock seconds).

The policy, the same for every file: a measurement inside its band matches. Outside it, it
fails whichever way it moved: worse is a REGRESSION; better is BETTER than golden, and the file
must be refreshed (``make bench-update``, ``make qor-update``) in a commit that says why, so
that the golden figures stay tight and a later regression cannot hide in the gain. A figure
with no golden entry is a note, not a failure.

:data:`RULES` gives each kind of figure its band and direction when it first enters a file;
an entry already in a file keeps its own.

``python -m topsort_hdl.analysis.regression convert FILE...`` rewrites golden files of the two
earlier formats (bench lists of rows; QoR entries with a relative ``tolerance``) in this one,
keeping every value and band; files already in it are left as they are. ``python -m
topsort_hdl.analysis.regression apply GOLDEN MEASURED`` takes measured figures (``name ->
value``, as ``topsort-hdl qor --json`` writes them) into a golden file as ``--update`` would.
"""

import fnmatch
import json
import math
import sys
from pathlib import Path

__all__ = ["RULES", "BENCH_KEYS", "BENCH_REFRESH", "QOR_REFRESH", "QOR_ABOUT", "GoldenError",
           "rule", "band_width", "check", "update", "load", "save", "parse", "bench_name",
           "bench_figures", "bench_about", "convert"]

DIRECTIONS = ("lower", "higher", "exact")
BENCH_REFRESH = "make bench-update"     # what rewrites each kind of golden file
QOR_REFRESH = "make qor-update"
QOR_ABOUT = f"QoR golden figures: refresh with `{QOR_REFRESH}` in a commit that says why"
RECORDED = None      # a rule's band for values recorded next to the figures, never compared

# The rows of each benchmark, named by these fields of a row (``topsort-hdl bench``).
BENCH_KEYS = {"mms": ("rate",), "flims": ("rate",), "tree": ("shape", "workload"),
              "axi": ("engine", "case")}

# Kind of figure (a pattern on its name) -> (band, better); the first pattern that matches.
RULES = [
    # QoR (``make qor``)
    ("resources.*", "1%", "lower"),           # Yosys is deterministic for one version
    ("levels.*", 0, "lower"),                 # an integer count of LUTs or cells: any change
    # The Yosys flow a block's figures came from: figures of two flows are not comparable.
    ("synthesis_flow.*", 0, "exact"),
    ("cycles.*", "1%", "lower"),              # seeded simulations: exact unless the RTL changes
    ("records_per_cycle.*", "1%", "higher"),
    ("generator.seconds.*", "50%", "lower"),  # wall clock on a shared 2-core machine
    ("generator.peak_mb.*", "20%", "lower"),
    ("generator.verilog_mb.*", "5%", "lower"),
    ("generator.modules.*", 0, "lower"),      # distinct blocks: any change is a new structure
    ("ecp5.*", "1%", "lower"),                # nextpnr cells: one seed, one thread
    ("fmax_mhz.*", "3%", "higher"),           # nextpnr: repeatable for one version
] + [
    # Benchmarks (``make bench``): seeded simulations, bands in the figure's unit.
    (f"{block}.*.{field}", band, better)
    for block in BENCH_KEYS
    for fields, band, better in (
        (("records_per_cycle", "short_records_per_cycle", "efficiency"), 0.005, "higher"),
        (("bytes_per_cycle",), 0.3, "higher"),
        (("bubbles", "short_bubbles", "latency", "comparators"), 0, "lower"),
        # The shape and the workload: figures measured on others are not comparable.
        (("rate", "long_runs", "long_run_bundles", "records"), 0, "exact"),
        # Recorded only: wall-clock seconds, and the engines' cycle counts (bytes_per_cycle
        # is the figure compared).
        (("seconds", "cycles"), RECORDED, None),
    )
    for field in fields
]


class GoldenError(ValueError):
    """A golden file that is not in the format: the message names the file, figure and field."""


def rule(name):
    """The ``(band, better)`` a new figure called ``name`` gets; ``(None, None)`` for a value
    recorded only. Raises :class:`KeyError` for a name no rule covers."""
    for pattern, band, better in RULES:
        if fnmatch.fnmatchcase(name, pattern):
            return band, better
    raise KeyError(f"no rule for figure {name!r}: add its kind to "
                   "topsort_hdl.analysis.regression.RULES")


def _percent(band):
    return float(band[:-1]) / 100


def band_width(entry):
    """How far from its value a figure may move, in the figure's unit."""
    band = entry["band"]
    if isinstance(band, str):
        return abs(entry["value"]) * _percent(band)
    return band


def _band_text(band):
    return f"+/-{band}" if isinstance(band, str) else f"+/-{band:g}"


def check(golden, measured, refresh=QOR_REFRESH):
    """Compare ``measured`` (name -> value) with ``golden`` (name -> entry); return
    ``(failures, notes)``: a line per figure outside its band (``refresh`` names the command
    that rewrites the file), a note per figure the file does not hold."""
    failures, notes = [], []
    for name, value in sorted(measured.items()):
        entry = golden.get(name)
        if entry is None:
            notes.append(f"NEW {name} = {value}: not in the golden file")
            continue
        if "band" not in entry:
            continue    # recorded only
        was, better = entry["value"], entry["better"]
        if abs(value - was) <= band_width(entry):
            continue
        change = f"{name}: {was} -> {value} (band {_band_text(entry['band'])})"
        if better == "exact":
            failures.append(f"CHANGED {change}: a parameter of the measurement; if the change "
                            f"is meant, refresh with `{refresh}` in a commit that says why")
        elif (value > was) == (better == "lower"):
            failures.append(f"REGRESSION {change}")
        else:
            failures.append(f"BETTER than golden {change}: refresh with `{refresh}` in a "
                            "commit that says why")
    return failures, notes


def _group(name):
    """A QoR figure's group: its kind and the next part of its name (``resources.u280``)."""
    return ".".join(name.split(".")[:2])


def _entry(name, value, old):
    if old is not None:
        kept = {key: old[key] for key in ("band", "better") if key in old}
        return {"value": value, **kept}
    band, better = rule(name)
    if band is RECORDED:
        return {"value": value}
    return {"value": value, "band": band, "better": better}


def update(golden, measured, replace=None):
    """The golden figures with ``measured`` values. An entry already there keeps its band and
    direction; a new one takes its kind's from :data:`RULES`. Every figure under a name in
    ``replace`` (a prefix up to a dot; by default the group, first two parts, of each measured
    name) is dropped first, so a block that is gone leaves no stale figures."""
    prefixes = ({_group(name) for name in measured} if replace is None else set(replace))

    def replaced(name):
        return any(name == p or name.startswith(p + ".") for p in prefixes)

    figures = {name: entry for name, entry in golden.items() if not replaced(name)}
    for name, value in measured.items():
        figures[name] = _entry(name, value, golden.get(name))
    return figures


def _is_number(value):
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def _validate(figures, where):
    if not isinstance(figures, dict):
        raise GoldenError(f"{where}: 'figures' must be an object of name -> entry")
    for name, entry in figures.items():
        at = f"{where}: figure {name!r}"
        if not isinstance(entry, dict):
            raise GoldenError(f"{at}: an entry must be an object with 'value' (and 'band' and "
                              f"'better'), not {entry!r}")
        extra = set(entry) - {"value", "band", "better"}
        if extra:
            raise GoldenError(f"{at}: unknown field {sorted(extra)[0]!r} (the fields are "
                              "'value', 'band', 'better')")
        if "value" not in entry:
            raise GoldenError(f"{at}: no 'value'")
        if not _is_number(entry["value"]):
            raise GoldenError(f"{at}: 'value' must be a number, not {entry['value']!r}")
        if ("band" in entry) != ("better" in entry):
            raise GoldenError(f"{at}: 'band' and 'better' go together (neither: recorded "
                              "only)")
        if "band" not in entry:
            continue
        band = entry["band"]
        if isinstance(band, str):
            try:
                ok = band.endswith("%") and _percent(band) >= 0
            except ValueError:
                ok = False
        else:
            ok = _is_number(band) and band >= 0
        if not ok:
            raise GoldenError(f"{at}: 'band' must be a number of at least 0 or a percentage "
                              f"such as \"1%\", not {band!r}")
        if entry["better"] not in DIRECTIONS:
            raise GoldenError(f"{at}: 'better' must be one of {', '.join(DIRECTIONS)}, not "
                              f"{entry['better']!r}")


def _old_format(data):
    if not isinstance(data, dict):
        return False
    if any(block in data and isinstance(data[block], list) for block in BENCH_KEYS):
        return True
    figures = data.get("figures")
    return isinstance(figures, dict) and any(
        isinstance(entry, dict) and "tolerance" in entry for entry in figures.values())


def parse(data, where="golden file"):
    """The figures of a golden file's JSON ``data``; :class:`GoldenError` if it is not one."""
    if _old_format(data):
        raise GoldenError(f"{where}: an earlier golden format; convert it with `python -m "
                          f"topsort_hdl.analysis.regression convert {where}`")
    if not isinstance(data, dict) or "figures" not in data:
        raise GoldenError(f"{where}: a golden file is an object with 'figures' (name -> "
                          "entry)")
    _validate(data["figures"], where)
    return data["figures"]


def load(path):
    """The figures of the golden file at ``path`` (name -> entry). Raises :class:`OSError`
    when it cannot be read, :class:`GoldenError` when it is not a golden file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise GoldenError(f"{path}: not JSON: {error}") from None
    return parse(data, str(path))


def save(path, figures, about):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"about": about, "figures": dict(sorted(figures.items()))},
                               indent=1) + "\n")


def bench_name(block, row):
    """A benchmark row's name: the block, then each key field (``name=value`` for numbers)."""
    parts = [block] + [f"{key}={row[key]}" if not isinstance(row[key], str) else row[key]
                       for key in BENCH_KEYS[block]]
    return ".".join(parts)


def bench_figures(block, rows):
    """The figures of ``topsort-hdl bench BLOCK``'s result rows: name -> value for every
    measured field of every row (the key fields name the row)."""
    figures = {}
    for row in rows:
        prefix = bench_name(block, row)
        for field, value in row.items():
            if field not in BENCH_KEYS[block]:
                figures[f"{prefix}.{field}"] = value
    return figures


def bench_about(block):
    return (f"`make bench` golden figures ({block}): refresh with `{BENCH_REFRESH}` in a "
            "commit that says why")


def convert(data):
    """``(about, figures)`` of golden file ``data`` in this format, from either earlier one
    or this one; every value and band kept (a relative ``tolerance`` becomes a percentage)."""
    if not _old_format(data):
        return data.get("about", ""), parse(data)
    blocks = [block for block in BENCH_KEYS if isinstance(data.get(block), list)]
    if blocks:
        figures = {}
        for block in blocks:
            figures.update(update({}, bench_figures(block, data[block]), replace=()))
        return bench_about(blocks[0]) if len(blocks) == 1 else "", figures
    figures = {}
    for name, entry in data["figures"].items():
        tolerance = entry["tolerance"]
        band = f"{round(tolerance * 100, 9):g}%" if tolerance else 0
        figures[name] = {"value": entry["value"], "band": band, "better": entry["better"]}
    return data.get("about", ""), figures


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) >= 2 and argv[0] == "convert":
        for name in argv[1:]:
            path = Path(name)
            about, figures = convert(json.loads(path.read_text()))
            _validate(figures, name)
            save(path, figures, about)
            print(f"{path}: {len(figures)} figures")
        return 0
    if len(argv) == 3 and argv[0] == "apply":
        golden_path, measured_path = Path(argv[1]), Path(argv[2])
        data = json.loads(golden_path.read_text())
        measured = json.loads(measured_path.read_text())
        save(golden_path, update(parse(data, argv[1]), measured), data.get("about", ""))
        print(f"{golden_path}: {len(measured)} figures from {measured_path}")
        return 0
    print("usage: python -m topsort_hdl.analysis.regression convert FILE...\n"
          "       python -m topsort_hdl.analysis.regression apply GOLDEN MEASURED", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
