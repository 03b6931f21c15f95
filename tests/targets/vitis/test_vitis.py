"""The Vitis files against the RTL and each other: we cannot run Vitis here, so every fact
the tools would check is checked from the generated files and the kernel's own tables."""

import re
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from topsort_hdl.core.boards import HBM_BOARDS
from topsort_hdl.core.config import config_from
from topsort_hdl.core.contract import (
    Layout,
    default_halves,
    default_report_address,
    kernel_arguments,
    kernel_counters,
)
from topsort_hdl.core.golden.kernel import KernelModel
from topsort_hdl.core.plan import phase2_leaves
from topsort_hdl.core.register_map import RegisterMap
from topsort_hdl.targets.verilog_text import verilog_instances
from topsort_hdl.targets.vitis import link_config, package_tcl, port_channels, write_project
from topsort_hdl.targets.vitis.identity import KERNEL_NAME, LIBRARY, VENDOR, VERSION
from topsort_hdl.targets.vitis.kernel_xml import kernel_xml

# The tiny kernel on the U280 board: generated in seconds, named and mapped by the same rules.
TINY_U280 = ["board=u280"]


def parse_kernel_xml(text):
    kernel = ElementTree.fromstring(text).find("kernel")
    ports = {p.get("name"): p.attrib for p in kernel.find("ports")}
    args = [a.attrib for a in kernel.find("args")]
    return kernel.attrib, ports, args


@pytest.mark.parametrize("name", ["u280", "tiny"])
def test_kernel_xml_matches_the_register_map(name):
    config = config_from(name)
    attrs, ports, args = parse_kernel_xml(kernel_xml(config))
    assert attrs["vlnv"] == f"{VENDOR}:{LIBRARY}:{KERNEL_NAME}:{VERSION}"
    assert attrs["hwControlProtocol"] == "ap_ctrl_hs" and attrs["name"] == KERNEL_NAME
    registers = RegisterMap(kernel_arguments(config), kernel_counters(config))
    assert [a["name"] for a in args] == [n for n, _ in kernel_arguments(config)]
    assert [int(a["id"]) for a in args] == list(range(len(args)))
    for arg, (arg_name, bits) in zip(args, kernel_arguments(config), strict=True):
        assert int(arg["offset"], 16) == registers.offset(arg_name)
        assert int(arg["size"], 16) == bits // 8
        assert arg["port"] in ports
        # Pointers on their tree's master, scalars on the control port.
        assert (arg["addressQualifier"] == "1") == (arg["port"] != "s_axi_control")
    assert ports["s_axi_control"]["mode"] == "slave"
    masters = [p for p, a in ports.items() if a["mode"] == "master"]
    assert masters == [f"m{i:02d}_axi" for i in range(config.trees)]
    assert all(int(ports[m]["dataWidth"]) == config.data_width for m in masters)
    # The control block decodes 12 address bits: every register within the slave's range.
    assert max(e.offset + e.bytes for e in registers.entries) <= int(
        ports["s_axi_control"]["range"], 16)


@pytest.fixture(scope="module")
def tiny_u280_project(tmp_path_factory):
    """The tiny kernel generated for the U280 board: Verilog and every Vitis file."""
    from topsort_hdl.targets.kernel_verilog import generate

    out = tmp_path_factory.mktemp("tiny_u280")
    done = generate(config_from("tiny", TINY_U280), out)
    return {p.name: p for p in done["vitis"]} | {"topsort.v": done["verilog"]}


def test_every_verilog_port_belongs_to_a_kernel_xml_interface(tiny_u280_project):
    paths = tiny_u280_project
    text = paths["topsort.v"].read_text()
    header = re.search(rf"module {KERNEL_NAME}\((.*?)\);", text, re.S).group(1)
    verilog_ports = {p.strip() for p in header.split(",")}
    _, ports, _ = parse_kernel_xml(paths["kernel.xml"].read_text())
    loose = {p for p in verilog_ports if not any(p.startswith(i + "_") for i in ports)}
    assert loose == {"ap_clk", "ap_rst_n", "interrupt"}
    # No double underscore: Vivado's interface inference would miss such ports.
    assert not [p for p in verilog_ports if "__" in p]
    for interface in ports:
        assert any(p.startswith(interface + "_") for p in verilog_ports), interface
    # The link configuration names exactly the masters of kernel.xml.
    linked = re.findall(r"^sp=\w+\.(\w+):HBM\[", paths["link.cfg"].read_text(), re.M)
    assert linked == [p for p, a in ports.items() if a["mode"] == "master"]


def test_packaging_script_agrees_with_kernel_xml():
    config = config_from("u280")
    tcl = package_tcl(config, HBM_BOARDS["u280"].part)
    assert f"-vendor {VENDOR} -library {LIBRARY}" in tcl
    assert f"set_property name {KERNEL_NAME} $core" in tcl
    assert f"set_property version {VERSION} $core" in tcl
    assert f"set_property top {KERNEL_NAME} " in tcl
    assert f"-kernel_name {KERNEL_NAME}" in tcl
    assert "set_property sdx_kernel true $core" in tcl
    assert "set_property sdx_kernel_type rtl $core" in tcl
    assert f"set_property value {config.clock_hz} " in tcl
    interfaces = re.search(r"foreach busif \[list (.*?)\]", tcl).group(1).split()
    _, ports, _ = parse_kernel_xml(kernel_xml(config))
    assert sorted(interfaces) == sorted(ports)
    assert f"-part {HBM_BOARDS['u280'].part}" in tcl


@pytest.mark.parametrize("name,overrides", [("u280", []), ("tiny", []), ("small", []),
                                            ("u280", ["trees=8", "reuse=2"])])
def test_every_address_the_kernel_touches_is_in_its_masters_range(name, overrides):
    """From the golden model: each master's phase-1 halves, the phase-2 runs the reused
    trees read and the batches they write, all in the channels its sp= line lists."""
    config = config_from(name, overrides)
    ranges = port_channels(config)
    halves = default_halves(config)
    channel = config.channel_bytes
    count = min(config.capacity, 100_000)
    model = KernelModel(config)
    model.run([(i * 7919 % 1000, i) for i in range(count)], halves)

    def check(port, address, length):
        first, last = ranges[f"m{port:02d}_axi"]
        assert first <= address // channel and (address + length - 1) // channel <= last, \
            (port, hex(address), length)

    for tree in range(config.trees):        # phase 1: the tree's own halves
        for half in (0, 1):
            check(tree, halves[tree][half], channel)
    for t, row in enumerate(phase2_leaves(model.plans, config.reuse, config.leaves)):
        port = t * config.group
        for tree, half, first, n in row:       # phase 2 reads
            if n:
                check(port, halves[tree][half] + first * config.record_bytes,
                      n * config.record_bytes)
    ports = config.reuse
    for k, (_, address, length) in enumerate(model.chunks):    # phase 2 writes
        check((k % ports) * config.group, address, length)
    check(0, default_report_address(config), Layout.from_config(config).report_bytes)


def test_link_config_lines():
    text = link_config(config_from("u280"), hbm_slr=0, frequency_hz=214_000_000,
                       floorplan_tcl="floorplan.tcl")
    assert "sp=topsort_1.m00_axi:HBM[0:7]" in text        # Table I: reused tree 0
    assert "sp=topsort_1.m05_axi:HBM[10:11]" in text
    assert "sp=topsort_1.m12_axi:HBM[24:31]" in text
    assert "slr=topsort_1:SLR0" in text and "nk=topsort:1:topsort_1" in text
    assert "freqHz=214000000:topsort_1.ap_clk" in text
    assert "prop=run.impl_1.STEPS.OPT_DESIGN.TCL.PRE=floorplan.tcl" in text


# The floorplan model --------------------------------------------------------------------------


def check_floorplan(config, board, plan, estimates, utilization, sll_fraction):
    """A placement respects every die's budget and every boundary's SLLs, and stages follow
    the dies crossed."""
    from topsort_hdl.targets.vitis.floorplan import axi_port_signals

    reused = set(config.reused_trees)
    for die, slr in enumerate(board.slrs):
        used = estimates["phase2"] if die == board.hbm_slr else type(slr)()
        for tree in plan.trees_on(die):
            used = used + estimates["reused_tree" if tree in reused else "tree"]
        assert used.fits(slr * utilization), die
    port = axi_port_signals(config.axi)
    for boundary in range(len(board.slrs) - 1):
        above = [t for t, d in enumerate(plan.slr) if d > boundary]
        wires = sum(port + (config.data_width + 1 if t in reused else 0) for t in above)
        assert wires == plan.crossing[boundary] <= board.sll_per_crossing * sll_fraction
    assert plan.stages == tuple(2 * abs(d - board.hbm_slr) for d in plan.slr)


def test_floorplan_reproduces_the_paper_with_its_estimates():
    from topsort_hdl.targets.vitis.floorplan import PAPER_U280_ESTIMATES, plan_floorplan

    config, board = config_from("u280"), HBM_BOARDS["u280"]
    plan = plan_floorplan(config, board, **PAPER_U280_ESTIMATES, utilization=0.95)
    assert [len(plan.trees_on(d)) for d in range(3)] == [2, 6, 8]     # the paper's 2 / 6 / 8
    assert set(plan.trees_on(0)) <= set(config.reused_trees)
    check_floorplan(config, board, plan, PAPER_U280_ESTIMATES, 0.95, 0.85)
    # With a 90% die budget the middle die cannot take two reused trees: 3 / 5 / 8.
    plan = plan_floorplan(config, board, **PAPER_U280_ESTIMATES, utilization=0.9)
    assert [len(plan.trees_on(d)) for d in range(3)] == [3, 5, 8]
    check_floorplan(config, board, plan, PAPER_U280_ESTIMATES, 0.9, 0.85)


def test_stored_figures_match_the_presets():
    """The group figures stored with the presets (``topsort-hdl qor --store-figures``) name
    the groups an estimate composes, measured with the preset's parameters as they are."""
    from topsort_hdl.analysis.qor.blocks import GROUPS
    from topsort_hdl.core.block_figures import config_shape, load_figures, stored_groups
    from topsort_hdl.core.config import PRESETS

    presets = load_figures()
    assert "u280" in presets
    for name, entry in presets.items():
        config = PRESETS[name]
        assert entry["config"] == config_shape(config), name
        groups = stored_groups(config)
        assert list(groups) == [*GROUPS, "kernel"], name
        assert all(groups[group].luts > 0 for group in GROUPS), name


def test_generation_floorplans_with_the_stored_figures():
    from topsort_hdl.targets.vitis import board_floorplan, floorplan_estimates

    config, board = config_from("u280"), HBM_BOARDS["u280"]
    estimates, source = floorplan_estimates(config)
    assert source == "the stored QoR estimate of u280"
    assert estimates["tree"].uram > 0 and estimates["phase2"].lut > estimates["tree"].lut
    plan = board_floorplan(config)
    check_floorplan(config, board, plan, estimates, 0.95, 0.85)
    assert len(plan.trees_on(0)) < config.trees      # trees leave the HBM die
    # A changed shape has no figures of its own: the paper's.
    changed = config_from("u280", ["read_outstanding=8"])
    assert floorplan_estimates(changed)[1] == "the paper's per-tree figures"


def test_floorplan_limits():
    from topsort_hdl.core.boards import Resources
    from topsort_hdl.targets.vitis.floorplan import plan_floorplan

    config, board = config_from("u280"), HBM_BOARDS["u280"]
    small = {"tree": Resources(lut=1000), "reused_tree": Resources(lut=2000),
             "phase2": Resources(lut=5000)}
    plan = plan_floorplan(config, board, **small)
    check_floorplan(config, board, plan, small, 0.9, 0.85)
    # Tiny trees all want to leave the HBM die; the SLLs between dies 0 and 1 stop them.
    assert len(plan.trees_on(0)) >= 1 and plan.crossing[0] > 0.8 * 23_040 * 0.85
    with pytest.raises(ValueError, match="u280 does not fit on u280: no placement keeps"):
        plan_floorplan(config, board, Resources(lut=200_000), Resources(lut=200_000),
                       Resources(lut=10_000))
    with pytest.raises(ValueError, match="board sim has no die resources"):
        plan_floorplan(config_from("tiny"), HBM_BOARDS["sim"], **small)


def test_floorplan_cells_exist_in_the_generated_hierarchy(tiny_u280_project):
    """Every cell path floorplan.tcl names is an instance of the generated Verilog (walked
    from the top through every module's instances), and every tree is placed exactly once."""
    import fnmatch

    text = tiny_u280_project["topsort.v"].read_text()
    instances = set(verilog_instances(text, KERNEL_NAME))
    tcl = tiny_u280_project["floorplan.tcl"].read_text()
    cells = re.findall(r"^\s+\$top/(\S+) \\$", tcl, re.M)
    assert cells
    for cell in cells:
        assert fnmatch.filter(instances, cell), cell
    config = config_from("tiny", TINY_U280)
    placed = [t for t in range(config.trees) for c in cells if c.endswith(f"/lane{t}/reader")]
    assert placed == list(range(config.trees))
    assert "set top [get_cells -quiet level0_i/ulp/topsort_1/inst]" in tcl
    # The link configuration runs it before opt_design.
    assert "prop=run.impl_1.STEPS.OPT_DESIGN.TCL.PRE=floorplan.tcl" in \
        tiny_u280_project["link.cfg"].read_text()


def test_u55c_project_targets_its_board(tmp_path):
    config = config_from("u55c")
    files = {p.name: p.read_text() for p in write_project(config, tmp_path)}
    assert "PLATFORM ?= xilinx_u55c_gen3x16_xdma_3_202210_1" in files["Makefile"]
    assert "-part xcu55c-fsvh2892-2L-e" in files["package_kernel.tcl"]
    assert "sp=topsort_1.m00_axi:HBM[0:7]" in files["link.cfg"]
    assert "HALF_BYTES = 536866816ULL" in files["topsort_config.h"]   # 512 MB channels - 4 KB
    # The simulation board has no Vitis board: no Vitis files.
    assert write_project(config_from("tiny"), tmp_path / "sim") == []


def test_vitis_files_need_no_amaranth(tmp_path):
    """kernel.xml, packaging, link configuration, floorplan and host files are written from the
    core's tables: a machine that only generates or runs hosts needs no HDL toolchain."""
    code = ("import sys\n"
            "from topsort_hdl.core.config import config_from\n"
            "from pathlib import Path\n"
            "from topsort_hdl.targets.vitis import write_project\n"
            f"assert write_project(config_from('u280'), Path({str(tmp_path)!r}))\n"
            "loaded = sorted(m for m in sys.modules if m.startswith('amaranth'))\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True)
