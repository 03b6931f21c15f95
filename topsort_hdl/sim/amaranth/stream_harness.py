"""Drive and collect Amaranth streams in the Amaranth simulator, with gaps and backpressure."""

import random
from dataclasses import dataclass, field

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

__all__ = ["Job", "StreamRun", "run_jobs", "run_streams"]


@dataclass
class Job:
    """One job for :func:`run_jobs`: set ``settings``, send ``inputs``, collect ``outputs``.

    Members
    -------
    inputs : dict of name -> list of int
        Payload words to send on each input stream, in order.
    outputs : dict of name -> int
        Number of transfers to collect from each output stream.
    settings : dict of name -> int
        Plain input signals to set before the job starts (e.g. a mode).
    """

    inputs: dict
    outputs: dict
    settings: dict = field(default_factory=dict)


class StreamRun:
    """What one job saw.

    Members
    -------
    outputs : dict of name -> list of int
        Payloads collected on each output stream, in order.
    transfer_cycles : dict of name -> list of int
        Cycle of every transfer on each output stream.
    first_input_cycle : dict of name -> int
        Cycle of the first transfer on each input stream.
    sent : dict of name -> int
        Words taken from each input stream.
    cycles : int
        Cycles simulated up to the end of the job's drain.
    """

    def __init__(self, job):
        self.outputs = {name: [] for name in job.outputs}
        self.transfer_cycles = {name: [] for name in job.outputs}
        self.first_input_cycle = {}
        self.sent = {name: 0 for name in job.inputs}
        self.cycles = 0


def _port(dut, name):
    """The member called ``name`` on ``dut``: an attribute, or an element such as ``"i[3]"``."""
    if name.endswith("]"):
        array, index = name[:-1].split("[")
        return getattr(dut, array)[int(index)]
    return getattr(dut, name)


def run_jobs(dut, jobs, *, seed=0, gap=0.0, stall=0.0, max_cycles=None, drain_cycles=16,
             vcd=None):
    """Simulate ``dut`` through ``jobs`` in order, without reset between them.

    A job starts when the previous one has delivered all its outputs and drained. ``gap`` and
    ``stall`` are the probabilities that an input holds ``valid`` low / an output holds
    ``ready`` low in a given cycle. After a job's expected outputs, ``ready`` stays high for
    ``drain_cycles``; any further transfer, or an input word left untaken, fails the run with
    ``AssertionError``. A run still going after ``max_cycles`` (default: 50 per word sent or
    expected, plus 1000) raises ``TimeoutError``, so a design that hangs fails quickly.

    Returns a list of :class:`StreamRun`, one per job.
    """
    rng = random.Random(seed)
    if max_cycles is None:
        words = sum(len(w) for job in jobs for w in job.inputs.values())
        words += sum(n for job in jobs for n in job.outputs.values())
        max_cycles = 1000 + 50 * words
    results = [StreamRun(job) for job in jobs]
    state = {"cycle": 0, "job": -1}  # the job in progress, -1 before the first

    def progress():
        return "; ".join(f"{n}: {len(v)}" for r in results for n, v in r.outputs.items())

    async def clock_counter(ctx):
        # Runs in the background; also the watchdog that ends a simulation that hangs.
        while True:
            await ctx.tick()
            state["cycle"] += 1
            if state["cycle"] > max_cycles:
                raise TimeoutError(f"simulation did not finish in {max_cycles} cycles; "
                                   f"collected {progress()}")

    async def wait_for_job(ctx, index):
        while state["job"] < index:
            await ctx.tick()

    def producer(name):
        port = _port(dut, name)

        async def process(ctx):
            for index, (job, result) in enumerate(zip(jobs, results, strict=True)):
                await wait_for_job(ctx, index)
                for count, word in enumerate(job.inputs.get(name, [])):
                    while rng.random() < gap:
                        await ctx.tick()
                    ctx.set(port.valid, 1)
                    ctx.set(port.payload.as_value(), word)
                    await ctx.tick().until(port.ready)
                    if count == 0:
                        result.first_input_cycle[name] = state["cycle"] - 1
                    result.sent[name] = count + 1
                    ctx.set(port.valid, 0)
        return process

    def consumer(name):
        port = _port(dut, name)

        async def process(ctx):
            for index, (job, result) in enumerate(zip(jobs, results, strict=True)):
                await wait_for_job(ctx, index)
                count = job.outputs.get(name, 0)
                collected = result.outputs.setdefault(name, [])
                cycles = result.transfer_cycles.setdefault(name, [])
                while len(collected) < count:
                    ready = rng.random() >= stall
                    ctx.set(port.ready, ready)
                    _, _, valid, payload = await ctx.tick().sample(port.valid,
                                                                   port.payload.as_value())
                    if ready and valid:
                        collected.append(payload)
                        cycles.append(state["cycle"] - 1)
                ctx.set(port.ready, 1)
                for _ in range(drain_cycles):
                    _, _, valid = await ctx.tick().sample(port.valid)
                    if valid:
                        raise AssertionError(f"job {index}: {name} carried more than the "
                                             f"{count} expected transfers")
                ctx.set(port.ready, 0)
                done[index].add(name)
        return process

    async def controller(ctx):
        for index, (job, result) in enumerate(zip(jobs, results, strict=True)):
            for name, value in job.settings.items():
                ctx.set(_port(dut, name), value)
            state["job"] = index
            while done[index] != output_names:
                await ctx.tick()
            result.cycles = state["cycle"]
            for name, words in job.inputs.items():
                if result.sent[name] != len(words):
                    raise AssertionError(f"job {index}: {name} took {result.sent[name]} of "
                                         f"{len(words)} words")

    input_names = {name for job in jobs for name in job.inputs}
    output_names = {name for job in jobs for name in job.outputs}
    done = [set() for _ in jobs]
    # The wrapper's clock domain also serves a purely combinational design.
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_process(clock_counter)
    for name in sorted(input_names):
        simulator.add_testbench(producer(name), background=True)
    for name in sorted(output_names):
        simulator.add_testbench(consumer(name), background=True)
    simulator.add_testbench(controller)
    if vcd:
        with simulator.write_vcd(vcd):
            simulator.run()
    else:
        simulator.run()
    return results


def run_streams(dut, inputs, outputs, **kwargs):
    """Run one :class:`Job` (see :func:`run_jobs` for the options); return its StreamRun."""
    (result,) = run_jobs(dut, [Job(inputs, outputs)], **kwargs)
    return result
