"""The write engine: a stream of beats into INCR bursts, optionally batched over several ports."""

from types import SimpleNamespace

from amaranth.asserts import AnyConst
from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.axi_params import MAX_BURST_BEATS, MAX_OUTSTANDING, PAGE_BYTES
from ..block import Block
from ..logic import borrow, past_top
from ..properties import check, held_until_taken, is_formal
from ..queue import RegisteredFlagsFIFO
from ..records import check_at_least, check_power_of_two
from .commands import check_engine_params, write_command_layout
from .signature import AXI_CACHE_MODIFIABLE, BURST_INCR, RESP_OKAY, Axi4Signature

__all__ = ["AxiWriteEngine"]


class AxiWriteEngine(Block):
    """Write one job's stream of beats through ``ports`` AXI4 masters.

    A command gives the job's length in bytes and ``slots`` beat-aligned base addresses per port
    (``addr[port * slots + slot]``). The stream ``i`` carries ``ports`` beats per transfer (beat
    0 first: lowest addresses). With one port and one slot the job is written contiguously from
    its base. Otherwise the stream is cut into batches of ``batch_bytes``: batch ``k`` goes to
    port ``k % ports``, and the ``m``-th batch of a port to its slot ``m % slots`` at
    ``base + (m // slots) * batch_bytes`` (the paper's phase-2 output layout: each port writes
    round robin into the free channels of its group), so each port writes at one beat per cycle
    while the stream runs at ``ports`` beats per cycle. The job's last transfer may be partly
    filled; its last beat is written with byte strobes. With several slots, bases must be
    aligned to ``batch_bytes``.

    Each port buffers its data and issues a burst only once all of its beats are buffered, so W
    never waits in the middle of a burst. Bursts end on ``burst_bytes`` boundaries (no 4 KB
    crossing) or where the job's data for the port ends.

    ``done`` pulses when every write response of the job is in; ``busy`` is high from the
    command until then. ``error`` (sticky until reset) flags an error response, or a command
    with a misaligned base or a region that wraps the address space; such a job writes nothing:
    its stream is taken and dropped, then ``done`` pulses.

    Parameters
    ----------
    params : AxiParams
    ports : int
        AXI masters, a power of two up to 16.
    slots : int
        Regions each port writes its batches into, round robin; a power of two up to 16.
    burst_bytes : int
        Largest burst, a power of two from one beat to 4 KB.
    batch_bytes : int
        Batch size with several ports: a power of two, a whole number of input transfers.
    max_outstanding : int
        Bursts per port waiting for their write response, at most.
    buffer_beats : int
        Data buffer of each port in beats, at least a burst and 3 transfers (default: two
        bursts, or two batches if larger).
    length_bits : int
        Width of the job's byte count.
    """

    module_tag_format = "write_engine_p{ports}"

    def __init__(self, params, ports=1, *, slots=1, burst_bytes=4096, batch_bytes=4096,
                 max_outstanding=4, buffer_beats=None, length_bits=36):
        self.burst_beats = check_engine_params(params, burst_bytes, max_outstanding, length_bits)
        check_power_of_two("ports", ports, high=16)
        check_power_of_two("slots", slots, high=16)
        transfer_bytes = ports * params.beat_bytes
        check_power_of_two("batch_bytes", batch_bytes)
        if ports > 1 and batch_bytes < transfer_bytes:
            raise ValueError(f"batch_bytes must be a power of two of at least {transfer_bytes} "
                             f"({ports} beats), not {batch_bytes}")
        if slots > 1 and batch_bytes < burst_bytes:
            raise ValueError(f"batch_bytes must be at least burst_bytes ({burst_bytes}) with "
                             f"several slots, not {batch_bytes}")
        batch_beats = batch_bytes // params.beat_bytes if ports > 1 else 0
        if buffer_beats is None:
            buffer_beats = max(3 * ports, 2 * max(self.burst_beats, batch_beats))
        check_at_least("buffer_beats", buffer_beats, max(3 * ports, self.burst_beats))
        if buffer_beats % ports:  # each buffer entry holds one transfer of `ports` beats
            raise ValueError(f"buffer_beats must be a multiple of ports ({ports}), "
                             f"not {buffer_beats}")
        self.params = params
        self.ports = ports
        self.slots = slots
        self.burst_bytes = burst_bytes
        self.batch_bytes = batch_bytes
        self.max_outstanding = max_outstanding
        self.buffer_beats = buffer_beats
        self.length_bits = length_bits
        self.command_layout = write_command_layout(params, ports, slots, length_bits)
        super().__init__({
            "axi": Out(Axi4Signature(params)).array(ports),
            "cmd": In(stream.Signature(self.command_layout)),
            "i": In(stream.Signature(data.ArrayLayout(params.data_width, ports))),
            "busy": Out(1),
            "done": Out(1),
            "error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, ports = self.params, self.ports
        lanes, lane_bits = p.beat_bytes, exact_log2(p.beat_bytes)
        burst_bits = exact_log2(self.burst_beats)
        entry_layout = data.StructLayout({
            "data": data.ArrayLayout(p.data_width, ports),
            "beats": range(1, ports + 1),    # beats of the entry that carry data
            # beats - 1 (one port: always 0, and no zero-width field for Verilator to flag)
            **({"last_beat": range(ports)} if ports > 1 else {}),
            "final": 1,                      # the job's last transfer
            "tail": range(1, lanes + 1),     # bytes of its last beat
        })
        st = SimpleNamespace(p=p, ports=ports, lanes=lanes, lane_bits=lane_bits,
                             burst_bits=burst_bits, entry_layout=entry_layout)
        self._job(m, st)
        self._take(m, st)
        port_idle = []
        for j, (buffer, axi) in enumerate(zip(st.buffers, self.axi, strict=True)):
            m.submodules[f"buffer{j}"] = buffer
            q = self._port_bursts(m, st, j, buffer, axi)
            port_idle.append(self._port_data(m, st, j, buffer, axi, q))

        with m.If(st.running & ~st.taking & Cat(port_idle).all()):
            m.d.sync += [st.running.eq(0), self.done.eq(1)]
        if is_formal(platform):
            self._properties(m)
        return m

    def _job(self, m, st):
        """The job: the command taken and checked, the bytes still to take from the stream,
        the port its batch goes to."""
        p, ports, lanes, lane_bits = st.p, st.ports, st.lanes, st.lane_bits
        # The job: bytes still to take from the stream, the port its batch goes to.
        st.running = Signal()      # from the command to the last write response
        st.taking = Signal()       # the stream still has data for this job
        st.dropping = Signal()     # a rejected job: take the stream, write nothing
        st.remaining = Signal(self.length_bits)
        st.port_sel = Signal(range(max(2, ports)))
        st.batch_transfers = self.batch_bytes // (ports * lanes)
        st.batch_left = Signal(range(st.batch_transfers + 1))

        # A command is checked in the cycle after it is taken, from registered per-base
        # flags, so that no compare of the command's fields runs into the job's state. (The
        # stream's data arrive much later: the tree fills first.)
        st.cmd = self.cmd.payload
        bases = ports * self.slots
        align_bits = exact_log2(self.batch_bytes) if self.slots > 1 else lane_bits
        st.transfer_bytes = ports * lanes
        checking = Signal()     # the command taken last cycle is being checked
        empty = Signal()        # it has no bytes
        misaligned = Signal(bases)
        wraps = Signal(bases)
        st.final = Signal()        # remaining <= transfer_bytes: the stream's last transfer
        m.d.comb += self.cmd.ready.eq(~st.running & ~checking)
        m.d.comb += self.busy.eq(st.running | checking)
        m.d.sync += self.done.eq(0)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                st.remaining.eq(st.cmd.bytes),
                st.final.eq(~borrow(st.transfer_bytes, st.cmd.bytes)),
                st.port_sel.eq(0),
                st.batch_left.eq(st.batch_transfers),
                checking.eq(1),
                empty.eq(borrow(st.cmd.bytes, 1)),
                misaligned.eq(Cat(st.cmd.addr[j][:align_bits] != 0 for j in range(bases))),
                # (a region may end at the top of the address space: only past it wraps)
                wraps.eq(Cat(past_top(st.cmd.addr[j] + st.cmd.bytes, p.addr_width)
                             for j in range(bases))),
            ]
        with m.If(checking):
            bad = misaligned.any() | wraps.any()
            m.d.sync += checking.eq(0)
            with m.If(empty):
                m.d.sync += self.done.eq(1)
            with m.Else():
                m.d.sync += [st.running.eq(1), st.taking.eq(1), st.dropping.eq(bad)]
            with m.If(bad):
                m.d.sync += self.error.eq(1)

    def _take(self, m, st):
        """The stream taken into each port's buffer, a batch at a time, as entries that say
        which of their beats carry data."""
        ports, lanes, lane_bits, entry_layout = st.ports, st.lanes, st.lane_bits, st.entry_layout
        # (credited: the take below writes a buffer only with its room)
        st.buffers = [RegisteredFlagsFIFO(shape=entry_layout, capacity=self.buffer_beats // ports,
                                         buffered=True, credited=True)
                     for _ in range(ports)]
        # (a sum of products, not an Array: Icarus leaves the case statement an Array
        # becomes at X when the flags it reads never change after time 0)
        st.room = Cat(b.i.ready & (st.port_sel == j) for j, b in enumerate(st.buffers)).any()
        st.entry = Signal(entry_layout)
        if ports > 1:
            m.d.comb += st.entry.last_beat.eq(Mux(st.final, (st.remaining - 1)[lane_bits:],
                                                  ports - 1))
        m.d.comb += [
            st.entry.data.eq(self.i.payload),
            st.entry.beats.eq(Mux(st.final, (st.remaining + lanes - 1)[lane_bits:], ports)),
            st.entry.final.eq(st.final),
            st.entry.tail.eq(Mux(st.final, (st.remaining - 1)[:lane_bits] + 1, lanes)),
            self.i.ready.eq(st.taking & (st.dropping | st.room)),
        ]
        st.took = self.i.valid & self.i.ready
        with m.If(st.took):
            m.d.sync += [st.remaining.eq(Mux(st.final, 0, st.remaining - st.transfer_bytes)),
                         st.final.eq(~borrow(2 * st.transfer_bytes, st.remaining))]
            with m.If(st.final):
                m.d.sync += st.taking.eq(0)
            if ports > 1:
                with m.If(st.batch_left == 1):
                    m.d.sync += [st.port_sel.eq(st.port_sel + 1),
                                 st.batch_left.eq(st.batch_transfers)]
                with m.Else():
                    m.d.sync += st.batch_left.eq(st.batch_left - 1)

    def _port_bursts(self, m, st, j, buffer, axi):
        """Port ``j``'s bursts: planned from the beats buffered, issued on AW, queued for W.
        Returns the registers its W and B side share."""
        p, ports, lane_bits, burst_bits = st.p, st.ports, st.lane_bits, st.burst_bits
        q = SimpleNamespace()
        # (flat: one LUT of flip-flops and VALID)
        written = self.i.valid & st.taking & ~st.dropping & buffer.i.ready & (st.port_sel == j)
        m.d.comb += [buffer.i.payload.eq(st.entry), buffer.i.valid.eq(written)]

        # Bursts: issued once every beat of the burst is buffered.
        # The current slot's next burst, in beats, is a plain register (burst lengths
        # derive from it); the other slots' addresses wait in `saved`, in the order they
        # come next: a batch's end rotates them (no multiplexer indexed by the slot).
        slots = self.slots
        address = Signal(p.addr_width - lane_bits, name=f"address{j}")
        saved = [Signal(p.addr_width - lane_bits, name=f"saved{j}_{k}")
                 for k in range(1, slots)]
        unsent = Signal(range(self.buffer_beats + 1), name=f"unsent{j}")  # not in a burst
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += address.eq(st.cmd.addr[j * slots][lane_bits:])
            for k in range(1, slots):
                m.d.sync += saved[k - 1].eq(st.cmd.addr[j * slots + k][lane_bits:])
        to_boundary = Signal(range(self.burst_beats + 1), name=f"to_boundary{j}")
        m.d.comb += to_boundary.eq(self.burst_beats - address[:burst_bits] if burst_bits
                                   else 1)
        # The beats written last cycle reach `unsent` a cycle later, from a register:
        # the stream's VALID, from another block, runs into no adder. Bursts only wait
        # for them; a flush waits until the job's last beats are counted.
        q.landing = Signal(name=f"landing{j}")            # wrote != 0
        wrote = Signal(range(ports + 1), name=f"wrote{j}")
        m.d.sync += [q.landing.eq(written), wrote.eq(Mux(written, st.entry.beats, 0))]
        arrived = Signal(name=f"arrived{j}")    # the job's data is all counted in unsent
        m.d.comb += arrived.eq(~st.taking & ~q.landing)
        ready_beats = Signal(range(self.burst_beats + 1), name=f"ready_beats{j}")
        with m.If(unsent >= to_boundary):
            m.d.comb += ready_beats.eq(to_boundary)
        with m.Elif(arrived):   # flush what is left
            m.d.comb += ready_beats.eq(unsent)
        # The next burst is decided a cycle ahead, so that the issue step reads only
        # flip-flops. A cycle-old decision is the one the current state would take, or
        # a burst a cycle early: unsent only grows until a burst is issued (which forces
        # the next decision to wait a cycle), and a flush is decided only once the job's
        # data has stopped arriving. Bursts are the same; they may leave a cycle later.
        length = Signal(range(self.burst_beats + 1), name=f"length{j}")
        m.d.sync += length.eq(ready_beats)
        # with the decision, whether it is a burst at all, and whether it ends a batch (a
        # burst ending short of its boundary, a flush, ends no batch: batch >= burst)
        pending = Signal(name=f"pending{j}")
        m.d.sync += pending.eq((unsent >= to_boundary) | arrived & (unsent != 0))
        ends_batch = Signal(name=f"ends_batch{j}")
        if slots > 1:
            batch_bits = exact_log2(self.batch_bytes) - lane_bits
            m.d.sync += ends_batch.eq((unsent >= to_boundary) &
                                      address[burst_bits:batch_bits].all())

        # Queued bursts for W: awlen, and whether the burst has one beat or two, decided
        # here from the length register so that W never decodes the queue's RAM output.
        q.burst_layout = data.StructLayout({"rest": range(self.burst_beats), "single": 1,
                                         "pair": 1})
        # (credited: a burst is issued only with room to queue it)
        q.bursts = RegisteredFlagsFIFO(shape=q.burst_layout, capacity=self.max_outstanding,
                                       buffered=False, credited=True)
        m.submodules[f"bursts{j}"] = q.bursts
        queued = Signal(q.burst_layout, name=f"queued{j}")
        q.pop = Signal(name=f"pop{j}")
        q.outstanding = Signal(range(self.max_outstanding + 1), name=f"outstanding{j}")
        q.issue = Signal(name=f"issue{j}")
        m.d.comb += q.issue.eq(pending & (~axi.awvalid | axi.awready) & q.bursts.i.ready &
                             (q.outstanding < self.max_outstanding))
        with m.If(axi.awready):
            m.d.sync += axi.awvalid.eq(0)
        with m.If(q.issue):
            m.d.sync += [
                length.eq(0),
                pending.eq(0),
                axi.awvalid.eq(1),
                axi.awaddr.eq(Cat(C(0, lane_bits), address)),
                axi.awlen.eq(length - 1),
                address.eq(address + length),
            ]
            if slots > 1:   # a batch is whole bursts: move on when one ends a batch
                with m.If(ends_batch):
                    ring = [*saved, address + length]
                    m.d.sync += [address.eq(ring[0]),
                                 *(saved[k].eq(ring[k + 1]) for k in range(slots - 1))]
        m.d.comb += [
            axi.awsize.eq(p.size_code), axi.awburst.eq(BURST_INCR),
            axi.awcache.eq(AXI_CACHE_MODIFIABLE),
            queued.rest.eq(length - 1), queued.single.eq(length == 1),
            queued.pair.eq(length == 2),
            q.bursts.i.payload.eq(queued), q.bursts.i.valid.eq(q.issue), q.bursts.o.ready.eq(q.pop),
        ]
        m.d.sync += unsent.eq(unsent + wrote - Mux(q.issue, length, 0))
        # For the job's end, as flip-flops: outstanding != 0, decided with the count, and
        # unsent != 0 a cycle late. Beats not yet in a burst are then always seen: in
        # `unsent` a cycle ago, or landing, or landed in `unsent` since.
        q.unsent_any = Signal(name=f"unsent_any{j}")
        q.landed = Signal(name=f"landed{j}")
        q.outstanding_any = Signal(name=f"outstanding_any{j}")
        m.d.sync += [q.unsent_any.eq(unsent != 0), q.landed.eq(q.landing)]
        return q

    def _port_data(self, m, st, j, buffer, axi, q):
        """Port ``j``'s W beats out of its buffer, a burst at a time, and its B responses;
        returns whether the port is idle."""
        ports, lanes, entry_layout = st.ports, st.lanes, st.entry_layout
        # Data: one beat per cycle out of the buffered entries. A burst's first beat goes
        # with the queue's head, which is popped then; the rest of the burst counts down
        # in registers, WLAST among them, so neither WLAST nor the pop waits on a compare.
        head = Signal(entry_layout, name=f"head{j}")
        beat = Signal(range(max(2, ports)), name=f"beat{j}")      # beat within the entry
        in_burst = Signal(name=f"in_burst{j}")   # past the first beat of a burst
        left = Signal(range(self.burst_beats), name=f"left{j}")   # its beats still to send
        last_left = Signal(name=f"last_left{j}")          # left == 1
        first = Signal(q.burst_layout, name=f"first{j}")
        m.d.comb += [head.eq(buffer.o.payload), first.eq(q.bursts.o.payload)]
        last_of_entry = beat == head.last_beat if ports > 1 else C(1)
        wlast = Mux(in_burst, last_left, first.single)
        m.d.comb += [
            axi.wvalid.eq(buffer.o.valid & (in_burst | q.bursts.o.valid)),
            axi.wdata.eq(head.data[beat]),
            axi.wstrb.eq(Mux(head.final & last_of_entry,
                             (C(1, lanes + 1) << head.tail) - 1, (1 << lanes) - 1)),
            axi.wlast.eq(wlast),
        ]
        # The enables are written out flat, each one product of flip-flops and WREADY
        # (synthesis keeps an expression's structure: through WVALID they were deeper).
        sent = Signal(name=f"sent{j}")
        m.d.comb += [
            sent.eq(buffer.o.valid & (in_burst | q.bursts.o.valid) & axi.wready),
            q.pop.eq(buffer.o.valid & q.bursts.o.valid & ~in_burst & axi.wready),
            buffer.o.ready.eq(axi.wready & last_of_entry & (in_burst | q.bursts.o.valid)),
        ]
        with m.If(sent):
            m.d.sync += beat.eq(Mux(last_of_entry, 0, beat + 1))
        with m.If(sent & in_burst):
            m.d.sync += [left.eq(left - 1), last_left.eq(left == 2)]
            with m.If(last_left):
                m.d.sync += in_burst.eq(0)
        with m.If(q.pop):
            m.d.sync += [in_burst.eq(~first.single), left.eq(first.rest),
                         last_left.eq(first.pair)]

        m.d.comb += axi.bready.eq(1)
        response = axi.bvalid
        with m.If(response & (axi.bresp != RESP_OKAY)):
            m.d.sync += self.error.eq(1)
        m.d.sync += [
            q.outstanding.eq(q.outstanding + q.issue - response),
            q.outstanding_any.eq(q.issue | Mux(response, q.outstanding != 1, q.outstanding_any)),
        ]
        return (~q.unsent_any & ~q.landing & ~q.landed & ~axi.awvalid & ~q.bursts.o.valid &
                ~in_burst & ~buffer.o.valid & ~q.outstanding_any)

    def _properties(self, m):
        """What the engine promises its memory (formal builds only), given a memory that
        answers each burst once. On every port: AW and W requests held until taken,
        beat-aligned bursts of at most ``burst_bytes`` that cross neither a ``burst_bytes``
        boundary nor a 4 KB page, each burst's W beats as many as its AWLEN says with WLAST on
        the last, at most ``max_outstanding`` bursts unanswered, nothing written for a rejected
        job, and ``done`` only once every burst is answered. ``error`` rises only after a
        command the engine must reject. With one port and one slot: the job's beats are
        written in order from its base, each with the data the stream brought, full strobes
        but on the job's last beat, which has exactly the job's last bytes."""
        # (from the parameter: the engine's own figures are what is checked)
        burst_beats = self.burst_bytes // self.params.beat_bytes
        p, lanes = self.params, self.params.beat_bytes
        lane_bits, burst_bits = exact_log2(lanes), exact_log2(burst_beats)
        page_bits = exact_log2(PAGE_BYTES // lanes)
        count_bits = self.length_bits + 2
        cmd, accepted = self.cmd.payload, self.cmd.valid & self.cmd.ready
        align_bits = exact_log2(self.batch_bytes) if self.slots > 1 else lane_bits
        ends = [Signal(p.addr_width + 1, name=f"job_end{k}") for k in range(len(cmd.addr))]
        m.d.comb += [end.eq(addr + cmd.bytes) for end, addr in zip(ends, cmd.addr, strict=True)]
        bad = Cat(((addr[:align_bits] != 0) | (end > (1 << p.addr_width)))
                  for addr, end in zip(cmd.addr, ends, strict=True)).any()
        rejected, seen_bad = Signal(), Signal()
        with m.If(accepted):
            m.d.sync += rejected.eq(bad)
            with m.If(bad):
                m.d.sync += seen_bad.eq(1)
        with m.If(self.error):
            check(m, seen_bad, "error without a command to reject")
        bursts_open = []
        for j, axi in enumerate(self.axi):
            request = Cat(axi.awaddr, axi.awlen, axi.awsize, axi.awburst, axi.awcache)
            aw_waiting = held_until_taken(m, axi.awvalid, axi.awready, request, f"aw{j}")
            held_until_taken(m, axi.wvalid, axi.wready, Cat(axi.wdata, axi.wstrb, axi.wlast),
                             f"w{j}")
            burst = Signal(range(MAX_BURST_BEATS + 1), name=f"aw{j}_beats")
            beat_address = axi.awaddr[lane_bits:]
            m.d.comb += burst.eq(axi.awlen + 1)
            with m.If(axi.awvalid):
                check(m, axi.awaddr[:lane_bits] == 0, f"aw{j}: a burst starts inside a beat")
                check(m, burst <= burst_beats,
                      f"aw{j}: a burst over {self.burst_bytes} bytes")
                check(m, beat_address[:burst_bits] + burst <= burst_beats,
                      f"aw{j}: a burst crosses a {self.burst_bytes}-byte boundary")
                if p.addr_width - lane_bits >= page_bits:
                    check(m, beat_address[:page_bits] + burst <= 1 << page_bits,
                          f"aw{j}: a burst crosses a 4 KB page")
            with m.If(rejected):
                check(m, ~axi.awvalid & ~axi.wvalid, f"port {j}: a rejected job writes")
            # Bursts numbered as AW offers them; W's bursts numbered by WLAST; one chosen.
            offered, closed, beats, chosen_len = (
                Signal(count_bits, name=f"aw{j}_bursts"), Signal(count_bits, name=f"w{j}_bursts"),
                Signal(MAX_BURST_BEATS.bit_length(), name=f"w{j}_beats"),
                Signal(MAX_BURST_BEATS.bit_length(), name=f"aw{j}_chosen_beats"))
            number = Signal(count_bits, name=f"aw{j}_chosen")
            m.d.comb += number.eq(AnyConst(count_bits))
            offer = axi.awvalid & ~aw_waiting
            with m.If(offer):
                m.d.sync += offered.eq(offered + 1)
                with m.If(offered == number):
                    m.d.sync += chosen_len.eq(burst)
            beat_sent = axi.wvalid & axi.wready
            with m.If(axi.wvalid):
                check(m, closed < offered + offer, f"w{j}: a beat before its burst's AW")
            with m.If(beat_sent):
                m.d.sync += beats.eq(beats + 1)
                with m.If(axi.wlast):
                    m.d.sync += [beats.eq(0), closed.eq(closed + 1)]
                # (its AW may be offered in this very cycle)
                length = Mux(offer & (offered == number), burst, chosen_len)
                with m.If(closed == number):
                    check(m, (beats + 1 == length) == axi.wlast,
                          f"w{j}: WLAST not on the burst's last beat")
            taken_aw = axi.awvalid & axi.awready
            unanswered = Signal(range(MAX_OUTSTANDING + 2), name=f"b{j}_unanswered")
            m.d.sync += unanswered.eq(unanswered + taken_aw - (axi.bvalid & axi.bready))
            check(m, unanswered <= self.max_outstanding,
                  f"aw{j}: more than {self.max_outstanding} bursts unanswered")
            bursts_open.append((unanswered != 0) | axi.awvalid | (offered != closed))
        with m.If(self.done):
            check(m, ~Cat(bursts_open).any(), "done before every burst is written and answered")
        if self.ports == 1 and self.slots == 1:
            self._single_port_properties(m, accepted, bad, count_bits)

    def _single_port_properties(self, m, accepted, bad, count_bits):
        """One port, one slot: the job's beats in order from its base, the stream's data in
        them, the strobes of its last bytes (see :meth:`_properties`)."""
        axi, lanes = self.axi[0], self.params.beat_bytes
        lane_bits = exact_log2(lanes)
        cmd = self.cmd.payload
        base, job_beats, tail = (Signal(len(axi.awaddr) - lane_bits, name="job_base"),
                                 Signal(count_bits, name="job_beats"),
                                 Signal(range(1, lanes + 1), name="job_tail"))
        issued = Signal(count_bits, name="job_issued")
        written = Signal(count_bits, name="job_written")
        with m.If(accepted):
            m.d.sync += [base.eq(cmd.addr[0][lane_bits:]), issued.eq(0), written.eq(0),
                         job_beats.eq(Mux(bad, 0, (cmd.bytes + lanes - 1) >> lane_bits)),
                         tail.eq((cmd.bytes - 1)[:lane_bits] + 1)]
        taken_aw = axi.awvalid & axi.awready
        with m.If(taken_aw):
            m.d.sync += issued.eq(issued + axi.awlen + 1)
            check(m, axi.awaddr[lane_bits:] == base + issued,
                  "aw0: a burst not where the job's previous one ended")
            check(m, issued + axi.awlen + 1 <= job_beats, "aw0: a burst past the job's bytes")
        beat_sent = axi.wvalid & axi.wready
        full = (1 << lanes) - 1
        with m.If(axi.wvalid):
            check(m, written < job_beats, "w0: a beat past the job's bytes")
            check(m, axi.wstrb == Mux(written + 1 == job_beats, (C(1, lanes + 1) << tail) - 1,
                                      full), "w0: strobes that are not the job's bytes")
        with m.If(beat_sent):
            m.d.sync += written.eq(written + 1)
        with m.If(self.done):
            check(m, written == job_beats, "done before the job's beats are written")
        # The stream's kept transfers and W's beats, numbered across jobs; one chosen.
        kept, sent, chosen = (Signal(count_bits + 2, name=n) for n in ("kept", "sent", "chosen"))
        chosen_data = Signal(len(axi.wdata), name="chosen_data")
        m.d.comb += chosen.eq(AnyConst(len(chosen)))
        rejected_job = Signal()
        with m.If(accepted):
            m.d.sync += rejected_job.eq(bad)
        taken = self.i.valid & self.i.ready & ~rejected_job
        with m.If(taken):
            m.d.sync += kept.eq(kept + 1)
            with m.If(kept == chosen):
                m.d.sync += chosen_data.eq(self.i.payload[0])
        with m.If(beat_sent):
            m.d.sync += sent.eq(sent + 1)
            with m.If(sent == chosen):
                check(m, axi.wdata == chosen_data, "w0: a beat not the stream's, or out of order")
