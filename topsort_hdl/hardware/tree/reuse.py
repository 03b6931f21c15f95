"""The phase-2 merge-tree reuse switch (TopSort section IV-C)."""

from amaranth.asserts import AnyConst
from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ...core.tree_shape import check_tree_shape, extra_rates
from ..block import Block
from ..properties import check, is_formal, stream_rules
from ..records import BundleLayout, RecordLayout, check_power_of_two
from .coupler import Coupler
from .merge_tree import DEFAULT_FIFO_DEPTH, DEFAULT_LEAF_DEPTH, MergeTree, build_unit_tree

__all__ = ["ReuseSwitch", "PHASE1", "PHASE2", "extra_rates"]

PHASE1, PHASE2 = 0, 1


class ReuseSwitch(Block):
    """``trees`` merge trees (p, l) that also form one wide tree for phase 2.

    Phase 1 (``mode`` = 0): each tree merges its own leaves to its own output ``o[t]``.
    Phase 2 (``mode`` = 1): the trees' roots go through couplers into extra merge units of
    rates 2p, 4p, ... (log2 ``trees`` levels), and ``wide`` carries one tree of
    ``trees * l`` leaves and ``trees * p`` records per cycle. The trees exist once and serve
    both modes; only where their roots go changes.

    Change ``mode`` only between jobs, when every tree is empty (no reset is needed).

    Parameters
    ----------
    record : RecordLayout
        The record layout outside the trees.
    trees : int
        Number of reused trees r, a power of two of at least 2.
    rate, leaves : int
        Shape (p, l) of each tree.
    leaf_depth, fifo_depth : int
        Bundles per leaf buffer and per merge-unit input FIFO, as for :class:`MergeTree`.
    merge_unit : str
        The merge units of the trees and the extra levels, as for :class:`MergeTree`.

    Members
    -------
    mode : In(1)
        0: phase 1, 1: phase 2.
    i : In(stream.Signature(BundleLayout(tree_record, leaf_rate))).array(trees * leaves)
        Leaves; tree t has leaves ``t*l`` to ``t*l + l - 1``.
    o : Out(stream.Signature(BundleLayout(tree_record, rate))).array(trees)
        Phase-1 outputs, one per tree (idle in phase 2).
    wide : Out(stream.Signature(BundleLayout(tree_record, trees * rate)))
        Phase-2 output (idle in phase 1).
    """

    module_tag_format = "reuse_t{trees}_p{rate}_l{leaves}"

    def __init__(self, record, trees, rate, leaves, *, leaf_depth=DEFAULT_LEAF_DEPTH,
                 fifo_depth=DEFAULT_FIFO_DEPTH, merge_unit="mms"):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("trees", trees, low=2)
        check_tree_shape(rate, leaves)
        self._trees = [MergeTree(record, rate, leaves, leaf_depth=leaf_depth,
                                 fifo_depth=fifo_depth, merge_unit=merge_unit)
                       for _ in range(trees)]
        self._fifo_depth = fifo_depth
        self._merge_unit = merge_unit
        padded = self._trees[0].padded
        self._padded = padded
        self._rate = rate
        self._leaves = leaves
        leaf = BundleLayout(padded, self._trees[0].leaf_rate)
        super().__init__({
            "mode": In(1),
            "i": In(stream.Signature(leaf)).array(trees * leaves),
            "o": Out(stream.Signature(BundleLayout(padded, rate))).array(trees),
            "wide": Out(stream.Signature(BundleLayout(padded, trees * rate))),
        })

    @property
    def trees(self):
        """The merge trees (the same objects serve both modes)."""
        return list(self._trees)

    @property
    def padded(self):
        return self._padded

    @property
    def extra_rates(self):
        """Rates of the extra levels, root first (4p, 2p for four trees)."""
        return extra_rates(self._rate, len(self._trees))

    def elaborate(self, platform):
        m = Module()
        phase2 = self.mode == PHASE2
        feeds = []
        for index, tree in enumerate(self._trees):
            m.submodules[f"tree{index}"] = tree
            for leaf in range(self._leaves):
                wiring.connect(m, wiring.flipped(self.i[index * self._leaves + leaf]),
                               tree.i[leaf])
            # Phase 2 packs the root's p-record bundles for the first extra level (2p).
            coupler = Coupler(self._padded, self._rate)
            m.submodules[f"couple{index}"] = coupler
            output = self.o[index]
            m.d.comb += [
                output.payload.eq(tree.o.payload),
                coupler.i.payload.eq(tree.o.payload),
                output.valid.eq(tree.o.valid & ~phase2),
                coupler.i.valid.eq(tree.o.valid & phase2),
                tree.o.ready.eq(Mux(phase2, coupler.i.ready, output.ready)),
            ]
            feeds.append(coupler.o)
        root = build_unit_tree(m, self._padded, self.extra_rates, feeds, "extra_",
                               self._fifo_depth, self._merge_unit)
        wiring.connect(m, root, wiring.flipped(self.wide))
        if is_formal(platform):
            self._properties(m)
        return m

    def _properties(self, m):
        """The routing (formal builds only), given a ``mode`` that stays put: in phase 1 each
        output ``o[t]`` carries what tree t's leaves brought (for a record value the solver
        chooses, never more of it than entered them) and ``wide`` is idle; in phase 2 the
        outputs ``o`` are idle and ``wide`` carries what all leaves brought. Every output keeps
        the stream rules."""
        chosen = Signal(self._padded, name="routing_record")
        m.d.comb += chosen.as_value().eq(AnyConst(self._padded.size))

        def matches(port):
            taken = port.valid & port.ready
            return Mux(taken, sum(r.as_value() == chosen.as_value()
                                  for r in port.payload.records), 0)

        def counter(name, amount):
            count = Signal(10, name=name)
            m.d.sync += count.eq(count + amount)
            return count

        phase2 = self.mode == PHASE2
        entered_all, left_wide = 0, matches(self.wide)
        stream_rules(m, self.wide, "wide")
        for t, output in enumerate(self.o):
            stream_rules(m, output, f"o{t}")
            leaves = self.i[t * self._leaves:(t + 1) * self._leaves]
            entered = counter(f"entered{t}", sum(matches(leaf) for leaf in leaves))
            left = counter(f"left{t}", matches(output))
            entered_all = entered_all + entered
            check(m, ~(phase2 & output.valid), f"o{t} offers a bundle in phase 2")
            check(m, left <= entered, f"o{t} carries records its tree's leaves did not bring")
        left_all = counter("left_wide", left_wide)
        check(m, ~(~phase2 & self.wide.valid), "wide offers a bundle in phase 1")
        check(m, left_all <= entered_all, "wide carries records the leaves did not bring")
