"""Exact co-ranks of sorted runs: where to cut every run so that a merge splits into parts.

For an output rank k of the merge of sorted runs, the co-ranks are one cut per run such that the
records before the cuts are exactly the merge's first k records, in the strict order (key,
run, position) (multisequence selection: Varman, Scheufler, Iyer and Ricard, "Merging multiple
lists on hierarchical-memory multiprocessors", JPDC 1991; Merge Path for two runs). Parts cut at
the ranks ``m * N / P`` are exactly equal in size whatever the keys, equal keys included, and
merging each part on its own and concatenating the parts gives the whole merge.

:func:`co_ranks` finds them the way a hardware engine can, from probes of single records: a
bisection on the key's bits, most significant first (each step counts, in every run, the
records below a candidate key by a binary search), then the records equal to the key found are
handed out run by run up to the rank. It counts its probes, the figure the engine's time
follows. The phase-2 parts of docs/throughput.md (step 3) are built on it.
"""

from dataclasses import dataclass

__all__ = ["CoRanks", "co_ranks", "split_ranks"]


@dataclass(frozen=True)
class CoRanks:
    cuts: tuple          # one per run: its records before the cut come first
    key: int             # the key at the rank (None past the last record)
    probes: int          # records read by the binary searches


def _lower_bound(run, key, keys):
    """Records of ``run`` whose key is below ``key``, and the probes it took."""
    low, high, probes = 0, len(run), 0
    while low < high:
        middle = (low + high) // 2
        probes += 1
        if keys(run[middle]) < key:
            low = middle + 1
        else:
            high = middle
    return low, probes


def co_ranks(runs, rank, key_bits, key=lambda record: record[0]):
    """The :class:`CoRanks` of output rank ``rank`` (0 to the total) of the merge of ``runs``
    (each sorted by ``key``, unsigned keys of ``key_bits`` bits)."""
    total = sum(len(run) for run in runs)
    if not 0 <= rank <= total:
        raise ValueError(f"rank must be between 0 and {total}, not {rank}")
    if rank == total:
        return CoRanks(tuple(len(run) for run in runs), None, 0)
    probes = 0

    def below(candidate):
        nonlocal probes
        counts = []
        for run in runs:
            count, taken = _lower_bound(run, candidate, key)
            counts.append(count)
            probes += taken
        return counts

    # The largest key with at most ``rank`` records below it: the key of record ``rank``.
    found = 0
    for bit in reversed(range(key_bits)):
        candidate = found | 1 << bit
        if sum(below(candidate)) <= rank:
            found = candidate
    cuts = below(found)
    left = rank - sum(cuts)                 # records of key ``found`` that still come first
    for i, run in enumerate(runs):
        equal, taken = _lower_bound(run, found + 1, key)
        probes += taken
        take = min(left, equal - cuts[i])
        cuts[i] += take
        left -= take
    assert left == 0
    return CoRanks(tuple(cuts), found, probes)


def split_ranks(total, parts):
    """The ranks that cut a merge of ``total`` records into ``parts`` parts of equal size (the
    first ``total % parts`` one record longer): ``parts + 1`` ranks from 0 to ``total``."""
    size, extra = divmod(total, parts)
    return [m * size + min(m, extra) for m in range(parts + 1)]
