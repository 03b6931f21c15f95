"""Run a sort on a TopSort kernel the way XRT does: lay the records out in the trees' buffer
halves, program the arguments, start, poll ap_done, read the completion report and reassemble
the result (:func:`run_sort`), over any :class:`Device`.
"""

from dataclasses import dataclass

from ..core.contract import (
    AP_DONE,
    AP_START,
    CONTROL,
    KEY_ORDER_ARGUMENT,
    RECORDS_ARGUMENT,
    REPORT_ARGUMENT,
    default_halves,
    default_report_address,
    half_argument,
    kernel_arguments,
    key_order_word,
    output_chunks,
    place_bytes,
    status_names,
)

__all__ = ["Device", "RunResult", "KernelError", "Registers", "run_sort", "reassemble"]


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
    """The kernel reported an error in its status word."""

    def __init__(self, status, report=None):
        self.status = status
        self.report = report
        super().__init__(f"kernel status {status:#x}: "
                         f"{', '.join(status_names(status)) or 'unknown'}")


@dataclass
class RunResult:
    output: bytes
    report: object      # the job's contract.Report
    polls: int

    @property
    def status(self):
        return self.report.status

    @property
    def phase1_cycles(self):
        return self.report.phase1_cycles

    @property
    def phase2_cycles(self):
        return self.report.phase2_cycles


async def run_sort(device, layout, registers, data, halves=None, report_address=None,
                   poll_interval=None, key_type="unsigned", descending=False):
    """Sort ``data`` (records of the layout's record size) on ``device`` by their keys as
    ``key_type`` (``"unsigned"``, ``"signed"`` or ``"float"``) in ascending order, or
    ``descending``; return a
    :class:`RunResult` whose ``output`` is the sorted records and ``report`` the kernel's
    completion report. Raises :class:`KernelError` when the report's status is not 0 (then
    nothing else is read back).

    ``layout`` is a :class:`~topsort_hdl.core.contract.Layout`; ``registers`` has ``offset(name)``
    (a register map, or :class:`Registers` over ``registers.json``). ``halves`` (default
    :func:`default_halves`) places the trees' buffer halves, ``report_address`` (default
    :func:`default_report_address`) the report. ``poll_interval`` is an awaitable factory
    called between polls of ap_done.
    """
    order = key_order_word(key_type, descending)
    size = layout.record_bytes
    if len(data) % size:
        raise ValueError(f"data must be a whole number of {size}-byte records, "
                         f"not {len(data)} bytes")
    count = len(data) // size
    halves = halves or default_halves(layout)
    if report_address is None:
        report_address = default_report_address(layout)
    for tree, part in enumerate(place_bytes(data, size, layout.trees, layout.placement)):
        device.write_memory(halves[tree][0], part)
    # Like XRT: every argument word, then ap_start; completion from ap_done alone.
    values = {RECORDS_ARGUMENT: count, KEY_ORDER_ARGUMENT: order,
              REPORT_ARGUMENT: report_address}
    values.update({half_argument(i, h): halves[i][h] for i in range(layout.trees)
                   for h in (0, 1)})
    for name, bits in kernel_arguments(layout):
        base = registers.offset(name)
        await device.write_register(base, values[name] & 0xFFFFFFFF)
        if bits > 32:
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
    report = layout.parse_report(device.read_memory(report_address, layout.report_bytes))
    if report.status:
        raise KernelError(report.status, report)
    return RunResult(reassemble(device, layout, halves, count, report), report, polls)


def reassemble(device, layout, halves, count, report):
    """Read the phase-2 output back in stream order from its batches, each in the output half
    the report names for its tree."""
    out = bytearray(count * layout.record_bytes)
    for offset, address, length in output_chunks(layout, count, halves, report):
        out[offset:offset + length] = device.read_memory(address, length)
    return bytes(out)


class Registers:
    """Register offsets from ``registers.json`` (its ``registers`` list)."""

    def __init__(self, saved):
        self.offsets = {entry["name"]: entry["offset"] for entry in saved["registers"]}

    def offset(self, name):
        return self.offsets[name]

