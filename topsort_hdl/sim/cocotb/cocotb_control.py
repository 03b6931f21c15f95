"""cocotb testbench for the emitted AXI4-Lite control slave, driven by cocotbext-axi's master.

The register map comes from :class:`RegisterMap`, rebuilt from ``TOPSORT_CONTROL_ARGS``
(``name:bits,...``) and ``TOPSORT_CONTROL_COUNTERS`` (``name,...``). Every channel of the
master gets a random pause generator, so AW/W order and BREADY/RREADY timing vary.
"""

import itertools
import logging
import os
import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

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

from .stream_driver import reset

ARGS = [(name, int(bits)) for name, bits in
        (item.split(":") for item in os.environ.get("TOPSORT_CONTROL_ARGS",
                                                    "records:64,mode:3").split(","))]
COUNTERS = [name for name in os.environ.get("TOPSORT_CONTROL_COUNTERS", "").split(",") if name]
REGS = RegisterMap(ARGS, COUNTERS)
MASK32 = 0xFFFFFFFF


def _pauses(rng, chance):
    while True:
        yield rng.random() < chance


async def setup(dut, seed):
    """Reset the DUT with its inputs idle; return a cocotbext-axi master with random pauses."""
    dut.ready.value = 0
    dut.done.value = 0
    dut.idle.value = 1
    dut.status.value = 0
    dut.counters.value = 0
    await reset(dut)
    master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control_"), dut.clk, dut.rst)
    rng = random.Random(seed)
    for channel in (master.write_if.aw_channel, master.write_if.w_channel,
                    master.write_if.b_channel, master.read_if.ar_channel,
                    master.read_if.r_channel):
        channel.set_pause_generator(_pauses(random.Random(rng.random()), 0.4))
    for side in (master.write_if, master.read_if):
        side.log.setLevel(logging.WARNING)
    await ClockCycles(dut.clk, 2)
    return master


async def read32(master, addr):
    resp = await master.read(addr, 4)
    assert resp.resp == AxiResp.OKAY, (hex(addr), resp.resp)
    return int.from_bytes(resp.data, "little")


async def write32(master, addr, value):
    resp = await master.write(addr, (value & MASK32).to_bytes(4, "little"))
    assert resp.resp == AxiResp.OKAY, (hex(addr), resp.resp)


async def write_bytes(master, addr, data):
    """A write of ``data`` at any byte address: cocotbext-axi turns it into WSTRB lanes."""
    resp = await master.write(addr, data)
    assert resp.resp == AxiResp.OKAY, (hex(addr), resp.resp)


def arg_output(dut, name):
    """The value of argument ``name`` on the packed ``args`` output port."""
    low = 0
    for arg, bits in ARGS:
        if arg == name:
            return dut.args.value.to_unsigned() >> low & ((1 << bits) - 1)
        low += bits
    raise KeyError(name)


def set_counters(dut, values):
    dut.counters.value = sum(values[name] << (64 * i) for i, name in enumerate(COUNTERS))


async def pulse(dut, signal):
    await RisingEdge(dut.clk)
    signal.value = 1
    await RisingEdge(dut.clk)
    signal.value = 0


async def kernel(dut, rng, runs):
    """A kernel model: take ap_start when idle, pulse ready, work a while, pulse done."""
    for _ in range(runs):
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.start.value):
                break
        await ClockCycles(dut.clk, rng.randrange(1, 6))
        await RisingEdge(dut.clk)
        dut.ready.value = 1
        dut.idle.value = 0
        await RisingEdge(dut.clk)
        dut.ready.value = 0
        await ClockCycles(dut.clk, rng.randrange(5, 40))
        dut.done.value = 1
        dut.idle.value = 1
        await RisingEdge(dut.clk)
        dut.done.value = 0


@cocotb.test(timeout_time=100, timeout_unit="us")
async def xrt_like_runs(dut):
    """Write the arguments, start, poll for ap_done as XRT does; three runs in a row."""
    master = await setup(dut, 1)
    rng = random.Random(1)
    kernel_task = cocotb.start_soon(kernel(dut, rng, 3))
    for run in range(3):
        values = {name: rng.randrange(1 << bits) for name, bits in ARGS}
        for name, bits in ARGS:
            await write32(master, REGS.offset(name), values[name] & MASK32)
            if bits > 32:
                await write32(master, REGS.offset(name) + 4, values[name] >> 32)
        assert await read32(master, CONTROL) == 1 << AP_IDLE
        await write32(master, CONTROL, 1 << AP_START)
        for polls in itertools.count():
            word = await read32(master, CONTROL)
            if word >> AP_DONE & 1:
                break
            assert polls < 200, f"run {run}: no ap_done"
            # Not done yet: start pending, start just taken, or running.
            assert word >> AP_START & 1 or word >> AP_READY & 1 or not word >> AP_IDLE & 1, (
                run, hex(word))
        # Done, idle, start taken. ap_ready is set too unless an earlier poll took it.
        assert word & ~(1 << AP_READY) == 1 << AP_DONE | 1 << AP_IDLE, (run, hex(word))
        assert await read32(master, CONTROL) == 1 << AP_IDLE, run  # cleared by the poll
        assert int(dut.start.value) == 0
        for name, _ in ARGS:
            assert arg_output(dut, name) == values[name], (run, name)
            assert await read32(master, REGS.offset(name)) == values[name] & MASK32
            assert await read32(master, REGS.offset(name) + 4) == values[name] >> 32
    await kernel_task


@cocotb.test(timeout_time=100, timeout_unit="us")
async def argument_round_trips(dut):
    """Random 64-bit writes, 8-byte writes, and byte/halfword writes at any address."""
    master = await setup(dut, 2)
    rng = random.Random(2)
    model = {name: 0 for name, _ in ARGS}
    for _ in range(60):
        name, bits = rng.choice(ARGS)
        base = REGS.offset(name)
        kind = rng.randrange(3)
        if kind == 0:  # one 8-byte write: two beats
            value = rng.randrange(1 << 64)
            await write_bytes(master, base, value.to_bytes(8, "little"))
            model[name] = value & ((1 << bits) - 1)
        else:  # 1 to 4 bytes inside one word: a partial WSTRB
            start = rng.randrange(8)
            length = rng.randrange(1, 5 - start % 4)
            data = bytes(rng.randrange(256) for _ in range(length))
            await write_bytes(master, base + start, data)
            slot = bytearray(model[name].to_bytes(8, "little"))
            slot[start:start + length] = data
            model[name] = int.from_bytes(slot, "little") & ((1 << bits) - 1)
        assert arg_output(dut, name) == model[name], name
    for name, _ in ARGS:
        got = int.from_bytes((await master.read(REGS.offset(name), 8)).data, "little")
        assert got == model[name], name
        assert arg_output(dut, name) == model[name], name


@cocotb.test(timeout_time=100, timeout_unit="us")
async def auto_restart_keeps_start(dut):
    master = await setup(dut, 6)
    await write32(master, CONTROL, 1 << AUTO_RESTART | 1 << AP_START)
    for _ in range(2):
        await pulse(dut, dut.ready)
        await RisingEdge(dut.clk)
        assert int(dut.start.value) == 1
    assert await read32(master, CONTROL) == (1 << AUTO_RESTART | 1 << AP_START | 1 << AP_READY
                                             | 1 << AP_IDLE)
    await write32(master, CONTROL, 0)  # auto_restart off; a written 0 does not stop start
    assert int(dut.start.value) == 1
    await pulse(dut, dut.ready)
    await RisingEdge(dut.clk)
    assert int(dut.start.value) == 0
    assert await read32(master, CONTROL) == 1 << AP_READY | 1 << AP_IDLE


@cocotb.test(timeout_time=100, timeout_unit="us")
async def interrupt_pin_and_isr_toggle(dut):
    master = await setup(dut, 3)
    await write32(master, GIE, 1)
    await write32(master, IER, 1 << 0)
    await pulse(dut, dut.ready)  # not enabled
    assert await read32(master, ISR) == 0
    assert int(dut.interrupt.value) == 0
    await pulse(dut, dut.done)
    await RisingEdge(dut.clk)
    assert int(dut.interrupt.value) == 1
    assert await read32(master, ISR) == 0b01
    assert await read32(master, CONTROL) == (1 << INTERRUPT | 1 << AP_DONE | 1 << AP_READY
                                             | 1 << AP_IDLE)
    await write32(master, GIE, 0)
    assert int(dut.interrupt.value) == 0
    await write32(master, GIE, 1)
    assert int(dut.interrupt.value) == 1
    await write32(master, ISR, 0b01)  # toggle clears
    assert await read32(master, ISR) == 0
    assert int(dut.interrupt.value) == 0
    await write32(master, IER, 0b10)
    await pulse(dut, dut.ready)
    await RisingEdge(dut.clk)
    assert await read32(master, ISR) == 0b10
    assert int(dut.interrupt.value) == 1
    await write32(master, ISR, 0b11)  # toggles both: ready clears, done sets
    assert await read32(master, ISR) == 0b01
    await write32(master, ISR, 0b01)
    assert int(dut.interrupt.value) == 0


@cocotb.test(timeout_time=100, timeout_unit="us")
async def status_counters_and_unused_offsets(dut):
    master = await setup(dut, 4)
    rng = random.Random(4)
    status = rng.randrange(1 << 32)
    counts = {name: rng.randrange(1 << 64) for name in COUNTERS}
    dut.status.value = status
    set_counters(dut, counts)
    values = {name: rng.randrange(1 << bits) for name, bits in ARGS}
    for name, _ in ARGS:
        await write_bytes(master, REGS.offset(name), values[name].to_bytes(8, "little"))
    words = [CONTROL, GIE, IER, ISR] + [e.offset + k for e in REGS.entries[4:] for k in (0, 4)]
    before = {addr: await read32(master, addr) for addr in words}
    assert before[REGS.offset("status")] == status
    for name in COUNTERS:
        assert before[REGS.offset(name)] == counts[name] & MASK32
        assert before[REGS.offset(name) + 4] == counts[name] >> 32
    unused = [REGS.size, REGS.size + 4, 0x800, 0xFFC] + [
        rng.randrange(REGS.size, 1 << 12) & ~3 for _ in range(6)]
    # Writes to unused offsets and to read-only registers are accepted and change nothing.
    for addr in unused + [REGS.offset("status")] + [REGS.offset(n) for n in COUNTERS]:
        await write32(master, addr, MASK32)
    for addr in unused:
        assert await read32(master, addr) == 0, hex(addr)
    assert {addr: await read32(master, addr) for addr in words} == before
    for name, _ in ARGS:
        assert arg_output(dut, name) == values[name], name
    assert int(dut.start.value) == 0


@cocotb.test(timeout_time=100, timeout_unit="us")
async def concurrent_reads_and_writes(dut):
    """Reads and writes issued together: both channels busy at once."""
    master = await setup(dut, 5)
    rng = random.Random(5)
    dut.status.value = 0x600D
    name = ARGS[0][0]
    values = [rng.randrange(1 << 32) for _ in range(20)]

    async def writes():
        for value in values:
            await write32(master, REGS.offset(name), value)

    async def reads():
        seen = []
        for _ in range(20):
            assert await read32(master, REGS.offset("status")) == 0x600D
            seen.append(await read32(master, REGS.offset(name)))
        return seen

    writer = cocotb.start_soon(writes())
    seen = await reads()
    await writer
    assert set(seen) <= set(values) | {0}
    assert await read32(master, REGS.offset(name)) == values[-1]
