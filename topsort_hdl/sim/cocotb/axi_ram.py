"""cocotbext-axi memories with random pauses on every channel, and an AXI protocol monitor."""

import logging
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam

from ..axi_protocol import AXI_MASTER_OUTPUTS, AXI_MASTER_SIGNALS, SAMPLED, AxiProtocolChecker

__all__ = ["Pauses", "attach_ram", "quiet", "start_monitor"]


class Pauses:
    """Pause generators for cocotbext-axi channels whose probability can change mid-test."""

    def __init__(self, rng, probability=0.0):
        self.rng = rng
        self.probability = probability

    def generator(self):
        rng = random.Random(self.rng.random())
        while True:
            yield rng.random() < self.probability


def attach_ram(dut, prefix, pauses, mem=None, clock=None, reset=None, reset_active_level=True):
    """An ``AxiRam`` on the master whose signals are ``<prefix>_awaddr``..., sharing ``mem``
    (another ram's ``.mem``) when given, every channel paused by ``pauses``. ``clock`` and
    ``reset`` default to ``dut.clk`` and ``dut.rst``."""
    # 16 GB: len() of the default 2**64 overflows; addresses wrap modulo the size.
    ram = AxiRam(AxiBus.from_prefix(dut, prefix), dut.clk if clock is None else clock,
                 dut.rst if reset is None else reset, reset_active_level=reset_active_level,
                 size=1 << 34, mem=mem)
    for channel in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel,
                    ram.read_if.ar_channel, ram.read_if.r_channel):
        channel.set_pause_generator(pauses.generator())
    quiet(ram.write_if, ram.read_if)
    return ram


def quiet(*models):
    """Keep cocotbext-axi models to warnings: a line per burst costs time on big runs."""
    for model in models:
        model.log.setLevel(logging.WARNING)


def start_monitor(dut, prefix, data_width, max_outstanding=None, clock=None, reset=None,
                  reset_active_level=True):
    """Check every cycle of the master ``<prefix>_*`` with :class:`AxiProtocolChecker`, and
    that none of its outputs is ever X or Z; a cycle in ``reset`` (default ``dut.rst``) starts
    the checker afresh."""
    clock = dut.clk if clock is None else clock
    reset = dut.rst if reset is None else reset
    checker = AxiProtocolChecker(data_width, max_outstanding, name=prefix.rstrip("_"))
    port = {name: getattr(dut, f"{prefix}_{name}") for name in SAMPLED}
    handshakes = [(ch, port[f"{ch}valid"], port[f"{ch}ready"])
                  for ch in ("ar", "aw", "w", "r", "b")]
    # A channel's payload is read only in a cycle its VALID is high (the checker looks at it
    # only then); the memory's may be X otherwise (the models leave it undriven).
    payloads = {ch: [(name, port[name]) for name in names]
                for ch, names in {**AXI_MASTER_SIGNALS, "r": ("rlast", "rid"),
                                  "b": ("bid",)}.items()}
    idle = dict.fromkeys(SAMPLED, 0)

    async def monitor():
        while True:
            await RisingEdge(clock)
            await ReadOnly()
            if int(reset.value) == int(reset_active_level):
                checker.restart()
                continue
            sample = dict(idle)
            for ch, valid, ready in handshakes:
                sample[f"{ch}valid"] = int(valid.value)
                sample[f"{ch}ready"] = int(ready.value)
                if sample[f"{ch}valid"]:
                    for name, signal in payloads[ch]:
                        value = signal.value
                        if not value.is_resolvable:
                            checker.fail(f"{name} is X or Z while {ch}valid is high")
                        sample[name] = int(value)
            checker.sample(sample)

    # What the master drives is never X or Z, whatever its VALID says and in reset too: each
    # output is checked when the monitor starts and whenever it changes (a payload defined
    # only with VALID is legal AXI, but an undefined one is where an address latched from an
    # unevaluated multiplexer hides).
    async def defined(name, signal):
        await ReadOnly()
        while True:
            if not signal.value.is_resolvable:
                checker.undefined([name], int(reset.value) == int(reset_active_level))
            await signal.value_change
            await ReadOnly()

    for name in AXI_MASTER_OUTPUTS:
        if hasattr(dut, f"{prefix}_{name}"):
            cocotb.start_soon(defined(name, getattr(dut, f"{prefix}_{name}")))
    cocotb.start_soon(monitor())
    return checker
