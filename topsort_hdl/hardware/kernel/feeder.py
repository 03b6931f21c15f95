"""The leaf feeder: one memory region's beats, cut into runs, into one rate-1 tree leaf."""

from types import SimpleNamespace

from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..axi import AxiParams, BeatLayout
from ..block import Block
from ..records import BundleLayout, RecordLayout, check_range, tree_record

__all__ = ["LeafFeeder", "feeder_command_layout"]


def feeder_command_layout(count_bits):
    """A feeder command: ``records`` records cut into ``groups`` runs of ``2**run_log2``."""
    return data.StructLayout({
        "records": count_bits,
        "run_log2": range(count_bits + 1),
        "groups": count_bits,
    })


def check_record_beats(record, params):
    """Check that whole records tile a beat; return the records per beat."""
    if not isinstance(record, RecordLayout):
        raise TypeError(f"record must be a RecordLayout, not {record!r}")
    if not isinstance(params, AxiParams):
        raise TypeError(f"params must be an AxiParams, not {params!r}")
    if record.size % 8:
        raise ValueError(f"record size must be a multiple of 8 bits, not {record.size}")
    if params.data_width % record.size:
        raise ValueError(f"params.data_width must be a multiple of the record size "
                         f"({record.size} bits), not {params.data_width}")
    return params.data_width // record.size


class LeafFeeder(Block):
    """Feed one rate-1 leaf of a merge tree with the records of one memory region, in runs.

    A command names the region's record count ``records`` and cuts it into ``groups`` runs of
    ``L = 2**run_log2`` records: run ``k`` holds records ``k*L`` up to ``min((k+1)*L,
    records)``, so the last non-empty run may be short and trailing runs may be empty. Each
    record goes out as a tree record with pad flag 0 (see :mod:`.records.padding`),
    ``last`` set on the final record of each run; an empty run goes out as one pad record with
    ``last`` set. The region must fit its runs (``records <= groups * L``); its beats must carry
    exactly ``records`` records, little-endian (record ``i`` of a beat at bits ``[i*W, i*W+W)``)
    with each beat's ``[begin, end)`` on record boundaries, ``last`` set on its final beat: the
    region ends with that beat's last record (the count itself only tells an empty region).

    A command is taken when the feeder is idle (``busy`` low) and starts two cycles later; one
    of zero groups is taken and does nothing. The current beat is held in a register and read one
    record per cycle; the next beat is taken as the held one's last record goes out, so records
    leave every cycle while beats arrive and ``o`` is ready.

    Parameters
    ----------
    record : RecordLayout
        Layout of the records in memory; ``o`` carries ``tree_record(record)``.
    params : AxiParams
        The read port's widths; ``data_width`` must be a multiple of the record size.
    count_bits : int
        Width of the command's counts, 1 to 64. Default 32.

    Members
    -------
    cmd : In(stream.Signature(feeder_command_layout(count_bits)))
    beats : In(stream.Signature(BeatLayout(params)))
    o : Out(stream.Signature(BundleLayout(tree_record(record), 1)))
    busy : Out(1)
        High from taking a command until its last run has gone out (two cycles for one of
        zero groups).
    """

    module_tag_format = "leaf_feeder"

    def __init__(self, record, params, count_bits=32):
        self._per_beat = check_record_beats(record, params)
        check_range("count_bits", count_bits, 1, 64)
        self._record = record
        self._params = params
        self._count_bits = count_bits
        super().__init__({
            "cmd": In(stream.Signature(feeder_command_layout(count_bits))),
            "beats": In(stream.Signature(BeatLayout(params))),
            "o": Out(stream.Signature(BundleLayout(tree_record(record), 1))),
            "busy": Out(1),
        })

    @property
    def records_per_beat(self):
        return self._per_beat

    def elaborate(self, platform):
        m = Module()
        width = self._record.size
        per_beat = self._per_beat
        byte_shift = exact_log2(width // 8)
        count_bits = self._count_bits
        # The figures, and the registers and wires the steps share (each adds its own).
        st = SimpleNamespace(width=width, per_beat=per_beat, byte_shift=byte_shift,
                             count_bits=count_bits)

        # The command in progress. Runs are cut at multiples of L, so the record numbered n
        # (from 1) ends its run when n is a multiple of L, that is when bit log2(L) of the count
        # changed from n - 1 to n: one count of the records (reset by a command, no load
        # multiplexer) and that bit of it a record ago tell the run ends, with no mask of L's
        # bits. The region's last record is the last of the beat marked ``last``, so the count
        # is not compared with the command's. Runs sent are counted the same way, up from a
        # reset, and compared with the command's. What the next record ends is registered as it
        # is counted (flags, not compares behind the counts).
        st.pending = Signal()                    # a command taken: its flags next cycle
        st.primed = Signal()                     # the command's flags are ready: it starts
        st.active = Signal()
        st.after = Signal(count_bits + 1)        # the number of the record after the next
        st.run_bit = Signal(count_bits + 1)      # one-hot: bit run_log2 (L, one bit set)
        st.before = Signal()                     # bit run_log2 of (after - 1)
        st.run_end = Signal()                    # the next record ends its run
        st.padding = Signal()                    # every record is out: one pad per run left
        st.groups = Signal(count_bits)           # the command's runs
        st.sent = Signal(count_bits + 1)         # runs sent, plus two
        st.one_left = Signal()                   # one run left to send, the current one

        # The held beat.
        st.held = Signal(self._params.data_width)
        st.index = Signal(range(per_beat + 1))   # next record of the held beat
        st.stop = Signal(range(per_beat + 1))    # one past its last record
        st.ending = Signal()                     # index + 1 == stop, kept as a flag
        st.holding = Signal()
        st.held_last = Signal()                  # the held beat is the region's last
        st.final = Signal()                      # the next record is the region's last
        self._records_out(m, st)
        self._command(m, st)
        self._next_state(m, st)
        return m

    def _records_out(self, m, st):
        """What goes out next: the held beat, the record at index, its run and command ends."""
        byte_shift, per_beat, width = st.byte_shift, st.per_beat, st.width
        # What goes out next, as flags (padding only while active; serving: active, holding
        # and not padding), so that the handshakes and the held beat's enables are a LUT or
        # two from registers: a feeder sits between a read engine and a tree leaf, and placers
        # spread it.
        st.serving = Signal()
        next_active, next_holding = Signal(), Signal()
        st.next_active = next_active
        m.d.comb += [st.next_active.eq(st.active), next_holding.eq(st.holding)]
        m.d.sync += [st.active.eq(st.next_active), st.holding.eq(next_holding)]

        # The record at ``index`` by a multiplexer over whole records (a shift of the beat by
        # a multiple of the width would cost more LUTs).
        words = [st.held.word_select(k, width) for k in range(per_beat)]
        record = Array(words)[st.index[:exact_log2(per_beat)]] if per_beat > 1 else words[0]
        last = Signal()
        step = Signal()                       # a record (or pad) goes out this cycle
        taken = Signal()                      # a record of the held beat goes out
        beat_done = Signal()                  # the held beat's last record goes out
        m.d.comb += [
            st.final.eq(st.held_last & st.ending),
            last.eq(st.padding | st.run_end | st.final),
            self.o.valid.eq(st.padding | st.serving),
            self.o.payload.records[0].eq(Cat(Mux(st.padding, 0, record), st.padding)),
            self.o.payload.last.eq(last),
            step.eq(self.o.valid & self.o.ready),
            taken.eq(st.serving & self.o.ready),
            beat_done.eq(taken & st.ending),
            self.busy.eq(st.active | st.pending | st.primed),
        ]

        with m.If(taken):
            # (from registers: no carry chain in front of the flags, and the bit picked by
            # a one-hot mask, an AND-OR tree, not a shifter's chain of multiplexers)
            bit = (st.after & st.run_bit).any()
            m.d.sync += [
                st.after.eq(st.after + 1),
                st.before.eq(bit),
                st.run_end.eq(bit ^ st.before),
                st.index.eq(st.index + 1),
                st.ending.eq(st.index + 2 == st.stop),
            ]
            with m.If(st.ending):
                m.d.comb += next_holding.eq(0)
        with m.If(step & last):
            m.d.sync += [st.sent.eq(st.sent + 1), st.one_left.eq(st.sent == st.groups)]
            with m.If(st.one_left):
                m.d.comb += st.next_active.eq(0)

        beat = self.beats.payload
        st.first = Signal.like(st.index)
        st.end = Signal.like(st.stop)
        m.d.comb += [
            st.first.eq(beat.begin >> byte_shift),
            st.end.eq(beat.end >> byte_shift),
            self.beats.ready.eq(~st.holding | beat_done),
        ]

        with m.If(self.beats.valid & self.beats.ready):
            m.d.sync += [
                st.held.eq(beat.data),
                st.index.eq(st.first),
                st.ending.eq(st.first + 1 == st.end),
                st.stop.eq(st.end),
                st.held_last.eq(beat.last),
            ]
            m.d.comb += next_holding.eq(st.first < st.end)

    def _command(self, m, st):
        """A command held a cycle, then its compares a cycle, before it starts."""
        # A command is held a cycle in a register of its own, then its compares a cycle in
        # flags, before it starts: the controller that sends it sits far from the leaves, so
        # its wires end at flip-flops, and the compares end at flip-flops too, not in the
        # flags' logic behind them.
        cmd = Signal.like(self.cmd.payload)
        any_groups, one_group, no_records = Signal(), Signal(), Signal()
        st.any_groups, st.no_records = any_groups, no_records
        m.d.comb += self.cmd.ready.eq(~st.active & ~st.pending & ~st.primed)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [st.pending.eq(1), cmd.eq(self.cmd.payload)]
        with m.If(st.pending):
            m.d.sync += [st.pending.eq(0), st.primed.eq(1), st.any_groups.eq(cmd.groups != 0),
                         one_group.eq(cmd.groups == 1), st.no_records.eq(cmd.records == 0)]
        with m.If(st.primed):
            m.d.sync += [
                st.primed.eq(0),
                st.after.eq(2),
                st.run_bit.eq(C(1, len(st.run_bit)) << cmd.run_log2),
                # (record 1 ends its run when L == 1; bit log2(L) of 1 is set then)
                st.before.eq(cmd.run_log2 == 0),
                st.run_end.eq(cmd.run_log2 == 0),
                st.groups.eq(cmd.groups),
                st.sent.eq(2),
                st.one_left.eq(one_group),
            ]
            m.d.comb += st.next_active.eq(st.any_groups)

    def _next_state(self, m, st):
        """Serving and padding next cycle, each written out by its own value."""
        # ``serving`` and ``padding`` next cycle, each written out by its own value so that the
        # leaf's READY is in the last LUT, not behind the flags' enables (the feeder spreads
        # between its read engine and its leaf). Serving, a record goes out unless READY is
        # low; it stays unless the record ends the command's last run, the region, or the held
        # beat with no non-empty beat to take its place. Otherwise nothing goes out (padding
        # excepted): a command or a beat starts it. Padding, each pad ends a run, and the last
        # run's ends the command; otherwise the region's last record starts it unless it ends
        # the last run, or a command of no records does.
        refills = self.beats.valid & (st.first < st.end)
        m.d.sync += [
            st.serving.eq(Mux(
                st.serving,
                ~self.o.ready | ~(st.run_end & st.one_left) &
                (~st.ending | refills & ~st.held_last),
                ~st.padding & Mux(st.primed, st.any_groups & ~st.no_records, st.active) &
                (st.holding | refills))),
            st.padding.eq(Mux(
                st.padding,
                ~(self.o.ready & st.one_left),
                Mux(st.primed, st.no_records & st.any_groups,
                    st.serving & self.o.ready & st.final & ~st.one_left))),
        ]
