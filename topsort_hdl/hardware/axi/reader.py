"""The read engine: one AXI4 master keeping many leaf buffers fed."""

from types import SimpleNamespace

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2, exact_log2

from ...core.axi_params import MAX_BURST_BEATS, MAX_OUTSTANDING, PAGE_BYTES
from ..block import Block
from ..logic import next_slot, one_hot_select, round_robin
from ..merge.beat_sorter import BeatSorter
from ..properties import check, held_until_taken, is_formal, stream_rules
from ..records import RecordLayout, check_at_least, check_positive, check_range
from .beats import BeatLayout
from .commands import check_engine_params, region_layout
from .signature import AXI_CACHE_MODIFIABLE, BURST_INCR, RESP_OKAY, Axi4Signature

__all__ = ["AxiReadEngine", "MAX_OUTSTANDING", "REFILL_CYCLES",
           "LEAF_BUFFER_MEMORY"]

# Cycles from a beat taken out of a leaf's register to the next in its place: the leaf is
# chosen, read, its beat lands in the memory's data register, then in the leaf's.
REFILL_CYCLES = 5
# The name of the leaf buffers' memory (its MEMID in RTLIL): its read and write ports never
# meet on one address in a cycle, and a Yosys build from RTLIL marks its read ports so
# (``setparam -set COLLISION_X_MASK``), as Yosys' Verilog frontend does for ``no_rw_check``.
LEAF_BUFFER_MEMORY = "buffers"


class AxiReadEngine(Block):
    """Read one contiguous byte region per leaf, in INCR bursts, into per-leaf beat buffers.

    A command names a leaf, a byte address and a length; both may be anything (regions need
    not start or end on a beat). The engine issues bursts of at most ``burst_bytes``, aligned to
    ``burst_bytes`` (so none crosses a 4 KB page; a region's first and last bursts are shorter),
    round robin over the leaves that have room for the burst in their buffer. While
    ``short_bursts`` is high, bursts are at most ``short_burst_bytes`` and aligned to it (the
    port is not called ``short``: a C++ word, which Verilator's per-module models cannot take
    as a port name): a merge tree runs about
    ``leaves`` bursts behind its reader, so a kernel uses long bursts only where they pay for
    that. Room is reserved when the burst is issued, so ``rready`` never drops. ARID is the leaf
    index: a memory may return different leaves' bursts out of order or interleaved. Leaves'
    regions may lie in any channels of the address map (phase 2 reads four channel pairs
    through one port).

    Each leaf's buffer feeds its ``leaf[i]`` stream of :class:`BeatLayout` beats (bytes
    ``[begin, end)`` of each beat belong to the region; ``last`` on its final beat). A leaf takes
    a new command once every beat of its previous region has arrived; a zero-length region
    produces no beat. Commands are decoded in two registered steps (a command every other cycle
    at most) and bursts are granted from registered lengths and room, one cycle before they go
    to AR (a burst every other cycle at most), so no path runs from ``cmd`` to AR or the leaves'
    registers in one cycle; a leaf's first burst leaves about six cycles after its command.
    Wide choices (the round robins, a beat's leaf) use carry chains, registered one-hot
    vectors and multiplexers rather than wide ORs, so no path is deeper than about five LUTs.

    The leaves' buffers share one memory with a synchronous read port (block RAM or UltraRAM,
    see ``buffer_style``), a region of it per leaf, and each leaf has beat registers in front of
    its stream (``leaf_beats``). The memory takes a beat from R and gives one every cycle to a
    register of its own, and that to a leaf's (a block RAM's read data is slow to leave it: it
    goes no further than the next register); a beat can be read two cycles after it arrives. A
    leaf's registers are refilled from registered state only (no path from a leaf's ``ready``
    to the memory), :data:`REFILL_CYCLES` cycles from a beat taken to the next in its place, so
    one leaf takes at most ``leaf_beats`` beats every five cycles (and one every other cycle),
    the engine a beat every cycle over its leaves. A leaf feeder takes a beat every
    ``records per beat`` cycles at most (eight on the U280: one register is enough).

    With ``presort`` (a record layout) every beat's records are sorted by key on their way from
    R into the buffer while ``sort_beats`` is high (a kernel's first pass: each beat becomes a
    run), the records of the region first (:class:`~topsort_hdl.hardware.merge.BeatSorter`);
    the beat then holds them from byte 0. Its network delays each beat's way into the buffer by
    its layers, nothing else (``rready`` stays high).

    ``error`` (sticky until reset) flags an error response, a command whose region wraps the
    address space or names a leaf that does not exist (such commands are dropped), or a beat
    nobody asked for (errors on R a cycle after the beat).

    Parameters
    ----------
    params : AxiParams
    leaves : int
        Leaf buffers served; ARID width must hold a leaf index.
    burst_bytes : int
        Largest burst, a power of two from one beat to 4 KB.
    short_burst_bytes : int
        Largest burst while ``short_bursts`` is high, a power of two from one beat to
        ``burst_bytes`` (default ``burst_bytes``).
    max_outstanding : int
        Bursts in flight at most.
    buffer_beats : int
        Depth of each leaf buffer in beats, at least one burst (default: two bursts, at least
        2), not counting the leaf's beat register.
    length_bits : int
        Width of a command's byte count.
    buffer_style : str or None
        ``ram_style`` of the shared buffer memory (``"ultra"``: UltraRAM, ``"block"``: block
        RAM), honoured by Vivado and Yosys; ``None`` leaves the choice to the tool.
    leaf_beats : int
        Beat registers per leaf, 1 to 4 (default 1): a leaf takes up to ``leaf_beats`` beats
        every :data:`REFILL_CYCLES` cycles, at most one every other cycle.
    presort : RecordLayout or None
        The records a beat holds, to sort each beat's while ``sort_beats`` is high (a port of
        the engine only then); ``None`` (default): beats go to the buffer as they come.
    """

    module_tag_format = "read_engine_l{leaves}_b{burst_bytes}"

    def __init__(self, params, leaves, *, burst_bytes=1024, short_burst_bytes=None,
                 max_outstanding=4, buffer_beats=None, length_bits=36, buffer_style=None,
                 leaf_beats=1, presort=None):
        self.burst_beats = check_engine_params(params, burst_bytes, max_outstanding, length_bits)
        if short_burst_bytes is None:
            short_burst_bytes = burst_bytes
        params.check_burst_bytes("short_burst_bytes", short_burst_bytes)
        if short_burst_bytes > burst_bytes:
            raise ValueError(f"short_burst_bytes must be at most burst_bytes ({burst_bytes}), "
                             f"not {short_burst_bytes}")
        self.short_burst_beats = short_burst_bytes // params.beat_bytes
        check_positive("leaves", leaves)
        if (leaves - 1).bit_length() > params.id_width:
            raise ValueError(f"params.id_width must be at least {(leaves - 1).bit_length()} to "
                             f"name {leaves} leaves, not {params.id_width}")
        if buffer_beats is None:
            buffer_beats = max(2, 2 * self.burst_beats)
        check_at_least("buffer_beats", buffer_beats, self.burst_beats)
        if buffer_style is not None and not isinstance(buffer_style, str):
            raise TypeError(f"buffer_style must be a string or None, not {buffer_style!r}")
        self.buffer_style = buffer_style
        check_range("leaf_beats", leaf_beats, 1, 4)
        self.leaf_beats = leaf_beats
        self.params = params
        self.leaves = leaves
        self.burst_bytes = burst_bytes
        self.short_burst_bytes = short_burst_bytes
        self.max_outstanding = max_outstanding
        self.buffer_beats = buffer_beats
        self.length_bits = length_bits
        self.command_layout = region_layout(params, length_bits, leaves)
        self.beat_layout = BeatLayout(params)
        members = {
            "axi": Out(Axi4Signature(params)),
            "cmd": In(stream.Signature(self.command_layout)),
            "short_bursts": In(1),
            "leaf": Out(stream.Signature(self.beat_layout)).array(leaves),
            "idle": Out(1),
            "error": Out(1),
        }
        self.presort = presort
        if presort is not None:
            if not isinstance(presort, RecordLayout):
                raise TypeError(f"presort must be a RecordLayout or None, not {presort!r}")
            if params.data_width % presort.size or params.data_width // presort.size < 2:
                raise ValueError(f"presort records must tile the {params.data_width}-bit beat "
                                 f"two or more times, not {presort.size}-bit records")
            members["sort_beats"] = In(1)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        axi, p = self.axi, self.params
        lanes, leaves = p.beat_bytes, self.leaves
        lane_bits, burst_bits = exact_log2(lanes), exact_log2(self.burst_beats)
        short_bits = exact_log2(self.short_burst_beats)
        leaf_bits = max(1, ceil_log2(leaves))
        region_beats = range((1 << (self.length_bits - lane_bits)) + 2)
        slot_bits, depth = ceil_log2(self.buffer_beats), self.leaf_beats
        # The geometry, and the registers and wires the steps share (each adds its own).
        st = SimpleNamespace(axi=axi, p=p, lanes=lanes, leaves=leaves, lane_bits=lane_bits,
                             burst_bits=burst_bits, short_bits=short_bits, leaf_bits=leaf_bits,
                             region_beats=region_beats, slot_bits=slot_bits, depth=depth)

        st.next_beat = [Signal(p.addr_width - lane_bits, name=f"next_beat{i}")
                       for i in range(leaves)]       # beat address of the next burst
        st.to_issue = [Signal(region_beats, name=f"to_issue{i}") for i in range(leaves)]
        st.pending = Signal(leaves)           # to_issue != 0, kept as a flag
        st.narrow = Signal(leaves)            # to_issue < 2 * burst_beats, kept as a flag
        # A leaf's bursts come back in order (one ARID per leaf), so its region's last beat is
        # the RLAST that comes once its closing burst is granted and is its only burst in
        # flight. Bursts in flight are counted per leaf (a few bits, where a count of the
        # region's beats took the full length's width and a LUT a bit to load and count).
        st.inflight = [Signal(range(self.max_outstanding + 1), name=f"inflight{i}")
                      for i in range(leaves)]
        st.closed = Signal(leaves)            # the leaf's closing burst is granted
        st.final = Signal(leaves)             # the leaf's next RLAST ends its region
        st.first = Signal(leaves)
        st.begin = [Signal(range(lanes), name=f"begin{i}") for i in range(leaves)]
        st.end = [Signal(range(1, lanes + 1), name=f"end{i}") for i in range(leaves)]
        st.returning = Signal(leaves)         # a beat is due
        st.committed = [Signal(range(self.buffer_beats + 1), name=f"committed{i}")
                       for i in range(leaves)]       # buffer entries taken or promised
        st.burst_len = [Signal(range(self.burst_beats + 1), name=f"burst_len{i}")
                       for i in range(leaves)]
        st.closing = Signal(leaves)           # the leaf's next burst ends its region
        st.request = Signal(leaves)
        st.granted = Signal(leaves)           # one-hot: the leaf whose burst goes to AR now
        st.granting = Signal()                # granted.any()
        st.advancing = Signal(leaves)         # one-hot: the leaf whose burst went to AR last cycle
        st.advanced = Signal()                # advancing.any()
        st.settling = Signal(leaves)
        st.loading = Signal(leaves)           # one-hot: a leaf takes a command this cycle

        # The wires by which a leaf's address and count advance or take a command.
        st.new_beat = Signal.like(st.next_beat[0])
        st.new_left = Signal.like(st.to_issue[0])
        st.new_pending = Signal()
        st.new_narrow = Signal()
        self._burst_lengths(m, st)
        self._grant(m, st)
        self._decode(m, st)
        self._returns(m, st)
        self._buffers(m, st)
        self._leaf_registers(m, st)
        # A leaf with beats to issue has beats to return: ``returning`` covers both.
        m.d.comb += self.idle.eq(~st.returning.any() & ~st.sums.valid & ~st.decoded.valid &
                                 ~st.granting & ~axi.arvalid & (st.outstanding == 0) &
                                 ~st.in_flight)
        if is_formal(platform):
            self._properties(m, st)
        return m

    def _burst_lengths(self, m, st):
        """Each leaf's next burst: its length, whether it ends the region, its request."""
        # Each leaf's next burst runs to the burst boundary (the short one while
        # ``short_bursts``) or to the region's end. Its length is registered, and whether the
        # leaf's buffer has room for it is registered from that: the arbiter reads only
        # flip-flops. While a leaf requests, its length is held, so the burst that leaves is the
        # one room was checked for (``short_bursts`` may change meanwhile). Room a cycle old is
        # safe (a leaf's buffer only drains meanwhile), and a request stays up until its grant.
        # The length is two cycles behind a leaf's address and count, so a leaf that has just
        # taken a command sits out a cycle, one just granted three (its burst goes to AR the
        # cycle after the grant, its address and count advance the cycle after that, see below).
        burst_bits, leaves, short_bits = st.burst_bits, st.leaves, st.short_bits
        for i in range(leaves):
            to_boundary = Signal(range(self.burst_beats + 1), name=f"to_boundary{i}")
            m.d.comb += to_boundary.eq(
                Mux(self.short_bursts, self.short_burst_beats - st.next_beat[i][:short_bits],
                    self.burst_beats - st.next_beat[i][:burst_bits]))
            # to_issue <= to_boundary: only its low bits can be, the rest are zero (narrow).
            low = st.to_issue[i][:burst_bits + 1]
            requests = Signal(name=f"requests{i}")     # request's next value
            m.d.comb += requests.eq(st.pending[i] & ~st.settling[i] & ~st.granted[i] &
                                    ~st.advancing[i] &
                                    (st.committed[i] + st.burst_len[i] <= self.buffer_beats))
            # (a request's length is the one its room was checked with: held from that check)
            with m.If(~requests):
                m.d.sync += [
                    st.burst_len[i].eq(Mux(st.narrow[i] & (low < to_boundary), low, to_boundary)),
                    st.closing[i].eq(st.narrow[i] & (low <= to_boundary)),
                ]
            m.d.sync += [
                st.request[i].eq(requests),
                st.settling[i].eq(st.loading[i] | st.advancing[i]),
            ]
            # One adder for every leaf's address and count (a burst leaves every other cycle
            # at most), and the same wires bring a command's: a leaf's registers take them,
            # nothing else.
            with m.If(st.advancing[i] | st.loading[i]):
                m.d.sync += [st.next_beat[i].eq(st.new_beat), st.to_issue[i].eq(st.new_left),
                             st.pending[i].eq(st.new_pending), st.narrow[i].eq(st.new_narrow)]

    def _grant(self, m, st):
        """The round robin over the leaves' requests and the AR channel."""
        axi, lane_bits, leaf_bits, leaves, p = st.axi, st.lane_bits, st.leaf_bits, st.leaves, st.p
        # Round robin in two registered steps: a leaf is granted from the registered requests
        # (the lowest requesting leaf above the last one granted, else the lowest), and its
        # burst goes to AR from that grant the next cycle. A grant needs AR free in the next
        # cycle, so bursts leave every other cycle at most.
        st.outstanding = Signal(range(self.max_outstanding + 1))
        mask = Signal(leaves)                # the leaves above the one granted last
        pick, requested = round_robin(m, st.request, mask, "arbiter")
        can_grant = ~st.granting & (~axi.arvalid | axi.arready) &\
            (st.outstanding < self.max_outstanding)
        m.d.sync += [
            st.granted.eq(Mux(can_grant, pick, 0)),
            st.granting.eq(can_grant & requested),
            st.advancing.eq(st.granted),
            st.advanced.eq(st.granting),
        ]
        granted_index = Signal(leaf_bits)    # the granted leaf, encoded in the same step
        m.d.sync += granted_index.eq(one_hot_select(pick, [C(i, leaf_bits)
                                                            for i in range(leaves)]))
        # (compares with the index: prefix ORs of the one-hot would chain)
        with m.If(st.granting):
            m.d.sync += mask.eq(Cat(granted_index < i for i in range(leaves)))

        with m.If(axi.arready):
            m.d.sync += axi.arvalid.eq(0)
        st.issued_len = Signal.like(st.burst_len[0])
        st.issued_left = Signal.like(st.to_issue[0])
        st.issued_closing = Signal()
        chosen_len = Signal.like(st.burst_len[0])
        # (by the index through multiplexers: fewer LUTs than AND-OR over wide fields)
        m.d.comb += chosen_len.eq(Array(st.burst_len)[granted_index])
        with m.If(st.granting):
            m.d.sync += [
                axi.arvalid.eq(1),
                axi.araddr.eq(Cat(C(0, lane_bits), Array(st.next_beat)[granted_index])),
                axi.arlen.eq(chosen_len - 1),
                axi.arid.eq(granted_index),
                st.issued_len.eq(chosen_len),
                st.issued_left.eq(Array(st.to_issue)[granted_index]),
                st.issued_closing.eq(st.closing.bit_select(granted_index, 1)),
            ]
        m.d.comb += [
            axi.arsize.eq(p.size_code), axi.arburst.eq(BURST_INCR),
            axi.arcache.eq(AXI_CACHE_MODIFIABLE),
            axi.rready.eq(1),  # every burst in flight has its room reserved
        ]
        # Bursts granted and not yet returned (a grant counts before its AR handshake).
        burst_done = axi.rvalid & axi.rlast
        m.d.sync += st.outstanding.eq(st.outstanding + (can_grant & requested) - burst_done)

    def _decode(self, m, st):
        """Commands decoded in two registered steps into a leaf's bookkeeping."""
        axi, p, lanes, leaves = st.axi, st.p, st.lanes, st.leaves
        lane_bits, burst_bits, region_beats = st.lane_bits, st.burst_bits, st.region_beats
        # Commands are decoded in two registered steps before they reach a leaf's bookkeeping:
        # the sums first (the region's beats, from its length and its offset into the first
        # beat; whether it wraps the address space), then what they mean (a region that wraps,
        # a leaf that does not exist, flags of the beat count). Each step takes a command only
        # when the next is empty (a command every other cycle at most), so the handshakes read
        # only flip-flops. Nothing from the command input reaches AR or the leaf registers in
        # the cycle it arrives. A leaf takes its command once every beat of its previous region
        # has arrived (``returning`` low).
        cmd = self.cmd.payload
        low_bits = self.length_bits          # the address bits a length can carry
        st.sums = Signal(data.StructLayout({
            "valid": 1,
            "target": len(cmd.target),
            "known": 1,
            "nonzero": 1,
            "next_beat": p.addr_width - lane_bits,
            "beats": region_beats,
            "begin": range(lanes),
            "end": range(1, lanes + 1),
            "wraps": 1,
        }))
        st.decoded = Signal(data.StructLayout({
            "valid": 1,
            "hot": leaves,             # one-hot: the leaf named, if it exists
            "bad": 1,
            "load": 1,
            "next_beat": p.addr_width - lane_bits,
            "beats": region_beats,
            "narrow": 1,               # beats < 2 * burst_beats
            "begin": range(lanes),
            "end": range(1, lanes + 1),
        }))
        decoded_leaves = Signal()
        sums_move = Signal()
        m.d.comb += [
            # (not while a leaf's address advances: they share the wires)
            decoded_leaves.eq(st.decoded.valid & ~st.advanced &
                              ~(st.returning & st.decoded.hot).any()),
            sums_move.eq(st.sums.valid & ~st.decoded.valid),
            self.cmd.ready.eq(~st.sums.valid),
        ]
        offset = cmd.addr[:lane_bits]
        with m.If(sums_move):
            m.d.sync += st.sums.valid.eq(0)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                st.sums.valid.eq(1),
                st.sums.target.eq(cmd.target),
                st.sums.known.eq(cmd.target < leaves),
                st.sums.nonzero.eq(cmd.bytes != 0),
                st.sums.next_beat.eq(cmd.addr[lane_bits:]),
                # ceil((addr + bytes) / lanes) - floor(addr / lanes): only the offset counts.
                st.sums.beats.eq((cmd.bytes + (offset + (lanes - 1)))[lane_bits:]),
                st.sums.begin.eq(offset),
                st.sums.end.eq((offset + cmd.bytes[:lane_bits] - 1)[:lane_bits] + 1),
                # The region wraps when its end is past 2**addr_width: only possible from the
                # top 2**length_bits bytes, when bytes > 2**length_bits - (the low address).
                st.sums.wraps.eq(cmd.addr[low_bits:].all() &
                              (cmd.bytes > (~cmd.addr[:low_bits]) + 1)),
            ]
        with m.If(decoded_leaves):
            m.d.sync += st.decoded.valid.eq(0)
        with m.If(sums_move):
            m.d.sync += [
                st.decoded.valid.eq(1),
                st.decoded.hot.eq(Cat(st.sums.known & (st.sums.target == i)
                                      for i in range(leaves))),
                st.decoded.bad.eq(~st.sums.known | st.sums.wraps),
                st.decoded.load.eq(st.sums.known & ~st.sums.wraps & st.sums.nonzero),
                st.decoded.next_beat.eq(st.sums.next_beat),
                st.decoded.beats.eq(st.sums.beats),
                st.decoded.narrow.eq(st.sums.beats[burst_bits + 1:] == 0),
                st.decoded.begin.eq(st.sums.begin),
                st.decoded.end.eq(st.sums.end),
            ]
        left = Signal.like(st.to_issue[0])
        m.d.comb += [
            # (the leaf's own returning flag, not the decoded one: one LUT to each leaf)
            st.loading.eq(Mux(st.decoded.valid & ~st.advanced & st.decoded.load,
                             st.decoded.hot & ~st.returning, 0)),
            left.eq(st.issued_left - st.issued_len),
            st.new_beat.eq(Mux(st.advanced, axi.araddr[lane_bits:] + st.issued_len,
                              st.decoded.next_beat)),
            st.new_left.eq(Mux(st.advanced, left, st.decoded.beats)),
            # (a command's region is not empty)
            st.new_pending.eq(~st.advanced | ~st.issued_closing),
            st.new_narrow.eq(Mux(st.advanced, left[burst_bits + 1:] == 0, st.decoded.narrow)),
        ]
        with m.If(decoded_leaves & st.decoded.bad):
            m.d.sync += self.error.eq(1)

    def _returns(self, m, st):
        """R: which leaf a beat is for, bursts in flight, a region's first and last beat."""
        axi, leaf_bits, leaves = st.axi, st.leaf_bits, st.leaves
        # Returning beats go to the buffer of the leaf named by RID (one-hot ``arriving``).
        st.rid = axi.rid[:leaf_bits]
        st.arriving = Signal(leaves)
        m.d.comb += st.arriving.eq(Cat(axi.rvalid & (st.rid == i) & st.returning[i]
                                    for i in range(leaves)))
        # (the same as arriving.any(), by a multiplexer: wide ORs become chains of LUTs)
        st.expected = Signal()
        m.d.comb += st.expected.eq(axi.rvalid & (st.rid < leaves) &
                                   st.returning.bit_select(st.rid, 1))
        # Errors on R are registered before they reach ``error`` (a cycle later).
        stray = Signal()
        m.d.sync += stray.eq(axi.rvalid & (~st.expected | (axi.rresp != RESP_OKAY)))
        with m.If(stray):
            m.d.sync += self.error.eq(1)
        for i in range(leaves):
            # A burst is in flight from its grant (before AR: none of its beats is back yet) to
            # its RLAST. ``final`` is registered from the count and what changes it this cycle.
            done = Signal(name=f"burst_done{i}")
            m.d.comb += done.eq(st.arriving[i] & axi.rlast)
            closes = Signal(name=f"closes{i}")
            m.d.comb += closes.eq(st.closed[i] | st.granted[i] & st.closing[i])
            count = st.inflight[i]
            m.d.sync += [
                count.eq(count + st.granted[i] - done),
                st.closed[i].eq(closes),
                st.final[i].eq(closes & Mux(st.granted[i] == done, count == 1,
                                         Mux(st.granted[i], count == 0, count == 2))),
            ]
            with m.If(st.arriving[i]):
                m.d.sync += st.first[i].eq(0)
                with m.If(axi.rlast & st.final[i]):
                    m.d.sync += st.returning[i].eq(0)
            # (never with a beat for the leaf: it takes a command only once none is due, so
            # none of its bursts is in flight)
            with m.If(st.loading[i]):
                m.d.sync += [
                    st.closed[i].eq(0),
                    st.final[i].eq(0),
                    st.first[i].eq(1),
                    st.begin[i].eq(st.decoded.begin),
                    st.end[i].eq(st.decoded.end),
                    st.returning[i].eq(1),
                ]

    def _buffers(self, m, st):
        """The leaves' buffer memory: written from R, read round robin into the leaves'."""
        axi, lanes, leaves, leaf_bits = st.axi, st.lanes, st.leaves, st.leaf_bits
        depth, slot_bits = st.depth, st.slot_bits
        # The leaves' buffers: one memory, leaf i's region at Cat(slot, i). A leaf's slots are
        # filled from R at its write pointer and read at its read pointer into its beat
        # register, only while that register is empty and no read for it is under way, so every
        # read lands: a slot is free once read. Pointers carry one bit more than a slot index
        # (full and empty differ).
        #
        # A slot is never written and read in one cycle (it is read only while it holds a beat,
        # written only once free), so no tool need emulate read-before-write on a collision
        # (Yosys' emulation delays the write a cycle and puts a multiplexer between the block
        # RAM's output and ``landed``). Yosys reads ``no_rw_check`` only from Verilog: builds
        # from RTLIL mark this memory's read ports themselves (see LEAF_BUFFER_MEMORY).
        attrs = {"no_rw_check": 1}
        if self.buffer_style:
            attrs["ram_style"] = self.buffer_style
        memory = Memory(shape=self.beat_layout, depth=1 << (slot_bits + leaf_bits), init=[],
                        attrs=attrs)
        m.submodules[LEAF_BUFFER_MEMORY] = memory
        write, read = memory.write_port(), memory.read_port()
        st.wptr = [Signal(slot_bits + 1, name=f"wptr{i}") for i in range(leaves)]
        st.rptr = [Signal(slot_bits + 1, name=f"rptr{i}") for i in range(leaves)]
        last_beat = axi.rlast & st.final.bit_select(st.rid, 1)
        beat = Signal(self.beat_layout)      # the beat as it goes to the buffer
        m.d.comb += [
            beat.data.eq(axi.rdata),
            beat.begin.eq(Mux(st.first.bit_select(st.rid, 1), Array(st.begin)[st.rid], 0)),
            beat.end.eq(Mux(last_beat, Array(st.end)[st.rid], lanes)),
            beat.last.eq(last_beat),
        ]
        st.stored = st.arriving                # one-hot: the leaf whose beat is written now
        store = st.expected                   # stored.any()
        st.leaf = st.rid                       # its index
        st.in_flight = C(0, 1)                # beats between R and the buffer
        if self.presort is not None:
            st.stored, store, st.in_flight, beat, st.leaf = self._presort(
                m, st.arriving, st.expected, beat, st.rid)
        m.d.comb += [
            write.addr.eq(Cat(Array(w[:slot_bits] for w in st.wptr)[st.leaf], st.leaf)),
            write.en.eq(store),
            write.data.eq(beat),
        ]
        # Room is reserved, so a beat never finds its leaf's region full.
        st.full = Cat((w ^ r) == (1 << slot_bits) for w, r in zip(st.wptr, st.rptr, strict=True))
        overflow = Signal(leaves)
        m.d.sync += overflow.eq(st.stored & st.full)
        with m.If(overflow.any()):
            m.d.sync += self.error.eq(1)

        # The read side, in registered steps (no path from the pointers' compare through the
        # choice to the memory's address in one cycle): a leaf is chosen a cycle before it is
        # read, among those with a stored beat, an empty register and no read under way or
        # about to be, round robin (the lowest above the leaf chosen two cycles before, else
        # the lowest; two priority chains side by side).
        st.stocked = Signal(leaves)           # a leaf has a beat in the memory
        st.reads = Signal(leaves)             # one-hot: the leaf read this cycle
        reading = Signal(leaves)             # one-hot: the leaf read last cycle (lands now)
        above = Signal(leaves)               # the leaves above the one chosen before
        # A leaf's beat registers hold ``count`` beats; with the ones read and landing it wants
        # another while they leave room for it, not in the cycle it is read (``stocked`` does
        # not count that read yet).
        st.landing = Signal(leaves)           # one-hot: the leaf read two cycles ago
        st.counts = [Signal(range(depth + 1), name=f"held{i}") for i in range(leaves)]
        wants = Signal(leaves)
        m.d.comb += wants.eq(Cat(st.stocked[i] & ~st.reads[i] &
                                 (st.counts[i] + reading[i] + st.landing[i] < depth)
                                 for i in range(leaves)))
        m.d.sync += [
            st.reads.eq(round_robin(m, wants, above, "reader")[0]),
            reading.eq(st.reads),
            st.landing.eq(reading),
        ]
        # From the one-hot choice by AND-OR: no priority chain on the way to the address.
        slot = Signal(slot_bits)
        index = Signal(leaf_bits)
        with m.If(st.reads.any()):
            m.d.sync += above.eq(Cat(index < i for i in range(leaves)))
        m.d.comb += [
            slot.eq(one_hot_select(st.reads, [r[:slot_bits] for r in st.rptr])),
            index.eq(one_hot_select(st.reads, [C(i, leaf_bits) for i in range(leaves)])),
            read.addr.eq(Cat(slot, index)),
            read.en.eq(st.reads.any()),
        ]

        # The memory's read data in a register next to it, every cycle.
        st.landed = Signal(self.beat_layout)
        m.d.sync += st.landed.eq(read.data)

    def _leaf_registers(self, m, st):
        """Each leaf's beat registers and its stream; the buffer's pointers."""
        depth, leaves, slot_bits = st.depth, st.leaves, st.slot_bits
        for i in range(leaves):
            # Beat registers in a ring: each loads only from the memory, so none has a
            # multiplexer in front (one register: none behind either).
            beats = [Signal(self.beat_layout, name=f"beat{i}_{d}") for d in range(depth)]
            taken = self.leaf[i].valid & self.leaf[i].ready
            # (With one register there is no position to keep: a zero-width signal would be a
            # [-1:0] wire that Verilator rejects.)
            into = Signal(range(depth), name=f"into{i}") if depth > 1 else C(0, 1)
            out = Signal(range(depth), name=f"out{i}") if depth > 1 else C(0, 1)
            for d in range(depth):
                with m.If(st.landing[i] & (into == d)):
                    m.d.sync += beats[d].eq(st.landed)
            m.d.sync += st.counts[i].eq(st.counts[i] + st.landing[i] - taken)
            if depth > 1:
                with m.If(st.landing[i]):
                    m.d.sync += into.eq(next_slot(into, depth))
                with m.If(taken):
                    m.d.sync += out.eq(next_slot(out, depth))
            m.d.comb += [
                self.leaf[i].valid.eq(st.counts[i] != 0),
                self.leaf[i].payload.eq(Array(b.as_value() for b in beats)[out]
                                        if depth > 1 else beats[0]),
            ]
            # A beat counts as stored the cycle after it is written (no path from R through the
            # pointers' compare), so it can be read two cycles after it arrives.
            next_r = st.rptr[i] + st.reads[i]
            m.d.sync += [st.wptr[i].eq(st.wptr[i] + st.stored[i]), st.rptr[i].eq(next_r),
                         st.stocked[i].eq(st.wptr[i] != next_r[:slot_bits + 1])]
            # Entries taken or promised: a burst's beats from its grant (its length is held
            # until then), until each is read out of the memory.
            issued = Mux(st.granted[i], st.burst_len[i], 0)
            m.d.sync += st.committed[i].eq(st.committed[i] + issued - st.reads[i])

    def _properties(self, m, st):
        """What the engine promises its memory and its leaves (formal builds only), given a
        memory that answers each burst once, in order per ARID.

        On AR: the rules of the channel (a request held until taken), beat-aligned bursts of
        at most ``burst_bytes`` that cross neither a ``burst_bytes`` boundary nor a 4 KB page,
        ARID a leaf, at most ``max_outstanding`` bursts in flight. A leaf's bursts read its
        commands' regions, beat by beat, in order and nothing else: for a command the solver
        chooses, its bursts start exactly where its region's beats left off, and none spans
        two regions or reads past the beats commanded. A beat is never written to a full
        buffer; ``error`` rises only after a command that wraps the address space or names no
        leaf. Each leaf's stream keeps its beat until taken."""
        # (from the parameter: the engine's own figures are what is checked)
        burst_beats = self.burst_bytes // self.params.beat_bytes
        axi, p = self.axi, self.params
        lane_bits, leaf_bits = st.lane_bits, st.leaf_bits
        request = Cat(axi.araddr, axi.arlen, axi.arid, axi.arsize, axi.arburst, axi.arcache)
        held_until_taken(m, axi.arvalid, axi.arready, request, "ar")
        for i in range(self.leaves):
            stream_rules(m, self.leaf[i], f"leaf{i}")

        burst = Signal(range(MAX_BURST_BEATS + 1))          # the offered burst's beats
        beat_address = axi.araddr[lane_bits:]
        m.d.comb += burst.eq(axi.arlen + 1)
        page_beats = PAGE_BYTES // p.beat_bytes
        with m.If(axi.arvalid):
            check(m, axi.araddr[:lane_bits] == 0, "ar: a burst starts inside a beat")
            check(m, burst <= burst_beats, f"ar: a burst over {self.burst_bytes} bytes")
            check(m, beat_address[:exact_log2(burst_beats)] + burst <= burst_beats,
                  f"ar: a burst crosses a {self.burst_bytes}-byte boundary")
            if p.addr_width - lane_bits >= exact_log2(page_beats):
                check(m, beat_address[:exact_log2(page_beats)] + burst <= page_beats,
                      "ar: a burst crosses a 4 KB page")
            check(m, axi.arid < self.leaves, "ar: ARID names no leaf")
        ar_taken = axi.arvalid & axi.arready
        r_done = axi.rvalid & axi.rready & axi.rlast
        in_flight = Signal(range(MAX_OUTSTANDING + 2))
        m.d.sync += in_flight.eq(in_flight + ar_taken - r_done)
        check(m, in_flight <= self.max_outstanding,
              f"ar: more than {self.max_outstanding} bursts in flight")
        full = Signal(self.leaves)
        m.d.comb += full.eq(st.full)
        check(m, (st.stored & full) == 0, "a beat written to a full leaf buffer")

        # The commands: their regions in beats, whether the engine takes them (it drops one
        # that wraps or names no leaf; an empty one has no beat).
        cmd = self.cmd.payload
        accepted = self.cmd.valid & self.cmd.ready
        end = Signal(p.addr_width + 1)
        m.d.comb += end.eq(cmd.addr + cmd.bytes)
        wraps = end > (1 << p.addr_width)
        bad = Signal()
        m.d.comb += bad.eq((cmd.target >= self.leaves) | wraps)
        beats = Signal(self.length_bits + 1)
        m.d.comb += beats.eq(Mux(cmd.bytes == 0, 0,
                                 (cmd.bytes + cmd.addr[:lane_bits] + p.beat_bytes - 1)
                                 >> lane_bits))
        seen_bad = Signal()
        with m.If(accepted & bad):
            m.d.sync += seen_bad.eq(1)
        with m.If(self.error):
            check(m, seen_bad, "error without a bad command")

        # One leaf, one of its commands (both any), counted in beats: those commanded for the
        # leaf, those its bursts have read, those before the chosen command's.
        count_bits = self.length_bits + 6
        leaf = Signal(leaf_bits)
        number = Signal(count_bits)
        m.d.comb += [leaf.eq(AnyConst(leaf_bits)), number.eq(AnyConst(count_bits))]
        commands, commanded, issued = (Signal(count_bits, name=n)
                                       for n in ("commands", "commanded", "issued"))
        chosen, before, start, region = (Signal(name="chosen"),
                                         Signal(count_bits, name="chosen_before"),
                                         Signal(len(beat_address), name="chosen_start"),
                                         Signal(count_bits, name="chosen_beats"))
        ours = accepted & ~bad & (cmd.target == leaf)
        with m.If(accepted):
            m.d.sync += commands.eq(commands + 1)
        with m.If(ours):
            m.d.sync += commanded.eq(commanded + beats)
            with m.If(commands == number):
                m.d.sync += [chosen.eq(1), before.eq(commanded), start.eq(cmd.addr[lane_bits:]),
                             region.eq(beats)]
        with m.If(ar_taken & (axi.arid == leaf)):
            m.d.sync += issued.eq(issued + burst)
            check(m, issued + burst <= commanded, "ar: a burst reads beats no command asked for")
            with m.If(chosen & (issued < before)):
                check(m, issued + burst <= before, "ar: a burst spans two regions")
            with m.If(chosen & (issued >= before) & (issued < before + region)):
                check(m, beat_address == start + (issued - before),
                      "ar: a burst reads outside its region or out of order")
                check(m, issued + burst <= before + region, "ar: a burst reads past its region")

    def _presort(self, m, arriving, expected, beat, rid):

        """Sort each beat's records on its way to the buffer (``presort``): the records of
        bytes ``[begin, end)`` first, in key order, then the others; the beat then holds its
        records from byte 0. The beat and whether to sort it are registered as they arrive, so
        the network starts from flip-flops (which records it keeps is a compare of the
        registered ``begin`` and ``end``); the leaf and the beat's flags wait beside it (a
        shift register), and the leaf's write pointer moves when the beat is written. Returns
        the delayed ``(arriving, expected, any in flight, beat, rid)``."""
        record = self.presort
        size = record.size // 8
        count = self.params.data_width // record.size
        m.submodules.presort = sorter = BeatSorter(record, count)
        entry = Signal(self.beat_layout)
        sort = Signal()
        m.d.sync += [entry.eq(beat), sort.eq(self.sort_beats)]
        moved = Signal(self.beat_layout)
        m.d.comb += [
            sorter.i.eq(entry.data),
            sorter.keep.eq(Cat((entry.begin <= k * size) & ((k + 1) * size <= entry.end)
                               for k in range(count))),
            sorter.sort.eq(sort),
            moved.begin.eq(Mux(sort, 0, entry.begin)),
            moved.end.eq(Mux(sort, entry.end - entry.begin, entry.end)),
            moved.last.eq(entry.last),
        ]
        # (the beat's flags and its leaf, delayed; the data comes out of the network)
        previous = (arriving, expected, rid)
        stores = []
        for stage in range(1 + sorter.latency):
            delayed = (Signal(len(arriving), name=f"presort{stage}_arriving"),
                       Signal(name=f"presort{stage}_store"),
                       Signal(len(rid), name=f"presort{stage}_rid"))
            m.d.sync += [d.eq(v) for d, v in zip(delayed, previous, strict=True)]
            stores.append(delayed[1])
            previous = delayed
        flags = moved
        for stage in range(sorter.latency):
            later = Signal(self.beat_layout, name=f"presort{stage}_flags")
            m.d.sync += [later.begin.eq(flags.begin), later.end.eq(flags.end),
                         later.last.eq(flags.last)]
            flags = later
        stored, store, leaf = previous
        out = Signal(self.beat_layout)
        m.d.comb += [out.begin.eq(flags.begin), out.end.eq(flags.end), out.last.eq(flags.last),
                     out.data.eq(sorter.o)]
        return stored, store, Cat(stores).any(), out, leaf
