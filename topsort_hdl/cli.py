"""The ``topsort-hdl`` command line (also ``python -m topsort_hdl``).

User mistakes end with one line on standard error and exit status 2, never a traceback.
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

__all__ = ["main"]

PROG = "topsort-hdl"
# `sort` without --config: the first of these that holds the input (they simulate in seconds).
SORT_CONFIGS = ("tiny", "small")


class UsageError(Exception):
    """A mistake of the user's: reported in one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def _add_record_options(parser):
    parser.add_argument("--key-bits", type=int, default=32, help="key width (default 32)")
    parser.add_argument("--value-bits", type=int, default=32, help="value width (default 32)")


def _parser():
    from .golden import BENCH_KEYS
    from .units import UNIT_KINDS

    parser = _Parser(prog=PROG, description="TopSort sorting accelerator in Amaranth HDL.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                     parser_class=_Parser)

    commands.add_parser("configs", help="list the named configurations")

    generate = commands.add_parser("generate", help="write a configuration's kernel Verilog")
    _add_config_options(generate)
    generate.add_argument("--out", type=Path, default=None,
                          help="output directory (default build/CONFIG)")

    sort = commands.add_parser("sort", help="sort a record file on the kernel's RTL in simulation")
    _add_config_options(sort, default=None,
                        about=f"named configuration (default: the first of "
                              f"{', '.join(SORT_CONFIGS)} that holds the input)")
    sort.add_argument("--input", required=True, type=Path, help="record file to sort")
    sort.add_argument("--output", required=True, type=Path, help="sorted record file to write")
    sort.add_argument("--sim", choices=["icarus", "verilator"], default="icarus",
                      help="simulator (default icarus)")
    sort.add_argument("--seed", type=int, default=1, help="seed of the memory's random pauses")
    sort.add_argument("--pause", type=float, default=0.0,
                      help="chance a memory channel pauses in a cycle (default 0: ideal memory)")
    sort.add_argument("--waves", type=Path, default=None,
                      help="write a VCD of the kernel's ports (Icarus only)")
    sort.add_argument("--build", type=Path, default=Path("build"), metavar="DIR",
                      help="where the kernel's Verilog and the simulation go: "
                           "DIR/sort/CONFIG-SIM (default build, in the current directory)")

    unit = commands.add_parser("unit", help="write one standalone block as Verilog",
                               description="Write one standalone block as Verilog. Kinds: "
                               + "; ".join(f"{k}: {d}" for k, (_, d) in UNIT_KINDS.items()))
    unit.add_argument("kind", metavar="KIND", help=f"one of {', '.join(UNIT_KINDS)}")
    unit.add_argument("--rate", type=int, default=4,
                      help="records per bundle E, or root rate p of a tree (default 4)")
    unit.add_argument("--stages", type=int, default=None,
                      help="pipeline registers per network (default one per layer)")
    unit.add_argument("--descending", action="store_true", help="descending order (cas, bitonic)")
    unit.add_argument("--leaves", type=int, default=None,
                      help="leaves per tree l (tree, reuse; default 16)")
    unit.add_argument("--trees", type=int, default=None,
                      help="trees reused in phase 2 r (reuse; default 4)")
    unit.add_argument("--leaf-depth", type=int, default=None,
                      help="bundles per leaf buffer (tree, reuse; default 256)")
    unit.add_argument("--data-width", type=int, default=None,
                      help="AXI data width in bits (reader, writer; default 512)")
    unit.add_argument("--burst-bytes", type=int, default=None,
                      help="largest burst (reader default 1024, writer 4096)")
    unit.add_argument("--outstanding", type=int, default=None,
                      help="bursts in flight per port (reader, writer; default 4)")
    unit.add_argument("--ports", type=int, default=None,
                      help="AXI ports the output is batched over (writer; default 1)")
    unit.add_argument("--slots", type=int, default=None,
                      help="regions per port the batches rotate over (writer; default 1)")
    unit.add_argument("--batch-bytes", type=int, default=None,
                      help="output batch size with several ports (writer; default 4096)")
    _add_record_options(unit)
    unit.add_argument("--name", default=None, help="top-level module name (default: KIND)")
    unit.add_argument("--out", required=True, type=Path, help="Verilog file to write")

    bench = commands.add_parser("bench", help="measure blocks in simulation")
    bench.add_argument("block", choices=list(BENCH_KEYS),
                       help="mms: merge unit per E; tree: merge trees and the phase-2 tree; "
                            "axi: read and write engine bandwidth")
    bench.add_argument("--rate", type=int, action="append",
                       help="mms only: records per bundle E; repeat for several "
                            "(default 1 2 4 8 16)")
    bench.add_argument("--json", type=Path, help="also write the results to this JSON file")
    bench.add_argument("--golden", type=Path,
                       help="compare with these golden figures; exit 1 when one leaves its band")
    bench.add_argument("--update", action="store_true",
                       help="with --golden: rewrite the golden file with the new figures")
    model = commands.add_parser("model", help="predict passes, cycles and GB/s (performance "
                                "model)")
    _add_config_options(model)
    size = model.add_mutually_exclusive_group(required=True)
    size.add_argument("--bytes", help="data size: 4G, 256M, 65536 (8-byte records)")
    size.add_argument("--sweep", action="store_true",
                      help="32 MB .. 4 GB next to the paper's measurements")
    model.add_argument("--memory", choices=["measured", "peak", "ideal"], default="measured",
                       help="HBM per channel: measured sequential bandwidth (default), the "
                            "peak figure, or ideal (one beat per cycle, as in simulation)")
    model.add_argument("--plot", type=Path, help="with --sweep: write a PNG plot here")
    model.add_argument("--json", type=Path, help="also write the figures to this JSON file")

    qor = commands.add_parser("qor", help="resource estimates and logic levels (Yosys); with "
                              "--golden, the QoR regression")
    _add_config_options(qor)
    qor.add_argument("--part", action="append",
                     choices=["resources", "sorts", "generator", "pnr"],
                     help="what to measure (repeatable; default: resources of --config, or "
                          "everything with --golden); resources: Yosys cells and logic levels; "
                          "pnr: nextpnr-ecp5 Fmax and area of merge units, trees and the "
                          "on-chip demo")
    qor.add_argument("--open-pnr", action="append_const", dest="part", const="pnr",
                     help="the same as --part pnr")
    qor.add_argument("--golden", type=Path,
                     help="compare with these golden figures; exit 1 when one leaves its band")
    qor.add_argument("--update", action="store_true",
                     help="with --golden: rewrite the golden file with the new figures")
    qor.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    qor.add_argument("--store-figures", action="store_true",
                     help="store the preset's block figures with it (topsort_hdl/kernel/"
                          "block_figures.json), for the floorplan of `generate`")

    bitstream = commands.add_parser("bitstream", help="build the on-chip demo sorter's "
                                    "bitstream for an open-toolchain board (YoWASP tools)")
    bitstream.add_argument("--board", default="ulx3s-85f",
                           help="board (default ulx3s-85f); `--board list` lists them")
    bitstream.add_argument("--out", type=Path,
                           help="build directory (default build/bitstream/BOARD)")
    return parser


def _add_config_options(parser, default="u280", about="named configuration (default u280)"):
    parser.add_argument("--config", default=default, help=about)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a configuration parameter (repeatable)")


def _config(args):
    from .kernel.config import config_from

    try:
        return config_from(args.config, args.set)
    except ValueError as error:
        raise UsageError(str(error)) from None


def _configs(args):
    from .kernel.config import PRESETS

    for name, config in PRESETS.items():
        print(f"{name:<6} {config.summary()}")


def _generate(args):
    from .kernel.generate import generate

    config = _config(args)
    out = args.out or Path("build") / config.name
    print(f"generating {config.name}: {config.summary()}", file=sys.stderr, flush=True)
    try:
        done = generate(config, out)
    except OSError as error:
        raise UsageError(f"cannot write {out}: {error.strerror}") from None
    print(f"wrote {done['verilog']} ({done['bytes'] / 1e6:.1f} MB: {done['modules']} distinct "
          f"blocks, {done['instances']} instances) and {out / 'registers.json'} in "
          f"{done['seconds']:.1f} s", file=sys.stderr)
    if done["vitis"]:
        names = ", ".join(path.name for path in done["vitis"])
        print(f"Vitis files in {out}: {names}; see {out / 'Makefile'}", file=sys.stderr)
    else:
        print(f"no Vitis files: platform {config.platform} has no Vitis platform",
              file=sys.stderr)


def _sort_config(args, size):
    """The configuration ``sort`` runs, and a note for the user: ``--config``'s, else the
    first of :data:`SORT_CONFIGS` whose capacity holds ``size`` bytes of records (the last one
    if none does: the checks that follow say why)."""
    if args.config is not None:
        config = _config(args)
        note = None if config.platform == "sim" else (
            f"{config.name} is a full-size kernel: generating it takes about a minute and "
            f"simulating it all is slow (--sim verilator is faster; "
            f"{' and '.join(SORT_CONFIGS)} simulate in seconds)")
        return config, note
    for name in SORT_CONFIGS:
        args.config = name
        config = _config(args)
        if size // config.record_bytes <= config.capacity:
            break
    return config, (f"no --config: sorting on {config.name} (capacity {config.capacity:,} "
                    f"records); --config u280 is the paper's kernel")


def _sort(args):
    from .kernel.simulate import SimulationError, simulate_sort

    try:
        data = args.input.read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {args.input}: {error.strerror}") from None
    chosen = args.config is None
    config, note = _sort_config(args, len(data))
    if len(data) % config.record_bytes:
        raise UsageError(f"{args.input} holds {len(data)} bytes, not a whole number of "
                         f"{config.record_bytes}-byte records")
    count = len(data) // config.record_bytes
    if count > config.capacity:
        larger = "; name a larger one with --config (see `topsort-hdl configs`)" if chosen else ""
        raise UsageError(f"{args.input} holds {count} records, more than {config.name} holds "
                         f"({config.capacity}){larger}")
    if args.waves and args.sim != "icarus":
        raise UsageError("--waves needs --sim icarus")
    if not 0 <= args.pause < 1:
        raise UsageError(f"--pause must be at least 0 and below 1, not {args.pause}")
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_bytes(b"")
    except OSError as error:
        raise UsageError(f"cannot write {args.output}: {error.strerror}") from None
    if note:
        print(f"{PROG}: {note}", file=sys.stderr, flush=True)
    try:
        stats = simulate_sort(config, args.input, args.output, sim=args.sim, seed=args.seed,
                              pause=args.pause, waves=args.waves, build_root=args.build)
    except SimulationError as error:
        print(f"{PROG}: simulation failed: {error}", file=sys.stderr)
        return 1
    report = stats["report"]
    for line in report:
        print(line)
    return 0


def _unit(args):
    from amaranth.hdl import UnusedElaboratable

    from .units import build_unit, emit_verilog

    name = args.name or args.kind
    start = time.perf_counter()
    try:
        component = build_unit(args.kind, key_bits=args.key_bits, value_bits=args.value_bits,
                               rate=args.rate, stages=args.stages, descending=args.descending,
                               leaves=args.leaves, trees=args.trees, leaf_depth=args.leaf_depth,
                               data_width=args.data_width, burst_bytes=args.burst_bytes,
                               outstanding=args.outstanding, ports=args.ports, slots=args.slots,
                               batch_bytes=args.batch_bytes)
        text = emit_verilog(component, name)
    except (TypeError, ValueError) as error:
        # The half-built component of a rejected parameter is garbage, not a design mistake.
        warnings.filterwarnings("ignore", category=UnusedElaboratable)
        raise UsageError(str(error)) from None
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    except OSError as error:
        raise UsageError(f"cannot write {args.out}: {error.strerror}") from None
    print(f"wrote {args.out}: module {name}, {args.kind}, "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)


def _bench(args):
    from . import golden as goldens

    if args.update and not args.golden:
        raise UsageError("--update needs --golden")
    golden = {}
    if args.golden and (args.golden.exists() or not args.update):
        try:
            golden = goldens.load(args.golden)
        except (ValueError, OSError) as error:
            raise UsageError(f"cannot read golden results {args.golden}: {error}") from None
    if args.block == "mms":
        results = _bench_mms(args)
    else:
        if args.rate:
            raise UsageError("--rate applies to 'bench mms' only")
        results = _bench_tree() if args.block == "tree" else _bench_axi()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({args.block: results}, indent=2) + "\n")
    if not args.golden:
        return 0
    figures = goldens.bench_figures(args.block, results)
    if args.update:
        # Every row measured again: the block is replaced whole; some rates: those rows.
        replace = ([goldens.bench_name(args.block, row) for row in results] if args.rate
                   else [args.block])
        goldens.save(args.golden, goldens.update(golden, figures, replace),
                     goldens.bench_about(args.block))
        print(f"updated {args.golden} ({len(figures)} figures)")
        return 0
    failures, notes = goldens.check(golden, figures, refresh=goldens.BENCH_REFRESH)
    for line in notes + failures:
        print(line)
    if failures:
        return 1
    print(f"matches the golden results in {args.golden}")
    return 0


def _bench_mms(args):
    from .records import MAX_MERGE_RATE, check_power_of_two
    from .sim.amaranth.bench_mms import measure_mms

    rates = args.rate or [1, 2, 4, 8, 16]
    try:
        for rate in rates:
            check_power_of_two("rate", rate, MAX_MERGE_RATE)
    except ValueError as error:
        raise UsageError(str(error)) from None
    results = []
    for rate in rates:
        m = measure_mms(rate)
        results.append(m.as_dict())
        print(f"mms E={rate:<2}  {m.records_per_cycle:6.3f} records/cycle "
              f"({m.records_per_cycle / rate:.3f} of E) over {m.long_runs} runs of "
              f"{m.long_run_bundles}+{m.long_run_bundles} bundles, {m.bubbles} bubbles;  "
              f"1+1-bundle runs {m.short_records_per_cycle:6.3f} ({m.short_bubbles} bubbles);  "
              f"latency {m.latency} cycles;  {m.comparators} comparators  [{m.seconds:.1f} s]",
              flush=True)
    return results


def _bench_axi():
    from .sim.amaranth.bench_axi import BENCH_CASES

    results = []
    for measure, params in BENCH_CASES:
        m = measure(**params)
        results.append(m.as_dict())
        print(f"{m.engine:<6} {m.case:<42} {m.bytes_per_cycle:7.2f} bytes/cycle "
              f"({m.efficiency:.3f} of the port width);  {m.cycles} cycles  [{m.seconds:.1f} s]",
              flush=True)
    return results


def _bench_tree():
    from .sim.amaranth.bench_tree import BENCH_CASES

    results = []
    for measure, params, workload in BENCH_CASES:
        m = measure(*params, workload)
        results.append(m.as_dict())
        print(f"{m.shape:<20} {m.workload:<8} {m.records_per_cycle:6.2f} records/cycle of "
              f"{m.rate:<2} ({m.efficiency:.3f});  {m.records} records;  latency {m.latency} "
              f"cycles  [{m.seconds:.1f} s]", flush=True)
    return results


def _model(args):
    from .perf.model import estimate
    from .perf.sweep import format_size, parse_size, plot_sweep, sweep, sweep_table

    config = _config(args)
    if args.plot and not args.sweep:
        raise UsageError("--plot needs --sweep")
    if args.sweep:
        rows = sweep(config, memory=args.memory)
        for line in sweep_table(config, rows, args.memory):
            print(line)
        if args.plot:
            print(f"wrote {plot_sweep(config, rows, args.plot, args.memory)}")
        figures = rows
    else:
        try:
            size = parse_size(args.bytes)
        except ValueError as error:
            raise UsageError(f"--bytes: {error}") from None
        if size % config.record_bytes:
            raise UsageError(f"--bytes must be a multiple of the record size "
                             f"({config.record_bytes}), not {size}")
        try:
            e = estimate(config, size // config.record_bytes, args.memory)
        except ValueError as error:
            raise UsageError(str(error)) from None
        for line in _estimate_lines(e, format_size(size)):
            print(line)
        figures = {"records": e.records, "passes": e.passes,
                   "phase1_cycles": e.phase1.cycles, "phase2_cycles": e.phase2.cycles,
                   "phase1_gbps": e.phase1.gbps, "phase2_gbps": e.phase2.gbps,
                   "overall_gbps": e.total.gbps, "seconds": e.total.seconds,
                   "bound": e.bound()}
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1) + "\n")


def _estimate_lines(e, size):
    c = e.config
    mem = "ideal" if e.memory == "ideal" else f"{e.memory_rate:.2f} records/cycle per channel"
    lines = [f"{size} ({e.records} records) on {c.name} at {c.clock_hz / 1e6:g} MHz, memory "
             f"'{e.memory}' ({mem}): {e.passes} phase-1 passes, then phase 2",
             f"  tree {e.slowest_tree} (the slowest):",
             f"  {'pass':>6} {'records':>11} {'active':>6} {'rec/cycle':>9} {'bound':>7} "
             f"{'lag':>6} {'tail':>5} {'cycles':>11}"]
    rows = [(str(i + 1), p) for i, p in enumerate(e.tree_passes[e.slowest_tree])]
    rows.append(("phase2", e.phase2_pass))
    for name, p in rows:
        lines.append(f"  {name:>6} {p.records:>11} {p.active:>6} {p.rate:>9.2f} {p.bound:>7} "
                     f"{p.lag:>6} {p.tail:>5} {p.cycles:>11}")
    for name, phase in (("phase 1", e.phase1), ("phase 2", e.phase2), ("overall", e.total)):
        lines.append(f"{name}: {phase.cycles} cycles, {phase.seconds * 1e3:.3f} ms, "
                     f"{phase.gbps:.2f} GB/s")
    lines.append(f"bound: {e.bound()} (random keys; presorted input is slower)")
    return lines


def _qor(args):
    from . import qor
    from .golden import QOR_ABOUT
    from .kernel.config import config_from
    from .kernel.simulate import SimulationError
    from .qor.synth import SynthesisError

    if args.update and not args.golden:
        raise UsageError("--update needs --golden")
    if args.set and args.golden:
        raise UsageError("--golden checks the presets' figures; drop --set")
    if args.store_figures and (args.set or args.golden):
        raise UsageError("--store-figures stores a preset's own figures; drop --set and "
                         "--golden")
    config = _config(args)
    golden = {}
    if args.golden and (args.golden.exists() or not args.update):
        try:
            golden = qor.load(args.golden)
        except (ValueError, KeyError, OSError) as error:
            raise UsageError(f"cannot read golden figures {args.golden}: {error}") from None
    parts = args.part or (qor.PARTS if args.golden else ["resources"])
    configs = ([config_from(name) for name in qor.RESOURCE_CONFIGS] if args.golden
               else [config])

    def progress(line):
        print(line, file=sys.stderr, flush=True)

    try:
        figures, lines, failures = qor.run_qor(parts, configs, progress,
                                               store_figures=args.store_figures)
    except (SynthesisError, SimulationError, RuntimeError) as error:
        print(f"{PROG}: qor failed: {error}", file=sys.stderr)
        return 1
    for line in lines:
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=1, sort_keys=True) + "\n")
    if not args.golden:
        return 1 if failures else 0
    if args.update:     # read again: another part may have been updated meanwhile
        golden = qor.load(args.golden) if args.golden.exists() else {}
        qor.save(args.golden, qor.update(golden, figures), QOR_ABOUT)
        print(f"updated {args.golden} ({len(figures)} figures)")
        for line in failures:
            print(line)
        return 1 if failures else 0
    regressions, notes = qor.check(golden, figures)
    for line in notes + regressions + failures:
        print(line)
    if regressions or failures:
        return 1
    print(f"every figure is within its band of {args.golden} ({len(figures)} figures)")
    return 0


def _bitstream(args):
    import subprocess

    from .onchip.boards import BOARDS, NAME, build_bitstream, check_board

    if args.board == "list":
        for board in BOARDS.values():
            print(f"{board.name:<12} {board.description}")
        return 0
    try:
        board = check_board(args.board)
    except ValueError as error:
        raise UsageError(str(error)) from None
    out = args.out or Path("build/bitstream") / board.name
    print(f"building the on-chip demo for {board.name} in {out} (Yosys, nextpnr-ecp5, ecppack: "
          f"about 30 minutes on 2 cores)", file=sys.stderr, flush=True)
    try:
        result = build_bitstream(board, out)
    except subprocess.CalledProcessError:
        print(f"{PROG}: bitstream build failed: see {out / (NAME + '.rpt')} (Yosys) and "
              f"{out / (NAME + '.tim')} (nextpnr)", file=sys.stderr)
        return 1
    print(f"bitstream: {result.bitstream} ({result.seconds:.0f} s)")
    for clock, (achieved, constraint) in result.fmax.items():
        print(f"clock {clock}: {achieved:.1f} MHz achieved, {constraint:.1f} MHz required")
    for cell, (used, available) in result.utilisation.items():
        if used:
            print(f"{cell:>14}: {used:>6} / {available:<6} ({used / available:.0%})")
    print(f"load it: {board.program.format(bitstream=result.bitstream)}")
    return 0


def main(argv=None):
    """Run the command line; return (as the exit status) 0 on success."""
    try:
        args = _parser().parse_args(argv)
        handler = {"configs": _configs, "unit": _unit, "bench": _bench, "generate": _generate,
                   "sort": _sort, "model": _model, "qor": _qor,
                   "bitstream": _bitstream}[args.command]
        status = handler(args) or 0
    except UsageError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        status = 2
    except KeyboardInterrupt:
        status = 130
    sys.exit(status)
