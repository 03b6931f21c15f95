# topsort-hdl: every target sets up what it needs (system tools, .venv) before it runs.

PYTHON      ?= python3
VENV        := .venv
VPY         := $(VENV)/bin/python
STAMP       := $(VENV)/.installed
SYSTEM      := $(VENV)/.system-tools
JOBS        ?= 2
export AMARANTH_USE_YOSYS := builtin

.PHONY: all setup test test-slow test-all bench bench-update qor qor-update docs examples figures model explore formal equivalence lint verilog units \
	sim-u280 profile bitstream \
	clean distclean help

all: test

help:
	@echo "make test       set up, then run the default test suite (what CI runs)"
	@echo "make test-slow  run only the long simulations (marker 'slow')"
	@echo "make test-all   run every test, slow ones included"
	@echo "make bench      measure merge units, trees and AXI engines in simulation against golden results"
	@echo "make bench-update rewrite benchmarks/golden/{mms,flims,tree,axi}.json (commit it with the reason)"
	@echo "make qor        QoR regression: Yosys resources, benchmark sorts vs the performance model,"
	@echo "                u280 generator time and memory, nextpnr-ecp5 Fmax and area of merge units,"
	@echo "                trees and the on-chip demo vs benchmarks/golden/qor.json (~25 min, ~190 cold;"
	@echo "                QOR: more options, such as --scheduler tcp://HOST:8786)"
	@echo "make qor-update rewrite benchmarks/golden/qor.json (commit it with the reason)"
	@echo "make docs       rewrite the tables of docs/ generated from benchmarks/golden/*.json"
	@echo "make examples   run the console examples of README.md and docs/ and write what they print"
	@echo "make figures    store the HBM presets' group figures with them (for the floorplan)"
	@echo "                of 'make verilog' (Yosys, cached; commit with the reason)"
	@echo "make model      performance model sweep 32 MB .. 4 GB on u280 vs the paper (table + PNG)"
	@echo "make explore    the Pareto front of GB/s against LUTs for HBM_BOARD (default u280) at"
	@echo "                4 GB: table, PNG and JSON under build/explore/ (EXPLORE: more options)"
	@echo "make formal     prove every block's properties with SymbiYosys and catch each block's"
	@echo "                broken variant: table of proofs (FORMAL: proof names to run)"
	@echo "make equivalence prove each tiny block's Verilog equivalent to BEFORE's (a git revision,"
	@echo "                default HEAD) with Yosys: what a refactor must keep (EQUIVALENCE: options)"
	@echo "make verilog    write the u280 kernel's Verilog and register map under build/u280/"
	@echo "make units      write the standalone merge units under build/units/"
	@echo "make bitstream  build the on-chip demo sorter for BOARD (default ulx3s-85f; also"
	@echo "                ecp5-5g-evn) with the YoWASP tools: build/bitstream/BOARD/topsort_demo.bit"
	@echo "make sim-u280   the u280 kernels and u50 end to end in Verilator (slow)"
	@echo "make profile    cycles per pass of one tree, and where they go (CONFIG, SET, RECORDS, TREE, ORDER)"
	@echo "make lint       run ruff"
	@echo "make setup      only set up (.venv and system tools)"
	@echo "make clean      remove build outputs; 'make distclean' removes .venv too"

setup: $(STAMP) $(SYSTEM)

# Reinstall only when the package description or the pins change.
$(STAMP): pyproject.toml setup.py requirements/pinned.txt
	test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -c requirements/pinned.txt -e '.[dev]'
	touch $@

$(SYSTEM): scripts/ensure-system-tools.sh | $(STAMP)
	scripts/ensure-system-tools.sh
	touch $@

test: setup
	$(VPY) -m pytest -n $(JOBS) -m "not slow and not formal" --durations=15

test-slow: setup
	$(VPY) -m pytest -n $(JOBS) -m slow

test-all: setup
	$(VPY) -m pytest -n $(JOBS)

BENCH_GOLDEN := benchmarks/golden
bench: setup
	$(VENV)/bin/topsort-hdl bench mms --json build/bench/mms.json --golden $(BENCH_GOLDEN)/mms.json
	$(VENV)/bin/topsort-hdl bench flims --rate 1 --rate 2 --rate 4 --rate 8 --rate 16 --rate 32 --json build/bench/flims.json --golden $(BENCH_GOLDEN)/flims.json
	$(VENV)/bin/topsort-hdl bench tree --json build/bench/tree.json --golden $(BENCH_GOLDEN)/tree.json
	$(VENV)/bin/topsort-hdl bench axi --json build/bench/axi.json --golden $(BENCH_GOLDEN)/axi.json

bench-update: setup
	$(VENV)/bin/topsort-hdl bench mms --json build/bench/mms.json --golden $(BENCH_GOLDEN)/mms.json --update
	$(VENV)/bin/topsort-hdl bench flims --rate 1 --rate 2 --rate 4 --rate 8 --rate 16 --rate 32 --json build/bench/flims.json --golden $(BENCH_GOLDEN)/flims.json --update
	$(VENV)/bin/topsort-hdl bench tree --json build/bench/tree.json --golden $(BENCH_GOLDEN)/tree.json --update
	$(VENV)/bin/topsort-hdl bench axi --json build/bench/axi.json --golden $(BENCH_GOLDEN)/axi.json --update

QOR_GOLDEN := benchmarks/golden/qor.json
QOR ?=
qor: setup
	$(VENV)/bin/topsort-hdl qor --golden $(QOR_GOLDEN) --json build/qor/figures.json $(QOR)

qor-update: setup
	$(VENV)/bin/topsort-hdl qor --golden $(QOR_GOLDEN) --update --json build/qor/figures.json $(QOR)

# The golden tables are plain Python (json only); the model table computes the performance
# model. tests/test_docs.py and tests/analysis/perf/test_perf.py fail until this has run.
docs: setup
	$(PYTHON) scripts/golden_tables.py
	$(VPY) -m topsort_hdl.analysis.qor.model_table benchmarks/golden/qor.json docs/performance-model.md

# Each console example of the pages, run as a new user would (tests/test_doc_examples.py checks).
examples: setup
	$(VPY) scripts/doc_examples.py --update

figures: setup
	$(VENV)/bin/topsort-hdl qor --config u280 --store-figures
	$(VENV)/bin/topsort-hdl qor --config u55c --store-figures
	$(VENV)/bin/topsort-hdl qor --config u280_flims --store-figures
	$(VENV)/bin/topsort-hdl qor --config u55c_flims --store-figures
	$(VENV)/bin/topsort-hdl qor --config u50 --store-figures
	$(VENV)/bin/topsort-hdl qor --config u280_kv64_flims --store-figures

model: setup
	$(VENV)/bin/topsort-hdl model --config u280 --sweep --plot build/model/u280-sweep.png \
		--json build/model/u280-sweep.json

HBM_BOARD ?= u280
EXPLORE ?=
explore: setup
	@mkdir -p build/explore
	$(VENV)/bin/topsort-hdl explore --board $(HBM_BOARD) --bytes 4G $(EXPLORE) \
		--plot build/explore/$(HBM_BOARD).png --json build/explore/$(HBM_BOARD).json

formal: setup
	$(VENV)/bin/topsort-hdl formal --broken --jobs $(JOBS) $(FORMAL)

# A refactor keeps the hardware: each block of a configuration proven equivalent to BEFORE's.
BEFORE ?= HEAD
equivalence: setup
	$(VPY) -m topsort_hdl.analysis.equivalence --before $(BEFORE) $(EQUIVALENCE)

lint: setup
	$(VPY) -m ruff check topsort_hdl tests

verilog: setup
	$(VENV)/bin/topsort-hdl generate --config u280 --out build/u280

BOARD ?= ulx3s-85f
bitstream: setup
	$(VENV)/bin/topsort-hdl bitstream --board $(BOARD) --out build/bitstream/$(BOARD)

units: setup
	$(VENV)/bin/topsort-hdl unit cas --out build/units/cas.v
	$(VENV)/bin/topsort-hdl unit bitonic --rate 8 --out build/units/bitonic8.v
	$(VENV)/bin/topsort-hdl unit mms --rate 8 --out build/units/mms8.v
	$(VENV)/bin/topsort-hdl unit tree --rate 8 --leaves 16 --out build/units/tree_p8_l16.v

sim-u280: setup
	$(VPY) -m pytest -m slow tests/hardware/kernel/test_kernel.py -k "u280 or u50"

# e.g. make profile CONFIG=small SET="trees=2 channel_bytes=1048576" RECORDS=32768 TREE=1
#      make profile ORDER=sorted SET=placement=blocks   (the input's order and placement)
CONFIG  ?= small
SET     ?=
RECORDS ?= 16384
TREE    ?= 0
ORDER   ?= random
PROFILE_SIM ?= verilator
profile: setup
	$(VPY) -m topsort_hdl.sim.profile --config $(CONFIG) $(foreach s,$(SET),--set $(s)) \
		--records $(RECORDS) --tree $(TREE) --order $(ORDER) --sim $(PROFILE_SIM)

clean:
	rm -rf build sim_build .pytest_cache

distclean: clean
	rm -rf $(VENV)
