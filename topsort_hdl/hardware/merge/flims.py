"""The FLiMS streaming merge unit: E records per cycle from banked inputs, half MMS's compare-swaps.

FLiMS is Papaphilippou, Luk and Brooks, "FLiMS: Fast Lightweight Merge Sorter" (FPT 2018) and
"FLiMS: a Fast Lightweight 2-way Merger for Sorting" (IEEE Trans. Computers 71(12), 2022): this
is written from their description, not from any published RTL.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.utils import exact_log2

from ..properties import is_formal
from .bitonic import BitonicMergeNetwork
from .cas import less_than
from .credit import CreditCounter
from .lanes import BankedQueue, LaneFIFO
from .unit import StreamMergeUnit

__all__ = ["FlimsMergeUnit"]


class FlimsMergeUnit(StreamMergeUnit):
    """Merge two streams of sorted runs at ``rate`` records per cycle with FLiMS.

    Each input's records are dealt to ``rate`` banks as they arrive, record t of every bundle
    to bank t (a FIFO each), so the heads of one side's banks are always its E smallest
    remaining records, in a rotated order. Selector i compares the head of bank i of ``a``
    with the head of bank E-1-i of ``b`` and dequeues only the winner: each bank's loop is one
    comparator. The two rotations always add up to a multiple of E (a step takes E records in
    all), so the pairs are ranks (k, E-1-k) and the winners are the E smallest remaining of
    both sides (the first layer of a bitonic merge), a rotated bitonic sequence that the
    half-cleaner cascade of a bitonic merge (log2 E layers of E/2 compare-swaps) sorts. MMS
    spends a second network and a bundle-wide selector on the same result.

    Which of the journal's variants: the plain one, with every selector of a cycle giving
    equal keys to the same side (each side's taken records then stay a prefix of it, so the
    rotations stay in step, with no tags), that side alternating by cycle as MMS's ties do;
    not the stable variant (it tags records with their origin; nothing here promises
    stability), nor the one with fewer dequeue signals (one per bank is what makes the loop
    local). Skewed input costs nothing here: a side can supply a bundle per cycle, E records.

    Runs: every bank's entry carries its bundle's ``last``. A bank that has given up its
    record of the run's last bundle is *ahead*: its head belongs to the next run and ranks
    above every key (a bit above the key in the comparison, so no key value is reserved). A
    side's run is over when its bank E-1, which holds each run's largest record, is ahead; a
    step that ends both sides' runs clears every bank's flag, so the next step merges the next
    runs: no idle cycle between runs. Two paired banks are never both ahead while the runs
    last, as the remaining records are a whole number of bundles.

    A step takes E records when every bank head it may need is there (loaded or ahead) and
    the output FIFO has room for everything in flight (credit counting), so the pipeline after
    the selectors never stalls and the output keeps a plain valid/ready contract. The
    winners are registered, then sorted by the cascade (``network_stages`` registers).

    Parameters and members: those of :class:`.unit.StreamMergeUnit`; ``input_depth`` is the
    depth of each bank's FIFO.
    """

    module_tag_format = "flims_e{rate}_k{record.key_bits}_v{record.value_bits}"

    @staticmethod
    def network_layers(rate):
        return exact_log2(rate)

    @property
    def pipeline_latency(self):
        return 1 + self._network_stages     # the winners' register, then the cascade

    @property
    def comparators(self):
        """Key comparators: one per selector and the cascade's ``E/2`` per layer."""
        e = self._rate
        return e + e // 2 * exact_log2(e)

    def elaborate(self, platform):
        m = Module()
        e = self._rate
        entry = data.StructLayout({"record": self._record, "last": 1})
        queues = {side: self._banks(m, side) for side in "ab"}
        heads = {side: [data.View(entry, queues[side].head[t * entry.size:(t + 1) * entry.size])
                        for t in range(e)] for side in "ab"}
        ahead = {side: [Signal(name=f"{side}_ahead{t}") for t in range(e)] for side in "ab"}

        # The output FIFO, one lane per record (each lane's read enable stays local), and its
        # credit counter: a step starts only with room for everything in flight.
        m.submodules.credit = credit = CreditCounter(self._output_depth)
        m.submodules.o_fifo = o_fifo = LaneFIFO(
            shape=self._bundle, depth=self._output_depth, lanes=e)
        result, result_valid = o_fifo.i.payload, o_fifo.i.valid     # (the credit keeps room)
        wiring.connect(m, o_fifo.o, wiring.flipped(self.o))
        m.d.comb += credit.sub.eq(self.o.valid & self.o.ready)
        # A side can give its E smallest remaining records when every bank has a head, or
        # once its run's last bundle is being taken (bank 0 is the first to go ahead; the
        # rest of the run is in the banks already). All registers: one level of logic.
        step = Signal()
        prefer_b = Signal()     # the side given equal keys in this step
        m.d.comb += [step.eq((queues["a"].ready | ahead["a"][0])
                             & (queues["b"].ready | ahead["b"][0]) & credit.room),
                     credit.add.eq(step)]
        with m.If(step):
            m.d.sync += prefer_b.eq(~prefer_b)

        winners = Signal(data.ArrayLayout(self._record, e), reset_less=True)
        wins = {"a": [None] * e, "b": [None] * e}     # the bank's head is a winner
        for i in range(e):
            j = e - 1 - i
            a_head, b_head = heads["a"][i], heads["b"][j]
            # a wins on a smaller key, or an equal one unless b is preferred (the carry chain
            # does both), and whenever b's head is the next run's; never when its own is.
            a_first = less_than(Cat(Const(0, 1), a_head.record.key),
                                Cat(~prefer_b, b_head.record.key))
            a_wins = Signal(name=f"a_wins{i}")
            m.d.comb += a_wins.eq(ahead["b"][j] | ~ahead["a"][i] & a_first)
            wins["a"][i], wins["b"][j] = a_wins, ~a_wins
            # (loaded every cycle: the step's flags say when they are winners)
            m.d.sync += winners[i].eq(Mux(a_wins, a_head.record, b_head.record))

        # Run ends: a side's run is over once its bank E-1 (each run's largest record) is
        # ahead; a step that ends both clears every flag. (Worked out as if the step were
        # taken; the step only enables the registers.)
        ends = {side: ahead[side][e - 1] | wins[side][e - 1] & heads[side][e - 1].last
                for side in "ab"}
        run_done = Signal()
        m.d.comb += run_done.eq(ends["a"] & ends["b"])
        for side in "ab":
            m.d.comb += queues[side].pop.eq(Cat(step & won for won in wins[side]))
            with m.If(step):
                m.d.sync += [flag.eq(~run_done & (flag | won & head.last))
                             for flag, won, head in zip(ahead[side], wins[side], heads[side],
                                                        strict=True)]

        # The winners' register, then the cascade; the step's flags travel beside them.
        flags = Signal(data.StructLayout({"valid": 1, "last": 1}), name="step")
        m.d.sync += [flags.valid.eq(step), flags.last.eq(run_done)]   # (last: read with valid)
        m.d.comb += result.records.eq(self._cascade(m, winners))
        for index in range(self._network_stages):
            delayed = Signal.like(flags, name=f"step_{index}")
            m.d.sync += delayed.eq(flags)
            flags = delayed
        m.d.comb += [result.last.eq(flags.last), result_valid.eq(flags.valid)]
        if is_formal(platform):
            self.unit_properties(m)
        return m

    def _banks(self, m, side):
        """Side ``side``'s banks: record t of every bundle, with the bundle's ``last``, to
        bank t."""
        queue = BankedQueue(bundle=self._bundle, depth=self._input_depth)
        m.submodules[f"{side}_banks"] = queue
        wiring.connect(m, wiring.flipped(getattr(self, side)), queue.i)
        return queue

    def _cascade(self, m, winners):
        """Sort the winners, a rotated bitonic sequence: the half-cleaner layers of a bitonic
        merge network of half the rate, fed so that it sees the winners in selector order
        (it applies its layers to ``a + reversed(b)``)."""
        e = self._rate
        if e == 1:
            return winners
        half = e // 2
        m.submodules.cascade = cascade = BitonicMergeNetwork(
            self._record, half, stages=self._network_stages)
        for i in range(half):
            m.d.comb += [cascade.a[i].eq(winners[i]), cascade.b[i].eq(winners[e - 1 - i])]
        return cascade.o
