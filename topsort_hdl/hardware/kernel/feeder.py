"""The leaf feeder: one memory region's beats, cut into runs, into one rate-1 tree leaf."""

from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
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

    Its parts: ``cmd`` -> :class:`FeederCommand` (held, then its flags) -> :class:`RunCounter`
    (where the records are in their runs); ``beats`` -> :class:`HeldBeat` (the record at the
    held index); the feeder's own flags (active, serving, padding) drive ``o``.

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
        params, width = self._params, self._record.size
        m.submodules.command = command = FeederCommand(self._count_bits)
        m.submodules.runs = runs = RunCounter(self._count_bits)
        m.submodules.beat = beat = HeldBeat(params, width)
        wiring.connect(m, wiring.flipped(self.cmd), command.cmd)
        wiring.connect(m, wiring.flipped(self.beats), beat.beats)

        # What goes out next, as flags (padding only while active; serving: active, holding
        # and not padding), so that the handshakes and the held beat's enables are a LUT or
        # two from registers: a feeder sits between a read engine and a tree leaf, and placers
        # spread it.
        active, serving, padding = Signal(), Signal(), Signal()
        next_active = Signal()
        last = Signal()
        step = Signal()                       # a record (or pad) goes out this cycle
        m.d.comb += [
            last.eq(padding | runs.run_end | beat.final),
            self.o.valid.eq(padding | serving),
            self.o.payload.records[0].eq(Cat(Mux(padding, 0, beat.record), padding)),
            self.o.payload.last.eq(last),
            step.eq(self.o.valid & self.o.ready),
            beat.take.eq(serving & self.o.ready),
            command.active.eq(active),
            self.busy.eq(active | command.waiting),
            runs.start.eq(command.start),
            runs.run_log2.eq(command.run_log2),
            runs.groups.eq(command.groups),
            runs.one_group.eq(command.one_group),
            runs.record.eq(beat.take),
            runs.run_sent.eq(step & last),
        ]
        # Active from a command with runs to its last run's end.
        m.d.comb += next_active.eq(active)
        with m.If(step & last & runs.one_left):
            m.d.comb += next_active.eq(0)
        with m.If(command.start):
            m.d.comb += next_active.eq(command.any_groups)
        m.d.sync += active.eq(next_active)

        # ``serving`` and ``padding`` next cycle, each written out by its own value so that the
        # leaf's READY is in the last LUT, not behind the flags' enables (the feeder spreads
        # between its read engine and its leaf). Serving, a record goes out unless READY is
        # low; it stays unless the record ends the command's last run, the region, or the held
        # beat with no non-empty beat to take its place. Otherwise nothing goes out (padding
        # excepted): a command or a beat starts it. Padding, each pad ends a run, and the last
        # run's ends the command; otherwise the region's last record starts it unless it ends
        # the last run, or a command of no records does.
        m.d.sync += [
            serving.eq(Mux(
                serving,
                ~self.o.ready | ~(runs.run_end & runs.one_left) &
                (~beat.ending | beat.refills & ~beat.last_beat),
                ~padding & Mux(command.start, command.any_groups & ~command.no_records,
                               active) &
                (beat.holding | beat.refills))),
            padding.eq(Mux(
                padding,
                ~(self.o.ready & runs.one_left),
                Mux(command.start, command.no_records & command.any_groups,
                    serving & self.o.ready & beat.final & ~runs.one_left))),
        ]
        return m


class FeederCommand(wiring.Component):
    """A feeder's command, held a cycle in a register of its own, then its compares a cycle
    in flags, before it starts (``start``, with ``run_log2``, ``groups`` and the flags): the
    controller that sends it sits far from the leaves, so its wires end at flip-flops, and the
    compares end at flip-flops too, not in the logic behind them. A command is taken while
    the feeder is not ``active`` and none is ``waiting``."""

    def __init__(self, count_bits):
        super().__init__({
            "cmd": In(stream.Signature(feeder_command_layout(count_bits))),
            "active": In(1),
            "waiting": Out(1),
            "start": Out(1),
            "run_log2": Out(range(count_bits + 1)),
            "groups": Out(count_bits),
            "any_groups": Out(1),
            "one_group": Out(1),
            "no_records": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        pending = Signal()                       # a command taken: its flags next cycle
        primed = self.start                      # its flags are ready: it starts
        cmd = Signal.like(self.cmd.payload)
        m.d.comb += [self.cmd.ready.eq(~self.active & ~pending & ~primed),
                     self.waiting.eq(pending | primed),
                     self.run_log2.eq(cmd.run_log2), self.groups.eq(cmd.groups)]
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [pending.eq(1), cmd.eq(self.cmd.payload)]
        with m.If(pending):
            m.d.sync += [pending.eq(0), primed.eq(1), self.any_groups.eq(cmd.groups != 0),
                         self.one_group.eq(cmd.groups == 1),
                         self.no_records.eq(cmd.records == 0)]
        with m.If(primed):
            m.d.sync += primed.eq(0)
        return m


class RunCounter(wiring.Component):
    """Where a command's records are in its runs: ``run_end``, the next record ends its run,
    and ``one_left``, one run is left to send (the current one), both flags.

    Runs are cut at multiples of L, so the record numbered n (from 1) ends its run when n is a
    multiple of L, that is when bit log2(L) of the count changed from n - 1 to n: one count of
    the records (reset by a command, no load multiplexer) and that bit of it a record ago tell
    the run ends, with no mask of L's bits. The region's last record is the last of the beat
    marked ``last``, so the count is not compared with the command's. Runs sent are counted the
    same way, up from a reset, and compared with the command's. What the next record ends is
    registered as it is counted (flags, not compares behind the counts). ``start`` loads a
    command; ``record``: a record goes out; ``run_sent``: a run's last record or pad does."""

    def __init__(self, count_bits):
        super().__init__({
            "start": In(1),
            "run_log2": In(range(count_bits + 1)),
            "groups": In(count_bits),
            "one_group": In(1),
            "record": In(1),
            "run_sent": In(1),
            "run_end": Out(1),
            "one_left": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        count_bits = len(self.groups)
        after = Signal(count_bits + 1)        # the number of the record after the next
        run_bit = Signal(count_bits + 1)      # one-hot: bit run_log2 (L, one bit set)
        before = Signal()                     # bit run_log2 of (after - 1)
        command_runs = Signal(count_bits)     # the command's runs
        sent = Signal(count_bits + 1)         # runs sent, plus two
        with m.If(self.record):
            # (from registers: no carry chain in front of the flags, and the bit picked by
            # a one-hot mask, an AND-OR tree, not a shifter's chain of multiplexers)
            bit = (after & run_bit).any()
            m.d.sync += [after.eq(after + 1), before.eq(bit), self.run_end.eq(bit ^ before)]
        with m.If(self.run_sent):
            m.d.sync += [sent.eq(sent + 1), self.one_left.eq(sent == command_runs)]
        with m.If(self.start):
            m.d.sync += [
                after.eq(2),
                run_bit.eq(C(1, len(run_bit)) << self.run_log2),
                # (record 1 ends its run when L == 1; bit log2(L) of 1 is set then)
                before.eq(self.run_log2 == 0),
                self.run_end.eq(self.run_log2 == 0),
                command_runs.eq(self.groups),
                sent.eq(2),
                self.one_left.eq(self.one_group),
            ]
        return m


class HeldBeat(wiring.Component):
    """The beat a feeder reads, held in a register and read a record per cycle (``record``,
    at the held index) while ``take``; the next beat is taken as the held one's last record
    goes out. ``ending``: the record is the beat's last; ``final``: the region's last;
    ``last_beat``: the held beat is the region's last; ``refills``: a beat with records waits
    at ``beats``."""

    def __init__(self, params, width):
        self._per_beat = params.data_width // width
        super().__init__({
            "beats": In(stream.Signature(BeatLayout(params))),
            "take": In(1),
            "record": Out(width),
            "holding": Out(1),
            "ending": Out(1),
            "final": Out(1),
            "last_beat": Out(1),
            "refills": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        per_beat, width = self._per_beat, len(self.record)
        byte_shift = exact_log2(width // 8)
        beat = self.beats.payload
        held = Signal(len(beat.data))
        index = Signal(range(per_beat + 1))   # next record of the held beat
        stop = Signal(range(per_beat + 1))    # one past its last record
        ending = self.ending                  # index + 1 == stop, kept as a flag
        next_holding = Signal()
        # The record at ``index`` by a multiplexer over whole records (a shift of the beat by
        # a multiple of the width would cost more LUTs).
        words = [held.word_select(k, width) for k in range(per_beat)]
        record = Array(words)[index[:exact_log2(per_beat)]] if per_beat > 1 else words[0]
        first, end = Signal.like(index), Signal.like(stop)
        m.d.comb += [
            self.record.eq(record),
            self.final.eq(self.last_beat & ending),
            first.eq(beat.begin >> byte_shift),
            end.eq(beat.end >> byte_shift),
            self.refills.eq(self.beats.valid & (first < end)),
            self.beats.ready.eq(~self.holding | self.take & ending),
            next_holding.eq(self.holding),
        ]
        m.d.sync += self.holding.eq(next_holding)
        with m.If(self.take):
            m.d.sync += [index.eq(index + 1), ending.eq(index + 2 == stop)]
            with m.If(ending):
                m.d.comb += next_holding.eq(0)
        with m.If(self.beats.valid & self.beats.ready):
            m.d.sync += [held.eq(beat.data), index.eq(first), ending.eq(first + 1 == end),
                         stop.eq(end), self.last_beat.eq(beat.last)]
            m.d.comb += next_holding.eq(first < end)
        return m
