"""The write engine: a stream of beats into INCR bursts, optionally batched over several ports."""

from amaranth.hdl import C, Cat, Module, Mux, Signal, Value
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..block import Block
from ..queue import RegisteredFlagsFIFO
from ..records import check_at_least, check_power_of_two
from .reader import check_engine_params
from .signature import AXI_CACHE_MODIFIABLE, BURST_INCR, RESP_OKAY, Axi4Signature

__all__ = ["AxiWriteEngine", "write_command_layout"]


def _borrow(x, y):
    """``x < y`` for unsigned values, as the borrow of ``x - y``: a carry chain behind one LUT
    level, where a wide compare is a tree of LUTs."""
    x, y = Value.cast(x), Value.cast(y)
    return (x.as_unsigned() - y.as_unsigned())[max(len(x), len(y))]


def write_command_layout(params, ports, slots, length_bits):
    """A write engine's command: a byte address per port and slot, and the byte count."""
    return data.StructLayout({
        "addr": data.ArrayLayout(params.addr_width, ports * slots),
        "bytes": length_bits,
    })


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

        # The job: bytes still to take from the stream, the port its batch goes to.
        running = Signal()      # from the command to the last write response
        taking = Signal()       # the stream still has data for this job
        dropping = Signal()     # a rejected job: take the stream, write nothing
        remaining = Signal(self.length_bits)
        port_sel = Signal(range(max(2, ports)))
        batch_transfers = self.batch_bytes // (ports * lanes)
        batch_left = Signal(range(batch_transfers + 1))

        # A command is checked in the cycle after it is taken, from registered per-base
        # flags, so that no compare of the command's fields runs into the job's state. (The
        # stream's data arrive much later: the tree fills first.)
        cmd = self.cmd.payload
        bases = ports * self.slots
        align_bits = exact_log2(self.batch_bytes) if self.slots > 1 else lane_bits
        transfer_bytes = ports * lanes
        checking = Signal()     # the command taken last cycle is being checked
        empty = Signal()        # it has no bytes
        misaligned = Signal(bases)
        wraps = Signal(bases)
        final = Signal()        # remaining <= transfer_bytes: the stream's last transfer
        m.d.comb += self.cmd.ready.eq(~running & ~checking)
        m.d.comb += self.busy.eq(running | checking)
        m.d.sync += self.done.eq(0)
        with m.If(self.cmd.valid & self.cmd.ready):
            m.d.sync += [
                remaining.eq(cmd.bytes),
                final.eq(~_borrow(transfer_bytes, cmd.bytes)),
                port_sel.eq(0),
                batch_left.eq(batch_transfers),
                checking.eq(1),
                empty.eq(_borrow(cmd.bytes, 1)),
                misaligned.eq(Cat(cmd.addr[j][:align_bits] != 0 for j in range(bases))),
                wraps.eq(Cat((cmd.addr[j] + cmd.bytes)[p.addr_width] for j in range(bases))),
            ]
        with m.If(checking):
            bad = misaligned.any() | wraps.any()
            m.d.sync += checking.eq(0)
            with m.If(empty):
                m.d.sync += self.done.eq(1)
            with m.Else():
                m.d.sync += [running.eq(1), taking.eq(1), dropping.eq(bad)]
            with m.If(bad):
                m.d.sync += self.error.eq(1)

        buffers = [RegisteredFlagsFIFO(width=entry_layout.size, capacity=self.buffer_beats // ports,
                          buffered=True) for _ in range(ports)]
        # (a sum of products, not an Array: Icarus leaves the case statement an Array
        # becomes at X when the flags it reads never change after time 0)
        room = Cat(b.w_rdy & (port_sel == j) for j, b in enumerate(buffers)).any()
        entry = Signal(entry_layout)
        if ports > 1:
            m.d.comb += entry.last_beat.eq(Mux(final, (remaining - 1)[lane_bits:], ports - 1))
        m.d.comb += [
            entry.data.eq(self.i.payload),
            entry.beats.eq(Mux(final, (remaining + lanes - 1)[lane_bits:], ports)),
            entry.final.eq(final),
            entry.tail.eq(Mux(final, (remaining - 1)[:lane_bits] + 1, lanes)),
            self.i.ready.eq(taking & (dropping | room)),
        ]
        took = self.i.valid & self.i.ready
        with m.If(took):
            m.d.sync += [remaining.eq(Mux(final, 0, remaining - transfer_bytes)),
                         final.eq(~_borrow(2 * transfer_bytes, remaining))]
            with m.If(final):
                m.d.sync += taking.eq(0)
            if ports > 1:
                with m.If(batch_left == 1):
                    m.d.sync += [port_sel.eq(port_sel + 1), batch_left.eq(batch_transfers)]
                with m.Else():
                    m.d.sync += batch_left.eq(batch_left - 1)

        port_idle = []
        for j, (buffer, axi) in enumerate(zip(buffers, self.axi, strict=True)):
            m.submodules[f"buffer{j}"] = buffer
            # (flat: one LUT of flip-flops and VALID)
            written = self.i.valid & taking & ~dropping & buffer.w_rdy & (port_sel == j)
            m.d.comb += [buffer.w_data.eq(entry), buffer.w_en.eq(written)]

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
                m.d.sync += address.eq(cmd.addr[j * slots][lane_bits:])
                for k in range(1, slots):
                    m.d.sync += saved[k - 1].eq(cmd.addr[j * slots + k][lane_bits:])
            to_boundary = Signal(range(self.burst_beats + 1), name=f"to_boundary{j}")
            m.d.comb += to_boundary.eq(self.burst_beats - address[:burst_bits] if burst_bits
                                       else 1)
            # The beats written last cycle reach `unsent` a cycle later, from a register:
            # the stream's VALID, from another block, runs into no adder. Bursts only wait
            # for them; a flush waits until the job's last beats are counted.
            landing = Signal(name=f"landing{j}")            # wrote != 0
            wrote = Signal(range(ports + 1), name=f"wrote{j}")
            m.d.sync += [landing.eq(written), wrote.eq(Mux(written, entry.beats, 0))]
            arrived = Signal(name=f"arrived{j}")    # the job's data is all counted in unsent
            m.d.comb += arrived.eq(~taking & ~landing)
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
            burst_layout = data.StructLayout({"rest": range(self.burst_beats), "single": 1,
                                             "pair": 1})
            bursts = RegisteredFlagsFIFO(width=burst_layout.size, capacity=self.max_outstanding,
                            buffered=False)
            m.submodules[f"bursts{j}"] = bursts
            queued = Signal(burst_layout, name=f"queued{j}")
            pop = Signal(name=f"pop{j}")
            outstanding = Signal(range(self.max_outstanding + 1), name=f"outstanding{j}")
            issue = Signal(name=f"issue{j}")
            m.d.comb += issue.eq(pending & (~axi.awvalid | axi.awready) & bursts.w_rdy &
                                 (outstanding < self.max_outstanding))
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
                bursts.w_data.eq(queued), bursts.w_en.eq(issue), bursts.r_en.eq(pop),
            ]
            m.d.sync += unsent.eq(unsent + wrote - Mux(issue, length, 0))
            # For the job's end, as flip-flops: outstanding != 0, decided with the count, and
            # unsent != 0 a cycle late. Beats not yet in a burst are then always seen: in
            # `unsent` a cycle ago, or landing, or landed in `unsent` since.
            unsent_any = Signal(name=f"unsent_any{j}")
            landed = Signal(name=f"landed{j}")
            outstanding_any = Signal(name=f"outstanding_any{j}")
            m.d.sync += [unsent_any.eq(unsent != 0), landed.eq(landing)]

            # Data: one beat per cycle out of the buffered entries. A burst's first beat goes
            # with the queue's head, which is popped then; the rest of the burst counts down
            # in registers, WLAST among them, so neither WLAST nor the pop waits on a compare.
            head = Signal(entry_layout, name=f"head{j}")
            beat = Signal(range(max(2, ports)), name=f"beat{j}")      # beat within the entry
            in_burst = Signal(name=f"in_burst{j}")   # past the first beat of a burst
            left = Signal(range(self.burst_beats), name=f"left{j}")   # its beats still to send
            last_left = Signal(name=f"last_left{j}")          # left == 1
            first = Signal(burst_layout, name=f"first{j}")
            m.d.comb += [head.eq(buffer.r_data), first.eq(bursts.r_data)]
            last_of_entry = beat == head.last_beat if ports > 1 else C(1)
            wlast = Mux(in_burst, last_left, first.single)
            m.d.comb += [
                axi.wvalid.eq(buffer.r_rdy & (in_burst | bursts.r_rdy)),
                axi.wdata.eq(head.data[beat]),
                axi.wstrb.eq(Mux(head.final & last_of_entry,
                                 (C(1, lanes + 1) << head.tail) - 1, (1 << lanes) - 1)),
                axi.wlast.eq(wlast),
            ]
            # The enables are written out flat, each one product of flip-flops and WREADY
            # (synthesis keeps an expression's structure: through WVALID they were deeper).
            sent = Signal(name=f"sent{j}")
            m.d.comb += [
                sent.eq(buffer.r_rdy & (in_burst | bursts.r_rdy) & axi.wready),
                pop.eq(buffer.r_rdy & bursts.r_rdy & ~in_burst & axi.wready),
                buffer.r_en.eq(axi.wready & last_of_entry & (in_burst | bursts.r_rdy)),
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

            m.d.comb += axi.bready.eq(1)
            response = axi.bvalid
            with m.If(response & (axi.bresp != RESP_OKAY)):
                m.d.sync += self.error.eq(1)
            m.d.sync += [
                outstanding.eq(outstanding + issue - response),
                outstanding_any.eq(issue | Mux(response, outstanding != 1, outstanding_any)),
            ]
            port_idle.append(~unsent_any & ~landing & ~landed & ~axi.awvalid & ~bursts.r_rdy &
                             ~in_burst & ~buffer.r_rdy & ~outstanding_any)

        with m.If(running & ~taking & Cat(port_idle).all()):
            m.d.sync += [running.eq(0), self.done.eq(1)]
        return m
