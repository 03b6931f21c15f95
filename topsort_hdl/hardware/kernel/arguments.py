"""The kernel's checks of its arguments, in hardware, before a job touches memory.

Every buffer half aligned to a batch (and a 4 KB page) and inside the address space; the report
aligned to its size; the record count within the capacity; no two buffers (halves, report)
overlapping, checked pair by pair, one pair per cycle, each pair in three registered steps. The
job (:class:`~topsort_hdl.hardware.kernel.kernel.TopSortKernel`) samples the single-cycle checks and
steps through the pairs.
"""

from typing import NamedTuple

from amaranth.hdl import C, Cat, Signal
from amaranth.lib import data
from amaranth.utils import exact_log2

from ...core.contract import STATUS_BITS, report_alignment

__all__ = ["ArgumentChecks", "argument_checks"]


class ArgumentChecks(NamedTuple):
    """What :func:`argument_checks` gives the job.

    Members
    -------
    regions : list of Value
        The buffers' base addresses: each tree's two halves, then the report.
    bad_report, misaligned, over : Value
        The report is misaligned or past the top of the address space; so is a half or the
        report; more records than the configuration holds.
    pair_a, pair_b : Signal
        The pair of regions being selected (the job starts them at 0 and 1 and steps them).
    checking : Signal
        Driven by the job while it steps through the pairs.
    picked, summed : Signal
        The two registered steps of the pair check: ``valid`` while a pair is in them.
    """

    regions: list
    bad_report: object
    misaligned: object
    over: object
    pair_a: Signal
    pair_b: Signal
    checking: Signal
    picked: Signal
    summed: Signal


def argument_checks(m, config, halves, report_addr, report_size, records, status):
    """Add the checks of the arguments to ``m``: ``halves`` (per tree, its two base addresses),
    ``report_addr`` (``report_size`` bytes) and ``records``; an overlap found sets its bit of
    ``status`` (the other bits are the job's to set from what this returns)."""
    c = config
    trees, p = c.trees, c.axi
    # Every half: aligned to a batch (and a 4 KB page), inside the address space; the report
    # aligned to its size; no two of them overlapping (checked pair by pair, one pair per
    # cycle). A misaligned report is not written: the status register alone says why.
    regions = [h for pair in halves for h in pair] + [report_addr]
    sizes = [c.half_bytes] * (2 * trees) + [report_size]

    def outside(base, size, alignment):
        # (its last byte past the top of the address space: one ending exactly at 2**64 is in)
        return (base[:exact_log2(alignment)] != 0) | ((base + C(size - 1, 65))[64:] != 0)

    bad_report = outside(report_addr, report_size, report_alignment(trees, p.beat_bytes))
    misaligned = Cat(outside(b, c.half_bytes, c.half_alignment)
                     for b in regions[:-1]).any() | bad_report
    over = records > c.capacity
    pair_a = Signal(range(len(regions) + 1))
    pair_b = Signal(range(len(regions) + 1))
    buf_a = Signal(64)
    buf_b = Signal(64)
    size_a = Signal(range(max(sizes) + 1))
    size_b = Signal(range(max(sizes) + 1))
    for i, (region, size) in enumerate(zip(regions, sizes, strict=True)):
        with m.If(pair_a == i):
            m.d.comb += [buf_a.eq(region), size_a.eq(size)]
        with m.If(pair_b == i):
            m.d.comb += [buf_b.eq(region), size_b.eq(size)]
    # Each pair in three registered steps (select, add the size, compare), so that the
    # half selection, a 64-bit add and a 64-bit compare are never in one cycle.
    checking = Signal()                 # PAIRS is selecting pairs
    picked = Signal(data.StructLayout({"valid": 1, "a": 64, "b": 64,
                                       "a_size": len(size_a), "b_size": len(size_b)}))
    summed = Signal(data.StructLayout({"valid": 1, "a": 64, "b": 64, "a_end": 65,
                                       "b_end": 65}))
    m.d.sync += [
        picked.valid.eq(checking), picked.a.eq(buf_a), picked.b.eq(buf_b),
        picked.a_size.eq(size_a), picked.b_size.eq(size_b),
        summed.valid.eq(picked.valid), summed.a.eq(picked.a), summed.b.eq(picked.b),
        summed.a_end.eq(picked.a + picked.a_size), summed.b_end.eq(picked.b + picked.b_size),
    ]
    overlapping = summed.valid & (summed.a < summed.b_end) & (summed.b < summed.a_end)
    with m.If(overlapping):
        m.d.sync += status[STATUS_BITS["overlap"]].eq(1)
    return ArgumentChecks(regions, bad_report, misaligned, over, pair_a, pair_b, checking,
                          picked, summed)
