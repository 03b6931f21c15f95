"""Bundle-level model of the FLiMS merge unit (Papaphilippou, Luk, Brooks: "FLiMS: Fast
Lightweight Merge Sorter", FPT 2018; IEEE Trans. Computers 71(12), 2022), written from the
papers' description, for the FLiMS unit that issue 47 offers beside MMS.

The mechanism, for E records a cycle: each input's records are dealt to E banks, record t of
every bundle to bank t, so the heads of a side's banks are always its E smallest remaining
records, bank i holding rank (i - o) mod E for the side's rotation o (records taken so far,
mod E). Selector i compares the head of bank i of A with the head of bank E-1-i of B and takes
the smaller, dequeuing only its own bank: one comparator in each loop. The pairs are ranks
(k, E-1-k) because the two rotations always add up to 0 mod E (a cycle takes E records in
all), and the smaller of each such pair are the E smallest remaining records of both sides
(the first half-cleaner step of a bitonic merge). Those winners form a bitonic sequence in
selector order (a rotation of: A's ascending, then B's descending), which the half-cleaner
cascade of a bitonic merge (log2 E stages of E/2 compare-swaps) sorts.

Ties: in a cycle every selector gives equal keys to the same side (so each side's records
taken stay a prefix of it and the rotations stay consistent: selectors that broke ties their
own ways could take A's record of rank k + 1 and leave the equal one of rank k). The side
alternates from cycle to cycle, A first after reset: on a long run of equal keys a tree's
children are then drained equally, each at half the unit's rate, as MMS's alternation does.
A side whose run is exhausted shows a key above every key (its banks' heads belong to its next
run). The model asserts both invariants on every cycle and predicts every record's position,
equal keys included: the half-cleaners keep equal keys in place, as the hardware's
compare-swaps do.
"""

from ..params import MAX_MERGE_RATE, check_power_of_two
from .bitonic import half_clean

__all__ = ["FlimsModel", "flims_comparators"]


def flims_comparators(rate):
    """Comparators of a FLiMS unit of ``rate`` records a cycle: ``rate`` selectors and the
    half-cleaner cascade, ``rate / 2`` compare-swaps in each of its ``log2 rate`` stages."""
    return rate + rate // 2 * (rate.bit_length() - 1)


class FlimsModel:
    """Predict the output bundles of an E-rate FLiMS merge unit (the same interface as
    :class:`~topsort_hdl.core.golden.mms.MmsModel`).

    The side preferred on ties outlives a run, as in the hardware: feed runs in the order the
    hardware sees them.

    Parameters
    ----------
    rate : int
        Records per bundle, a power of two.
    """

    def __init__(self, rate):
        self._rate = check_power_of_two("rate", rate, MAX_MERGE_RATE)
        self.prefer_b = False  # side given equal keys in the next cycle

    @property
    def rate(self):
        return self._rate

    def merge_run(self, a_run, b_run):
        """Merge one run from each input: bundles of ``rate`` ``(key, value)`` records, sorted
        within and across bundles, at least one bundle each. Returns ``len(a_run) +
        len(b_run)`` output bundles as ``(bundle, last)``, ``last`` set on the final one."""
        e = self._rate
        for name, run in (("a_run", a_run), ("b_run", b_run)):
            if not run:
                raise ValueError(f"{name} must hold at least one bundle")
            if any(len(bundle) != e for bundle in run):
                raise ValueError(f"every bundle of {name} must hold {e} records")
        banks = {side: [[bundle[t] for bundle in run] for t in range(e)]
                 for side, run in (("a", a_run), ("b", b_run))}
        taken = {"a": 0, "b": 0}
        remaining = sorted(r for run in (a_run, b_run) for bundle in run for r in bundle)
        outputs = []
        cycles = len(a_run) + len(b_run)
        for cycle in range(cycles):
            if (taken["a"] + taken["b"]) % e:
                raise AssertionError(f"FLiMS rotations out of step at cycle {cycle}")
            winners = []
            for i in range(e):
                a_bank, b_bank = banks["a"][i], banks["b"][e - 1 - i]
                take_a = bool(a_bank) and (not b_bank or a_bank[0][0] < b_bank[0][0]
                                           or a_bank[0][0] == b_bank[0][0] and not self.prefer_b)
                winners.append((a_bank if take_a else b_bank).pop(0))
                taken["a" if take_a else "b"] += 1
            keys = sorted(k for k, _ in winners)
            if keys != [k for k, _ in remaining[:e]]:
                raise AssertionError(f"FLiMS selectors missed the {e} smallest at cycle {cycle}")
            for record in winners:
                remaining.remove(record)
            outputs.append((half_clean(winners), cycle == cycles - 1))
            self.prefer_b = not self.prefer_b
        return outputs

    def merge(self, runs):
        """Merge a sequence of ``(a_run, b_run)`` pairs; return every output bundle in order."""
        outputs = []
        for a_run, b_run in runs:
            outputs.extend(self.merge_run(a_run, b_run))
        return outputs
