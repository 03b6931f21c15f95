"""The lines the subcommands print for a result: a performance-model estimate and one measured
block of ``bench``."""

__all__ = ["estimate_lines", "merge_unit_line", "axi_line", "tree_line"]


def estimate_lines(e, size):
    """A :func:`~topsort_hdl.analysis.perf.model.estimate` of ``size`` (as written) as text:
    the slowest tree's passes, then each phase's cycles, time and bandwidth."""
    c = e.config
    mem = "ideal" if e.memory == "ideal" else f"{e.memory_rate:.2f} records/cycle per channel"
    lines = [f"{size} ({e.records} records, {e.distribution}, placed {c.placement}) on {c.name} "
             f"at {c.clock_hz / 1e6:g} MHz, memory '{e.memory}' ({mem}): {e.passes} phase-1 "
             f"{'pass' if e.passes == 1 else 'passes'}, then phase 2",
             f"  tree {e.slowest_tree} (the slowest):",
             f"  {'pass':>6} {'records':>11} {'active':>6} {'rec/cycle':>9} {'bound':>7} "
             f"{'lag':>6} {'tail':>5} {'cycles':>11}"]
    rows = [(str(i + 1), p) for i, p in enumerate(e.tree_passes[e.slowest_tree])]
    rows.append(("phase2", e.phase2_pass))
    for name, p in rows:
        lines.append(f"  {name:>6} {p.records:>11} {p.active:>6} {p.rate:>9.2f} {p.bound:>7} "
                     f"{p.lag:>6} {p.tail:>5} {p.cycles:>11}")
    for name, phase in (("phase 1", e.phase1), ("phase 2", e.phase2), ("overall", e.total)):
        lines.append(f"{name}: {phase.cycles} cycles, {phase.seconds * 1e3:.3f} ms, "
                     f"{phase.gbps:.2f} GB/s")
    lines.append(f"bound: {e.bound()}")
    return lines


def merge_unit_line(kind, m, rate):
    """One merge unit's measurement (``bench mms``, ``bench flims``)."""
    return (f"{kind} E={rate:<2}  {m.records_per_cycle:6.3f} records/cycle "
            f"({m.records_per_cycle / rate:.3f} of E) over {m.long_runs} runs of "
            f"{m.long_run_bundles}+{m.long_run_bundles} bundles, {m.bubbles} bubbles;  "
            f"1+1-bundle runs {m.short_records_per_cycle:6.3f} ({m.short_bubbles} bubbles);  "
            f"latency {m.latency} cycles;  {m.comparators} comparators  [{m.seconds:.1f} s]")


def axi_line(m):
    """One engine case's measurement (``bench axi``)."""
    return (f"{m.engine:<6} {m.case:<42} {m.bytes_per_cycle:7.2f} bytes/cycle "
            f"({m.efficiency:.3f} of the port width);  {m.cycles} cycles  [{m.seconds:.1f} s]")


def tree_line(m):
    """One tree case's measurement (``bench tree``)."""
    return (f"{m.shape:<20} {m.workload:<8} {m.records_per_cycle:6.2f} records/cycle of "
            f"{m.rate:<2} ({m.efficiency:.3f});  {m.records} records;  latency {m.latency} "
            f"cycles  [{m.seconds:.1f} s]")
