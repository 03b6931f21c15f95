"""The board files of platforms/: every board loads with its sourced figures, a bad file is
refused naming the field, adding a board is adding a file, and an installed package finds
them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from topsort_hdl.core.boards import DEMO_BOARDS, HBM_BOARDS, board_files, load_boards
from topsort_hdl.core.boards.board import DemoBoard, HbmBoard, Resources, VitisShell
from topsort_hdl.targets.onchip.boards import BOARDS

ROOT = Path(__file__).resolve().parents[3]
BOARD_DIR = ROOT / "platforms"
PBLOCKS = ("pblock_dynamic_SLR0", "pblock_dynamic_SLR1", "pblock_dynamic_SLR2")


def test_one_file_per_board():
    names = {path.stem for path in BOARD_DIR.glob("*.toml")}
    assert names == set(load_boards(BOARD_DIR)) == set(HBM_BOARDS) | set(DEMO_BOARDS)
    assert names == {"u280", "u55c", "u50", "sim", "onchip", "ulx3s-85f", "ecp5-5g-evn"}
    # The checkout's files are the ones the package reads (an editable install).
    assert {Path(str(entry)).resolve() for entry in board_files()} == \
        {path.resolve() for path in BOARD_DIR.glob("*.toml")}


def test_u50_figures():
    # The U280's HBM on a two-die device, its HBM clocked lower (316 GB/s in all).
    u50 = HBM_BOARDS["u50"]
    assert (u50.channels, u50.channel_bytes, u50.hbm_slr) == (32, 256 << 20, 0)
    assert u50.channels * u50.channel_gbps == 316
    assert len(u50.slrs) == 2 and u50.part == "xcu50-fsvh2104-2-e"
    assert [shell.pblocks for shell in u50.vitis] == [("pblock_dynamic_SLR0",
                                                        "pblock_dynamic_SLR1")]


def test_u280_figures():
    u280 = HBM_BOARDS["u280"]
    assert (u280.channels, u280.channel_bytes, u280.clock_hz) == (32, 256 << 20, 214_000_000)
    assert (u280.channel_gbps, u280.channel_gbps_measured) == (14.375, 13.27)
    assert (u280.channel_group, u280.hbm_slr, u280.sll_per_crossing) == (4, 0, 23_040)
    assert u280.lateral_fraction == 0.5
    assert (u280.part, u280.buffer_ram) == ("xcu280-fsvh2892-2L-e", "ultra")
    assert u280.slrs == (Resources(lut=369_000, ff=746_000, bram=507, uram=320, dsp=2_733),
                         Resources(lut=333_000, ff=675_000, bram=468, uram=320, dsp=2_877),
                         Resources(lut=367_000, ff=729_000, bram=512, uram=320, dsp=2_880))
    assert u280.part_resources == Resources(lut=1_303_680, ff=2_607_360, bram=2_016, uram=960,
                                            dsp=9_024)
    assert u280.vitis == (
        VitisShell("xilinx_u280_gen3x16_xdma_1_202211_1", "level0_i/ulp", PBLOCKS),
        VitisShell("xilinx_u280_xdma_201920_3", "pfm_top_i/dynamic_region", PBLOCKS))


def test_other_boards_figures():
    u280, u55c = HBM_BOARDS["u280"], HBM_BOARDS["u55c"]
    assert u55c == HbmBoard(
        "u55c", "AMD Alveo U55C (xcu55c-fsvh2892-2L-e), 16 GB HBM2", part="xcu55c-fsvh2892-2L-e",
        channels=32, channel_bytes=512 << 20, channel_gbps=14.375, channel_gbps_measured=13.27,
        clock_hz=214_000_000, hbm_slr=0, slrs=u280.slrs, sll_per_crossing=23_040,
        part_resources=u280.part_resources, buffer_ram="ultra", lateral_fraction=0.5,
        vitis=(VitisShell("xilinx_u55c_gen3x16_xdma_3_202210_1", "level0_i/ulp", PBLOCKS),))
    assert HBM_BOARDS["sim"] == HbmBoard(
        "sim", "simulation only: 32 channels of 16 KB", channels=32, channel_bytes=16 << 10,
        channel_gbps=14.375, clock_hz=214_000_000, channel_gbps_measured=13.27,
        lateral_fraction=0.5)
    assert HBM_BOARDS["onchip"] == HbmBoard(
        "onchip", "on-chip block RAM of an ECP5 board: 4 channels of 8 KB", channels=4,
        channel_bytes=8 << 10, channel_gbps=0.4, channel_gbps_measured=0.4, clock_hz=25_000_000)
    assert list(HBM_BOARDS) == ["u280", "u55c", "u50", "sim", "onchip"]
    assert list(BOARDS) == list(DEMO_BOARDS) == ["ulx3s-85f", "ecp5-5g-evn"]
    assert BOARDS["ulx3s-85f"] == BOARDS["ulx3s-85f"].__class__(
        "ulx3s-85f", "amaranth_boards.ulx3s", "ULX3S_85F_Platform",
        "Radiona ULX3S with an ECP5 LFE5U-85F (speed 6), demo at its 25 MHz clock, UART "
        "over its FTDI USB port",
        "openFPGALoader --board ulx3s {bitstream}")
    evn = DEMO_BOARDS["ecp5-5g-evn"]
    assert (evn.module, evn.amaranth_platform, evn.program) == (
        "amaranth_boards.ecp5_5g_evn", "ECP55GEVNPlatform",
        "openFPGALoader --board ecp5_evn {bitstream}")
    assert evn.description.endswith("resistor jumpers moved (board user guide, section 6.2)")


def test_the_core_reads_boards_without_amaranth():
    script = ("import sys; import topsort_hdl.core.boards as p; "
              "assert not any(m.startswith('amaranth') for m in sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", script], check=True)


SIM = """\
name = "sim"
kind = "hbm"
description = "simulation only"
channels = { value = 32, source = "DS963" }
channel_bytes = { value = 16_384, source = "Choice" }
channel_gbps = { value = 14.375, source = "DS963" }
clock_hz = { value = 214_000_000, source = "Choice" }
"""
SOURCES = """\
[sources]
DS963 = "AMD DS963, Alveo U280 data sheet"
Choice = "This project's choice"
"""
SLR = """\
[[slrs]]
source = "DS963"
lut = 369_000
ff = 746_000
"""
VITIS = """\
[[vitis]]
name = "xilinx_u280_gen3x16_xdma_1_202211_1"
region = "level0_i/ulp"
pblocks = ["pblock_dynamic_SLR0"]
"""
BOARD = """\
name = "ulx3s-85f"
kind = "demo-board"
description = "Radiona ULX3S"
module = "amaranth_boards.ulx3s"
amaranth_platform = "ULX3S_85F_Platform"
program = "openFPGALoader --board ulx3s {bitstream}"
"""


def write(directory, name, text):
    directory.mkdir(exist_ok=True)
    (directory / name).write_text(text)
    return directory


def test_adding_a_board_is_adding_a_file(tmp_path):
    shutil.copytree(BOARD_DIR, tmp_path / "boards")
    write(tmp_path / "boards", "u50.toml", SIM.replace('"sim"', '"u50"') + SLR + VITIS + SOURCES)
    boards = load_boards(tmp_path / "boards")
    assert set(boards) == set(HBM_BOARDS) | set(DEMO_BOARDS) | {"u50"}
    u50 = boards["u50"]
    assert (u50.channels, u50.slrs, u50.vitis[0].pblocks) == (
        32, (Resources(lut=369_000, ff=746_000),), ("pblock_dynamic_SLR0",))
    assert list(boards)[-1] == "u50"    # without an `order`, after the boards with one
    minimal = load_boards(write(tmp_path / "one", "board.toml", BOARD))
    assert minimal == {"ulx3s-85f": DemoBoard("ulx3s-85f", "amaranth_boards.ulx3s",
                                              "ULX3S_85F_Platform", "Radiona ULX3S",
                                              "openFPGALoader --board ulx3s {bitstream}")}


def sim_with(old, new, extra=""):
    assert old in SIM + SOURCES + extra
    return (SIM + extra + SOURCES).replace(old, new)


@pytest.mark.parametrize("text,message", [
    # a required field left out
    (sim_with('channels = { value = 32, source = "DS963" }\n', ""),
     "channels: missing required field (a number with its source"),
    (sim_with('kind = "hbm"\n', ""), "kind: missing required field (one of hbm, demo-board)"),
    (BOARD.replace('module = "amaranth_boards.ulx3s"\n', ""), "module: missing required field"),
    # an unknown field, an unknown kind
    (sim_with("clock_hz", "clock_mhz"), "unknown field 'clock_mhz' = {'value': 214000000, "
     "'source': 'Choice'}; allowed: name, kind, description, order, part, buffer_ram, channels"),
    (sim_with('"hbm"', '"ddr"'), "kind: must be one of hbm, demo-board, not 'ddr'"),
    # wrong types
    (sim_with("value = 32,", 'value = "32",'),
     "channels.value: must be an integer, not '32' (str)"),
    (sim_with("value = 32,", "value = 32.0,"), "channels.value: must be an integer, not 32.0"),
    (sim_with("value = 32,", "value = true,"), "channels.value: must be an integer, not True"),
    (sim_with("value = 14.375,", 'value = "fast",'),
     "channel_gbps.value: must be a number, not 'fast' (str)"),
    (sim_with('description = "simulation only"', "description = 3"),
     "description: must be a string, not 3 (int)"),
    (sim_with("channels = { value = 32, source = \"DS963\" }", "channels = 32"),
     'channels: a number needs its source: write { value = 32, source = "KEY" }'),
    (sim_with("lut = 369_000", 'lut = "many"', SLR),
     "slrs[0].lut: must be an integer, not 'many' (str)"),
    (sim_with('pblocks = ["pblock_dynamic_SLR0"]', 'pblocks = "pblock_dynamic_SLR0"', SLR + VITIS),
     "vitis[0].pblocks: must be an array, not 'pblock_dynamic_SLR0' (str)"),
    # non-positive counts
    (sim_with("value = 32,", "value = 0,"), "channels.value: must be positive, not 0"),
    (sim_with("value = 16_384,", "value = -16_384,"),
     "channel_bytes.value: must be positive, not -16384"),
    (sim_with("value = 14.375,", "value = 0.0,"), "channel_gbps.value: must be positive, not 0.0"),
    (sim_with("ff = 746_000", "ff = -1", SLR), "slrs[0].ff: must be at least 0, not -1"),
    # resources
    (sim_with("lut = 369_000", "luts = 369_000", SLR),
     "slrs[0]: unknown resource kind 'luts' = 369000; allowed: lut, ff, bram, uram, dsp"),
    (sim_with('source = "DS963"\nlut', "lut", SLR),
     "slrs[0]: missing 'source' (a key of [sources] for the table's numbers)"),
    # sources
    (sim_with('source = "DS963" }', 'source = "DS964" }'),
     "channels.source: 'DS964' is not a key of [sources] (DS963, Choice)"),
    (sim_with('Choice = "This project\'s choice"', 'Choice = "x"\nUnused = "y"'),
     "sources: Unused cited by no field"),
    # facts that must agree
    (sim_with('pblocks = ["pblock_dynamic_SLR0"]', 'pblocks = ["a", "b"]', SLR + VITIS),
     "vitis[0].pblocks: must name one pblock per SLR (1 in slrs), not 2: ['a', 'b']"),
    (sim_with("clock_hz =", 'hbm_slr = { value = 1, source = "DS963" }\nclock_hz =', SLR),
     "hbm_slr.value: must be an SLR of slrs (0..0), not 1"),
    (sim_with("clock_hz =", 'buffer_ram = "huge"\nclock_hz ='),
     "buffer_ram: must be one of '', 'ultra', 'block', 'distributed', 'registers', not 'huge'"),
    (BOARD.replace(" {bitstream}", ""), "program: must have a {bitstream} field"),
    ("name = ", "not valid TOML"),
])
def test_a_bad_file_is_refused_naming_the_field(tmp_path, text, message):
    write(tmp_path, "bad.toml", text)
    with pytest.raises(ValueError) as error:
        load_boards(tmp_path)
    assert str(error.value).startswith(f"{tmp_path / 'bad.toml'}: ")
    assert message in str(error.value)


def test_a_board_name_is_one_file_s(tmp_path):
    write(tmp_path, "a.toml", BOARD)
    write(tmp_path, "b.toml", SIM.replace('"sim"', '"ulx3s-85f"') + SOURCES)
    with pytest.raises(ValueError, match=rf"^{tmp_path / 'b.toml'}: name: 'ulx3s-85f' is already "
                                         rf"the name of the board in {tmp_path / 'a.toml'}; "):
        load_boards(tmp_path)


def test_an_installed_package_finds_every_board(tmp_path, install_package):
    """`pip install .` into a fresh venv, then the boards read outside the checkout."""
    python = install_package() / "python"
    script = ("import pathlib, topsort_hdl.core.boards as p; "
              "print(pathlib.Path(p.__file__).parent.parent); "
              "print(' '.join(sorted(p.HBM_BOARDS) + sorted(p.DEMO_BOARDS)))")
    got = subprocess.run([python, "-c", script], check=True, capture_output=True, text=True,
                         cwd=tmp_path).stdout.split("\n")
    assert "site-packages" in got[0]
    assert got[1].split() == sorted(HBM_BOARDS) + sorted(DEMO_BOARDS)
