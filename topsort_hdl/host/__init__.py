"""The host side of a TopSort kernel: lay records out, program and start the kernel the way XRT
does, poll, and reassemble the result.

The same code drives the RTL in simulation (through :class:`Device` implemented on cocotbext-axi
models) and, later, a real card through pyxrt. Every device access is ``async`` so that a
simulated device can advance time while the host waits.
"""

import struct
from dataclasses import dataclass

from ..axi.control import AP_DONE, AP_START, CONTROL
from ..kernel.kernel import STATUS_BITS, half_argument, kernel_arguments
from ..kernel.plan import output_bases, split_records, tree_plan
from ..models.memory import batch_chunks

__all__ = ["Device", "RunResult", "KernelError", "half_addresses", "run_sort"]


class Device:
    """What the host needs from a card (or a simulation of one)."""

    async def write_register(self, offset, value):
        raise NotImplementedError

    async def read_register(self, offset):
        raise NotImplementedError

    def write_memory(self, address, data):
        raise NotImplementedError

    def read_memory(self, address, length):
        raise NotImplementedError


class KernelError(RuntimeError):
    """The kernel reported an error in its status register."""

    def __init__(self, status):
        self.status = status
        names = [name for name, bit in STATUS_BITS.items() if status >> bit & 1]
        super().__init__(f"kernel status {status:#x}: {', '.join(names) or 'unknown'}")


@dataclass
class RunResult:
    output: bytes
    status: int
    phase1_cycles: int
    phase2_cycles: int
    polls: int


def half_addresses(config):
    """Where a host puts tree i's two buffer halves: channels 2i and 2i+1 (Table I of the
    paper), as ``[(half 0, half 1), ...]``."""
    return [(2 * i * config.channel_bytes, (2 * i + 1) * config.channel_bytes)
            for i in range(config.trees)]


async def run_sort(device, config, register_map, data, halves=None, poll_interval=None):
    """Sort ``data`` (records of ``config.record_bytes`` bytes) on ``device``; return a
    :class:`RunResult` whose ``output`` is the sorted records. Raises :class:`KernelError`
    when the kernel flags an error (then nothing is read back).

    ``halves`` (default :func:`half_addresses`) places the trees' buffer halves.
    ``poll_interval`` is an awaitable factory called between polls of ap_done.
    """
    size = config.record_bytes
    if len(data) % size:
        raise ValueError(f"data must be a whole number of {size}-byte records, "
                         f"not {len(data)} bytes")
    count = len(data) // size
    halves = halves or half_addresses(config)
    offset = 0
    for tree, share in enumerate(split_records(count, config.trees)):
        device.write_memory(halves[tree][0], data[offset:offset + share * size])
        offset += share * size
    # Like XRT: every argument word, then ap_start; completion from ap_done alone.
    values = {"records": count}
    values.update({half_argument(i, h): halves[i][h] for i in range(config.trees)
                   for h in (0, 1)})
    for name, _ in kernel_arguments(config):
        base = register_map.offset(name)
        await device.write_register(base, values[name] & 0xFFFFFFFF)
        await device.write_register(base + 4, values[name] >> 32)
    await device.write_register(CONTROL, 1 << AP_START)
    polls = 0
    while True:
        polls += 1
        control = await device.read_register(CONTROL)
        if control >> AP_DONE & 1:
            break
        if poll_interval is not None:
            await poll_interval()
    status = await device.read_register(register_map.offset("status"))
    counters = []
    for name in ("phase1_cycles", "phase2_cycles"):
        base = register_map.offset(name)
        low = await device.read_register(base)
        high = await device.read_register(base + 4)
        counters.append(high << 32 | low)
    if status:
        raise KernelError(status)
    return RunResult(reassemble(device, config, halves, count), status, *counters, polls)


def reassemble(device, config, halves, count):
    """Read the phase-2 output back in stream order from its batches."""
    plans = [tree_plan(n, config.leaves, config.runs_per_tree)
             for n in split_records(count, config.trees)]
    bases = output_bases(plans, halves, config.reuse)
    out = bytearray(count * config.record_bytes)
    for offset, address, length in batch_chunks(len(out), bases, config.batch_bytes,
                                                config.group):
        out[offset:offset + length] = device.read_memory(address, length)
    return bytes(out)


def pack_records(records):
    """``(key, value)`` pairs as the record file format: little-endian, key in the upper word."""
    return b"".join(struct.pack("<II", value, key) for key, value in records)


def unpack_records(data):
    return [(key, value) for value, key in struct.iter_unpack("<II", data)]
