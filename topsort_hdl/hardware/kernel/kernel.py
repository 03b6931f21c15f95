"""The two-phase TopSort kernel: its lanes (a read engine, leaf feeders, a tree, a root packer
and a write engine per tree) wired to the phase-2 switch and the control slave, the job that
runs them, and the names of its ports. Its Verilog comes from :mod:`.generate`."""

from types import SimpleNamespace

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

from ...core.boards import HBM_BOARDS
from ...core.contract import (
    CONTROL_ADDR_WIDTH,
    RECORDS_ARGUMENT,
    REPORT_PORT,
    half_argument,
    kernel_arguments,
    kernel_counters,
)
from ...core.params import COUNT_BITS
from ..axi import REFILL_CYCLES, AxiReadEngine, AxiWriteEngine, ControlRegisters
from ..axi.register_slice import AxiRegisterSlice
from ..axi.signature import Axi4Signature, AxiLiteSignature
from ..records import RecordLayout
from ..tree import MergeTree, ReuseSwitch
from .controller import ControllerShape, TreeController
from .feeder import LeafFeeder
from .job import JobController
from .key_order import KeyOrderBeat
from .packer import RootPacker
from .report import ReportWriter

__all__ = ["TopSortKernel", "merge_record", "tree_read_engine", "port_register_slice"]

# The channels of each port whose receivers never refuse a beat: the read engine reserves a
# burst's room when it issues it and the write engines take every response (RREADY and BREADY
# stay high), so their register stages need no backpressure. A slice flags a beat they refuse,
# reported as a read or write error: the assumption is checked, not silent.
PORT_ALWAYS_READY = ("r", "b")
LEAF_DEPTH = 4          # the read engine's per-leaf buffers already hold two bursts


def _port_half(params, channels, from_master):
    """The names of a master port's signals on ``channels`` in one direction."""
    return [name for channel, name, _, master in params.port_signals()
            if channel in channels and master == from_master]


def merge_record(config):
    """The records as the merge logic sees them: the key compared, the value carried; with
    equal keys ordered by value, the whole record is the key (its bits are the same)."""
    record_bits = config.key_bits + config.value_bits
    return RecordLayout(config.compare_bits, record_bits - config.compare_bits)


def tree_read_engine(config, reused=False):
    """Tree ``i``'s read engine (``reused``: one of the phase-2 trees), as the kernel builds it
    (and the QoR estimate)."""
    c = config
    # A tree runs about l bursts behind its reader, a fixed cost per pass: the reused trees'
    # long phase-2 bursts would quadruple it in every phase-1 pass.
    return AxiReadEngine(c.axi, c.leaves,
                         burst_bytes=c.reuse_burst_bytes if reused else c.read_burst_bytes,
                         short_burst_bytes=c.read_burst_bytes,
                         max_outstanding=c.read_outstanding,
                         length_bits=c.length_bits,
                         buffer_style=HBM_BOARDS[c.board].buffer_ram or None,
                         leaf_beats=leaf_beats(c),
                         presort=merge_record(c) if c.presort else None)


def port_register_slice(config, stages):
    """A tree's AXI port through ``stages`` register stages (the floorplan's, across dies)."""
    return AxiRegisterSlice(config.axi, stages, always_ready=PORT_ALWAYS_READY)


def leaf_beats(config):
    """Beat registers per leaf in front of a read engine's buffer memory: a leaf feeder takes a
    beat every ``records per beat`` cycles at most, a register refills in
    :data:`REFILL_CYCLES`."""
    per_beat = config.data_width // (config.key_bits + config.value_bits)
    return min(4, -(-REFILL_CYCLES // per_beat))


def _connect_read(m, port, reader, keys):
    """The read half of ``port`` to ``reader``, its data through ``keys`` (a
    :class:`KeyOrderBeat`)."""
    params = port.signature.params
    for name in _port_half(params, ("ar", "r"), from_master=True):
        m.d.comb += getattr(port, name).eq(getattr(reader, name))
    for name in _port_half(params, ("ar", "r"), from_master=False):
        if name == "rdata":
            m.d.comb += [keys.i.eq(port.rdata), reader.rdata.eq(keys.o)]
        else:
            m.d.comb += getattr(reader, name).eq(getattr(port, name))


def _write_through(m, source, writer, keys):
    """``source``'s beats (a stream) into ``writer``'s, their records through ``keys``."""
    m.d.comb += [
        writer.i.valid.eq(source.valid),
        keys.i.eq(source.payload),
        writer.i.payload.eq(keys.o),
        source.ready.eq(writer.i.ready),
    ]


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
        record = RecordLayout(c.key_bits, c.value_bits)     # in memory
        merged = merge_record(c)                            # in the merge logic
        trees, leaves, reuse, group = c.trees, c.leaves, c.reuse, c.group
        regs = m.submodules.registers = self.registers
        wiring.connect(m, wiring.flipped(self.control), regs.s_axi_control)
        m.d.comb += self.interrupt.eq(regs.interrupt)
        args = regs.args
        records = args[RECORDS_ARGUMENT]
        halves = [[args[half_argument(i, h)] for h in (0, 1)] for i in range(trees)]
        # The job: its control registers, its commands to the trees and phase 2, its report.
        job = m.submodules.job = JobController(c, self.register_map)
        m.d.comb += [job.start.eq(regs.start), job.args.eq(args), regs.ready.eq(job.ready),
                     regs.done.eq(job.done), regs.idle.eq(job.idle),
                     regs.status.eq(job.status), regs.counters.eq(job.counters)]
        phase2, job_reset = job.phase2, job.job_reset

        # Everything that moves data restarts on each ap_start, each block from its own
        # register: one reset net to every flip-flop of the datapath takes most of a cycle to
        # route alone, and a congested route at that. The registers are taps of a chain
        # (identical registers would be merged by synthesis), so the blocks restart one a cycle
        # after ap_start; the datapath is idle until the controllers start, after the chain.
        # Each block runs in a clock domain of its own (the same clock) whose reset is the
        # kernel's or its tap: a domain, not a ResetInserter, so that a block emitted as a
        # module of its own (topsort_hdl.hardware.block) is reset through its port.
        dp = Module()
        m.submodules.datapath = dp
        resets = []

        def block(name, elaboratable):
            tap = Signal(name=f"{name}_reset")
            resets.append(tap)
            domain = f"job_{name}"
            dp.domains += ClockDomain(domain, local=True)
            dp.d.comb += [ClockSignal(domain).eq(ClockSignal()),
                          ResetSignal(domain).eq(ResetSignal(allow_reset_less=True) | tap)]
            dp.submodules[name] = DomainRenamer(domain)(elaboratable)
            return elaboratable

        # The job's key order, decoded from its argument and held from ap_start to the end;
        # each beat's keys are mapped as it enters the kernel and back as it leaves (.key_order).
        def key_order(name, side, count=c.rate):    # (a beat is a root bundle)
            keys = dp.submodules[name] = KeyOrderBeat(record, count, side)
            dp.d.comb += keys.order.eq(job.order)
            return keys

        reused = {t * group: t for t in range(reuse)}
        switch = block("reuse", ReuseSwitch(merged, reuse, c.rate, leaves, leaf_depth=LEAF_DEPTH,
                                            merge_unit=c.merge_unit))
        controllers, writers, readers, packers = [], [], [], []
        # Each tree's port, through its register stages (none by default).
        ports, overruns = [], []
        for i in range(trees):
            stages = m.submodules[f"port{i}"] = port_register_slice(c, self.port_stages[i])
            wiring.connect(m, stages.m, wiring.flipped(self.m_axi[i]))
            ports.append(stages.s)
            overruns.append(stages.overrun)
        m.d.comb += switch.mode.eq(phase2)
        st = SimpleNamespace(dp=dp, block=block, key_order=key_order, switch=switch,
                             reused=reused, merged=merged, ports=ports, phase2=phase2,
                             records=records, halves=halves, controllers=controllers,
                             writers=writers, readers=readers, packers=packers)
        for i in range(trees):
            self._lane(m, st, i)

        writer2, packer2, reporter = self._phase2(m, st, job)

        # The job's view of the lanes: errors, ends, passes; the phase-2 commands.
        m.d.sync += Cat(resets).eq(Cat(job_reset, *resets[:-1]))
        m.d.comb += [
            job.reset_passed.eq(resets[-1]),
            job.read_errors.eq(Cat(r.error for r in readers).any() |
                               Cat(o.r for o in overruns).any()),
            job.write_errors.eq(Cat(w.error for w in writers).any() | writer2.error |
                                reporter.error | Cat(o.b for o in overruns).any()),
            job.trees_done.eq(Cat(ctl.done for ctl in controllers)),
            job.trees_half.eq(Cat(ctl.half for ctl in controllers)),
            job.packers_busy.eq(Cat(packer.busy for packer in packers).any()),
            job.phase2_written.eq(writer2.done),
        ]
        for control in controllers:
            m.d.comb += control.start.eq(job.start_trees)
        for t in range(reuse):
            m.d.comb += controllers[t * group].start_phase2.eq(job.start_phase2)
        wiring.connect(m, job.phase2_write, writer2.cmd)
        wiring.connect(m, job.phase2_pack, packer2.cmd)
        return m

    def _lane(self, m, st, i):
        """Tree ``i``'s lane: its read engine, leaf feeders, tree (or its part of the reuse
        switch), root packer, write engine and controller, wired to its port."""
        c, p = self.config, self.config.axi
        trees, leaves = c.trees, c.leaves
        dp, block, key_order, switch = st.dp, st.block, st.key_order, st.switch
        merged, reused, phase2, ports = st.merged, st.reused, st.phase2, st.ports
        records, halves = st.records, st.halves
        controllers, packers, writers, readers = (st.controllers, st.packers, st.writers,
                                                  st.readers)
        tree_shift = exact_log2(trees)
        reader = tree_read_engine(c, reused=i in reused)
        dp.d.comb += reader.short_bursts.eq(~phase2)
        writer = AxiWriteEngine(p, 1, burst_bytes=c.write_burst_bytes,
                                batch_bytes=c.batch_bytes,
                                max_outstanding=c.write_outstanding, length_bits=c.length_bits)
        packer = RootPacker(merged, c.rate, COUNT_BITS)
        control = TreeController(ControllerShape.of(c), reused=i in reused)
        block(f"reader{i}", reader)
        block(f"writer{i}", writer)
        block(f"packer{i}", packer)
        block(f"controller{i}", control)
        controllers.append(control)
        packers.append(packer)
        writers.append(writer)
        readers.append(reader)
        if i in reused:
            leaf_ports = [switch.i[reused[i] * leaves + j] for j in range(leaves)]
            root = switch.o[reused[i]]
        else:
            tree = block(f"tree{i}", MergeTree(merged, c.rate, leaves, leaf_depth=LEAF_DEPTH,
                                               merge_unit=c.merge_unit))
            leaf_ports, root = list(tree.i), tree.o
        for j in range(leaves):
            feeder = block(f"feeder{i}_{j}", LeafFeeder(merged, p, COUNT_BITS))
            wiring.connect(dp, reader.leaf[j], feeder.beats)
            wiring.connect(dp, feeder.o, leaf_ports[j])
            wiring.connect(dp, control.feeder_cmd[j], feeder.cmd)
        wiring.connect(dp, control.reader_cmd, reader.cmd)
        if c.presort:
            dp.d.comb += reader.sort_beats.eq(control.sort_beats)
        wiring.connect(dp, control.packer_cmd, packer.cmd)
        wiring.connect(dp, root, packer.i)
        wiring.connect(dp, control.writer_cmd, writer.cmd)
        dp.d.comb += control.writer_done.eq(writer.done)
        _write_through(dp, packer.o, writer, key_order(f"write_order{i}", "write"))
        # Tree i's share of the records; its buffer halves.
        # (the last tree never takes an extra one: no constant compare for it)
        extra = C(i, tree_shift) < records[:tree_shift] if i < trees - 1 else 0
        share = (records >> tree_shift) + extra
        m.d.comb += [control.records.eq(share), control.halves[0].eq(halves[i][0]),
                     control.halves[1].eq(halves[i][1])]
        _connect_read(m, ports[i], reader.axi, key_order(f"read_order{i}", "read"))

    def _phase2(self, m, st, job):
        """Phase 2's root packer and write engine behind the reuse switch, the report writer,
        and each port's write channels shared among its writers, each in its turn."""
        c, p = self.config, self.config.axi
        trees, reuse, group = c.trees, c.reuse, c.group
        dp, block, key_order, switch = st.dp, st.block, st.key_order, st.switch
        merged, reused, phase2, ports = st.merged, st.reused, st.phase2, st.ports
        controllers, writers = st.controllers, st.writers
        reporting = job.reporting
        # Phase 2: the reused trees' controllers point their leaves at their group's runs.
        packer2 = block("phase2_packer", RootPacker(merged, reuse * c.rate, COUNT_BITS))
        writer2 = block("phase2_writer", AxiWriteEngine(
            p, reuse, slots=group, burst_bytes=c.write_burst_bytes, batch_bytes=c.batch_bytes,
            max_outstanding=c.write_outstanding, length_bits=c.length_bits))
        wiring.connect(dp, switch.wide, packer2.i)
        _write_through(dp, packer2.o, writer2,
                       key_order("phase2_order", "write", reuse * c.rate))
        # The report, through tree 0's port after phase 2 (its writer sees the port only then).
        reporter = block("report_writer", ReportWriter(p, job.report_size // p.beat_bytes))
        m.d.comb += [reporter.addr.eq(job.report_addr), reporter.data.eq(job.report),
                     reporter.start.eq(job.report_start), job.report_done.eq(reporter.done)]
        for i in range(trees):
            if i in reused:
                t = reused[i]
                control = controllers[i]
                for s in range(group):
                    member = controllers[t * group + s]
                    m.d.comb += [
                        control.group_records[s].eq(member.records),
                        control.group_halves[s].eq(member.halves),
                        control.group_half[s].eq(member.half),
                        control.group_run_log2[s].eq(member.run_log2),
                    ]
                _connect_write(m, ports[i], writer2.axi[t], enable=phase2)
                if i == REPORT_PORT:
                    _connect_write(m, ports[i], reporter.axi, enable=reporting)
                    _connect_write(m, ports[i], writers[i].axi[0], enable=~phase2 & ~reporting)
                else:
                    _connect_write(m, ports[i], writers[i].axi[0], enable=~phase2)
            else:
                _connect_write(m, ports[i], writers[i].axi[0])
        return writer2, packer2, reporter
