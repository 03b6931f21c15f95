"""Block RAM standing in for HBM channels: an AXI4 slave with a back door for the self test."""

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...hardware.axi.signature import RESP_OKAY, RESP_SLVERR, Axi4Signature, AxiParams
from ...hardware.records import check_power_of_two
from .bram import RegisteredReadRam

__all__ = ["OnChipAxiRam", "BackdoorSignature"]


class BackdoorSignature(wiring.Signature):
    """Word access to an :class:`OnChipAxiRam` while its AXI port is idle, seen from the
    user: ``select`` hands the memory to the back door; ``addr`` reads (``r_data`` two cycles
    later, from a register) and, with ``w_en``, writes ``w_data``."""

    def __init__(self, words, data_width):
        super().__init__({
            "select": Out(1),
            "addr": Out(range(words)),
            "w_en": Out(1),
            "w_data": Out(data_width),
            "r_data": In(data_width),
        })


class OnChipAxiRam(wiring.Component):
    """``size_bytes`` of block RAM answering AXI4 INCR bursts at ``[base, base + size_bytes)``.

    One read burst and one write burst are served at a time, each at one beat per cycle (a
    new read burst starts the cycle after the previous one's last beat is read from block RAM;
    read data reaches R two cycles after that, through the RAM's read register, see
    :class:`RegisteredReadRam`). Write
    strobes are honoured. A burst that reaches outside the range gets SLVERR on every beat (a
    read returns zeros, a write changes nothing) and sets ``stray`` the cycle after its address
    is taken, sticky until reset: the
    kernel must never touch memory outside its buffers. Bursts must be full width (AxSIZE of
    the data width); the kernel's engines issue no other kind.

    While ``backdoor.select`` is high the back door owns both memory ports (the self test
    fills and checks memory between kernel runs; AXI traffic must not be in flight).

    Parameters
    ----------
    params : AxiParams
    size_bytes : int
        A power of two, at least one beat.
    base : int
        Byte address of the first word, a multiple of ``size_bytes``.
    """

    def __init__(self, params, size_bytes, base=0):
        if not isinstance(params, AxiParams):
            raise TypeError(f"params must be an AxiParams, not {params!r}")
        check_power_of_two("size_bytes", size_bytes, low=params.beat_bytes)
        if base % size_bytes or base < 0 or base + size_bytes > 1 << params.addr_width:
            raise ValueError(f"base must be a multiple of size_bytes ({size_bytes}) inside the "
                             f"{params.addr_width}-bit address space, not {base}")
        self.params = params
        self.size_bytes = size_bytes
        self.base = base
        self.words = size_bytes // params.beat_bytes
        self.ram = RegisteredReadRam(self.words, params.data_width)
        super().__init__({
            "axi": In(Axi4Signature(params)),
            "backdoor": In(BackdoorSignature(self.words, params.data_width)),
            "stray": Out(1),
        })

    @property
    def mem(self):
        """The words of the RAM's inferred memory, once elaborated for simulation."""
        return self.ram.mem

    def _outside(self, addr, last):
        """Whether a burst from byte address ``addr`` whose last beat is ``last`` beats after
        its first (AxLEN) touches a word outside the range. ``base`` is a multiple of the
        power-of-two size: the burst starts inside if the address bits above the size are the
        base's, and ends inside if its first word's index plus ``last`` stays below the word
        count: one short adder whose carry out of the index bits is the answer."""
        size_bits = exact_log2(self.size_bytes)
        beat_shift = exact_log2(self.params.beat_bytes)
        word_bits = size_bits - beat_shift
        end = addr[beat_shift:size_bits] + last
        return (addr[size_bits:] != self.base >> size_bits) | (end[word_bits:] != 0)

    def elaborate(self, platform):
        m = Module()
        p = self.params
        axi, door = self.axi, self.backdoor
        beat_shift = exact_log2(p.beat_bytes)
        word_bits = exact_log2(self.words) if self.words > 1 else 0

        ram = m.submodules.ram = self.ram

        def word(addr):     # the base is a multiple of the size: its low bits are zero
            return addr[beat_shift:beat_shift + word_bits] if word_bits else 0

        # Reads: one burst at a time, in two steps behind the AXI registers. A beat is read
        # from block RAM (``issue``) into the RAM's output (``fetched``, kept there while the
        # read port is disabled), then into the RAM's read register (``loaded``, the block
        # RAM's own output register on ECP5), then into the R registers: the kernel sees
        # registers only, and the block RAM's slow clock-to-data ends inside the block.
        r_active = Signal()
        r_word = Signal(range(self.words))
        r_left = Signal(8)
        r_id = Signal.like(axi.arid)
        r_bad = Signal()
        beat = data.StructLayout({"valid": 1, "last": 1, "bad": 1, "id": len(axi.arid)})
        fetched, loaded = Signal(beat), Signal(beat)
        move, load, issue = Signal(), Signal(), Signal()
        m.d.comb += [
            move.eq(loaded.valid & (~axi.rvalid | axi.rready)),
            load.eq(fetched.valid & (~loaded.valid | move)),
            issue.eq(r_active & (~fetched.valid | load)),
            axi.arready.eq(~r_active | issue & (r_left == 0)),
        ]
        with m.If(issue):
            m.d.sync += [r_word.eq(r_word + 1), r_left.eq(r_left - 1)]
            with m.If(r_left == 0):
                m.d.sync += r_active.eq(0)
        with m.If(axi.arvalid & axi.arready):
            m.d.sync += [
                r_active.eq(1),
                r_word.eq(word(axi.araddr)),
                r_left.eq(axi.arlen),
                r_id.eq(axi.arid),
                r_bad.eq(self._outside(axi.araddr, axi.arlen)),
            ]
        with m.If(issue):
            m.d.sync += [fetched.valid.eq(1), fetched.last.eq(r_left == 0),
                         fetched.bad.eq(r_bad), fetched.id.eq(r_id)]
        with m.Elif(load):
            m.d.sync += fetched.valid.eq(0)
        with m.If(load):
            m.d.sync += loaded.eq(fetched)
        with m.Elif(move):
            m.d.sync += loaded.valid.eq(0)
        with m.If(move):
            m.d.sync += [axi.rvalid.eq(1), axi.rlast.eq(loaded.last), axi.rid.eq(loaded.id),
                         axi.rdata.eq(Mux(loaded.bad, 0, ram.r_data)),
                         axi.rresp.eq(Mux(loaded.bad, RESP_SLVERR, RESP_OKAY))]
        with m.Elif(axi.rready):
            m.d.sync += axi.rvalid.eq(0)

        # Writes: address, then the burst's beats, then its response.
        w_active = Signal()
        w_word = Signal(range(self.words))
        w_bad = Signal()
        b_pending = Signal()
        m.d.comb += [
            axi.awready.eq(~w_active & ~b_pending),
            axi.wready.eq(w_active),
            axi.bvalid.eq(b_pending),
        ]
        with m.If(axi.awvalid & axi.awready):
            m.d.sync += [
                w_active.eq(1),
                w_word.eq(word(axi.awaddr)),
                axi.bid.eq(axi.awid),
                w_bad.eq(self._outside(axi.awaddr, axi.awlen)),
            ]
        w_beat = axi.wvalid & axi.wready
        # A beat is written to block RAM a cycle after it is taken, from registers, and the
        # word address moves on then: the kernel's W channel, from across the device, ends
        # at registers and the control flags (not in the block RAMs' enables or an adder).
        # The burst's response goes with its last write; a new burst's address comes later.
        w_strb = Signal.like(axi.wstrb)         # the lanes to write, 0 for no write
        w_data = Signal.like(axi.wdata)
        w_next = Signal()                       # a beat is being written: w_word moves on
        m.d.sync += [w_strb.eq(Mux(w_beat & ~w_bad, axi.wstrb, 0)), w_data.eq(axi.wdata),
                     w_next.eq(w_beat)]
        with m.If(w_next):
            m.d.sync += w_word.eq(w_word + 1)
        with m.If(w_beat):
            with m.If(axi.wlast):
                m.d.sync += [w_active.eq(0), b_pending.eq(1),
                             axi.bresp.eq(Mux(w_bad, RESP_SLVERR, RESP_OKAY))]
        with m.If(axi.bvalid & axi.bready):
            m.d.sync += b_pending.eq(0)

        # ``stray`` follows a cycle after the burst is taken, from the registered verdicts:
        # the address arithmetic then ends at one register instead of fanning out further.
        r_taken, w_taken = Signal(), Signal()
        m.d.sync += [r_taken.eq(axi.arvalid & axi.arready),
                     w_taken.eq(axi.awvalid & axi.awready)]
        with m.If(r_taken & r_bad | w_taken & w_bad):
            m.d.sync += self.stray.eq(1)

        # The memory ports: the AXI side, or the back door while it is selected (its data
        # is the read register's, loaded every cycle then).
        all_bytes = Cat(door.w_en for _ in range(p.beat_bytes))
        m.d.comb += [
            ram.r_addr.eq(Mux(door.select, door.addr, r_word)),
            ram.r_en.eq(door.select | issue),
            ram.r_reg_en.eq(door.select | load),
            door.r_data.eq(ram.r_data),
            ram.w_addr.eq(Mux(door.select, door.addr, w_word)),
            ram.w_data.eq(Mux(door.select, door.w_data, w_data)),
            ram.w_en.eq(Mux(door.select, all_bytes, w_strb)),
        ]
        return m
