"""cocotbext-axi memories with random pauses on every channel, and an AXI protocol monitor."""

import logging
import random

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge
from cocotbext.axi import AxiBus, AxiRam

from ..axi_protocol import SAMPLED, AxiProtocolChecker

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
    """Check every cycle of the master ``<prefix>_*`` with :class:`AxiProtocolChecker`; a
    cycle in ``reset`` (default ``dut.rst``) starts the checker afresh."""
    clock = dut.clk if clock is None else clock
    reset = dut.rst if reset is None else reset
    checker = AxiProtocolChecker(data_width, max_outstanding, name=prefix.rstrip("_"))
    signals = [(name, getattr(dut, f"{prefix}_{name}")) for name in SAMPLED]
    # A payload may be X while its VALID is low (the memory models leave theirs undriven);
    # never while VALID is high.
    channel_valid = {name: next((f"{ch}valid" for ch in ("ar", "aw", "w", "r", "b")
                                 if name.startswith(ch) and not name.endswith(("valid", "ready"))),
                                None) for name in SAMPLED}

    async def monitor():
        while True:
            await RisingEdge(clock)
            await ReadOnly()
            if int(reset.value) == int(reset_active_level):
                checker.restart()
                continue
            sample = {}
            for name, signal in signals:
                value = signal.value
                sample[name] = int(value) if value.is_resolvable else None
            for name, value in sample.items():
                if value is None:
                    valid = channel_valid[name]
                    if valid is None or sample[valid]:
                        checker.fail(f"{name} is X or Z" + (f" while {valid} is high"
                                                            if valid else ""))
                    sample[name] = 0
            checker.sample(sample)

    cocotb.start_soon(monitor())
    return checker
