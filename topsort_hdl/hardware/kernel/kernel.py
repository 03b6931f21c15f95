"""The two-phase TopSort kernel: its lanes (a read engine, leaf feeders, a tree, a root packer
and a write engine per tree) wired to the phase-2 switch and the control slave, the job that
runs them, and the names of its ports. Its Verilog comes from :mod:`.generate`."""

from amaranth.hdl import (
    C,
    Cat,
    ClockDomain,
    ClockSignal,
    DomainRenamer,
    Module,
    Mux,
    ResetSignal,
    Signal,
)
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ...core.boards import HBM_BOARDS
from ...core.contract import (
    CONTROL_ADDR_WIDTH,
    KEY_ORDER_ARGUMENT,
    RECORDS_ARGUMENT,
    REPORT_ARGUMENT,
    REPORT_FIELDS,
    REPORT_PORT,
    REPORT_TREE_BYTES,
    REPORT_TREE_FIELDS,
    REPORT_TREES_OFFSET,
    REPORT_VERSION,
    STATUS_BITS,
    half_argument,
    kernel_arguments,
    kernel_counters,
    report_bytes,
)
from ...core.params import COUNT_BITS
from ..axi import REFILL_CYCLES, AxiReadEngine, AxiWriteEngine, ControlRegisters
from ..axi.register_slice import AxiRegisterSlice
from ..axi.signature import Axi4Signature, AxiLiteSignature
from ..records import RecordLayout
from ..tree import MergeTree, ReuseSwitch
from .arguments import argument_checks
from .controller import ControllerShape, TreeController
from .feeder import LeafFeeder
from .key_order import KEY_ORDER_CONTROL, KeyOrderBeat, decode_key_order
from .packer import RootPacker
from .report import ReportWriter

__all__ = ["TopSortKernel", "merge_record", "tree_read_engine", "port_register_slice"]

# The channels of each port whose receivers never refuse a beat: the read engine reserves a
# burst's room when it issues it and the write engines take every response (RREADY and BREADY
# stay high), so their register stages need no backpressure. A slice flags a beat they refuse,
# reported as a read or write error: the assumption is checked, not silent.
PORT_ALWAYS_READY = ("r", "b")
LEAF_DEPTH = 4          # the read engine's per-leaf buffers already hold two bursts
PASS_BITS = 8           # a tree's pass count (at most COUNT_BITS, with two leaves)


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
        p = c.axi
        record = RecordLayout(c.key_bits, c.value_bits)     # in memory
        merged = merge_record(c)                            # in the merge logic
        trees, leaves, reuse, group = c.trees, c.leaves, c.reuse, c.group
        regs = m.submodules.registers = self.registers
        wiring.connect(m, wiring.flipped(self.control), regs.s_axi_control)
        m.d.comb += self.interrupt.eq(regs.interrupt)
        args = regs.args
        records = args[RECORDS_ARGUMENT]
        halves = [[args[half_argument(i, h)] for h in (0, 1)] for i in range(trees)]
        report_addr = args[REPORT_ARGUMENT]

        # Everything that moves data restarts on each ap_start, each block from its own
        # register: one reset net to every flip-flop of the datapath takes most of a cycle to
        # route alone, and a congested route at that. The registers are taps of a chain
        # (identical registers would be merged by synthesis), so the blocks restart one a cycle
        # after ap_start; the datapath is idle until the controllers start, after the chain.
        # Each block runs in a clock domain of its own (the same clock) whose reset is the
        # kernel's or its tap: a domain, not a ResetInserter, so that a block emitted as a
        # module of its own (topsort_hdl.hardware.block) is reset through its port.
        job_reset = Signal()
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
        order_control, bad_order = decode_key_order(args[KEY_ORDER_ARGUMENT])
        order = Signal(KEY_ORDER_CONTROL)
        order_bad = Signal()

        def key_order(name, side, count=c.rate):    # (a beat is a root bundle)
            keys = dp.submodules[name] = KeyOrderBeat(record, count, side)
            dp.d.comb += keys.order.eq(order)
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
        phase2 = Signal()
        m.d.comb += switch.mode.eq(phase2)
        tree_shift = exact_log2(trees)
        for i in range(trees):
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
            dp.d.comb += [
                writer.cmd.valid.eq(control.writer_cmd.valid),
                writer.cmd.payload.eq(control.writer_cmd.payload),
                control.writer_cmd.ready.eq(writer.cmd.ready),
                control.writer_done.eq(writer.done),
            ]
            _write_through(dp, packer.o, writer, key_order(f"write_order{i}", "write"))
            # Tree i's share of the records; its buffer halves.
            # (the last tree never takes an extra one: no constant compare for it)
            extra = C(i, tree_shift) < records[:tree_shift] if i < trees - 1 else 0
            share = (records >> tree_shift) + extra
            m.d.comb += [control.records.eq(share), control.halves[0].eq(halves[i][0]),
                         control.halves[1].eq(halves[i][1])]
            _connect_read(m, ports[i], reader.axi, key_order(f"read_order{i}", "read"))

        # Phase 2: the reused trees' controllers point their leaves at their group's runs.
        packer2 = block("phase2_packer", RootPacker(merged, reuse * c.rate, COUNT_BITS))
        writer2 = block("phase2_writer", AxiWriteEngine(
            p, reuse, slots=group, burst_bytes=c.write_burst_bytes, batch_bytes=c.batch_bytes,
            max_outstanding=c.write_outstanding, length_bits=c.length_bits))
        wiring.connect(dp, switch.wide, packer2.i)
        _write_through(dp, packer2.o, writer2,
                       key_order("phase2_order", "write", reuse * c.rate))
        # The report, through tree 0's port after phase 2 (its writer sees the port only then).
        report_size = report_bytes(trees, p.beat_bytes)
        reporter = block("report_writer", ReportWriter(p, report_size // p.beat_bytes))
        reporting = Signal()
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

        # The job.
        status = Signal(32)
        m.d.comb += regs.status.eq(status)
        counters = Signal(128)
        m.d.comb += regs.counters.eq(counters)
        cycles1, cycles2 = counters[:64], counters[64:]
        # The arguments, checked before the job touches memory (.arguments).
        checks = argument_checks(m, c, halves, report_addr, report_size, records, status)
        errors = Cat(r.error for r in readers).any() | Cat(o.r for o in overruns).any()
        write_errors = Cat(w.error for w in writers).any() | writer2.error | \
            reporter.error | Cat(o.b for o in overruns).any()
        # Phase 1 ends when every tree's output is written and every root packer has taken the
        # pad bundles that end its last run: a reused tree's root feeds phase 2 next.
        # Registered: the packers' busy flags come from their ring's positions, and the state
        # logic after them reaches across the device (the trees' ends may be seen a cycle late:
        # once set, the flags stay until phase 2 starts).
        for_all_done = Signal()
        m.d.sync += for_all_done.eq(Cat(ctl.done for ctl in controllers).all() &
                                    ~Cat(packer.busy for packer in packers).any())
        sent2 = Signal()     # the phase-2 write command is taken
        packed2 = Signal()

        m.d.sync += [job_reset.eq(0), Cat(resets).eq(Cat(job_reset, *resets[:-1]))]
        # A job reset is on its way down the chain (a flag, not an OR of every tap).
        in_chain = Signal()
        with m.If(job_reset):
            m.d.sync += in_chain.eq(1)
        with m.Elif(resets[-1]):
            m.d.sync += in_chain.eq(0)
        # (not the previous job's errors, from blocks not yet reset)
        resetting = job_reset | in_chain
        with m.If(errors & ~resetting):
            m.d.sync += status[STATUS_BITS["read_error"]].eq(1)
        with m.If(write_errors & ~resetting):
            m.d.sync += status[STATUS_BITS["write_error"]].eq(1)

        # Each tree's passes, counted as its source half flips in phase 1 (the controller
        # flips it as a pass ends; it is 0 when phase 1 starts).
        passes = [Signal(PASS_BITS, name=f"passes{i}") for i in range(trees)]
        last_half = Signal(trees)
        in_phase1 = Signal()
        for i, control in enumerate(controllers):
            with m.If(in_phase1 & (control.half != last_half[i])):
                m.d.sync += passes[i].eq(passes[i] + 1)
        m.d.sync += last_half.eq(Cat(control.half for control in controllers))

        # The report: every field at its byte offset, the trees' entries 0 after bad arguments.
        fields = {"version": C(REPORT_VERSION, 32), "status": status, "records": records,
                  "phase1_cycles": cycles1, "phase2_cycles": cycles2}
        report = Signal(report_size * 8)
        for name, offset, size in REPORT_FIELDS:
            m.d.comb += report[8 * offset:8 * (offset + size)].eq(fields[name])
        good = status == 0
        for i, control in enumerate(controllers):
            entry = {"passes": Mux(good, passes[i], 0), "output_half": good & ~control.half}
            for name, offset, size in REPORT_TREE_FIELDS:
                base = REPORT_TREES_OFFSET + i * REPORT_TREE_BYTES + offset
                m.d.comb += report[8 * base:8 * (base + size)].eq(entry[name])
        m.d.comb += [reporter.addr.eq(report_addr), reporter.data.eq(report)]
        report_ok = Signal()    # the report address passed its check (sampled in CHECK)
        # The report writer's start, from a register of its own set on the way into REPORT
        # (high exactly in that state when the report is written): it enables every bit of
        # the report's latch, across the device from the job's state register.
        report_go = Signal()
        m.d.sync += report_go.eq(0)
        m.d.comb += reporter.start.eq(report_go)

        # ap_idle from a register (1 from reset), ap_ready and ap_done from the state: defined
        # in every simulator from the first cycle, not only once the job FSM has moved.
        idle = Signal(init=1)
        m.d.comb += regs.idle.eq(idle)
        with m.FSM() as fsm:
            with m.State("IDLE"):
                with m.If(regs.start):
                    m.d.sync += [job_reset.eq(1), status.eq(0), counters.eq(0), phase2.eq(0),
                                 checks.pair_a.eq(0), checks.pair_b.eq(1), idle.eq(0),
                                 Cat(passes).eq(0), order.eq(order_control),
                                 order_bad.eq(bad_order)]
                    m.next = "CHECK"
            with m.State("CHECK"):
                with m.If(checks.over):
                    m.d.sync += status[STATUS_BITS["capacity"]].eq(1)
                with m.If(checks.misaligned):
                    m.d.sync += status[STATUS_BITS["alignment"]].eq(1)
                with m.If(order_bad):
                    m.d.sync += status[STATUS_BITS["key_order"]].eq(1)
                m.d.sync += report_ok.eq(~checks.bad_report)
                m.next = "PAIRS"
            with m.State("PAIRS"):
                m.d.comb += checks.checking.eq(1)
                with m.If(checks.pair_b == len(checks.regions) - 1):
                    m.d.sync += [checks.pair_a.eq(checks.pair_a + 1),
                                 checks.pair_b.eq(checks.pair_a + 2)]
                    with m.If(checks.pair_a == len(checks.regions) - 2):
                        m.next = "DRAIN"
                with m.Else():
                    m.d.sync += checks.pair_b.eq(checks.pair_b + 1)
            with m.State("DRAIN"):
                # the last pair is compared, every block reset
                with m.If(~checks.picked.valid & ~checks.summed.valid & ~resetting):
                    m.next = "CHECKED"
            with m.State("CHECKED"):
                with m.If(status != 0):
                    m.d.sync += report_go.eq(report_ok)
                    m.next = "REPORT"   # bad arguments: no memory traffic but the report
                with m.Else():
                    for control in controllers:
                        m.d.comb += control.start.eq(1)
                    m.d.sync += in_phase1.eq(1)
                    m.next = "PHASE1"
            with m.State("PHASE1"):
                m.d.sync += cycles1.eq(cycles1 + 1)
                with m.If(for_all_done):
                    m.d.sync += [phase2.eq(1), sent2.eq(0), packed2.eq(0), in_phase1.eq(0)]
                    for t in range(reuse):
                        m.d.comb += controllers[t * group].start2.eq(1)
                    m.next = "PHASE2"
            with m.State("PHASE2"):
                m.d.sync += cycles2.eq(cycles2 + 1)
                m.d.comb += [
                    writer2.cmd.valid.eq(~sent2),
                    writer2.cmd.payload.bytes.eq(records << exact_log2(c.record_bytes)),
                    packer2.cmd.valid.eq(~packed2),
                    packer2.cmd.payload.records.eq(records),
                ]
                for t in range(reuse):
                    for s in range(group):
                        tree = t * group + s
                        free_half = Mux(controllers[tree].half, halves[tree][0],
                                        halves[tree][1])
                        m.d.comb += writer2.cmd.payload.addr[t * group + s].eq(free_half)
                with m.If(writer2.cmd.ready):
                    m.d.sync += sent2.eq(1)
                with m.If(packer2.cmd.ready):
                    m.d.sync += packed2.eq(1)
                with m.If(writer2.done):    # every byte written and acknowledged
                    m.d.sync += [phase2.eq(0), report_go.eq(report_ok)]
                    m.next = "REPORT"
            with m.State("REPORT"):
                # (the status word in the report is this cycle's: every other write is done)
                with m.If(report_ok):
                    m.d.sync += reporting.eq(1)
                    m.next = "REPORTING"
                with m.Else():
                    m.next = "DONE"
            with m.State("REPORTING"):
                with m.If(reporter.done):
                    m.d.sync += reporting.eq(0)
                    m.next = "DONE"
            with m.State("DONE"):
                m.d.sync += idle.eq(1)
                m.next = "IDLE"
        m.d.comb += [regs.ready.eq(fsm.ongoing("IDLE") & regs.start),
                     regs.done.eq(fsm.ongoing("DONE"))]
        return m
