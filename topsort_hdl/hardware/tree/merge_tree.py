"""The merge tree (p, l): l leaf streams in, p records per cycle out of the root."""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...core.params import check_merge_unit
from ...core.tree_shape import check_tree_shape, tree_rates
from ..block import Block
from ..merge import FlimsMergeUnit, MmsMergeUnit, SelectMergeUnit
from ..merge.run_selector import MIN_FIFO_DEPTH
from ..records import (
    BundleLayout,
    RecordLayout,
    check_at_least,
    check_positive,
    tree_record,
)
from .coupler import Coupler
from .leaf_buffer import LeafBuffer

__all__ = ["MergeTree", "tree_rates"]

DEFAULT_LEAF_DEPTH = 256   # bundles per leaf buffer: two 1 KB bursts of 8-byte records
# Per merge-unit input in a tree, so in the kernel and in the QoR figures of its merge units
# (tree_merge_unit): 4 loses ~5% to selection bursts, 8 ~1-2%.
DEFAULT_FIFO_DEPTH = 8


class MergeTree(Block):
    """A binary tree of merge units with ``leaves`` leaves and ``rate`` records/cycle at the root.

    Level k (0 is the root) holds 2^k merge units of rate ``max(1, rate >> k)``: MMS units
    and selector-only units at rate 1, or FLiMS units (``merge_unit``). A :class:`Coupler` sits
    wherever the rate doubles toward the root. Every leaf has an input buffer (a FIFO of
    ``leaf_depth`` bundles: small ones map to LUTRAM, burst-sized ones to block RAM). One
    *group* is one run on each leaf; the root emits the group's merged run with ``last`` on its
    final bundle, and groups follow each other without a gap.

    Records are tree records (:func:`~.records.tree_record`): runs that do not fill
    whole bundles end with pad records, and an empty run is one bundle of pads. Pads sort after
    every key and leave the root at the end of their run.

    Parameters
    ----------
    record : RecordLayout
        The record layout outside the tree.
    rate : int
        Root rate p, a power of two no larger than ``leaves``.
    leaves : int
        Number of leaves l, a power of two from 2 to :data:`~.records.MAX_LEAVES`.
    leaf_depth : int
        Bundles each leaf buffer holds (default 256: two 1 KB bursts of 8-byte records at
        one record per bundle). Buffers of 128 bundles or more are marked for block RAM,
        smaller ones for distributed RAM (:class:`LeafBuffer`).
    fifo_depth : int
        Depth of each merge unit's input FIFOs, at least 3 (default 8). The selector can take
        several bundles in a row from one side while the child feeding it produces at half
        that rate; these FIFOs absorb such bursts.
    merge_unit : str
        ``"mms"`` (default) or ``"flims"`` (:data:`~topsort_hdl.core.params.MERGE_UNITS`).

    Members
    -------
    i : In(stream.Signature(BundleLayout(tree_record, leaf_rate))).array(leaves)
        Leaf runs, ``last`` on each run's final bundle.
    o : Out(stream.Signature(BundleLayout(tree_record, rate)))
        Merged runs.
    """

    module_tag_format = "tree_p{rate}_l{leaves}"

    def __init__(self, record, rate, leaves, *, leaf_depth=DEFAULT_LEAF_DEPTH,
                 fifo_depth=DEFAULT_FIFO_DEPTH, merge_unit="mms"):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_tree_shape(rate, leaves)
        check_positive("leaf_depth", leaf_depth)
        check_at_least("fifo_depth", fifo_depth, MIN_FIFO_DEPTH)
        self._merge_unit = check_merge_unit(merge_unit)
        self._fifo_depth = fifo_depth
        self._record = record
        self._padded = tree_record(record)
        self._rate = rate
        self._leaves = leaves
        self._rates = tree_rates(rate, leaves)
        self._leaf_depth = leaf_depth
        super().__init__({
            "i": In(stream.Signature(BundleLayout(self._padded, self.leaf_rate))).array(leaves),
            "o": Out(stream.Signature(BundleLayout(self._padded, rate))),
        })

    @property
    def record(self):
        return self._record

    @property
    def padded(self):
        """The tree record layout."""
        return self._padded

    @property
    def rate(self):
        return self._rate

    @property
    def leaves(self):
        return self._leaves

    @property
    def rates(self):
        """Merge-unit rate per level, root first."""
        return list(self._rates)

    @property
    def leaf_rate(self):
        return self._rates[-1]

    def elaborate(self, platform):
        m = Module()
        leaf_bundle = BundleLayout(self._padded, self.leaf_rate)
        sources = [buffered(m, f"leaf{index}", self.i[index], leaf_bundle, self._leaf_depth)
                   for index in range(self._leaves)]
        root = build_unit_tree(m, self._padded, self._rates, sources, "", self._fifo_depth,
                               self._merge_unit)
        wiring.connect(m, root, wiring.flipped(self.o))
        return m


def tree_merge_unit(padded, rate, input_depth=DEFAULT_FIFO_DEPTH, kind="mms"):
    """The merge unit a tree of ``kind`` units places at ``rate`` for the tree record
    ``padded``: MMS above rate 1 and the selector alone at rate 1, or FLiMS at every rate (its
    rate-1 unit is smaller than the selector). Resource estimates build their units with this
    too."""
    if check_merge_unit(kind) == "flims":
        return FlimsMergeUnit(padded, rate, input_depth=input_depth)
    if rate == 1:
        return SelectMergeUnit(padded, input_depth=input_depth)
    return MmsMergeUnit(padded, rate, input_depth=input_depth)


def build_unit_tree(m, padded, rates, sources, prefix, input_depth=DEFAULT_FIFO_DEPTH,
                    kind="mms"):
    """Add a tree of ``kind`` merge units over ``sources`` to ``m``; return the root's output
    stream.

    ``rates`` lists the unit rates per level, root first; ``sources`` are the leaf-level
    units' inputs (two per unit). Couplers go wherever the rate doubles toward the root.
    """
    levels = len(rates)
    for level in reversed(range(levels)):
        outputs = []
        for index in range(1 << level):
            unit = tree_merge_unit(padded, rates[level], input_depth, kind)
            m.submodules[f"{prefix}l{level}u{index}"] = unit
            for side, source in zip((unit.a, unit.b), sources[2 * index:2 * index + 2],
                                    strict=True):
                wiring.connect(m, source, side)
            outputs.append(unit.o)
        if level and rates[level - 1] == 2 * rates[level]:
            coupled = []
            for index, output in enumerate(outputs):
                coupler = Coupler(padded, rates[level])
                m.submodules[f"{prefix}c{level}u{index}"] = coupler
                wiring.connect(m, output, coupler.i)
                coupled.append(coupler.o)
            outputs = coupled
        sources = outputs
    (root,) = sources
    return root


def buffered(m, name, port, layout, depth):
    """Put a leaf buffer of ``depth`` on the input stream ``port`` (a member of the block's
    own, so flipped); return the stream out."""
    buffer = LeafBuffer(shape=layout, depth=depth)
    m.submodules[name] = buffer
    wiring.connect(m, wiring.flipped(port), buffer.i)
    return buffer.o
