"""Wide queues built as lanes, so that no control signal fans out to the whole width.

Each is written through a stream, ``i`` (an offer while full waits: the lanes ignore it).
:class:`LaneFIFO` is read through a stream, ``o``; the two queues a merge takes records from
one lane or bank at a time are read through their heads.
"""

from amaranth.hdl import Cat, Module, Mux, Shape, Signal, Value
from amaranth.lib import fifo, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..logic import next_slot
from ..records import check_at_least

__all__ = ["BankedQueue", "LaneFIFO", "LaneQueue", "lane_bounds"]


def lane_bounds(width, lanes):
    """``[(start, end)]`` of each lane: ``width // lanes`` bits each, the rest in the last lane
    (a bundle of records and a ``last`` flag splits into one lane per record)."""
    size = width // lanes
    bounds = [(i * size, (i + 1) * size) for i in range(lanes)]
    bounds[-1] = (bounds[-1][0], width)
    return bounds


class _Lanes(wiring.Component):
    """What the lane queues share: parameters, the write side, one FIFO per lane."""

    def __init__(self, shape, depth, lanes, read_members):
        width = Shape.cast(shape).width
        check_at_least("width", width, 1)
        check_at_least("depth", depth, 2)
        check_at_least("lanes", lanes, 1)
        if lanes > width:
            raise ValueError(f"lanes must be at most width ({width}), not {lanes}")
        self._width = width
        self._depth = depth
        self._lanes = lanes
        super().__init__({"i": In(stream.Signature(shape)), **read_members})

    @property
    def depth(self):
        return self._depth

    def _lane_fifos(self, m):
        """Yield ``(lane, start, end, fifo)``, each FIFO written with its lane's bits."""
        w_data = Value.cast(self.i.payload)
        for lane, (start, end) in enumerate(lane_bounds(self._width, self._lanes)):
            queue = fifo.SyncFIFOBuffered(width=end - start, depth=self._depth)
            m.submodules[f"lane{lane}"] = queue
            m.d.comb += [queue.w_data.eq(w_data[start:end]), queue.w_en.eq(self.i.valid)]
            if lane == 0:
                m.d.comb += self.i.ready.eq(queue.w_rdy)
            yield lane, start, end, queue


class LaneFIFO(_Lanes):
    """A buffered synchronous FIFO of ``shape`` made of ``lanes`` narrower ones.

    Every lane is a :class:`amaranth.lib.fifo.SyncFIFOBuffered` with its own pointers and
    levels, written and read together, so the lanes always agree. What a wide FIFO loses
    timing on is its read enable: it drives the load enable of every bit of the output
    register. Here each lane's enable reaches only its own bits (synthesis keeps the copies:
    each lane's state feeds back on itself). ``i.ready`` and ``o.valid`` are lane 0's.

    Parameters
    ----------
    shape : shape-castable
        An entry (a bundle).
    depth : int
        Entries, at least 2.
    lanes : int
        Number of lanes (at most the entry's width): see :func:`lane_bounds`.

    Members
    -------
    i : In(stream.Signature(shape))
    o : Out(stream.Signature(shape))
    """

    def __init__(self, *, shape, depth, lanes):
        super().__init__(shape, depth, lanes, {"o": Out(stream.Signature(shape))})

    def elaborate(self, platform):
        m = Module()
        r_data = Value.cast(self.o.payload)
        for lane, start, end, queue in self._lane_fifos(m):
            m.d.comb += [queue.r_en.eq(self.o.ready), r_data[start:end].eq(queue.r_data)]
            if lane == 0:
                m.d.comb += self.o.valid.eq(queue.r_rdy)
        return m


class LaneQueue(_Lanes):
    """A :class:`LaneFIFO` with a head register: its first two entries are registers.

    ``head`` is the oldest entry, ``next`` the one behind it (the FIFO's output register), so
    a consumer can look one entry ahead. Every lane has its own copy of the head's state and
    its own pop input: a consumer that drives each lane's pop from a register of that lane
    (and loads lane ``i``'s bits of the head with the same register) keeps every enable local
    to one lane, so no control net fans out to the whole width.

    Parameters
    ----------
    shape, depth, lanes
        As for :class:`LaneFIFO`; the queue holds ``depth + 1`` entries.

    Members
    -------
    i : In(stream.Signature(shape))
    head : Out(width)
    head_valid : Out(lanes)
        Per lane: the head is loaded (the lanes always agree).
    next : Out(width)
    next_valid : Out(lanes)
        Per lane: an entry waits behind the head.
    pop : In(lanes)
        Per lane: remove ``head`` (only while ``head_valid``; the lanes must agree).
    """

    def __init__(self, *, shape, depth, lanes):
        width = Shape.cast(shape).width
        super().__init__(shape, depth, lanes, {
            "head": Out(width), "head_valid": Out(lanes), "next": Out(width),
            "next_valid": Out(lanes), "pop": In(lanes)})

    def elaborate(self, platform):
        m = Module()
        for lane, start, end, queue in self._lane_fifos(m):
            loaded = Signal(name=f"loaded{lane}")
            moves = self.pop[lane] | ~loaded  # the head moves when it is popped or empty
            m.d.comb += [
                queue.r_en.eq(moves),
                self.next[start:end].eq(queue.r_data),
                self.next_valid[lane].eq(queue.r_rdy),
                self.head_valid[lane].eq(loaded),
            ]
            with m.If(moves):
                m.d.sync += [self.head[start:end].eq(queue.r_data), loaded.eq(queue.r_rdy)]
        return m


class BankedQueue(wiring.Component):
    """A queue of bundles whose records leave one bank at a time.

    A bundle is written whole: record t, with the bundle's ``last`` flag, is entry t, and
    goes to bank t, a memory of its own with its own read
    pointer and head register (its read port's, loaded as the head leaves or while it is
    empty, so each bank's loop is its own). Banks are popped in rank order, as a merge takes
    a sorted bundle stream's records: the records popped in a cycle are the next ones after
    the last popped, wrapping from bank ``banks - 1`` to bank 0. Then bank 0 never holds more
    entries than another bank and the last bank never fewer, and, as every bank is written
    in the same cycles, a bank with a loaded head means every bank has one: ``ready`` is bank
    0's head flag, ``i.ready`` the last bank's room, both registers (so a producer's ready path
    starts at a flip-flop).

    Parameters
    ----------
    bundle : BundleLayout
        The bundles; its ``count`` records are the banks.
    depth : int
        Bundles the memories hold, at least 2 (the heads hold one more).

    Members
    -------
    i : In(stream.Signature(bundle))
    head : Out(width * banks)
        Each bank's oldest entry (a register), entry t (record t, then ``last``: ``width``
        bits) at bits ``[t * width, (t + 1) * width)``; defined while that bank holds one.
    ready : Out(1)
        Every bank's head is loaded (a register).
    pop : In(banks)
        Per bank: remove its head (in rank order, only while it holds one).
    """

    def __init__(self, *, bundle, depth):
        check_at_least("depth", depth, 2)
        self._width = width = bundle.record.size + 1
        self._depth = depth
        self._banks = banks = bundle.count
        super().__init__({"i": In(stream.Signature(bundle)), "head": Out(width * banks),
                          "ready": Out(1), "pop": In(banks)})

    def elaborate(self, platform):
        m = Module()
        width, depth, banks = self._width, self._depth, self._banks
        write = self.i.valid & self.i.ready
        bundle = self.i.payload
        entries = Cat(Cat(record, bundle.last) for record in bundle.records)

        w_addr = Signal(range(depth))
        with m.If(write):
            m.d.sync += w_addr.eq(next_slot(w_addr, depth))
        for bank in range(banks):
            lane = Memory(shape=width, depth=depth, init=[])
            m.submodules[f"bank{bank}"] = lane
            w_port, r_port = lane.write_port(), lane.read_port()
            r_addr = Signal(range(depth), name=f"r_addr{bank}")
            waiting = Signal(range(depth + 1), name=f"waiting{bank}")    # in memory, not head
            loaded = Signal(name=f"loaded{bank}")
            moves = ~loaded | self.pop[bank]    # the head leaves, or there is none
            load = Signal(name=f"load{bank}")
            m.d.comb += load.eq(moves & (waiting != 0))
            with m.If(load):
                m.d.sync += r_addr.eq(next_slot(r_addr, depth))
            with m.If(moves):
                m.d.sync += loaded.eq(waiting != 0)
            m.d.sync += waiting.eq(waiting + write - load)
            m.d.comb += [
                w_port.addr.eq(w_addr),
                w_port.data.eq(entries[bank * width:(bank + 1) * width]),
                w_port.en.eq(write),
                r_port.addr.eq(r_addr),
                r_port.en.eq(load),
                self.head[bank * width:(bank + 1) * width].eq(r_port.data),
            ]
            if bank == 0:
                m.d.comb += self.ready.eq(loaded)
            if bank == banks - 1:
                # Room, a register: after a load there is room whatever is written; otherwise
                # unless this write fills the memory. (The load, the latest signal, comes last.)
                room = Signal(init=1)
                m.d.sync += room.eq(load | Mux(write, waiting != depth - 1, waiting != depth))
                m.d.comb += self.i.ready.eq(room)
        return m
