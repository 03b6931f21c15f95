"""Run the AXI engines in the Amaranth simulator against :class:`AxiMemory`."""

import random

from amaranth.sim import Simulator

from ...core.golden import read_bursts
from .axi_memory import AxiMemory, SparseMemory

__all__ = ["ReadRun", "WriteRun", "run_reader", "run_writer"]


class ReadRun:
    """What a read-engine simulation delivered.

    Attributes
    ----------
    regions : dict of leaf -> list of bytes
        The bytes each leaf received, one entry per region ended by ``last``.
    cycles : int
        Cycles from the first command to the last beat taken by a leaf.
    first_ar, busy_cycles : int
        Cycle of the first read address; cycles from it to the last beat.
    memory : AxiMemory
    error : int
        The engine's ``error`` output at the end.
    """

    def __init__(self, leaves):
        self.regions = {leaf: [] for leaf in range(leaves)}
        self.cycles = 0
        self.beats = 0
        self.memory = None
        self.error = 0


def run_reader(engine, commands, *, memory=None, seed=0, stall=0.0, leaf_stall=0.0,
               short=False, short_flips=0.0, max_cycles=None, rejected=(), sort_beats=False,
               **memory_options):
    """Send ``commands`` ((leaf, addr, bytes) in order) to an :class:`AxiReadEngine` and collect
    every leaf's beats; ``memory_options`` go to :class:`AxiMemory` (``latency``,
    ``reorder``...). ``stall`` is the memory's stall probability, ``leaf_stall`` the chance a
    leaf holds ``ready`` low in a cycle; ``short`` drives the engine's ``short``, which flips
    with probability ``short_flips`` every cycle (bursts then mix both lengths). Checks the
    AXI protocol throughout and that engine and port are idle at the end. Commands whose
    indices are in ``rejected`` are expected to be refused by the engine and to deliver
    nothing. ``sort_beats`` drives an engine with ``presort``'s input of that name."""
    rng = random.Random(seed)
    memory = memory if memory is not None else SparseMemory()
    expected = {leaf: sum(1 for k, c in enumerate(commands)
                          if c[0] == leaf and c[2] and k not in rejected)
                for leaf in range(engine.leaves)}
    if max_cycles is None:
        beat, latency = engine.params.beat_bytes, memory_options.get("latency", 2)
        bursts = [b for _, a, n in commands for b in read_bursts(a, n, beat, engine.burst_bytes)]
        max_cycles = 2000 + sum(60 * n + 4 * latency for _, n in bursts)
    run = ReadRun(engine.leaves)
    port = AxiMemory(engine.axi, engine.params.data_width, memory=memory, stall=stall,
                     seed=seed + 1, **memory_options)
    port.checker.max_outstanding = engine.max_outstanding
    run.memory = port
    state = {"cycle": 0, "finished": set(), "last_beat": 0}
    layout = engine.beat_layout

    async def clock(ctx):
        while True:
            await ctx.tick()
            state["cycle"] += 1
            if state["cycle"] > max_cycles:
                got = {leaf: len(r) for leaf, r in run.regions.items()}
                raise TimeoutError(f"read engine did not finish in {max_cycles} cycles; "
                                   f"regions per leaf {got} of {expected}")

    async def commander(ctx):
        cmd = engine.cmd
        ctx.set(engine.short_bursts, short)
        if engine.presort is not None:
            ctx.set(engine.sort_beats, sort_beats)
        for leaf, addr, length in commands:
            ctx.set(cmd.payload.target, leaf)
            ctx.set(cmd.payload.addr, addr)
            ctx.set(cmd.payload.bytes, length)
            ctx.set(cmd.valid, 1)
            await ctx.tick().until(cmd.ready)
            ctx.set(cmd.valid, 0)

    async def flipper(ctx):
        value = short
        while True:
            await ctx.tick()
            if rng.random() < short_flips:
                value = not value
                ctx.set(engine.short_bursts, value)

    async def consumers(ctx):
        # One process for every leaf: a process per leaf costs more than the design itself.
        leaves = range(engine.leaves)
        current = [bytearray() for _ in leaves]
        signals = [s for leaf in leaves for s in (engine.leaf[leaf].valid,
                                                  engine.leaf[leaf].payload.as_value())]
        while any(len(run.regions[leaf]) < expected[leaf] for leaf in leaves):
            ready = [len(run.regions[leaf]) < expected[leaf] and rng.random() >= leaf_stall
                     for leaf in leaves]
            for leaf in leaves:
                ctx.set(engine.leaf[leaf].ready, ready[leaf])
            sampled = (await ctx.tick().sample(*signals))[2:]
            for leaf in leaves:
                if ready[leaf] and sampled[2 * leaf]:
                    word, begin, end, last = layout.unpack(sampled[2 * leaf + 1])
                    current[leaf] += word.to_bytes(engine.params.beat_bytes,
                                                   "little")[begin:end]
                    run.beats += 1
                    state["last_beat"] = state["cycle"]
                    if last:
                        run.regions[leaf].append(bytes(current[leaf]))
                        current[leaf] = bytearray()
        for leaf in leaves:
            ctx.set(engine.leaf[leaf].ready, 1)
        state["finished"].update(leaves)

    async def supervisor(ctx):
        while len(state["finished"]) < engine.leaves:
            await ctx.tick()
        for _ in range(20):   # nothing more may arrive
            _, _, *valids = await ctx.tick().sample(*(s.valid for s in engine.leaf))
            if any(valids):
                raise AssertionError("a leaf received a beat beyond its regions")
        run.cycles = state["last_beat"]
        run.error = ctx.get(engine.error)
        if not ctx.get(engine.idle):
            raise AssertionError("read engine not idle after delivering every region")
        port.checker.idle()

    simulator = Simulator(engine)
    simulator.add_clock(1e-8)
    simulator.add_process(clock)
    port.add_to(simulator)
    simulator.add_testbench(commander, background=True)
    simulator.add_testbench(consumers, background=True)
    if short_flips:
        simulator.add_testbench(flipper, background=True)
    simulator.add_testbench(supervisor)
    simulator.run()
    return run


class WriteRun:
    """What a write-engine simulation did.

    Attributes
    ----------
    cycles : list of int
        Per job, cycles from its command to its ``done`` pulse.
    errors : list of int
        Per job, the engine's ``error`` output at ``done``.
    memories : list of AxiMemory
        One per port.
    """

    def __init__(self):
        self.cycles = []
        self.errors = []
        self.memories = []


def run_writer(engine, jobs, *, memory=None, seed=0, stall=0.0, gap=0.0, max_cycles=None,
               **memory_options):
    """Write ``jobs`` ((bases, payload bytes) in order, back to back without reset) through an
    :class:`AxiWriteEngine`; all ports share one :class:`SparseMemory`. ``gap`` is the chance
    the stream holds ``valid`` low in a cycle, ``stall`` the memory's stall probability.
    Checks the AXI protocol on every port and that ``done`` comes once per job, with every
    port idle."""
    rng = random.Random(seed)
    memory = memory if memory is not None else SparseMemory()
    ports, beat = engine.ports, engine.params.beat_bytes
    step = ports * beat
    if max_cycles is None:
        total = sum(len(payload) for _, payload in jobs) // beat + len(jobs)
        max_cycles = 2000 + 60 * total + 40 * memory_options.get("latency", 2) * len(jobs)
    run = WriteRun()
    for j in range(ports):
        port = AxiMemory(engine.axi[j], engine.params.data_width, memory=memory, stall=stall,
                         seed=seed + 1 + j, name=f"axi[{j}]", **memory_options)
        port.checker.max_outstanding = engine.max_outstanding
        run.memories.append(port)
    state = {"cycle": 0}

    async def clock(ctx):
        while True:
            await ctx.tick()
            state["cycle"] += 1
            if state["cycle"] > max_cycles:
                raise TimeoutError(f"write engine did not finish in {max_cycles} cycles; "
                                   f"{len(run.cycles)} of {len(jobs)} jobs done")

    async def driver(ctx):
        for bases, payload in jobs:
            start = state["cycle"]
            ctx.set(engine.cmd.payload.bytes, len(payload))
            for j, base in enumerate(bases):
                ctx.set(engine.cmd.payload.addr[j], base)
            ctx.set(engine.cmd.valid, 1)
            await ctx.tick().until(engine.cmd.ready)
            ctx.set(engine.cmd.valid, 0)
            sent = 0
            done = False
            while not done:
                offer = sent < len(payload) and rng.random() >= gap
                if offer:
                    chunk = payload[sent:sent + step].ljust(step, b"\0")
                    ctx.set(engine.i.payload.as_value(), int.from_bytes(chunk, "little"))
                ctx.set(engine.i.valid, offer)
                _, _, ready, done = await ctx.tick().sample(engine.i.ready, engine.done)
                if offer and ready:
                    sent += step
                if done and sent < len(payload):
                    raise AssertionError("done before the job's stream was all taken")
            ctx.set(engine.i.valid, 0)
            run.cycles.append(state["cycle"] - start)
            run.errors.append(ctx.get(engine.error))
            for port in run.memories:
                port.checker.idle()
        for _ in range(20):   # no second done, no stray traffic
            _, _, done = await ctx.tick().sample(engine.done)
            if done:
                raise AssertionError("done pulsed again after the last job")
        for port in run.memories:
            port.checker.idle()

    simulator = Simulator(engine)
    simulator.add_clock(1e-8)
    simulator.add_process(clock)
    for port in run.memories:
        port.add_to(simulator)
    simulator.add_testbench(driver)
    simulator.run()
    return run
