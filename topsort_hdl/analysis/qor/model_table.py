"""The performance model against the RTL, as a Markdown table for the docs (``make docs``).

The RTL's cycle counts are the golden ones ``make qor`` measures; the model's are computed
here, so the table cannot fall behind either. ``python -m topsort_hdl.analysis.qor.model_table
GOLDEN PAGE`` rewrites the region of ``PAGE`` between :data:`BEGIN` and :data:`END`;
``--check`` only says whether it differs (exit 1).
"""

import argparse
import sys
from pathlib import Path

from ...core.config import config_from
from ...core.golden.workloads import INPUT_ORDERS
from ..regression import load
from .measure import BENCHMARK_SORTS, ORDER_SORTS, SMALL_SET, benchmark_config
from .run import model_errors

__all__ = ["BEGIN", "END", "model_table", "order_rows", "render"]

BEGIN = "<!-- generated from the golden RTL cycles and the performance model: do not edit -->\n"
END = "<!-- end generated -->"


def golden_rows(figures, name):
    """The benchmark sorts of configuration ``name`` as the golden figures keep them."""
    return [{"records": n, "phase1_cycles": figures[f"cycles.{name}.{n}.phase1"]["value"],
             "phase2_cycles": figures[f"cycles.{name}.{n}.phase2"]["value"]}
            for n in BENCHMARK_SORTS[name][1]]


def order_rows(figures):
    """The :data:`ORDER_SORTS` sorts, one per input order, as the golden figures keep them."""
    name, _, count = ORDER_SORTS
    return [{"records": count, "order": order,
             "phase1_cycles": figures[f"cycles.{name}.{count}_{order}.phase1"]["value"],
             "phase2_cycles": figures[f"cycles.{name}.{count}_{order}.phase2"]["value"]}
            for order in INPUT_ORDERS]


def model_table(figures):
    """The table: per benchmark sort, each phase's RTL and model cycles and the error."""
    lines = ["| config | records | phase 1 RTL / model | phase 2 RTL / model |",
             "|---|---|---|---|"]
    for name in BENCHMARK_SORTS:
        label = f"`{name}`" + (", " + ", ".join(SMALL_SET) if name == "small" else "")
        cells = {}
        for records, _phase, rtl, model, error in model_errors(benchmark_config(name),
                                                               golden_rows(figures, name)):
            cells.setdefault(records, []).append(f"{rtl:,} / {model:,} ({error:+.1%})")
        lines += [f"| {label} | {records:,} | {' | '.join(pair)} |"
                  for records, pair in cells.items()]
    name, _, count = ORDER_SORTS
    rows = order_rows(figures)
    errors = model_errors(config_from(name), rows)
    for row, k in zip(rows, range(0, len(errors), 2), strict=True):
        pair = [f"{rtl:,} / {model:,} ({error:+.1%})" for _, _, rtl, model, error in
                errors[k:k + 2]]
        lines.append(f"| `{name}` | {count:,}, {row['order']} | {' | '.join(pair)} |")
    return "\n".join(lines) + "\n"


def render(page, figures):
    """``page`` with its generated region rewritten."""
    start = page.index(BEGIN) + len(BEGIN)
    end = page.index(END, start)
    return page[:start] + model_table(figures) + page[end:]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m topsort_hdl.analysis.qor.model_table")
    parser.add_argument("golden", type=Path, help="the QoR golden file (cycles.*)")
    parser.add_argument("page", type=Path, help="the Markdown page holding the table")
    parser.add_argument("--check", action="store_true", help="only say whether it differs")
    args = parser.parse_args(argv)
    text = args.page.read_text()
    new = render(text, load(args.golden))
    if args.check:
        if new != text:
            print(f"{args.page}: the model table is stale (make docs)")
            return 1
        return 0
    if new != text:
        args.page.write_text(new)
        print(f"rewrote the model table of {args.page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
