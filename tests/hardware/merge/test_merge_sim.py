"""Merge blocks in the Amaranth simulator, checked exactly against the golden models."""

import gc
import itertools
import random
import warnings

import pytest
from amaranth.hdl import Mux, Signal, UnusedElaboratable
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.core.golden import MmsModel, bitonic_merge, compare_swap
from topsort_hdl.core.golden.flims import FlimsModel
from topsort_hdl.core.golden.workloads import KEY_PATTERNS, make_run_pair, make_runs
from topsort_hdl.hardware.merge import (
    BitonicMergeNetwork,
    BitonicMerger,
    CompareSwap,
    FlimsMergeUnit,
    MmsMergeUnit,
    SelectMergeUnit,
)
from topsort_hdl.hardware.merge.beat_sorter import BeatSorter
from topsort_hdl.hardware.merge.credit import CreditCounter
from topsort_hdl.hardware.merge.lanes import BankedQueue, LaneFIFO, LaneQueue, lane_bounds
from topsort_hdl.hardware.records import BundleLayout, RecordLayout
from topsort_hdl.sim.amaranth.stream_harness import run_streams

RECORD = RecordLayout()


@pytest.mark.parametrize("descending", [False, True])
def test_compare_swap_matches_model(descending):
    dut = CompareSwap(RECORD, descending=descending)
    rng = random.Random(int(descending))
    cases = [((k1, rng.randrange(1 << 32)), (k2, rng.randrange(1 << 32)))
             for k1, k2 in itertools.product([0, 1, 2**31, 2**32 - 1], repeat=2)]

    async def testbench(ctx):
        for a, b in cases:
            ctx.set(dut.a.as_value(), RECORD.pack(*a))
            ctx.set(dut.b.as_value(), RECORD.pack(*b))
            first = RECORD.unpack(ctx.get(dut.first.as_value()))
            second = RECORD.unpack(ctx.get(dut.second.as_value()))
            assert (first, second) == compare_swap(a, b, descending), (a, b)

    simulator = Simulator(dut)
    simulator.add_testbench(testbench)
    simulator.run()


def _pack_array(record, bundle):
    return sum(record.pack(*r) << (i * record.size) for i, r in enumerate(bundle))


def _merge_words(record, pairs):
    return [_pack_array(record, a) for a, _ in pairs], [_pack_array(record, b) for _, b in pairs]


def _unpack_array(record, word, count):
    mask = (1 << record.size) - 1
    return [record.unpack(word >> (i * record.size) & mask) for i in range(count)]


@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16, 32])
@pytest.mark.parametrize("descending", [False, True])
def test_bitonic_merger_matches_model_under_stalls(rate, descending):
    rng = random.Random(rate * 2 + descending)
    pairs = []
    for _ in range(40 if rate < 32 else 12):
        high = rng.choice([1, 7, 2**32 - 1])
        a, b = ([(rng.randint(0, high), rng.randrange(1 << 32)) for _ in range(rate)]
                for _ in range(2))
        pairs.append((sorted(a, reverse=descending), sorted(b, reverse=descending)))
    a_words, b_words = _merge_words(RECORD, pairs)
    dut = BitonicMerger(RECORD, rate, descending=descending)
    result = run_streams(dut, {"a": a_words, "b": b_words}, {"o": len(pairs)},
                         seed=rate, gap=0.3, stall=0.3)
    got = [_unpack_array(RECORD, word, 2 * rate) for word in result.outputs["o"]]
    assert got == [bitonic_merge(a, b, descending) for a, b in pairs]


def _zero_one_pairs(rate, descending):
    """Every pair of sorted 0/1 bundles; values number the records so moves are checked."""
    bundles = [[0] * (rate - ones) + [1] * ones for ones in range(rate + 1)]
    for a_keys, b_keys in itertools.product(bundles, repeat=2):
        if descending:
            a_keys, b_keys = a_keys[::-1], b_keys[::-1]
        yield ([(k, i) for i, k in enumerate(a_keys)],
               [(k, rate + i) for i, k in enumerate(b_keys)])


@pytest.mark.parametrize("rate", [1, 2, 4, 8])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stages", [0, 1, None])
def test_bitonic_network_zero_one_principle(rate, descending, stages):
    # A comparator network merges every pair of sorted inputs iff it merges every pair of
    # sorted 0/1 inputs: (rate + 1)^2 cases prove the generated network correct.
    pairs = list(_zero_one_pairs(rate, descending))
    a_words, b_words = _merge_words(RECORD, pairs)
    dut = BitonicMerger(RECORD, rate, stages=stages, descending=descending)
    result = run_streams(dut, {"a": a_words, "b": b_words}, {"o": len(pairs)})
    for (a, b), word in zip(pairs, result.outputs["o"], strict=True):
        merged = _unpack_array(RECORD, word, 2 * rate)
        keys = [key for key, _ in merged]
        assert keys == sorted(keys, reverse=descending), (a, b, merged)
        assert sorted(merged) == sorted(a + b)
        assert merged == bitonic_merge(a, b, descending)


@pytest.mark.parametrize("rate", [1, 2, 4, 8])
@pytest.mark.parametrize("keep", ["lower", "upper"])
def test_half_network_zero_one_principle(rate, keep):
    # BML and BMS are half networks: each must give exactly its half of the full merge.
    network = BitonicMergeNetwork(RECORD, rate, keep=keep, stages=0)
    pairs = list(_zero_one_pairs(rate, False))

    async def testbench(ctx):
        for a, b in pairs:
            for i in range(rate):
                ctx.set(network.a[i].as_value(), RECORD.pack(*a[i]))
                ctx.set(network.b[i].as_value(), RECORD.pack(*b[i]))
            got = [RECORD.unpack(ctx.get(network.o[i].as_value())) for i in range(rate)]
            full = bitonic_merge(a, b)
            assert got == (full[:rate] if keep == "lower" else full[rate:]), (a, b)

    simulator = Simulator(network)
    simulator.add_testbench(testbench)
    simulator.run()
    assert network.comparators == rate + rate // 2 * (rate.bit_length() - 1)


def _a_older_first(x, y, position, tie_in):
    # Equal keys: by side (a first unless tie_in says a is the newer), then by index.
    return Mux(x.side_b ^ y.side_b, Mux(x.side_b, tie_in[0], ~tie_in[0]), x.index < y.index)


@pytest.mark.parametrize("rate", [1, 2, 4, 8])
@pytest.mark.parametrize("keep", ["all", "lower", "upper"])
@pytest.mark.parametrize("stages,descending", [(0, False), (None, False), (1, True)])
def test_network_tie_break_and_exclusion(rate, keep, stages, descending):
    # Keys from {0, 1, all ones}: most comparisons are ties, which the tie break must order
    # exactly, with its input sampled as the elements entered (it changes every cycle, so a
    # layer that read it late would be caught), and an excluded bundle never kept.
    exclusion = keep != "all"
    network = BitonicMergeNetwork(RECORD, rate, keep=keep, stages=stages, descending=descending,
                                  tie_break=_a_older_first, tie_width=1, exclusion=exclusion)
    rng = random.Random(f"{rate}-{keep}-{stages}-{descending}")
    cases = []
    for _ in range(150):
        a, b = (sorted((rng.choice([0, 1, 2**32 - 1]) for _ in range(rate)), reverse=descending)
                for _ in range(2))
        excluded = rng.choice(["a", "b", None, None]) if exclusion else None
        cases.append((a, b, rng.randrange(2), excluded))

    def expected(a, b, a_newer, excluded):
        records = [("a", i, key) for i, key in enumerate(a)] + \
                  [("b", i, key) for i, key in enumerate(b)]
        records = [r for r in records if r[0] != excluded]
        side_rank = {"a": a_newer, "b": 1 - a_newer}
        order = sorted(records, key=lambda r: (-r[2] if descending else r[2], side_rank[r[0]],
                                               r[1]))
        if excluded:
            return order
        return {"all": order, "lower": order[:rate], "upper": order[rate:]}[keep]

    outputs = 2 * rate if keep == "all" else rate

    async def testbench(ctx):
        got = []
        for cycle in range(len(cases) + network.latency):
            if cycle < len(cases):
                a, b, a_newer, excluded = cases[cycle]
                for i in range(rate):
                    ctx.set(network.a[i].as_value(), RECORD.pack(a[i], i))
                    ctx.set(network.b[i].as_value(), RECORD.pack(b[i], rate + i))
                ctx.set(network.tie_in, a_newer)
                if exclusion:
                    ctx.set(network.a_excluded, excluded == "a")
                    ctx.set(network.b_excluded, excluded == "b")
            if cycle >= network.latency:
                got.append([RECORD.unpack(ctx.get(network.o[i].as_value()))
                            for i in range(outputs)])
            if network.latency:
                await ctx.tick()
        for case, have in zip(cases, got, strict=True):
            want = [(key, index if side == "a" else rate + index)
                    for side, index, key in expected(*case)]
            assert have == want, case

    simulator = Simulator(network)
    if network.latency:
        simulator.add_clock(1e-6)
    simulator.add_testbench(testbench)
    simulator.run()


# The streaming merge units and their golden models: the same contract, checked the same way.
UNITS = {"mms": (MmsMergeUnit, MmsModel), "flims": (FlimsMergeUnit, FlimsModel)}


def _run_mms(dut, runs, seed, gap, stall):
    bundle = dut.bundle
    words = {side: [word for pair in runs for word in bundle.pack_run(pair[index])]
             for index, side in enumerate("ab")}
    model = FlimsModel if isinstance(dut, FlimsMergeUnit) else MmsModel
    expected = model(dut.rate).merge(runs)
    result = run_streams(dut, words, {"o": len(expected)}, seed=seed, gap=gap, stall=stall)
    got = [bundle.unpack(word) for word in result.outputs["o"]]
    for index, (have, want) in enumerate(zip(got, expected, strict=True)):
        assert have == (list(want[0]), want[1]), f"bundle {index}"
    inputs = sorted(r for pair in runs for run in pair for b in run for r in b)
    assert sorted(r for records, _ in got for r in records) == inputs
    return result


@pytest.mark.parametrize("kind", UNITS)
@pytest.mark.parametrize("rate", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("gap,stall", [(0.0, 0.0), (0.4, 0.0), (0.0, 0.5), (0.3, 0.3)])
def test_mms_matches_model(kind, rate, gap, stall):
    rng = random.Random(f"mms-{rate}-{gap}-{stall}")
    runs = make_runs(rng, rate, 24 if rate < 16 else 12, max_bundles=10)
    unit, _ = UNITS[kind]
    _run_mms(unit(RECORD, rate), runs, rate, gap, stall)


def test_flims_at_rate_32_matches_model():
    rng = random.Random("flims-32")
    runs = make_runs(rng, 32, 6, max_bundles=5)
    _run_mms(FlimsMergeUnit(RECORD, 32), runs, 32, 0.3, 0.3)


@pytest.mark.parametrize("gap,stall", [(0.0, 0.0), (0.3, 0.4)])
def test_select_unit_matches_rate_1_model(gap, stall):
    # The rate-1 unit must emit exactly what the MMS model predicts for E = 1.
    rng = random.Random(f"select-{gap}")
    runs = make_runs(rng, 1, 40, max_bundles=12)
    result = _run_mms(SelectMergeUnit(RECORD), runs, 4, gap, stall)
    if not gap and not stall:
        cycles = result.transfer_cycles["o"]
        assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))


@pytest.mark.parametrize("kind", UNITS)
@pytest.mark.parametrize("pattern", sorted(KEY_PATTERNS))
def test_mms_adversarial_keys(kind, pattern):
    rng = random.Random(pattern)
    runs = [make_run_pair(rng, 4, pattern, max_bundles=6) for _ in range(16)]
    unit, _ = UNITS[kind]
    _run_mms(unit(RECORD, 4), runs, 7, 0.2, 0.3)


@pytest.mark.parametrize("kind", UNITS)
@pytest.mark.parametrize("stages,output_depth,input_depth",
                         [(0, 3, 3), (1, 3, 3), (2, None, 3), (None, 5, 8)])
def test_mms_pipeline_options(kind, stages, output_depth, input_depth):
    # Shallow FIFOs and every register placement: still exact (credit counting must never
    # let the output FIFO overflow).
    rng = random.Random(stages or 0)
    runs = make_runs(rng, 8, 16, max_bundles=8)
    unit, _ = UNITS[kind]
    dut = unit(RECORD, 8, network_stages=stages, output_depth=output_depth,
               input_depth=input_depth)
    _run_mms(dut, runs, 3, 0.2, 0.4)


@pytest.mark.parametrize("rate", [1, 2, 4])
def test_flims_zero_one_principle(rate):
    # FLiMS's selectors and cascade form a comparator network on the 2E records in reach (the
    # heads of the banks), so every pair of sorted 0/1 run pairs of two bundles a side (keys
    # 0/1, values numbering the records) exercises every order the keys can take: exact.
    bundles = [[0] * (2 * rate - ones) + [1] * ones for ones in range(2 * rate + 1)]
    runs = []
    for a_keys, b_keys in itertools.product(bundles, repeat=2):
        a = [(k, i) for i, k in enumerate(a_keys)]
        b = [(k, 2 * rate + i) for i, k in enumerate(b_keys)]
        runs.append(([a[:rate], a[rate:]], [b[:rate], b[rate:]]))
    _run_mms(FlimsMergeUnit(RECORD, rate), runs, 1, 0.2, 0.2)


@pytest.mark.parametrize("kind", UNITS)
def test_mms_narrow_records(kind):
    # 8-bit keys with 0-bit values: many equal keys, and the record layout changes widths.
    record = RecordLayout(8, 0)
    rng = random.Random(8)
    runs = make_runs(rng, 4, 20, max_bundles=8, max_key=255)
    runs = [tuple([[(key, 0) for key, _ in bundle] for bundle in run] for run in pair)
            for pair in runs]
    unit, _ = UNITS[kind]
    _run_mms(unit(record, 4), runs, 5, 0.2, 0.2)


@pytest.mark.parametrize("kind", UNITS)
@pytest.mark.parametrize("rate", [4, 8])
def test_mms_full_rate_across_run_boundaries(kind, rate):
    # Runs of one bundle per input back to back: no idle output cycle between runs.
    rng = random.Random(5)
    runs = [make_run_pair(rng, rate, "uniform", max_bundles=1) for _ in range(20)]
    unit, _ = UNITS[kind]
    result = _run_mms(unit(RECORD, rate), runs, 0, 0.0, 0.0)
    cycles = result.transfer_cycles["o"]
    assert cycles == list(range(cycles[0], cycles[0] + len(cycles)))


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(rate=3), ValueError, "rate must be a power of two between 1 and 32, not 3"),
    (dict(rate=64), ValueError, "rate must be a power of two between 1 and 32, not 64"),
    (dict(rate=4.0), TypeError, "rate must be an integer, not 4.0"),
    (dict(rate=4, input_depth=2), ValueError, "input_depth must be at least 3, not 2"),
    (dict(rate=4, output_depth=0), ValueError, "output_depth must be at least 3, not 0"),
    (dict(rate=4, network_stages=4), ValueError, "network_stages must be between 0 and 3, not 4"),
])
def test_mms_parameter_errors(kwargs, error, message):
    assert constructor_error(lambda: MmsMergeUnit(RECORD, **kwargs)) == (error, message)
    if "network_stages" not in kwargs:
        assert constructor_error(lambda: FlimsMergeUnit(RECORD, **kwargs)) == (error, message)


def test_flims_parameters():
    # FLiMS's pipeline registers spread over its cascade's log2 E layers, after the winners'.
    assert constructor_error(lambda: FlimsMergeUnit(RECORD, 4, network_stages=3)) == (
        ValueError, "network_stages must be between 0 and 2, not 3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        unit = FlimsMergeUnit(RECORD, 8)
        assert (unit.pipeline_latency, unit.output_depth, unit.comparators) == (4, 8, 20)
        assert FlimsMergeUnit(RECORD, 1).comparators == 1
        assert MmsMergeUnit(RECORD, 8).comparators == 46
        del unit
        gc.collect()


@pytest.mark.parametrize("key_bits,value_bits,lanes", [(32, 32, 2), (32, 32, 8), (64, 64, 4),
                                                       (32, 0, 8)])
def test_beat_sorter_sorts_what_it_keeps_and_passes_the_rest(key_bits, value_bits, lanes):
    """A beat every cycle, each with random keep and sort: kept records in key order first
    (equal keys, 0 and all-ones among them), then the others; unsorted beats unchanged."""
    record = RecordLayout(key_bits, value_bits)
    dut = BeatSorter(record, lanes)
    rng = random.Random(lanes + key_bits)
    top = (1 << key_bits) - 1
    beats = []
    for _ in range(300):
        keys = [rng.choice([0, top, 5, rng.randrange(top + 1)]) for _ in range(lanes)]
        beat = [(k, rng.randrange(1 << value_bits) if value_bits else 0) for k in keys]
        beats.append((beat, rng.randrange(1 << lanes), rng.random() < 0.7))

    def expected(beat, keep, sort):
        if not sort:
            return beat
        kept = [r for i, r in enumerate(beat) if keep >> i & 1]
        others = [r for i, r in enumerate(beat) if not keep >> i & 1]
        return kept, others

    async def testbench(ctx):
        seen = []
        for cycle in range(len(beats) + dut.latency):
            if cycle < len(beats):
                beat, keep, sort = beats[cycle]
                ctx.set(dut.i, _pack_array(record, beat))
                ctx.set(dut.keep, keep)
                ctx.set(dut.sort, sort)
            if cycle >= dut.latency:
                seen.append(_unpack_array(record, ctx.get(dut.o), lanes))
            await ctx.tick()
        for (beat, keep, sort), out in zip(beats, seen, strict=True):
            if not sort:
                assert out == beat
                continue
            kept, others = expected(beat, keep, sort)
            assert out[:len(kept)] == sorted(out[:len(kept)], key=lambda r: r[0])
            assert sorted(out[:len(kept)]) == sorted(kept)
            assert sorted(out[len(kept):]) == sorted(others)

    simulator = Simulator(dut)
    simulator.add_clock(1e-8)
    simulator.add_testbench(testbench)
    simulator.run()
    assert dut.latency == {2: 1, 4: 3, 8: 6}[lanes]


def test_record_and_network_parameter_errors():
    with pytest.raises(ValueError, match="key_bits must be between 1 and 256, not 0"):
        RecordLayout(0, 32)
    with pytest.raises(ValueError, match="value_bits must be between 0 and 256, not 257"):
        RecordLayout(32, 257)
    with pytest.raises(TypeError, match="key_bits must be an integer, not '32'"):
        RecordLayout("32")
    kind, text = constructor_error(lambda: MmsMergeUnit(64, 4))
    assert kind is TypeError and "record must be a RecordLayout, not 64" in text
    kind, text = constructor_error(lambda: BitonicMergeNetwork(RECORD, 4, keep="middle"))
    assert kind is ValueError and "keep must be one of all, lower, upper, not 'middle'" in text
    kind, text = constructor_error(lambda: CompareSwap(RECORD, descending="yes"))
    assert kind is TypeError and "descending must be a bool, not 'yes'" in text
    assert constructor_error(lambda: BitonicMergeNetwork(RECORD, 4, exclusion=True)) == (
        ValueError, "exclusion needs keep='lower' or keep='upper', not keep='all'")
    kind, text = constructor_error(lambda: BitonicMergeNetwork(Signal(8), 4))
    assert kind is TypeError and "layout must be a data.Layout" in text


@pytest.mark.parametrize("banks,depth", [(1, 2), (4, 3), (8, 4)])
def test_banked_queue_matches_a_queue_per_bank(banks, depth):
    """Random writes, and pops of the next k entries in rank order (k random, 0 to banks)
    while ``ready``: each bank's head is its queue's front, ``ready`` is set whenever every
    bank holds a head, and the writes ``i.ready`` allows never overflow a bank. An entry is a
    record with its bundle's ``last`` flag."""
    record_bits, width = 8, 9
    dut = BankedQueue(bundle=BundleLayout(RecordLayout(5, 3), banks), depth=depth)
    rng = random.Random(banks * 10 + depth)
    popped = []

    async def testbench(ctx):
        queues = [[] for _ in range(banks)]
        arrived = []        # bundles written, not yet shown (the heads load a cycle later)
        rank = 0            # entries popped so far: the next pop is bank rank % banks
        for cycle in range(1500):
            records = [rng.randrange(1 << record_bits) for _ in range(banks)]
            last = rng.randrange(2)
            bundle = [record | last << record_bits for record in records]
            write = rng.random() < 0.5
            ctx.set(dut.i.payload.as_value(), sum(v << (i * record_bits)
                                                  for i, v in enumerate(records))
                    | last << (banks * record_bits))
            ctx.set(dut.i.valid, write)
            ready = ctx.get(dut.ready)
            if ready:
                heads = ctx.get(dut.head)
                for bank, queue in enumerate(queues):
                    assert queue, (cycle, bank)
                    assert heads >> (bank * width) & ((1 << width) - 1) == queue[0], cycle
            count = rng.randrange(banks + 1) if ready else 0
            pops = [(rank + k) % banks for k in range(count)]
            ctx.set(dut.pop, sum(1 << bank for bank in pops))
            accepted = write and ctx.get(dut.i.ready)
            await ctx.tick()
            for bank in pops:
                popped.append(queues[bank].pop(0))
            rank += count
            arrived += [bundle] if accepted else []
            # Entries become heads a cycle or two after their write: the model takes them
            # once the hardware says every bank has one, or when it must (no room to wait).
            if arrived and (ctx.get(dut.ready) or len(arrived) > 2):
                for bank, value in enumerate(arrived.pop(0)):
                    queues[bank].append(value)
            assert all(len(queue) + len(arrived) <= depth + 1 for queue in queues)
        assert len(popped) > 250 * banks

    simulator = Simulator(dut)
    simulator.add_clock(1e-6)
    simulator.add_testbench(testbench)
    simulator.run()


@pytest.mark.parametrize("lanes", [1, 3, 4])
def test_lane_queue_matches_a_queue_model(lanes):
    """Every cycle: head and next registers and every lane's copy of their valid flags against
    a plain queue of depth + 1 entries, under random writes and pops."""
    width, depth = 4 * 9 + 1, 4
    dut = LaneQueue(shape=width, depth=depth, lanes=lanes)
    rng = random.Random(lanes)
    written = []

    async def testbench(ctx):
        model = []          # the head first
        arriving = []       # entries written, not yet through the FIFO's two-cycle latency
        for cycle in range(1500):
            word = rng.randrange(1 << width)
            write = rng.random() < 0.6
            ctx.set(dut.i.payload, word)
            ctx.set(dut.i.valid, write)
            all_lanes = (1 << lanes) - 1
            # Every lane's copy of the head's state agrees.
            assert ctx.get(dut.head_valid) in (0, all_lanes)
            assert ctx.get(dut.next_valid) in (0, all_lanes)
            head_valid = ctx.get(dut.head_valid) == all_lanes
            pop = head_valid and rng.random() < 0.5
            ctx.set(dut.pop, all_lanes if pop else 0)
            if head_valid:
                assert model and ctx.get(dut.head) == model[0], cycle
            if ctx.get(dut.next_valid):     # behind the head, or about to become it
                assert len(model) > head_valid and ctx.get(dut.next) == model[head_valid]
            accepted = write and ctx.get(dut.i.ready)
            await ctx.tick()
            if pop:
                model.pop(0)
            # What the DUT shows as head/next is what it holds; the model catches up with
            # entries as the DUT shows them (a FIFO's latency is not the contract here).
            if accepted:
                written.append(word)
                arriving.append(word)
            shown = sum(ctx.get(flag) == all_lanes for flag in (dut.head_valid, dut.next_valid))
            while len(model) < shown and arriving:
                model.append(arriving.pop(0))
            assert len(model) + len(arriving) <= depth + 1
        assert len(written) > 500

    simulator = Simulator(dut)
    simulator.add_clock(1e-6)
    simulator.add_testbench(testbench)
    simulator.run()


@pytest.mark.parametrize("lanes", [1, 2, 5])
def test_lane_fifo_passes_every_word_in_order(lanes):
    width = 2 * 13 + 1
    dut = LaneFIFO(shape=width, depth=5, lanes=lanes)
    rng = random.Random(lanes)
    words = [rng.randrange(1 << width) for _ in range(400)]
    got = []

    async def testbench(ctx):
        sent = 0
        for _ in range(3000):
            write = sent < len(words) and rng.random() < 0.7
            ctx.set(dut.i.payload, words[sent] if sent < len(words) else 0)
            ctx.set(dut.i.valid, write)
            read = rng.random() < 0.6
            ctx.set(dut.o.ready, read)
            if read and ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload))
            if write and ctx.get(dut.i.ready):
                sent += 1
            await ctx.tick()
        assert got == words

    simulator = Simulator(dut)
    simulator.add_clock(1e-6)
    simulator.add_testbench(testbench)
    simulator.run()


@pytest.mark.parametrize("depth", [2, 3, 7])
def test_credit_counter_against_a_count(depth):
    """``room`` and ``room_next`` every cycle against a plain count of promised entries,
    with promises made only when granted (as the merge units make them)."""
    dut = CreditCounter(depth)
    rng = random.Random(depth)

    async def testbench(ctx):
        count, granted, full = 0, True, 0
        for cycle in range(800):
            add = granted and rng.random() < 0.7
            sub = count > 0 and rng.random() < 0.4
            ctx.set(dut.add, add)
            ctx.set(dut.sub, sub)
            assert ctx.get(dut.room) == (count < depth), cycle
            assert ctx.get(dut.room_next) == (count + add < depth), cycle
            granted = ctx.get(dut.room_next)
            full += count == depth
            count += add - sub
            await ctx.tick()
        assert full > 20  # the test reaches a full buffer often

    simulator = Simulator(dut)
    simulator.add_clock(1e-6)
    simulator.add_testbench(testbench)
    simulator.run()


def test_lane_bounds_and_errors():
    assert lane_bounds(2 * 65 + 1, 2) == [(0, 65), (65, 131)]
    assert lane_bounds(10, 3) == [(0, 3), (3, 6), (6, 10)]
    assert constructor_error(lambda: LaneFIFO(shape=4, depth=4, lanes=5)) == \
        (ValueError, "lanes must be at most width (4), not 5")
    assert constructor_error(lambda: LaneQueue(shape=4, depth=1, lanes=2)) == \
        (ValueError, "depth must be at least 2, not 1")
