"""Bitonic merge networks: two sorted bundles in, one sorted bundle (or one half of it) out."""

from dataclasses import dataclass

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..block import Block
from ..records import MAX_MERGE_RATE, RecordLayout, check_power_of_two, check_range
from .cas import less_than, record_key, swap_condition

__all__ = ["BitonicMergeNetwork", "BitonicMerger", "Entry", "merge_layers", "network_comparators"]

KEEP = ("all", "lower", "upper")


def merge_layers(rate):
    """Return the compare-swap pairs of a bitonic merge of ``a + reversed(b)``, layer by layer.

    Each pair ``(i, j)`` with ``i < j`` puts the element that comes first at ``i``.
    """
    size = 2 * rate
    layers = []
    stride = rate
    while stride:
        layers.append([(i, i + stride) for i in range(size) if not i & stride])
        stride //= 2
    return layers


def _live(rate, keep, position):
    """Whether output ``position`` of a network keeping ``keep`` is computed."""
    if keep == "lower":
        return position < rate
    if keep == "upper":
        return position >= rate
    return True


def network_comparators(rate, keep="all"):
    """Comparators of a :class:`BitonicMergeNetwork` of ``rate`` keeping ``keep``."""
    return sum(1 for layer in merge_layers(rate) for i, j in layer
               if _live(rate, keep, i) or _live(rate, keep, j))


@dataclass(frozen=True)
class Entry:
    """Where an element entered the network, as values: ``side_b`` is 1 for input ``b``,
    ``index`` its place in that input, less the low bits that every element meeting at the
    comparator shares (it orders them all the same: for two elements of one side, smaller
    ``index``, smaller place)."""

    side_b: Value
    index: Value


def _register_after(layer, layers, stages):
    # Spread `stages` registers evenly over the layers, the last one after the final layer.
    return (layer + 1) * stages // layers > layer * stages // layers


class BitonicMergeNetwork(wiring.Component):
    """Merge two sorted bundles with a pipelined bitonic network.

    The network sees ``a + reversed(b)`` (a bitonic sequence) and applies ``log2(2 * rate)``
    layers of half-cleaners. It can compute only one half of its output: the first layer then
    keeps one element of each pair, and later layers never cross halves, so the half network
    costs ``rate + (rate / 2) * log2(rate)`` comparators instead of about twice that.

    Parameters
    ----------
    layout : data.Layout
        Layout of one element.
    rate : int
        Elements per input bundle: a power of two up to
        :data:`~topsort_hdl.hardware.records.MAX_MERGE_RATE`.
    keep : ``"all"``, ``"lower"`` or ``"upper"``
        Which outputs to compute: all ``2 * rate``, or the first or last ``rate`` in order.
    stages : int or None
        Pipeline registers, 0 (combinational) to ``log2(2 * rate)``; default one per layer.
    descending : bool
        Inputs and output are in descending order of key.
    order_key : callable
        Maps an element view to the value it is ordered by; default: its ``key`` field.
    tie_break : callable or None
        Orders elements of equal key by where they entered: ``tie_break(x, y, position,
        tie_in)`` is a 1-bit value (or a bool), true when the element that entered as ``x``
        comes before the one that entered as ``y``. ``x`` and ``y`` are :class:`Entry` values
        (the side, 1 for ``b``, and the place in that input), ``position`` is the
        comparator's first output (for a caller that keeps per-lane copies of a signal) and
        ``tie_in`` the input of that name as it was when the elements entered. It must be a
        strict order under which both inputs are sorted. The network carries no tags for it:
        each element carries only which way it went in each layer (one bit per layer so
        far), which is all of its entry the network does not know already, and each
        comparator feeds the tie to the key comparison as its carry-in, so the comparison
        stays as wide as the key. Default: equal keys stay put.
    tie_width : int
        Width of the ``tie_in`` input, sampled with ``a`` and ``b`` for the tie break.
    exclusion : bool
        With ``keep`` ``"lower"`` or ``"upper"``, add inputs ``a_excluded`` and ``b_excluded``:
        an excluded bundle never reaches the kept half, which is then the other bundle, sorted
        (as if the excluded one ranked beyond every key). Both excluded: the output is
        unspecified.

    Members
    -------
    a, b : In(ArrayLayout(layout, rate))
        The sorted bundles.
    en : In(1)
        Pipeline advance; while low every register holds.
    o : Out(ArrayLayout(layout, n))
        The merged elements, ``latency`` advances after their inputs; ``n`` is ``2 * rate``
        for ``keep="all"``, else ``rate``.
    a_excluded, b_excluded : In(1)
        With ``exclusion`` only: the bundle on ``a`` (``b``) is left out of the kept half.
    tie_in : In(tie_width)
        With ``tie_width`` only: what the tie break depends on, besides where elements entered.
    """

    module_tag_format = "bitonic_{keep}_e{rate}"

    def __init__(self, layout, rate, *, keep="all", stages=None, descending=False,
                 order_key=record_key, tie_break=None, tie_width=0, exclusion=False):
        if not isinstance(layout, data.Layout):
            raise TypeError(f"layout must be a data.Layout, not {layout!r}")
        check_power_of_two("rate", rate, MAX_MERGE_RATE)
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(KEEP)}, not {keep!r}")
        if exclusion and keep == "all":
            raise ValueError("exclusion needs keep='lower' or keep='upper', not keep='all'")
        layers = exact_log2(2 * rate)
        stages = layers if stages is None else check_range("stages", stages, 0, layers)
        self._layout = layout
        self._rate = rate
        self._keep = keep
        self._stages = stages
        self._descending = descending
        self._order_key = order_key
        self._tie_break = tie_break
        self._exclusion = exclusion
        outputs = 2 * rate if keep == "all" else rate
        members = {
            "a": In(data.ArrayLayout(layout, rate)),
            "b": In(data.ArrayLayout(layout, rate)),
            "en": In(1, init=1),
            "o": Out(data.ArrayLayout(layout, outputs)),
        }
        if exclusion:
            members.update(a_excluded=In(1), b_excluded=In(1))
        if tie_width:
            members.update(tie_in=In(tie_width))
        super().__init__(members)

    @property
    def rate(self):
        return self._rate

    @property
    def latency(self):
        """Pipeline registers between input and output."""
        return self._stages

    @property
    def comparators(self):
        """Number of comparators the network instantiates."""
        return network_comparators(self._rate, self._keep)

    def _live(self, position):
        return _live(self._rate, self._keep, position)

    def elaborate(self, platform):
        m = Module()
        rate = self._rate
        layers = merge_layers(rate)
        elements = [self.a[i] for i in range(rate)]
        elements += [self.b[i] for i in reversed(range(rate))]
        # With a tie break, each element carries what the network cannot tell from its
        # position: per layer so far, whether it stayed at its position or came from the
        # partner's (see _entry), as one vector.
        tracked = self._tie_break is not None
        paths = [Const(0, 0) for _ in elements]
        # The tie break's input travels beside the elements.
        tie_in = self.tie_in if hasattr(self, "tie_in") else None
        for index, layer in enumerate(layers):
            registered = _register_after(index, len(layers), self._stages)
            final = index == len(layers) - 1
            following, following_paths = list(elements), list(paths)
            entered = {p: self._entry(p, paths[p]) for i, j in layer for p in (i, j)
                       if tracked and (self._live(i) or self._live(j))}
            for i, j in layer:
                if not (self._live(i) or self._live(j)):
                    continue
                # (one signal: each use of an expression would repeat it in the netlist)
                swap = Signal(name=f"l{index}_{i}_swap")
                m.d.comb += swap.eq(self._swap(index, i, j, elements, entered, tie_in))
                for position, partner in ((i, j), (j, i)):
                    if not self._live(position):
                        continue
                    # Data registers need no reset (valid travels beside them): no reset
                    # fan-out, and synthesis may pack them freely.
                    following[position] = self._stage(
                        m, Mux(swap, elements[partner], elements[position]), self._layout,
                        f"l{index}_{position}", registered)
                    if tracked and not final:
                        # (both elements of a pair stayed, or both crossed: one new bit)
                        following_paths[position] = self._stage(
                            m, Cat(Mux(swap, paths[partner], paths[position]), ~swap),
                            index + 1, f"l{index}_{position}_path", registered)
            elements, paths = following, following_paths
            if tie_in is not None and not final:
                tie_in = self._stage(m, tie_in, len(tie_in), f"l{index}_tie_in", registered)
        kept = [p for p in range(2 * rate) if self._live(p)]
        for out, position in enumerate(kept):
            m.d.comb += self.o[out].eq(elements[position])
        return m

    def _stage(self, m, value, shape, name, registered):
        result = Signal(shape, name=name, reset_less=registered)
        if registered:
            with m.If(self.en):
                m.d.sync += result.eq(value)
        else:
            m.d.comb += result.eq(value)
        return result

    def _swap(self, layer, i, j, elements, entered, tie_in):
        """Whether the elements at ``i`` and ``j`` are out of order."""
        excluding = self._exclusion and layer == 0
        if self._tie_break is None and not excluding:
            return swap_condition(elements[i], elements[j], self._descending, self._order_key)
        # Out of order: j's key comes first in the output's order, or the keys are equal and
        # j's element comes first. Worked out as its negation, in order (i's key first, or
        # equal keys and i's element first), so that the tie reaches the carry chain's lowest
        # bit as it is: a flip-flop there needs no inverter.
        if self._tie_break is None:
            tie = Const(0, 1)   # equal keys stay put
        else:
            tie = self._tie(entered[j], entered[i], i, tie_in)
        first, second = (j, i) if not self._descending else (i, j)
        below, above = Const(0, 1), Const(0, 1)
        if excluding:
            # Each first-layer pair holds an element of a (at i) and one of b (at j) and keeps
            # one: an excluded side's element goes to the other half whatever the keys. One
            # bit above the keys forces the comparison, so the carry chain does it, not a LUT
            # level after it.
            upper = self._keep == "upper"
            stays, crosses = ((self.a_excluded, self.b_excluded) if upper
                              else (self.b_excluded, self.a_excluded))
            below, above = crosses, stays
        return ~less_than(Cat(Const(0, 1), self._order_key(elements[second]), below),
                          Cat(~tie, self._order_key(elements[first]), above))

    def _tie(self, early, late, position, tie_in):
        """Whether the element that entered as ``early`` comes before the one that entered as
        ``late`` on equal keys."""
        tie = self._tie_break(early, late, position, tie_in)
        return Const(int(tie), 1) if isinstance(tie, bool) else Value.cast(tie)

    def _entry(self, position, path):
        """The :class:`Entry` of the element at ``position``: it entered at ``position`` XOR
        the strides of the layers it crossed (bit ``top - l`` for layer ``l``)."""
        width = exact_log2(2 * self._rate)
        # Each bit as (path bit or None, inverted): inversions fold here, not in the netlist.
        bits = [(None, bool((position >> b) & 1)) for b in range(width)]
        for layer in range(len(path)):
            bit = width - 1 - layer
            bits[bit] = (path[layer], not (position >> bit) & 1)   # 0 or 1, XOR crossed

        def xor(x, y):
            (vx, ix), (vy, iy) = x, y
            value = vy if vx is None else vx if vy is None else vx ^ vy
            return value, ix != iy

        def value(bit):
            v, inverted = bit
            return Const(int(inverted), 1) if v is None else ~v if inverted else v

        side = bits[-1]
        # b enters reversed: place 2 * rate - 1 - position, the low bits inverted. The bits
        # below the current layer's stride are the same for both elements of its pairs.
        top = width - 1
        index = Cat(*(value(xor(bit, side)) for bit in bits[top - len(path):top]))
        return Entry(value(side), index if len(index) else Const(0, 1))


class BitonicMerger(Block):
    """Merge two sorted record bundles into one sorted bundle of twice the size.

    A stream wrapper of :class:`BitonicMergeNetwork` for standalone use: one bundle from each
    input is taken together, and the whole pipeline holds while the output is stalled.

    Parameters
    ----------
    record : RecordLayout
        Record layout.
    rate : int
        Records per input bundle: a power of two up to
        :data:`~topsort_hdl.hardware.records.MAX_MERGE_RATE`.
    stages : int or None
        Pipeline registers, as for :class:`BitonicMergeNetwork`.
    descending : bool
        Inputs and output in descending order of key.

    Members
    -------
    a, b : In(stream.Signature(ArrayLayout(record, rate)))
        Sorted input bundles (record ``i`` at bits ``[i*W+W-1 : i*W]``).
    o : Out(stream.Signature(ArrayLayout(record, 2 * rate)))
        The merged records.
    """

    def __init__(self, record, rate, *, stages=None, descending=False):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        self._network = BitonicMergeNetwork(record, rate, stages=stages, descending=descending)
        super().__init__({
            "a": In(stream.Signature(data.ArrayLayout(record, rate))),
            "b": In(stream.Signature(data.ArrayLayout(record, rate))),
            "o": Out(stream.Signature(data.ArrayLayout(record, 2 * rate))),
        })

    @property
    def latency(self):
        return self._network.latency

    def elaborate(self, platform):
        m = Module()
        m.submodules.network = network = self._network
        both = self.a.valid & self.b.valid
        m.d.comb += [
            network.a.eq(self.a.payload),
            network.b.eq(self.b.payload),
            self.o.payload.eq(network.o),
        ]
        if network.latency == 0:
            m.d.comb += self.o.valid.eq(both)
            advance = self.o.ready
        else:
            # A pipeline of valid bits beside the data; everything holds while the output
            # stalls, so valid and payload stay put until the transfer.
            advance = ~self.o.valid | self.o.ready
            valid = both
            for stage in range(network.latency):
                registered = Signal(name=f"valid_{stage}")
                with m.If(advance):
                    m.d.sync += registered.eq(valid)
                valid = registered
            m.d.comb += [network.en.eq(advance), self.o.valid.eq(valid)]
        m.d.comb += [
            self.a.ready.eq(advance & self.b.valid),
            self.b.ready.eq(advance & self.a.valid),
        ]
        return m
