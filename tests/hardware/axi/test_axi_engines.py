"""The AXI read and write engines in the Amaranth simulator, against a checked AXI memory.

Every run checks the data byte for byte, the bursts issued against the layout model, and the
AXI rules of :class:`AxiProtocolChecker` on every cycle.
"""

import random
import re

import pytest

from tests.conftest import constructor_error
from topsort_hdl.core.golden import batch_chunks, read_bursts
from topsort_hdl.hardware.axi import REFILL_CYCLES, AxiParams, AxiReadEngine, AxiWriteEngine
from topsort_hdl.sim.amaranth.axi_engine_harness import run_reader, run_writer
from topsort_hdl.sim.amaranth.axi_memory import SparseMemory

CHANNEL = 1 << 28   # the U280's 256 MB pseudo channels

# (data_width, leaves, burst_bytes, max_outstanding)
# (data width, leaves, burst bytes, outstanding, short burst bytes or 0: long bursts)
READER_SHAPES = [(64, 4, 64, 3, 0), (128, 3, 256, 1, 0), (32, 5, 4, 2, 0), (512, 4, 1024, 4, 0),
                 (64, 4, 256, 3, 16), (512, 3, 4096, 4, 1024)]
SLOW_MEMORY = {"stall": 0.3, "leaf_stall": 0.3, "latency": 17, "reorder": True,
               "interleave": True}


def random_regions(rng, leaves, beat, per_leaf=2, largest=900):
    """Regions that start and end anywhere, in several channels, some empty, some tiny, some
    across 4 KB pages."""
    commands = []
    for leaf in range(leaves):
        for _ in range(per_leaf):
            length = rng.choice([0, 1, beat - 1, beat, beat + 1, rng.randrange(largest)])
            addr = rng.randrange(8) * CHANNEL + rng.choice(
                [4096 - rng.randrange(1, 2 * beat), rng.randrange(1 << 20)])
            commands.append((leaf, addr, length))
    rng.shuffle(commands)
    return commands


def fill(memory, commands, rng):
    for _, addr, length in commands:
        memory.write(addr, rng.randbytes(length))


def check_reads(engine, commands, run, memory, short=False):
    for leaf in range(engine.leaves):
        expected = [memory.read(a, n) for t, a, n in commands if t == leaf and n]
        assert run.regions[leaf] == expected, f"leaf {leaf}"
    # Bursts per leaf (ARID) in order, exactly as the layout model splits each region.
    beat = engine.params.beat_bytes
    burst = engine.short_burst_bytes if short else engine.burst_bytes
    for leaf in range(engine.leaves):
        issued = [(addr, length + 1) for rid, addr, length in run.memory.checker.bursts["ar"]
                  if rid == leaf]
        expected = [b for t, a, n in commands if t == leaf
                    for b in read_bursts(a, n, beat, burst)]
        assert issued == expected, f"leaf {leaf} bursts"


@pytest.mark.parametrize("shape", READER_SHAPES, ids=lambda s: "w{}_l{}_b{}_o{}_s{}".format(*s))
@pytest.mark.parametrize("memory_kind", ["ideal", "slow"])
def test_reader_delivers_every_region(shape, memory_kind):
    data_width, leaves, burst, outstanding, short = shape
    params = AxiParams(data_width=data_width, id_width=3)
    engine = AxiReadEngine(params, leaves, burst_bytes=burst, short_burst_bytes=short or None,
                           max_outstanding=outstanding)
    rng = random.Random(data_width + leaves)
    commands = random_regions(rng, leaves, params.beat_bytes)
    memory = SparseMemory()
    fill(memory, commands, rng)
    options = SLOW_MEMORY if memory_kind == "slow" else {}
    run = run_reader(engine, commands, memory=memory, seed=leaves, short=bool(short), **options)
    check_reads(engine, commands, run, memory, short=bool(short))
    assert run.error == 0


def beat_parts(addr, length, beat):
    """The region's bytes per beat: ``(first, end)`` of each beat it touches."""
    return [(max(start, addr), min(start + beat, addr + length))
            for start in range(addr - addr % beat, addr + length, beat)]


def records_of(data, size):
    """(key, record) of each ``size``-byte record of ``data``, the key in its upper half."""
    return [(int.from_bytes(data[a + size // 2:a + size], "little"), data[a:a + size])
            for a in range(0, len(data), size)]


@pytest.mark.parametrize("data_width", [128, 512])
@pytest.mark.parametrize("sort_beats", [False, True])
def test_reader_presort_sorts_each_beat_of_a_region(data_width, sort_beats):
    # Regions of whole records, starting and ending anywhere in a beat, equal keys and keys 0
    # and all-ones among them; a slow memory that reorders and interleaves the leaves.
    from topsort_hdl.hardware.records import RecordLayout

    params = AxiParams(data_width=data_width, id_width=3)
    record = RecordLayout(32, 32)
    size, beat = record.size // 8, params.beat_bytes
    engine = AxiReadEngine(params, 4, burst_bytes=256, max_outstanding=3, presort=record)
    rng = random.Random(data_width + sort_beats)
    memory = SparseMemory()
    commands = []
    for leaf in range(4):
        for _ in range(3):
            addr = size * rng.randrange(1 << 14) + rng.randrange(4) * CHANNEL
            length = size * rng.choice([0, 1, beat // size, rng.randrange(1, 120)])
            commands.append((leaf, addr, length))
            for a in range(addr, addr + length, size):
                key = rng.choice([0, 0xFFFFFFFF, 7, rng.randrange(1 << 32)])
                memory.write(a, (key << 32 | rng.randrange(1 << 32)).to_bytes(size, "little"))
    run = run_reader(engine, commands, memory=memory, seed=3, sort_beats=sort_beats,
                     **SLOW_MEMORY)
    for leaf in range(4):
        regions = [(a, n) for t, a, n in commands if t == leaf and n]
        assert len(run.regions[leaf]) == len(regions)
        for got, (addr, length) in zip(run.regions[leaf], regions, strict=True):
            if not sort_beats:
                assert got == memory.read(addr, length)
                continue
            # Each beat's records: the same ones, in key order (equal keys in any order).
            at = 0
            for first, end in beat_parts(addr, length, beat):
                mine = records_of(got[at:at + end - first], size)
                assert [k for k, _ in mine] == sorted(k for k, _ in mine), (leaf, first)
                assert sorted(mine) == sorted(records_of(memory.read(first, end - first),
                                                         size)), (leaf, first)
                at += end - first
            assert at == len(got)
    assert run.error == 0
    assert constructor_error(lambda: AxiReadEngine(
        AxiParams(data_width=64, id_width=3), 4, burst_bytes=64, presort=record)) == (
        ValueError, "presort records must tile the 64-bit beat two or more times, not 64-bit "
                    "records")


def test_reader_keeps_leaves_apart_with_small_buffers():
    # One-burst buffers and a leaf that never drains until the end: the others must go on.
    params = AxiParams(data_width=64, id_width=2)
    engine = AxiReadEngine(params, 4, burst_bytes=32, max_outstanding=4, buffer_beats=4)
    rng = random.Random(5)
    commands = [(leaf, leaf * CHANNEL + 8 * leaf, 500 + leaf) for leaf in range(4)]
    memory = SparseMemory()
    fill(memory, commands, rng)
    run = run_reader(engine, commands, memory=memory, leaf_stall=0.5, latency=9, reorder=True)
    check_reads(engine, commands, run, memory)


@pytest.mark.parametrize("latency", [2, 9])
def test_reader_marks_a_short_closing_burst_right_behind_another(latency):
    # A leaf's last beat is its closing burst's RLAST, found by counting its bursts in flight:
    # regions that end in a burst of one beat, granted while the leaf's longer bursts are out
    # and returned the cycle after the one before it (a memory without stalls), so that the
    # flag must be right in the cycle after a burst completes.
    params = AxiParams(data_width=64, id_width=2)
    engine = AxiReadEngine(params, 2, burst_bytes=64, max_outstanding=4)
    rng = random.Random(latency)
    commands = [(leaf, leaf * CHANNEL + 4096 * k, 64 * n + 8)
                for k, n in enumerate((1, 2, 3, 1)) for leaf in range(2)]
    memory = SparseMemory()
    fill(memory, commands, rng)
    run = run_reader(engine, commands, memory=memory, latency=latency)
    check_reads(engine, commands, run, memory)
    assert run.error == 0


@pytest.mark.parametrize("leaf_beats", [1, 2, 3])
@pytest.mark.parametrize("buffer_beats,leaf_stall", [(4, 0.9), (6, 0.7), (5, 0.0)])
def test_reader_buffers_full_and_empty(buffer_beats, leaf_stall, leaf_beats):
    # Buffers of one burst and a bit (a leaf's region of the shared memory rounded up to a
    # power of two, its room not): leaves that mostly refuse beats fill them, leaves that take
    # every beat drain them, back-to-back regions and empty ones in between.
    params = AxiParams(data_width=64, id_width=2)
    engine = AxiReadEngine(params, 3, burst_bytes=32, max_outstanding=4,
                           buffer_beats=buffer_beats, leaf_beats=leaf_beats)
    rng = random.Random(buffer_beats)
    commands = [(leaf, leaf * CHANNEL + rng.randrange(64), rng.choice([0, 8, 200, 333]))
                for _ in range(4) for leaf in range(3)]
    memory = SparseMemory()
    fill(memory, commands, rng)
    run = run_reader(engine, commands, memory=memory, seed=buffer_beats, leaf_stall=leaf_stall,
                     latency=3, reorder=True, interleave=True)
    check_reads(engine, commands, run, memory)
    assert run.error == 0


@pytest.mark.parametrize("leaf_beats", [1, 2, 3])
def test_reader_shares_its_buffer_memory_at_a_beat_per_cycle(leaf_beats):
    # Leaves always ready: the memory's one read port moves a beat every cycle over the
    # leaves, so R never waits; one leaf alone takes leaf_beats beats every REFILL_CYCLES
    # cycles, at most one every other cycle.
    params = AxiParams(data_width=64, id_width=3)
    engine = AxiReadEngine(params, 8, burst_bytes=64, max_outstanding=8, leaf_beats=leaf_beats)
    commands = [(leaf, leaf * CHANNEL, 2048) for leaf in range(8)]
    run = run_reader(engine, commands, latency=1)
    first, last = run.memory.beat_cycles["r"]
    assert run.memory.read_beats == 8 * 2048 // 8
    assert last - first + 1 <= run.memory.read_beats * 1.02
    alone = AxiReadEngine(params, 8, burst_bytes=64, max_outstanding=8, leaf_beats=leaf_beats)
    run = run_reader(alone, [(3, 0, 512)], latency=1)
    first, last = run.memory.beat_cycles["r"]
    assert abs(run.cycles - first - max(2, REFILL_CYCLES / leaf_beats) * 64) <= 16


def test_reader_short_changing_under_full_buffers():
    # ``short`` flips while leaves wait for room in buffers of exactly one long burst: a burst
    # must be as long as the one room was checked for (a long one after a short check would
    # overflow and raise ``error``). Bursts mix both lengths; each stays inside one long
    # burst's span and together they tile the region's beats in order.
    params = AxiParams(data_width=64, id_width=2)
    engine = AxiReadEngine(params, 3, burst_bytes=64, short_burst_bytes=16, max_outstanding=4,
                           buffer_beats=8)
    rng = random.Random(11)
    commands = [(leaf, leaf * CHANNEL + rng.randrange(64), rng.choice([1, 8, 300, 777]))
                for _ in range(3) for leaf in range(3)]
    memory = SparseMemory()
    fill(memory, commands, rng)
    run = run_reader(engine, commands, memory=memory, seed=3, leaf_stall=0.6, short_flips=0.3,
                     latency=5, reorder=True, interleave=True)
    for leaf in range(3):
        expected = [memory.read(a, n) for t, a, n in commands if t == leaf and n]
        assert run.regions[leaf] == expected, f"leaf {leaf}"
        bursts = [(addr, length + 1) for rid, addr, length in run.memory.checker.bursts["ar"]
                  if rid == leaf]
        beats = [(addr // 8 + k) for addr, n in bursts for k in range(n)]
        assert beats == [b for t, a, n in commands if t == leaf and n
                         for b in range(a // 8, (a + n + 7) // 8)], f"leaf {leaf} beats"
        assert all(addr // 64 == (addr + 8 * n - 1) // 64 for addr, n in bursts)
    lengths = {length + 1 for _, _, length in run.memory.checker.bursts["ar"]}
    assert lengths - {1, 2} and lengths & {1, 2}
    assert run.error == 0


def test_reader_buffer_style_reaches_the_memory():
    from amaranth.back import rtlil

    params = AxiParams(data_width=64, id_width=2)
    text = rtlil.convert(AxiReadEngine(params, 4, burst_bytes=64, buffer_style="ultra"))
    assert 'attribute \\ram_style "ultra"' in text
    text = rtlil.convert(AxiReadEngine(params, 4, burst_bytes=64))
    assert "ram_style" not in text


def test_reader_top_of_address_space():
    params = AxiParams(data_width=64, addr_width=20, id_width=1)
    engine = AxiReadEngine(params, 2, burst_bytes=64, length_bits=20)
    commands = [(0, (1 << 20) - 100, 100), (1, 0, 13)]
    memory = SparseMemory()
    fill(memory, commands, random.Random(1))
    run = run_reader(engine, commands, memory=memory)
    check_reads(engine, commands, run, memory)
    assert run.error == 0


def test_reader_flags_error_responses_and_still_delivers():
    params = AxiParams(data_width=64, id_width=1)
    engine = AxiReadEngine(params, 2, burst_bytes=64)
    commands = [(0, 0x1000, 300), (1, 0x9000, 300)]
    run = run_reader(engine, commands, error_ranges=[(0x9040, 0x9048)])
    assert [[len(region) for region in r] for r in run.regions.values()] == [[300], [300]]
    assert run.error == 1


def test_reader_rejects_bad_commands_without_touching_memory():
    params = AxiParams(data_width=64, addr_width=20, id_width=2)
    engine = AxiReadEngine(params, 3, burst_bytes=64, length_bits=20)
    # leaf 3 does not exist; the second region runs past the top of the address space
    commands = [(3, 0, 64), (0, (1 << 20) - 8, 16), (1, 0x100, 8)]
    memory = SparseMemory()
    memory.write(0x100, bytes(range(8)))
    run = run_reader(engine, commands, memory=memory, rejected={0, 1})
    assert run.error == 1
    assert run.regions == {0: [], 1: [bytes(range(8))], 2: []}
    assert run.memory.checker.bursts["ar"] == [(1, 0x100, 0)]


def write_jobs(rng, ports, beat, count, largest, slots=1, batch=4096):
    jobs = []
    for k in range(count):
        length = rng.choice([0, 1, beat - 1, beat + 1, ports * beat, rng.randrange(largest)])
        align = batch if slots > 1 else beat
        bases = [(k * 64 + j) * CHANNEL // 16 + align * rng.randrange(4096 // align + 1)
                 for j in range(ports * slots)]
        jobs.append((bases, rng.randbytes(length)))
    return jobs


def check_writes(engine, jobs, run, memory):
    beat = engine.params.beat_bytes
    touched = set()
    expected_bursts = [[] for _ in range(engine.ports)]
    for bases, payload in jobs:
        per_port = [0] * engine.ports
        chunks = batch_chunks(len(payload), bases, engine.batch_bytes, engine.slots)
        for k, (offset, addr, length) in enumerate(chunks):
            assert memory.read(addr, length) == payload[offset:offset + length]
            touched.update(range(addr, addr + length))
            per_port[k % engine.ports] += length
            if engine.slots > 1:   # batches are whole bursts, each in its slot
                expected_bursts[k % engine.ports] += read_bursts(addr, length, beat,
                                                                 engine.burst_bytes)
        if engine.slots == 1:      # each port's region is contiguous
            for j, base in enumerate(bases):
                expected_bursts[j] += read_bursts(base, per_port[j], beat, engine.burst_bytes)
    assert memory.written <= touched, "bytes written outside the jobs' regions"
    for j, port in enumerate(run.memories):
        issued = [(addr, length + 1) for _, addr, length in port.checker.bursts["aw"]]
        assert issued == expected_bursts[j], f"port {j} bursts"


@pytest.mark.parametrize("ports,data_width,burst,batch", [
    (1, 64, 64, 4096), (1, 32, 4, 4096), (2, 64, 64, 128), (4, 64, 128, 64), (4, 128, 256, 256),
    (2, 512, 1024, 4096),
])
@pytest.mark.parametrize("memory_kind", ["ideal", "slow"])
def test_writer_lays_out_every_job(ports, data_width, burst, batch, memory_kind):
    params = AxiParams(data_width=data_width, id_width=1)
    engine = AxiWriteEngine(params, ports, burst_bytes=burst, batch_bytes=batch,
                            max_outstanding=3)
    rng = random.Random(ports * data_width + burst)
    jobs = write_jobs(rng, ports, params.beat_bytes, 5, 40 * params.beat_bytes * ports)
    memory = SparseMemory()
    options = {"stall": 0.3, "gap": 0.3, "latency": 13} if memory_kind == "slow" else {}
    run = run_writer(engine, jobs, memory=memory, seed=burst, **options)
    check_writes(engine, jobs, run, memory)
    assert run.errors == [0] * len(jobs)


@pytest.mark.parametrize("ports,slots", [(1, 4), (2, 2), (4, 4)])
def test_writer_batches_round_robin_over_slots(ports, slots):
    params = AxiParams(data_width=64, id_width=1)
    engine = AxiWriteEngine(params, ports, slots=slots, burst_bytes=64, batch_bytes=128,
                            max_outstanding=3)
    rng = random.Random(ports * slots)
    jobs = write_jobs(rng, ports, params.beat_bytes, 4, 30 * 128 * ports, slots, 128)
    memory = SparseMemory()
    run = run_writer(engine, jobs, memory=memory, stall=0.2, gap=0.2, latency=7)
    check_writes(engine, jobs, run, memory)
    assert run.errors == [0] * len(jobs)


def test_writer_flags_error_responses_and_completes():
    params = AxiParams(data_width=64, id_width=1)
    engine = AxiWriteEngine(params, 1, burst_bytes=64)
    jobs = [([0x2000], bytes(500)), ([0x8000], bytes(100))]
    run = run_writer(engine, jobs, error_ranges=[(0x2100, 0x2108)])
    assert run.errors == [1, 1]   # sticky until reset


def test_writer_top_of_address_space():
    # A job may end at the top of the address space (only one past it wraps): the write
    # engine rejected it until its formal proof asked why.
    params = AxiParams(data_width=64, addr_width=20, id_width=1)
    engine = AxiWriteEngine(params, 1, burst_bytes=64, length_bits=20)
    jobs = [([(1 << 20) - 96], bytes(range(96))), ([0x100], bytes(range(13)))]
    memory = SparseMemory()
    run = run_writer(engine, jobs, memory=memory)
    check_writes(engine, jobs, run, memory)
    assert run.errors == [0, 0]


def test_writer_rejects_misaligned_base_without_writing():
    params = AxiParams(data_width=64, addr_width=24, id_width=1)
    engine = AxiWriteEngine(params, 2, burst_bytes=64, batch_bytes=64, length_bits=24)
    memory = SparseMemory()
    jobs = [([0x1000, 0x2004], bytes(range(200))),          # port 1 misaligned
            ([0x1000, (1 << 24) - 64], bytes(100))]         # port 1 past the top
    run = run_writer(engine, jobs, memory=memory)
    assert run.errors == [1, 1]
    assert memory.written == set()
    # With slots, every base must be aligned to a batch.
    engine = AxiWriteEngine(params, 1, slots=2, burst_bytes=64, batch_bytes=128, length_bits=24)
    run = run_writer(engine, [([0x1000, 0x2040], bytes(300))], memory=memory)
    assert run.errors == [1]
    assert memory.written == set()
    assert all(port.checker.bursts["aw"] == [] for port in run.memories)


@pytest.mark.parametrize("factory,message", [
    (lambda: AxiParams(data_width=48), "data_width must be a power of two"),
    (lambda: AxiParams(data_width=16), "data_width must be a power of two between 32 and 1024, "
                                       "not 16"),
    (lambda: AxiParams(addr_width=65), "addr_width must be between 12 and 64, not 65"),
    (lambda: AxiReadEngine(AxiParams(), 4, burst_bytes=8192), "burst_bytes must be a power"),
    (lambda: AxiReadEngine(AxiParams(), 4, burst_bytes=32), "between 64 and 4096, not 32"),
    (lambda: AxiReadEngine(AxiParams(id_width=1), 4), "id_width must be at least 2"),
    (lambda: AxiReadEngine(AxiParams(id_width=2), 4, short_burst_bytes=2048),
     "short_burst_bytes must be at most burst_bytes .1024., not 2048"),
    (lambda: AxiReadEngine(AxiParams(id_width=2), 4, short_burst_bytes=96),
     "short_burst_bytes must be a power of two"),
    (lambda: AxiReadEngine(AxiParams(id_width=2), 4, buffer_beats=8),
     "buffer_beats must be at least 16, not 8"),
    (lambda: AxiReadEngine(AxiParams(), 1, max_outstanding=0), "max_outstanding must be"),
    (lambda: AxiReadEngine("x", 1), "params must be an AxiParams"),
    (lambda: AxiReadEngine(AxiParams(), 1, buffer_style=1), "buffer_style must be a string"),
    (lambda: AxiReadEngine(AxiParams(), 1, leaf_beats=5), "leaf_beats must be between 1 and 4"),
    (lambda: AxiWriteEngine(AxiParams(), 3), "ports must be a power of two"),
    (lambda: AxiWriteEngine(AxiParams(), 4, batch_bytes=128), "batch_bytes must be a power of "
                                                              "two of at least 256"),
    (lambda: AxiWriteEngine(AxiParams(), 2, buffer_beats=129), "multiple of ports"),
    (lambda: AxiWriteEngine(AxiParams(), 1, slots=3), "slots must be a power of two"),
    (lambda: AxiWriteEngine(AxiParams(), 1, slots=2, batch_bytes=1024),
     "batch_bytes must be at least burst_bytes"),
])
def test_engine_parameter_errors(factory, message):
    _, text = constructor_error(factory)
    assert re.search(message, text), text
