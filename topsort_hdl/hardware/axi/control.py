"""The AXI4-Lite control slave of a Vitis RTL kernel (``ap_ctrl_hs``), laid out by its
:class:`~topsort_hdl.core.register_map.RegisterMap` (offsets and layout are described there)."""

from types import SimpleNamespace

from amaranth.hdl import Cat, Module, Mux, Signal, Value
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from ...core.contract import (
    AP_DONE,
    AP_IDLE,
    AP_READY,
    AP_START,
    AUTO_RESTART,
    CONTROL,
    GIE,
    IER,
    INTERRUPT,
    IRQ_DONE,
    IRQ_READY,
    ISR,
)
from ...core.register_map import RegisterMap
from ..block import Block
from ..properties import check, held_until_taken, is_formal
from ..records import check_range
from .signature import RESP_OKAY, AxiLiteSignature

__all__ = ["ControlRegisters"]


def _word(offset):
    """The index of the 32-bit word at byte ``offset``."""
    return offset >> 2


class ControlRegisters(Block):
    """The ``s_axi_control`` slave of an ``ap_ctrl_hs`` kernel.

    AW and W are each held in a register until both have arrived, then the write is applied
    (one write in flight: neither is taken again until B is accepted). A read samples its
    group of 16 words on the AR handshake and RDATA is selected from it in the next cycle, so
    a read of ``control`` clears ap_done and ap_ready exactly once, in the cycle the read is
    accepted. Unused offsets read 0; writes to them
    and to read-only registers are accepted and ignored. Responses are always OKAY.

    Parameters
    ----------
    args : sequence of (str, int)
        Kernel arguments as ``(name, bits)``, bits 1 to 64.
    counters : sequence of str
        Names of 64-bit read-only counters.
    addr_width : int
        AXI4-Lite address width, 4 to 32; the map must fit in it.

    Members
    -------
    s_axi_control : In(AxiLiteSignature(addr_width))
    start : Out(1)
        ap_start.
    ready, done : In(1)
        One-cycle pulses from the kernel: it took the start, it finished.
    idle : In(1)
        Read as ap_idle one cycle later, registered like ap_done.
    interrupt : Out(1)
    args : Out(StructLayout({name: bits}))
    status : In(32)
    counters : In(StructLayout({name: 64}))
        Like ``args``, one packed port in emitted Verilog (``counters[64*i+63:64*i]``).
    """

    def __init__(self, args, counters=(), addr_width=12):
        check_range("addr_width", addr_width, 4, 32)
        regs = RegisterMap(args, counters)
        if regs.address_bits > addr_width:
            raise ValueError(f"addr_width must be at least {regs.address_bits} for this "
                             f"register map ({regs.size:#x} bytes), not {addr_width}")
        self.register_map = regs
        self.addr_width = addr_width
        super().__init__({
            "s_axi_control": In(AxiLiteSignature(addr_width)),
            "start": Out(1),
            "ready": In(1),
            "done": In(1),
            "idle": In(1),
            "interrupt": Out(1),
            "args": Out(data.StructLayout(dict(regs.args))),
            "status": In(32),
            "counters": In(data.StructLayout({name: 64 for name in regs.counters})),
        })

    def elaborate(self, platform):
        m = Module()
        bus = self.s_axi_control
        regs = self.register_map
        word_bits = self.addr_width - 2
        # The bus and the map, and the registers and wires the steps share (each adds its own).
        st = SimpleNamespace(bus=bus, regs=regs, word_bits=word_bits)

        st.done_flag = Signal()
        st.ready_flag = Signal()
        st.auto_restart = Signal()
        st.gie = Signal()
        st.ier = Signal(2)
        st.isr = Signal(2)
        m.d.comb += self.interrupt.eq(st.gie & st.isr.any())
        # Registered like ap_done, so a kernel that raises idle and done together is never
        # read as idle but not done.
        st.idle = Signal()
        m.d.sync += st.idle.eq(self.idle)

        # 32-bit words of every multi-word register: (word index, value, bits in the word).
        st.arg_words = []
        for name, bits in regs.args:
            base = _word(regs.offset(name))
            value = self.args[name]
            st.arg_words.append((base, value, 0, min(bits, 32)))
            if bits > 32:
                st.arg_words.append((base + 1, value, 32, bits - 32))
        self._write_channel(m, st)
        self._read_channel(m, st)
        self._handshake(m, st)
        if is_formal(platform):
            write = self._applied_write(m)
            self._properties(m, write)
            self._handshake_properties(m, write)
        return m

    def _write_channel(self, m, st):
        """AW and W held until both are here, then the word written; B."""
        bus, word_bits = st.bus, st.word_bits
        # --- write channel: hold AW and W until both are here, then apply ---
        aw_full = Signal()
        aw_word = Signal(word_bits)
        aw_control = Signal()     # aw_word is the control word's: decoded as AW is taken
        w_full = Signal()
        w_data = Signal(32)
        w_strb = Signal(4)
        bvalid = Signal()
        m.d.comb += [
            bus.awready.eq(~aw_full & ~bvalid),
            bus.wready.eq(~w_full & ~bvalid),
            bus.bvalid.eq(bvalid),
            bus.bresp.eq(RESP_OKAY),
        ]
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += [aw_full.eq(1), aw_word.eq(bus.awaddr[2:]),
                         aw_control.eq(bus.awaddr[2:] == _word(CONTROL))]
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += [w_full.eq(1), w_data.eq(bus.wdata), w_strb.eq(bus.wstrb)]
        with m.If(bvalid & bus.bready):
            m.d.sync += bvalid.eq(0)

        st.write_control = Signal()  # a write of 1 to ap_start is being applied
        m.d.comb += st.write_control.eq(aw_full & w_full & aw_control & w_strb[0] &
                                     w_data[AP_START])
        with m.If(aw_full & w_full):
            m.d.sync += [aw_full.eq(0), w_full.eq(0), bvalid.eq(1)]
            with m.Switch(aw_word):
                with m.Case(_word(CONTROL)):
                    with m.If(w_strb[0]):
                        m.d.sync += st.auto_restart.eq(w_data[AUTO_RESTART])
                with m.Case(_word(GIE)):
                    with m.If(w_strb[0]):
                        m.d.sync += st.gie.eq(w_data[0])
                with m.Case(_word(IER)):
                    with m.If(w_strb[0]):
                        m.d.sync += st.ier.eq(w_data[:2])
                with m.Case(_word(ISR)):
                    with m.If(w_strb[0]):
                        m.d.sync += st.isr.eq(st.isr ^ w_data[:2])
                for index, value, low, bits in st.arg_words:
                    with m.Case(index):
                        for lane in range(4):
                            lo, hi = 8 * lane, min(8 * lane + 8, bits)
                            if lo < hi:
                                with m.If(w_strb[lane]):
                                    m.d.sync += value[low + lo:low + hi].eq(w_data[lo:hi])

    def _read_channel(self, m, st):
        """AR to RDATA in two registered steps; the clear-on-read of the control word."""
        bus, regs, word_bits = st.bus, st.regs, st.word_bits
        # --- read channel: on the AR handshake, each group of 16 words is narrowed to the
        # addressed word's (the control word sampled then, as the clear-on-read happens);
        # in the next cycle the group is picked into RDATA, held until RREADY. One
        # multiplexer over every word was 6 LUT levels on u280's map. ---
        reading = Signal()      # AR taken last cycle: RDATA is being selected
        rvalid = Signal()
        rdata = Signal(32)
        m.d.comb += [
            bus.arready.eq(~rvalid & ~reading),
            bus.rvalid.eq(rvalid),
            bus.rdata.eq(rdata),
            bus.rresp.eq(RESP_OKAY),
        ]
        with m.If(rvalid & bus.rready):
            m.d.sync += rvalid.eq(0)
        st.read_control = Signal()  # the read of `control` accepted this cycle
        control = Signal(32)
        m.d.comb += [
            control[AP_START].eq(self.start),
            control[AP_DONE].eq(st.done_flag),
            control[AP_IDLE].eq(st.idle),
            control[AP_READY].eq(st.ready_flag),
            control[AUTO_RESTART].eq(st.auto_restart),
            control[INTERRUPT].eq(self.interrupt),
        ]
        words = {_word(CONTROL): control, _word(GIE): st.gie, _word(IER): st.ier,
                 _word(ISR): st.isr, _word(regs.status_offset): self.status}
        for index, value, low, bits in st.arg_words:
            words[index] = value[low:low + bits]
        for name in regs.counters:
            counter = self.counters[name]
            words[_word(regs.offset(name))] = counter[:32]
            words[_word(regs.offset(name)) + 1] = counter[32:]
        group_bits = min(4, word_bits)
        groups = {}
        for index, value in words.items():
            groups.setdefault(index >> group_bits, {})[index & ((1 << group_bits) - 1)] = value
        picked = {g: Signal(32, name=f"rgroup{g}") for g in groups}
        r_group = Signal(word_bits - group_bits)
        ar_word = bus.araddr[2:]
        with m.If(bus.arvalid & bus.arready):
            m.d.comb += st.read_control.eq(ar_word == _word(CONTROL))
            m.d.sync += [reading.eq(1), r_group.eq(ar_word[group_bits:])]
            for g, members in groups.items():
                m.d.sync += picked[g].eq(0)
                with m.Switch(ar_word[:group_bits]):
                    for offset, value in members.items():
                        with m.Case(offset):
                            m.d.sync += picked[g].eq(value)
        with m.If(reading):
            m.d.sync += [reading.eq(0), rvalid.eq(1), rdata.eq(0)]
            with m.Switch(r_group):
                for g in groups:
                    with m.Case(g):
                        m.d.sync += rdata.eq(picked[g])

    def _handshake(self, m, st):
        """ap_start, ap_done, ap_ready and the interrupt flags, with the kernel."""
        # --- handshake with the kernel; the later assignment wins in each ---
        # A host write of 1 wins over the clear, as in Vitis HLS: a start is never lost.
        with m.If(self.ready & ~st.auto_restart):
            m.d.sync += self.start.eq(0)
        with m.If(st.write_control):
            m.d.sync += self.start.eq(1)
        # An event in the cycle of the clearing read stays set: that read did not report it.
        with m.If(st.read_control):
            m.d.sync += [st.done_flag.eq(0), st.ready_flag.eq(0)]
        with m.If(self.done):
            m.d.sync += st.done_flag.eq(1)
        with m.If(self.ready):
            m.d.sync += st.ready_flag.eq(1)
        # Likewise an interrupt event wins over a toggle that would clear it.
        with m.If(self.done & st.ier[IRQ_DONE]):
            m.d.sync += st.isr[IRQ_DONE].eq(1)
        with m.If(self.ready & st.ier[IRQ_READY]):
            m.d.sync += st.isr[IRQ_READY].eq(1)

    def _applied_write(self, m):
        """The write being applied, as the properties see it from the bus: its address, data
        and strobes (registered as AW and W are taken) and ``applied``, true in the cycle its
        B is raised, the first in which the registers hold it (formal builds only)."""
        bus = self.s_axi_control
        write = SimpleNamespace(address=Signal.like(bus.awaddr, name="written_address"),
                                data=Signal(32, name="written_data"),
                                strobes=Signal(4, name="written_strobes"))
        with m.If(bus.awvalid & bus.awready):
            m.d.sync += write.address.eq(bus.awaddr)
        with m.If(bus.wvalid & bus.wready):
            m.d.sync += [write.data.eq(bus.wdata), write.strobes.eq(bus.wstrb)]
        responded = Signal(name="b_before")
        m.d.sync += responded.eq(bus.bvalid)
        write.applied = bus.bvalid & ~responded
        return write

    def _properties(self, m, write):
        """The AXI4-Lite slave's promises (formal builds only), given a master that keeps the
        channels' rules: B and R held until taken; one B per write (AW and W), one R per
        read, and one write and one read in flight at most; the first argument reads back
        and drives ``args`` with what a write of all four bytes put in it, until the next
        write to it."""
        bus = self.s_axi_control
        held_until_taken(m, bus.bvalid, bus.bready, bus.bresp, "b")
        held_until_taken(m, bus.rvalid, bus.rready, Cat(bus.rdata, bus.rresp), "r")
        counts = {}
        for name, taken in (("aw", bus.awvalid & bus.awready), ("w", bus.wvalid & bus.wready),
                            ("b", bus.bvalid & bus.bready), ("ar", bus.arvalid & bus.arready),
                            ("r", bus.rvalid & bus.rready)):
            count = counts[name] = Signal(4, name=f"{name}_count")
            m.d.sync += count.eq(count + taken)
        check(m, ((counts["aw"] - counts["b"])[:4] <= 1) &
              ((counts["w"] - counts["b"])[:4] <= 1), "more than one write in flight")
        check(m, (counts["ar"] - counts["r"])[:4] <= 1, "more than one read in flight")
        with m.If(bus.bvalid):
            check(m, (counts["b"] != counts["aw"]) & (counts["b"] != counts["w"]),
                  "a write response with no write")
        with m.If(bus.rvalid):
            check(m, counts["r"] != counts["ar"], "a read response with no read")

        # The first argument: what the last write applied to it put there.
        name, bits = self.register_map.args[0]
        word = _word(self.register_map.offset(name))
        data, strobes = write.data, write.strobes
        applied = write.applied & (write.address[2:] == word)
        known, expected = Signal(name="argument_known"), Signal(32, name="argument_expected")
        now_known = Mux(applied, strobes == 0b1111, known)
        now_expected = Mux(applied, data, expected)
        m.d.sync += [known.eq(now_known), expected.eq(now_expected)]
        value = Value.cast(self.args[name])
        with m.If(now_known):
            check(m, value[:min(bits, 32)] == now_expected[:min(bits, 32)],
                  f"{name} is not what was written")
        # A read samples the register as AR is taken; its data comes with R.
        read_known, read_expected = Signal(name="read_known"), Signal(32, name="read_expected")
        with m.If(bus.arvalid & bus.arready):
            m.d.sync += [read_known.eq(now_known & (bus.araddr[2:] == word)),
                         read_expected.eq(now_expected)]
        with m.If(bus.rvalid & read_known):
            check(m, bus.rdata[:min(bits, 32)] == read_expected[:min(bits, 32)],
                  f"{name} reads back other than what was written")

    def _handshake_properties(self, m, write):
        """``ap_ctrl_hs`` as the host and the kernel see it (formal builds only), stated from
        the bus: what a write applies, it applies as B is raised; a read reports the registers
        as AR is taken.

        - ``start`` rises only as a write of 1 to ap_start is applied, and always then (a start
          is never lost); it stays up until the kernel's ``ready``, and falls after it unless
          auto_restart is set or a new start is written;
        - a read of ``control`` reports ap_done (ap_ready) exactly when a ``done`` (``ready``)
          pulse came after the previous read of ``control`` was taken: each pulse is reported
          by one read, never by two, and a read of any other register clears nothing; ap_start
          and ap_idle read as the kernel's ``start`` and ``idle`` of the cycle before;
        - ``interrupt`` is GIE and any ISR bit, where a bit is set by its event when IER
          enables it and toggled by a write of 1 to it (the event wins in the same cycle).
        """
        bus = self.s_axi_control
        data = write.data

        def written(offset):
            """A write to the low byte of the register at ``offset`` is applied this cycle."""
            return write.applied & (write.address[2:] == _word(offset)) & write.strobes[0]

        def model(name, width, now):
            """The register ``name`` as the host's writes and the kernel's events made it:
            ``now(before)`` its value this cycle from its value in the last one."""
            before = Signal(width, name=f"hs_{name}")
            value = Signal(width, name=f"hs_{name}_now")
            m.d.comb += value.eq(now(before))
            m.d.sync += before.eq(value)
            return value

        # The kernel's pulses and idle of the cycle before (what a register shows now).
        past = Signal(4, name="hs_past")
        m.d.sync += past.eq(Cat(self.start, self.ready, self.done, self.idle))
        was_started, was_ready, was_done, was_idle = past
        auto_restart = model("auto_restart", 1, lambda before: Mux(
            written(CONTROL), data[AUTO_RESTART], before))
        auto_before = Signal(name="hs_auto_restart_before")
        m.d.sync += auto_before.eq(auto_restart)
        start_written = written(CONTROL) & data[AP_START]

        # ap_start
        with m.If(start_written):
            check(m, self.start, "a write of 1 to ap_start did not start the kernel")
        with m.If(~was_started & ~start_written):
            check(m, ~self.start, "ap_start rose with no write of 1 to it")
        with m.If(was_started & ~was_ready):
            check(m, self.start, "ap_start fell before the kernel was ready")
        with m.If(was_started & was_ready & ~auto_before & ~start_written):
            check(m, ~self.start, "ap_start stayed up after ready without auto_restart")

        # ap_done and ap_ready: pending since the last read of `control` was taken (an event
        # in the cycle of that read is the next read's to report).
        control_read = bus.arvalid & bus.arready & (bus.araddr[2:] == _word(CONTROL))
        pending = {}
        for bit, event in ((AP_DONE, self.done), (AP_READY, self.ready)):
            flag = pending[bit] = Signal(name=f"hs_pending_{bit}")
            m.d.sync += flag.eq(event | flag & ~control_read)
        reported = Signal(32, name="hs_reported")
        expected = Signal(4, name="hs_expected")     # start, done, idle, ready as read
        read_control = Signal(name="hs_read_control")
        with m.If(bus.arvalid & bus.arready):
            m.d.sync += [read_control.eq(control_read),
                         expected.eq(Cat(self.start, pending[AP_DONE], was_idle,
                                         pending[AP_READY]))]
        m.d.comb += reported.eq(bus.rdata)
        with m.If(bus.rvalid & read_control):
            for bit, value, what in ((AP_START, expected[0], "ap_start"),
                                     (AP_DONE, expected[1], "ap_done"),
                                     (AP_IDLE, expected[2], "ap_idle"),
                                     (AP_READY, expected[3], "ap_ready")):
                check(m, reported[bit] == value,
                      f"a read of control reports {what} other than the kernel's")

        # The interrupt: GIE, IER and ISR as written, ISR's bits set by the enabled events.
        gie = model("gie", 1, lambda before: Mux(written(GIE), data[0], before))
        ier = model("ier", 2, lambda before: Mux(written(IER), data[:2], before))
        events = Signal(2, name="hs_events")
        m.d.sync += [events[IRQ_DONE].eq(self.done & ier[IRQ_DONE]),
                     events[IRQ_READY].eq(self.ready & ier[IRQ_READY])]
        isr = model("isr", 2, lambda before: Mux(written(ISR), before ^ data[:2], before) |
                    events)
        check(m, self.interrupt == (gie & isr.any()), "interrupt is not GIE and any ISR bit")
