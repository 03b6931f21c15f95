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
