"""The register map of a Vitis RTL kernel's AXI4-Lite control slave (``ap_ctrl_hs``), in plain
Python (no Amaranth).

:class:`RegisterMap` is the single source of truth for offsets: the control slave
(:class:`~topsort_hdl.hardware.axi.control.ControlRegisters`) decodes from it, and the kernel.xml
generator, the host library and docs/kernel-contract.md read it.

Layout (byte offsets, 32-bit words), as Vitis HLS lays out an ``ap_ctrl_hs`` kernel:

* ``0x00`` control: bit 0 ap_start (RW; write 1 to start; cleared when the kernel's ``ready``
  pulses unless auto_restart is set; writing 0 does not stop a run), bit 1 ap_done (RO, clear
  on read), bit 2 ap_idle (RO), bit 3 ap_ready (RO, clear on read), bit 7 auto_restart (RW),
  bit 9 interrupt (RO).
* ``0x04`` GIE, ``0x08`` IER (bit 0 done, bit 1 ready), ``0x0C`` ISR (toggle on write).
* ``0x10`` on: one 8-byte slot per argument (low word, then high word), then ``status`` (one
  word, in an 8-byte slot so that counters stay 8-byte aligned), then one 8-byte slot per
  64-bit counter.
"""

import keyword
import re
from typing import NamedTuple

from .contract import ARGS_BASE, CONTROL, GIE, IER, ISR, SLOT_BYTES
from .params import check_range

__all__ = ["Register", "RegisterMap"]

_RESERVED = ("control", "gie", "ier", "isr", "status")
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class Register(NamedTuple):
    """One entry of a :class:`RegisterMap`.

    ``kind`` is ``"control"``, ``"arg"``, ``"status"`` or ``"counter"``; ``bytes`` is 4 for a
    one-word register (arguments of 32 bits or fewer included) and 8 for a low/high pair.
    """

    name: str
    offset: int
    bytes: int
    access: str
    kind: str
    bits: int
    description: str


def _check_name(what, name, seen):
    if not isinstance(name, str):
        raise TypeError(f"{what} must be a string, not {name!r}")
    if not _NAME.match(name) or keyword.iskeyword(name):
        raise ValueError(f"{what} must be an identifier (a letter, then letters, digits or _; "
                         f"no Python keyword), not {name!r}")
    if name in _RESERVED:
        raise ValueError(f"{what} must not be one of the reserved names "
                         f"{', '.join(_RESERVED)}, not {name!r}")
    if name in seen:
        raise ValueError(f"{what} {name!r} is a duplicate: argument and counter names must be "
                         f"unique")
    seen.add(name)


def _check_sequence(what, value):
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a sequence, not {value!r}")
    return list(value)


class RegisterMap:
    """Offsets of every register of :class:`ControlRegisters`, in address order.

    Parameters
    ----------
    args : sequence of (str, int)
        Kernel arguments as ``(name, bits)``, bits 1 to 64, in slot order.
    counters : sequence of str
        Names of the 64-bit read-only counters.

    Members
    -------
    entries : list of Register
    args : tuple of (str, int)
    counters : tuple of str
    status_offset : int
    size : int
        Bytes spanned from 0 to the end of the last slot (the kernel.xml port range).
    """

    def __init__(self, args, counters=()):
        seen = set()
        checked = []
        for index, item in enumerate(_check_sequence("args", args)):
            if not isinstance(item, (tuple, list)) or len(item) != 2:
                raise TypeError(f"args[{index}] must be a (name, bits) pair, not {item!r}")
            name, bits = item
            _check_name(f"args[{index}] name", name, seen)
            check_range(f"args[{index}] ({name!r}) bits", bits, 1, 64)
            checked.append((name, bits))
        names = _check_sequence("counters", counters)
        for index, name in enumerate(names):
            _check_name(f"counters[{index}]", name, seen)
        self.args = tuple(checked)
        self.counters = tuple(names)

        entries = [
            Register("control", CONTROL, 4, "rw", "control", 10,
                     "bit 0 ap_start (RW; write 1 to start, cleared by the kernel's ready "
                     "unless auto_restart), bit 1 ap_done (RO, clear on read), bit 2 ap_idle "
                     "(RO), bit 3 ap_ready (RO, clear on read), bit 7 auto_restart (RW), "
                     "bit 9 interrupt (RO)"),
            Register("gie", GIE, 4, "rw", "control", 1, "bit 0 global interrupt enable"),
            Register("ier", IER, 4, "rw", "control", 2,
                     "interrupt enable: bit 0 ap_done, bit 1 ap_ready"),
            Register("isr", ISR, 4, "rw", "control", 2,
                     "interrupt status: bit 0 ap_done, bit 1 ap_ready (write 1 to toggle)"),
        ]
        offset = ARGS_BASE
        for name, bits in self.args:
            if bits > 32:
                text = f"argument {name}, {bits} bits: low word at +0, high word at +4"
            else:
                text = f"argument {name}, {bits} bits (+4 reads 0)"
            entries.append(Register(name, offset, 8 if bits > 32 else 4, "rw", "arg", bits,
                                    text))
            offset += SLOT_BYTES
        self.status_offset = offset
        entries.append(Register("status", offset, 4, "ro", "status", 32,
                                "kernel status word (+4 reads 0)"))
        offset += SLOT_BYTES
        for name in self.counters:
            entries.append(Register(name, offset, 8, "ro", "counter", 64,
                                    f"counter {name}, 64 bits: low word at +0, high at +4"))
            offset += SLOT_BYTES
        self.entries = entries
        self.size = offset
        self._by_name = {entry.name: entry for entry in entries}

    def __iter__(self):
        return iter(self.entries)

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"no register named {name!r}; the map has "
                           f"{', '.join(self._by_name)}") from None

    def offset(self, name):
        """Byte offset of the register (or slot) called ``name``."""
        return self[name].offset

    @property
    def address_bits(self):
        """The narrowest AXI4-Lite address width that reaches every register."""
        return (self.size - 1).bit_length()

    def __repr__(self):
        return f"RegisterMap(args={list(self.args)!r}, counters={list(self.counters)!r})"
