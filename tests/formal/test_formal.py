"""The formal proofs: each holds, and each catches its block's broken variant (a proof that
cannot fail proves nothing). The long ones carry the ``formal`` marker (``make formal`` runs
all of them, with a table)."""

import pytest
from amaranth.back import rtlil
from amaranth.hdl import Elaboratable, Module, Signal

from topsort_hdl.cli.main import main
from topsort_hdl.formal.harness import Harness
from topsort_hdl.formal.proofs import PROOFS
from topsort_hdl.formal.sby import run_proof
from topsort_hdl.hardware.properties import check
from topsort_hdl.hardware.queue import RegisteredFlagsFIFO


def _marked(proof):
    return pytest.param(proof, id=proof.name,
                        marks=() if proof.fast else (pytest.mark.formal,))


@pytest.mark.parametrize("proof", [_marked(p) for p in PROOFS])
def test_proof_holds_and_catches_its_broken_block(proof, tmp_path):
    result = run_proof(proof.name, proof.design(), proof.mode, proof.suite_depth, tmp_path)
    assert result.status == "PASS", result.log.read_text()[-3000:]
    assert result.assertions > 0
    for name, build in proof.broken_variants:
        broken = run_proof(name, proof.design(build), proof.mode, proof.suite_depth, tmp_path)
        assert broken.status == "FAIL", broken.log.read_text()[-3000:]
        assert broken.trace is not None and broken.trace.stat().st_size > 0


def test_properties_only_in_formal_builds():
    """The Verilog and the simulator see no property: a queue converted for no platform holds
    no check cell, and for the formal platform it does."""
    def checks(platform):
        q = RegisteredFlagsFIFO(shape=4, capacity=4, buffered=True)
        return rtlil.convert(q, platform=platform).count("$check")
    assert checks(None) == 0
    assert checks("formal") > 0


class _HeldFlag(Elaboratable):
    """A flag that must stay set: set by reset, or (``reset_less``) by its initial value only."""

    def __init__(self, reset_less):
        self.reset_less = reset_less

    def elaborate(self, platform):
        m = Module()
        flag = Signal(init=1, reset_less=self.reset_less)
        m.d.sync += flag.eq(flag)
        check(m, flag, "the flag is set")
        return m


@pytest.mark.parametrize("reset_less", [False, True])
def test_only_reset_defines_a_register(reset_less, tmp_path):
    """Registers start as any value in a proof (as after a power-up whose initialiser did not
    fire): a flag only its initial value sets fails, the same flag set by reset holds."""
    result = run_proof("flag", Harness(_HeldFlag(reset_less), lambda m, block: None),
                       "prove", 4, tmp_path)
    assert result.status == ("FAIL" if reset_less else "PASS")


def test_cli_lists_and_refuses(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["formal", "--list"])
    assert exit.value.code == 0
    assert "queue-buffered-4" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exit:
        main(["formal", "nosuch"])
    assert exit.value.code == 2
    assert "no proof named nosuch" in capsys.readouterr().err


def test_cli_table(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["formal", "credit-2", "--broken", "--work", str(tmp_path), "--jobs", "1"])
    out = capsys.readouterr().out
    assert exit.value.code == 0, out
    assert "credit-2 " in out and "proven" in out and "caught" in out
