"""The configurations an exploration enumerates: every axis the kernel has is a field of
:class:`~topsort_hdl.core.config.KernelConfig`, and a point is one."""

import dataclasses
from dataclasses import dataclass

from ...core.axi_params import MAX_DATA_WIDTH
from ...core.boards import HBM_BOARDS
from ...core.config import KernelConfig
from ...core.params import MERGE_UNITS
from ...core.tree_shape import MAX_LEAVES

__all__ = ["AXES", "Space", "enumerate_space", "DEFAULT_MAX_LEAVES"]

# The axes a user can narrow or widen (``--trees 8,16``), the configuration field of each.
AXES = ("trees", "leaves", "rate", "reuse", "merge_unit", "presort")
# Leaves beyond 64 are allowed (``--leaves 128``) but not enumerated by default: every leaf is
# a feeder and a read buffer, and the model gains little past the passes they save.
DEFAULT_MAX_LEAVES = 64
# Rates up to a 512-bit beat by default (``--rate`` may go to AXI's 1024): an HBM port moves
# 256 bits at 450 MHz, 512 at the kernel's clock, so a wider beat only waits for it.
DEFAULT_BEAT_BITS = 512


def _powers(low, high):
    out, value = [], low
    while value <= high:
        out.append(value)
        value *= 2
    return tuple(out)


@dataclass(frozen=True)
class Space:
    """What to enumerate on ``board`` for records of ``key_bits`` + ``value_bits``: each axis
    a tuple of values (None: every value the board and records allow), and the clocks in Hz
    (None: the board's)."""

    board: str
    key_bits: int = 32
    value_bits: int = 32
    equal_keys: str = "any"
    trees: tuple = None
    leaves: tuple = None
    rate: tuple = None
    reuse: tuple = None
    merge_unit: tuple = None
    presort: tuple = None
    clocks_hz: tuple = None

    def values(self, axis):
        """The values of ``axis`` this space enumerates."""
        given = getattr(self, axis)
        if given is not None:
            return tuple(given)
        board = HBM_BOARDS[self.board]
        record_bits = self.key_bits + self.value_bits
        return {
            "trees": _powers(2, board.channels // 2),
            "leaves": _powers(2, min(DEFAULT_MAX_LEAVES, MAX_LEAVES)),
            "rate": _powers(1, min(DEFAULT_BEAT_BITS, MAX_DATA_WIDTH) // record_bits),
            "reuse": _powers(2, board.channels // 2),
            "merge_unit": MERGE_UNITS,
            "presort": (0, 1),
        }[axis]

    def clocks(self):
        return tuple(self.clocks_hz or (HBM_BOARDS[self.board].clock_hz,))


def point_name(config):
    """A point's name: its board and every axis (``u280-t16-l32-r8-u4-flims-ps``)."""
    presort = "-ps" if config.presort else ""
    clock = HBM_BOARDS[config.board].clock_hz
    mhz = f"@{config.clock_hz / 1e6:g}" if config.clock_hz != clock else ""
    return (f"{config.board}-t{config.trees}-l{config.leaves}-r{config.rate}-u{config.reuse}-"
            f"{config.merge_unit}{presort}{mhz}")


def enumerate_space(space):
    """Every valid configuration of ``space`` (``KernelConfig`` refuses the others; their
    count per reason is returned too): ``(configs, refused)``."""
    base = KernelConfig(board=space.board, key_bits=space.key_bits, value_bits=space.value_bits,
                        equal_keys=space.equal_keys)
    configs, refused = [], {}
    axes = [space.values(axis) for axis in AXES]

    def product(index, chosen):
        if index == len(axes):
            yield dict(zip(AXES, chosen, strict=True))
            return
        for value in axes[index]:
            yield from product(index + 1, (*chosen, value))

    for values in product(0, ()):
        for clock in space.clocks():
            try:
                config = dataclasses.replace(base, clock_hz=clock, **values)
            except ValueError as error:
                # The rule without the value ("..., not 3") nor its figures (" (...)").
                reason = str(error).split(", not ")[0].split(" (")[0]
                refused[reason] = refused.get(reason, 0) + 1
                continue
            configs.append(dataclasses.replace(config, name=point_name(config)))
    return configs, refused
