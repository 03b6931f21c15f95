"""The proofs: each block at a small parameter set (and at the kernel's where time allows),
its environment, the mode that closes and its depth, and a broken variant it must catch."""

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.hdl import Elaboratable, Signal

from ..core.axi_params import AxiParams
from ..hardware.axi.reader import AxiReadEngine
from ..hardware.axi.writer import AxiWriteEngine
from ..hardware.merge.credit import CreditCounter
from ..hardware.merge.flims import FlimsMergeUnit
from ..hardware.merge.mms import MmsMergeUnit
from ..hardware.queue import RegisteredFlagsFIFO
from ..hardware.records import RecordLayout
from .harness import (
    Harness,
    any_input,
    any_ready,
    axi_read_memory,
    axi_write_memory,
    sorted_runs_input,
    stream_input,
)

__all__ = ["Proof", "PROOFS", "proofs_named"]


@dataclass(frozen=True)
class Proof:
    """``block()`` builds the block, ``broken()`` a variant with a fault the properties must
    catch; ``environment(m, block)`` drives its inputs. ``fast``: in the default test suite."""

    name: str
    about: str
    block: Callable[[], Elaboratable]
    broken: Callable[[], Elaboratable]
    environment: Callable
    mode: str
    depth: int
    fast: bool = True

    def design(self, *, broken=False):
        return Harness(self.broken() if broken else self.block(), self.environment)


def sabotaged(cls, sabotage):
    """A subclass of ``cls`` whose ``elaborate`` adds ``sabotage(block, m)`` last: in one
    module the last assignment to a signal wins, so it can override an output."""

    class Broken(cls):
        def elaborate(self, platform):
            m = super().elaborate(platform)
            sabotage(self, m)
            return m

    Broken.__name__ = Broken.__qualname__ = f"Broken{cls.__name__}"
    return Broken


def _queue_environment(m, queue):
    """A writer that writes only while ``w_rdy``; a reader that reads when it likes (only
    while ``r_rdy`` unless the queue is buffered)."""
    any_input(m, queue.w_data)
    write, read = Signal(), Signal()
    any_input(m, write, read)
    m.d.comb += [queue.w_en.eq(write & queue.w_rdy),
                 queue.r_en.eq(read if queue.buffered else read & queue.r_rdy)]


def _queue_proof(capacity, buffered, mode, depth):
    kind = "buffered" if buffered else "memory head"
    arguments = dict(width=4, capacity=capacity, buffered=buffered)
    # The fault: the write side always ready, so a full queue takes a write.
    broken = sabotaged(RegisteredFlagsFIFO, lambda q, m: m.d.comb.__iadd__(q.w_rdy.eq(1)))
    return Proof(f"queue-{'buffered' if buffered else 'plain'}-{capacity}",
                 f"RegisteredFlagsFIFO, {capacity} entries, {kind}",
                 lambda: RegisteredFlagsFIFO(**arguments), lambda: broken(**arguments),
                 _queue_environment, mode, depth)


def _credit_environment(m, credit):
    """A producer that promises only with room; a buffer from which only what was promised
    leaves."""
    add, sub = Signal(), Signal()
    any_input(m, add, sub)
    m.d.comb += [credit.add.eq(add & credit.room), credit.sub.eq(sub & (credit.level != 0))]


def _credit_proof(depth):
    # The fault: room always reported, so a full buffer is promised one more.
    broken = sabotaged(CreditCounter, lambda c, m: m.d.sync.__iadd__(c.room.eq(1)))
    return Proof(f"credit-{depth}", f"CreditCounter, depth {depth}",
                 lambda: CreditCounter(depth), lambda: broken(depth),
                 _credit_environment, "prove", 8)


def _merge_unit_environment(m, unit):
    sorted_runs_input(m, unit.a, "a")
    sorted_runs_input(m, unit.b, "b")
    any_ready(m, unit.o)


def _merge_unit_proof(cls, rate, depth):
    arguments = dict(record=RecordLayout(3, 2), rate=rate)
    # The fault: the output bundle's records leave in reverse order.
    def reverse(unit, m):
        queued = Signal(unit.bundle)
        m.d.comb += [queued.eq(m.submodules.o_fifo.r_data), unit.o.payload.last.eq(queued.last)]
        m.d.comb += [unit.o.payload.records[i].eq(queued.records[rate - 1 - i])
                     for i in range(rate)]
    return Proof(f"{cls.__name__.removesuffix('MergeUnit').lower()}-e{rate}",
                 f"{cls.__name__}, {rate} records of 3+2 bits a bundle",
                 lambda: cls(**arguments), lambda: sabotaged(cls, reverse)(**arguments),
                 _merge_unit_environment, "bmc", depth)


def _read_engine_environment(m, engine):
    """Commands of any region for any leaf, any burst size, leaves that take beats when they
    like, a memory that answers in order with gaps."""
    stream_input(m, engine.cmd, "cmd")
    any_input(m, engine.short_bursts)
    any_ready(m, *engine.leaf)
    axi_read_memory(m, engine.axi, engine.max_outstanding + 1)


def _read_engine_proof(depth):
    arguments = dict(params=AxiParams(data_width=32, addr_width=12, id_width=1), leaves=2,
                     burst_bytes=8, short_burst_bytes=4, max_outstanding=2, length_bits=5,
                     buffer_beats=2)

    class BrokenAxiReadEngine(AxiReadEngine):
        """The fault: its bursts are planned twice as long as ``burst_bytes``."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.burst_beats *= 2

    return Proof("read-engine-l2", "AxiReadEngine, 2 leaves, 2-beat bursts of 4 bytes",
                 lambda: AxiReadEngine(**arguments), lambda: BrokenAxiReadEngine(**arguments),
                 _read_engine_environment, "bmc", depth)


def _write_engine_environment(m, engine):
    """Jobs of any length at any bases, a stream of any beats with gaps, memories that take
    requests and beats when they like and answer each burst once."""
    stream_input(m, engine.cmd, "cmd")
    stream_input(m, engine.i, "i")
    for axi in engine.axi:
        axi_write_memory(m, axi, engine.max_outstanding + 1)


def _write_engine_proof(ports, slots, depth, fast):
    arguments = dict(params=AxiParams(data_width=32, addr_width=12), ports=ports, slots=slots,
                     burst_bytes=8, batch_bytes=8 * ports, max_outstanding=2, length_bits=5)
    if ports == 1:
        # The fault: full strobes on every beat, so a job's last beat writes past its bytes.
        fault = lambda e, m: m.d.comb.__iadd__(e.axi[0].wstrb.eq(-1))  # noqa: E731
    else:
        # The fault: WLAST on every beat, so bursts end before their AWLEN says.
        fault = lambda e, m: m.d.comb.__iadd__(e.axi[ports - 1].wlast.eq(1))  # noqa: E731
    broken = sabotaged(AxiWriteEngine, fault)
    return Proof(f"write-engine-p{ports}s{slots}" + ("" if fast else f"-d{depth}"),
                 f"AxiWriteEngine, {ports} port(s), {slots} slot(s), 2-beat bursts of 4 bytes",
                 lambda: AxiWriteEngine(**arguments), lambda: broken(**arguments),
                 _write_engine_environment, "bmc", depth, fast)


PROOFS = [
    _queue_proof(1, True, "prove", 8),
    _queue_proof(4, True, "prove", 12),
    _queue_proof(4, False, "prove", 12),
    _queue_proof(5, False, "prove", 12),
    _credit_proof(2),
    _credit_proof(5),
    _merge_unit_proof(MmsMergeUnit, 2, 14),
    _merge_unit_proof(FlimsMergeUnit, 2, 10),
    _read_engine_proof(16),
    _write_engine_proof(1, 1, 12, True),
    _write_engine_proof(1, 1, 15, False),
    _write_engine_proof(2, 2, 11, True),
]


def proofs_named(names):
    """The proofs whose names start with any of ``names`` (every proof for none)."""
    chosen = [p for p in PROOFS if not names or any(p.name.startswith(n) for n in names)]
    unknown = [n for n in names if not any(p.name.startswith(n) for p in PROOFS)]
    if unknown:
        raise ValueError(f"no proof named {', '.join(unknown)}; the proofs: "
                         + ", ".join(p.name for p in PROOFS))
    return chosen
