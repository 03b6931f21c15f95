"""A block's environment in a proof: reset in the first cycle only, inputs free within the
rules the block may rely on."""

from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assume, Elaboratable, Module, ResetSignal, Value

from ..hardware.properties import runs_sorted, stream_rules

__all__ = ["Harness", "any_input", "stream_input", "sorted_runs_input", "any_ready"]


class Harness(Elaboratable):
    """``block`` with reset held in the first cycle and released for good, and the inputs
    ``environment(m, block)`` drives. Registers start undefined in a proof (the runner drops
    initial values), so whatever the block's properties read must come from reset."""

    def __init__(self, block, environment):
        self.block = block
        self.environment = environment

    def elaborate(self, platform):
        m = Module()
        m.submodules.block = self.block
        m.d.comb += Assume(ResetSignal() == Initial())
        self.environment(m, self.block)
        return m


def any_input(m, *signals):
    """Each of ``signals`` takes any value in every cycle."""
    for signal in signals:
        signal = Value.cast(signal)
        m.d.comb += signal.eq(AnySeq(len(signal)))


def stream_input(m, port, name):
    """A ``lib.stream`` input with any payload, offered when it likes and held until taken."""
    any_input(m, port.valid, port.payload)
    stream_rules(m, port, name, kind=Assume)


def sorted_runs_input(m, port, name):
    """A :func:`stream_input` of bundles that carries sorted runs."""
    stream_input(m, port, name)
    runs_sorted(m, port, name, kind=Assume)


def any_ready(m, *ports):
    """Each output stream's receiver is ready when it likes (any backpressure)."""
    any_input(m, *(port.ready for port in ports))
