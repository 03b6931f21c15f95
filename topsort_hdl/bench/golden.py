"""Compare benchmark results with the golden ones kept in the repository (QoR regression).

A result that gets worse beyond its tolerance is a regression; one that gets better is
reported too, so that refreshing the golden file is a deliberate, explained commit.
"""

__all__ = ["compare", "TOLERANCES"]

# field -> (direction, absolute tolerance): "higher" means bigger is better.
TOLERANCES = {
    "records_per_cycle": ("higher", 0.005),
    "short_records_per_cycle": ("higher", 0.005),
    "bubbles": ("lower", 0),
    "short_bubbles": ("lower", 0),
    "latency": ("lower", 0),
    "comparators": ("lower", 0),
    "efficiency": ("higher", 0.005),
    "bytes_per_cycle": ("higher", 0.3),
}


def compare(golden, results, keys=("rate",)):
    """Return report lines: ``REGRESSION ...`` or ``IMPROVED ...`` per field that moved.

    Entries are matched on the fields named in ``keys``.
    """
    lines = []

    def name(entry):
        return " ".join(f"{k}={entry[k]}" for k in keys)

    by_key = {name(entry): entry for entry in golden}
    for result in results:
        reference = by_key.get(name(result))
        if reference is None:
            lines.append(f"NEW {name(result)}: no golden result to compare with")
            continue
        for field, (direction, tolerance) in TOLERANCES.items():
            if field not in reference or field not in result:
                continue
            was, now = reference[field], result[field]
            worse = now < was - tolerance if direction == "higher" else now > was + tolerance
            better = now > was + tolerance if direction == "higher" else now < was - tolerance
            if worse:
                lines.append(f"REGRESSION {name(result)} {field}: {was} -> {now}")
            elif better:
                lines.append(f"IMPROVED {name(result)} {field}: {was} -> {now} "
                             "(refresh the golden file in its own commit)")
    return lines
