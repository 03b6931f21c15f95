"""What the read and write engines and the tree controllers share: the layouts of the engines'
commands and the engines' parameter checks."""

from amaranth.lib import data
from amaranth.utils import ceil_log2, exact_log2

from ...core.axi_params import MAX_OUTSTANDING
from ..records import check_range
from .signature import AxiParams

__all__ = ["region_layout", "write_command_layout", "check_engine_params"]


def region_layout(params, length_bits, targets):
    """A read or write command: ``bytes`` bytes from byte address ``addr`` for ``target``."""
    return data.StructLayout({
        "target": max(1, ceil_log2(targets)),
        "addr": params.addr_width,
        "bytes": length_bits,
    })


def check_engine_params(params, burst_bytes, max_outstanding, length_bits):
    """Checks the read and write engines share; returns burst length in beats."""
    if not isinstance(params, AxiParams):
        raise TypeError(f"params must be an AxiParams, not {params!r}")
    params.check_burst_bytes("burst_bytes", burst_bytes)
    check_range("max_outstanding", max_outstanding, 1, MAX_OUTSTANDING)
    check_range("length_bits", length_bits, exact_log2(params.beat_bytes) + 1, params.addr_width)
    return burst_bytes // params.beat_bytes


def write_command_layout(params, ports, slots, length_bits):
    """A write engine's command: a byte address per port and slot, and the byte count."""
    return data.StructLayout({
        "addr": data.ArrayLayout(params.addr_width, ports * slots),
        "bytes": length_bits,
    })
