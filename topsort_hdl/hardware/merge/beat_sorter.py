"""The beat sorter: every record of a beat in order, so that a beat is a sorted run."""

from amaranth.hdl import C, Cat, Module, Signal
from amaranth.lib import data
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..block import Block
from ..records import RecordLayout, check_power_of_two
from .bitonic import BitonicMergeNetwork

__all__ = ["BeatSorter"]


class BeatSorter(Block):
    """Sort the ``lanes`` records of a beat by key (unsigned), a bitonic sorting network: merges
    of 1 + 1 records, then 2 + 2, up to ``lanes / 2`` + ``lanes / 2``, every layer registered.
    It never stalls: a beat goes in every cycle and comes out :attr:`latency` cycles later.

    The records ``keep`` marks come out first, in key order; the others (lanes that hold no
    record of the region being read) after them. With ``sort`` low the beat comes out as it went
    in. Both are taken with the beat. The network compares each key with two fields above it: a
    flag for the records that go last, and above that the record's lane while ``sort`` is low
    (the lanes differ, so every pair stays where it is); no key bit is masked, so the records
    themselves pass through unchanged.

    Parameters
    ----------
    record : RecordLayout
        The records (record ``r`` of a beat at bits ``[r*W, r*W+W)``, its key compared).
    lanes : int
        Records per beat: a power of two, at least 2.

    Members
    -------
    i : In(lanes * W)
    keep : In(lanes)
    sort : In(1)
    o : Out(lanes * W)
    """

    module_tag_format = "beat_sorter_x{lanes}"

    def __init__(self, record, lanes):
        if not isinstance(record, RecordLayout):
            raise TypeError(f"record must be a RecordLayout, not {record!r}")
        check_power_of_two("lanes", lanes, low=2)
        self._record = record
        self._lanes = lanes
        width = lanes * record.size
        super().__init__({"i": In(width), "keep": In(lanes), "sort": In(1), "o": Out(width)})

    @property
    def latency(self):
        """Cycles from a beat in to the same beat out: the network's layers."""
        log2 = exact_log2(self._lanes)
        return log2 * (log2 + 1) // 2

    def elaborate(self, platform):
        m = Module()
        record, lanes = self._record, self._lanes
        lane_bits = exact_log2(lanes)
        # What the networks order: the key, then the "goes last" flag, then the lane while not
        # sorting; the value rides along.
        element = RecordLayout(record.key_bits + 1 + lane_bits, record.value_bits)
        current = []
        for lane in range(lanes):
            view = data.View(record, self.i[lane * record.size:(lane + 1) * record.size])
            entry = Signal(element, name=f"in{lane}")
            m.d.comb += [
                entry.key.eq(Cat(view.key, ~self.keep[lane],
                                 C(lane, lane_bits) & ~self.sort.replicate(lane_bits))),
                entry.value.eq(view.value),
            ]
            current.append(entry)
        width = 1
        while width < lanes:
            merged = []
            for first in range(0, lanes, 2 * width):
                network = BitonicMergeNetwork(element, width)
                m.submodules[f"merge{width}_{first}"] = network
                for k in range(width):
                    m.d.comb += [network.a[k].eq(current[first + k]),
                                 network.b[k].eq(current[first + width + k])]
                merged += [network.o[k] for k in range(2 * width)]
            current, width = merged, 2 * width
        m.d.comb += self.o.eq(Cat(Cat(entry.value, entry.key[:record.key_bits])
                                  for entry in current))
        return m
