"""The two-phase TopSort kernel: a :class:`~.lane.TreeLane` per tree (read engine, leaf
feeders, tree, root packer, write engine and controller) wired to the phase-2 switch, phase 2's
packer and writer, the control slave, and the job that runs them. Its Verilog comes from
:mod:`topsort_hdl.targets.kernel_verilog`."""

from amaranth.hdl import (
    C,
    Cat,
    ClockDomain,
    ClockSignal,
    DomainRenamer,
    Module,
    ResetSignal,
    Signal,
)
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.contract import (
    CONTROL_ADDR_WIDTH,
    RECORDS_ARGUMENT,
    REPORT_PORT,
    half_argument,
    kernel_arguments,
    kernel_counters,
)
from ...core.params import COUNT_BITS
from ..axi import AxiWriteEngine, ControlRegisters
from ..axi.register_slice import AxiRegisterSlice
from ..axi.signature import Axi4Signature, AxiLiteSignature
from ..records import RecordLayout
from ..tree import ReuseSwitch
from .job import JobController
from .key_order import KeyOrderBeat
from .lane import LEAF_DEPTH, TreeLane, lane_blocks, merge_record
from .packer import RootPacker
from .report import ReportWriter

__all__ = ["TopSortKernel", "port_register_slice"]

# The channels of each port whose receivers never refuse a beat: the read engine reserves a
# burst's room when it issues it and the write engines take every response (RREADY and BREADY
# stay high), so their register stages need no backpressure. A slice flags a beat they refuse,
# reported as a read or write error: the assumption is checked, not silent.
PORT_ALWAYS_READY = ("r", "b")


def port_register_slice(config, stages):
    """A tree's AXI port through ``stages`` register stages (the floorplan's, across dies)."""
    return AxiRegisterSlice(config.axi, stages, always_ready=PORT_ALWAYS_READY)


class ResetChain:
    """The datapath's restart on each ap_start, each block from its own register.

    One reset net to every flip-flop of the datapath takes most of a cycle to route alone, and
    a congested route at that. The registers are taps of a chain (identical registers would be
    merged by synthesis), so the blocks restart one a cycle after ap_start; the datapath is
    idle until the controllers start, after the chain. Each block runs in a clock domain of
    its own (the same clock) whose reset is the kernel's or its tap: a domain, not a
    ResetInserter, so that a block emitted as a module of its own
    (:mod:`topsort_hdl.hardware.block`) is reset through its port."""

    def __init__(self, datapath):
        self.datapath = datapath
        self.taps = []

    def tap(self, name):
        """The next register of the chain, for block ``name``."""
        signal = Signal(name=f"{name}_reset")
        self.taps.append(signal)
        return signal

    def block(self, name, elaboratable):
        """``elaboratable`` into the datapath as ``name``, reset by its own tap."""
        dp, domain = self.datapath, f"job_{name}"
        dp.domains += ClockDomain(domain, local=True)
        dp.d.comb += [ClockSignal(domain).eq(ClockSignal()),
                      ResetSignal(domain).eq(ResetSignal(allow_reset_less=True) |
                                             self.tap(name))]
        dp.submodules[name] = DomainRenamer(domain)(elaboratable)
        return elaboratable

    def lane(self, name, lane):
        """``lane`` (a :class:`TreeLane`) into the datapath, a tap for each of its blocks."""
        self.datapath.submodules[name] = lane
        self.datapath.d.comb += lane.resets.eq(
            Cat(self.tap(f"{name}_{block}") for block in lane_blocks(lane.config, lane.reused)))
        return lane

    def drive(self, m, start):
        """The chain's registers in ``m``, from ``start``; high at its end the cycle the last
        block's reset is."""
        m.d.sync += Cat(self.taps).eq(Cat(start, *self.taps[:-1]))
        return self.taps[-1]


def _port_half(params, channels, from_master):
    """The names of a master port's signals on ``channels`` in one direction."""
    return [name for channel, name, _, master in params.port_signals()
            if channel in channels and master == from_master]


def _connect_read(m, port, lane):
    """The read half of ``port`` to ``lane``'s."""
    params = port.signature.params
    for name in _port_half(params, ("ar", "r"), from_master=True):
        m.d.comb += getattr(port, name).eq(getattr(lane, name))
    for name in _port_half(params, ("ar", "r"), from_master=False):
        m.d.comb += getattr(lane, name).eq(getattr(port, name))


def _connect_write(m, port, writer, enable=None):
    """The write half of ``port`` to ``writer``; with ``enable``, only while it is high.

    The writers that share a port take turns, each idle (no AWVALID, no WVALID) outside its
    turn, so the others' AWREADY and WREADY reach it ungated: it has nothing they could take,
    and the enable stays out of its data path's handshakes. Only the responses are gated: an
    idle writer must not count another's."""
    params = port.signature.params
    for name in _port_half(params, ("aw", "w", "b"), from_master=True):
        if enable is None:
            m.d.comb += getattr(port, name).eq(getattr(writer, name))
        else:
            with m.If(enable):
                m.d.comb += getattr(port, name).eq(getattr(writer, name))
    for name in _port_half(params, ("aw", "w", "b"), from_master=False):
        value = getattr(port, name)
        if enable is not None and name == "bvalid":
            value = value & enable
        m.d.comb += getattr(writer, name).eq(value)


class TopSortKernel(wiring.Component):
    """The whole accelerator for one :class:`KernelConfig`.

    Members
    -------
    control : In(AxiLiteSignature(12))
        ``s_axi_control``: ap_ctrl_hs, arguments from :func:`kernel_arguments`, ``status``
        (:data:`STATUS_BITS`), counters ``phase1_cycles`` and ``phase2_cycles``.
    m_axi : Out(Axi4Signature).array(trees)
        Port i: tree i's reads and writes in phase 1 (channels 2i, 2i+1); in phase 2 the
        reused tree t*S also reads its group's runs and writes its share of the output.
    interrupt : Out(1)

    ``port_stages[i]`` register stages go on tree i's port (a floorplan that puts the tree k
    dies away from the HBM gives it 2k); default none.
    """

    def __init__(self, config, port_stages=None):
        self.config = config
        if port_stages is None:
            port_stages = (0,) * config.trees
        if len(port_stages) != config.trees:
            raise ValueError(f"port_stages must give one count per tree ({config.trees}), "
                             f"not {len(port_stages)}")
        self.port_stages = tuple(port_stages)
        self.registers = ControlRegisters(kernel_arguments(config), kernel_counters(config),
                                          addr_width=CONTROL_ADDR_WIDTH)
        super().__init__({
            "control": In(AxiLiteSignature(CONTROL_ADDR_WIDTH)),
            "m_axi": Out(Axi4Signature(config.axi)).array(config.trees),
            "interrupt": Out(1),
        })

    @property
    def register_map(self):
        return self.registers.register_map

    def elaborate(self, platform):
        m = Module()
        c = self.config
        trees, reuse, group = c.trees, c.reuse, c.group
        regs = m.submodules.registers = self.registers
        wiring.connect(m, wiring.flipped(self.control), regs.s_axi_control)
        m.d.comb += self.interrupt.eq(regs.interrupt)
        # The job: its control registers, its commands to the lanes and phase 2, its report.
        job = m.submodules.job = JobController(c, self.register_map)
        m.d.comb += [job.start.eq(regs.start), job.args.eq(regs.args), regs.ready.eq(job.ready),
                     regs.done.eq(job.done), regs.idle.eq(job.idle),
                     regs.status.eq(job.status), regs.counters.eq(job.counters)]
        # Each tree's port, through its register stages (none by default).
        ports, overruns = [], []
        for i in range(trees):
            stages = m.submodules[f"port{i}"] = port_register_slice(c, self.port_stages[i])
            wiring.connect(m, stages.m, wiring.flipped(self.m_axi[i]))
            ports.append(stages.s)
            overruns.append(stages.overrun)

        m.submodules.datapath = datapath = Module()
        chain = ResetChain(datapath)
        switch = chain.block("reuse", ReuseSwitch(merge_record(c), reuse, c.rate, c.leaves,
                                                  leaf_depth=LEAF_DEPTH,
                                                  merge_unit=c.merge_unit))
        m.d.comb += switch.mode.eq(job.phase2)
        reused = {t * group: t for t in range(reuse)}
        lanes = [chain.lane(f"lane{i}", TreeLane(c, i in reused)) for i in range(trees)]
        for i, lane in enumerate(lanes):
            self._lane_inputs(m, lane, i, regs.args, job)
            _connect_read(m, ports[i], lane.axi_read)
        for i, t in reused.items():
            self._phase2_inputs(m, lanes[i], switch, t, lanes[i:i + group])
            m.d.comb += lanes[i].start_phase2.eq(job.start_phase2)
        writer2, reporter = self._phase2(m, chain, job, switch)
        self._share_write_ports(m, ports, lanes, writer2, reporter, job)

        # The job's view of the lanes: errors, ends, passes; the phase-2 commands.
        m.d.comb += [
            job.reset_passed.eq(chain.drive(m, job.job_reset)),
            job.read_errors.eq(Cat(lane.read_error for lane in lanes).any() |
                               Cat(o.r for o in overruns).any()),
            job.write_errors.eq(Cat(lane.write_error for lane in lanes).any() |
                                writer2.error | reporter.error |
                                Cat(o.b for o in overruns).any()),
            job.trees_done.eq(Cat(lane.done for lane in lanes)),
            job.trees_half.eq(Cat(lane.half for lane in lanes)),
            job.packers_busy.eq(Cat(lane.packer_busy for lane in lanes).any()),
            job.phase2_written.eq(writer2.done),
        ]
        return m

    def _lane_inputs(self, m, lane, i, args, job):
        """Lane ``i``'s share of the records, its buffer halves, the job's start, phase and
        key order."""
        trees = self.config.trees
        tree_shift = exact_log2(trees)
        records = args[RECORDS_ARGUMENT]
        # (the last tree never takes an extra one: no constant compare for it)
        extra = C(i, tree_shift) < records[:tree_shift] if i < trees - 1 else 0
        m.d.comb += [lane.records.eq((records >> tree_shift) + extra),
                     lane.halves[0].eq(args[half_argument(i, 0)]),
                     lane.halves[1].eq(args[half_argument(i, 1)]),
                     lane.start.eq(job.start_trees), lane.phase2.eq(job.phase2),
                     lane.order.eq(job.order)]

    def _phase2_inputs(self, m, lane, switch, t, group):
        """Reused lane ``lane`` as the switch's tree ``t``: its leaves and root, and what its
        controller reads of its ``group``'s lanes."""
        leaves = self.config.leaves
        for j in range(leaves):
            wiring.connect(m, lane.leaves[j], switch.i[t * leaves + j])
        wiring.connect(m, switch.o[t], lane.root)
        for s, member in enumerate(group):
            m.d.comb += [lane.group_records[s].eq(member.records),
                         lane.group_halves[s].eq(member.halves),
                         lane.group_half[s].eq(member.half),
                         lane.group_run_log2[s].eq(member.run_log2)]

    def _phase2(self, m, chain, job, switch):
        """Phase 2's root packer and write engine behind the reuse switch, and the report
        writer; their commands from the job."""
        c, p, reuse = self.config, self.config.axi, self.config.reuse
        merged, record = merge_record(c), RecordLayout(c.key_bits, c.value_bits)
        packer2 = chain.block("phase2_packer", RootPacker(merged, reuse * c.rate, COUNT_BITS))
        writer2 = chain.block("phase2_writer", AxiWriteEngine(
            p, reuse, slots=c.group, burst_bytes=c.write_burst_bytes,
            batch_bytes=c.batch_bytes, max_outstanding=c.write_outstanding,
            length_bits=c.length_bits))
        dp = chain.datapath
        keys = dp.submodules.phase2_order = KeyOrderBeat(record, reuse * c.rate, "write")
        wiring.connect(dp, switch.wide, packer2.i)
        dp.d.comb += [keys.order.eq(job.order),
                      writer2.i.valid.eq(packer2.o.valid), keys.i.eq(packer2.o.payload),
                      writer2.i.payload.eq(keys.o), packer2.o.ready.eq(writer2.i.ready)]
        wiring.connect(m, job.phase2_write, writer2.cmd)
        wiring.connect(m, job.phase2_pack, packer2.cmd)
        # The report, through tree 0's port after phase 2 (its writer sees the port only then).
        reporter = chain.block("report_writer",
                               ReportWriter(p, job.report_size // p.beat_bytes))
        m.d.comb += [reporter.addr.eq(job.report_addr), reporter.data.eq(job.report),
                     reporter.start.eq(job.report_start), job.report_done.eq(reporter.done)]
        return writer2, reporter

    def _share_write_ports(self, m, ports, lanes, writer2, reporter, job):
        """Each port's write channels shared among its writers, each in its turn: a reused
        tree's lane in phase 1, phase 2's writer (its share) in phase 2, and on the report's
        port the report writer at the end."""
        c = self.config
        for i, (port, lane) in enumerate(zip(ports, lanes, strict=True)):
            if not lane.reused:
                _connect_write(m, port, lane.axi_write)
                continue
            _connect_write(m, port, writer2.axi[i // c.group], enable=job.phase2)
            if i == REPORT_PORT:
                _connect_write(m, port, reporter.axi, enable=job.reporting)
                _connect_write(m, port, lane.axi_write, enable=~job.phase2 & ~job.reporting)
            else:
                _connect_write(m, port, lane.axi_write, enable=~job.phase2)
