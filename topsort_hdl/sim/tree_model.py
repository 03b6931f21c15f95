"""Models of a merge-tree pass and of the phase-2 reuse tree, exact to the bundle.

A tree is modelled as what it is built from: one merge-unit model per merge unit
(:class:`MmsModel` for MMS and the selector, :class:`FlimsModel` for FLiMS units; each keeps
its own tie state between groups, as the hardware does) and couplers that pack two r-record
bundles into one 2r-record bundle, padding a run's odd last bundle.
"""

from ..core.golden.flims import FlimsModel
from ..core.golden.mms import MmsModel
from ..core.params import check_merge_unit
from ..hardware.records import check_power_of_two, pad_key, pad_run, strip_pads, tree_record

__all__ = ["couple", "tree_rates", "unit_model", "MergeTreeModel", "ReuseTreeModel"]


def tree_rates(rate, leaves):
    """Return the merge-unit rate of each level, root first: ``max(1, rate >> level)``.

    The paper's rule, written here again on purpose: the model does not take the hardware's.
    """
    levels = leaves.bit_length() - 1
    return [max(1, rate >> level) for level in range(levels)]


def couple(bundles, padded):
    """Pack one run's r-record bundles into 2r-record bundles (pads fill an odd last one)."""
    pad = (pad_key(padded), 0)
    if len(bundles) % 2:
        bundles = bundles + [[pad] * len(bundles[0])]
    return [bundles[i] + bundles[i + 1] for i in range(0, len(bundles), 2)]


def unit_model(kind, rate):
    """The model of the merge unit a tree of ``kind`` units places at ``rate`` (MmsModel(1)
    models the selector an MMS tree has at rate 1)."""
    return FlimsModel(rate) if check_merge_unit(kind) == "flims" else MmsModel(rate)


class _UnitTree:
    """A binary tree of merge-unit models over bundle sources, rates doubling toward the
    root."""

    def __init__(self, rates, kind):
        self.rates = rates
        self.units = {(level, index): unit_model(kind, rate) for level, rate in enumerate(rates)
                      for index in range(1 << level)}

    def merge(self, sources, padded, level=0, index=0):
        """Merge one run from each source (lists of bundles at the leaf-level rate); return
        the root's bundles of this run."""
        if level == len(self.rates) - 1:
            a, b = sources[2 * index], sources[2 * index + 1]
        else:
            a, b = (self.merge(sources, padded, level + 1, 2 * index + side) for side in (0, 1))
            if self.rates[level] == 2 * self.rates[level + 1]:
                a, b = couple(a, padded), couple(b, padded)
        return [bundle for bundle, _ in self.units[level, index].merge_run(a, b)]


class MergeTreeModel:
    """A merge tree (p, l): l leaf runs per group in, one merged run per group out.

    Parameters
    ----------
    record : RecordLayout
        Record layout outside the tree (the model uses :func:`tree_record` inside).
    rate : int
        Root rate p.
    leaves : int
        Number of leaves l.
    merge_unit : str
        The kind of merge unit above rate 1, as the tree's.
    """

    def __init__(self, record, rate, leaves, merge_unit="mms"):
        check_power_of_two("rate", rate)
        check_power_of_two("leaves", leaves)
        self.padded = tree_record(record)
        self.rate = rate
        self.leaves = leaves
        self._tree = _UnitTree(tree_rates(rate, leaves), merge_unit)

    @property
    def leaf_rate(self):
        return self._tree.rates[-1]

    def leaf_bundles(self, run):
        """The bundles a leaf receives for one sorted run (padded, at least one)."""
        return pad_run(sorted(run, key=lambda r: r[0]), self.leaf_rate, self.padded)

    def merge_group(self, runs):
        """Merge one group (``leaves`` sorted runs of ``(key, value)``); return the root's
        bundles, pads included."""
        if len(runs) != self.leaves:
            raise ValueError(f"a group holds {self.leaves} runs, not {len(runs)}")
        return self._tree.merge([self.leaf_bundles(run) for run in runs], self.padded)

    def records(self, bundles):
        """The real records of a run's bundles, in order."""
        return strip_pads([r for bundle in bundles for r in bundle], self.padded)


class ReuseTreeModel:
    """The phase-2 reuse switch: ``trees`` trees (p, l) plus extra units of rates 2p, 4p, ...

    Phase 1: each tree merges its own groups. Phase 2: the trees' roots feed the extra units,
    one tree of ``trees * l`` leaves and ``trees * p`` records per cycle. The tree models (and
    their tie state) are the same in both modes, as the hardware is.
    """

    def __init__(self, record, trees, rate, leaves, merge_unit="mms"):
        check_power_of_two("trees", trees, low=2)
        self.trees = [MergeTreeModel(record, rate, leaves, merge_unit) for _ in range(trees)]
        self.padded = self.trees[0].padded
        self.rate = rate
        self.leaves = leaves
        extra_rates = [rate * trees >> level for level in range(trees.bit_length() - 1)]
        self._extra = _UnitTree(extra_rates, merge_unit)

    def phase1(self, groups):
        """One group per tree; return each tree's root bundles."""
        return [tree.merge_group(group) for tree, group in zip(self.trees, groups, strict=True)]

    def phase2(self, runs):
        """One group of ``trees * leaves`` runs; return the wide root's bundles."""
        if len(runs) != len(self.trees) * self.leaves:
            raise ValueError(f"a phase-2 group holds {len(self.trees) * self.leaves} runs, "
                             f"not {len(runs)}")
        roots = [tree.merge_group(runs[i * self.leaves:(i + 1) * self.leaves])
                 for i, tree in enumerate(self.trees)]
        return self._extra.merge([couple(bundles, self.padded) for bundles in roots],
                                 self.padded)

    def records(self, bundles):
        return strip_pads([r for bundle in bundles for r in bundle], self.padded)
