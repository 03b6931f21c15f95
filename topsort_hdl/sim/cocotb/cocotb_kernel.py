"""cocotb testbench for the whole kernel's Verilog (Vitis port names), driven through the host
library exactly as a host drives a card: records laid out in the tree buffers of a simulated
HBM (one cocotbext-axi ``AxiRam`` per master over one shared memory, every channel pausing at
random), arguments and ap_start over ``AxiLiteMaster``, ap_done polled, result reassembled.

Environment: TOPSORT_CONFIG (preset), TOPSORT_SET (JSON list of KEY=VALUE), TOPSORT_MODE
(``suite``, ``bulk`` with TOPSORT_RECORDS, ``sweep`` with TOPSORT_COUNTS, ``first`` with
TOPSORT_RECORDS, ``orders``, ``power_up``, or ``file`` with TOPSORT_INPUT, TOPSORT_OUTPUT,
TOPSORT_KEY_TYPE and TOPSORT_DESCENDING), TOPSORT_STATS (cycle counts as JSON), TOPSORT_PAUSE
(probability a memory channel pauses in a cycle), TOPSORT_SEED.
"""

import json
import os
import random
from dataclasses import asdict
from xml.etree import ElementTree

import cocotb
from cocotb.clock import Clock
from cocotb.handle import HierarchyObject, LogicArrayObject, LogicObject
from cocotb.triggers import ClockCycles, ReadOnly, Timer, with_timeout
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiLiteBus, AxiLiteMaster

from topsort_hdl.core.config import config_from
from topsort_hdl.core.contract import (
    AP_IDLE,
    CONTROL,
    KEY_ORDER_ARGUMENT,
    REPORT_VERSION,
    STATUS_BITS,
    Layout,
    ReportError,
    default_halves,
    default_report_address,
    kernel_arguments,
    kernel_counters,
    master_port,
)
from topsort_hdl.core.golden.kernel import KernelModel
from topsort_hdl.core.golden.order import FLOAT_KEY_BITS, KEY_TYPES, order_keys
from topsort_hdl.core.golden.workloads import make_input, special_keys
from topsort_hdl.core.plan import tree_plans
from topsort_hdl.core.register_map import RegisterMap
from topsort_hdl.host import Device, KernelError, pack_records, run_sort, unpack_records
from topsort_hdl.targets.vitis.connectivity import port_channels
from topsort_hdl.targets.vitis.kernel_xml import kernel_xml

from .axi_ram import Pauses, attach_ram, quiet, start_monitor

CONFIG = config_from(os.environ.get("TOPSORT_CONFIG", "tiny"),
                     json.loads(os.environ.get("TOPSORT_SET", "[]")))
MODE = os.environ.get("TOPSORT_MODE", "suite")
PAUSE = float(os.environ.get("TOPSORT_PAUSE", "0.2"))
SEED = int(os.environ.get("TOPSORT_SEED", "1"))


class KernelXmlRegisters:
    """Register offsets as XRT takes them: the arguments from the generated kernel.xml (so
    these testbenches prove its offsets drive the RTL's control block), the status word and the
    counters from the register map."""

    def __init__(self, config):
        args = ElementTree.fromstring(kernel_xml(config)).find("kernel/args")
        self.args = {arg.get("name"): int(arg.get("offset"), 16) for arg in args}
        self.map = RegisterMap(kernel_arguments(config), kernel_counters(config))

    def offset(self, name):
        return self.args[name] if name in self.args else self.map.offset(name)


REGISTERS = KernelXmlRegisters(CONFIG)
LAYOUT = Layout.from_config(CONFIG)
WIDTHS = CONFIG.key_bits, CONFIG.value_bits     # the record format, for packing
KEYS = 1 << CONFIG.key_bits
BY_VALUE = CONFIG.equal_keys == "by_value"
TOP_KEY = KEYS - 1


def keyed(keys):
    """Records of ``keys``, each with its index as the value (as far as the value holds it:
    none of it in a key-only record)."""
    return [(key, i & ((1 << CONFIG.value_bits) - 1)) for i, key in enumerate(keys)]


class SimDevice(Device):
    def __init__(self, dut, pauses):
        self.dut = dut
        self.rams = []
        for i in range(CONFIG.trees):
            self.rams.append(attach_ram(dut, f"m{i:02d}_axi", pauses,
                                        mem=self.rams[0].mem if self.rams else None,
                                        clock=dut.ap_clk, reset=dut.ap_rst_n,
                                        reset_active_level=False))
        self.master = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axi_control"), dut.ap_clk,
                                    dut.ap_rst_n, reset_active_level=False)
        quiet(self.master.write_if, self.master.read_if)

    async def write_register(self, offset, value):
        await self.master.write_dword(offset, value)

    async def read_register(self, offset):
        return await self.master.read_dword(offset)

    # The memory wraps its addresses modulo its size, on the ports and here alike.
    def write_memory(self, address, data):
        self.rams[0].write(address % self.rams[0].size, data)

    def read_memory(self, address, length):
        return self.rams[0].read(address % self.rams[0].size, length)


async def bring_up(dut, pauses):
    """Power-up, then a reset of a few cycles. The protocol monitors run from the first clock
    edge: what a master drives is defined in reset too."""
    dut.ap_rst_n.value = 0
    device = SimDevice(dut, pauses)
    checkers = [start_monitor(dut, f"m{i:02d}_axi", CONFIG.data_width, clock=dut.ap_clk,
                              reset=dut.ap_rst_n, reset_active_level=False)
                for i in range(CONFIG.trees)]
    Clock(dut.ap_clk, 10, unit="ns").start()
    await ClockCycles(dut.ap_clk, 4)
    dut.ap_rst_n.value = 1
    await ClockCycles(dut.ap_clk, 2)
    return device, checkers


def job_deadline_ns(count):
    """A hang fails the test: far more time than any job needs, even with memory pauses. A
    channel that pauses with chance PAUSE moves 1 / (1 - PAUSE) times slower, and so does the
    job (tiny, 2,000 records: 4,101 cycles at 0.5, 19,431 at 0.9, 65,475 at 0.97), so every
    PAUSE in [0, 1) that ``topsort-hdl sort --pause`` takes finishes."""
    return round((20_000 + 40 * count) * 10 / (1 - PAUSE))


ASCENDING = {"key_type": "unsigned", "descending": False}


def key_orders():
    """Every key type the record format has (floats at 32 and 64-bit keys), in both orders,
    as :func:`run_sort`'s keywords."""
    return [{"key_type": key_type, "descending": descending} for key_type in KEY_TYPES
            for descending in (False, True)
            if key_type != "float" or CONFIG.key_bits in FLOAT_KEY_BITS]


def order_of(keys, order):
    """``keys`` as the kernel compares them under ``order`` (:func:`key_orders`' keywords)."""
    return order_keys(keys, key_bits=CONFIG.key_bits, **order).tolist()


async def sort_records(dut, device, records, halves=None, report_address=None,
                       order=ASCENDING):
    job = run_sort(device, LAYOUT, REGISTERS, pack_records(records, *WIDTHS), halves=halves,
                   report_address=report_address,
                   poll_interval=lambda: ClockCycles(dut.ap_clk, 20), **order)
    result = await with_timeout(job, job_deadline_ns(len(records)), "ns")
    await check_report(device, result.report, len(records))
    return result


async def read_counters(device):
    """The status word and the two cycle counters, from their registers."""
    values = [await device.read_register(REGISTERS.offset("status"))]
    for name in kernel_counters(CONFIG):
        base = REGISTERS.offset(name)
        values.append(await device.read_register(base)
                      | await device.read_register(base + 4) << 32)
    return values


async def check_report(device, report, count, status=0):
    """The report against the registers (status, counters) and the golden plan (each tree's
    passes and output half; all 0 after bad arguments), field by field."""
    assert report.version == REPORT_VERSION and report.records == count, report
    assert [report.status, report.phase1_cycles, report.phase2_cycles] == \
        await read_counters(device), report
    assert report.status == status, report
    if status:
        assert report.passes == (0,) * CONFIG.trees, report
        assert report.output_halves == (0,) * CONFIG.trees, report
        assert report.phase1_cycles == report.phase2_cycles == 0, report
        return
    plans = tree_plans(CONFIG, count)
    assert report.passes == tuple(len(p.passes) for p in plans), report
    assert report.output_halves == tuple(p.final_half ^ 1 for p in plans), report


def shuffled_halves(rng):
    """Every tree's halves in two random channels: the kernel must not care where they are."""
    channels = rng.sample(range(2 * CONFIG.trees), 2 * CONFIG.trees)
    return [(channels[2 * i] * CONFIG.channel_bytes, channels[2 * i + 1] * CONFIG.channel_bytes)
            for i in range(CONFIG.trees)]


def check_phase1_memory(device, records, halves=None, order=ASCENDING):
    """The runs phase 1 left in each tree's final half, against the golden kernel model: the
    same runs, each in key order with the same (key, value) multiset."""
    model = KernelModel(CONFIG, **order)
    model.run(records)
    halves = halves or default_halves(LAYOUT)
    for tree, plan in enumerate(model.plans):
        if not plan.records:
            continue
        address = halves[tree][plan.final_half]
        got = unpack_records(device.read_memory(address, plan.records * CONFIG.record_bytes),
                             *WIDTHS)
        want = model.halves[tree][plan.final_half]
        step = plan.final_run_length
        for start in range(0, plan.records, step):
            run = got[start:start + step]
            keys = order_of([k for k, _ in run], order)
            assert keys == sorted(keys), (tree, start, "order")
            assert sorted(run) == sorted(want[start:start + step]), (tree, start, "records")
            if BY_VALUE:
                assert run == want[start:start + step], (tree, start, "equal keys by value")


def check_channels(checkers):
    """Every burst each master issued stays in the HBM channels its ``sp=`` line of the v++
    link configuration gives it (the host's default placement of the halves)."""
    ranges = port_channels(CONFIG)
    size = CONFIG.channel_bytes
    beat = CONFIG.data_width // 8
    for tree, checker in enumerate(checkers):
        first, last = ranges[master_port(tree)]
        for kind in ("ar", "aw"):
            for _, address, length in checker.bursts[kind]:
                end = address + (length + 1) * beat - 1
                assert first <= address // size and end // size <= last, \
                    (master_port(tree), kind, hex(address), (first, last))


def check_bursts_inside(checkers, halves=None, report_address=None):
    """Every burst lies inside one half (``half_bytes`` from its start), and a write may also
    be the report: the kernel never touches a byte past a buffer, even with the halves full."""
    halves = halves or default_halves(LAYOUT)
    if report_address is None:
        report_address = default_report_address(LAYOUT)
    buffers = [(h, LAYOUT.half_bytes) for pair in halves for h in pair]
    beat = CONFIG.data_width // 8
    for tree, checker in enumerate(checkers):
        for kind, inside in (("ar", buffers),
                             ("aw", buffers + [(report_address, LAYOUT.report_bytes)])):
            for _, address, length in checker.bursts[kind]:
                end = address + (length + 1) * beat
                assert any(base <= address and end <= base + size for base, size in inside), \
                    (master_port(tree), kind, hex(address), hex(end))


def check_sorted(records, output, order=ASCENDING):
    """``output`` holds ``records`` in ``order`` (the golden order's keys, compared one by one)
    and the (key, value) multiset is the same; with equal keys ordered by value, it is exactly
    the records sorted by key, then value (with row indices as values: a stable sort)."""
    got = unpack_records(output, *WIDTHS)
    want = order_of([k for k, _ in records], order)
    assert order_of([k for k, _ in got], order) == sorted(want), f"keys out of order {order}"
    assert sorted(got) == sorted(records), "the (key, value) multiset changed"
    if BY_VALUE:    # exactly one order: the key's, then the value's
        exact = [r for _, r in sorted(zip(want, records, strict=True),
                                      key=lambda pair: (pair[0], pair[1][1]))]
        assert got == exact, f"equal keys out of value order {order}"


def workloads(rng):
    top = TOP_KEY
    cap = CONFIG.capacity
    rate = CONFIG.rate
    n = min(cap, 300)
    yield "shuffled permutation", keyed(rng.sample(range(n), n))
    yield "all equal keys", keyed([7] * n)
    yield "keys 0 and all-ones", keyed(rng.choice([0, top, rng.randrange(top)])
                                       for _ in range(n))
    yield "already sorted", keyed(sorted(rng.randrange(top) for _ in range(n)))
    yield "reversed", keyed(sorted((rng.randrange(top) for _ in range(n)), reverse=True))
    yield "few distinct keys", keyed(rng.choice([3, 1 << 20, top]) for _ in range(n))
    yield "one record", keyed([rng.randrange(top)])
    yield "fewer than a bundle", keyed(rng.randrange(top) for _ in range(max(1, rate - 1)))
    yield "no multiple of anything", keyed(rng.randrange(top) for _ in range(n - 17 | 1))
    # Pass 1 from runs of a beat (presort): every tree sorts its beats as it reads them, the
    # last beat of each odd tree partial; keys 0, all-ones and one repeated among random ones.
    presorted = next((c for c in range(n, cap + 1) if (c // CONFIG.trees) % rate and all(
        p.passes and p.passes[0].run_length > 1 for p in tree_plans(CONFIG, c))), None)
    if CONFIG.presort and presorted:
        yield f"{presorted} records: pass 1 from sorted beats", keyed(
            rng.choice([0, top, 7, rng.randrange(top)]) for _ in range(presorted))
    # Trees one record apart across a pass boundary: tree 0 makes a pass (ending in pad
    # bundles at its root) that the others do not, so the phase-2 runs differ in length.
    span = CONFIG.trees * CONFIG.runs_per_tree
    for count in (span + 1, CONFIG.trees * CONFIG.runs_per_tree * CONFIG.leaves + 1):
        if count <= cap:
            yield f"{count} records: uneven trees", keyed(rng.randrange(top)
                                                          for _ in range(count))


@cocotb.test(skip=MODE != "suite")
async def kernel_sorts_every_workload_back_to_back(dut):
    """Many jobs without reset; every AXI channel pauses at random; exact results."""
    rng = random.Random(SEED)
    device, checkers = await bring_up(dut, Pauses(rng, PAUSE))
    for job, (name, records) in enumerate(workloads(rng)):
        halves = shuffled_halves(rng) if job % 2 else None
        # Once, the report in the last aligned place of the address space (it may end there).
        report = (1 << 64) - LAYOUT.report["alignment"] if job == 1 else None
        result = await sort_records(dut, device, records, halves, report)
        check_sorted(records, result.output)
        check_phase1_memory(device, records, halves)
        for checker in checkers:
            checker.idle()
        dut._log.info("%s: %d records, phase 1 %d cycles, phase 2 %d cycles", name,
                      len(records), result.phase1_cycles, result.phase2_cycles)


@cocotb.test(skip=MODE != "suite")
async def kernel_flags_bad_arguments_without_memory_traffic(dut):
    """Each bad argument ends the job with its status bit, in the register and in the report,
    and the report is the only write (none at all when the report's own address is bad)."""
    rng = random.Random(SEED + 1)
    device, checkers = await bring_up(dut, Pauses(rng, 0.0))
    good = default_halves(LAYOUT)
    report = default_report_address(LAYOUT)
    last = len(good) - 1
    cases = [
        ("capacity", CONFIG.capacity + 1, good, report),
        ("alignment", 10, good[:-1] + [(good[last][0], good[last][1] + 64)], report),
        ("overlap", 10, [(good[0][0], good[1][0] + 4096)] + good[1:], report),
        ("overlap", 10, good, good[1][1] + LAYOUT.report["alignment"]),     # in a half
        ("alignment", 10, good, report + LAYOUT.beat_bytes),   # the report's own: no report
    ]
    for bit, count, bases, where in cases:
        records = keyed(rng.randrange(KEYS) for _ in range(count)) if count < 10_000 \
            else []
        data = pack_records(records, *WIDTHS) if records else bytes(count * CONFIG.record_bytes)
        device.write_memory(where, bytes(LAYOUT.report_bytes))
        for checker in checkers:
            checker.bursts["aw"].clear()
        written = where % LAYOUT.report["alignment"] == 0
        try:
            await run_sort(device, LAYOUT, REGISTERS, data, halves=bases, report_address=where,
                           poll_interval=lambda: ClockCycles(dut.ap_clk, 5))
        except KernelError as error:
            assert written and error.status == 1 << STATUS_BITS[bit], (bit, hex(error.status))
            await check_report(device, error.report, count, error.status)
        except ReportError:     # nothing written: the status register alone says why
            assert not written, bit
            assert (await read_counters(device))[0] == 1 << STATUS_BITS[bit], bit
        else:
            raise AssertionError(f"{bit}: the kernel accepted bad arguments")
        for tree, checker in enumerate(checkers):
            assert checker.bursts["ar"] == [], bit
            reports = [(where, LAYOUT.report_bytes // LAYOUT.beat_bytes - 1)] \
                if written and tree == 0 else []
            assert [b[1:] for b in checker.bursts["aw"]] == reports, (bit, checker.bursts["aw"])
    # And a good job right after.
    records = keyed(rng.randrange(KEYS) for _ in range(50))
    check_sorted(records, (await sort_records(dut, device, records)).output)


@cocotb.test(skip=MODE != "suite")
async def control_word_is_defined_from_reset(dut):
    """Right after reset the control word reads ap_idle and nothing else (no X: cocotbext-axi
    refuses an undefined RDATA)."""
    device, _ = await bring_up(dut, Pauses(random.Random(SEED), 0.0))
    assert await device.read_register(CONTROL) == 1 << AP_IDLE


@cocotb.test(skip=MODE != "suite")
async def kernel_recovers_from_a_reset_in_the_middle_of_a_job(dut):
    rng = random.Random(SEED + 2)
    device, _ = await bring_up(dut, Pauses(rng, PAUSE))
    records = keyed(rng.randrange(KEYS) for _ in range(min(CONFIG.capacity, 400)))
    job = cocotb.start_soon(sort_records(dut, device, records))
    await ClockCycles(dut.ap_clk, 150)       # well inside phase 1
    job.cancel()
    dut.ap_rst_n.value = 0
    await ClockCycles(dut.ap_clk, 5)
    dut.ap_rst_n.value = 1
    await ClockCycles(dut.ap_clk, 5)
    records = keyed(rng.randrange(KEYS) for _ in range(min(CONFIG.capacity, 200)))
    check_sorted(records, (await sort_records(dut, device, records)).output)


@cocotb.test(skip=MODE != "bulk")
async def kernel_sorts_a_big_job(dut):
    """TOPSORT_RECORDS random records (default: the configuration's capacity)."""
    rng = random.Random(SEED + 3)
    device, checkers = await bring_up(dut, Pauses(rng, PAUSE))
    count = int(os.environ.get("TOPSORT_RECORDS", CONFIG.capacity))
    records = keyed(rng.randrange(KEYS) for _ in range(count))
    result = await sort_records(dut, device, records)
    check_sorted(records, result.output)
    check_phase1_memory(device, records)
    check_channels(checkers)
    check_bursts_inside(checkers)
    dut._log.info("%d records: phase 1 %d cycles, phase 2 %d cycles", len(records),
                  result.phase1_cycles, result.phase2_cycles)
    stats = os.environ.get("TOPSORT_STATS")
    if stats:
        with open(stats, "w") as out:
            json.dump({"records": count, "phase1_cycles": result.phase1_cycles,
                       "phase2_cycles": result.phase2_cycles}, out)


@cocotb.test(skip=MODE != "sweep")
async def kernel_cycles_over_a_sweep(dut):
    """One job per count of TOPSORT_COUNTS (a JSON list) and input order of TOPSORT_ORDERS (a
    JSON list of ``INPUT_ORDERS``, random alone by default), each checked exactly; the cycle
    counters of every job as a JSON list in TOPSORT_STATS (for the performance model's
    validation, :mod:`topsort_hdl.analysis.qor.measure`)."""
    device, _ = await bring_up(dut, Pauses(random.Random(SEED + 5), PAUSE))
    rows = []
    orders = json.loads(os.environ.get("TOPSORT_ORDERS", '["random"]'))
    counts = json.loads(os.environ["TOPSORT_COUNTS"])
    for order, count in ((o, n) for o in orders for n in counts):
        if order == "random":       # the same keys in any sweep
            rng = random.Random(f"{SEED}-{count}")
            records = keyed(rng.randrange(KEYS) for _ in range(count))
        else:
            rng = random.Random(f"{SEED}-{count}-{order}")
            records = keyed(key for key, _ in make_input(rng, count, order, CONFIG.key_bits))
        result = await sort_records(dut, device, records)
        check_sorted(records, result.output)
        rows.append({"records": count, "order": order, "phase1_cycles": result.phase1_cycles,
                     "phase2_cycles": result.phase2_cycles})
        with open(os.environ["TOPSORT_STATS"], "w") as out:
            json.dump(rows, out)


@cocotb.test(skip=MODE != "first")
async def first_job_after_power_up(dut):
    """TOPSORT_RECORDS records as the first job after power-up, every channel pausing at
    random: no state may depend on an earlier job or on an initialiser firing. Keys mix 0,
    all-ones, one repeated key and random ones. Exact output, the runs phase 1 left, the
    report, every master idle after it and every burst inside the job's buffers."""
    device, checkers = await bring_up(dut, Pauses(random.Random(SEED + 7), PAUSE))
    count = int(os.environ["TOPSORT_RECORDS"])
    keys = random.Random(f"{SEED}-first-{count}")
    records = keyed(keys.choice([0, TOP_KEY, 7, keys.randrange(TOP_KEY)])
                    for _ in range(count))
    result = await sort_records(dut, device, records)
    check_sorted(records, result.output)
    check_phase1_memory(device, records)
    for checker in checkers:
        checker.idle()
    check_bursts_inside(checkers)


def order_keys_workload(order, rng):
    """Keys that get ``order`` wrong first: its type's special keys (NaNs, +-0, +-inf,
    subnormals, the extremes) twice each among random bit patterns, shuffled; then the special
    keys and more random ones already in the order asked for, and the same reversed."""
    special = special_keys(order["key_type"], CONFIG.key_bits)
    shuffled = special * 2 + [rng.getrandbits(CONFIG.key_bits) for _ in range(20)]
    rng.shuffle(shuffled)
    more = special + [rng.getrandbits(CONFIG.key_bits) for _ in range(10)]
    in_order = [k for _, k in sorted(zip(order_of(more, order), more, strict=True))]
    return shuffled + in_order + in_order[::-1]


class KeyOrderOverride(Device):
    """``device``, with every write of the key_order argument replaced by ``word``."""

    def __init__(self, device, word):
        self.device, self.word = device, word

    async def write_register(self, offset, value):
        if offset == REGISTERS.offset(KEY_ORDER_ARGUMENT):
            value = self.word
        await self.device.write_register(offset, value)

    async def read_register(self, offset):
        return await self.device.read_register(offset)

    def write_memory(self, address, data):
        self.device.write_memory(address, data)

    def read_memory(self, address, length):
        return self.device.read_memory(address, length)


@cocotb.test(skip=MODE != "orders")
async def kernel_sorts_every_key_type_and_order(dut):
    """One job per key type and order, back to back on one kernel (the order changes every
    job): special keys shuffled, in order and reversed, every channel pausing at random; the
    output exactly in the golden order, the runs phase 1 left in memory as the golden model's,
    values with their keys. Then a job of equal keys, a key_order no type has (flagged, no
    memory traffic but the report) and a good job after it."""
    rng = random.Random(SEED + 9)
    device, checkers = await bring_up(dut, Pauses(rng, PAUSE))
    for order in key_orders():
        records = keyed(order_keys_workload(order, rng))
        result = await sort_records(dut, device, records, order=order)
        check_sorted(records, result.output, order)
        check_phase1_memory(device, records, order=order)
        dut._log.info("%s: %d records", order, len(records))
    equal = {"key_type": "float", "descending": True} if CONFIG.key_bits in FLOAT_KEY_BITS \
        else ASCENDING
    records = keyed([TOP_KEY] * 70)
    check_sorted(records, (await sort_records(dut, device, records, order=equal)).output, equal)
    for word in (3, 1 << 3, 1 << 31):
        for checker in checkers:
            checker.bursts["ar"].clear()
        records = keyed(rng.getrandbits(CONFIG.key_bits) for _ in range(20))
        try:
            await run_sort(KeyOrderOverride(device, word), LAYOUT, REGISTERS,
                           pack_records(records, *WIDTHS),
                           poll_interval=lambda: ClockCycles(dut.ap_clk, 5))
        except KernelError as error:
            assert error.status == 1 << STATUS_BITS["key_order"], (word, hex(error.status))
            await check_report(device, error.report, len(records), error.status)
        else:
            raise AssertionError(f"key_order {word:#x} accepted")
        assert all(checker.bursts["ar"] == [] for checker in checkers), word
    order = key_orders()[-1]
    records = keyed(order_keys_workload(order, rng))
    check_sorted(records, (await sort_records(dut, device, records, order=order)).output, order)


def undefined_signals(scope, path=""):
    """The nets and registers under ``scope`` that are X or Z, by hierarchical name (memories'
    words are left out: their contents are data, zero from power-up)."""
    for child in scope:
        name = f"{path}{child._name}"
        if isinstance(child, HierarchyObject):
            yield from undefined_signals(child, f"{name}.")
        elif isinstance(child, LogicObject | LogicArrayObject):
            if not child.value.is_resolvable:
                yield name


@cocotb.test(skip=MODE != "power_up")
async def every_signal_is_defined_from_power_up(dut):
    """No net or register of the design is X or Z at power-up, nor after cycles without any
    reset pulse (a device configured and clocked, never reset), nor after a reset: every
    register has its initial value and every combinational path is evaluated at time zero,
    whatever the simulator's language mode. The inputs are held at 0 (ap_rst_n high)."""
    for name in ("awaddr", "awvalid", "wdata", "wstrb", "wvalid", "bready", "araddr",
                 "arvalid", "rready"):
        getattr(dut, f"s_axi_control_{name}").value = 0
    for tree in range(CONFIG.trees):
        for name in ("awready", "arready", "wready", "bid", "bresp", "bvalid", "rid", "rdata",
                     "rresp", "rlast", "rvalid"):
            getattr(dut, f"m{tree:02d}_axi_{name}").value = 0
    dut.ap_rst_n.value = 1
    dut.ap_clk.value = 0
    for moment in ("at power-up", "after 10 cycles without reset", "after a reset"):
        if moment == "after a reset":
            dut.ap_rst_n.value = 0
            await ClockCycles(dut.ap_clk, 3)
            dut.ap_rst_n.value = 1
        elif moment != "at power-up":
            Clock(dut.ap_clk, 10, unit="ns").start()
            await ClockCycles(dut.ap_clk, 10)
        await Timer(1, unit="ns")
        await ReadOnly()
        undefined = sorted(undefined_signals(dut))
        assert not undefined, f"{len(undefined)} signals X or Z {moment}: {undefined[:20]}"
        await Timer(1, unit="ns")


@cocotb.test(skip=MODE != "file")
async def sort_file(dut):
    """``topsort-hdl sort``: the records of TOPSORT_INPUT into TOPSORT_OUTPUT."""
    rng = random.Random(SEED)
    device, checkers = await bring_up(dut, Pauses(rng, PAUSE))
    data = open(os.environ["TOPSORT_INPUT"], "rb").read()
    progress = os.environ.get("TOPSORT_PROGRESS")

    async def poll():
        await ClockCycles(dut.ap_clk, 100)
        if progress:
            with open(progress, "w") as out:
                json.dump({"cycles": int(get_sim_time("ns")) // 10, "phase": "sorting"}, out)

    order = {"key_type": os.environ.get("TOPSORT_KEY_TYPE", "unsigned"),
             "descending": os.environ.get("TOPSORT_DESCENDING") == "1"}
    job = run_sort(device, LAYOUT, REGISTERS, data, poll_interval=poll, **order)
    result = await with_timeout(job, job_deadline_ns(len(data) // CONFIG.record_bytes), "ns")
    with open(os.environ["TOPSORT_OUTPUT"], "wb") as out:
        out.write(result.output)
    with open(os.environ["TOPSORT_STATS"], "w") as out:
        json.dump({"phase1_cycles": result.phase1_cycles,
                   "phase2_cycles": result.phase2_cycles, "status": result.status,
                   "records": result.report.records, "kernel_report": asdict(result.report)},
                  out)
    await Timer(1, unit="ns")
