#!/usr/bin/env python3
"""Write the tables of docs/ that come from the golden files (``make docs``).

A page marks each generated table with a pair of comments::

    <!-- generated from benchmarks/golden/qor.json (resources u280): do not edit -->
    ...
    <!-- end generated -->

The file names the golden file, the parenthesis the table (:data:`TABLES`, with its argument).
``python3 scripts/golden_tables.py`` rewrites every marked region of ``docs/*.md`` from the
golden files; ``--check`` only says which pages differ (exit 1), as the test does. Plain
Python, no package import: the golden format is ``{"figures": {name: {"value", "band",
"better"}}}`` (``topsort_hdl/analysis/regression.py``).
"""

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BEGIN = re.compile(r"<!-- generated from (?P<file>benchmarks/golden/[\w.-]+\.json) "
                   r"\((?P<table>[\w-]+)(?: (?P<arg>[\w-]+))?\): do not edit -->\n")
END = "<!-- end generated -->"


def natural(text):
    """Sort key that orders ``rate=2`` before ``rate=16``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def number(value):
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def band(entry):
    return "exact" if entry.get("better") == "exact" else str(entry.get("band", "recorded"))


def rows(figures, prefix, depth):
    """``{row: {figure: entry}}`` for the names ``prefix.<row>.<figure>``; a row is ``depth``
    dot-separated parts (the last part of a name is the figure)."""
    table = {}
    for name, entry in figures.items():
        if not name.startswith(prefix + "."):
            continue
        parts = name[len(prefix) + 1:].rsplit(".", 1)
        row, figure = parts if len(parts) == 2 else ("", parts[0])
        if row.count(".") + 1 == depth:
            table.setdefault(row, {})[figure] = entry
    return dict(sorted(table.items(), key=lambda item: natural(item[0])))


def markdown(header, body, bands=None):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    if bands:
        lines += ["", "Bands: " + "; ".join(f"{what} {value}" for what, value in bands) + "."]
    return "\n".join(lines)


def cell(row, figure):
    entry = row.get(figure)
    return number(entry["value"]) if entry else ""


def bands_of(tables, figures):
    """``(figure, band)`` for each figure: the bands its entries have, joined with '/'."""
    found = []
    for figure, label in figures:
        seen = []
        for row in tables:
            if figure in row and band(row[figure]) not in seen:
                seen.append(band(row[figure]))
        if seen:
            found.append((label, " / ".join(seen)))
    return found


def resources(figures, config):
    blocks = rows(figures, f"resources.{config}", 1)
    levels = rows(figures, f"levels.{config}", 1)
    body = []
    # blocks (they have logic levels) first, then the groups summed from them
    order = sorted(blocks, key=lambda name: (name not in levels, natural(name)))
    for name in order:
        row, depth = blocks[name], levels.get(name, {})
        body.append([f"`{name}`", cell(row, "luts"), cell(row, "ff"), cell(row, "bram"),
                     cell(row, "uram"),
                     f"{cell(depth, 'lut')} / {cell(depth, 'cells')}" if depth else ""])
    columns = [("luts", "LUT"), ("ff", "FF"), ("bram", "BRAM"), ("uram", "URAM")]
    return markdown(["block or group", "LUT", "FF", "BRAM", "URAM", "levels (LUT / cells)"],
                    body, bands_of(blocks.values(), columns)
                    + bands_of(levels.values(), [("lut", "levels")]))


def sorts(figures, _=None):
    cycles = rows(figures, "cycles", 2)
    rates = rows(figures, "records_per_cycle", 2)
    body = []
    for name, row in cycles.items():
        config, records = name.split(".")
        records, _, order = records.partition("_")      # (the input-order sorts: 16000_sorted)
        rate = rates.get(name, {})
        body.append([f"`{config}`", number(int(records)) + (f", {order}" if order else ""),
                     cell(row, "phase1"),
                     cell(rate, "phase1"), cell(row, "phase2"), cell(rate, "phase2")])
    return markdown(["config", "records", "phase 1 cycles", "phase 1 records/cycle",
                     "phase 2 cycles", "phase 2 records/cycle"], body,
                    bands_of(cycles.values(), [("phase1", "cycles")])
                    + bands_of(rates.values(), [("phase1", "records/cycle")]))


def generator(figures, _=None):
    kinds = [("seconds", "wall time (s)"), ("peak_mb", "peak memory (MB)"),
             ("verilog_mb", "Verilog (MB)"), ("modules", "distinct blocks")]
    table = {}
    for kind, _label in kinds:
        for name, entry in figures.items():
            if name.startswith(f"generator.{kind}."):
                table.setdefault(name.rsplit(".", 1)[1], {})[kind] = entry
    body = [[f"`{config}`"] + [cell(row, kind) for kind, _label in kinds]
            for config, row in sorted(table.items(), key=lambda item: natural(item[0]))]
    return markdown(["config"] + [label for _kind, label in kinds], body,
                    bands_of(table.values(), kinds))


def pnr(figures, _=None):
    cells = rows(figures, "ecp5", 1)
    fmax = {name.split(".", 1)[1]: {"fmax": entry} for name, entry in figures.items()
            if name.startswith("fmax_mhz.")}
    body = [[f"`{name}`", cell(row, "luts"), cell(row, "ff"), cell(row, "ebr"), cell(row, "dsp"),
             cell(fmax.get(name, {}), "fmax")] for name, row in cells.items()]
    return markdown(["block", "LUT4", "FF", "EBR", "DSP", "Fmax (MHz)"], body,
                    bands_of(fmax.values(), [("fmax", "Fmax")])
                    + bands_of(cells.values(), [("luts", "cells")]))


def merge_unit(figures, kind):
    """``bench mms`` or ``bench flims``: one row per E."""
    units = rows(figures, kind, 1)
    body = []
    for name, row in units.items():
        body.append([name.replace("rate=", ""), cell(row, "records_per_cycle"),
                     f"{cell(row, 'long_runs')} x {cell(row, 'long_run_bundles')}"
                     f"+{cell(row, 'long_run_bundles')}",
                     cell(row, "bubbles"), cell(row, "short_records_per_cycle"),
                     cell(row, "short_bubbles"), cell(row, "latency"), cell(row, "comparators")])
    return markdown(["E", "records/cycle", "long runs (runs x bundles+bundles)", "bubbles",
                     "1+1-bundle runs: records/cycle", "bubbles", "latency (cycles)",
                     "comparators"], body,
                    bands_of(units.values(), [("records_per_cycle", "records/cycle"),
                                              ("latency", "latency"),
                                              ("comparators", "comparators")]))


def units(figures, _=None):
    """The merge units side by side: MMS (the u280 kernel's, the selector at E = 1) and
    FLiMS, Yosys LUT, FF and levels, then nextpnr-ecp5 LUT4 and Fmax where both were built."""
    mms, mms_levels = rows(figures, "resources.u280", 1), rows(figures, "levels.u280", 1)
    flims, flims_levels = rows(figures, "resources.units", 1), rows(figures, "levels.units", 1)
    ecp5 = rows(figures, "ecp5", 1)
    fmax = {name.split(".", 1)[1]: entry for name, entry in figures.items()
            if name.startswith("fmax_mhz.")}
    body = []
    for name in flims:
        rate = int(name.rsplit("_e", 1)[1])
        old, new = mms.get(f"merge_unit_{rate}", {}), flims[name]
        share = (f"{new['luts']['value'] / old['luts']['value']:.1%}"
                 if "luts" in old and "luts" in new else "")
        pair = [f"merge_unit_{rate}", name]
        body.append([str(rate), cell(old, "luts"), cell(new, "luts"), share,
                     cell(old, "ff"), cell(new, "ff"),
                     f"{cell(mms_levels.get(pair[0], {}), 'lut')} / "
                     f"{cell(flims_levels.get(name, {}), 'lut')}",
                     " / ".join(cell(ecp5.get(n, {}), "luts") for n in pair).strip(" /"),
                     " / ".join(number(fmax[n]["value"]) for n in pair if n in fmax)])
    return markdown(["E", "MMS LUT", "FLiMS LUT", "FLiMS/MMS", "MMS FF", "FLiMS FF",
                     "LUT levels MMS / FLiMS", "ECP5 LUT4 MMS / FLiMS",
                     "ECP5 Fmax MMS / FLiMS (MHz)"], body,
                    bands_of(flims.values(), [("luts", "LUT")])
                    + bands_of(flims_levels.values(), [("lut", "levels")]))


def tree(figures, _=None):
    shapes = rows(figures, "tree", 2)
    body = []
    for name, row in shapes.items():
        shape, workload = name.rsplit(".", 1)
        body.append([shape, workload, cell(row, "records_per_cycle"), cell(row, "rate"),
                     cell(row, "efficiency"), cell(row, "records"), cell(row, "latency")])
    return markdown(["tree", "workload", "records/cycle", "of", "efficiency", "records",
                     "latency (cycles)"], body,
                    bands_of(shapes.values(), [("records_per_cycle", "records/cycle"),
                                               ("efficiency", "efficiency"),
                                               ("latency", "latency")]))


def axi(figures, _=None):
    cases = rows(figures, "axi", 2)
    body = []
    for name, row in cases.items():
        engine, case = name.split(".", 1)
        body.append([engine, case, cell(row, "bytes_per_cycle"), cell(row, "efficiency"),
                     cell(row, "cycles")])
    return markdown(["engine", "case", "bytes/cycle", "of the port width", "cycles"], body,
                    bands_of(cases.values(), [("bytes_per_cycle", "bytes/cycle"),
                                              ("efficiency", "efficiency")]))


TABLES = {"resources": resources, "sorts": sorts, "generator": generator, "pnr": pnr,
          "mms": lambda figures, _=None: merge_unit(figures, "mms"),
          "flims": lambda figures, _=None: merge_unit(figures, "flims"), "units": units,
          "tree": tree, "axi": axi}


def render(text, root=ROOT):
    """``text`` with every marked region rewritten from the golden files under ``root``."""
    out, at = [], 0
    for begin in BEGIN.finditer(text):
        end = text.find(END, begin.end())
        if end < 0:
            raise ValueError(f"'{begin.group(0).strip()}' has no '{END}'")
        if begin.group("table") not in TABLES:
            raise ValueError(f"no table '{begin.group('table')}' (one of {', '.join(TABLES)})")
        figures = json.loads((root / begin.group("file")).read_text())["figures"]
        table = TABLES[begin.group("table")](figures, begin.group("arg"))
        out += [text[at:begin.end()], table, "\n"]
        at = end
    out.append(text[at:])
    return "".join(out)


def pages(root=ROOT):
    return sorted((root / "docs").glob("*.md"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 naming every page that is out of date")
    args = parser.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text()
        new = render(text)
        if new != text:
            stale.append(page.relative_to(ROOT))
            if not args.check:
                page.write_text(new)
    verb = "out of date (run make docs)" if args.check else "rewritten"
    for page in stale:
        print(f"{page}: {verb}")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
