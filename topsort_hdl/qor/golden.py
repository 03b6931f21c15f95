"""QoR golden results: expected figures with a tolerance each, checked like an FPGA tool's
quality-of-results regression.

The file (``benchmarks/golden/qor.json``) maps a figure's name to ``{"value", "tolerance",
"better"}``: ``tolerance`` is relative (0.02 = 2%), ``better`` says which way is an
improvement. A figure outside its band fails either way: worse is a regression, better means
the golden file must be refreshed (``make qor-update``) in a commit that says why.
"""

import json

__all__ = ["TOLERANCES", "check", "update", "load", "save"]

# Per kind of figure (the first part of its name): (relative tolerance, better).
TOLERANCES = {
    "resources": (0.01, "lower"),       # Yosys is deterministic for one version
    "levels": (0, "lower"),             # an integer count of LUTs or cells: any change
    "cycles": (0.01, "lower"),          # seeded simulations: exact unless the RTL changes
    "records_per_cycle": (0.01, "higher"),
    "generator.seconds": (0.5, "lower"),  # wall clock on a shared 2-core machine
    "generator.peak_mb": (0.2, "lower"),
    "generator.verilog_mb": (0.05, "lower"),
    "generator.modules": (0, "lower"),      # distinct blocks: any change is a new structure
    "ecp5": (0.01, "lower"),              # nextpnr cells: one seed, one thread
    "fmax_mhz": (0.03, "higher"),         # nextpnr: repeatable for one version
}


def _kind(name):
    for prefix in sorted(TOLERANCES, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "."):
            return TOLERANCES[prefix]
    raise KeyError(f"no tolerance for figure {name!r}")


def load(path):
    return json.loads(path.read_text())["figures"]


def save(path, figures, about):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"about": about, "figures": dict(sorted(figures.items()))},
                               indent=1) + "\n")


def check(golden, measured):
    """Compare ``measured`` (name -> value) with ``golden``; return ``(failures, notes)``:
    one line per figure out of its band, and per figure with no golden value."""
    failures, notes = [], []
    for name, value in sorted(measured.items()):
        entry = golden.get(name)
        if entry is None:
            notes.append(f"NEW {name} = {value}: not in the golden file")
            continue
        was, tolerance, better = entry["value"], entry["tolerance"], entry["better"]
        band = abs(was) * tolerance
        if abs(value - was) <= band:
            continue
        worse = value > was if better == "lower" else value < was
        change = f"{name}: {was} -> {value} (band +/-{tolerance:.0%})"
        failures.append(f"REGRESSION {change}" if worse else
                        f"IMPROVED {change}: refresh the golden file (make qor-update) "
                        "in a commit that says why")
    return failures, notes


def _group(name):
    """A figure's group: its kind and the next part of its name (``resources.u280``)."""
    return ".".join(name.split(".")[:2])


def update(golden, measured):
    """The golden figures with ``measured`` values, tolerances kept or taken from
    :data:`TOLERANCES`; a group of figures measured again is replaced whole, so a block that
    is gone leaves no stale figures."""
    groups = {_group(name) for name in measured}
    figures = {name: entry for name, entry in golden.items() if _group(name) not in groups}
    for name, value in measured.items():
        tolerance, better = _kind(name)
        old = golden.get(name, {})
        figures[name] = {"value": value, "tolerance": old.get("tolerance", tolerance),
                         "better": old.get("better", better)}
    return figures
