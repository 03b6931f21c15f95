"""cocotb testbench for the emitted AXI read and write engines against cocotbext-axi ``AxiRam``.

Every channel of every memory pauses at random in the second half of each test; a protocol
monitor checks each master on every cycle; data are compared byte for byte, and the bursts
issued against the layout model.

Parameters from the environment: TOPSORT_ENGINE (reader or writer), TOPSORT_DATA_WIDTH,
TOPSORT_LEAVES (reader), TOPSORT_PORTS, TOPSORT_SLOTS and TOPSORT_BATCH_BYTES (writer),
TOPSORT_BURST_BYTES,
TOPSORT_OUTSTANDING, TOPSORT_SEED.
"""

import os
import random

import cocotb
from amaranth.lib import data
from cocotb.triggers import ReadOnly, RisingEdge

from topsort_hdl.core.golden import batch_chunks, read_bursts
from topsort_hdl.hardware.axi import AxiParams, BeatLayout
from topsort_hdl.hardware.axi.commands import region_layout

from .axi_ram import Pauses, attach_ram, start_monitor
from .stream_driver import reset, run_streams

ENGINE = os.environ.get("TOPSORT_ENGINE", "reader")
DATA_WIDTH = int(os.environ.get("TOPSORT_DATA_WIDTH", "64"))
LEAVES = int(os.environ.get("TOPSORT_LEAVES", "4"))
PORTS = int(os.environ.get("TOPSORT_PORTS", "1"))
SLOTS = int(os.environ.get("TOPSORT_SLOTS", "1"))
BURST = int(os.environ.get("TOPSORT_BURST_BYTES", "64"))
BATCH = int(os.environ.get("TOPSORT_BATCH_BYTES", "4096"))
OUTSTANDING = int(os.environ.get("TOPSORT_OUTSTANDING", "4"))
SEED = int(os.environ.get("TOPSORT_SEED", "1"))
LENGTH_BITS = 36
CHANNEL = 1 << 28
PARAMS = AxiParams(data_width=DATA_WIDTH, id_width=max(1, (LEAVES - 1).bit_length()))
BEAT = PARAMS.beat_bytes


def pack(layout, **fields):
    return sum(value << layout[name].offset for name, value in fields.items())


def regions(rng, leaves):
    """Per leaf 1-2 regions starting and ending anywhere, in 8 channels, some across a page."""
    out = []
    for leaf in range(leaves):
        for _ in range(rng.choice([1, 2])):
            length = rng.choice([1, BEAT - 1, BEAT + 1, rng.randrange(12 * BURST)])
            addr = rng.randrange(8) * CHANNEL + rng.choice(
                [4096 - rng.randrange(1, 2 * BEAT), rng.randrange(1 << 22)])
            out.append((leaf, addr, length))
    rng.shuffle(out)
    return out


@cocotb.test(skip=ENGINE != "reader")
async def reader_regions_under_pauses(dut):
    """Regions for every leaf, from 8 channels; ideal memory, then pauses and backpressure."""
    dut.cmd__valid.value = 0    # driven before reset: an X here would poison the counters
    for leaf in range(LEAVES):
        getattr(dut, f"leaf__{leaf}__ready").value = 0
    rng = random.Random(SEED)
    pauses = Pauses(rng)
    ram = attach_ram(dut, "axi_", pauses)   # before reset, so its outputs are never X
    await reset(dut)
    checker = start_monitor(dut, "axi_", DATA_WIDTH, OUTSTANDING)
    command = region_layout(PARAMS, LENGTH_BITS, LEAVES)
    beat_layout = BeatLayout(PARAMS)
    for pause, stall in ((0.0, 0.0), (0.3, 0.3)):
        pauses.probability = pause
        checker.bursts["ar"].clear()
        commands = regions(rng, LEAVES)
        for _, addr, length in commands:
            ram.write(addr, rng.randbytes(length))
        beats = {f"leaf__{leaf}": sum(n for t, a, length in commands if t == leaf
                                      for _, n in read_bursts(a, length, BEAT, BURST))
                 for leaf in range(LEAVES)}
        words = [pack(command, target=t, addr=a, bytes=n) for t, a, n in commands]
        result = await run_streams(dut, {"cmd": words}, beats, rng=rng, stall=stall)
        for leaf in range(LEAVES):
            got, current = [], bytearray()
            for value in result.outputs[f"leaf__{leaf}"]:
                word, begin, end, last = beat_layout.unpack(value)
                current += word.to_bytes(BEAT, "little")[begin:end]
                if last:
                    got.append(bytes(current))
                    current = bytearray()
            expected = [ram.read(a, n) for t, a, n in commands if t == leaf]
            assert got == expected, f"leaf {leaf}: data differ"
            issued = [(a, n + 1) for rid, a, n in checker.bursts["ar"] if rid == leaf]
            assert issued == [b for t, a, n in commands if t == leaf
                              for b in read_bursts(a, n, BEAT, BURST)], f"leaf {leaf}: bursts"
        assert dut.idle.value == 1 and dut.error.value == 0
        checker.idle()


async def write_job(dut, bases, payload, rng, gap, command):
    """Send one job's command and stream; return the cycles until ``done``."""
    step = PORTS * BEAT
    dut.cmd__payload.value = pack(command, bytes=len(payload), **{
        "addr": sum(base << (j * PARAMS.addr_width) for j, base in enumerate(bases))})
    command_taken, offering, sent = False, False, 0
    max_cycles = 5000 + 50 * len(payload) // BEAT
    for cycle in range(max_cycles):
        await RisingEdge(dut.clk)   # drive after the edge, judge handshakes before the next
        dut.cmd__valid.value = int(not command_taken)
        if command_taken:
            if not offering and sent < len(payload) and rng.random() >= gap:
                chunk = payload[sent:sent + step].ljust(step, b"\0")
                dut.i__payload.value = int.from_bytes(chunk, "little")
                offering = True
        dut.i__valid.value = int(offering)
        await ReadOnly()
        if not command_taken and dut.cmd__ready.value:
            command_taken = True
        elif offering and dut.i__ready.value:
            offering = False
            sent += step
        if dut.done.value:
            assert sent >= len(payload), "done before the whole stream was taken"
            await RisingEdge(dut.clk)
            dut.i__valid.value = 0
            return cycle
    raise TimeoutError(f"write job of {len(payload)} bytes not done in {max_cycles} cycles")


@cocotb.test(skip=ENGINE != "writer")
async def writer_jobs_under_pauses(dut):
    """Jobs back to back (lengths 1 byte to many batches); ideal memory, then pauses."""
    dut.cmd__valid.value = 0    # driven before reset: an X here would poison the counters
    dut.i__valid.value = 0
    rng = random.Random(SEED)
    pauses = Pauses(rng)
    rams = [attach_ram(dut, "axi__0_", pauses)]   # before reset, so their outputs are never X
    rams += [attach_ram(dut, f"axi__{j}_", pauses, mem=rams[0].mem)  # one memory, as HBM
             for j in range(1, PORTS)]
    await reset(dut)
    checkers = [start_monitor(dut, f"axi__{j}_", DATA_WIDTH, OUTSTANDING) for j in range(PORTS)]
    command = data.StructLayout({"addr": data.ArrayLayout(PARAMS.addr_width, PORTS * SLOTS),
                                 "bytes": LENGTH_BITS})
    for job, (pause, gap) in enumerate([(0.0, 0.0)] * 3 + [(0.3, 0.3)] * 3):
        pauses.probability = pause
        length = rng.choice([1, BEAT + 3, PORTS * BEAT, rng.randrange(1, 6 * BATCH * PORTS)])
        align = BATCH if SLOTS > 1 else BEAT
        bases = [rng.randrange(8) * CHANNEL + (job * PORTS * SLOTS + j) * (1 << 22)
                 + align * rng.randrange(4096 // (align // BEAT)) for j in range(PORTS * SLOTS)]
        payload = rng.randbytes(length)
        for checker in checkers:
            checker.bursts["aw"].clear()
        dut._log.info("job %d: %d bytes, bases %s, pause %s", job, length,
                      [hex(b) for b in bases], pause)
        await write_job(dut, bases, payload, rng, gap, command)
        per_port = [0] * PORTS
        expected = [[] for _ in range(PORTS)]
        for k, (offset, addr, n) in enumerate(batch_chunks(length, bases, BATCH, SLOTS)):
            assert rams[0].read(addr, n) == payload[offset:offset + n], \
                f"job {job}: bytes {offset}..{offset + n} differ"
            per_port[k % PORTS] += n
            expected[k % PORTS] += read_bursts(addr, n, BEAT, BURST)
        for j, checker in enumerate(checkers):
            issued = [(a, n + 1) for _, a, n in checker.bursts["aw"]]
            if SLOTS == 1:   # a port's region is contiguous: bursts may span its batches
                expected[j] = read_bursts(bases[j], per_port[j], BEAT, BURST)
            assert issued == expected[j], f"port {j} bursts"
            checker.idle()
        assert dut.error.value == 0 and dut.busy.value == 0
