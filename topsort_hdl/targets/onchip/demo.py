"""The on-chip demo sorter: the two-phase kernel on block RAM, run and checked by the self test."""

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ...core.config import PRESETS
from ...hardware.kernel.kernel import TopSortKernel
from ...hardware.records import check_at_least
from .jobs import BistJob
from .memory import OnChipAxiRam
from .selftest import SelfTest
from .uart import UartTx

__all__ = ["OnChipSorter", "demo_jobs", "DEMO_CONFIG", "LEDS"]

DEMO_CONFIG = PRESETS["demo"]
DEMO_PORT_STAGES = 1
# What each LED shows, from LED 0 up.
LEDS = ("passed", "failed", "heartbeat (round counter bit 4)", "kernel running",
        "error: status", "error: order", "error: checksum", "error: stray access")


def demo_jobs(config):
    """The self test's default round: a full memory of random keys, then counts that are not
    powers of two with many equal keys, keys at 0 and at all-ones, one record, none."""
    capacity = config.capacity
    return (
        BistJob(capacity),
        BistJob(capacity // 2 + 1, key_mask=0x3),                  # keys 0..3
        BistJob(capacity // 3, key_mask=0x1, key_set=0xFFFF_FFFE),  # top two keys
        BistJob(7, key_mask=0x8000_0001),
        BistJob(1),
        BistJob(0),
    )


class OnChipSorter(wiring.Component):
    """The :class:`TopSortKernel` for ``config`` with each tree's two channels in an
    :class:`OnChipAxiRam`, a :class:`SelfTest` running ``jobs`` through it and a UART
    reporting, ``baud_divisor`` clock cycles per bit.

    Members
    -------
    tx : Out(1)
    leds : Out(8)
        See :data:`LEDS`.
    rounds : Out(16)

    ``rams[t]`` is tree t's memory (its two channels), ``selftest`` the self test.
    """

    def __init__(self, config=DEMO_CONFIG, jobs=None, *, inject=None, baud_divisor=217):
        check_at_least("baud_divisor", baud_divisor, 2)
        self.config = config
        # One register stage on each tree's port: the block RAMs sit across the device from
        # the engines, and without it the AXI handshakes ran through both (the write engines'
        # burst logic into the memories' address checks, their responses into the engines'
        # buffer counts), the demo's deepest paths after the self test's.
        self.kernel = TopSortKernel(config, port_stages=(DEMO_PORT_STAGES,) * config.trees)
        self.selftest = SelfTest(config, self.kernel.register_map,
                                 demo_jobs(config) if jobs is None else jobs, inject=inject)
        self.rams = [OnChipAxiRam(config.axi, 2 * config.channel_bytes,
                                  base=2 * t * config.channel_bytes)
                     for t in range(config.trees)]
        self.baud_divisor = baud_divisor
        super().__init__({"tx": Out(1, init=1), "leds": Out(len(LEDS)), "rounds": Out(16)})

    def elaborate(self, platform):
        m = Module()
        c = self.config
        kernel = m.submodules.kernel = self.kernel
        test = m.submodules.selftest = self.selftest
        uart = m.submodules.uart = UartTx(self.baud_divisor)
        wiring.connect(m, test.control, kernel.control)
        wiring.connect(m, test.text, uart.i)
        stray = Signal()
        for t in range(c.trees):
            ram = m.submodules[f"ram{t}"] = self.rams[t]
            wiring.connect(m, kernel.m_axi[t], ram.axi)
            wiring.connect(m, test.memory[t], ram.backdoor)
            stray = stray | ram.stray
        # (registered: the memories' flags are sticky, and the self test reads them a job later)
        stray_seen = Signal()
        m.d.sync += stray_seen.eq(stray)
        m.d.comb += [
            test.stray.eq(stray_seen),
            self.tx.eq(uart.tx),
            self.rounds.eq(test.rounds),
            self.leds.eq(Cat(test.passed, test.failed, test.rounds[4], test.running,
                             test.errors)),
        ]
        return m
