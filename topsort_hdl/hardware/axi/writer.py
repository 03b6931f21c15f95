"""The write engine: a stream of beats into INCR bursts, optionally batched over several ports."""

from amaranth.asserts import AnyConst
from amaranth.hdl import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
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

__all__ = ["AxiWriteEngine", "WriteIntake", "WritePort"]


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
        # cmd, i --> WriteIntake --entries[j]--> WritePort j --axi[j]-->
        #               (job, stream)  <--idle[j]--   (buffer, bursts, W, B)
        m = Module()
        m.submodules.intake = intake = WriteIntake(self)
        wiring.connect(m, wiring.flipped(self.cmd), intake.cmd)
        wiring.connect(m, wiring.flipped(self.i), intake.i)
        errors = [intake.rejected]
        for j in range(self.ports):
            m.submodules[f"port{j}"] = port = WritePort(self, intake.entry_layout)
            wiring.connect(m, intake.entries[j], port.entries)
            wiring.connect(m, port.axi, wiring.flipped(self.axi[j]))
            m.d.comb += [port.start.eq(intake.start), port.taking.eq(intake.taking),
                         port.bases.eq(self.cmd.payload.addr[j * self.slots:
                                                             (j + 1) * self.slots]),
                         intake.ports_idle[j].eq(port.idle)]
            errors.append(port.response_error)
        m.d.comb += [self.busy.eq(intake.busy), self.done.eq(intake.done)]
        with m.If(Cat(errors).any()):
            m.d.sync += self.error.eq(1)
        if is_formal(platform):
            self._properties(m)
        return m

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


class WriteIntake(wiring.Component):
    """The write engine's job and stream: a command taken and checked, then the stream taken a
    transfer at a time into entries (each saying which of its beats carry data and whether it
    is the job's last), a batch to each port in turn, or taken and dropped for a rejected job.

    ``start`` pulses as a command is taken (the ports load their bases from it); ``taking``
    holds while the job's stream still brings data; the job ends, ``done``, once the stream is
    taken and every port is idle. ``rejected`` pulses for a command with a misaligned base or
    a region that wraps the address space.
    """

    def __init__(self, engine):
        p, ports = engine.params, engine.ports
        lanes = p.beat_bytes
        self._engine = engine
        self.entry_layout = data.StructLayout({
            "data": data.ArrayLayout(p.data_width, ports),
            "beats": range(1, ports + 1),    # beats of the entry that carry data
            # beats - 1 (one port: always 0, and no zero-width field for Verilator to flag)
            **({"last_beat": range(ports)} if ports > 1 else {}),
            "final": 1,                      # the job's last transfer
            "tail": range(1, lanes + 1),     # bytes of its last beat
        })
        super().__init__({
            "cmd": In(stream.Signature(engine.command_layout)),
            "i": In(stream.Signature(data.ArrayLayout(p.data_width, ports))),
            "entries": Out(stream.Signature(self.entry_layout)).array(ports),
            "ports_idle": In(ports),
            "start": Out(1),
            "taking": Out(1),
            "busy": Out(1),
            "done": Out(1),
            "rejected": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        p, ports = e.params, e.ports
        lanes, lane_bits = p.beat_bytes, exact_log2(p.beat_bytes)
        running = Signal()      # from the command to the last write response
        dropping = Signal()     # a rejected job: take the stream, write nothing
        remaining = Signal(e.length_bits)
        port_sel = Signal(range(max(2, ports)))
        batch_transfers = e.batch_bytes // (ports * lanes)
        batch_left = Signal(range(batch_transfers + 1))

        # A command is checked in the cycle after it is taken, from registered per-base
        # flags, so that no compare of the command's fields runs into the job's state. (The
        # stream's data arrive much later: the tree fills first.)
        cmd, bases = self.cmd.payload, ports * e.slots
        align_bits = exact_log2(e.batch_bytes) if e.slots > 1 else lane_bits
        transfer_bytes = ports * lanes
        checking, empty = Signal(), Signal()    # the command taken last cycle; it has no bytes
        misaligned, wraps = Signal(bases), Signal(bases)
        final = Signal()        # remaining <= transfer_bytes: the stream's last transfer
        m.d.comb += [self.cmd.ready.eq(~running & ~checking),
                     self.busy.eq(running | checking),
                     self.start.eq(self.cmd.valid & self.cmd.ready)]
        m.d.sync += self.done.eq(0)
        with m.If(self.start):
            m.d.sync += [
                remaining.eq(cmd.bytes),
                final.eq(~borrow(transfer_bytes, cmd.bytes)),
                port_sel.eq(0),
                batch_left.eq(batch_transfers),
                checking.eq(1),
                empty.eq(borrow(cmd.bytes, 1)),
                misaligned.eq(Cat(cmd.addr[j][:align_bits] != 0 for j in range(bases))),
                # (a region may end at the top of the address space: only past it wraps)
                wraps.eq(Cat(past_top(cmd.addr[j] + cmd.bytes, p.addr_width)
                             for j in range(bases))),
            ]
        with m.If(checking):
            bad = misaligned.any() | wraps.any()
            m.d.sync += checking.eq(0)
            with m.If(empty):
                m.d.sync += self.done.eq(1)
            with m.Else():
                m.d.sync += [running.eq(1), self.taking.eq(1), dropping.eq(bad)]
            with m.If(bad):
                m.d.comb += self.rejected.eq(1)

        # The stream into the entries: each port's offer is flat (one LUT of flip-flops and
        # VALID), the port's buffer takes it with room.
        entry = Signal(self.entry_layout)
        if ports > 1:
            m.d.comb += entry.last_beat.eq(Mux(final, (remaining - 1)[lane_bits:], ports - 1))
        # (a sum of products, not an Array: Icarus leaves the case statement an Array
        # becomes at X when the flags it reads never change after time 0)
        room = Cat(out.ready & (port_sel == j) for j, out in enumerate(self.entries)).any()
        m.d.comb += [
            entry.data.eq(self.i.payload),
            entry.beats.eq(Mux(final, (remaining + lanes - 1)[lane_bits:], ports)),
            entry.final.eq(final),
            entry.tail.eq(Mux(final, (remaining - 1)[:lane_bits] + 1, lanes)),
            self.i.ready.eq(self.taking & (dropping | room)),
        ]
        for j, out in enumerate(self.entries):
            m.d.comb += [out.payload.eq(entry),
                         out.valid.eq(self.i.valid & self.taking & ~dropping & (port_sel == j))]
        with m.If(self.i.valid & self.i.ready):
            m.d.sync += [remaining.eq(Mux(final, 0, remaining - transfer_bytes)),
                         final.eq(~borrow(2 * transfer_bytes, remaining))]
            with m.If(final):
                m.d.sync += self.taking.eq(0)
            if ports > 1:
                with m.If(batch_left == 1):
                    m.d.sync += [port_sel.eq(port_sel + 1), batch_left.eq(batch_transfers)]
                with m.Else():
                    m.d.sync += batch_left.eq(batch_left - 1)

        with m.If(running & ~self.taking & self.ports_idle.all()):
            m.d.sync += [running.eq(0), self.done.eq(1)]
        return m


class WritePort(wiring.Component):
    """One port of the write engine: its entries buffered, bursts planned from the beats
    buffered and issued on AW once all their beats are in (so W never waits inside a burst),
    queued for W, the W beats sent a burst at a time, and the B responses counted.

    ``start`` loads the port's ``bases`` (its slots' addresses, from the command); ``taking``
    says the job's stream still brings data (so a last short burst waits for it); ``idle``:
    nothing of the job is left in the port; ``response_error`` pulses with an error response.
    """

    def __init__(self, engine, entry_layout):
        p = engine.params
        self._engine = engine
        self._entry_layout = entry_layout
        super().__init__({
            "entries": In(stream.Signature(entry_layout)),
            "start": In(1),
            "bases": In(data.ArrayLayout(p.addr_width, engine.slots)),
            "taking": In(1),
            "axi": Out(Axi4Signature(p)),
            "idle": Out(1),
            "response_error": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        e = self._engine
        m.submodules.buffer = buffer = RegisteredFlagsFIFO(
            shape=self._entry_layout, capacity=e.buffer_beats // e.ports, buffered=True)
        wiring.connect(m, wiring.flipped(self.entries), buffer.i)
        written = self.entries.valid & self.entries.ready
        # Each burst queued for W: awlen, and whether it has one beat or two, decided from the
        # length register so that W never decodes the queue's RAM output.
        queued = Signal(data.StructLayout({"rest": range(e.burst_beats), "single": 1,
                                           "pair": 1}))
        # (credited: a burst is issued only with room to queue it)
        m.submodules.bursts = bursts = RegisteredFlagsFIFO(
            shape=queued.shape(), capacity=e.max_outstanding, buffered=False, credited=True)
        issue, outstanding, waiting = self._bursts(m, written, bursts, queued)
        sending = self._beats(m, buffer, bursts)
        responses = self._responses(m, issue, outstanding)
        m.d.comb += self.idle.eq(~waiting & ~sending & ~responses)
        return m

    def _bursts(self, m, written, bursts, queued):
        """Bursts planned from the beats buffered, issued on AW and queued for W; returns the
        issue, the count of bursts waiting for their response, and whether beats wait."""
        e, axi, p = self._engine, self.axi, self._engine.params
        lane_bits, burst_bits, slots = exact_log2(p.beat_bytes), exact_log2(e.burst_beats), e.slots
        # The current slot's next burst, in beats, is a plain register (burst lengths
        # derive from it); the other slots' addresses wait in `saved`, in the order they
        # come next: a batch's end rotates them (no multiplexer indexed by the slot).
        address = Signal(p.addr_width - lane_bits)
        saved = [Signal(p.addr_width - lane_bits, name=f"saved_{k}") for k in range(1, slots)]
        unsent = Signal(range(e.buffer_beats + 1))    # beats buffered, not in a burst
        with m.If(self.start):
            m.d.sync += address.eq(self.bases[0][lane_bits:])
            for k in range(1, slots):
                m.d.sync += saved[k - 1].eq(self.bases[k][lane_bits:])
        to_boundary = Signal(range(e.burst_beats + 1))
        m.d.comb += to_boundary.eq(e.burst_beats - address[:burst_bits] if burst_bits else 1)
        # The beats written last cycle reach `unsent` a cycle later, from a register:
        # the stream's VALID, from another block, runs into no adder. Bursts only wait
        # for them; a flush waits until the job's last beats are counted.
        landing = Signal()            # wrote != 0
        wrote = Signal(range(e.ports + 1))
        m.d.sync += [landing.eq(written), wrote.eq(Mux(written, self.entries.payload.beats, 0))]
        arrived = Signal()    # the job's data is all counted in unsent
        m.d.comb += arrived.eq(~self.taking & ~landing)
        ready_beats = Signal(range(e.burst_beats + 1))
        with m.If(unsent >= to_boundary):
            m.d.comb += ready_beats.eq(to_boundary)
        with m.Elif(arrived):   # flush what is left
            m.d.comb += ready_beats.eq(unsent)
        # The next burst is decided a cycle ahead, so that the issue step reads only
        # flip-flops. A cycle-old decision is the one the current state would take, or
        # a burst a cycle early: unsent only grows until a burst is issued (which forces
        # the next decision to wait a cycle), and a flush is decided only once the job's
        # data has stopped arriving. Bursts are the same; they may leave a cycle later.
        length = Signal(range(e.burst_beats + 1))
        m.d.sync += length.eq(ready_beats)
        # with the decision, whether it is a burst at all, and whether it ends a batch (a
        # burst ending short of its boundary, a flush, ends no batch: batch >= burst)
        pending = Signal()
        m.d.sync += pending.eq((unsent >= to_boundary) | arrived & (unsent != 0))
        ends_batch = Signal()
        if slots > 1:
            batch_bits = exact_log2(e.batch_bytes) - lane_bits
            m.d.sync += ends_batch.eq((unsent >= to_boundary) &
                                      address[burst_bits:batch_bits].all())

        outstanding = Signal(range(e.max_outstanding + 1))
        issue = Signal()
        m.d.comb += issue.eq(pending & (~axi.awvalid | axi.awready) & bursts.i.ready &
                             (outstanding < e.max_outstanding))
        with m.If(axi.awready):
            m.d.sync += axi.awvalid.eq(0)
        with m.If(issue):
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
            bursts.i.payload.eq(queued), bursts.i.valid.eq(issue),
        ]
        m.d.sync += unsent.eq(unsent + wrote - Mux(issue, length, 0))
        # For the job's end, as flip-flops: unsent != 0 a cycle late. Beats not yet in a
        # burst are then always seen: in `unsent` a cycle ago, or landing, or landed in
        # `unsent` since.
        unsent_any = Signal()
        landed = Signal()
        m.d.sync += [unsent_any.eq(unsent != 0), landed.eq(landing)]
        return issue, outstanding, unsent_any | landing | landed | axi.awvalid

    def _beats(self, m, buffer, bursts):
        """The W beats out of the buffer, a burst at a time; returns whether any is left."""
        e, axi = self._engine, self.axi
        ports, lanes = e.ports, e.params.beat_bytes
        # Data: one beat per cycle out of the buffered entries. A burst's first beat goes
        # with the queue's head, which is popped then; the rest of the burst counts down
        # in registers, WLAST among them, so neither WLAST nor the pop waits on a compare.
        head = Signal(self._entry_layout)
        beat = Signal(range(max(2, ports)))      # beat within the entry
        in_burst = Signal()   # past the first beat of a burst
        left = Signal(range(e.burst_beats))   # its beats still to send
        last_left = Signal()          # left == 1
        first = Signal(bursts.o.payload.shape())
        m.d.comb += [head.eq(buffer.o.payload), first.eq(bursts.o.payload)]
        last_of_entry = beat == head.last_beat if ports > 1 else C(1)
        wlast = Mux(in_burst, last_left, first.single)
        m.d.comb += [
            axi.wvalid.eq(buffer.o.valid & (in_burst | bursts.o.valid)),
            axi.wdata.eq(head.data[beat]),
            axi.wstrb.eq(Mux(head.final & last_of_entry,
                             (C(1, lanes + 1) << head.tail) - 1, (1 << lanes) - 1)),
            axi.wlast.eq(wlast),
        ]
        # The enables are written out flat, each one product of flip-flops and WREADY
        # (synthesis keeps an expression's structure: through WVALID they were deeper).
        sent = Signal()
        pop = Signal()
        m.d.comb += [
            sent.eq(buffer.o.valid & (in_burst | bursts.o.valid) & axi.wready),
            pop.eq(buffer.o.valid & bursts.o.valid & ~in_burst & axi.wready),
            bursts.o.ready.eq(pop),
            buffer.o.ready.eq(axi.wready & last_of_entry & (in_burst | bursts.o.valid)),
        ]
        with m.If(sent):
            m.d.sync += beat.eq(Mux(last_of_entry, 0, beat + 1))
        with m.If(sent & in_burst):
            m.d.sync += [left.eq(left - 1), last_left.eq(left == 2)]
            with m.If(last_left):
                m.d.sync += in_burst.eq(0)
        with m.If(pop):
            m.d.sync += [in_burst.eq(~first.single), left.eq(first.rest),
                         last_left.eq(first.pair)]
        return bursts.o.valid | in_burst | buffer.o.valid

    def _responses(self, m, issue, outstanding):
        """The B responses counted against the bursts issued; returns whether any is owed
        (a flip-flop, decided with the count)."""
        axi = self.axi
        m.d.comb += axi.bready.eq(1)
        response = axi.bvalid
        m.d.comb += self.response_error.eq(response & (axi.bresp != RESP_OKAY))
        outstanding_any = Signal()
        m.d.sync += [
            outstanding.eq(outstanding + issue - response),
            outstanding_any.eq(issue | Mux(response, outstanding != 1, outstanding_any)),
        ]
        return outstanding_any
