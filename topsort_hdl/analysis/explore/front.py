"""The result of an exploration: the Pareto front of speed against LUTs among the points that
fit, as a table and a plot, and a chosen point written as a preset."""

import json
from pathlib import Path

from ...core.boards import HBM_BOARDS
from ...core.config import check_preset_name
from ..perf.sweep import format_size

__all__ = ["pareto", "front_table", "plot_front", "save_preset", "PRESET_FIELDS"]

# The fields a saved preset writes: every axis and parameter of the configuration.
PRESET_FIELDS = ("board", "trees", "rate", "leaves", "reuse", "key_bits", "value_bits",
                 "equal_keys", "placement", "presort", "merge_unit", "read_burst_bytes",
                 "reuse_burst_bytes", "write_burst_bytes", "batch_bytes", "read_outstanding",
                 "write_outstanding", "channel_bytes", "clock_hz")


def _cost(point):
    return point.share if point.share is not None else point.usage.luts


def pareto(points):
    """The points that fit and that no other fitting point beats on both speed and LUTs,
    cheapest first."""
    front, best = [], None
    for point in sorted((p for p in points if p.fits), key=lambda p: (_cost(p), -p.speed)):
        if best is None or point.speed > best:
            front.append(point)
            best = point.speed
    return front


def _row(point, marked=""):
    c = point.config
    share = f"{point.share:6.1%}" if point.share is not None else f"{'-':>6}"
    split = (" / ".join(str(len(point.plan.trees_on(d)))
                        for d in range(len(HBM_BOARDS[c.board].slrs))) if point.plan else "-")
    orders = " ".join(f"{point.gbps[d]:6.2f}" for d in point.gbps)
    return (f"{marked}{c.name:<36} {orders} {point.phases['phase1']:6.1f} "
            f"{point.phases['phase2']:6.1f} {point.usage.luts:>9,} {share} {point.levels:>3} "
            f"{split:>11}  {'; '.join(point.marks)}")


def front_table(points, unpriced, size, budget, reference=None):
    """Lines: the front (every point on it), then the fastest points that do not fit (with
    why), the reference point's row when given, and the points the size ruled out."""
    if not points:
        return [f"no point holds {format_size(size)}"] + [f"  {name}: {why}"
                                                          for name, why in unpriced.items()]
    orders = " ".join(f"{d[:6]:>6}" for d in points[0].gbps)
    head = (f"{'point':<36} {orders} {'ph1':>6} {'ph2':>6} {'LUT':>9} {'%LUT':>6} {'lvl':>3} "
            f"{'trees/SLR':>11}  marks")
    sources = ("GB/s modelled (the performance model, measured HBM rates) for "
               f"{format_size(size)}, per input order, and per phase for the slowest; LUT "
               "estimated (Yosys xcup, the kernel composed from its blocks); trees per SLR "
               "planned (floorplan); lvl: the deepest block's LUT levels")
    front = pareto(points)
    lines = [sources, ""]
    if front:
        lines += [f"Pareto front ({len(front)} of {len(points)} points priced; budget "
                  f"{budget:.0%} of the device's LUTs):", head]
        lines += [_row(p) for p in front]
    else:
        lines.append(f"no point fits ({len(points)} priced; budget {budget:.0%} of the "
                     f"device's LUTs, dies filled to 95% at most): see the marks")
    fastest = sorted((p for p in points if not p.fits), key=lambda p: -p.speed)[:5]
    if fastest:
        lines += ["", "faster points that do not fit:" if front and fastest[0].speed >
                  front[-1].speed else "points that do not fit:", head]
        lines += [_row(p) for p in fastest]
    if reference is not None:
        lines += ["", "the board's preset, for reference:", head, _row(reference)]
    if unpriced:
        lines += ["", f"{len(unpriced)} points do not hold {format_size(size)} (not priced)"]
    return lines


def plot_front(points, path, size, budget):
    """A PNG of every priced point (speed against LUT share) with the front drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    front = pareto(points)
    shares = [p.share is not None for p in points]
    scale, label = ((100, "kernel LUTs, % of the device (Yosys estimate)") if all(shares)
                    else (1, "kernel LUTs (Yosys estimate)"))
    fig, ax = plt.subplots(figsize=(8, 5))
    for fits, colour, name in ((False, "#bbbbbb", "does not fit"), (True, "#4477aa", "fits")):
        chosen = [p for p in points if p.fits == fits]
        ax.scatter([_cost(p) * scale for p in chosen], [p.speed for p in chosen], s=14,
                   color=colour, label=name)
    ax.plot([_cost(p) * scale for p in front], [p.speed for p in front], "-o", color="#cc3311",
            label="Pareto front")
    for p in front:
        ax.annotate(p.config.name, (_cost(p) * scale, p.speed), fontsize=6,
                    xytext=(3, 3), textcoords="offset points")
    if all(shares):
        ax.axvline(budget * 100, color="#999933", linestyle="--", label=f"budget {budget:.0%}")
    board = points[0].config.board
    ax.set_xlabel(label)
    ax.set_ylabel("GB/s, slowest input order (model)")
    ax.set_title(f"topsort-hdl explore: {board}, {format_size(size)}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


def save_preset(config, name, directory):
    """Write ``config`` as preset ``name`` (``<directory>/<name>.toml``), which
    :func:`~topsort_hdl.core.config.config_from` reads beside the built-in presets."""
    check_preset_name(name)
    lines = [f"# A preset written by topsort-hdl explore: {config.summary()}"]
    for field in PRESET_FIELDS:
        value = getattr(config, field)
        lines.append(f"{field} = {json.dumps(value)}" if isinstance(value, str)
                     else f"{field} = {int(value)}")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path
