"""Kernel configurations: the named presets and every parameter derived from them."""

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from .axi_params import MAX_DATA_WIDTH, MAX_OUTSTANDING, PAGE_BYTES, AxiParams
from .boards import HBM_BOARDS
from .contract import PLACEMENTS, report_bytes
from .params import (
    COUNT_BITS,
    MAX_MERGE_RATE,
    check_merge_unit,
    check_power_of_two,
    check_range,
)
from .tree_shape import MAX_LEAVES

__all__ = ["KernelConfig", "PRESETS", "config_from", "saved_presets", "presets_dir", "KEY_BITS",
           "RECORD_BITS", "EQUAL_KEYS", "COUNT_BITS", "check_preset_name", "CLOCK_HZ_RANGE"]

# A record is one little-endian integer of key_bits + value_bits bits, the key in its upper
# bits: 4, 8 or 16 bytes (a power of two: records tile beats, bursts and batches), the key 32 or
# 64 bits (docs/record-formats.md).
RECORD_BITS = (32, 64, 128)
KEY_BITS = (32, 64)
# Records of equal keys leave in "any" order (the merges are exact, not stable), or ordered
# "by_value": the merge logic compares whole records, the key first (docs/record-formats.md).
EQUAL_KEYS = ("any", "by_value")
# A kernel clock an FPGA can run: the performance model's figures mean nothing outside it.
CLOCK_HZ_RANGE = (1_000_000, 1_000_000_000)
# A preset's name, as every built-in one is: a saved preset's file name and a word in the
# column `topsort-hdl configs` prints (no path separator, no dot, no space).
_PRESET_NAME = re.compile(r"[A-Za-z0-9_-]+")


class BoardDefault(int):
    """A parameter's value taken from board ``board`` (it was left 0): a configuration made
    from this one for another board (``dataclasses.replace(config, board=...)``) takes that
    board's value instead, as one made from scratch would."""

    def __new__(cls, value, board):
        default = super().__new__(cls, value)
        default.board = board
        return default

    def __getnewargs__(self):       # (copies and pickles keep the board)
        return int(self), self.board


@dataclass(frozen=True)
class KernelConfig:
    """The shape of a two-phase TopSort kernel.

    Phase 1: ``trees`` merge trees of ``leaves`` leaves and ``rate`` records per cycle, tree i
    ping-ponging between channels 2i and 2i+1. Phase 2: ``reuse`` of them (trees 0, S, 2S, ...
    with S = trees / reuse) and the extra merge units form one tree of ``reuse * leaves`` leaves
    and ``reuse * rate`` records per cycle. Each tree ends phase 1 with at most
    ``runs_per_tree = reuse * leaves / trees`` runs, one per phase-2 leaf.
    """

    name: str = "custom"
    board: str = "u280"
    trees: int = 16
    rate: int = 8
    leaves: int = 16
    reuse: int = 4
    key_bits: int = 32
    value_bits: int = 32
    equal_keys: str = "any"
    placement: str = "dealt"         # how hosts place the input in the trees (contract.PLACEMENTS)
    presort: int = 0                 # 1: pass 1 sorts each beat as it reads it (runs of a beat)
    merge_unit: str = "mms"          # the trees' merge units (params.MERGE_UNITS)
    read_burst_bytes: int = 1024     # phase-1 reads
    reuse_burst_bytes: int = 4096    # phase-2 reads: each reused tree's port reads S channel
                                     # pairs through the HBM crossbar
    write_burst_bytes: int = 4096
    batch_bytes: int = 4096          # phase-2 output batches, round robin over the write ports
    read_outstanding: int = 16
    write_outstanding: int = 8
    channel_bytes: int = 0           # 0: the board's
    clock_hz: int = 0                # 0: the board's

    def __post_init__(self):
        if self.board not in HBM_BOARDS:
            raise ValueError(f"board must be one of {', '.join(HBM_BOARDS)}, "
                             f"not {self.board!r}")
        board = HBM_BOARDS[self.board]
        for name in ("channel_bytes", "clock_hz"):
            value = getattr(self, name)
            if not value or isinstance(value, BoardDefault) and value.board != self.board:
                object.__setattr__(self, name, BoardDefault(getattr(board, name), self.board))
        check_power_of_two("trees", self.trees, high=64, low=2)
        check_power_of_two("leaves", self.leaves, high=MAX_LEAVES, low=2)
        if self.key_bits not in KEY_BITS:
            raise ValueError(f"key_bits must be 32 or 64, not {self.key_bits}")
        if self.equal_keys not in EQUAL_KEYS:
            raise ValueError(f"equal_keys must be one of {', '.join(EQUAL_KEYS)}, not "
                             f"{self.equal_keys!r}")
        if self.presort not in (0, 1):
            raise ValueError(f"presort must be 0 or 1, not {self.presort}")
        check_merge_unit(self.merge_unit)
        if self.placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, not "
                             f"{self.placement!r}")
        record_bits = self.key_bits + self.value_bits
        if record_bits not in RECORD_BITS:
            raise ValueError(f"key_bits + value_bits must be 32, 64 or 128 (4, 8 or 16-byte "
                             f"records), not {record_bits}")
        # A phase-1 tree's root bundle is one AXI beat: its records fill at most the widest
        # data bus. (Phase 2's root, reuse * rate records, is one merge unit: MAX_MERGE_RATE.)
        check_power_of_two("rate", self.rate, high=MAX_DATA_WIDTH // record_bits)
        if self.presort and self.rate < 2:
            raise ValueError(f"presort needs rate 2 or more (records per beat to sort), not "
                             f"{self.rate}")
        if 2 * self.rate > self.leaves:
            raise ValueError(f"rate must be at most leaves / 2 ({self.leaves // 2}) so that "
                             f"leaves take one record per cycle, not {self.rate}")
        # Phase 2 joins at least two trees (one alone would repeat a phase-1 pass).
        check_power_of_two("reuse", self.reuse, high=self.trees, low=2)
        if self.reuse * self.leaves < self.trees:
            raise ValueError(f"reuse * leaves must be at least trees ({self.trees}) so that "
                             f"every tree has a phase-2 leaf, not {self.reuse * self.leaves}")
        if self.reuse * self.rate > MAX_MERGE_RATE:
            raise ValueError(f"reuse * rate must be at most {MAX_MERGE_RATE} (phase 2's root is "
                             f"one merge unit), not {self.reuse * self.rate}")
        if 2 * self.trees > board.channels:
            raise ValueError(f"trees must be at most {board.channels // 2} on {board.name} "
                             f"(two channels each), not {self.trees}")
        params = self.axi
        for name in ("read_burst_bytes", "reuse_burst_bytes", "write_burst_bytes"):
            params.check_burst_bytes(name, getattr(self, name))
        if self.reuse_burst_bytes < self.read_burst_bytes:
            raise ValueError(f"reuse_burst_bytes must be at least read_burst_bytes "
                             f"({self.read_burst_bytes}), not {self.reuse_burst_bytes}")
        check_power_of_two("batch_bytes", self.batch_bytes)
        # (a batch holds whole write bursts, and a beat for each of phase 2's write ports)
        lowest = max(self.write_burst_bytes, self.reuse * params.beat_bytes)
        if self.batch_bytes < lowest:
            raise ValueError(f"batch_bytes must be at least {lowest} (write_burst_bytes "
                             f"{self.write_burst_bytes}, reuse * the {params.beat_bytes}-byte "
                             f"beat {self.reuse * params.beat_bytes}), not {self.batch_bytes}")
        check_range("read_outstanding", self.read_outstanding, 1, MAX_OUTSTANDING)
        check_range("write_outstanding", self.write_outstanding, 1, MAX_OUTSTANDING)
        check_power_of_two("channel_bytes", self.channel_bytes)
        if self.channel_bytes < 2 * self.batch_bytes:
            raise ValueError(f"channel_bytes must be at least 2 * batch_bytes "
                             f"({2 * self.batch_bytes}), not {self.channel_bytes}")
        check_range("clock_hz", self.clock_hz, *CLOCK_HZ_RANGE)
        report = report_bytes(self.trees, params.beat_bytes)
        if report > self.channel_bytes - self.half_bytes:
            raise ValueError(f"batch_bytes must be at least the report's {report} bytes (the "
                             f"room each channel keeps beside its half), not {self.batch_bytes}")
        if self.capacity >= 1 << 32:     # the kernel's record count argument is 32-bit
            raise ValueError(f"capacity must be below 2**32 records (a 32-bit count), not "
                             f"{self.capacity}: use smaller channel_bytes")

    # Derived parameters: the one place they are computed. (The record layout is hardware:
    # ``RecordLayout(config.key_bits, config.value_bits)``.)
    @property
    def record_bytes(self):
        return (self.key_bits + self.value_bits) // 8

    @property
    def length_bits(self):
        """Bits of a byte count or offset within one tree's records (``COUNT_BITS`` records),
        as the read and write engines and the tree controllers take it."""
        return COUNT_BITS + (self.record_bytes - 1).bit_length()

    @property
    def data_width(self):
        """AXI data width: one beat per tree root bundle."""
        return self.rate * (self.key_bits + self.value_bits)

    @property
    def axi(self):
        return AxiParams(data_width=self.data_width, addr_width=64,
                         id_width=max(1, (self.leaves - 1).bit_length()))

    @property
    def first_run_length(self):
        """The length of the runs pass 1 reads: a beat's records with ``presort``, else 1."""
        return self.rate if self.presort else 1

    @property
    def group(self):
        """Trees per phase-2 group (S): reused tree t reads trees t*S .. t*S+S-1."""
        return self.trees // self.reuse

    @property
    def runs_per_tree(self):
        """Runs each tree hands to phase 2 (F): one per phase-2 leaf."""
        return self.reuse * self.leaves // self.trees

    @property
    def reused_trees(self):
        return [t * self.group for t in range(self.reuse)]

    @property
    def half_bytes(self):
        """The size of a buffer half: a channel less one batch, which stays free for other
        buffers (the report among them: a host allocates whole buffers in a channel)."""
        return self.channel_bytes - self.batch_bytes

    @property
    def half_alignment(self):
        """Halves start on a batch boundary (phase 2 writes whole batches into them) and on a
        4 KB page (``PAGE_BYTES``: no AXI burst crosses one)."""
        return max(self.batch_bytes, PAGE_BYTES)

    @property
    def tree_capacity(self):
        """Records one tree can hold: a half's worth."""
        return self.half_bytes // self.record_bytes

    @property
    def capacity(self):
        return self.trees * self.tree_capacity

    @property
    def compare_bits(self):
        """The bits the merge logic compares: the key's, or the whole record's when equal keys
        are ordered by value."""
        return self.key_bits + (self.value_bits if self.equal_keys == "by_value" else 0)

    def summary(self):
        values = f", {self.value_bits}-bit values" if self.value_bits else " alone"
        ties = ", equal keys by value" if self.equal_keys == "by_value" else ""
        return (f"{self.record_bytes}-byte records ({self.key_bits}-bit keys{values}{ties}); "
                f"{self.trees} trees x {self.leaves} leaves x {self.rate} records/cycle; "
                f"phase 2: {self.reuse} trees, {self.reuse * self.leaves} leaves, "
                f"{self.reuse * self.rate} records/cycle; "
                f"{'FLiMS merge units; ' if self.merge_unit == 'flims' else ''}"
                f"{self.data_width}-bit AXI; "
                f"capacity {self.capacity} records ({self.capacity * self.record_bytes} B) on "
                f"{self.board} at {self.clock_hz / 1e6:g} MHz")


PRESETS = {
    # The U280 shape: the paper's trees, each beat sorted as pass 1 reads it (presort: one pass
    # fewer at 4 GB), the input dealt to the trees (docs/throughput.md).
    "u280": KernelConfig(name="u280", presort=1),
    # The paper's shape as the paper built it, for comparison: no presort, tree blocks.
    "u280-paper": KernelConfig(name="u280-paper", placement="blocks"),
    # The U280 shape on the U55C: same die, 512 MB channels (twice the records).
    "u55c": KernelConfig(name="u55c", board="u55c", presort=1),
    # Records beyond the paper's on the U280 (docs/record-formats.md): 16 bytes (64-bit keys
    # and values, 4 to a 512-bit beat: the paper's bytes per cycle, half its records) and
    # 4 bytes (32-bit keys alone: the paper's records per cycle, a 256-bit beat).
    # What `topsort-hdl explore` finds (docs/explorer.md) within 65% of the device's LUTs:
    # 8-byte records on the U280 and the U55C at 4 GB, the U280 shape with FLiMS merge units;
    # on the U50, whose two dies hold 16 such trees only at 72% of its LUTs, 8 trees (2 GB).
    "u280_flims": KernelConfig(name="u280_flims", presort=1, merge_unit="flims"),
    "u55c_flims": KernelConfig(name="u55c_flims", board="u55c", presort=1, merge_unit="flims"),
    "u50": KernelConfig(name="u50", board="u50", trees=8, presort=1, merge_unit="flims"),
    # 16-byte records on the U280: phase 2 reuses 8 trees, so its root merges 32 records a
    # cycle (twice the bytes of 8-byte records) through 8 ports; FLiMS units make it fit.
    "u280_kv64_flims": KernelConfig(name="u280_kv64_flims", key_bits=64, value_bits=64,
                                    rate=4, reuse=8, presort=1, merge_unit="flims"),
    "u280_kv64": KernelConfig(name="u280_kv64", key_bits=64, value_bits=64, rate=4, presort=1),
    "u280_k32": KernelConfig(name="u280_k32", value_bits=0, presort=1),
    "tiny": KernelConfig(name="tiny", board="sim", trees=4, rate=2, leaves=4, reuse=2,
                         read_burst_bytes=256, reuse_burst_bytes=512, write_burst_bytes=256,
                         batch_bytes=256, read_outstanding=4, write_outstanding=4, presort=1),
    "small": KernelConfig(name="small", board="sim", trees=4, rate=4, leaves=8, reuse=2,
                          read_burst_bytes=512, reuse_burst_bytes=1024, write_burst_bytes=1024,
                          batch_bytes=1024, read_outstanding=8, write_outstanding=4,
                          channel_bytes=64 << 10, presort=1),
    # The on-chip demo (topsort_hdl.targets.onchip): each tree's port reaches only its own two
    # block-RAM channels, so trees == reuse (phase 2 reuses every tree).
    "demo": KernelConfig(name="demo", board="onchip", trees=2, rate=2, leaves=4, reuse=2,
                         read_burst_bytes=256, reuse_burst_bytes=512, write_burst_bytes=256,
                         batch_bytes=256, read_outstanding=4, write_outstanding=4),
}


def check_preset_name(name, what="name"):
    """Return ``name`` if it can name a preset (letters, digits, ``_`` and ``-``), else raise
    ``ValueError`` naming ``what``."""
    if not isinstance(name, str) or not _PRESET_NAME.fullmatch(name):
        raise ValueError(f"{what} must be a preset name of letters, digits, _ and -, not "
                         f"{name!r}")
    return name


def presets_dir():
    """Where saved presets live (``topsort-hdl explore --save``): ``$TOPSORT_PRESETS``, default
    ``~/.config/topsort-hdl/presets`` (``$XDG_CONFIG_HOME`` respected)."""
    if os.environ.get("TOPSORT_PRESETS"):
        return Path(os.environ["TOPSORT_PRESETS"])
    base = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(base) / "topsort-hdl" / "presets"


def saved_presets(directory=None):
    """The presets saved in ``directory`` (default :func:`presets_dir`), by name: one TOML file
    each, its keys ``KernelConfig`` fields. A file that is not a valid configuration raises
    ``ValueError`` naming it."""
    directory = Path(directory or presets_dir())
    fields = {f.name for f in dataclasses.fields(KernelConfig)} - {"name"}
    found = {}
    for path in sorted(directory.glob("*.toml")) if directory.is_dir() else ():
        try:
            check_preset_name(path.stem, "its file name")
            values = tomllib.loads(path.read_text())
            unknown = set(values) - fields
            if unknown:
                raise ValueError(f"unknown keys {', '.join(sorted(unknown))}")
            found[path.stem] = KernelConfig(name=path.stem, **values)
        except (ValueError, TypeError, tomllib.TOMLDecodeError) as error:
            raise ValueError(f"saved preset {path}: {error}") from None
    return found


def config_from(name="u280", overrides=()):
    """The preset ``name`` (built in, or saved: :func:`saved_presets`) with ``overrides``
    (``KEY=VALUE`` strings) applied.

    Raises ``ValueError`` naming the key or value at fault.
    """
    presets = PRESETS if name in PRESETS else {**saved_presets(), **PRESETS}
    presets = {**PRESETS, **presets}        # (built-in ones first, and never replaced)
    if name not in presets:
        raise ValueError(f"config must be one of {', '.join(presets)}, not {name!r}")
    fields = {f.name: f for f in dataclasses.fields(KernelConfig)}
    changes = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or key not in fields or key == "name":
            allowed = ", ".join(k for k in fields if k != "name")
            raise ValueError(f"--set takes KEY=VALUE with KEY one of {allowed}, not {item!r}")
        if fields[key].type in (str, "str"):
            changes[key] = value
            continue
        try:
            changes[key] = int(value, 0)
        except ValueError:
            raise ValueError(f"{key} must be an integer, not {value!r}") from None
    return dataclasses.replace(presets[name], **changes)
