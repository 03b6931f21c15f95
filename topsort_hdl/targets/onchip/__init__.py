"""The on-chip demo: the kernel on block RAM with a built-in self test, for open-tool boards."""

from .demo import DEMO_CONFIG, LEDS, OnChipSorter, demo_jobs
from .jobs import BistJob
from .memory import BackdoorSignature, OnChipAxiRam
from .selftest import SelfTest
from .uart import UartTx

__all__ = ["OnChipSorter", "DEMO_CONFIG", "LEDS", "demo_jobs", "OnChipAxiRam",
           "BackdoorSignature", "BistJob", "SelfTest", "UartTx"]
