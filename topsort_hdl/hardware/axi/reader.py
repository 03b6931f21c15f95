"""The read engine: one AXI4 master keeping many leaf buffers fed."""

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
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
from .signature import (
    AXI_CACHE_MODIFIABLE,
    BURST_INCR,
    RESP_OKAY,
    Axi4Signature,
    channel_layout,
    connect_channel,
)

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
        # cmd --> ReadCommands --region--> BurstIssuer --ar--> AR
        #                                   |   ^    ^
        #         granted, closing, loading |   |    | freed (an entry read out)
        #                                   v   | returning
        # R -----------------------> ReturnTracker   |
        #                                   | stores (leaf, beat)
        #                                   v        |
        #                  [BeatPresort] --> LeafBuffers --> leaf[i]
        m = Module()
        axi, p = self.axi, self.params
        m.submodules.commands = commands = ReadCommands(self)
        m.submodules.issuer = issuer = BurstIssuer(self)
        m.submodules.returns = returns = ReturnTracker(self)
        m.submodules.leaf_buffers = buffers = LeafBuffers(self)
        wiring.connect(m, wiring.flipped(self.cmd), commands.cmd)
        wiring.connect(m, commands.o, issuer.region)
        connect_channel(m, axi, "ar", issuer.ar)
        connect_channel(m, axi, "r", returns.r)    # every burst in flight has its room reserved
        m.d.comb += [
            axi.arsize.eq(p.size_code), axi.arburst.eq(BURST_INCR),
            axi.arcache.eq(AXI_CACHE_MODIFIABLE),
            issuer.short_bursts.eq(self.short_bursts),
            issuer.returning.eq(returns.returning),
            issuer.freed.eq(buffers.freed),
            issuer.burst_done.eq(axi.rvalid & axi.rlast),
            returns.granted.eq(issuer.granted),
            returns.closing.eq(issuer.closing),
            returns.loading.eq(issuer.loading),
            returns.begin.eq(commands.o.payload.begin),
            returns.end.eq(commands.o.payload.end),
        ]
        stores, sorting = returns.stores, C(0, 1)
        if self.presort is not None:
            m.submodules.presort = presort = BeatPresort(self)
            wiring.connect(m, stores, presort.i)
            m.d.comb += presort.sort.eq(self.sort_beats)
            stores, sorting = presort.o, presort.busy
        wiring.connect(m, stores, buffers.stores)
        for i in range(self.leaves):
            wiring.connect(m, buffers.leaf[i], wiring.flipped(self.leaf[i]))

        dropped = commands.o.valid & commands.o.ready & commands.o.payload.bad
        with m.If(dropped | returns.stray | buffers.overflow):
            m.d.sync += self.error.eq(1)
        # A leaf with beats to issue has beats to return: ``returning`` covers both.
        m.d.comb += self.idle.eq(~returns.returning.any() & ~commands.busy & ~issuer.busy &
                                 ~sorting)
        if is_formal(platform):
            self._properties(m)
        return m

    def _properties(self, m):
        """What the engine promises its memory and its leaves (formal builds only), given a
        memory that answers each burst once, in order per ARID.

        On AR: the rules of the channel (a request held until taken), beat-aligned bursts of
        at most ``burst_bytes`` that cross neither a ``burst_bytes`` boundary nor a 4 KB page,
        ARID a leaf, at most ``max_outstanding`` bursts in flight. A leaf's bursts read its
        commands' regions, beat by beat, in order and nothing else: for a command the solver
        chooses, its bursts start exactly where its region's beats left off, and none spans
        two regions or reads past the beats commanded. ``error`` rises only after a command
        that wraps the address space or names no leaf. Each leaf's stream keeps its beat until
        taken. (The buffers check that no beat is written to a full one.)"""
        # (from the parameter: the engine's own figures are what is checked)
        burst_beats = self.burst_bytes // self.params.beat_bytes
        axi, p = self.axi, self.params
        lane_bits, leaf_bits = exact_log2(p.beat_bytes), max(1, ceil_log2(self.leaves))
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


def _region_beats(engine):
    """The beats of a region (its byte count's beats, and one more each side for its ends)."""
    lane_bits = exact_log2(engine.params.beat_bytes)
    return range((1 << (engine.length_bits - lane_bits)) + 2)


def decoded_region_layout(engine):
    """A command as the leaves take it: ``hot`` one-hot, the leaf it names if it exists;
    ``bad`` (a leaf that does not exist, or a region that wraps the address space: dropped);
    ``load`` (a region to read: good and not empty); its first beat's address, its beats,
    ``narrow`` (fewer than two bursts' beats) and the region's bytes of its first and last
    beats."""
    p, lanes = engine.params, engine.params.beat_bytes
    return data.StructLayout({
        "hot": engine.leaves,
        "leaf": max(1, ceil_log2(engine.leaves)),   # the leaf named, as an index
        "known": 1,                                  # it exists
        "bad": 1,
        "load": 1,
        "next_beat": p.addr_width - exact_log2(lanes),
        "beats": _region_beats(engine),
        "narrow": 1,
        "begin": range(lanes),
        "end": range(1, lanes + 1),
    })


def store_layout(engine):
    """A beat on its way into the leaves' buffers: the leaf, one-hot and as an index (the
    pointers take the one, the memory's address the other), and the beat."""
    return data.StructLayout({
        "hot": engine.leaves,
        "leaf": max(1, ceil_log2(engine.leaves)),
        "beat": engine.beat_layout,
    })


class ReadCommands(wiring.Component):
    """The read engine's commands, decoded in two registered steps: the sums first (the
    region's beats, from its length and its offset into the first beat; whether it wraps the
    address space), then what they mean (:func:`decoded_region_layout`). Each step takes a
    command only when the next is empty (a command every other cycle at most), so the
    handshakes read only flip-flops, and nothing from ``cmd`` reaches ``o``'s taker in the cycle
    it arrives. Bad commands go out too, for the engine to drop and flag."""

    def __init__(self, engine):
        self._engine = engine
        super().__init__({
            "cmd": In(stream.Signature(engine.command_layout)),
            "o": Out(stream.Signature(decoded_region_layout(engine))),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        p, lanes, leaves = e.params, e.params.beat_bytes, e.leaves
        lane_bits, burst_bits = exact_log2(lanes), exact_log2(e.burst_beats)
        cmd, decoded = self.cmd.payload, self.o.payload
        low_bits = e.length_bits          # the address bits a length can carry
        sums = Signal(data.StructLayout({
            "valid": 1,
            "target": len(cmd.target),
            "known": 1,
            "nonzero": 1,
            "next_beat": p.addr_width - lane_bits,
            "beats": _region_beats(e),
            "begin": range(lanes),
            "end": range(1, lanes + 1),
            "wraps": 1,
        }))
        sums_move = Signal()
        m.d.comb += [
            sums_move.eq(sums.valid & ~self.o.valid),
            self.cmd.ready.eq(~sums.valid),
            self.busy.eq(sums.valid | self.o.valid),
        ]
        offset = cmd.addr[:lane_bits]
        with m.If(sums_move):
            m.d.sync += sums.valid.eq(0)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                sums.valid.eq(1),
                sums.target.eq(cmd.target),
                sums.known.eq(cmd.target < leaves),
                sums.nonzero.eq(cmd.bytes != 0),
                sums.next_beat.eq(cmd.addr[lane_bits:]),
                # ceil((addr + bytes) / lanes) - floor(addr / lanes): only the offset counts.
                sums.beats.eq((cmd.bytes + (offset + (lanes - 1)))[lane_bits:]),
                sums.begin.eq(offset),
                sums.end.eq((offset + cmd.bytes[:lane_bits] - 1)[:lane_bits] + 1),
                # The region wraps when its end is past 2**addr_width: only possible from the
                # top 2**length_bits bytes, when bytes > 2**length_bits - (the low address).
                sums.wraps.eq(cmd.addr[low_bits:].all() &
                              (cmd.bytes > (~cmd.addr[:low_bits]) + 1)),
            ]
        with m.If(self.o.valid & self.o.ready):
            m.d.sync += self.o.valid.eq(0)
        with m.If(sums_move):
            m.d.sync += [
                self.o.valid.eq(1),
                decoded.hot.eq(Cat(sums.known & (sums.target == i) for i in range(leaves))),
                decoded.leaf.eq(sums.target),
                decoded.known.eq(sums.known),
                decoded.bad.eq(~sums.known | sums.wraps),
                decoded.load.eq(sums.known & ~sums.wraps & sums.nonzero),
                decoded.next_beat.eq(sums.next_beat),
                decoded.beats.eq(sums.beats),
                decoded.narrow.eq(sums.beats[burst_bits + 1:] == 0),
                decoded.begin.eq(sums.begin),
                decoded.end.eq(sums.end),
            ]
        return m


class BurstIssuer(wiring.Component):
    """The leaves' bursts, round robin over the leaves whose buffers have room, onto ``ar``.

    A leaf takes a region from ``region`` once every beat of its previous one has arrived
    (``returning`` low): ``loading`` (one-hot) that cycle. Each leaf's :class:`LeafBursts`
    plans its next burst and requests it. A leaf is granted from the registered requests (the
    lowest requesting leaf above the last one granted, else the lowest): ``granted`` (one-hot)
    that cycle, with ``closing`` saying whether the burst ends its region; the burst goes to
    ``ar`` from that grant the next cycle, ARID the leaf. A grant needs AR free in the next
    cycle, so bursts leave every other cycle at most; at most ``max_outstanding`` are granted
    and not yet returned (``burst_done``: an RLAST). ``freed``: a leaf's buffer entry read out.
    One adder advances every leaf's address and count (a burst leaves every other cycle at
    most), and the same wires bring a region's: a leaf's registers take them, nothing else.
    """

    def __init__(self, engine):
        p, leaves = engine.params, engine.leaves
        self._engine = engine
        super().__init__({
            "region": In(stream.Signature(decoded_region_layout(engine))),
            "ar": Out(stream.Signature(channel_layout(p, "ar", ("id", "addr", "len")))),
            "short_bursts": In(1),
            "returning": In(leaves),
            "freed": In(leaves),
            "burst_done": In(1),
            "granted": Out(leaves),
            "closing": Out(leaves),
            "loading": Out(leaves),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        leaves, lane_bits = e.leaves, exact_log2(e.params.beat_bytes)
        burst_bits, leaf_bits = exact_log2(e.burst_beats), max(1, ceil_log2(leaves))
        region, ar = self.region.payload, self.ar
        plans = [LeafBursts(e) for _ in range(leaves)]
        for i, plan in enumerate(plans):
            m.submodules[f"leaf{i}"] = plan
        grant_any = Signal()                 # granted.any()
        on_ar = Signal(leaves)               # one-hot: the leaf whose burst is on AR (granted
        #                                      last cycle: its address and count advance now)
        on_ar_any = Signal()                 # on_ar.any()
        outstanding = Signal(range(e.max_outstanding + 1))
        mask = Signal(leaves)                # the leaves above the one granted last
        pick, requested = round_robin(m, Cat(plan.request for plan in plans), mask, "arbiter")
        can_grant = ~grant_any & (~ar.valid | ar.ready) & (outstanding < e.max_outstanding)
        m.d.sync += [
            self.granted.eq(Mux(can_grant, pick, 0)),
            grant_any.eq(can_grant & requested),
            on_ar.eq(self.granted),
            on_ar_any.eq(grant_any),
            # Bursts granted and not yet returned (a grant counts before its AR handshake).
            outstanding.eq(outstanding + (can_grant & requested) - self.burst_done),
        ]
        granted_index = Signal(leaf_bits)    # the granted leaf, encoded in the same step
        m.d.sync += granted_index.eq(one_hot_select(pick, [C(i, leaf_bits)
                                                            for i in range(leaves)]))
        # (compares with the index: prefix ORs of the one-hot would chain)
        with m.If(grant_any):
            m.d.sync += mask.eq(Cat(granted_index < i for i in range(leaves)))

        with m.If(ar.ready):
            m.d.sync += ar.valid.eq(0)
        issued_len = Signal.like(plans[0].burst_len)
        issued_left = Signal.like(plans[0].to_issue)
        issued_closing = Signal()
        chosen_len = Signal.like(plans[0].burst_len)
        # (by the index through multiplexers: fewer LUTs than AND-OR over wide fields)
        m.d.comb += chosen_len.eq(Array(plan.burst_len for plan in plans)[granted_index])
        with m.If(grant_any):
            m.d.sync += [
                ar.valid.eq(1),
                ar.payload.addr.eq(Cat(C(0, lane_bits),
                                       Array(plan.next_beat for plan in plans)[granted_index])),
                ar.payload.len.eq(chosen_len - 1),
                ar.payload.id.eq(granted_index),
                issued_len.eq(chosen_len),
                issued_left.eq(Array(plan.to_issue for plan in plans)[granted_index]),
                issued_closing.eq(self.closing.bit_select(granted_index, 1)),
            ]

        left = Signal.like(issued_left)
        update = Signal(plans[0].update.shape())
        m.d.comb += [
            # (the leaf's own returning flag, not the decoded one: one LUT to each leaf)
            self.loading.eq(Mux(self.region.valid & ~on_ar_any & region.load,
                                region.hot & ~self.returning, 0)),
            # (not while a leaf's address advances: they share the wires)
            # (by the index through a multiplexer: an OR over every leaf's flag was deeper)
            self.region.ready.eq(~on_ar_any &
                                 ~(region.known & self.returning.bit_select(region.leaf, 1))),
            left.eq(issued_left - issued_len),
            update.next_beat.eq(Mux(on_ar_any, ar.payload.addr[lane_bits:] + issued_len,
                                    region.next_beat)),
            update.left.eq(Mux(on_ar_any, left, region.beats)),
            # (a region is not empty)
            update.pending.eq(~on_ar_any | ~issued_closing),
            update.narrow.eq(Mux(on_ar_any, left[burst_bits + 1:] == 0, region.narrow)),
            self.busy.eq(grant_any | ar.valid | (outstanding != 0)),
        ]
        for i, plan in enumerate(plans):
            m.d.comb += [
                plan.short_bursts.eq(self.short_bursts), plan.granted.eq(self.granted[i]),
                plan.on_ar.eq(on_ar[i]), plan.loading.eq(self.loading[i]),
                plan.freed.eq(self.freed[i]), plan.update.eq(update),
                self.closing[i].eq(plan.closing),
            ]
        return m


class LeafBursts(wiring.Component):
    """One leaf's next burst: its address (``next_beat``) and the beats left (``to_issue``),
    its length and whether it ends the region (``closing``), and its ``request``.

    The burst runs to the burst boundary (the short one while ``short_bursts``) or to the
    region's end. Its length is registered, and whether the leaf's buffer has room for it is
    registered from that: the arbiter reads only flip-flops. While the leaf requests, its
    length is held, so the burst that leaves is the one room was checked for
    (``short_bursts`` may change meanwhile). Room a cycle old is safe (a buffer only drains
    meanwhile), and a request stays up until its grant. The length is two cycles behind the
    address and count, so a leaf that has just taken a region sits out a cycle, one just
    granted three (its burst goes to AR the cycle after the grant, its address and count take
    ``update`` the cycle after that). Room is counted in buffer entries taken or promised: a
    burst's beats from its grant until each is read out (``freed``).
    """

    def __init__(self, engine):
        p, lane_bits = engine.params, exact_log2(engine.params.beat_bytes)
        self._engine = engine
        address = p.addr_width - lane_bits
        super().__init__({
            "short_bursts": In(1),
            "granted": In(1),
            "on_ar": In(1),              # the leaf's burst is on AR (granted last cycle)
            "loading": In(1),            # the leaf takes a region
            "freed": In(1),
            # (the shared adder's: the leaf's next address and count, after either)
            "update": In(data.StructLayout({"next_beat": address,
                                            "left": _region_beats(engine),
                                            "pending": 1, "narrow": 1})),
            "request": Out(1),
            "closing": Out(1),
            "burst_len": Out(range(engine.burst_beats + 1)),
            "next_beat": Out(address),
            "to_issue": Out(_region_beats(engine)),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        burst_bits, short_bits = exact_log2(e.burst_beats), exact_log2(e.short_burst_beats)
        pending = Signal()                   # to_issue != 0, kept as a flag
        narrow = Signal()                    # to_issue < 2 * burst_beats, kept as a flag
        settling = Signal()
        committed = Signal(range(e.buffer_beats + 1))
        to_boundary = Signal(range(e.burst_beats + 1))
        m.d.comb += to_boundary.eq(
            Mux(self.short_bursts, e.short_burst_beats - self.next_beat[:short_bits],
                e.burst_beats - self.next_beat[:burst_bits]))
        # to_issue <= to_boundary: only its low bits can be, the rest are zero (narrow).
        low = self.to_issue[:burst_bits + 1]
        requests = Signal()                  # request's next value
        m.d.comb += requests.eq(pending & ~settling & ~self.granted & ~self.on_ar &
                                (committed + self.burst_len <= e.buffer_beats))
        # (a request's length is the one its room was checked with: held from that check)
        with m.If(~requests):
            m.d.sync += [
                self.burst_len.eq(Mux(narrow & (low < to_boundary), low, to_boundary)),
                self.closing.eq(narrow & (low <= to_boundary)),
            ]
        m.d.sync += [
            self.request.eq(requests),
            settling.eq(self.loading | self.on_ar),
            committed.eq(committed + Mux(self.granted, self.burst_len, 0) - self.freed),
        ]
        with m.If(self.on_ar | self.loading):
            m.d.sync += [self.next_beat.eq(self.update.next_beat),
                         self.to_issue.eq(self.update.left),
                         pending.eq(self.update.pending), narrow.eq(self.update.narrow)]
        return m


class ReturnTracker(wiring.Component):
    """R: which leaf a beat is for, the leaves' bursts in flight, a region's first and last
    beats; each beat goes out on ``stores`` with its leaf and the region's bytes of it.

    A leaf's bursts come back in order (one ARID per leaf), so its region's last beat is the
    RLAST that comes once its closing burst is granted and is its only burst in flight. Bursts
    in flight are counted per leaf (a few bits, where a count of the region's beats took the
    full length's width and a LUT a bit to load and count). A leaf is ``returning`` from its
    ``loading`` to its region's last beat. ``stray`` (registered) flags a beat nobody asked for
    or an error response. R is always ready: every burst in flight has its room reserved.
    """

    def __init__(self, engine):
        p, leaves, lanes = engine.params, engine.leaves, engine.params.beat_bytes
        self._engine = engine
        super().__init__({
            "r": In(stream.Signature(channel_layout(p, "r", ("id", "data", "resp", "last")),
                                     always_ready=True)),
            "granted": In(leaves),
            "closing": In(leaves),
            "loading": In(leaves),
            "begin": In(range(lanes)),           # the loading region's bytes of its first beat
            "end": In(range(1, lanes + 1)),      # and of its last
            "returning": Out(leaves),
            "stores": Out(stream.Signature(store_layout(engine), always_ready=True)),
            "stray": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        lanes, leaves, r = e.params.beat_bytes, e.leaves, self.r
        rid = r.payload.id[:max(1, ceil_log2(leaves))]
        arriving = Signal(leaves)            # one-hot: the leaf the beat on R is for
        expected = Signal()
        # (the same as arriving.any(), by a multiplexer: wide ORs become chains of LUTs)
        m.d.comb += [
            arriving.eq(Cat(r.valid & (rid == i) & self.returning[i] for i in range(leaves))),
            expected.eq(r.valid & (rid < leaves) & self.returning.bit_select(rid, 1)),
        ]
        m.d.sync += self.stray.eq(r.valid & (~expected | (r.payload.resp != RESP_OKAY)))
        closing_granted = Signal(leaves)     # the leaf's closing burst is granted
        last_due = Signal(leaves)            # the leaf's next RLAST ends its region
        first = Signal(leaves)
        begin = [Signal(range(lanes), name=f"begin{i}") for i in range(leaves)]
        end = [Signal(range(1, lanes + 1), name=f"end{i}") for i in range(leaves)]
        for i in range(leaves):
            # A burst is in flight from its grant (before AR: none of its beats is back yet) to
            # its RLAST. ``last_due`` is registered from the count and what changes it this
            # cycle.
            count = Signal(range(e.max_outstanding + 1), name=f"inflight{i}")
            done = Signal(name=f"burst_done{i}")
            closes_next = Signal(name=f"closes_next{i}")
            m.d.comb += [done.eq(arriving[i] & r.payload.last),
                         closes_next.eq(closing_granted[i] | self.granted[i] & self.closing[i])]
            m.d.sync += [
                count.eq(count + self.granted[i] - done),
                closing_granted[i].eq(closes_next),
                last_due[i].eq(closes_next & Mux(self.granted[i] == done, count == 1,
                                         Mux(self.granted[i], count == 0, count == 2))),
            ]
            with m.If(arriving[i]):
                m.d.sync += first[i].eq(0)
                with m.If(r.payload.last & last_due[i]):
                    m.d.sync += self.returning[i].eq(0)
            # (never with a beat for the leaf: it takes a region only once none is due, so
            # none of its bursts is in flight)
            with m.If(self.loading[i]):
                m.d.sync += [closing_granted[i].eq(0), last_due[i].eq(0), first[i].eq(1),
                             begin[i].eq(self.begin), end[i].eq(self.end),
                             self.returning[i].eq(1)]
        last_beat = r.payload.last & last_due.bit_select(rid, 1)
        store = self.stores.payload
        m.d.comb += [
            self.stores.valid.eq(expected),
            store.hot.eq(arriving),
            store.leaf.eq(rid),
            store.beat.data.eq(r.payload.data),
            store.beat.begin.eq(Mux(first.bit_select(rid, 1), Array(begin)[rid], 0)),
            store.beat.end.eq(Mux(last_beat, Array(end)[rid], lanes)),
            store.beat.last.eq(last_beat),
        ]
        return m


class BeatPresort(wiring.Component):
    """Each beat's records sorted on its way to the buffer while ``sort`` is high: the records
    of bytes ``[begin, end)`` first, in key order, then the others; the beat then holds its
    records from byte 0 (:class:`~topsort_hdl.hardware.merge.BeatSorter`). The beat and whether
    to sort it are registered as they arrive, so the network starts from flip-flops (which
    records it keeps is a compare of the registered ``begin`` and ``end``); the leaf and the
    beat's flags wait beside it (a shift register). ``busy`` while a beat is inside."""

    def __init__(self, engine):
        self._engine = engine
        layout = store_layout(engine)
        super().__init__({
            "i": In(stream.Signature(layout, always_ready=True)),
            "o": Out(stream.Signature(layout, always_ready=True)),
            "sort": In(1),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        record = e.presort
        size, count = record.size // 8, e.params.data_width // record.size
        m.submodules.sorter = sorter = BeatSorter(record, count)
        entry = Signal(e.beat_layout)
        sort = Signal()
        m.d.sync += [entry.eq(self.i.payload.beat), sort.eq(self.sort)]
        moved = Signal(e.beat_layout)
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
        previous = (self.i.payload.hot, self.i.valid, self.i.payload.leaf)
        stores = []
        for stage in range(1 + sorter.latency):
            delayed = (Signal(len(previous[0]), name=f"presort{stage}_arriving"),
                       Signal(name=f"presort{stage}_store"),
                       Signal(len(previous[2]), name=f"presort{stage}_rid"))
            m.d.sync += [d.eq(v) for d, v in zip(delayed, previous, strict=True)]
            stores.append(delayed[1])
            previous = delayed
        flags = moved
        for stage in range(sorter.latency):
            later = Signal(e.beat_layout, name=f"presort{stage}_flags")
            m.d.sync += [later.begin.eq(flags.begin), later.end.eq(flags.end),
                         later.last.eq(flags.last)]
            flags = later
        hot, valid, leaf = previous
        out = self.o.payload
        m.d.comb += [
            self.o.valid.eq(valid), out.hot.eq(hot), out.leaf.eq(leaf),
            out.beat.begin.eq(flags.begin), out.beat.end.eq(flags.end),
            out.beat.last.eq(flags.last), out.beat.data.eq(sorter.o),
            self.busy.eq(Cat(stores).any()),
        ]
        return m


class LeafBuffers(wiring.Component):
    """The leaves' buffers: one memory, written from ``stores``, read round robin into each
    leaf's :class:`LeafRegisters` and its ``leaf`` stream; ``freed`` (one-hot) the leaf whose
    entry is read out, ``overflow`` a beat for a full buffer (room is reserved: never).

    Leaf i's region of the memory is at ``Cat(slot, i)``. A leaf's slots are filled at its
    write pointer and read at its read pointer into its registers, only while they have room
    and no read for it is under way, so every read lands: a slot is free once read. Pointers
    carry one bit more than a slot index (full and empty differ). A slot is never written and
    read in one cycle (it is read only while it holds a beat, written only once free), so no
    tool need emulate read-before-write on a collision (Yosys' emulation delays the write a
    cycle and puts a multiplexer between the block RAM's output and ``read_beat``). Yosys reads
    ``no_rw_check`` only from Verilog: builds from RTLIL mark this memory's read ports
    themselves (see :data:`LEAF_BUFFER_MEMORY`).

    The read side runs in registered steps (no path from the pointers' compare through the
    choice to the memory's address in one cycle): a leaf is chosen a cycle before it is read,
    among those with a stored beat, room in its registers and no read under way or about to
    be, round robin (the lowest above the leaf chosen two cycles before, else the lowest; two
    priority chains side by side). The memory's read data go to a register next to it every
    cycle (a block RAM's read data are slow to leave it), and from there to the leaf's. A beat
    counts as stored the cycle after it is written (no path from R through the pointers'
    compare), so it can be read two cycles after it arrives.
    """

    def __init__(self, engine):
        self._engine = engine
        super().__init__({
            "stores": In(stream.Signature(store_layout(engine), always_ready=True)),
            "leaf": Out(stream.Signature(engine.beat_layout)).array(engine.leaves),
            "freed": Out(engine.leaves),
            "overflow": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        leaves, leaf_bits = e.leaves, max(1, ceil_log2(e.leaves))
        slot_bits = ceil_log2(e.buffer_beats)
        attrs = {"no_rw_check": 1}
        if e.buffer_style:
            attrs["ram_style"] = e.buffer_style
        memory = Memory(shape=e.beat_layout, depth=1 << (slot_bits + leaf_bits), init=[],
                        attrs=attrs)
        m.submodules[LEAF_BUFFER_MEMORY] = memory
        write, read = memory.write_port(), memory.read_port()
        wptr = [Signal(slot_bits + 1, name=f"wptr{i}") for i in range(leaves)]
        rptr = [Signal(slot_bits + 1, name=f"rptr{i}") for i in range(leaves)]
        store = self.stores.payload
        m.d.comb += [
            write.addr.eq(Cat(Array(w[:slot_bits] for w in wptr)[store.leaf], store.leaf)),
            write.en.eq(self.stores.valid),
            write.data.eq(store.beat),
        ]
        full = Cat((w ^ r) == (1 << slot_bits) for w, r in zip(wptr, rptr, strict=True))
        overflow = Signal(leaves)
        m.d.sync += overflow.eq(store.hot & full)
        m.d.comb += self.overflow.eq(overflow.any())
        if is_formal(platform):
            check(m, (store.hot & full) == 0, "a beat written to a full leaf buffer")

        registers = [LeafRegisters(e.beat_layout, e.leaf_beats) for _ in range(leaves)]
        stocked = Signal(leaves)             # a leaf has a beat in the memory
        read_hot = self.freed                # one-hot: the leaf read this cycle
        read_hot_1 = Signal(leaves)          # ... last cycle (its beat leaves the memory now)
        read_hot_2 = Signal(leaves)          # ... two cycles ago (its beat is in read_beat)
        above = Signal(leaves)               # the leaves above the one chosen before
        # A leaf's registers hold ``held`` beats; with the ones read and on their way it wants
        # another while they leave room for it, not in the cycle it is read (``stocked`` does
        # not count that read yet).
        wants = Signal(leaves)
        m.d.comb += wants.eq(Cat(stocked[i] & ~read_hot[i] &
                                 (leaf.held + read_hot_1[i] + read_hot_2[i] < e.leaf_beats)
                                 for i, leaf in enumerate(registers)))
        m.d.sync += [
            read_hot.eq(round_robin(m, wants, above, "reader")[0]),
            read_hot_1.eq(read_hot),
            read_hot_2.eq(read_hot_1),
        ]
        # From the one-hot choice by AND-OR: no priority chain on the way to the address.
        slot = Signal(slot_bits)
        index = Signal(leaf_bits)
        with m.If(read_hot.any()):
            m.d.sync += above.eq(Cat(index < i for i in range(leaves)))
        read_beat = Signal(e.beat_layout)    # the memory's read data, in a register
        m.d.comb += [
            slot.eq(one_hot_select(read_hot, [r[:slot_bits] for r in rptr])),
            index.eq(one_hot_select(read_hot, [C(i, leaf_bits) for i in range(leaves)])),
            read.addr.eq(Cat(slot, index)),
            read.en.eq(read_hot.any()),
        ]
        m.d.sync += read_beat.eq(read.data)
        for i, leaf in enumerate(registers):
            m.submodules[f"leaf{i}"] = leaf
            wiring.connect(m, leaf.o, wiring.flipped(self.leaf[i]))
            m.d.comb += [leaf.load.eq(read_hot_2[i]), leaf.beat.eq(read_beat)]
            next_r = rptr[i] + read_hot[i]
            m.d.sync += [wptr[i].eq(wptr[i] + store.hot[i]), rptr[i].eq(next_r),
                         stocked[i].eq(wptr[i] != next_r[:slot_bits + 1])]
        return m


class LeafRegisters(wiring.Component):
    """A leaf's ``depth`` beat registers in a ring in front of its stream ``o``: each loads
    only from the buffer memory's read register (``beat``, when ``load``), so none has a
    multiplexer in front (one register: none behind either). ``held``: the beats in them."""

    def __init__(self, beat_layout, depth):
        self._depth = depth
        super().__init__({
            "load": In(1),
            "beat": In(beat_layout),
            "o": Out(stream.Signature(beat_layout)),
            "held": Out(range(depth + 1)),
        })

    def elaborate(self, platform):
        m = Module()
        depth, layout = self._depth, self.beat.shape()
        beats = [Signal(layout, name=f"beat{d}") for d in range(depth)]
        taken = self.o.valid & self.o.ready
        # (With one register there is no position to keep: a zero-width signal would be a
        # [-1:0] wire that Verilator rejects.)
        into = Signal(range(depth), name="into") if depth > 1 else C(0, 1)
        out = Signal(range(depth), name="out") if depth > 1 else C(0, 1)
        for d in range(depth):
            with m.If(self.load & (into == d)):
                m.d.sync += beats[d].eq(self.beat)
        m.d.sync += self.held.eq(self.held + self.load - taken)
        if depth > 1:
            with m.If(self.load):
                m.d.sync += into.eq(next_slot(into, depth))
            with m.If(taken):
                m.d.sync += out.eq(next_slot(out, depth))
        m.d.comb += [
            self.o.valid.eq(self.held != 0),
            self.o.payload.eq(Array(b.as_value() for b in beats)[out] if depth > 1 else beats[0]),
        ]
        return m
