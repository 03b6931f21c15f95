"""AXI4 register slices: every channel's transfers pass in order, none lost or repeated, under
random VALID gaps and READY stalls at both ends, at one transfer per cycle when nothing stalls;
VALID and the payload held until READY, VALID independent of READY; a forward-only channel's
overrun flagged, a backpressured channel's FIFO never overfilled."""

import random

import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.core.axi_params import AXI4_CHANNELS as CHANNELS
from topsort_hdl.hardware.axi import AxiParams
from topsort_hdl.hardware.axi.register_slice import AxiRegisterSlice, credit_depth

PARAMS = AxiParams(data_width=64, addr_width=32, id_width=2)
BACK = ("r", "b")       # the channels the kernel's engines are always ready for


def bound(process, ch):
    """``process`` for one channel, as the async function the simulator wants."""
    async def run(ctx):
        await process(ctx, ch)
    return run


def run_slice(stages, gap, stall, count=60, seed=0, always_ready=(), ready_at=None,
              stall_always_ready=False, cycles_max=None):
    """Send ``count`` random payloads on every channel at once, VALID dropped with probability
    ``gap`` before each; the receiver's READY is ``ready_at(ch, cycle)`` if given, else low
    with probability ``stall``, but always high on ``always_ready`` channels unless
    ``stall_always_ready``. Checks the AXI rules at every receiver, every cycle. Returns per
    channel the sent and received payload lists, the cycles at which the sender's transfers
    were taken and the receiver's arrived, and whether ``overrun`` was ever seen."""
    dut = AxiRegisterSlice(PARAMS, stages, always_ready=always_ready)
    cycles_max = cycles_max or 20 * count
    rng = random.Random(seed)
    sent = {ch: [] for ch in CHANNELS}
    got = {ch: [] for ch in CHANNELS}
    taken_at = {ch: [] for ch in CHANNELS}
    got_at = {ch: [] for ch in CHANNELS}
    overrun = {ch: False for ch in CHANNELS}

    def ends(ch):
        fields, forward = CHANNELS[ch]
        return (dut.s, dut.m) if forward else (dut.m, dut.s)

    def member(port, ch, name):
        return getattr(port, ch + name)

    async def producer(ctx, ch):
        source, _ = ends(ch)
        fields, _ = CHANNELS[ch]
        cycle = 0
        for _ in range(count):
            while rng.random() < gap:
                ctx.set(member(source, ch, "valid"), 0)
                await ctx.tick()
                cycle += 1
            values = {f: rng.getrandbits(len(member(source, ch, f))) for f in fields}
            for f, v in values.items():
                ctx.set(member(source, ch, f), v)
            ctx.set(member(source, ch, "valid"), 1)
            while True:
                await ctx.delay(3e-9)     # after the receivers have set READY
                ready = ctx.get(member(source, ch, "ready"))
                await ctx.tick()
                cycle += 1
                if ready or cycle >= cycles_max:
                    break
            if not ready:
                break
            sent[ch].append(values)
            taken_at[ch].append(cycle - 1)
        ctx.set(member(source, ch, "valid"), 0)

    async def consumer(ctx, ch):
        _, sink = ends(ch)
        fields, _ = CHANNELS[ch]
        held = None       # the payload offered last cycle and not taken
        cycle = 0
        while len(got[ch]) < count and cycle < cycles_max:
            if ready_at is not None:
                ready = ready_at(ch, cycle)
            elif ch in always_ready and not stall_always_ready:
                ready = True
            else:
                ready = rng.random() >= stall
            # VALID and the payload must not depend on READY, in the same cycle.
            ctx.set(member(sink, ch, "ready"), not ready)
            await ctx.delay(1e-9)
            other = (ctx.get(member(sink, ch, "valid")),
                     {f: ctx.get(member(sink, ch, f)) for f in fields})
            ctx.set(member(sink, ch, "ready"), ready)
            await ctx.delay(1e-9)
            valid = ctx.get(member(sink, ch, "valid"))
            payload = {f: ctx.get(member(sink, ch, f)) for f in fields}
            assert (valid, payload if valid else None) == \
                (other[0], other[1] if valid else None), (ch, cycle)
            if held is not None:      # offered and not taken: still offered, unchanged
                assert valid and payload == held, (ch, cycle)
            # (a forward-only channel cannot hold: it flags the loss instead)
            holds = not (stages and ch in always_ready)
            held = payload if valid and not ready and holds else None
            if ready and valid:
                got[ch].append(payload)
                got_at[ch].append(cycle)
            overrun[ch] |= bool(ctx.get(getattr(dut.overrun, ch)))
            await ctx.tick()
            cycle += 1

    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    sim = Simulator(top)
    sim.add_clock(1e-8)
    for ch in CHANNELS:
        sim.add_testbench(bound(producer, ch))
        sim.add_testbench(bound(consumer, ch))
    sim.run()
    return {"sent": sent, "got": got, "taken_at": taken_at, "got_at": got_at,
            "overrun": overrun}


def latency(stages, ch, always_ready):
    """Cycles from a transfer taken at the sender to it offered at the receiver."""
    if not stages or ch in always_ready:
        return stages
    return stages + 1       # the receiving FIFO


@pytest.mark.parametrize("always_ready", [(), BACK], ids=["backpressure", "forward_rb"])
@pytest.mark.parametrize("stages", [0, 1, 2, 4])
@pytest.mark.parametrize("gap,stall", [(0.0, 0.0), (0.3, 0.0), (0.0, 0.4), (0.3, 0.5)])
def test_register_slice_passes_every_transfer_in_order(stages, gap, stall, always_ready):
    run = run_slice(stages, gap, stall, seed=stages * 7 + int(gap * 10) + int(stall),
                    always_ready=always_ready)
    for ch in CHANNELS:
        assert run["got"][ch] == run["sent"][ch], ch
        assert not run["overrun"][ch], ch


@pytest.mark.parametrize("always_ready", [(), BACK], ids=["backpressure", "forward_rb"])
@pytest.mark.parametrize("stages", [0, 1, 2, 3, 4])
def test_register_slice_full_rate(stages, always_ready):
    """No gaps, no stalls: N transfers taken in N cycles and delivered in N cycles plus the
    channel's latency, on every channel."""
    run = run_slice(stages, 0.0, 0.0, always_ready=always_ready)
    for ch in CHANNELS:
        assert run["got"][ch] == run["sent"][ch], ch
        assert run["taken_at"][ch] == list(range(60)), ch
        assert run["got_at"][ch] == [latency(stages, ch, always_ready) + k
                                     for k in range(60)], ch


# READY patterns at the receivers: the slowest and the most irregular a memory may apply.
PATTERNS = {
    "alternate": lambda ch, cycle: cycle % 2 == 1,
    "one_in_seven": lambda ch, cycle: cycle % 7 == 6,
    "long_stalls": lambda ch, cycle: cycle % 97 >= 80,
    "bursts": lambda ch, cycle: (cycle // 3) % 5 in (0, 2),
}


@pytest.mark.parametrize("stages", [1, 2, 4])
@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_register_slice_under_stall_patterns(stages, pattern):
    stalls = PATTERNS[pattern]
    run = run_slice(stages, 0.2, 0.0, count=80, seed=stages, always_ready=BACK,
                    ready_at=lambda ch, cycle: ch in BACK or stalls(ch, cycle),
                    cycles_max=80 * 100)
    for ch in CHANNELS:
        assert run["got"][ch] == run["sent"][ch], ch
        assert not run["overrun"][ch], ch


@pytest.mark.parametrize("stages", [1, 2, 4])
def test_register_slice_fifo_fills_and_never_overflows(stages):
    """Receivers stalled for 200 cycles under a sender that offers every cycle: each channel
    with backpressure takes exactly as many transfers as its FIFO holds, then waits; once the
    receiver is ready they all arrive, then the rest at a transfer per cycle (no bandwidth
    lost to the stall)."""
    release = 200
    run = run_slice(stages, 0.0, 0.0, count=60, always_ready=BACK,
                    ready_at=lambda ch, cycle: ch in BACK or cycle >= release)
    depth = credit_depth(stages)
    for ch in CHANNELS:
        assert run["got"][ch] == run["sent"][ch], ch
        if ch in BACK:
            continue
        taken = run["taken_at"][ch]
        assert taken[:depth] == list(range(depth)), ch
        assert taken[depth] >= release, ch                 # no credit while stalled
        assert run["got_at"][ch] == list(range(release, release + 60)), ch


@pytest.mark.parametrize("stages", [1, 4])
@pytest.mark.parametrize("ch", BACK)
def test_register_slice_flags_a_forward_only_receiver_that_stalls(stages, ch):
    """A forward-only channel whose receiver drops READY loses transfers: ``overrun`` says
    so (the kernel reports it as an error), the other channels are unaffected."""
    run = run_slice(stages, 0.0, 0.0, count=30, seed=3, always_ready=(ch,),
                    ready_at=lambda name, cycle: name != ch or cycle % 4 != 3,
                    cycles_max=600)
    assert run["overrun"][ch]
    assert len(run["sent"][ch]) == 30 and len(run["got"][ch]) < 30
    for other in CHANNELS:
        if other != ch:
            assert run["got"][other] == run["sent"][other] and not run["overrun"][other]


def test_register_slice_without_stages_needs_no_assumption():
    """Zero stages is a plain connection: READY passes through, so nothing can be lost."""
    run = run_slice(0, 0.2, 0.4, always_ready=BACK, stall_always_ready=True)
    for ch in CHANNELS:
        assert run["got"][ch] == run["sent"][ch] and not run["overrun"][ch], ch


def test_register_slice_parameters():
    assert constructor_error(lambda: AxiRegisterSlice(PARAMS, 17)) == (
        ValueError, "stages must be between 0 and 16, not 17")
    kind, message = constructor_error(lambda: AxiRegisterSlice(64, 1))
    assert kind is TypeError and message.startswith("params must be an AxiParams")
    assert constructor_error(lambda: AxiRegisterSlice(PARAMS, 1, always_ready=("x",))) == (
        ValueError, "always_ready names AXI channels (aw, w, b, ar, r), not 'x'")
