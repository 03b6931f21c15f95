"""The MMS streaming merge unit: E records per cycle, a new input bundle every cycle."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.utils import exact_log2

from ..logic import delay
from ..properties import is_formal
from .bitonic import BitonicMergeNetwork, network_comparators
from .credit import CreditCounter
from .lanes import LaneFIFO
from .run_selector import RunSelector
from .unit import StreamMergeUnit

__all__ = ["MmsMergeUnit"]


def _held_before_incoming(x, y, position, tie_in):
    """BMS's tie break: equal keys rank by bundle (held records, taken earlier, before the
    incoming bundle's), then by place; a held record's place is its place in BML's output,
    which BML sorted by the same order."""
    return Mux(x.side_b ^ y.side_b, x.side_b, x.index < y.index)


def _older_before_newer(x, y, position, a_newer_lanes):
    """BML's tie break: equal keys rank by the bundle taken earlier, then by place (each
    comparator reads its own lane's copy of which register is newer)."""
    a_newer = a_newer_lanes[position % len(a_newer_lanes)]
    return Mux(x.side_b ^ y.side_b, Mux(x.side_b, a_newer, ~a_newer), x.index < y.index)


class MmsMergeUnit(StreamMergeUnit):
    """Merge two streams of sorted runs at ``rate`` records per cycle (MMS, the paper's Fig. 3).

    A selector takes, each cycle, the head bundle whose smallest key is smaller (ties
    alternate sides). The bundle goes into register RA or RB and down a delay line. BML, a
    bitonic half network, computes the upper ``rate`` records of RA and RB ("held"); BMS
    merges the delayed bundle with held and its lower half is the output. Nothing flows back
    from the networks to the selector, so the unit takes a new bundle every cycle.

    Equal keys: BML and BMS order records by one strict total order, key, then the order in
    which their bundles were taken, then place in the bundle (the networks' tie breaks, which
    cost no tag bits), so no record is emitted twice or lost on a tie. An emptied register's
    records rank as minus infinity and a flush's incoming bundle as plus infinity: the
    networks' exclusion inputs, so no key value is reserved.

    Run boundaries need no idle cycle: the first step of a run would emit a dummy bundle, so
    that step emits the previous run's flush bundle instead (its incoming bundle ranks as
    plus infinity in BMS only). When no next run is waiting, the flush goes out on its own.

    The pipeline never stalls. An output FIFO absorbs backpressure, and the selector only
    starts a step that produces a bundle when the FIFO has room for it and for everything in
    flight (credit counting), so the output keeps a plain valid/ready contract.

    Parameters and members: those of :class:`.unit.StreamMergeUnit`; ``network_stages`` is
    the number of pipeline registers in each of BML and BMS.
    """

    module_tag_format = "mms_e{rate}_k{record.key_bits}_v{record.value_bits}"

    @staticmethod
    def network_layers(rate):
        return exact_log2(2 * rate)

    @property
    def pipeline_latency(self):
        return 2 * self._network_stages     # BML, then BMS

    @property
    def comparators(self):
        """Key comparators: BML, BMS and the selector's six (both orders of the two heads, and
        of each head against the bundle waiting behind the other)."""
        return (network_comparators(self._rate, "upper") + network_comparators(self._rate, "lower")
                + 6)

    def elaborate(self, platform):
        m = Module()
        e = self._rate
        records = data.ArrayLayout(self._record, e)

        # Input FIFOs and the selector: the unit's only loop, register to register.
        m.submodules.selector = selector = RunSelector(self._bundle, self._input_depth)
        wiring.connect(m, wiring.flipped(self.a), selector.a)
        wiring.connect(m, wiring.flipped(self.b), selector.b)
        chosen, pick_a, first = selector.chosen, selector.pick_a, selector.first

        flush_pending = Signal()  # a run is complete and its flush bundle not yet emitted
        # RA holds the bundle taken more recently than RB's: one copy per record lane, loaded
        # with that lane's pops (each steers only its own lane's part of X and ages in BML).
        a_newer_lanes = [Signal(name=f"a_newer_{i}") for i in range(e)]
        for i, copy in enumerate(a_newer_lanes):
            with m.If(selector.a_popped[i] | selector.b_popped[i]):
                m.d.sync += copy.eq(selector.a_popped[i])
        # Bundles in flight or in the output FIFO; the selector decides a cycle ahead, so it
        # is granted a take only if the FIFO has room whatever leaves this cycle.
        m.submodules.credit = credit = CreditCounter(self._output_depth)
        take = selector.take
        flush_alone = flush_pending & ~selector.valid & credit.room
        emits = (take & (~first | flush_pending)) | flush_alone
        flush_pending_next = Mux(take, selector.completes | ~first & flush_pending,
                                 flush_pending & ~flush_alone)
        m.d.sync += flush_pending.eq(flush_pending_next)
        m.d.comb += [
            credit.add.eq(emits),
            credit.sub.eq(self.o.valid & self.o.ready),
            # Granted only with room, even for a run's first step, which emits nothing unless
            # it carries the previous flush: that step waits only while the FIFO is full, and
            # the grant stays two LUT levels from registers.
            selector.accept_next.eq(credit.room_next),
        ]

        # RA and RB: the last bundle taken from each side, record by record from the selector's
        # head registers with that lane's pop enable. At a run start a register is emptied:
        # BML then leaves it out (one flag, not a cleared bundle, so no key is reserved).
        ra, rb = Signal(records), Signal(records)
        ra_real, rb_real = Signal(), Signal()   # the register holds this run's records
        for i in range(e):
            with m.If(selector.a_popped[i]):
                m.d.sync += ra[i].eq(selector.a_head.records[i])
            with m.If(selector.b_popped[i]):
                m.d.sync += rb[i].eq(selector.b_head.records[i])
        with m.If(take):
            m.d.sync += [ra_real.eq(pick_a | ~first & ra_real),
                         rb_real.eq(~pick_a | ~first & rb_real)]
        with m.If(flush_alone):
            m.d.sync += [ra_real.eq(0), rb_real.eq(0)]

        # X, the incoming bundle for BMS, which BMS leaves out (it ranks above everything held)
        # when the step emits the previous run's flush, or is a flush of its own. With a
        # pipelined BML, X is read a cycle later out of the register it was loaded into, so the
        # selector's choice drives no bundle-wide multiplexer.
        plus_infinity = Signal()
        # The networks are built here, not in the constructor: a unit shared as one module
        # (topsort_hdl.hardware.block) is elaborated once, and an unused network would warn.
        network = dict(stages=self._network_stages, exclusion=True)
        m.submodules.bml = bml = BitonicMergeNetwork(
            self._record, e, keep="upper", tie_break=_older_before_newer, tie_width=e, **network)
        if bml.latency:
            x = Signal(records)
            for i in range(e):
                m.d.comb += x[i].eq(Mux(a_newer_lanes[i], ra[i], rb[i]))
            m.d.sync += plus_infinity.eq(first | flush_alone)
            x_delay = bml.latency - 1
        else:
            x = chosen.records
            m.d.comb += plus_infinity.eq(first | flush_alone)
            x_delay = 0

        # BML: held = upper half of (RA u RB).
        m.d.comb += [bml.a.eq(ra), bml.b.eq(rb), bml.tie_in.eq(Cat(a_newer_lanes)),
                     bml.a_excluded.eq(~ra_real), bml.b_excluded.eq(~rb_real)]

        # The incoming bundle waits for BML in a delay line without reset (synthesis can map it
        # to shift-register LUTs); the step's flags, with reset, wait for BML and BMS.
        flags = Signal(data.StructLayout({"emits": 1, "last": 1}))
        m.d.comb += [flags.emits.eq(emits), flags.last.eq(first | flush_alone)]
        m.submodules.bms = bms = BitonicMergeNetwork(
            self._record, e, keep="lower", tie_break=_held_before_incoming, **network)
        flags = delay(m, flags, bml.latency + bms.latency, "step")
        delayed_x = delay(m, x, x_delay, "x", reset_less=True)
        x_excluded = delay(m, plus_infinity, x_delay, "x_excluded", reset_less=True)
        m.d.comb += [bms.a.eq(delayed_x), bms.b.eq(bml.o),
                     bms.a_excluded.eq(x_excluded), bms.b_excluded.eq(0)]

        # Output FIFO: credit counting above guarantees room for every bundle that arrives.
        # One lane per record keeps the FIFO's read enable local to each record's bits.
        m.submodules.o_fifo = o_fifo = LaneFIFO(
            shape=self._bundle, depth=self._output_depth, lanes=e)
        m.d.comb += [o_fifo.i.payload.records.eq(bms.o), o_fifo.i.payload.last.eq(flags.last),
                     o_fifo.i.valid.eq(flags.emits)]
        wiring.connect(m, o_fifo.o, wiring.flipped(self.o))
        if is_formal(platform):
            self.unit_properties(m)
        return m

