"""Sort a NumPy array on the kernel: ``topsort_hdl.sort(array, config="tiny")``.

The array's dtype gives the record format and the key type: a 1-D array of ``uint32``,
``int32``, ``float32``, ``uint64``, ``int64`` or ``float64`` is a key-only record (4 or 8
bytes), a structured array with ``key`` and ``value`` fields a key with its value (8 bytes for
4-byte fields, 16 for 8-byte ones; the value any 4 or 8-byte number, carried bit for bit).
Floats sort in IEEE 754 totalOrder, as NumPy's ``np.sort`` puts its NaNs last for positive
NaNs. The result has the array's dtype and shape; the input is not changed.

By default the kernel's RTL runs in simulation (:func:`~.kernel_sort.simulate_sort`, the
same as ``topsort-hdl sort``) on the configuration's shape with the array's record format. With
``device`` (a :class:`topsort_hdl.host.Device`), ``layout`` and ``registers`` the same call
drives that device through the host library instead, a card or a simulation of one.
"""

import asyncio
import os
import tempfile
from pathlib import Path

import numpy as np

from ..core.config import KernelConfig, config_from
from ..core.output_paths import check_output_folder
from ..core.params import check_bool
from ..host import pack_records, record_dtype, run_sort, unpack_array
from .kernel_sort import check_run_options, simulate_sort

__all__ = ["sort_array", "array_format", "CACHE_DIR"]

KEY_TYPES = {"u": "unsigned", "i": "signed", "f": "float"}
FIELD_BYTES = (4, 8)


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "topsort-hdl"


CACHE_DIR = _cache_dir()     # where the simulated kernels are built (one per shape)


def _field(what, dtype):
    if dtype.kind not in KEY_TYPES or dtype.itemsize not in FIELD_BYTES or dtype.shape:
        raise TypeError(f"{what} must be a 4 or 8-byte integer or float, not {dtype}")
    return dtype.itemsize * 8


def array_format(dtype):
    """``(key_bits, value_bits, key_type)`` of records held in an array of ``dtype``; raises
    :class:`TypeError` naming what the kernel takes."""
    dtype = np.dtype(dtype)
    if dtype.names is None:
        if dtype.kind not in KEY_TYPES or dtype.itemsize not in FIELD_BYTES:
            raise TypeError(f"array must hold uint32, int32, float32, uint64, int64 or float64 "
                            f"keys, or be structured with key and value fields, not {dtype}")
        return dtype.itemsize * 8, 0, KEY_TYPES[dtype.kind]
    if set(dtype.names) != {"key", "value"}:
        raise TypeError(f"a structured array must have exactly the fields key and value, not "
                        f"{', '.join(dtype.names)}")
    key_bits = _field("its key field", dtype["key"])
    value_bits = _field("its value field", dtype["value"])
    if key_bits != value_bits:
        raise TypeError(f"key and value must be the same size (records of 8 or 16 bytes), not "
                        f"{key_bits // 8} and {value_bits // 8} bytes")
    return key_bits, value_bits, KEY_TYPES[dtype["key"].kind]


def _bits(values):
    """``values`` (any 4 or 8-byte number, any byte order) as little-endian unsigned bits."""
    size = values.dtype.itemsize
    return values.astype(values.dtype.newbyteorder("<")).view(f"<u{size}")


def _to_records(array, key_bits, value_bits):
    if value_bits == 0:
        return _bits(array)
    records = np.empty(len(array), record_dtype(key_bits, value_bits))
    records["key"], records["value"] = _bits(array["key"]), _bits(array["value"])
    return records


def _from_records(records, dtype):
    out = np.empty(len(records), dtype)
    if dtype.names is None:
        out[...] = records.view(dtype.newbyteorder("<"))
        return out
    for name in ("key", "value"):
        out[name] = records[name].view(dtype[name].newbyteorder("<"))
    return out


def _config(config, key_bits, value_bits):
    if not isinstance(config, (str, KernelConfig)):
        raise TypeError(f"config must be a preset's name or a KernelConfig, not {config!r}")
    if isinstance(config, KernelConfig):
        if (config.key_bits, config.value_bits) != (key_bits, value_bits):
            raise ValueError(f"config {config.name} sorts records of a {config.key_bits}-bit "
                             f"key and a {config.value_bits}-bit value, the array "
                             f"{key_bits} and {value_bits}")
        return config
    return config_from(config, [f"key_bits={key_bits}", f"value_bits={value_bits}"])


def sort_array(array, config="tiny", *, descending=False, sim="icarus", seed=1, pause=0.0,
               build=None, device=None, layout=None, registers=None):
    """``array`` sorted by its keys (see the module's description), ascending or
    ``descending``.

    ``config`` is a preset's name (its shape, the array's record format) or a
    :class:`~topsort_hdl.core.config.KernelConfig` of that format. In simulation: ``sim``
    (``"icarus"`` or ``"verilator"``), ``seed`` (an integer) and ``pause`` (a memory channel's
    chance of pausing in a cycle, in [0, 1)) as ``topsort-hdl sort`` takes them, kernels built
    under ``build`` (default :data:`CACHE_DIR`; a folder, made if missing). With ``device``,
    ``layout`` and ``registers``: that device.

    Every argument is checked before any work: ``TypeError`` for an array the kernel cannot take
    or an argument of the wrong type (``descending`` must be ``True`` or ``False``),
    ``ValueError`` for a value out of range and for more records than the configuration holds.
    """
    if isinstance(descending, np.bool_):
        descending = bool(descending)
    check_bool("descending", descending)
    check_run_options(sim, seed, pause)
    if build is not None:
        check_output_folder("build", build)
    array = np.asarray(array)
    if array.ndim != 1:
        raise ValueError(f"array must be 1-D, not of shape {array.shape}")
    key_bits, value_bits, key_type = array_format(array.dtype)
    records = _to_records(array, key_bits, value_bits)
    order = {"key_type": key_type, "descending": descending}
    if device is not None:
        if layout is None or registers is None:
            raise ValueError("device needs layout and registers (the kernel's layout.json "
                             "and registers.json)")
        format_ = (layout.record["key_bits"], layout.record["value_bits"])
        if format_ != (key_bits, value_bits):
            raise ValueError(f"the device's kernel sorts records of a {format_[0]}-bit key and "
                             f"a {format_[1]}-bit value, the array {key_bits} and "
                             f"{value_bits}")
        result = asyncio.run(run_sort(device, layout, registers, pack_records(records, key_bits,
                                                                             value_bits),
                                      **order))
        return _from_records(unpack_array(result.output, key_bits, value_bits), array.dtype)
    config = _config(config, key_bits, value_bits)
    if len(array) > config.capacity:
        raise ValueError(f"array holds {len(array)} records, more than {config.name} holds "
                         f"({config.capacity})")
    build = Path(build) if build is not None else CACHE_DIR
    build.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=build, prefix="array-") as folder:
        source, sorted_path = Path(folder) / "in.bin", Path(folder) / "out.bin"
        source.write_bytes(pack_records(records, key_bits, value_bits))
        simulate_sort(config, source, sorted_path, sim=sim, seed=seed, pause=pause,
                      progress=False, build_root=build, **order)
        data = sorted_path.read_bytes()
    return _from_records(unpack_array(data, key_bits, value_bits), array.dtype)

