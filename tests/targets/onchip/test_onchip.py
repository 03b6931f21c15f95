"""The on-chip demo: block-RAM AXI slave, UART, and the whole demo running its self test in the
Amaranth simulator, against the golden sort, and failing when a fault is injected."""

import random
import re

import pytest
from amaranth.sim import Simulator

from tests.conftest import constructor_error
from topsort_hdl.core.config import PRESETS, config_from
from topsort_hdl.hardware.axi.signature import RESP_OKAY, RESP_SLVERR, AxiParams
from topsort_hdl.hardware.kernel.kernel import TopSortKernel
from topsort_hdl.targets.onchip import BistJob, OnChipAxiRam, OnChipSorter, SelfTest, UartTx
from topsort_hdl.targets.onchip.boards import BOARDS, NAME, prepare_build, read_nextpnr_report
from topsort_hdl.targets.onchip.bram import DP16KD_WORDS, RegisteredReadRam
from topsort_hdl.targets.onchip.jobs import (
    ERROR_BITS,
    MASK32,
    SEED,
    job_records,
    multiset_checksum,
    output_words,
)
from topsort_hdl.targets.onchip.uart import uart_decode

DIVISOR = 4        # UART bit time in the simulations
LINE = re.compile(r"job (\d+) n=(\d+) (PASS|FAIL) e=([0-9a-f]) p1=([0-9a-f]{8}) "
                  r"p2=([0-9a-f]{8})\r\n")
SMALL_JOBS = (BistJob(100), BistJob(37, key_mask=0x3), BistJob(3, key_mask=0x1,
                                                                key_set=0xFFFF_FFFE),
              BistJob(1), BistJob(0))


def run_demo(jobs, inject=None, max_cycles=100_000, sums=None):
    """Run the demo until its first round ends; return (report text, LEDs, memory words), and
    the last job's running checksums in ``sums`` if given a dict."""
    dut = OnChipSorter(jobs=jobs, inject=inject, baud_divisor=DIVISOR)
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    samples, result = [], {}

    async def bench(ctx):
        names = list(dut.selftest.sums)
        async for _, _, tx, rounds, *values in ctx.tick().sample(
                dut.tx, dut.rounds, *dut.selftest.sums.values()):
            samples.append(tx)
            if rounds >= 1:
                # The last job's running checksums, as the clock edge that ends the round saw
                # them (the next job's fill resets them).
                result["sums"] = dict(zip(names, values, strict=True))
                break
            assert len(samples) < max_cycles, "the self test did not finish its round"
        result["leds"] = ctx.get(dut.leds)
        # The next round's fill starts two cycles on: memory still holds this round's last job.
        result["memory"] = [[ctx.get(ram.mem.data[i]) for i in range(ram.words)]
                            for ram in dut.rams]
        # The round ends as its last character goes to the UART: let it out.
        for _ in range(12 * DIVISOR):
            samples.append(ctx.get(dut.tx))
            await ctx.tick()

    sim.add_testbench(bench)
    sim.run()
    if sums is not None:
        sums.update(result["sums"])
    return uart_decode(samples, DIVISOR).decode(), result["leds"], result["memory"]


def parse_report(text, jobs):
    lines = LINE.findall(text)
    assert [(int(j), int(n)) for j, n, *_ in lines] == [(j, b.records)
                                                         for j, b in enumerate(jobs)], text
    verdict = re.search(r"round 0000 (PASS|FAIL)\r\n", text)
    assert verdict, text
    return [(status, int(e, 16), int(p1, 16), int(p2, 16)) for _, _, status, e, p1, p2 in lines], \
        verdict.group(1)


def test_demo_passes_its_self_test():
    text, leds, _ = run_demo(SMALL_JOBS)
    jobs, verdict = parse_report(text, SMALL_JOBS)
    assert verdict == "PASS", text
    for status, errors, phase1, phase2 in jobs:
        assert (status, errors) == ("PASS", 0), text
        assert phase1 > 0 and phase2 > 0
    assert leds & 0b11 == 0b01 and leds >> 4 == 0, f"LEDs {leds:08b}"


@pytest.mark.parametrize("records", [1984, 333])
def test_demo_output_is_the_golden_sort(records):
    """Record by record: what the demo leaves in memory is the golden sort of what its
    generator (the Python model of it) wrote, and the checksums agree; the hardware's own
    checksums (pipelined, the mix in 16-bit partial products) are the golden ones."""
    config = PRESETS["demo"]
    job = BistJob(records, key_mask=0xFFFF_FF00 if records < 1000 else MASK32)
    sums = {}
    text, _, memory = run_demo((job,), sums=sums)
    assert parse_report(text, (job,))[1] == "PASS", text
    records_in, _ = job_records(SEED, job, config.trees, config.rate)
    out = []
    for tree, word in output_words(config, job):
        value = memory[tree][word]
        out += [((value >> (64 * i + 32)) & MASK32, (value >> (64 * i)) & MASK32)
                for i in range(config.rate)]
    out = out[:records]
    assert [k for k, _ in out] == sorted(k for k, _ in records_in)
    assert sorted(out) == sorted(records_in)
    assert multiset_checksum(out) == multiset_checksum(records_in)
    golden = multiset_checksum(records_in)
    assert (sums["in_total"], sums["in_mix"]) == golden
    assert (sums["out_total"], sums["out_mix"]) == golden


@pytest.mark.parametrize("inject, error", [("input", "checksum"), ("output", "order")])
def test_demo_fails_on_an_injected_fault(inject, error):
    text, leds, _ = run_demo(SMALL_JOBS[:2], inject=inject)
    jobs, verdict = parse_report(text, SMALL_JOBS[:2])
    assert verdict == "FAIL", text
    assert jobs[0][:2] == ("FAIL", 1 << ERROR_BITS[error]), text
    assert jobs[1][:2] == ("PASS", 0), text
    assert leds & 0b11 == 0b10 and leds >> 4 == 1 << ERROR_BITS[error], f"LEDs {leds:08b}"


def test_checksum_sees_values_trade_places():
    a, b = (5, 1), (9, 2)
    assert multiset_checksum([a, b]) == multiset_checksum([b, a])
    assert multiset_checksum([a, b]) != multiset_checksum([(5, 2), (9, 1)])


@pytest.mark.parametrize("first_stray", ["write", "read"])
def test_ram_answers_bursts_and_refuses_strays(first_stray):
    params = AxiParams(data_width=64, addr_width=32, id_width=2)
    dut = OnChipAxiRam(params, 256, base=0x1000)
    axi = dut.axi
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def write(ctx, addr, words, strobes=0xFF):
        ctx.set(axi.awaddr, addr), ctx.set(axi.awlen, len(words) - 1), ctx.set(axi.awid, 1)
        ctx.set(axi.awvalid, 1)
        await ctx.tick().until(axi.awready)
        ctx.set(axi.awvalid, 0)
        for i, word in enumerate(words):
            ctx.set(axi.wdata, word), ctx.set(axi.wstrb, strobes)
            ctx.set(axi.wlast, i == len(words) - 1), ctx.set(axi.wvalid, 1)
            await ctx.tick().until(axi.wready)
        ctx.set(axi.wvalid, 0), ctx.set(axi.bready, 1)
        (resp,) = await ctx.tick().sample(axi.bresp).until(axi.bvalid)
        ctx.set(axi.bready, 0)
        return resp

    async def read(ctx, addr, beats):
        ctx.set(axi.araddr, addr), ctx.set(axi.arlen, beats - 1), ctx.set(axi.arid, 2)
        ctx.set(axi.arvalid, 1)
        await ctx.tick().until(axi.arready)
        ctx.set(axi.arvalid, 0)
        out, pause = [], 0
        while True:
            ctx.set(axi.rready, pause % 3 != 1)      # backpressure every third cycle
            pause += 1
            _, _, valid, ready, data, resp, last, rid = await ctx.tick().sample(
                axi.rvalid, axi.rready, axi.rdata, axi.rresp, axi.rlast, axi.rid)
            if valid and ready:
                assert rid == 2
                out.append((data, resp))
                if last:
                    ctx.set(axi.rready, 0)
                    return out

    async def bench(ctx):
        assert await write(ctx, 0x1000 + 8 * 30, [11, 22]) == RESP_OKAY
        assert await write(ctx, 0x1000 + 8 * 31, [0xFFFF_FFFF_FFFF_FFFF], 0x0F) == RESP_OKAY
        assert await read(ctx, 0x1000 + 8 * 30, 2) == [(11, RESP_OKAY),
                                                       (0xFFFF_FFFF, RESP_OKAY)]
        # an unaligned start: the beat's bytes end with its word, inside the range
        assert await read(ctx, 0x1000 + 8 * 31 + 4, 1) == [(0xFFFF_FFFF, RESP_OKAY)]
        assert not ctx.get(dut.stray)
        # either channel alone sets ``stray``
        if first_stray == "read":
            assert await read(ctx, 0x0FF8, 2) == [(0, RESP_SLVERR)] * 2  # starts before it
            assert ctx.get(dut.stray)
        assert await write(ctx, 0x1000 + 8 * 31, [7, 7]) == RESP_SLVERR   # runs past the end
        assert ctx.get(dut.stray)
        assert await read(ctx, 0x0FF8, 2) == [(0, RESP_SLVERR)] * 2      # starts before it
        assert await read(ctx, 0x1100, 1) == [(0, RESP_SLVERR)]          # starts after it
        assert await read(ctx, 0x3000, 1) == [(0, RESP_SLVERR)]          # offset 0, not base
        assert await read(ctx, 0x1000 + 8 * 31, 1) == [(0xFFFF_FFFF, RESP_OKAY)]

    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("backpressure", [False, True])
def test_ram_reads_long_bursts_at_full_rate(backpressure):
    """Bursts of 1 to 16 beats back to back, read (under random R backpressure, or none)
    through the RAM's two read steps: every beat the word written there, in order, none lost
    or doubled; with R always ready, one beat every cycle from the first to the last."""
    rng = random.Random(7 + backpressure)
    params = AxiParams(data_width=64, addr_width=32, id_width=2)
    dut = OnChipAxiRam(params, 512)
    axi, door = dut.axi, dut.backdoor
    words = [rng.getrandbits(64) for _ in range(dut.words)]
    bursts = [(rng.randrange(dut.words - 16), rng.randint(1, 16)) for _ in range(30)]
    expected = [(words[first + k], k == beats - 1) for first, beats in bursts
                for k in range(beats)]
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    def offer(ctx, queue):
        if queue:
            first, beats = queue[0]
            ctx.set(axi.araddr, 8 * first), ctx.set(axi.arlen, beats - 1)
        ctx.set(axi.arvalid, bool(queue))

    async def bench(ctx):
        ctx.set(door.select, 1), ctx.set(door.w_en, 1)
        for i, word in enumerate(words):
            ctx.set(door.addr, i), ctx.set(door.w_data, word)
            await ctx.tick()
        ctx.set(door.select, 0), ctx.set(door.w_en, 0)
        got, queue, cycles = [], list(bursts), 0
        offer(ctx, queue)
        while len(got) < len(expected):
            ready = not backpressure or rng.random() < 0.6
            ctx.set(axi.rready, ready)
            _, _, arvalid, arready, rvalid, data, last, resp = await ctx.tick().sample(
                axi.arvalid, axi.arready, axi.rvalid, axi.rdata, axi.rlast, axi.rresp)
            if arvalid and arready:
                queue.pop(0)
                offer(ctx, queue)
            cycles += bool(got)
            assert cycles < 10 * len(expected), "the read bursts did not finish"
            if rvalid and ready:
                assert resp == RESP_OKAY
                got.append((data, bool(last)))
        assert got == expected
        if not backpressure:
            assert cycles == len(expected) - 1
        assert not ctx.get(dut.stray)

    sim.add_testbench(bench)
    sim.run()


def test_registered_read_ram_matches_its_model():
    """Random writes (byte enables), reads and read-register enables, one step per cycle:
    ``r_data`` is the word read at the last ``r_en``, moved at the last ``r_reg_en``."""
    rng = random.Random(3)
    dut = RegisteredReadRam(16, 32)
    sim = Simulator(dut)
    sim.add_clock(1e-8)

    async def bench(ctx):
        memory = [0] * 16
        fetched = output = 0
        for _ in range(600):
            w_addr, r_addr = rng.randrange(16), rng.randrange(16)
            w_en, r_en, reg_en = rng.getrandbits(4), rng.random() < 0.5, rng.random() < 0.5
            w_data = rng.choice([0, 0xFFFF_FFFF, rng.getrandbits(32)])
            for name, value in [("w_addr", w_addr), ("w_data", w_data), ("w_en", w_en),
                                ("r_addr", r_addr), ("r_en", r_en), ("r_reg_en", reg_en)]:
                ctx.set(getattr(dut, name), value)
            await ctx.tick()
            if reg_en:
                output = fetched
            if r_en:
                fetched = memory[r_addr]            # the old word when also written
            mask = sum(0xFF << 8 * b for b in range(4) if w_en >> b & 1)
            memory[w_addr] = memory[w_addr] & ~mask | w_data & mask
            assert ctx.get(dut.r_data) == output

    sim.add_testbench(bench)
    sim.run()


class _Ecp5:
    family = "ecp5"


def _dp16kd_cells(dut, platform):
    from amaranth.back import rtlil
    text = rtlil.convert(dut, platform=platform)
    return re.findall(r"cell \\DP16KD .*?\n(.*?)  end", text, re.S)


def test_registered_read_ram_uses_ecp5_output_registers():
    """On ECP5 the words are DP16KD blocks, two bytes each, read through their output
    registers; deeper memories, and other platforms, are inferred."""
    cells = _dp16kd_cells(RegisteredReadRam(DP16KD_WORDS, 128), _Ecp5())
    assert len(cells) == 8
    for cell in cells:
        assert 'parameter \\REGMODE_B "OUTREG"' in cell
        assert "parameter \\DATA_WIDTH_B 18" in cell
        assert "connect \\OCEB " in cell and "connect \\CEB " in cell
    assert _dp16kd_cells(RegisteredReadRam(2 * DP16KD_WORDS, 128), _Ecp5()) == []
    assert _dp16kd_cells(RegisteredReadRam(DP16KD_WORDS, 128), None) == []
    assert _dp16kd_cells(RegisteredReadRam(DP16KD_WORDS, 24), _Ecp5()) == []


def test_uart_sends_8n1():
    dut = UartTx(5)
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    samples = []

    async def bench(ctx):
        for byte in b"Az\x00\xff":
            ctx.set(dut.i.payload, byte), ctx.set(dut.i.valid, 1)
            await ctx.tick().until(dut.i.ready)
        ctx.set(dut.i.valid, 0)

    async def watch(ctx):
        async for _, _, tx in ctx.tick().sample(dut.tx):
            samples.append(tx)
            if len(samples) > 5 * 10 * 4 + 20:
                break

    sim.add_testbench(bench)
    sim.add_testbench(watch)
    sim.run()
    assert uart_decode(samples, 5) == b"Az\x00\xff"


def error_of(factory, *args, **kwargs):
    return constructor_error(lambda: factory(*args, **kwargs))[1]


def test_self_test_refuses_what_it_cannot_check():
    config = PRESETS["demo"]
    regs = TopSortKernel(config).register_map
    assert "config.trees must equal config.reuse" in error_of(
        SelfTest, PRESETS["tiny"], regs, [BistJob(1)])
    assert "jobs[1].records must be between 0 and the capacity 1984, not 1985" in \
        error_of(SelfTest, config, regs, [BistJob(1), BistJob(1985)])
    assert "inject must be one of" in error_of(SelfTest, config, regs, [BistJob(9)],
                                                        inject="keys")
    assert "jobs[0].records must be at least 2" in error_of(
        SelfTest, config, regs, [BistJob(1)], inject="input")
    assert "key_mask must be a 32-bit value" in error_of(BistJob, 4, key_mask=1 << 32)
    assert "key_bits and value_bits must be 32" in error_of(
        SelfTest, config_from("demo", ["key_bits=64", "value_bits=0"]), regs, [BistJob(1)])


def test_nextpnr_report_is_read(tmp_path):
    report = tmp_path / "r.json"
    report.write_text('{"utilization": {"TRELLIS_COMB": {"used": 10, "available": 100}}, '
                      '"fmax": {"$glbnet$clk": {"achieved": 61.5, "constraint": 25.0}}}')
    fmax, use = read_nextpnr_report(report)
    assert fmax == {"$glbnet$clk": (61.5, 25.0)} and use == {"TRELLIS_COMB": (10, 100)}
    assert set(BOARDS) >= {"ulx3s-85f", "ecp5-5g-evn"}


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_every_board_build_is_planned_at_the_board_clock(board):
    # The board's own platform, as `make bitstream` elaborates it: ECP5 platforms make `sync`
    # reset-less (their flip-flops start from the global set/reset), which a block asking for
    # the domain's reset would trip over only here.
    plan = prepare_build(board)
    lpf = plan.files[f"{NAME}.lpf"]
    frequency = BOARDS[board].create().default_clk_frequency
    assert re.search(rf'^FREQUENCY PORT "\S+" {frequency} HZ;$', lpf, re.MULTILINE), lpf
    assert "--router router1" in plan.files[f"build_{NAME}.sh"]
    assert "--timing-allow-fail" not in plan.files[f"build_{NAME}.sh"]
    # Measured rather than built for the board: a constraint to push against, never a failure,
    # and a placement seed (nextpnr's own unless one is asked for).
    pushed = prepare_build(board, target_mhz=150, seed=2)
    assert re.search(r'^FREQUENCY PORT "\S+" 150000000.0 HZ;$', pushed.files[f"{NAME}.lpf"],
                     re.MULTILINE)
    assert "--timing-allow-fail" in pushed.files[f"build_{NAME}.sh"]
    assert "--seed" not in plan.files[f"build_{NAME}.sh"]
    assert "--seed 2 " in pushed.files[f"build_{NAME}.sh"]


@pytest.mark.slow
def test_bitstream_builds_and_meets_the_board_clock(tmp_path):
    """`make bitstream BOARD=ulx3s-85f`'s build (about 35 minutes: router1 on one thread)."""
    from topsort_hdl.targets.onchip.boards import build_bitstream

    result = build_bitstream("ulx3s-85f", tmp_path)
    assert result.bitstream.stat().st_size > 100_000
    (achieved, required), = result.fmax.values()
    assert required == 25.0 and achieved >= required
    assert result.utilisation["DP16KD"][0] > 0
