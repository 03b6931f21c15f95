"""The model over data sizes, next to the paper's measurements: a table and a plot."""

from .model import estimate

__all__ = ["PAPER_U280", "SWEEP_SIZES", "parse_size", "format_size", "sweep", "sweep_table",
           "plot_sweep", "hbm_limit_gbps"]

# TopSort (FCCM'22), section VI, measured on a U280 at 214 MHz, 4 GB of 8-byte records.
PAPER_U280 = {
    "bytes": 4 << 30,
    "overall": 15.6,
    "phase1": 26.5,
    "phase2": 38.0,
    "passes": 6,
    "pass_step": (256 << 20, 512 << 20),    # 5 passes at 256 MB, 6 at 512 MB
}
SWEEP_SIZES = [32 << (20 + k) for k in range(8)]      # 32 MB .. 4 GB
_UNITS = {"K": 10, "M": 20, "G": 30, "T": 40}


def parse_size(text):
    """Bytes from ``4G``, ``256M``, ``64K`` (binary multiples) or a plain number."""
    value = str(text).strip().upper().removesuffix("B").removesuffix("I")
    shift = 0
    if value and value[-1] in _UNITS:
        value, shift = value[:-1], _UNITS[value[-1]]
    try:
        number = int(value, 0)
    except ValueError:
        raise ValueError(f"size must be a byte count like 4G, 256M or 65536, "
                         f"not {text!r}") from None
    if number < 0:
        raise ValueError(f"size must not be negative, not {text!r}")
    return number << shift


def format_size(nbytes):
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if nbytes >= 1 << shift and nbytes % (1 << shift) == 0:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def hbm_limit_gbps(config, passes, memory_gbps):
    """Overall GB/s if the memory were the only limit: every phase-1 pass and phase 2 move the
    data once, read from T channels while writing T others (a channel is half-duplex)."""
    return config.trees * memory_gbps / (passes + 1)


def sweep(config, sizes=SWEEP_SIZES, memory="measured", distribution="random"):
    """One row per size (clamped to the configuration's capacity): the model's figures."""
    from ...core.boards import HBM_BOARDS

    board = HBM_BOARDS[config.board]
    gbps = board.channel_gbps_measured if memory == "measured" else board.channel_gbps
    rows = []
    for size in sizes:
        records = min(size // config.record_bytes, config.capacity)
        e = estimate(config, records, memory, distribution)
        limit = hbm_limit_gbps(config, e.passes, gbps)
        rows.append({
            "size": size, "records": records, "passes": e.passes,
            "last_pass_active": e.tree_passes[0][-1].active if e.tree_passes[0] else 0,
            "phase1_gbps": e.phase1.gbps, "phase2_gbps": e.phase2.gbps,
            "overall_gbps": e.total.gbps, "seconds": e.total.seconds, "bound": e.bound(),
            "hbm_limit_gbps": limit, "of_limit": e.total.gbps / limit,
        })
    return rows


def sweep_table(config, rows, memory, distribution="random"):
    lines = [f"{config.name}: {config.summary()}",
             f"model, memory '{memory}', {distribution} input placed {config.placement}; the "
             f"paper (U280, 214 MHz) measured {PAPER_U280['overall']} GB/s overall, "
             f"{PAPER_U280['phase1']} phase 1, {PAPER_U280['phase2']} phase 2 at 4 GB, "
             f"{PAPER_U280['passes']} passes",
             f"{'size':>7} {'passes':>6} {'last a':>6} {'phase 1':>8} {'phase 2':>8} "
             f"{'overall':>8} {'seconds':>8} {'HBM limit':>9} {'of limit':>8}  bound"]
    for row in rows:
        clamp = "*" if row["records"] * config.record_bytes < row["size"] else " "
        lines.append(
            f"{format_size(row['size']):>6}{clamp} {row['passes']:>6} "
            f"{row['last_pass_active']:>6} {row['phase1_gbps']:>8.1f} {row['phase2_gbps']:>8.1f} "
            f"{row['overall_gbps']:>8.1f} {row['seconds']:>8.3f} {row['hbm_limit_gbps']:>9.1f} "
            f"{row['of_limit']:>8.0%}  {row['bound']}")
    lines.append("GB/s of data sorted per second of each phase; HBM limit: the overall GB/s "
                 "if every pass ran at the channels' bandwidth")
    if any(r["records"] * config.record_bytes < r["size"] for r in rows):
        lines.append(f"* clamped to the capacity, {config.capacity} records "
                     f"({config.capacity * config.record_bytes} bytes: each channel keeps one "
                     f"batch beside its half, for the report)")
    return lines


def plot_sweep(config, rows, path, memory):
    """A PNG of GB/s per phase and overall over the sizes, with the paper's points."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [row["size"] / (1 << 20) for row in rows]
    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(sizes, [r["phase1_gbps"] for r in rows], "o-", color="tab:blue",
            label="phase 1 (model)")
    ax.plot(sizes, [r["phase2_gbps"] for r in rows], "s-", color="tab:orange",
            label="phase 2 (model)")
    ax.plot(sizes, [r["overall_gbps"] for r in rows], "D-", color="tab:green",
            label="overall (model)")
    ax.plot(sizes, [r["hbm_limit_gbps"] for r in rows], ":", color="gray",
            label="overall HBM limit, same passes")
    paper_mb = PAPER_U280["bytes"] / (1 << 20)
    for key, color, marker in (("phase1", "tab:blue", "o"), ("phase2", "tab:orange", "s"),
                               ("overall", "tab:green", "D")):
        ax.plot([paper_mb], [PAPER_U280[key]], marker, color=color, markersize=11,
                markerfacecolor="none", markeredgewidth=2)
    ax.plot([], [], "o", color="black", markerfacecolor="none", label="paper, measured at 4 GB")
    low, high = (s / (1 << 20) for s in PAPER_U280["pass_step"])
    ax.axvspan(low, high, color="tab:red", alpha=0.1, label="paper: 5 -> 6 passes")
    for before, after in zip(rows, rows[1:], strict=False):
        if after["passes"] != before["passes"]:
            ax.axvline((before["size"] * after["size"]) ** 0.5 / (1 << 20), color="tab:green",
                       linestyle="--", linewidth=1)
    ax.plot([], [], "--", color="tab:green", linewidth=1, label="model: pass count steps")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes, [format_size(r["size"]) for r in rows])
    ax.set_xlabel("data size")
    ax.set_ylabel("GB/s sorted")
    ax.set_title(f"TopSort {config.name} at {config.clock_hz / 1e6:g} MHz: model "
                 f"('{memory}' HBM) vs the paper")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
