"""The proofs: each block at a small parameter set (and at the kernel's where time allows),
its environment, the mode that closes and its depth, and a broken variant it must catch."""

from collections.abc import Callable
from dataclasses import dataclass

from amaranth.asserts import AnyConst
from amaranth.hdl import Assume, Cat, Elaboratable, Signal

from ..core.axi_params import AXI4_CHANNELS, AxiParams
from ..core.config import config_from
from ..core.contract import kernel_arguments, kernel_counters
from ..core.register_map import RegisterMap
from ..hardware.axi.control import ControlRegisters
from ..hardware.axi.reader import AxiReadEngine
from ..hardware.axi.register_slice import AxiRegisterSlice
from ..hardware.axi.writer import AxiWriteEngine
from ..hardware.kernel.controller import ControllerShape, TreeController
from ..hardware.kernel.job import JobController
from ..hardware.merge.credit import CreditCounter
from ..hardware.merge.flims import FlimsMergeUnit
from ..hardware.merge.mms import MmsMergeUnit
from ..hardware.properties import check
from ..hardware.queue import RegisteredFlagsFIFO, SkidBuffer
from ..hardware.records import RecordLayout
from ..hardware.tree.reuse import ReuseSwitch
from .harness import (
    Harness,
    any_input,
    any_ready,
    axi_read_memory,
    axi_write_memory,
    channel_input,
    sorted_runs_input,
    stream_input,
)

__all__ = ["Proof", "PROOFS", "proofs_named"]


@dataclass(frozen=True)
class Proof:
    """``block()`` builds the block, ``broken()`` a variant with a fault the properties must
    catch (``also_broken``: more such variants, for properties the first fault does not
    reach); ``environment(m, block)`` drives its inputs. ``fast``: in the default test suite,
    there to ``quick_depth`` cycles when that is given (the broken variant is caught by then),
    to ``depth`` in ``make formal``."""

    name: str
    about: str
    block: Callable[[], Elaboratable]
    broken: Callable[[], Elaboratable]
    environment: Callable
    mode: str
    depth: int
    fast: bool = True
    quick_depth: int | None = None
    also_broken: tuple = ()

    @property
    def suite_depth(self):
        """The depth the default test suite proves."""
        return self.quick_depth or self.depth

    @property
    def broken_variants(self):
        """``(name, build)`` of each broken variant: ``<name>-broken``, ``-broken2``, ..."""
        builds = (self.broken, *self.also_broken)
        return [(f"{self.name}-broken{index if index > 1 else ''}", build)
                for index, build in enumerate(builds, 1)]

    def design(self, build=None):
        """The harness around the block, or around ``build()`` (a broken variant's)."""
        return Harness((build or self.block)(), self.environment)


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
    """A writer that offers entries when it likes (to a credited queue only with room); a
    reader that takes when it likes."""
    any_input(m, queue.i.payload)
    offer, take = Signal(), Signal()
    any_input(m, offer, take)
    m.d.comb += [queue.i.valid.eq(offer & queue.i.ready if queue.credited else offer),
                 queue.o.ready.eq(take)]


def _queue_proof(capacity, buffered, mode, depth):
    kind = "buffered" if buffered else "memory head"
    arguments = dict(shape=4, capacity=capacity, buffered=buffered)
    # The fault: the write side always ready, so a full queue seems to take a write.
    broken = sabotaged(RegisteredFlagsFIFO, lambda q, m: m.d.comb.__iadd__(q.i.ready.eq(1)))
    return Proof(f"queue-{'buffered' if buffered else 'plain'}-{capacity}",
                 f"RegisteredFlagsFIFO, {capacity} entries, {kind}",
                 lambda: RegisteredFlagsFIFO(**arguments), lambda: broken(**arguments),
                 _queue_environment, mode, depth)


def _skid_environment(m, queue):
    """A writer that offers entries when it likes; a reader that takes when it likes."""
    any_input(m, queue.i.payload, queue.i.valid, queue.o.ready)


def _skid_proof():
    # The fault: the second entry's flag never rises, so a write behind a busy head is lost.
    broken = sabotaged(SkidBuffer, lambda q, m: m.d.comb.__iadd__(q.i.ready.eq(1)))
    # (its head one-hot, as the tree controller's feeder queue has it: the conversion proven too)
    arguments = (2, 4, lambda entry: Cat(entry == k for k in range(4)))
    return Proof("skid-buffer", "SkidBuffer, two entries in registers, a one-hot head",
                 lambda: SkidBuffer(*arguments), lambda: broken(*arguments),
                 _skid_environment, "prove", 8)


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
        m.d.comb += [queued.eq(m.submodules.o_fifo.o.payload),
                     unit.o.payload.last.eq(queued.last)]
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


def _read_engine_proof(depth, quick_depth):
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
                 _read_engine_environment, "bmc", depth, quick_depth=quick_depth)


def _write_engine_environment(m, engine):
    """Jobs of any length at any bases, a stream of any beats with gaps, memories that take
    requests and beats when they like and answer each burst once."""
    stream_input(m, engine.cmd, "cmd")
    stream_input(m, engine.i, "i")
    for axi in engine.axi:
        axi_write_memory(m, axi, engine.max_outstanding + 1)


def _write_engine_proof(ports, slots, depth, quick_depth, fast=True):
    arguments = dict(params=AxiParams(data_width=32, addr_width=12), ports=ports, slots=slots,
                     burst_bytes=8, batch_bytes=8 * ports, max_outstanding=2, length_bits=5)
    if ports == 1:
        # The fault: full strobes on every beat, so a job's last beat writes past its bytes.
        fault = lambda e, m: m.d.comb.__iadd__(e.axi[0].wstrb.eq(-1))  # noqa: E731
    else:
        # The fault: WLAST on every beat, so bursts end before their AWLEN says.
        fault = lambda e, m: m.d.comb.__iadd__(e.axi[0].wlast.eq(1))  # noqa: E731
    broken = sabotaged(AxiWriteEngine, fault)
    return Proof(f"write-engine-p{ports}s{slots}",
                 f"AxiWriteEngine, {ports} port(s), {slots} slot(s), 2-beat bursts of 4 bytes",
                 lambda: AxiWriteEngine(**arguments), lambda: broken(**arguments),
                 _write_engine_environment, "bmc", depth, fast, quick_depth)


def _controller_environment(m, control):
    """Jobs of up to 12 records started while none runs (as the kernel does), steady halves
    anywhere in the lower half of the address space (the kernel's argument checks keep them
    inside it), consumers that take every command at once, a write engine whose done comes
    any time after a write command."""
    start, started = Signal(), Signal()
    any_input(m, start, control.records)
    m.d.comb += control.start.eq(start & (~started | control.done))
    with m.If(control.start):
        m.d.sync += started.eq(1)
    m.d.comb += control.halves.eq(AnyConst(len(control.halves.as_value())))
    check(m, control.records <= 12, "at most 12 records", kind=Assume)
    for half in control.halves:
        check(m, ~half[-1], "halves in the lower half of the address space", kind=Assume)
    # (consumers always ready: the accounting does not depend on when a command is taken,
    # and every free input doubles the solver's work per cycle)
    m.d.comb += [port.ready.eq(1) for port in (control.reader_cmd, control.packer_cmd,
                                               control.writer_cmd, *control.feeder_cmd)]
    done = Signal()
    any_input(m, done)
    pending = Signal(3)
    m.d.sync += pending.eq(pending + (control.writer_cmd.valid & control.writer_cmd.ready) -
                           control.writer_done)
    m.d.comb += control.writer_done.eq(done & (pending != 0))


def _controller_proof(depth, quick_depth):
    shape = ControllerShape(AxiParams(data_width=64, addr_width=16), length_bits=16, rate=2,
                            leaves=2, runs_per_tree=2, group=1, presort=0, record_bytes=8)
    # The fault: every pass writes to half 0, the one the first pass reads.
    broken = sabotaged(TreeController, lambda c, m: m.d.comb.__iadd__(
        c.writer_cmd.payload.addr[0].eq(c.halves[0])))
    return Proof("tree-controller-l2", "TreeController (phase 1), 2 leaves, F = 2, rate 2",
                 lambda: TreeController(shape), lambda: broken(shape),
                 _controller_environment, "bmc", depth, quick_depth=quick_depth)


def _slice_environment(m, slice_):
    """A master and a subordinate that keep the channels' rules and take transfers when they
    like, but for the channels meant to be always ready, whose receivers are."""
    for ch, (fields, forward) in AXI4_CHANNELS.items():
        sender, receiver = (slice_.s, slice_.m) if forward else (slice_.m, slice_.s)
        payload = Cat(getattr(sender, ch + f) for f in fields)
        channel_input(m, getattr(sender, f"{ch}valid"), getattr(sender, f"{ch}ready"),
                      payload, f"{ch}_in")
        ready = getattr(receiver, f"{ch}ready")
        if ch in slice_.always_ready:
            m.d.comb += ready.eq(1)
        else:
            any_input(m, ready)


def _slice_proof(stages, depth, quick_depth, fast=True):
    arguments = dict(params=AxiParams(data_width=32, addr_width=12), stages=stages,
                     always_ready=("r", "b"))
    # The fault: the W channel's FIFO ignores its receiver, so what it takes is offered
    # again.
    broken = sabotaged(AxiRegisterSlice, lambda r, m: m.d.comb.__iadd__(
        m.submodules.w_fifo.r_en.eq(0)))
    return Proof(f"register-slice-s{stages}",
                 f"AxiRegisterSlice, {stages} stage(s), R and B always ready",
                 lambda: AxiRegisterSlice(**arguments), lambda: broken(**arguments),
                 _slice_environment, "bmc", depth, fast, quick_depth)


def _switch_environment(m, switch):
    """Sorted runs on every leaf, any backpressure, one mode for the whole proof (the switch
    changes mode only between jobs, when its trees are empty)."""
    for j, leaf in enumerate(switch.i):
        sorted_runs_input(m, leaf, f"leaf{j}")
    any_ready(m, *switch.o, switch.wide)
    m.d.comb += switch.mode.eq(AnyConst(1))


def _switch_proof(depth):
    arguments = dict(record=RecordLayout(3, 2), trees=2, rate=1, leaves=2)
    # The fault: tree 1's output carries tree 0's root.
    broken = sabotaged(ReuseSwitch, lambda r, m: m.d.comb.__iadd__(
        r.o[1].payload.eq(r.trees[0].o.payload)))
    return Proof("reuse-switch-t2", "ReuseSwitch, 2 trees (1, 2), 3+2-bit records",
                 lambda: ReuseSwitch(**arguments), lambda: broken(**arguments),
                 _switch_environment, "bmc", depth, fast=False)


def _control_environment(m, control):
    """A master that keeps AXI4-Lite's rules at any address, any strobes; a kernel that
    raises ready, done and idle when it likes, with any status and counters."""
    bus = control.s_axi_control
    channel_input(m, bus.awvalid, bus.awready, bus.awaddr, "aw_in")
    channel_input(m, bus.wvalid, bus.wready, Cat(bus.wdata, bus.wstrb), "w_in")
    channel_input(m, bus.arvalid, bus.arready, bus.araddr, "ar_in")
    any_input(m, bus.bready, bus.rready, control.ready, control.done, control.idle,
              control.status, control.counters)


def _control_proof(depth):
    arguments = dict(args=[("records", 32), ("base", 64)], counters=["cycles"], addr_width=7)
    # The faults: every read returns 0; a read of any register clears ap_done and ap_ready.
    broken = sabotaged(ControlRegisters, lambda c, m: m.d.comb.__iadd__(
        c.s_axi_control.rdata.eq(0)))

    class ClearedByAnyRead(ControlRegisters):
        def _handshake(self, m, st):
            bus = self.s_axi_control
            m.d.comb += st.read_control.eq(bus.arvalid & bus.arready)
            super()._handshake(m, st)

    return Proof("control-registers", "ControlRegisters, a 32-bit and a 64-bit argument",
                 lambda: ControlRegisters(**arguments), lambda: broken(**arguments),
                 _control_environment, "bmc", depth, quick_depth=10,
                 also_broken=(lambda: ClearedByAnyRead(**arguments),))


def _job_environment(m, job):
    """Arguments that stay put (any values: bad ones too), ap_start when the host likes, the
    datapath's reset, ends, errors and handshakes when they like."""
    m.d.comb += job.args.eq(AnyConst(len(job.args.as_value())))
    any_input(m, job.start, job.reset_passed, job.read_errors, job.write_errors,
              job.trees_done, job.trees_half, job.packers_busy, job.phase2_written,
              job.report_done, job.phase2_write.ready, job.phase2_pack.ready)


def _job_proof(depth):
    config = config_from("tiny", ["trees=2"])
    registers = RegisterMap(kernel_arguments(config), kernel_counters(config))
    # The fault: phase 2 starts with phase 1 (caught only where the trees start, so the
    # proof reaches a good job's phases within its depth).
    broken = sabotaged(JobController, lambda j, m: m.d.comb.__iadd__(
        j.start_phase2.eq(j.start_trees)))
    return Proof("job-controller", "JobController of tiny with 2 trees",
                 lambda: JobController(config, registers), lambda: broken(config, registers),
                 _job_environment, "bmc", depth, fast=False)


PROOFS = [
    _queue_proof(1, True, "prove", 8),
    _queue_proof(4, True, "prove", 12),
    _queue_proof(4, False, "prove", 12),
    _queue_proof(5, False, "prove", 12),
    _skid_proof(),
    _credit_proof(2),
    _credit_proof(5),
    _merge_unit_proof(MmsMergeUnit, 2, 14),
    _merge_unit_proof(FlimsMergeUnit, 2, 10),
    _read_engine_proof(16, 10),
    _write_engine_proof(1, 1, 15, 8),
    _write_engine_proof(2, 2, 12, 8, fast=False),   # (make formal; one writer in the suite)
    _controller_proof(36, 8),
    _slice_proof(1, 12, 6),
    _slice_proof(2, 14, 8, fast=False),
    _switch_proof(12),      # (two trees and an extra level: minutes, make formal only)
    _control_proof(20),
    _job_proof(20),         # (10 pairs of buffers checked, then phases 1 and 2 begin)
]


def proofs_named(names):
    """The proofs whose names start with any of ``names`` (every proof for none)."""
    chosen = [p for p in PROOFS if not names or any(p.name.startswith(n) for n in names)]
    unknown = [n for n in names if not any(p.name.startswith(n) for p in PROOFS)]
    if unknown:
        raise ValueError(f"no proof named {', '.join(unknown)}; the proofs: "
                         + ", ".join(p.name for p in PROOFS))
    return chosen
