"""``topsort_hdl.sort``: NumPy arrays through the kernel's RTL (and a device through the host
library), against NumPy's order (IEEE 754 totalOrder for floats: NaNs and zeros by sign)."""

import subprocess
import sys

import numpy as np
import pytest

import topsort_hdl
from tests.host.xrt_fake import GoldenDevice
from topsort_hdl.core.config import config_from
from topsort_hdl.core.contract import Layout
from topsort_hdl.core.golden.order import order_keys
from topsort_hdl.core.golden.workloads import special_keys
from topsort_hdl.core.register_map import RegisterMap
from topsort_hdl.sim.arrays import array_format


def total_order(keys):
    """``keys`` in the kernel's order, by NumPy: a stable argsort of the keys' order-preserving
    unsigned images (integers by value; floats by totalOrder, which ``np.sort`` does not give
    for NaNs and zeros)."""
    keys = np.asarray(keys)
    bits = keys.view(f"<u{keys.dtype.itemsize}")
    kind = {"u": "unsigned", "i": "signed", "f": "float"}[keys.dtype.kind]
    return np.argsort(order_keys(bits, kind, 8 * keys.dtype.itemsize), kind="stable")


def special(dtype):
    """The type's special keys (NaNs of both signs and several payloads, +-0, +-inf,
    subnormals, the extremes), twice each, and random ones, as ``dtype``."""
    dtype = np.dtype(dtype)
    kind = {"u": "unsigned", "i": "signed", "f": "float"}[dtype.kind]
    width = 8 * dtype.itemsize
    rng = np.random.default_rng(width)
    keys = special_keys(kind, width) * 2 + rng.integers(0, 1 << width, 60, dtype=np.uint64,
                                                        endpoint=False).tolist()
    return np.array(keys, dtype=f"<u{dtype.itemsize}").view(dtype)


@pytest.mark.parametrize("dtype,expected", [
    ("<u4", (32, 0, "unsigned")), ("<i4", (32, 0, "signed")), ("<f4", (32, 0, "float")),
    ("<u8", (64, 0, "unsigned")), (">i8", (64, 0, "signed")), ("<f8", (64, 0, "float")),
    ([("key", "<f4"), ("value", "<u4")], (32, 32, "float")),
    ([("value", "<i8"), ("key", "<i8")], (64, 64, "signed")),
])
def test_the_dtype_gives_the_record_format_and_key_type(dtype, expected):
    assert array_format(dtype) == expected


@pytest.mark.parametrize("array,error,message", [
    (np.zeros(3, np.float16), TypeError, "array must hold uint32, int32, float32, uint64"),
    (np.zeros(3, [("key", "<u4"), ("payload", "<u4")]), TypeError,
     "a structured array must have exactly the fields key and value, not key, payload"),
    (np.zeros(3, [("key", "<u8"), ("value", "<u4")]), TypeError,
     "key and value must be the same size .records of 8 or 16 bytes., not 8 and 4 bytes"),
    (np.zeros(3, [("key", "<u4"), ("value", "S4")]), TypeError,
     "its value field must be a 4 or 8-byte integer or float, not |S4"),
    (np.zeros((2, 2), np.uint32), ValueError, r"array must be 1-D, not of shape \(2, 2\)"),
    (np.zeros(8065, np.uint64), ValueError, "array holds 8065 records, more than tiny holds "
                                            r"\(8064\)"),
])
def test_arrays_the_kernel_cannot_take_are_refused_before_any_work(array, error, message):
    with pytest.raises(error, match=message):
        topsort_hdl.sort(array)


@pytest.mark.parametrize("options,error,message", [
    ({"descending": "no"}, TypeError, "descending must be True or False, not 'no'"),
    ({"descending": 1}, TypeError, "descending must be True or False, not 1"),
    ({"pause": 1.5}, ValueError, r"pause must be at least 0 and below 1 \(a memory channel's "
                                 r"chance of pausing in a cycle\), not 1.5"),
    ({"pause": 1}, ValueError, "pause must be at least 0 and below 1 .*, not 1$"),
    ({"pause": -0.5}, ValueError, "pause must be at least 0 and below 1 .*, not -0.5"),
    ({"pause": float("nan")}, ValueError, "pause must be at least 0 and below 1 .*, not nan"),
    ({"pause": "0.1"}, TypeError, "pause must be a number, not '0.1'"),
    ({"sim": "xsim"}, ValueError, "sim must be one of icarus, verilator, not 'xsim'"),
    ({"seed": 1.5}, TypeError, "seed must be an integer, not 1.5"),
    ({"config": 3}, TypeError, "config must be a preset's name or a KernelConfig, not 3"),
    ({"build": "{file}"}, ValueError, "build {file} is a file, not a folder"),
    ({"build": "{file}/sub"}, ValueError, "build {file}/sub: {file} is a file, not a folder"),
])
def test_arguments_are_checked_before_any_work(tmp_path, monkeypatch, options, error, message):
    import re

    import topsort_hdl.sim.arrays as arrays
    import topsort_hdl.sim.kernel_sort as kernel_sort

    def work(*args, **kwargs):
        raise AssertionError("the kernel was generated before the arguments were checked")
    monkeypatch.setattr(kernel_sort, "generate", work)
    monkeypatch.setattr(arrays, "simulate_sort", work)
    file = tmp_path / "records.bin"
    file.write_bytes(b"")
    options = {"config": "tiny", "build": tmp_path / "build",
               **{k: v.format(file=file) if isinstance(v, str) else v
                  for k, v in options.items()}}
    with pytest.raises(error, match=message.format(file=re.escape(str(file)))):
        topsort_hdl.sort(np.arange(5, dtype=np.uint32), **options)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records.bin"]


def test_a_numpy_bool_is_a_bool(tmp_path, monkeypatch):
    import topsort_hdl.sim.arrays as arrays

    seen = {}

    def simulate(config, source, out, **options):
        seen.update(options)
        raise RuntimeError("enough")
    monkeypatch.setattr(arrays, "simulate_sort", simulate)
    with pytest.raises(RuntimeError, match="enough"):
        topsort_hdl.sort(np.arange(5, dtype=np.uint32), build=tmp_path, descending=np.True_,
                         pause=np.float64(0.25), seed=np.int64(3))
    assert seen["descending"] is True and seen["pause"] == 0.25 and seen["seed"] == 3


def test_import_stays_light():
    # The simulation (and Amaranth) is imported on the first call only.
    code = "import sys, topsort_hdl; assert 'amaranth' not in sys.modules, sorted(sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("dtype,descending", [
    ("<f4", False), pytest.param("<i8", True, marks=pytest.mark.slow)])
def test_key_arrays_sort_through_the_rtl(dtype, tmp_path, descending):
    keys = special(dtype)
    got = topsort_hdl.sort(keys, "tiny", descending=descending, pause=0.2, build=tmp_path)
    assert got.dtype == keys.dtype and got.shape == keys.shape
    want = keys[total_order(keys)]
    if descending:
        want = want[::-1]
    assert got.tobytes() == want.tobytes()      # bit for bit: NaN payloads, zeros' signs


def test_structured_arrays_sort_through_the_rtl_with_their_values(tmp_path):
    keys = special("<u4")
    array = np.empty(len(keys), [("value", "<u4"), ("key", "<u4")])
    array["key"], array["value"] = keys, np.arange(len(keys))
    snapshot = array.copy()
    got = topsort_hdl.sort(array, build=tmp_path)
    assert np.array_equal(array, snapshot)      # the input is left alone
    assert np.array_equal(got["key"], keys[total_order(keys)])
    assert sorted(got.tolist()) == sorted(array.tolist())   # values travel with their keys


@pytest.mark.parametrize("dtype", ["<f8", [("key", "<i8"), ("value", "<u8")]])
def test_the_same_call_drives_a_device(dtype):
    """With a device (here the golden model behind the host library's Device interface), no
    simulation: the call shape is the same."""
    dtype = np.dtype(dtype)
    key_dtype = dtype["key"] if dtype.names else dtype
    keys = special(key_dtype)
    array = np.empty(len(keys), dtype)
    if dtype.names:
        array["key"], array["value"] = keys, np.arange(len(keys))
    else:
        array[...] = keys
    config = config_from("tiny", ["key_bits=64", f"value_bits={64 if dtype.names else 0}"])
    layout = Layout.from_config(config)
    device = GoldenDevice(layout)
    registers = RegisterMap([(a["name"], a["bits"]) for a in layout.arguments])
    got = topsort_hdl.sort(array, descending=True, device=device, layout=layout,
                           registers=registers)
    order = total_order(keys)[::-1]
    assert np.array_equal((got["key"] if dtype.names else got).view("<u8"),
                          keys[order].view("<u8"))
    with pytest.raises(ValueError, match="the device's kernel sorts records of a 64-bit key"):
        topsort_hdl.sort(np.zeros(3, np.uint32), device=device, layout=layout,
                         registers=registers)
