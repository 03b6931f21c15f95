"""The host contract of a TopSort kernel, in plain Python (no Amaranth): what a host needs to
drive the kernel and read its result.

The hardware builds its registers, status word and completion report from these tables, the
generator writes them into ``registers.json`` and ``layout.json``, and the hosts (the host
library, the generated ``host.py`` and ``host.cpp``) read them from there, so a machine that
runs a host needs none of the HDL toolchain.

- the control word's bits and the register slots (``ap_ctrl_hs``, as Vitis HLS lays them out);
- :data:`STATUS_BITS`, why a job ended without sorting or what went wrong;
- the arguments, in register order (:func:`kernel_arguments`), the counters, and the port
  each argument is reached through (:func:`argument_ports`, named as Vitis names them);
- the completion report the kernel writes to its ``report`` buffer at the end of every job
  (:data:`REPORT_FIELDS`, :data:`REPORT_TREE_FIELDS`, :func:`parse_report`);
- the layout descriptor (:func:`layout_descriptor`, :class:`Layout`): record format, half and
  batch sizes, trees, groups and ports, capacity, and the reassembly rule
  (:func:`output_chunks`), which takes each tree's output half from the report.
"""

import json
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CONTROL", "GIE", "IER", "ISR", "ARGS_BASE", "SLOT_BYTES",
    "AP_START", "AP_DONE", "AP_IDLE", "AP_READY", "AUTO_RESTART", "INTERRUPT",
    "IRQ_DONE", "IRQ_READY", "STATUS_BITS", "status_names",
    "RECORDS_ARGUMENT", "RECORDS_BITS", "KEY_ORDER_ARGUMENT", "KEY_ORDER_BITS", "KEY_TYPE_CODES",
    "KEY_ORDER_DESCENDING", "key_order_word", "order_key", "REPORT_ARGUMENT", "half_argument",
    "kernel_arguments", "kernel_counters", "CONTROL_PORT", "CONTROL_ADDR_WIDTH", "REPORT_PORT",
    "master_port", "argument_ports",
    "REPORT_VERSION", "REPORT_FIELDS", "REPORT_TREES_OFFSET", "REPORT_TREE_BYTES",
    "REPORT_TREE_FIELDS", "report_bytes", "report_alignment", "Report", "ReportError",
    "parse_report", "pack_report",
    "LAYOUT_FORMAT", "LAYOUT_VERSION", "layout_descriptor", "Layout", "split_records",
    "PLACEMENTS", "SPLIT_RULES", "place_records", "place_bytes",
    "default_halves", "default_report_address", "output_chunks",
]

# --- the control slave (byte offsets of 32-bit words) ---
CONTROL, GIE, IER, ISR = 0x00, 0x04, 0x08, 0x0C
ARGS_BASE = 0x10
SLOT_BYTES = 8
# Bits of the control word.
AP_START, AP_DONE, AP_IDLE, AP_READY, AUTO_RESTART, INTERRUPT = 0, 1, 2, 3, 7, 9
# Bits of IER and ISR.
IRQ_DONE, IRQ_READY = 0, 1

# The status word (register ``status`` and the report's ``status`` field).
STATUS_BITS = {
    "capacity": 0,      # more records than the configuration holds
    "alignment": 1,     # a half or the report not aligned, or past the top of the address space
    "overlap": 2,       # two buffers (halves, report) overlap
    "read_error": 3,    # an error response (or a bad command) on a read port
    "write_error": 4,   # an error response on a write port
    "key_order": 5,     # key_order names no key type, or sets a bit the kernel does not use
}


def status_names(status):
    """The names of the bits set in ``status``."""
    return [name for name, bit in STATUS_BITS.items() if status >> bit & 1]


# --- arguments ---
RECORDS_ARGUMENT = "records"
RECORDS_BITS = 32       # the record count: pyxrt passes 32-bit scalars safely
REPORT_ARGUMENT = "report"
# The key type and order of a job: bits 1..0 the key type (KEY_TYPE_CODES), bit 2 descending,
# every other bit 0. Floats are IEEE 754 binary32 or binary64 by the key's width.
KEY_ORDER_ARGUMENT = "key_order"
KEY_ORDER_BITS = 32
KEY_TYPE_CODES = {"unsigned": 0, "signed": 1, "float": 2}
KEY_ORDER_DESCENDING = 1 << 2


def key_order_word(key_type="unsigned", descending=False):
    """The ``key_order`` argument that sorts keys of ``key_type`` (a name of
    :data:`KEY_TYPE_CODES`), ``descending`` or not."""
    if key_type not in KEY_TYPE_CODES:
        raise ValueError(f"key_type must be one of {', '.join(KEY_TYPE_CODES)}, not "
                         f"{key_type!r}")
    return KEY_TYPE_CODES[key_type] | (KEY_ORDER_DESCENDING if descending else 0)


def order_key(key, key_bits, key_type="unsigned", descending=False):
    """The unsigned key the kernel compares for ``key`` (the ``key_bits`` the host wrote) of
    ``key_type``: ascending order of these is the order asked for. A host checks a result with
    it; the golden model's vectorised form is ``topsort_hdl.core.golden.order.order_keys``."""
    word = key_order_word(key_type, descending)     # (checks the type)
    mask, sign = (1 << key_bits) - 1, 1 << (key_bits - 1)
    if key_type != "unsigned":
        key ^= sign if key_type == "signed" or not key & sign else mask
    return key ^ mask if word & KEY_ORDER_DESCENDING else key


def half_argument(tree, half):
    return f"tree{tree:02d}_half{half}"


def kernel_arguments(shape):
    """The kernel's arguments for ``shape`` (anything with ``trees``: a configuration or a
    :class:`Layout`), in register order, as ``(name, bits)``: the record count, the key order
    (:func:`key_order_word`), each tree's two buffer halves (64-bit addresses; its records
    start in half 0), then the report buffer. Separate halves let a host allocate each in its
    own bank."""
    return ([(RECORDS_ARGUMENT, RECORDS_BITS), (KEY_ORDER_ARGUMENT, KEY_ORDER_BITS)]
            + [(half_argument(i, h), 64) for i in range(shape.trees) for h in (0, 1)]
            + [(REPORT_ARGUMENT, 64)])


def kernel_counters(shape):
    """The read-only counters after the arguments, in register order."""
    return ["phase1_cycles", "phase2_cycles"]


# --- the kernel's ports, as kernel.xml, the packaging and the hosts name them ---
CONTROL_PORT = "s_axi_control"
CONTROL_ADDR_WIDTH = 12     # the control port's address bits: a 4 KB register space
REPORT_PORT = 0             # the master the report is written through (tree 0's)


def master_port(tree):
    """Tree i's AXI4 master: ``m00_axi`` ... (its signals ``m00_axi_awaddr`` ...)."""
    return f"m{tree:02d}_axi"


def argument_ports(shape):
    """Per argument, the interface it is read through: the control port for the record count
    and the key order, tree i's master for its halves, tree 0's for the report (the port a
    host's buffer must be reachable from)."""
    ports = {RECORDS_ARGUMENT: CONTROL_PORT, KEY_ORDER_ARGUMENT: CONTROL_PORT}
    ports.update({half_argument(i, h): master_port(i) for i in range(shape.trees)
                  for h in (0, 1)})
    ports[REPORT_ARGUMENT] = master_port(REPORT_PORT)
    return ports


# --- the completion report: little-endian fields at byte offsets ---
REPORT_VERSION = 1
REPORT_FIELDS = (       # (name, byte offset, bytes)
    ("version", 0, 4),
    ("status", 4, 4),
    ("records", 8, 8),
    ("phase1_cycles", 16, 8),
    ("phase2_cycles", 24, 8),
)
REPORT_TREES_OFFSET = 32
REPORT_TREE_BYTES = 8
REPORT_TREE_FIELDS = (  # per tree i, at REPORT_TREES_OFFSET + i * REPORT_TREE_BYTES
    ("passes", 0, 4),       # phase-1 passes the tree made (0: at most F records)
    ("output_half", 4, 4),  # the half phase 2 wrote the tree's output batches into
)


def report_bytes(trees, beat_bytes):
    """The report's size: the fields and one entry per tree, in whole AXI beats (one burst)."""
    used = REPORT_TREES_OFFSET + trees * REPORT_TREE_BYTES
    return -(-used // beat_bytes) * beat_bytes


def report_alignment(trees, beat_bytes):
    """The report buffer's alignment: its size rounded up to a power of two, so that its one
    burst never crosses a 4 KB boundary."""
    return 1 << (report_bytes(trees, beat_bytes) - 1).bit_length()


class ReportError(ValueError):
    """A report a host cannot read: wrong version or size."""


@dataclass(frozen=True)
class Report:
    version: int
    status: int
    records: int
    phase1_cycles: int
    phase2_cycles: int
    passes: tuple
    output_halves: tuple


_FORMATS = {4: "<I", 8: "<Q"}


def parse_report(data, trees):
    """The :class:`Report` in ``data`` (the report buffer's bytes) for ``trees`` trees."""
    need = REPORT_TREES_OFFSET + trees * REPORT_TREE_BYTES
    if len(data) < need:
        raise ReportError(f"report must be at least {need} bytes for {trees} trees, "
                          f"not {len(data)}")
    fields = {name: struct.unpack_from(_FORMATS[size], data, offset)[0]
              for name, offset, size in REPORT_FIELDS}
    if fields["version"] != REPORT_VERSION:
        raise ReportError(f"report version must be {REPORT_VERSION}, not {fields['version']} "
                          "(a kernel and a host of different versions, or no report written)")
    per_tree = {name: tuple(struct.unpack_from(_FORMATS[size], data, REPORT_TREES_OFFSET
                                               + i * REPORT_TREE_BYTES + offset)[0]
                            for i in range(trees))
                for name, offset, size in REPORT_TREE_FIELDS}
    return Report(**fields, passes=per_tree["passes"], output_halves=per_tree["output_half"])


def pack_report(report, trees, beat_bytes):
    """``report`` as the kernel writes it (the inverse of :func:`parse_report`)."""
    out = bytearray(report_bytes(trees, beat_bytes))
    for name, offset, size in REPORT_FIELDS:
        struct.pack_into(_FORMATS[size], out, offset, getattr(report, name))
    values = {"passes": report.passes, "output_half": report.output_halves}
    for name, offset, size in REPORT_TREE_FIELDS:
        for i in range(trees):
            struct.pack_into(_FORMATS[size], out, REPORT_TREES_OFFSET + i * REPORT_TREE_BYTES
                             + offset, values[name][i])
    return bytes(out)


# --- the layout descriptor ---
LAYOUT_FORMAT = "topsort-layout"
LAYOUT_VERSION = 2

# How a host places a job's N records in the trees' halves: the kernel sorts whatever it is given,
# so this is for speed alone. "dealt", record k to tree k % trees, gives every tree a sample of
# the whole input, so the runs phase 2 merges overlap in key range whatever the input's order;
# "blocks", the paper's, gives tree i the i-th block, and sorted input then reaches phase 2 as
# runs of disjoint ranges that its tree drains a few leaves at a time (docs/throughput.md).
PLACEMENTS = ("dealt", "blocks")
SPLIT_RULES = {
    "dealt": "tree i holds n_i = N // trees + (1 if i < N % trees else 0) records: records i, "
             "i + trees, i + 2 * trees, ... of the input, in that order, from byte 0 of its "
             "half 0",
    "blocks": "tree i holds n_i = N // trees + (1 if i < N % trees else 0) records: the input's "
              "i-th block of records (tree 0's first), in order, from byte 0 of its half 0",
}
REASSEMBLY_RULE = (
    "the sorted output is N * record.bytes bytes in batches of batch_bytes (the last may be "
    "short); batch k goes to port t = k % reuse, slot s = (k // reuse) % group, that is the "
    "output half (report.trees[i].output_half) of tree i = t * group + s, at byte "
    "(k // trees) * batch_bytes of that half")


def layout_descriptor(config, registers=None, channel_map=None, kernel=None):
    """The layout descriptor of ``config`` (a kernel configuration), as a JSON-ready dict:
    everything about memory a host needs, with the per-job facts left to the report.
    ``registers`` (name -> offset), ``channel_map`` (master -> (first, last) channel) and the
    ``kernel``'s name are added when given."""
    beat = config.data_width // 8
    trees = config.trees
    record_bits = config.key_bits + config.value_bits
    descriptor = {
        "format": LAYOUT_FORMAT,
        "version": LAYOUT_VERSION,
        "config": config.name,
        "record": {
            "bytes": config.record_bytes, "key_bits": config.key_bits,
            "value_bits": config.value_bits, "byte_order": "little",
            "word": f"one little-endian {record_bits}-bit word per record: key in bits "
                    f"[{record_bits - 1}:{config.value_bits}], value in bits "
                    f"[{config.value_bits - 1}:0]",
            "order": "by key, as the job's key_order argument says; " + (
                "equal keys by value (unsigned, ascending in both orders): with row indices as "
                "values, a stable sort" if config.equal_keys == "by_value" else
                "the order of equal keys' values is not specified"),
            "equal_keys": config.equal_keys,
            "key_order": {
                "argument": KEY_ORDER_ARGUMENT,
                "types": dict(KEY_TYPE_CODES),
                "descending": KEY_ORDER_DESCENDING,
                "rule": "bits 1..0 the key type, bit 2 descending, every other bit 0 (else "
                        "status key_order); signed keys are two's complement, float keys IEEE "
                        "754 binary32 or binary64 by key_bits, in totalOrder (-NaN < -inf < "
                        "... < -0 < +0 < ... < +inf < +NaN); descending is the exact reverse",
            },
        },
        "trees": trees, "leaves": config.leaves, "rate": config.rate,
        "reuse": config.reuse, "group": config.group, "runs_per_tree": config.runs_per_tree,
        "presort": config.presort, "first_run_length": config.first_run_length,
        "beat_bytes": beat,
        "half_bytes": config.half_bytes,
        "half_alignment": config.half_alignment,
        "channel_bytes": config.channel_bytes,
        "batch_bytes": config.batch_bytes,
        "capacity": config.capacity,
        "tree_capacity": config.tree_capacity,
        "clock_hz": config.clock_hz,
        "arguments": [{"name": name, "bits": bits} for name, bits in kernel_arguments(config)],
        "placement": config.placement,
        "split": SPLIT_RULES[config.placement],
        "report": {
            "argument": REPORT_ARGUMENT,
            "version": REPORT_VERSION,
            "bytes": report_bytes(trees, beat),
            "alignment": report_alignment(trees, beat),
            "byte_order": "little",
            "fields": [{"name": n, "offset": o, "bytes": b} for n, o, b in REPORT_FIELDS],
            "trees_offset": REPORT_TREES_OFFSET,
            "tree_bytes": REPORT_TREE_BYTES,
            "tree_fields": [{"name": n, "offset": o, "bytes": b}
                            for n, o, b in REPORT_TREE_FIELDS],
            "written": "at the end of every job, after every other write is acknowledged, "
                       "also when status is not 0 (then the tree entries are 0 and nothing "
                       "else was written); not when the report address itself is misaligned",
        },
        "status_bits": dict(STATUS_BITS),
        "reassembly": REASSEMBLY_RULE,
    }
    if kernel is not None:
        descriptor["kernel"] = kernel
    if registers is not None:
        descriptor["registers"] = dict(registers)
    if channel_map is not None:
        descriptor["channel_map"] = {port: list(span) for port, span in channel_map.items()}
    return descriptor


class Layout:
    """A layout descriptor read back: its fields as attributes (``layout.trees``,
    ``layout.half_bytes``, ``layout.report["bytes"]``, ...).

    Raises :class:`ValueError` for a descriptor of another format or version.
    """

    def __init__(self, descriptor):
        if descriptor.get("format") != LAYOUT_FORMAT:
            raise ValueError(f"layout format must be {LAYOUT_FORMAT!r}, not "
                             f"{descriptor.get('format')!r}")
        if descriptor.get("version") != LAYOUT_VERSION:
            raise ValueError(f"layout version must be {LAYOUT_VERSION}, not "
                             f"{descriptor.get('version')!r}")
        self.descriptor = descriptor
        for key, value in descriptor.items():
            setattr(self, key, value)
        self.record_bytes = descriptor["record"]["bytes"]
        self.report_bytes = descriptor["report"]["bytes"]

    @classmethod
    def load(cls, path):
        return cls(json.loads(Path(path).read_text()))

    @classmethod
    def from_config(cls, config):
        return cls(layout_descriptor(config))

    def parse_report(self, data):
        return parse_report(data, self.trees)


def split_records(count, trees):
    """Records per tree: the first ``count % trees`` trees take one more."""
    return [count // trees + (i < count % trees) for i in range(trees)]


def place_records(records, trees, placement):
    """Per tree, its records of the job ``records`` (any sequence: a list, a NumPy array) as
    ``placement`` (one of ``PLACEMENTS``) puts them: slices of ``records``."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, not {placement!r}")
    if placement == "dealt":
        return [records[i::trees] for i in range(trees)]
    out, start = [], 0
    for count in split_records(len(records), trees):
        out.append(records[start:start + count])
        start += count
    return out


def place_bytes(data, record_bytes, trees, placement):
    """Per tree, the bytes a host writes to its half 0 for the job ``data`` (whole records of
    ``record_bytes``), by :func:`place_records`."""
    import numpy as np

    records = np.frombuffer(data, dtype=np.dtype((np.void, record_bytes)))
    return [part.tobytes() for part in place_records(records, trees, placement)]


def default_halves(layout):
    """The default placement of tree i's halves: the starts of channels 2i and 2i+1 (the
    paper's Table I), as ``[(half 0, half 1), ...]``."""
    size = layout.channel_bytes
    return [(2 * i * size, (2 * i + 1) * size) for i in range(layout.trees)]


def default_report_address(layout):
    """The default place of the report: in channel 0, right after tree 0's half 0 (the
    ``channel_bytes - half_bytes`` bytes each channel leaves to other buffers)."""
    return layout.half_bytes


def output_chunks(layout, count, halves, report):
    """Where the sorted output of ``count`` records is: ``(stream offset, address, bytes)``
    per batch, from the layout, the halves the job ran with and its :class:`Report`."""
    total = count * layout.record_bytes
    batch = layout.batch_bytes
    for k, offset in enumerate(range(0, total, batch)):
        port, slot = k % layout.reuse, k // layout.reuse % layout.group
        tree = port * layout.group + slot
        base = halves[tree][report.output_halves[tree]]
        yield offset, base + k // layout.trees * batch, min(batch, total - offset)
