"""The FIFO with registered flags behaves, cycle for cycle, as the amaranth FIFO it replaces:
the same flags, the same head, under random writes and reads, full and empty, at every
capacity from the head register alone up; so does the skid buffer, as the two-entry FIFO;
bad capacities are refused by name."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import fifo
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.hardware.queue import RegisteredFlagsFIFO, SkidBuffer

WIDTH = 8


def run_lockstep(capacity, buffered, write_p, read_p, cycles=600, seed=0, ours=None):
    """Drive ours (a :class:`RegisteredFlagsFIFO`, unless given) and amaranth's FIFO with the
    same enables and data; return the entries read and the fullest and emptiest moments
    seen, failing on the first differing flag or head."""
    if ours is None:
        ours = RegisteredFlagsFIFO(shape=WIDTH, capacity=capacity, buffered=buffered)
    reference = (fifo.SyncFIFOBuffered if buffered else fifo.SyncFIFO)(width=WIDTH,
                                                                       depth=capacity)
    m = Module()
    m.submodules.ours, m.submodules.reference = ours, reference
    rng = random.Random(seed)
    written, read, seen = [], [], {"full": 0, "empty": 0}

    async def testbench(ctx):
        for cycle in range(cycles):
            w_rdy, r_rdy = ctx.get(ours.i.ready), ctx.get(ours.o.valid)
            assert (w_rdy, r_rdy) == (ctx.get(reference.w_rdy), ctx.get(reference.r_rdy)), \
                f"flags differ at cycle {cycle}"
            if r_rdy:
                assert ctx.get(ours.o.payload) == ctx.get(reference.r_data), \
                    f"heads differ at cycle {cycle}"
            seen["full"] += not w_rdy
            seen["empty"] += not r_rdy
            write = w_rdy and rng.random() < write_p
            data = rng.getrandbits(WIDTH)
            # (a buffered FIFO ignores READ while its head is empty: drive it anyway)
            read_en = rng.random() < read_p and (r_rdy or buffered)
            ctx.set(ours.i.valid, write)
            ctx.set(ours.i.payload, data)
            ctx.set(ours.o.ready, read_en)
            ctx.set(reference.w_en, write)
            ctx.set(reference.w_data, data)
            ctx.set(reference.r_en, read_en)
            if write:
                written.append(data)
            if read_en and r_rdy:
                read.append(ctx.get(ours.o.payload))
            await ctx.tick()

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    return written, read, seen


# (amaranth's one-entry SyncFIFO is its buffered one: compared once)
@pytest.mark.parametrize("capacity,buffered", [(1, True), *((c, b) for c in (2, 3, 4, 5, 8)
                                                            for b in (True, False))])
@pytest.mark.parametrize("write_p,read_p", [(0.9, 0.3), (0.3, 0.9), (0.7, 0.7), (1.0, 1.0)])
def test_flags_and_head_match_the_amaranth_fifo(capacity, buffered, write_p, read_p):
    written, read, seen = run_lockstep(capacity, buffered, write_p, read_p,
                                       seed=capacity * 10 + buffered)
    assert read == written[:len(read)] and len(read) > 50
    if write_p > read_p:
        assert seen["full"] > 0       # the full flag was exercised
    if read_p > write_p:
        assert seen["empty"] > 0


@pytest.mark.parametrize("write_p,read_p", [(0.9, 0.3), (0.3, 0.9), (0.7, 0.7), (1.0, 1.0)])
def test_skid_buffer_is_a_two_entry_fifo(write_p, read_p):
    """The skid buffer: the flags and head of amaranth's two-entry FIFO, cycle for cycle,
    from registers of its own."""
    written, read, seen = run_lockstep(2, False, write_p, read_p, seed=7,
                                       ours=SkidBuffer(WIDTH))
    assert read == written[:len(read)] and len(read) > 50
    if write_p > read_p:
        assert seen["full"] > 0
    if read_p > write_p:
        assert seen["empty"] > 0


def test_capacity_zero_is_refused_by_name():
    assert constructor_error(lambda: RegisteredFlagsFIFO(shape=WIDTH, capacity=0,
                                                         buffered=True)) == \
        (ValueError, "capacity must be at least 1, not 0")


@pytest.mark.parametrize("capacity,buffered", [(1, True), (2, False), (3, True), (4, False)])
def test_an_offer_while_full_waits_for_room(capacity, buffered):
    """A stream writer that offers whenever it likes and holds an offer until taken, a reader
    that takes whenever it likes: every entry passes once, in order (the queue takes an offer
    only with room)."""
    dut = RegisteredFlagsFIFO(shape=WIDTH, capacity=capacity, buffered=buffered)
    rng = random.Random(capacity)
    words = [rng.getrandbits(WIDTH) for _ in range(300)]
    got, waited = [], [0]

    async def testbench(ctx):
        sent = 0
        for _ in range(3000):
            offer = sent < len(words) and rng.random() < 0.8
            ctx.set(dut.i.valid, offer)
            ctx.set(dut.i.payload, words[sent] if sent < len(words) else 0)
            take = rng.random() < 0.4
            ctx.set(dut.o.ready, take)
            if take and ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload))
            if offer:
                if ctx.get(dut.i.ready):
                    sent += 1
                else:
                    waited[0] += 1
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(testbench)
    sim.run()
    assert got == words and waited[0] > 50
