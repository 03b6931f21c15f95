"""Drive and collect Amaranth streams in the Amaranth simulator, with gaps and backpressure."""

import random

from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

__all__ = ["StreamRun", "run_streams"]


class StreamRun:
    """What a :func:`run_streams` call saw.

    Members
    -------
    outputs : dict of name -> list of int
        Payloads collected on each output stream, in order.
    cycles : int
        Clock cycles simulated.
    first_input_cycle : dict of name -> int
        Cycle of the first transfer on each input stream.
    transfer_cycles : dict of name -> list of int
        Cycle of every transfer on each output stream.
    """

    def __init__(self):
        self.outputs = {}
        self.cycles = 0
        self.first_input_cycle = {}
        self.transfer_cycles = {}
        self.sent = {}


def _port(dut, name):
    """The stream called ``name`` on ``dut``: an attribute, or an element such as ``"i[3]"``."""
    if name.endswith("]"):
        array, index = name[:-1].split("[")
        return getattr(dut, array)[int(index)]
    return getattr(dut, name)


def run_streams(dut, inputs, outputs, *, seed=0, gap=0.0, stall=0.0, max_cycles=100_000,
                drain_cycles=16, vcd=None):
    """Simulate ``dut``: feed each input stream its words, collect a count from each output.

    Parameters
    ----------
    dut : wiring.Component
        The design; streams are looked up by name: ``"o"``, or ``"i[3]"`` for an array.
    inputs : dict of name -> list of int
        Payload words to send on each input stream, in order.
    outputs : dict of name -> int
        Number of transfers to collect from each output stream.
    gap, stall : float
        Probability that an input holds ``valid`` low / an output holds ``ready`` low in a
        given cycle.
    max_cycles : int
        The run fails with ``TimeoutError`` if it has not finished by then.
    drain_cycles : int
        After the expected outputs, ``ready`` stays high this long; any further transfer, or an
        input word left untaken, fails the run with ``AssertionError``.
    """
    rng = random.Random(seed)
    result = StreamRun()
    cycle = [0]

    async def clock_counter(ctx):
        # Runs in the background; also the watchdog that ends a simulation that hangs.
        while True:
            await ctx.tick()
            cycle[0] += 1
            if cycle[0] > max_cycles:
                raise TimeoutError(
                    f"simulation did not finish in {max_cycles} cycles; collected "
                    + ", ".join(f"{n}: {len(v)}" for n, v in result.outputs.items()))

    def producer(name, words):
        port = _port(dut, name)

        async def process(ctx):
            for index, word in enumerate(words):
                while rng.random() < gap:
                    await ctx.tick()
                ctx.set(port.valid, 1)
                ctx.set(port.payload.as_value(), word)
                await ctx.tick().until(port.ready)
                if index == 0:
                    result.first_input_cycle[name] = cycle[0] - 1
                result.sent[name] = index + 1
                ctx.set(port.valid, 0)
        return process

    def consumer(name, count):
        port = _port(dut, name)
        collected = result.outputs[name] = []
        cycles = result.transfer_cycles[name] = []

        async def process(ctx):
            while len(collected) < count:
                ready = rng.random() >= stall
                ctx.set(port.ready, ready)
                _, _, valid, payload = await ctx.tick().sample(port.valid,
                                                               port.payload.as_value())
                if ready and valid:
                    collected.append(payload)
                    cycles.append(cycle[0] - 1)
            ctx.set(port.ready, 1)
            for _ in range(drain_cycles):
                _, _, valid = await ctx.tick().sample(port.valid)
                if valid:
                    raise AssertionError(f"{name} carried more than the {count} expected "
                                         "transfers")
            ctx.set(port.ready, 0)
        return process

    # The wrapper's clock domain also serves a purely combinational design.
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_process(clock_counter)
    for name, words in inputs.items():
        simulator.add_testbench(producer(name, words), background=True)
    for name, count in outputs.items():
        simulator.add_testbench(consumer(name, count))

    if vcd:
        with simulator.write_vcd(vcd):
            simulator.run()
    else:
        simulator.run()
    result.cycles = cycle[0]
    for name, words in inputs.items():
        if result.sent.get(name, 0) != len(words):
            raise AssertionError(f"{name} took {result.sent.get(name, 0)} of {len(words)} words")
    return result
