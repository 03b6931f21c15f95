"""AXI4 register slices: every channel's transfers pass in order, none lost or repeated, under
random VALID gaps and READY stalls at both ends, at one transfer per cycle when nothing stalls."""

import random

import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from topsort_hdl.axi import AxiParams
from topsort_hdl.axi.register_slice import CHANNELS, AxiRegisterSlice

from .test_merge_sim import constructor_error

PARAMS = AxiParams(data_width=64, addr_width=32, id_width=2)


def bound(process, ch):
    """``process`` for one channel, as the async function the simulator wants."""
    async def run(ctx):
        await process(ctx, ch)
    return run


def run_slice(stages, gap, stall, count=60, seed=0):
    """Send ``count`` random payloads on every channel at once; return per channel the sent
    and received payload lists and the cycles its consumer took."""
    dut = AxiRegisterSlice(PARAMS, stages)
    rng = random.Random(seed)
    sent = {ch: [] for ch in CHANNELS}
    got = {ch: [] for ch in CHANNELS}
    cycles = {ch: 0 for ch in CHANNELS}

    def ends(ch):
        fields, forward = CHANNELS[ch]
        return (dut.s, dut.m) if forward else (dut.m, dut.s)

    async def producer(ctx, ch):
        source, _ = ends(ch)
        fields, _ = CHANNELS[ch]
        for _ in range(count):
            while rng.random() < gap:
                ctx.set(getattr(source, f"{ch}valid"), 0)
                await ctx.tick()
            values = {f: rng.getrandbits(len(getattr(source, ch + f))) for f in fields}
            for f, v in values.items():
                ctx.set(getattr(source, ch + f), v)
            ctx.set(getattr(source, f"{ch}valid"), 1)
            await ctx.tick().until(getattr(source, f"{ch}ready"))
            sent[ch].append(values)
        ctx.set(getattr(source, f"{ch}valid"), 0)

    async def consumer(ctx, ch):
        _, sink = ends(ch)
        fields, _ = CHANNELS[ch]
        while len(got[ch]) < count:
            ready = rng.random() >= stall
            ctx.set(getattr(sink, f"{ch}ready"), ready)
            await ctx.delay(1e-9)
            if ready and ctx.get(getattr(sink, f"{ch}valid")):
                got[ch].append({f: ctx.get(getattr(sink, ch + f)) for f in fields})
            await ctx.tick()
            cycles[ch] += 1

    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    for ch in CHANNELS:
        sim.add_testbench(bound(producer, ch))
        sim.add_testbench(bound(consumer, ch))
    sim.run_until(1e-8 * 20 * count)
    return sent, got, cycles


@pytest.mark.parametrize("stages", [0, 1, 2, 4])
@pytest.mark.parametrize("gap,stall", [(0.0, 0.0), (0.3, 0.0), (0.0, 0.4), (0.3, 0.5)])
def test_register_slice_passes_every_transfer_in_order(stages, gap, stall):
    sent, got, _ = run_slice(stages, gap, stall, seed=stages * 7 + int(gap * 10) + int(stall))
    for ch in CHANNELS:
        assert got[ch] == sent[ch], ch


@pytest.mark.parametrize("stages", [1, 3])
def test_register_slice_full_rate(stages):
    """No gaps, no stalls: 60 transfers in 60 cycles plus the stages' latency."""
    sent, got, cycles = run_slice(stages, 0.0, 0.0)
    assert all(got[ch] == sent[ch] for ch in CHANNELS)
    assert max(cycles.values()) <= 60 + stages + 1, cycles


def test_register_slice_parameters():
    assert constructor_error(lambda: AxiRegisterSlice(PARAMS, 17)) == (
        ValueError, "stages must be between 0 and 16, not 17")
    kind, message = constructor_error(lambda: AxiRegisterSlice(64, 1))
    assert kind is TypeError and message.startswith("params must be an AxiParams")
