"""The host contract and the hosts as an XRT user meets them: the report, the layout
descriptor, hosts without Amaranth, the C++ host against XRT's headers, the Python host against
pyxrt's type stub (and a stand-in card that sorts with the golden model)."""

import importlib.util
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.host.xrt_fake import ROOT, fake_pyxrt, reference_xrt, stub_names
from topsort_hdl.core import contract
from topsort_hdl.core.config import PRESETS, config_from
from topsort_hdl.core.contract import Layout, Report, ReportError, pack_report, parse_report
from topsort_hdl.core.golden.kernel import KernelModel
from topsort_hdl.targets.vitis.kernel_xml import kernel_xml

XRT_INCLUDE, PYXRT_STUB, XRT_WHERE = reference_xrt()


@pytest.fixture(scope="module")
def tiny_u280(tmp_path_factory):
    """The tiny kernel's Vitis project for the U280 board (Verilog, layout.json, hosts)."""
    from topsort_hdl.targets.kernel_verilog import generate

    out = tmp_path_factory.mktemp("tiny_u280_host")
    generate(config_from("tiny", ["board=u280"]), out)
    return out


# The report -----------------------------------------------------------------------------------


def test_report_round_trip_and_refusals():
    report = Report(contract.REPORT_VERSION, 0b10010, 123456789, 1 << 40, 7, (3, 0, 1, 2),
                    (0, 1, 0, 1))
    data = pack_report(report, 4, 64)
    assert len(data) == contract.report_bytes(4, 64) == 64
    assert parse_report(data, 4) == report
    # little-endian fields at their offsets
    assert data[4:8] == (0b10010).to_bytes(4, "little")
    assert data[16:24] == (1 << 40).to_bytes(8, "little")
    with pytest.raises(ReportError, match="report version must be 1, not 0"):
        parse_report(bytes(64), 4)
    with pytest.raises(ReportError, match="report must be at least 64 bytes for 4 trees, not 8"):
        parse_report(data[:8], 4)


@pytest.mark.parametrize("trees,beat,size,alignment", [(4, 16, 64, 64), (16, 64, 192, 256),
                                                        (2, 16, 48, 64), (4, 32, 64, 64)])
def test_report_size_is_whole_beats(trees, beat, size, alignment):
    assert contract.report_bytes(trees, beat) == size
    assert contract.report_alignment(trees, beat) == alignment


# The layout descriptor ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PRESETS))
def test_layout_descriptor_of_every_preset(name):
    config = config_from(name)
    layout = Layout.from_config(config)
    assert layout.capacity == layout.trees * layout.half_bytes // layout.record_bytes
    assert layout.half_bytes % layout.batch_bytes == 0
    # the report fits in the room each channel keeps beside its half, on tree 0's master
    assert layout.report_bytes <= layout.channel_bytes - layout.half_bytes
    assert contract.default_report_address(layout) % layout.report["alignment"] == 0
    # its arguments are kernel.xml's, in order
    args = [a.get("name") for a in
            ElementTree.fromstring(kernel_xml(config)).find("kernel/args")]
    assert [a["name"] for a in layout.arguments] == args
    json.dumps(layout.descriptor)


def test_every_configuration_writes_its_layout(tmp_path):
    """Sim configurations too: the descriptor is next to registers.json for every board."""
    from topsort_hdl.targets.kernel_verilog import generate

    generate(config_from("tiny"), tmp_path)
    layout = Layout.load(tmp_path / "layout.json")
    assert (layout.config, layout.half_bytes, layout.batch_bytes) == ("tiny", 16128, 256)
    assert layout.kernel == "topsort"
    saved = json.loads((tmp_path / "registers.json").read_text())
    assert layout.registers == {e["name"]: e["offset"] for e in saved["registers"]}
    assert layout.channel_map["m00_axi"] == [0, 3]
    with pytest.raises(ValueError, match="layout version must be 2, not 7"):
        Layout({**layout.descriptor, "version": 7})


@pytest.mark.parametrize("name,counts", [("tiny", [0, 1, 7, 300, 2049, 8064]),
                                         ("u280", [1, 100, 65536])])
def test_output_chunks_from_the_report_match_the_model(name, counts):
    """The reassembly rule (report + descriptor) against the golden model's batches."""
    config = config_from(name)
    layout = Layout.from_config(config)
    halves = contract.default_halves(layout)
    for count in counts:
        model = KernelModel(config)
        model.run([(0, 0)] * count, halves)
        report = Report(1, 0, count, 0, 0, tuple(len(p.passes) for p in model.plans),
                        tuple(p.final_half ^ 1 for p in model.plans))
        assert list(contract.output_chunks(layout, count, halves, report)) == model.chunks


def test_placement_deals_or_blocks_the_input():
    records = list(range(10))
    assert contract.place_records(records, 4, "dealt") == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]
    assert contract.place_records(records, 4, "blocks") == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]
    for placement in contract.PLACEMENTS:       # the counts are the split's either way
        parts = contract.place_records(records, 4, placement)
        assert [len(p) for p in parts] == contract.split_records(10, 4)
        data = b"".join(r.to_bytes(8, "little") for r in records)
        assert contract.place_bytes(data, 8, 4, placement) == [
            b"".join(r.to_bytes(8, "little") for r in part) for part in parts]
    with pytest.raises(ValueError, match="placement must be one of dealt, blocks, not 'x'"):
        contract.place_records(records, 4, "x")
    with pytest.raises(ValueError, match="placement must be one of dealt, blocks, not 'x'"):
        config_from("tiny", ["placement=x"])
    assert Layout.from_config(config_from("tiny")).placement == "dealt"


# Hosts without Amaranth -----------------------------------------------------------------------


def test_host_facts_import_without_amaranth(tiny_u280):
    """host.py (with a pyxrt from the stub's names), the host library and the contract import
    with Amaranth made unimportable."""
    if PYXRT_STUB is None:
        pytest.skip(f"no pyxrt.pyi under {XRT_WHERE}")
    script = f"""
import sys
sys.modules["amaranth"] = None          # any import of it now raises ImportError
sys.path.insert(0, {str(ROOT)!r})
import types, enum
from tests.host.xrt_fake import stub_names, _enum_members
pyxrt = types.ModuleType("pyxrt")
for name, members in _enum_members({str(PYXRT_STUB)!r}).items():
    if "." not in name:
        setattr(pyxrt, name, enum.IntEnum(name, members))
sys.modules["pyxrt"] = pyxrt
import topsort_hdl.core.contract, topsort_hdl.host
import importlib.util
spec = importlib.util.spec_from_file_location("host", {str(tiny_u280 / "host.py")!r})
host = importlib.util.module_from_spec(spec)
spec.loader.exec_module(host)
layout = host.contract.Layout.load({str(tiny_u280 / "layout.json")!r})
assert layout.trees == 4 and host.contract.STATUS_BITS["overlap"] == 2
assert not [m for m in sys.modules if m.startswith("amaranth") and sys.modules[m]]
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


# The C++ host against XRT's headers -----------------------------------------------------------


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
def test_cpp_host_compiles_against_xrt_headers(tiny_u280):
    """No deprecated call, no warning: -Wall -Wextra -Werror against XRT's own headers."""
    if XRT_INCLUDE is None:
        pytest.skip(f"no XRT headers under {XRT_WHERE} (set XILINX_XRT)")
    # version-slim.h is generated by XRT's build: DISABLE_ABI_CHECK does without it
    subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                    "-DDISABLE_ABI_CHECK", "-I", str(XRT_INCLUDE), "-I", str(tiny_u280),
                    str(tiny_u280 / "host.cpp")], check=True, capture_output=True, text=True)


def run_with_layout_header(tmp_path, config, program):
    """Compile ``program`` (C++ that includes topsort_layout.h) with ``config``'s generated
    topsort_config.h, run it, return its output's lines."""
    from importlib import resources

    from topsort_hdl.targets.vitis import config_header

    (tmp_path / "topsort_config.h").write_text(config_header(config))
    header = resources.files("topsort_hdl.targets.vitis").joinpath("templates", "topsort_layout.h")
    (tmp_path / "topsort_layout.h").write_text(header.read_text())
    (tmp_path / "check.cpp").write_text('#include <cstdio>\n#include "topsort_layout.h"\n'
                                        + program)
    subprocess.run(["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-o",
                    str(tmp_path / "check"), str(tmp_path / "check.cpp")], check=True)
    return subprocess.run([str(tmp_path / "check")], check=True, capture_output=True,
                          text=True).stdout.split("\n")[:-1]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("name", ["u280", "tiny"])
def test_cpp_report_and_reassembly_match_python(tmp_path, name):
    """topsort_layout.h's report parser and reassembly against the contract's, compiled."""
    config = config_from(name)
    layout = Layout.from_config(config)
    halves = contract.default_halves(layout)
    rng = random.Random(5)
    cases = []
    for count in [1, 7, 100, 4099, min(layout.capacity, 60_000)]:
        report = Report(1, 0, count, rng.randrange(1 << 40), rng.randrange(1 << 40),
                        tuple(rng.randrange(7) for _ in range(layout.trees)),
                        tuple(rng.randrange(2) for _ in range(layout.trees)))
        cases.append((count, report))
    table = ",".join(f"{{{a}ULL,{b}ULL}}" for a, b in halves)
    blobs = ",".join("{" + ",".join(str(b) for b in pack_report(r, layout.trees,
                                                                 layout.beat_bytes)) + "}"
                     for _, r in cases)
    got = run_with_layout_header(
        tmp_path, config,
        f"static const uint64_t halves[][2] = {{{table}}};\n"
        f"static const uint64_t counts[] = {{{','.join(str(c) for c, _ in cases)}}};\n"
        f"static const uint8_t reports[][{layout.report_bytes}] = {{{blobs}}};\n"
        "int main() {\n"
        "  for (unsigned i = 0; i < sizeof(counts) / sizeof(counts[0]); ++i) {\n"
        "    topsort::Report r = topsort::parse_report(reports[i]);\n"
        '    std::printf("R %u %u %llu %llu %llu\\n", r.version, r.status,\n'
        "      (unsigned long long)r.records, (unsigned long long)r.phase1_cycles,\n"
        "      (unsigned long long)r.phase2_cycles);\n"
        "    for (auto &c : topsort::output_chunks(counts[i], halves, r))\n"
        '      std::printf("%llu %llu %llu\\n", (unsigned long long)c.offset,\n'
        "        (unsigned long long)c.address, (unsigned long long)c.bytes);\n"
        "  }\n}\n")
    expected = []
    for count, r in cases:
        expected.append(f"R {r.version} {r.status} {r.records} {r.phase1_cycles} "
                        f"{r.phase2_cycles}")
        expected += [f"{o} {a} {b}" for o, a, b in contract.output_chunks(layout, count,
                                                                           halves, r)]
    assert got == expected


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize("widths", [(32, 0), (32, 32), (64, 0), (64, 64), (32, 96)])
def test_cpp_keys_and_orders_match_the_contract(tmp_path, widths):
    """topsort_layout.h's key_of (a record of any size) and order_key (every key type and
    order) against the contract's order_key, compiled, on the special keys of each type."""
    from topsort_hdl.core.golden.workloads import special_keys

    key_bits, value_bits = widths
    config = config_from("u280", [f"key_bits={key_bits}", f"value_bits={value_bits}",
                                  f"rate={512 // (key_bits + value_bits) // 2}"])
    rng = random.Random(key_bits + value_bits)
    cases = []
    for key_type in contract.KEY_TYPE_CODES:
        for descending in (False, True):
            for key in special_keys(key_type, key_bits):
                value = rng.getrandbits(value_bits) if value_bits else 0
                cases.append((key << value_bits | value, key_type, descending,
                              contract.order_key(key, key_bits, key_type, descending)))
    size = config.record_bytes
    records = ",".join("{" + ",".join(str(b) for b in word.to_bytes(size, "little")) + "}"
                       for word, *_ in cases)
    orders = ",".join(str(contract.key_order_word(t, d)) for _, t, d, _ in cases)
    got = run_with_layout_header(
        tmp_path, config,
        f"static const topsort::Record records[] = {{{records}}};\n"
        f"static const uint32_t orders[] = {{{orders}}};\n"
        "int main() {\n"
        "  for (unsigned i = 0; i < sizeof(orders) / sizeof(orders[0]); ++i)\n"
        '    std::printf("%llu\\n", (unsigned long long)topsort::order_key(\n'
        "      topsort::key_of(records[i]), orders[i]));\n}\n")
    assert [int(g) for g in got] == [want for *_, want in cases]


# The Python host against pyxrt's stub ---------------------------------------------------------


def load_host(directory, pyxrt, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyxrt", pyxrt)
    monkeypatch.delitem(sys.modules, "topsort_contract", raising=False)
    spec = importlib.util.spec_from_file_location("topsort_generated_host",
                                                  directory / "host.py")
    host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(host)
    return host


@pytest.fixture
def stub():
    if PYXRT_STUB is None:
        pytest.skip(f"no pyxrt.pyi under {XRT_WHERE}")
    return PYXRT_STUB


@pytest.mark.parametrize("order", [{}, {"key_type": "float", "descending": True},
                                   {"key_type": "signed"}])
def test_python_host_sorts_through_the_stub_api(tiny_u280, tmp_path, monkeypatch, stub, capsys,
                                                order):
    """host.py end to end on a pyxrt that has only what the stub declares, in each key type and
    order it is asked for; the output is the golden model's, record by record."""
    layout = Layout.load(tiny_u280 / "layout.json")
    pyxrt, card = fake_pyxrt(stub, layout)
    host = load_host(tiny_u280, pyxrt, monkeypatch)
    rng = random.Random(3)
    records = [(rng.choice([0, 5, (1 << 32) - 1, rng.randrange(1 << 32)]), i)
               for i in range(1234)]
    (tmp_path / "in.bin").write_bytes(b"".join(v.to_bytes(4, "little") + k.to_bytes(4, "little")
                                               for k, v in records))
    (tmp_path / "k.xclbin").write_text(json.dumps({"kernels": ["topsort"], "uuid": "u1"}))
    options = (["--key-type", order["key_type"]] if "key_type" in order else []) + (
        ["--descending"] if order.get("descending") else [])
    assert host.main([str(tmp_path / "k.xclbin"), str(tmp_path / "in.bin"),
                      str(tmp_path / "out.bin"), *options]) == 0
    out = (tmp_path / "out.bin").read_bytes()
    want = KernelModel(config_from("tiny"), **order).run(records)
    assert [(int.from_bytes(out[i + 4:i + 8], "little"), int.from_bytes(out[i:i + 4], "little"))
            for i in range(0, len(out), 8)] == want
    assert "1234 records: 4 phase-1 passes" in capsys.readouterr().out


def test_python_host_names_a_foreign_xclbin(tiny_u280, tmp_path, monkeypatch, stub):
    layout = Layout.load(tiny_u280 / "layout.json")
    pyxrt, _ = fake_pyxrt(stub, layout)
    host = load_host(tiny_u280, pyxrt, monkeypatch)
    (tmp_path / "in.bin").write_bytes(bytes(16))
    (tmp_path / "other.xclbin").write_text(json.dumps({"kernels": ["vadd"], "uuid": "u2"}))
    with pytest.raises(host.HostError, match=r"has no kernel 'topsort' \(it has vadd\)"):
        host.main([str(tmp_path / "other.xclbin"), str(tmp_path / "in.bin"), "out.bin"])
    with pytest.raises(host.HostError, match="is not a file"):
        host.main([str(tmp_path / "missing.xclbin"), str(tmp_path / "in.bin"), "out.bin"])
    (tmp_path / "odd.bin").write_bytes(bytes(12))
    (tmp_path / "k.xclbin").write_text(json.dumps({"kernels": ["topsort"], "uuid": "u1"}))
    with pytest.raises(host.HostError, match="multiple of 8 bytes.*not 12"):
        host.main([str(tmp_path / "k.xclbin"), str(tmp_path / "odd.bin"), "out.bin"])


def test_python_host_attributes_are_in_the_stub(tiny_u280, stub):
    """Every ``pyxrt.X`` (and ``pyxrt.X.Y``) host.py names, checked against the stub without
    running it (the run above checks the methods it calls on pyxrt's objects)."""
    import ast

    declared = stub_names(stub)
    tree = ast.parse((tiny_u280 / "host.py").read_text())
    used = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain = []
            while isinstance(node, ast.Attribute):
                chain.insert(0, node.attr)
                node = node.value
            if isinstance(node, ast.Name) and node.id == "pyxrt":
                used.add(tuple(chain))
    assert used
    for chain in used:
        scope = ""
        for name in chain:
            assert name in declared.get(scope, set()), f"pyxrt.{'.'.join(chain)}"
            scope = f"{scope}.{name}".lstrip(".")
            if scope not in declared:     # an enum member or alias: nothing below it
                break


def test_generated_project_holds_the_contract(tiny_u280):
    """host.py's contract module is the package's own, byte for byte (one source)."""
    assert (tiny_u280 / "topsort_contract.py").read_text() == \
        (Path(contract.__file__)).read_text()
