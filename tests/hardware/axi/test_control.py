"""The AXI4-Lite control slave: register map, Amaranth-simulator checks and a cocotb testbench."""

import gc
import random
import warnings

import pytest
from amaranth.hdl import ClockDomain, Module, UnusedElaboratable
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.core.contract import (
    AP_DONE,
    AP_IDLE,
    AP_READY,
    AP_START,
    AUTO_RESTART,
    CONTROL,
    GIE,
    IER,
    INTERRUPT,
    ISR,
)
from topsort_hdl.core.register_map import RegisterMap
from topsort_hdl.core.register_table import register_table
from topsort_hdl.hardware.axi import ControlRegisters
from topsort_hdl.sim.amaranth.axilite_master import AxiLiteMasterSim

# Narrow, 32-bit, odd and 64-bit arguments.
ARGS = [("records", 64), ("src", 64), ("mode", 3), ("count", 32), ("odd", 40), ("flag", 1)]
COUNTERS = ["phase1_cycles", "phase2_cycles"]
OKAY = 0


def simulate(dut, *benches, seed=0, max_cycles=20000):
    """Run ``bench(ctx, master, domain)`` for each of ``benches`` concurrently on ``dut``."""
    top = Module()
    top.domains.sync = domain = ClockDomain()
    top.submodules.dut = dut
    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    cycles = [0]

    async def watchdog(ctx):
        while True:
            await ctx.tick()
            cycles[0] += 1
            if cycles[0] > max_cycles:
                raise TimeoutError(f"testbench did not finish in {max_cycles} cycles")

    simulator.add_process(watchdog)
    for index, bench in enumerate(benches):
        master = AxiLiteMasterSim(dut.s_axi_control, seed=seed * 100 + index)

        async def run(ctx, bench=bench, master=master):
            await bench(ctx, master, domain)
        simulator.add_testbench(run)
    simulator.run()
    return cycles[0]


async def pulse(ctx, *signals):
    for signal in signals:
        ctx.set(signal, 1)
    await ctx.tick()
    for signal in signals:
        ctx.set(signal, 0)


async def write(ctx, master, addr, value, strb=0xF):
    assert await master.write(ctx, addr, value, strb) == OKAY


async def read(ctx, master, addr):
    value, resp = await master.read(ctx, addr)
    assert resp == OKAY
    return value


def defined_words(regs):
    """Byte offsets of every 32-bit word the map defines, high words of narrow slots included."""
    words = [CONTROL, GIE, IER, ISR]
    for entry in regs.entries[4:]:
        words += [entry.offset, entry.offset + 4]
    return words


async def first_response(ctx, bus, within=2):
    """RDATA of the first R transfer (RREADY already high), within ``within`` cycles."""
    for _ in range(within):
        *_, rvalid, rdata = await ctx.tick().sample(bus.rvalid, bus.rdata)
        if rvalid:
            return rdata
    raise AssertionError(f"no R transfer within {within} cycles")


async def read_all(ctx, master, regs):
    return {addr: await read(ctx, master, addr) for addr in defined_words(regs)}


# --- the register map ---

def test_register_map_offsets_and_table():
    regs = RegisterMap([("records", 64), ("src", 64), ("dst", 64), ("mode", 3)],
                       ["phase1_cycles", "phase2_cycles"])
    assert [(e.name, e.offset, e.bytes, e.access, e.kind, e.bits) for e in regs.entries] == [
        ("control", 0x00, 4, "rw", "control", 10),
        ("gie", 0x04, 4, "rw", "control", 1),
        ("ier", 0x08, 4, "rw", "control", 2),
        ("isr", 0x0C, 4, "rw", "control", 2),
        ("records", 0x10, 8, "rw", "arg", 64),
        ("src", 0x18, 8, "rw", "arg", 64),
        ("dst", 0x20, 8, "rw", "arg", 64),
        ("mode", 0x28, 4, "rw", "arg", 3),
        ("status", 0x30, 4, "ro", "status", 32),
        ("phase1_cycles", 0x38, 8, "ro", "counter", 64),
        ("phase2_cycles", 0x40, 8, "ro", "counter", 64),
    ]
    assert regs.offset("dst") == 0x20 and regs.offset("phase2_cycles") == 0x40
    assert regs.size == 0x48 and regs.address_bits == 7
    assert regs.args == (("records", 64), ("src", 64), ("dst", 64), ("mode", 3))
    assert regs.counters == ("phase1_cycles", "phase2_cycles")
    table = register_table(regs).splitlines()
    assert table[0] == "| Offset | Name | Bytes | Access | Description |"
    assert len(table) == 2 + 11
    assert table[9] == "| 0x28 | mode | 4 | rw | argument mode, 3 bits (+4 reads 0) |"
    assert table[10] == "| 0x30 | status | 4 | ro | kernel status word (+4 reads 0) |"
    with pytest.raises(KeyError, match="no register named 'nope'"):
        regs.offset("nope")


def test_register_map_without_args_or_counters():
    regs = RegisterMap([])
    assert [(e.name, e.offset) for e in regs] == [
        ("control", 0), ("gie", 4), ("ier", 8), ("isr", 12), ("status", 16)]
    assert regs.size == 0x18


@pytest.mark.parametrize("build,error,message", [
    (lambda: ControlRegisters([("a", 8), ("a", 16)]), ValueError,
     "args[1] name 'a' is a duplicate: argument and counter names must be unique"),
    (lambda: ControlRegisters([("a", 8)], ["a"]), ValueError,
     "counters[0] 'a' is a duplicate: argument and counter names must be unique"),
    (lambda: ControlRegisters([("a", 0)]), ValueError,
     "args[0] ('a') bits must be between 1 and 64, not 0"),
    (lambda: ControlRegisters([("a", 65)]), ValueError,
     "args[0] ('a') bits must be between 1 and 64, not 65"),
    (lambda: ControlRegisters([("a", "8")]), TypeError,
     "args[0] ('a') bits must be an integer, not '8'"),
    (lambda: ControlRegisters([("a", 8, 1)]), TypeError,
     "args[0] must be a (name, bits) pair, not ('a', 8, 1)"),
    (lambda: ControlRegisters("ab"), TypeError, "args must be a sequence, not 'ab'"),
    (lambda: ControlRegisters([], "cycles"), TypeError,
     "counters must be a sequence, not 'cycles'"),
    (lambda: ControlRegisters([("2x", 8)]), ValueError,
     "args[0] name must be an identifier (a letter, then letters, digits or _; no Python "
     "keyword), not '2x'"),
    (lambda: ControlRegisters([("a", 8)], ["class"]), ValueError,
     "counters[0] must be an identifier (a letter, then letters, digits or _; no Python "
     "keyword), not 'class'"),
    (lambda: ControlRegisters([(3, 8)]), TypeError, "args[0] name must be a string, not 3"),
    (lambda: ControlRegisters([("status", 32)]), ValueError,
     "args[0] name must not be one of the reserved names control, gie, ier, isr, status, "
     "not 'status'"),
    (lambda: ControlRegisters([("a", 8)], addr_width=3), ValueError,
     "addr_width must be between 4 and 32, not 3"),
    (lambda: ControlRegisters([("a", 8)], addr_width=True), TypeError,
     "addr_width must be an integer, not True"),
    (lambda: ControlRegisters([(f"a{i}", 64) for i in range(30)], addr_width=8), ValueError,
     "addr_width must be at least 9 for this register map (0x108 bytes), not 8"),
])
def test_parameter_errors(build, error, message):
    assert constructor_error(build) == (error, message)


def test_map_that_just_fits():
    # 0x10 + 29 slots + status slot = 0x100 bytes: exactly 8 address bits.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        dut = ControlRegisters([(f"a{i}", 64) for i in range(29)], addr_width=8)
        assert dut.register_map.size == 0x100 and dut.register_map.address_bits == 8
        del dut
        gc.collect()


# --- control word ---

def test_start_set_by_write_and_cleared_by_ready():
    dut = ControlRegisters(ARGS, COUNTERS)

    async def bench(ctx, master, _):
        assert ctx.get(dut.start) == 0
        await write(ctx, master, CONTROL, 1 << AP_START, strb=0b1110)  # lane 0 off: no start
        assert ctx.get(dut.start) == 0
        # Every bit but ap_start and auto_restart is read-only.
        await write(ctx, master, CONTROL, ~(1 << AP_START | 1 << AUTO_RESTART) & 0xFFFFFFFF)
        assert await read(ctx, master, CONTROL) == 0
        assert ctx.get(dut.start) == 0
        await write(ctx, master, CONTROL, 1 << AP_START)
        assert ctx.get(dut.start) == 1
        assert await read(ctx, master, CONTROL) == 1 << AP_START
        await write(ctx, master, CONTROL, 0)  # writing 0 does not stop a start
        assert ctx.get(dut.start) == 1
        for _ in range(5):
            await ctx.tick()
            assert ctx.get(dut.start) == 1  # held until the kernel takes it
        await pulse(ctx, dut.ready)
        assert ctx.get(dut.start) == 0
        assert await read(ctx, master, CONTROL) == 1 << AP_READY
        assert await read(ctx, master, CONTROL) == 0  # ap_ready cleared by the first read
        assert ctx.get(dut.start) == 0

    simulate(dut, bench)


def test_auto_restart_keeps_start_high():
    dut = ControlRegisters(ARGS, COUNTERS)

    async def bench(ctx, master, _):
        await write(ctx, master, CONTROL, 1 << AUTO_RESTART | 1 << AP_START)
        assert await read(ctx, master, CONTROL) == 1 << AUTO_RESTART | 1 << AP_START
        for _ in range(3):
            await pulse(ctx, dut.ready)
            assert ctx.get(dut.start) == 1
        assert await read(ctx, master, CONTROL) == (1 << AUTO_RESTART | 1 << AP_START
                                                    | 1 << AP_READY)
        await write(ctx, master, CONTROL, 0)  # auto_restart off; start stays up
        assert ctx.get(dut.start) == 1
        assert await read(ctx, master, CONTROL) == 1 << AP_START
        await pulse(ctx, dut.ready)
        assert ctx.get(dut.start) == 0
        assert await read(ctx, master, CONTROL) == 1 << AP_READY

    simulate(dut, bench)


def test_done_and_ready_clear_on_read_and_idle_follows_input():
    dut = ControlRegisters(ARGS, COUNTERS)

    async def bench(ctx, master, _):
        assert await read(ctx, master, CONTROL) == 0
        ctx.set(dut.idle, 1)
        await ctx.tick()
        assert await read(ctx, master, CONTROL) == 1 << AP_IDLE
        await pulse(ctx, dut.done)
        await pulse(ctx, dut.ready)
        for _ in range(3):  # flags stay until read
            await ctx.tick()
        assert await read(ctx, master, CONTROL) == 1 << AP_IDLE | 1 << AP_DONE | 1 << AP_READY
        assert await read(ctx, master, CONTROL) == 1 << AP_IDLE
        ctx.set(dut.idle, 0)
        await pulse(ctx, dut.done)
        assert await read(ctx, master, CONTROL) == 1 << AP_DONE
        assert await read(ctx, master, CONTROL) == 0
        # Reads elsewhere do not clear the flags.
        await pulse(ctx, dut.done)
        assert await read(ctx, master, GIE) == 0
        assert await read(ctx, master, ISR) == 0
        assert await read(ctx, master, CONTROL) == 1 << AP_DONE

    simulate(dut, bench)


@pytest.mark.parametrize("event,bit", [("done", AP_DONE), ("ready", AP_READY)])
def test_event_in_the_cycle_of_the_clearing_read_is_kept(event, bit):
    dut = ControlRegisters(ARGS, COUNTERS)
    bus = dut.s_axi_control

    async def bench(ctx, master, _):
        # AR is taken in the same cycle as the pulse: the read returns the state before the
        # pulse, and the pulse stays for the next read.
        ctx.set(bus.araddr, CONTROL)
        ctx.set(bus.arvalid, 1)
        ctx.set(getattr(dut, event), 1)
        *_, arready = await ctx.tick().sample(bus.arready)
        assert arready == 1
        ctx.set(bus.arvalid, 0)
        ctx.set(getattr(dut, event), 0)
        ctx.set(bus.rready, 1)
        assert await first_response(ctx, bus) == 0
        ctx.set(bus.rready, 0)
        assert await read(ctx, master, CONTROL) == 1 << bit
        assert await read(ctx, master, CONTROL) == 0

    simulate(dut, bench)


def test_idle_and_done_together_are_read_together():
    # A kernel raising idle and done in one cycle is never seen idle but not done.
    dut = ControlRegisters(ARGS, COUNTERS)
    bus = dut.s_axi_control

    async def bench(ctx, master, _):
        ctx.set(bus.araddr, CONTROL)
        ctx.set(bus.arvalid, 1)
        ctx.set(dut.done, 1)
        ctx.set(dut.idle, 1)
        *_, arready = await ctx.tick().sample(bus.arready)
        assert arready == 1
        ctx.set(bus.arvalid, 0)
        ctx.set(dut.done, 0)
        ctx.set(bus.rready, 1)
        assert await first_response(ctx, bus) == 0
        ctx.set(bus.rready, 0)
        assert await read(ctx, master, CONTROL) == 1 << AP_DONE | 1 << AP_IDLE

    simulate(dut, bench)


def test_one_read_clears_once():
    # A read whose R waits for RREADY must not clear an event that arrives meanwhile.
    dut = ControlRegisters(ARGS, COUNTERS)
    bus = dut.s_axi_control

    async def bench(ctx, master, _):
        ctx.set(bus.araddr, CONTROL)
        ctx.set(bus.arvalid, 1)
        await ctx.tick()
        ctx.set(bus.arvalid, 0)
        await pulse(ctx, dut.done)  # while R waits
        for _ in range(3):
            await ctx.tick()
        ctx.set(bus.rready, 1)
        assert await first_response(ctx, bus) == 0
        ctx.set(bus.rready, 0)
        assert await read(ctx, master, CONTROL) == 1 << AP_DONE

    simulate(dut, bench)


def test_one_write_at_a_time():
    # A second AW and W offered while B waits are not taken until B is accepted.
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map
    bus = dut.s_axi_control
    writes = [(regs.offset("records"), 0x11111111), (regs.offset("src"), 0x22222222)]

    async def bench(ctx, master, _):
        handshakes = []
        taken = 0  # AW/W pairs taken
        ctx.set(bus.wstrb, 0xF)
        for cycle in range(12):
            offering = taken < len(writes)
            if offering:
                ctx.set(bus.awaddr, writes[taken][0])
                ctx.set(bus.wdata, writes[taken][1])
            ctx.set(bus.awvalid, offering)
            ctx.set(bus.wvalid, offering)
            ctx.set(bus.bready, cycle >= 8)
            *_, awready, wready, bvalid = await ctx.tick().sample(bus.awready, bus.wready,
                                                                  bus.bvalid)
            assert awready == wready  # both free, or both blocked
            if offering and awready:
                handshakes.append(("aw+w", cycle))
                taken += 1
            if bvalid and cycle >= 8:
                handshakes.append(("b", cycle))
        assert handshakes == [("aw+w", 0), ("b", 8), ("aw+w", 9), ("b", 11)]
        assert ctx.get(dut.args.records) == 0x11111111
        assert ctx.get(dut.args.src) == 0x22222222

    simulate(dut, bench)


# --- interrupts ---

def test_interrupt_enable_status_and_toggle():
    dut = ControlRegisters(ARGS, COUNTERS)

    async def bench(ctx, master, _):
        await write(ctx, master, GIE, 1)
        await pulse(ctx, dut.done)
        await pulse(ctx, dut.ready)
        assert await read(ctx, master, ISR) == 0  # IER clear: no status
        assert ctx.get(dut.interrupt) == 0
        await write(ctx, master, IER, 0b01)
        assert await read(ctx, master, IER) == 0b01
        await pulse(ctx, dut.ready)
        assert await read(ctx, master, ISR) == 0  # ready not enabled
        await pulse(ctx, dut.done)
        assert await read(ctx, master, ISR) == 0b01
        assert ctx.get(dut.interrupt) == 1
        assert await read(ctx, master, CONTROL) == 1 << INTERRUPT | 1 << AP_DONE | 1 << AP_READY
        await write(ctx, master, GIE, 0)
        assert ctx.get(dut.interrupt) == 0
        assert await read(ctx, master, CONTROL) == 0
        assert await read(ctx, master, ISR) == 0b01  # status kept without GIE
        await write(ctx, master, GIE, 1)
        assert ctx.get(dut.interrupt) == 1
        await write(ctx, master, ISR, 0b01, strb=0b1110)  # lane 0 off: no toggle
        assert await read(ctx, master, ISR) == 0b01
        await write(ctx, master, ISR, 0b01)  # toggle clears
        assert await read(ctx, master, ISR) == 0
        assert ctx.get(dut.interrupt) == 0
        await write(ctx, master, ISR, 0b10)  # toggle sets too
        assert await read(ctx, master, ISR) == 0b10
        assert ctx.get(dut.interrupt) == 1
        await write(ctx, master, ISR, 0b11)
        assert await read(ctx, master, ISR) == 0b01
        await write(ctx, master, ISR, 0b01)
        assert ctx.get(dut.interrupt) == 0
        await write(ctx, master, IER, 0b10)
        await pulse(ctx, dut.done)
        assert await read(ctx, master, ISR) == 0
        await pulse(ctx, dut.ready)
        assert await read(ctx, master, ISR) == 0b10
        assert ctx.get(dut.interrupt) == 1
        await write(ctx, master, IER, 0b111)  # bits above 1 do not exist
        assert await read(ctx, master, IER) == 0b11
        await write(ctx, master, GIE, 0xFFFFFFFF)
        assert await read(ctx, master, GIE) == 1

    simulate(dut, bench)


# --- arguments ---

def _merge_lanes(old, data, strb, shift, bits):
    for lane in range(4):
        if strb >> lane & 1:
            mask = 0xFF << (shift + 8 * lane)
            old = old & ~mask | (data >> (8 * lane) & 0xFF) << (shift + 8 * lane)
    return old & ((1 << bits) - 1)


@pytest.mark.parametrize("seed", [1, 2])
def test_argument_round_trips_with_partial_strobes(seed):
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map
    rng = random.Random(seed)

    async def bench(ctx, master, _):
        model = {name: 0 for name, _ in ARGS}

        async def check():
            for name, _ in ARGS:
                assert ctx.get(dut.args[name]) == model[name], name
                base = regs.offset(name)
                assert await read(ctx, master, base) == model[name] & 0xFFFFFFFF, name
                assert await read(ctx, master, base + 4) == model[name] >> 32, name

        # Full 64-bit values, low then high word as XRT writes them.
        for name, bits in ARGS:
            value = rng.randrange(1 << 64)
            await write(ctx, master, regs.offset(name), value & 0xFFFFFFFF)
            await write(ctx, master, regs.offset(name) + 4, value >> 32)
            model[name] = value & ((1 << bits) - 1)
        await check()
        # Random strobes on random words; bits above an argument's width stay 0.
        for _ in range(40):
            name, bits = rng.choice(ARGS)
            high = rng.randrange(2)
            data, strb = rng.randrange(1 << 32), rng.randrange(16)
            await write(ctx, master, regs.offset(name) + 4 * high, data, strb)
            model[name] = _merge_lanes(model[name], data, strb, 32 * high, bits)
            assert ctx.get(dut.args[name]) == model[name], (name, high, strb)
        await check()

    simulate(dut, bench, seed=seed)


def test_narrow_arguments_read_zero_above_their_width():
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map

    async def bench(ctx, master, _):
        for name, _ in ARGS:
            await write(ctx, master, regs.offset(name), 0xFFFFFFFF)
            await write(ctx, master, regs.offset(name) + 4, 0xFFFFFFFF)
        expected = {"records": (0xFFFFFFFF, 0xFFFFFFFF), "src": (0xFFFFFFFF, 0xFFFFFFFF),
                    "mode": (0x7, 0), "count": (0xFFFFFFFF, 0), "odd": (0xFFFFFFFF, 0xFF),
                    "flag": (0x1, 0)}
        for name, (low, high) in expected.items():
            assert await read(ctx, master, regs.offset(name)) == low, name
            assert await read(ctx, master, regs.offset(name) + 4) == high, name
            assert ctx.get(dut.args[name]) == high << 32 | low, name

    simulate(dut, bench)


# --- status, counters, unused offsets ---

def test_status_and_counters_read_their_inputs():
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map
    rng = random.Random(5)

    async def bench(ctx, master, _):
        for _ in range(4):
            status = rng.randrange(1 << 32)
            counts = {name: rng.randrange(1 << 64) for name in COUNTERS}
            ctx.set(dut.status, status)
            for name, value in counts.items():
                ctx.set(dut.counters[name], value)
            assert await read(ctx, master, regs.offset("status")) == status
            assert await read(ctx, master, regs.offset("status") + 4) == 0
            for name, value in counts.items():
                assert await read(ctx, master, regs.offset(name)) == value & 0xFFFFFFFF
                assert await read(ctx, master, regs.offset(name) + 4) == value >> 32
            # Read-only: writes change nothing.
            await write(ctx, master, regs.offset("status"), ~status & 0xFFFFFFFF)
            for name in COUNTERS:
                await write(ctx, master, regs.offset(name), 0x12345678)
            assert await read(ctx, master, regs.offset("status")) == status
            assert await read(ctx, master, regs.offset(COUNTERS[0])) == (
                counts[COUNTERS[0]] & 0xFFFFFFFF)

    simulate(dut, bench)


def test_unused_offsets_are_harmless_and_read_zero():
    # An 8-bit address space (64 words) is checked in full.
    dut = ControlRegisters(ARGS, COUNTERS, addr_width=8)
    regs = dut.register_map
    rng = random.Random(7)
    used = set(defined_words(regs))
    unused = [addr for addr in range(0, 256, 4) if addr not in used]
    assert len(unused) == 64 - 4 - 2 * (len(ARGS) + 1 + len(COUNTERS))

    async def bench(ctx, master, _):
        ctx.set(dut.idle, 1)
        ctx.set(dut.status, 0xCAFEF00D)
        ctx.set(dut.counters[COUNTERS[1]], 0x0123456789ABCDEF)
        await write(ctx, master, GIE, 1)
        await write(ctx, master, IER, 0b11)
        await pulse(ctx, dut.done)
        await write(ctx, master, CONTROL, 1 << AUTO_RESTART)
        for name, _ in ARGS:
            await write(ctx, master, regs.offset(name), rng.randrange(1 << 32))
            await write(ctx, master, regs.offset(name) + 4, rng.randrange(1 << 32))
        before = await read_all(ctx, master, regs)
        outputs = {name: ctx.get(dut.args[name]) for name, _ in ARGS}
        assert before[CONTROL] == (1 << AUTO_RESTART | 1 << AP_DONE | 1 << AP_IDLE
                                   | 1 << INTERRUPT)
        after_clear = {**before, CONTROL: before[CONTROL] & ~(1 << AP_DONE)}
        for addr in unused:
            # Unaligned byte addresses name the same word: low 2 bits ignored.
            await write(ctx, master, addr + rng.randrange(4), 0xFFFFFFFF)
        for addr in unused:
            assert await read(ctx, master, addr + rng.randrange(4)) == 0, hex(addr)
        assert await read_all(ctx, master, regs) == after_clear
        assert {name: ctx.get(dut.args[name]) for name, _ in ARGS} == outputs
        assert ctx.get(dut.start) == 0
        assert ctx.get(dut.interrupt) == 1

    simulate(dut, bench)


def test_unused_offsets_in_a_12_bit_space():
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map
    rng = random.Random(8)

    async def bench(ctx, master, _):
        for name, _ in ARGS:
            await write(ctx, master, regs.offset(name), 0xA5A5A5A5)
        before = await read_all(ctx, master, regs)
        # The top of the space, words just past the map, and aliases of used words with
        # high address bits set.
        addrs = [0xFFC, regs.size, regs.size + 4, 0x800, 0x800 | regs.offset("records"),
                 0x400 | CONTROL, 0x100 | GIE] + [rng.randrange(regs.size, 4096) & ~3
                                                   for _ in range(8)]
        for addr in addrs:
            await write(ctx, master, addr, 0xFFFFFFFF)
            assert await read(ctx, master, addr) == 0, hex(addr)
        assert await read_all(ctx, master, regs) == before
        assert ctx.get(dut.start) == 0

    simulate(dut, bench)


# --- concurrency and reset ---

def test_reads_and_writes_run_concurrently():
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map
    rng = random.Random(11)
    values = [rng.randrange(1 << 32) for _ in range(30)]

    async def writer(ctx, master, _):
        ctx.set(dut.status, 0x5EED)
        for value in values:
            await write(ctx, master, regs.offset("records"), value)
            await write(ctx, master, regs.offset("src") + 4, value)

    async def reader(ctx, master, _):
        seen = set()
        await ctx.tick()
        for _ in range(60):
            assert await read(ctx, master, regs.offset("status")) == 0x5EED
            seen.add(await read(ctx, master, regs.offset("records")))
        # Every value read back was one that had been written (or the reset value).
        assert seen <= set(values) | {0}
        assert len(seen) > 5  # the reads really overlapped the writes

    simulate(dut, writer, reader)


def test_synchronous_reset_clears_everything():
    dut = ControlRegisters(ARGS, COUNTERS)
    regs = dut.register_map

    async def bench(ctx, master, domain):
        await write(ctx, master, GIE, 1)
        await write(ctx, master, IER, 0b11)
        await write(ctx, master, CONTROL, 1 << AUTO_RESTART | 1 << AP_START)
        for name, _ in ARGS:
            await write(ctx, master, regs.offset(name), 0xFFFFFFFF)
        await pulse(ctx, dut.done, dut.ready)
        assert ctx.get(dut.interrupt) == 1 and ctx.get(dut.start) == 1
        # Reset with a read waiting for RREADY and a write whose AW is taken but W is not.
        bus = dut.s_axi_control
        ctx.set(bus.araddr, GIE)
        ctx.set(bus.arvalid, 1)
        ctx.set(bus.awaddr, regs.offset("records"))
        ctx.set(bus.awvalid, 1)
        await ctx.tick()
        ctx.set(bus.arvalid, 0)
        ctx.set(bus.awvalid, 0)
        await ctx.tick()        # the read's word is selected
        assert ctx.get(bus.rvalid) == 1
        ctx.set(domain.rst, 1)
        await ctx.tick()
        ctx.set(domain.rst, 0)
        assert ctx.get(dut.start) == 0 and ctx.get(dut.interrupt) == 0
        assert ctx.get(bus.rvalid) == 0 and ctx.get(bus.bvalid) == 0
        assert ctx.get(bus.awready) == 1 and ctx.get(bus.wready) == 1
        for name, _ in ARGS:
            assert ctx.get(dut.args[name]) == 0
        values = await read_all(ctx, master, regs)
        assert values == {addr: 0 for addr in defined_words(regs)}

    simulate(dut, bench)


def test_empty_args_and_counters():
    dut = ControlRegisters([])

    async def bench(ctx, master, _):
        ctx.set(dut.status, 77)
        assert await read(ctx, master, 0x10) == 77
        await write(ctx, master, CONTROL, 1)
        assert await read(ctx, master, CONTROL) == 1

    simulate(dut, bench)


# --- the emitted Verilog, driven by cocotbext-axi ---

def test_control_verilog_with_cocotbext_axi():
    from topsort_hdl.sim.runner import SIM_BUILD, run_bench
    from topsort_hdl.targets.units import emit_verilog

    args = [("records", 64), ("src", 64), ("dst", 64), ("mode", 3)]
    counters = ["phase1_cycles", "phase2_cycles"]
    case = "control_icarus"
    path = SIM_BUILD / case / "control.v"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(emit_verilog(ControlRegisters(args, counters), "control"))
    ran = run_bench([path], "control", "cocotb_control", case, env={
        "TOPSORT_CONTROL_ARGS": ",".join(f"{name}:{bits}" for name, bits in args),
        "TOPSORT_CONTROL_COUNTERS": ",".join(counters),
    })
    assert ran == 6
