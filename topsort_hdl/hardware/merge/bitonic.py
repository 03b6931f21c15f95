"""Bitonic merge networks: two sorted bundles in, one sorted bundle (or one half of it) out."""

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..block import Block
from ..records import MAX_MERGE_RATE, RecordLayout, check_power_of_two, check_range
from .cas import record_key, swap_condition

__all__ = ["BitonicMergeNetwork", "BitonicMerger", "merge_layers", "network_comparators"]

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

    Members
    -------
    a, b : In(ArrayLayout(layout, rate))
        The sorted bundles.
    en : In(1)
        Pipeline advance; while low every register holds.
    o : Out(ArrayLayout(layout, n))
        The merged elements, ``latency`` advances after their inputs; ``n`` is ``2 * rate``
        for ``keep="all"``, else ``rate``.
    """

    module_tag_format = "bitonic_{keep}_e{rate}"

    def __init__(self, layout, rate, *, keep="all", stages=None, descending=False,
                 order_key=record_key):
        if not isinstance(layout, data.Layout):
            raise TypeError(f"layout must be a data.Layout, not {layout!r}")
        check_power_of_two("rate", rate, MAX_MERGE_RATE)
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {', '.join(KEEP)}, not {keep!r}")
        layers = exact_log2(2 * rate)
        stages = layers if stages is None else check_range("stages", stages, 0, layers)
        self._layout = layout
        self._rate = rate
        self._keep = keep
        self._stages = stages
        self._descending = descending
        self._order_key = order_key
        outputs = 2 * rate if keep == "all" else rate
        super().__init__({
            "a": In(data.ArrayLayout(layout, rate)),
            "b": In(data.ArrayLayout(layout, rate)),
            "en": In(1, init=1),
            "o": Out(data.ArrayLayout(layout, outputs)),
        })

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
        layers = merge_layers(self._rate)
        elements = [self.a[i] for i in range(self._rate)]
        elements += [self.b[i] for i in reversed(range(self._rate))]
        for index, layer in enumerate(layers):
            registered = _register_after(index, len(layers), self._stages)
            following = list(elements)
            for i, j in layer:
                swap = swap_condition(elements[i], elements[j], self._descending,
                                      self._order_key)
                for position, chosen, other in ((i, elements[j], elements[i]),
                                                (j, elements[i], elements[j])):
                    if not self._live(position):
                        continue
                    # Data registers need no reset (valid travels beside them): no reset
                    # fan-out, and synthesis may pack them freely.
                    result = Signal(self._layout, name=f"l{index}_{position}",
                                    reset_less=registered)
                    if registered:
                        with m.If(self.en):
                            m.d.sync += result.eq(Mux(swap, chosen, other))
                    else:
                        m.d.comb += result.eq(Mux(swap, chosen, other))
                    following[position] = result
            elements = following
        kept = [p for p in range(2 * self._rate) if self._live(p)]
        for out, position in enumerate(kept):
            m.d.comb += self.o[out].eq(elements[position])
        return m


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
