"""The leaf feeder, the root packer and the tree controller against Python models (the
plan, for the controller), in the Amaranth simulator."""

import random

import pytest
from amaranth.hdl import ClockDomain, Module
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.core.config import PRESETS
from topsort_hdl.core.plan import leaf_regions, tree_plan
from topsort_hdl.hardware.axi import AxiParams, BeatLayout
from topsort_hdl.hardware.kernel import packer
from topsort_hdl.hardware.kernel.controller import ControllerShape, TreeController
from topsort_hdl.hardware.kernel.feeder import LeafFeeder, feeder_command_layout
from topsort_hdl.hardware.kernel.packer import RootPacker, packer_command_layout
from topsort_hdl.hardware.records import BundleLayout, RecordLayout, pad_key, pad_run, tree_record
from topsort_hdl.sim.amaranth.stream_harness import Job, run_jobs

RECORD = RecordLayout()
PADDED = tree_record(RECORD)
PAD = (pad_key(PADDED), 0)


def pack_struct(layout, **fields):
    """The integer value of a struct layout's fields."""
    return sum(value << layout[name].offset for name, value in fields.items())


def random_records(rng, count, record=RECORD):
    """``count`` records whose keys are often 0 or all-ones (the pad flag must stay clear)."""
    keys = [0, record.max_key, rng.randrange(record.max_key + 1)]
    return [(rng.choice(keys), rng.randrange(record.max_value + 1)) for _ in range(count)]


# The leaf feeder -----------------------------------------------------------------------------


def feeder_model(records, run_log2, groups, pad=PAD):
    """``(record, last)`` of every tree record a command sends (``pad`` for an empty run)."""
    length = 1 << run_log2
    out = []
    for k in range(groups):
        run = records[k * length:(k + 1) * length]
        out += [(r, i == len(run) - 1) for i, r in enumerate(run)] or [(pad, True)]
    return out


def region_beats(params, record, words, offset, rng):
    """Beats carrying the packed records ``words`` from record slot ``offset`` of the first
    beat on; the slots outside the region hold random garbage."""
    if not words:
        return []
    width, per_beat = record.size, params.data_width // record.size
    slots = [rng.getrandbits(width) for _ in range(offset)] + list(words)
    while len(slots) % per_beat:
        slots.append(rng.getrandbits(width))
    count = len(slots) // per_beat
    layout, size = BeatLayout(params), width // 8
    beats = []
    for b in range(count):
        word = sum(s << (i * width) for i, s in enumerate(slots[b * per_beat:(b + 1) * per_beat]))
        begin = offset * size if b == 0 else 0
        end = ((offset + len(words) - 1) % per_beat + 1) * size if b == count - 1 else None
        beats.append(layout.pack(word, begin, end, b == count - 1))
    return beats


def feeder_job(rng, params, record, commands, count_bits=32):
    """A harness job for ``commands`` of ``(records, run_log2, groups)``; also the expected
    output words. Each region starts at a random slot of its first beat."""
    cmd_layout = feeder_command_layout(count_bits)
    out_layout = BundleLayout(tree_record(record), 1)
    per_beat = params.data_width // record.size
    inputs, expected = {"cmd": [], "beats": []}, []
    for count, run_log2, groups in commands:
        records = random_records(rng, count, record)
        inputs["cmd"].append(pack_struct(cmd_layout, records=count, run_log2=run_log2,
                                         groups=groups))
        inputs["beats"] += region_beats(params, record, [record.pack(*r) for r in records],
                                        rng.randrange(per_beat), rng)
        pad = (pad_key(tree_record(record)), 0)
        expected += [out_layout.pack([r], last)
                     for r, last in feeder_model(records, run_log2, groups, pad)]
    return Job(inputs, {"o": len(expected)}), expected


FEEDER_COMMANDS = [
    [(0, 0, 1), (1, 0, 1), (37, 4, 3), (0, 2, 0), (5, 1, 3)],
    [(1, 4, 2), (40, 1, 20), (0, 4, 3), (16, 4, 1), (25, 0, 25)],
    [(33, 4, 5), (2, 1, 1), (0, 3, 0), (3, 1, 4), (17, 4, 2)],
]


def random_commands(rng):
    """Commands of random size, run length 1, 2 or 16, with up to two spare (empty) runs."""
    commands = []
    for _ in range(6):
        count, run_log2 = rng.choice([0, 1, rng.randint(2, 60)]), rng.choice([0, 1, 4])
        groups = -(-count // (1 << run_log2)) + rng.choice([0, 0, 1, 2])
        commands.append((count, run_log2, groups))
    commands.append((rng.randint(1, 30), 1, 15))  # the harness job ends on a command with runs
    return commands


@pytest.mark.parametrize("data_width,key_bits,value_bits", [
    (64, 32, 32), (128, 32, 32), (512, 32, 32), (128, 24, 8),
])
def test_feeder_matches_model_under_stalls(data_width, key_bits, value_bits):
    rng = random.Random(f"feeder-{data_width}-{key_bits}")
    record, params = RecordLayout(key_bits, value_bits), AxiParams(data_width)
    jobs, expected = [], []
    for commands in FEEDER_COMMANDS + [random_commands(rng) for _ in range(3)]:
        job, words = feeder_job(rng, params, record, commands)
        jobs.append(job)
        expected.append(words)
    results = run_jobs(LeafFeeder(record, params), jobs, seed=data_width, gap=0.3, stall=0.4)
    out_layout = BundleLayout(tree_record(record), 1)
    for index, (result, words) in enumerate(zip(results, expected, strict=True)):
        for n, (have, want) in enumerate(zip(result.outputs["o"], words, strict=True)):
            assert have == want, (f"job {index}, record {n}: got {out_layout.unpack(have)}, "
                                  f"expected {out_layout.unpack(want)}")


@pytest.mark.parametrize("data_width", [64, 128, 512])
def test_feeder_full_speed(data_width):
    rng = random.Random(f"feeder-speed-{data_width}")
    params = AxiParams(data_width)
    commands = [(100, 4, 8), (45, 0, 45), (7, 1, 6), (0, 2, 3)]
    jobs, expected = zip(*(feeder_job(rng, params, RECORD, [c]) for c in commands), strict=True)
    results = run_jobs(LeafFeeder(RECORD, params), list(jobs))
    for (count, _, _), result, words in zip(commands, results, expected, strict=True):
        assert result.outputs["o"] == words
        cycles = result.transfer_cycles["o"]
        assert cycles == list(range(cycles[0], cycles[0] + len(words))), f"{count} records"


def test_feeder_narrow_counts():
    """count_bits=4: a run of 2**4 records, the widest the command can name."""
    rng = random.Random(5)
    params = AxiParams(128)
    job, words = feeder_job(rng, params, RECORD, [(15, 4, 1), (3, 0, 15), (0, 4, 2)], 4)
    (result,) = run_jobs(LeafFeeder(RECORD, params, count_bits=4), [job], gap=0.2, stall=0.2)
    assert result.outputs["o"] == words


# The root packer -----------------------------------------------------------------------------


def packer_job(rng, rate, counts, max_run, count_bits=40, extra=0):
    """A harness job for packer jobs of ``counts`` records each, sent as runs of random length
    (empty ones included) the way a merge unit emits them: real records first, then pads,
    sometimes whole bundles of pads before the run's ``last``; also the expected output words.
    With ``extra``, a job's final run carries up to that many more real records past its count
    (taken and dropped)."""
    in_layout = BundleLayout(PADDED, rate)
    words, expected = [], []
    for count in counts:
        records = random_records(rng, count)
        lengths = []
        while sum(lengths) < count:
            lengths.append(min(rng.randint(0, max_run), count - sum(lengths)))
        start = 0
        if lengths and extra:
            more = rng.randint(1, extra)
            records += random_records(rng, more)
            lengths[-1] += more
        for length in lengths:
            run = pad_run(records[start:start + length], rate, PADDED)
            run += [[PAD] * rate for _ in range(rng.choice([0, 0, 1, 2]))]
            words += in_layout.pack_run(run)
            start += length
        for first in range(0, count, rate):
            word = records[first:min(first + rate, count)]
            expected.append(sum(RECORD.pack(*r) << (i * RECORD.size)
                                for i, r in enumerate(word)))
    cmd_layout = packer_command_layout(count_bits)
    inputs = {"cmd": [pack_struct(cmd_layout, records=c) for c in counts], "i": words}
    return Job(inputs, {"o": len(expected)}), expected


@pytest.mark.parametrize("rate,harness_jobs", [(1, 5), (2, 5), (4, 3), (8, 5), (32, 1)])
def test_packer_matches_model_under_stalls(rate, harness_jobs):
    rng = random.Random(f"packer-{rate}")
    jobs, expected = [], []
    for _ in range(harness_jobs):
        counts = [0, 1, rate - 1, rate, 5 * rate + 3, rate + 1, 0, 2 * rate]
        rng.shuffle(counts)
        counts.append(rng.randint(1, 3 * rate))  # the harness job ends on real records
        job, words = packer_job(rng, rate, counts, max_run=3 * rate)
        jobs.append(job)
        expected.append(words)
    results = run_jobs(RootPacker(RECORD, rate), jobs, seed=rate, gap=0.3, stall=0.4)
    # (run_jobs also fails when a job leaves input behind: every packer job must take its
    # last run whole, trailing pad bundles included, or phase 2 would pair a stray run.)
    for index, (result, words) in enumerate(zip(results, expected, strict=True)):
        assert result.outputs["o"] == words, f"job {index}"


@pytest.mark.parametrize("rate", [1, 2, 8, 32])
def test_packer_drops_records_past_the_count(rate):
    """A final run longer than the job: the records past the count are taken (the whole run,
    up to ``last``) and not sent, in the final word's slots or in later bundles."""
    rng = random.Random(f"packer-extra-{rate}")
    counts = [1, rate - 1 or 1, rate, 2 * rate + 1, 0, 3 * rate - 1, 4 * rate, 5]
    job, words = packer_job(rng, rate, counts, max_run=2 * rate, extra=2 * rate)
    (result,) = run_jobs(RootPacker(RECORD, rate), [job], seed=rate, gap=0.3, stall=0.4)
    assert result.outputs["o"] == words


@pytest.mark.parametrize("rate", [1, 4, 8, 32])
def test_packer_back_to_back_jobs(rate):
    """Many jobs in one stream with no input gap and no backpressure: counts around multiples
    of the rate and of four words (the ring's position range), zero-record jobs in between."""
    rng = random.Random(f"packer-b2b-{rate}")
    counts = [4 * rate, 4 * rate + 1, 4 * rate - 1, 0, 3 * rate, 1, 0, 0, rate, rate + 1,
              2 * rate - 1, 8 * rate + 3, 7]
    job, words = packer_job(rng, rate, counts, max_run=3 * rate)
    (result,) = run_jobs(RootPacker(RECORD, rate), [job])
    assert result.outputs["o"] == words


@pytest.mark.parametrize("rate,count_bits", [(2, 1), (8, 3), (8, 4), (4, 6)])
def test_packer_narrow_counts(rate, count_bits):
    """A count narrower than log2(rate) + 2 bits (the low bits the packer compares)."""
    rng = random.Random(f"packer-narrow-{rate}-{count_bits}")
    top = (1 << count_bits) - 1
    counts = [top, 0, 1, top, min(rate, top), top - 1, top]
    job, words = packer_job(rng, rate, counts, max_run=2 * rate, count_bits=count_bits)
    (result,) = run_jobs(RootPacker(RECORD, rate, count_bits=count_bits), [job], seed=count_bits,
                         gap=0.3, stall=0.4)
    assert result.outputs["o"] == words


@pytest.mark.parametrize("rate,chunk_bits", [(1, 1), (4, 2), (4, 1)])
def test_packer_count_chunks(rate, chunk_bits, monkeypatch):
    """The count's bits above the low ones go in chunks, a chunk's carry a cycle after the
    one below it wrapped: with chunks of a bit or two, counts that ripple carries through
    several chunks (and stop just short of or just past a wrap) still end exactly."""
    monkeypatch.setattr(packer, "CHUNK_BITS", chunk_bits)
    rng = random.Random(f"packer-chunks-{rate}-{chunk_bits}")
    unit = 16 * rate            # 4*rate records wrap the low bits; 4 of those per chunk of 2
    counts = [4 * unit, 4 * unit + 1, 0, 4 * unit - 1, unit + rate, 9 * unit - 1, 8 * unit, 3]
    job, words = packer_job(rng, rate, counts, max_run=3 * rate, count_bits=12)
    (result,) = run_jobs(RootPacker(RECORD, rate, count_bits=12), [job], seed=chunk_bits,
                         gap=0.2, stall=0.3)
    assert result.outputs["o"] == words


@pytest.mark.parametrize("rate", [1, 2, 8])
def test_packer_full_speed(rate):
    rng = random.Random(f"packer-speed-{rate}")
    in_layout = BundleLayout(PADDED, rate)
    jobs, expected = [], []
    for count in (16 * rate, 16 * rate + max(1, rate // 2)):
        records = random_records(rng, count)
        words = [sum(RECORD.pack(*r) << (i * RECORD.size)
                     for i, r in enumerate(records[f:f + rate])) for f in range(0, count, rate)]
        jobs.append(Job({"cmd": [count], "i": in_layout.pack_run(pad_run(records, rate, PADDED))},
                        {"o": len(words)}))
        expected.append(words)
    # Runs of random length: bundles with pads still go in one per cycle.
    job, words = packer_job(rng, rate, [20 * rate], max_run=2 * rate)
    jobs.append(job)
    expected.append(words)
    results = run_jobs(RootPacker(RECORD, rate), jobs)
    for result, words in zip(results[:2], expected[:2], strict=True):
        assert result.outputs["o"] == words
        cycles = result.transfer_cycles["o"]
        assert cycles == list(range(cycles[0], cycles[0] + len(words)))
    assert results[2].outputs["o"] == expected[2]
    bundles = len(jobs[2].inputs["i"])
    assert bundles > len(expected[2])  # some bundles were part pads
    # the last bundle goes in at first + bundles - 1, its word out two cycles later at most
    assert results[2].transfer_cycles["o"][-1] <= results[2].first_input_cycle["i"] + bundles + 1


# Busy flags, parameters, Verilog -------------------------------------------------------------


def simulate(dut, testbench):
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.dut = dut
    simulator = Simulator(top)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()


def test_feeder_busy_and_idle_inputs():
    params = AxiParams(128)
    dut = LeafFeeder(RECORD, params)
    beat = BeatLayout(params).pack(RECORD.pack(1, 2) | RECORD.pack(3, 4) << 64, 0, 16, 1)
    cmd_layout = feeder_command_layout(32)

    async def testbench(ctx):
        ctx.set(dut.o.ready, 1)
        assert not ctx.get(dut.busy) and ctx.get(dut.cmd.ready)
        ctx.set(dut.cmd.payload.as_value(), pack_struct(cmd_layout, records=2, run_log2=0,
                                                       groups=3))
        ctx.set(dut.cmd.valid, 1)
        await ctx.tick()
        ctx.set(dut.cmd.valid, 0)
        assert ctx.get(dut.busy) and not ctx.get(dut.cmd.ready)
        assert not ctx.get(dut.o.valid)  # no beat yet
        await ctx.tick().repeat(3)
        assert ctx.get(dut.busy) and not ctx.get(dut.o.valid)
        ctx.set(dut.beats.payload.as_value(), beat)
        ctx.set(dut.beats.valid, 1)
        await ctx.tick()
        ctx.set(dut.beats.valid, 0)
        seen = []
        for _ in range(3):
            assert ctx.get(dut.busy) and ctx.get(dut.o.valid)
            seen.append(ctx.get(dut.o.payload.as_value()))
            await ctx.tick()
        assert not ctx.get(dut.busy) and not ctx.get(dut.o.valid)
        out = BundleLayout(PADDED, 1)
        assert seen == [out.pack([(1, 2)], 1), out.pack([(3, 4)], 1), out.pack([PAD], 1)]

    simulate(dut, testbench)


def test_packer_busy_and_no_input_without_job():
    rate = 2
    dut = RootPacker(RECORD, rate)
    bundle = BundleLayout(PADDED, rate).pack([(5, 6), PAD], 1)

    async def testbench(ctx):
        ctx.set(dut.i.payload.as_value(), bundle)
        ctx.set(dut.i.valid, 1)
        for _ in range(3):
            assert not ctx.get(dut.i.ready) and not ctx.get(dut.busy)
            await ctx.tick()
        ctx.set(dut.cmd.payload.as_value(), 1)
        ctx.set(dut.cmd.valid, 1)
        assert ctx.get(dut.cmd.ready)
        await ctx.tick()
        ctx.set(dut.cmd.valid, 0)
        assert ctx.get(dut.busy) and ctx.get(dut.i.ready)
        await ctx.tick()
        ctx.set(dut.i.valid, 0)
        assert ctx.get(dut.busy)
        await ctx.tick()
        assert ctx.get(dut.busy) and ctx.get(dut.o.valid) and ctx.get(dut.cmd.ready)
        assert ctx.get(dut.o.payload.as_value()) == RECORD.pack(5, 6)
        await ctx.tick().repeat(2)
        assert ctx.get(dut.o.valid) and ctx.get(dut.busy)  # held while o is not ready
        ctx.set(dut.o.ready, 1)
        await ctx.tick()
        assert not ctx.get(dut.o.valid) and not ctx.get(dut.busy)

    simulate(dut, testbench)


@pytest.mark.parametrize("build,error,message", [
    (lambda: LeafFeeder(64, AxiParams()), TypeError, "record must be a RecordLayout, not 64"),
    (lambda: LeafFeeder(RECORD, 512), TypeError, "params must be an AxiParams, not 512"),
    (lambda: LeafFeeder(RecordLayout(32, 64), AxiParams(512)), ValueError,
     "params.data_width must be a multiple of the record size (96 bits), not 512"),
    (lambda: LeafFeeder(RecordLayout(64, 64), AxiParams(64)), ValueError,
     "params.data_width must be a multiple of the record size (128 bits), not 64"),
    (lambda: LeafFeeder(RecordLayout(2, 2), AxiParams(64)), ValueError,
     "record size must be a multiple of 8 bits, not 4"),
    (lambda: LeafFeeder(RECORD, AxiParams(), count_bits=0), ValueError,
     "count_bits must be between 1 and 64, not 0"),
    (lambda: LeafFeeder(RECORD, AxiParams(), count_bits=32.0), TypeError,
     "count_bits must be an integer, not 32.0"),
    (lambda: RootPacker("record", 4), TypeError, "record must be a RecordLayout, not 'record'"),
    (lambda: RootPacker(RECORD, 3), ValueError,
     "rate must be a power of two between 1 and 32, not 3"),
    (lambda: RootPacker(RECORD, 64), ValueError,
     "rate must be a power of two between 1 and 32, not 64"),
    (lambda: RootPacker(RECORD, 0), ValueError,
     "rate must be a power of two between 1 and 32, not 0"),
    (lambda: RootPacker(RECORD, 4, count_bits=65), ValueError,
     "count_bits must be between 1 and 64, not 65"),
])
def test_parameter_errors(build, error, message):
    assert constructor_error(build) == (error, message)


@pytest.mark.parametrize("name,build", [
    ("leaf_feeder", lambda: LeafFeeder(RECORD, AxiParams(512))),
    ("root_packer", lambda: RootPacker(RECORD, 8)),
])
def test_blocks_convert_to_verilog(name, build):
    from topsort_hdl.targets.units import emit_verilog

    text = emit_verilog(build(), name)
    assert f"module {name}(" in text.replace(" (", "(")


# The tree controller -------------------------------------------------------------------------


def controller_passes(config, records, halves, rng):
    """Run a phase-1 TreeController over ``records`` records, every command port taking
    commands at random and ``writer_done`` pulsing a random while after a pass's last leaf
    command. Returns per pass ``{"writer", "packer", "feeder", "reader"}`` (the commands as
    plain tuples) and the final ``(half, run_log2)``."""
    dut = TreeController(ControllerShape.of(config))
    leaves = config.leaves
    passes, final = [], []

    async def testbench(ctx):
        ctx.set(dut.records, records)
        ctx.set(dut.halves[0], halves[0])
        ctx.set(dut.halves[1], halves[1])
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        current, wait = None, None
        for _ in range(200 * leaves):
            if current is None:
                current = {"writer": [], "packer": [], "feeder": [None] * leaves, "reader": []}
            for name in ("writer_cmd", "packer_cmd", "reader_cmd"):
                ctx.set(getattr(dut, name).ready, rng.random() < 0.6)
            for j in range(leaves):
                ctx.set(dut.feeder_cmd[j].ready, rng.random() < 0.6)
            ctx.set(dut.writer_done, wait == 0)
            await ctx.delay(1e-9)     # let the ready/valid handshakes settle
            if ctx.get(dut.writer_cmd.valid) and ctx.get(dut.writer_cmd.ready):
                cmd = ctx.get(dut.writer_cmd.payload)
                current["writer"].append((int(cmd.addr[0]), int(cmd.bytes)))
            if ctx.get(dut.packer_cmd.valid) and ctx.get(dut.packer_cmd.ready):
                current["packer"].append(int(ctx.get(dut.packer_cmd.payload).records))
            if ctx.get(dut.reader_cmd.valid) and ctx.get(dut.reader_cmd.ready):
                cmd = ctx.get(dut.reader_cmd.payload)
                current["reader"].append((int(cmd.target), int(cmd.addr), int(cmd.bytes)))
            for j in range(leaves):
                port = dut.feeder_cmd[j]
                if ctx.get(port.valid) and ctx.get(port.ready):
                    assert current["feeder"][j] is None, f"leaf {j} given two commands"
                    cmd = ctx.get(port.payload)
                    current["feeder"][j] = (int(cmd.records), int(cmd.run_log2),
                                            int(cmd.groups))
            await ctx.tick()
            if wait == 0:
                passes.append(current)
                current, wait = None, None
            elif wait is not None:
                wait -= 1
            elif None not in current["feeder"] and \
                    len(current["reader"]) == sum(1 for f in current["feeder"] if f[0]):
                wait = rng.randrange(4)     # the pass's output is being written
            if ctx.get(dut.done):
                assert current is None or current == {"writer": [], "packer": [],
                                                      "feeder": [None] * leaves, "reader": []}
                final.append((ctx.get(dut.half), ctx.get(dut.run_log2)))
                return
        raise AssertionError(f"the controller never finished: {passes} {current} {wait}")

    simulate(dut, testbench)
    return passes, final[0]


@pytest.mark.parametrize("preset,records", [
    ("tiny", 1), ("tiny", 2), ("tiny", 9), ("tiny", 63), ("tiny", 64), ("tiny", 65),
    ("tiny", 300), ("tiny", 1234), ("small", 8 * 8 * 8 * 3 + 5), ("u280", 16 * 16 * 4 * 3),
])
def test_controller_follows_the_plan(preset, records):
    """Every pass's commands are the plan's: leaves spread, short runs last, ping-pong halves,
    the last pass tuned to leave at most F runs."""
    config = PRESETS[preset]
    rng = random.Random(records)
    halves = (5 * config.channel_bytes, 2 * config.channel_bytes)   # anywhere, either order
    passes, (half, run_log2) = controller_passes(config, records, halves, rng)
    plan = tree_plan(records, config.leaves, config.runs_per_tree, config.first_run_length)
    assert len(passes) == len(plan.passes)
    size = config.record_bytes
    for got, step in zip(passes, plan.passes, strict=True):
        target = halves[step.source ^ 1]
        assert got["writer"] == [(target, records * size)]
        assert got["packer"] == [records]
        regions = leaf_regions(records, step, config.leaves)
        log2 = step.run_length.bit_length() - 1
        assert got["feeder"] == [(n, log2, step.groups) for _, n, _ in regions]
        source = halves[step.source]
        assert got["reader"] == [(j, source + first * size, n * size)
                                 for j, (first, n, _) in enumerate(regions) if n]
    assert (half, 1 << run_log2) == (plan.final_half, plan.final_run_length)
