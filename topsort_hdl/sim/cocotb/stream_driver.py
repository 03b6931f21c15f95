"""Drive and check Amaranth streams (``<name>__valid/ready/payload``) from cocotb.

One coroutine steps every stream of the design each cycle, which keeps per-cycle Python cost
low. Inputs are driven right after the clock edge; handshakes are judged in the read-only
phase, after the design has settled, so a ``ready`` that depends on ``valid`` is seen right.
"""

import random

from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

__all__ = ["StreamResult", "reset", "run_streams"]


async def reset(dut, cycles=3):
    """Start the clock on ``dut.clk`` and hold ``dut.rst`` for ``cycles`` cycles."""
    Clock(dut.clk, 10, unit="ns").start()
    dut.rst.value = 1
    await ClockCycles(dut.clk, cycles)
    dut.rst.value = 0


class StreamResult:
    """Payloads collected per output stream, and the cycle of every transfer."""

    def __init__(self, outputs):
        self.outputs = {name: [] for name in outputs}
        self.cycles = {name: [] for name in outputs}
        self.first_input_cycle = None


async def run_streams(dut, inputs, outputs, *, rng=None, gap=0.0, stall=0.0,
                      max_cycles=None, drain_cycles=16):
    """Send ``inputs`` (name -> words) and collect ``outputs`` (name -> count) transfers.

    ``gap`` is the chance that an idle input does not offer its next word in a cycle;
    ``stall`` the chance that an output holds ``ready`` low in a cycle. Raises
    ``TimeoutError`` after ``max_cycles`` (default: 50 per word sent or expected, plus 1000).
    Once every expected output has arrived, watches ``drain_cycles`` more cycles with
    ``ready`` high and fails if anything else comes out.
    """
    rng = rng or random.Random(0)
    if max_cycles is None:  # generous, but a design that hangs fails in seconds, not hours
        max_cycles = 1000 + 50 * (sum(map(len, inputs.values())) + sum(outputs.values()))
    pending = {name: list(reversed(words)) for name, words in inputs.items()}
    offered = {name: False for name in inputs}  # valid held up, waiting for ready
    result = StreamResult(outputs)
    ports = {name: (getattr(dut, f"{name}__valid"), getattr(dut, f"{name}__ready"),
                    getattr(dut, f"{name}__payload")) for name in list(inputs) + list(outputs)}
    for name in inputs:
        ports[name][0].value = 0
    finished_at = None  # cycle on which every expected output had arrived
    for cycle in range(max_cycles):
        await RisingEdge(dut.clk)
        for name in inputs:
            valid, _, payload = ports[name]
            if not offered[name]:
                if pending[name] and rng.random() >= gap:
                    payload.value = pending[name].pop()
                    offered[name] = True
                valid.value = int(offered[name])
        ready_now = {}
        for name in outputs:
            ready_now[name] = finished_at is not None or rng.random() >= stall
            ports[name][1].value = int(ready_now[name])
        await ReadOnly()
        for name in inputs:
            valid, ready, _ = ports[name]
            if offered[name] and int(ready.value):
                offered[name] = False  # transfers at the coming edge
                if result.first_input_cycle is None:
                    result.first_input_cycle = cycle
        for name in outputs:
            valid, _, payload = ports[name]
            if ready_now[name] and int(valid.value):
                result.outputs[name].append(payload.value.to_unsigned())
                result.cycles[name].append(cycle)
        extra = {n: len(result.outputs[n]) - c for n, c in outputs.items()}
        if any(count > 0 for count in extra.values()):
            raise AssertionError("an output stream carried more transfers than expected: "
                                 + ", ".join(f"{n}: {len(result.outputs[n])}" for n in outputs))
        if finished_at is None and not any(extra.values()):
            finished_at = cycle
        if finished_at is not None and cycle - finished_at >= drain_cycles:
            # Nothing more came out while ready stayed high: leave the ports idle.
            await RisingEdge(dut.clk)
            for name in list(inputs) + list(outputs):
                ports[name][0 if name in inputs else 1].value = 0
            if any(pending.values()) or any(offered.values()):
                raise AssertionError("the design produced every output before taking every "
                                     "input")
            return result
    raise TimeoutError(f"streams did not finish in {max_cycles} cycles: collected "
                       + ", ".join(f"{n}: {len(result.outputs[n])}" for n in outputs))
