"""VALID never waits for READY: no block's VALID output is reached from its own READY through
logic alone (topsort_hdl/formal/paths.py), in every distinct block of the tiny kernel with
either merge unit and in the kernel's job; and the check catches a block that breaks it."""

import pytest

from topsort_hdl.core.config import config_from
from topsort_hdl.core.contract import kernel_arguments, kernel_counters
from topsort_hdl.core.register_map import RegisterMap
from topsort_hdl.formal.paths import handshakes, valid_waiting_for_ready
from topsort_hdl.formal.proofs import sabotaged
from topsort_hdl.hardware.axi import AxiParams, AxiReadEngine
from topsort_hdl.hardware.kernel.job import JobController
from topsort_hdl.hardware.kernel.kernel import TopSortKernel
from topsort_hdl.hardware.merge import MmsMergeUnit
from topsort_hdl.hardware.records import RecordLayout
from topsort_hdl.targets.hierarchy import block_census


def _blocks(overrides):
    kernel = TopSortKernel(config_from("tiny", overrides), (2, 0, 4, 1))
    return block_census(kernel, "topsort", descend=lambda block: True).blocks


@pytest.mark.parametrize("overrides", [[], ["merge_unit=flims"]], ids=["mms", "flims"])
def test_no_valid_waits_for_its_ready(overrides):
    blocks = _blocks(overrides)
    checked = 0
    for module, block in blocks.items():
        assert valid_waiting_for_ready(block) == [], module
        checked += len(handshakes(block))
    assert len(blocks) >= 26 and checked >= 74


def test_the_job_waits_for_no_ready():
    config = config_from("tiny")
    job = JobController(config, RegisterMap(kernel_arguments(config), kernel_counters(config)))
    assert handshakes(job) and valid_waiting_for_ready(job) == []


def test_a_valid_that_waits_for_its_ready_is_caught():
    unit = sabotaged(MmsMergeUnit, lambda u, m: m.d.comb.__iadd__(
        u.o.valid.eq(u.o.ready)))(RecordLayout(8, 4), 2)
    assert valid_waiting_for_ready(unit) == ["o__valid"]


def test_handshakes_are_a_valid_out_and_its_ready_in():
    """A master's AXI channels: AR is one (ARVALID out, ARREADY in); R is the memory's, whose
    VALID comes in, so it is not the engine's to keep."""
    engine = AxiReadEngine(AxiParams(data_width=32, addr_width=12, id_width=1), leaves=2,
                           burst_bytes=8, length_bits=12)
    pairs = handshakes(engine)
    assert pairs["axi__arvalid"] == "axi__arready"
    assert "axi__rvalid" not in pairs
    assert pairs["leaf__0__valid"] == "leaf__0__ready"
    assert valid_waiting_for_ready(engine) == []
