"""The leaf feeder: one memory region's beats, cut into runs, into one rate-1 tree leaf."""

from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..axi import AxiParams, BeatLayout
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


class LeafFeeder(wiring.Component):
    """Feed one rate-1 leaf of a merge tree with the records of one memory region, in runs.

    A command names the region's record count ``records`` and cuts it into ``groups`` runs of
    ``L = 2**run_log2`` records: run ``k`` holds records ``k*L`` up to ``min((k+1)*L,
    records)``, so the last non-empty run may be short and trailing runs may be empty. Each
    record goes out as a tree record with pad flag 0 (see :mod:`topsort_hdl.records.padding`),
    ``last`` set on the final record of each run; an empty run goes out as one pad record with
    ``last`` set. The region must fit its runs (``records <= groups * L``); its beats must carry
    exactly ``records`` records, little-endian (record ``i`` of a beat at bits ``[i*W, i*W+W)``)
    with each beat's ``[begin, end)`` on record boundaries.

    A command is taken when the feeder is idle (``busy`` low); one of zero groups is taken and
    does nothing. The current beat is held in a register and read one record per cycle; the next
    beat is taken as the held one's last record goes out, so records leave every cycle while
    beats arrive and ``o`` is ready.

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
        High from taking a command with runs until its last run has gone out.
    """

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

        # The command in progress.
        active = Signal()
        remaining = Signal(count_bits)        # records still to send
        groups = Signal(count_bits)           # runs still to send, the current one included
        run_length = Signal(count_bits + 1)
        run_left = Signal(count_bits + 1)     # records the current run may still take

        # The held beat.
        held = Signal(self._params.data_width)
        index = Signal(range(per_beat + 1))   # next record of the held beat
        stop = Signal(range(per_beat + 1))    # one past its last record
        holding = Signal()

        is_pad = Signal()
        last = Signal()
        step = Signal()                       # a record (or pad) goes out this cycle
        beat_done = Signal()                  # the held beat's last record goes out
        m.d.comb += [
            is_pad.eq(remaining == 0),
            last.eq(is_pad | (run_left == 1) | (remaining == 1)),
            self.o.valid.eq(active & (is_pad | holding)),
            self.o.payload.records[0].eq(Cat(Mux(is_pad, 0, held.word_select(index, width)),
                                             is_pad)),
            self.o.payload.last.eq(last),
            step.eq(self.o.valid & self.o.ready),
            beat_done.eq(step & ~is_pad & (index + 1 == stop)),
            self.busy.eq(active),
        ]

        with m.If(step):
            with m.If(~is_pad):
                m.d.sync += [remaining.eq(remaining - 1), index.eq(index + 1)]
                with m.If(beat_done):
                    m.d.sync += holding.eq(0)
            with m.If(last):
                m.d.sync += [run_left.eq(run_length), groups.eq(groups - 1)]
                with m.If(groups == 1):
                    m.d.sync += active.eq(0)
            with m.Else():
                m.d.sync += run_left.eq(run_left - 1)

        beat = self.beats.payload
        first = Signal.like(index)
        end = Signal.like(stop)
        m.d.comb += [
            first.eq(beat.begin >> byte_shift),
            end.eq(beat.end >> byte_shift),
            self.beats.ready.eq(~holding | beat_done),
        ]
        with m.If(self.beats.valid & self.beats.ready):
            m.d.sync += [
                held.eq(beat.data),
                index.eq(first),
                stop.eq(end),
                holding.eq(first < end),
            ]

        cmd = self.cmd.payload
        length = Signal(count_bits + 1)
        m.d.comb += [
            length.eq(C(1, count_bits + 1) << cmd.run_log2),
            self.cmd.ready.eq(~active),
        ]
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                remaining.eq(cmd.records),
                groups.eq(cmd.groups),
                run_length.eq(length),
                run_left.eq(length),
                active.eq(cmd.groups != 0),
            ]
        return m
