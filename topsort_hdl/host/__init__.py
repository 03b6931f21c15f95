"""The host side of a TopSort kernel: lay records out, program and start the kernel the way XRT
does, poll, read the completion report and reassemble the result.

Plain Python: the layout comes from the layout descriptor (:class:`~.core.contract.Layout`,
``layout.json`` next to the kernel), the register offsets from ``registers.json`` (or a
register map), the per-job facts from the report the kernel writes at the end of every job; a
host never re-runs the kernel's pass plan.

The same code drives the RTL in simulation (through a :class:`Device` implemented on
cocotbext-axi models). Every register access is ``async`` so that a simulated device can
advance time while the host waits.
"""

from ..core.contract import Layout, default_halves, default_report_address
from .records import pack_records, record_dtype, unpack_array, unpack_records
from .run import Device, KernelError, Registers, RunResult, reassemble, run_sort

__all__ = ["Device", "RunResult", "KernelError", "Layout", "Registers", "default_halves",
           "default_report_address", "run_sort", "reassemble", "pack_records", "record_dtype",
           "unpack_array", "unpack_records"]
