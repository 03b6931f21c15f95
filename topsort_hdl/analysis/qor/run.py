"""A QoR run: measure the parts asked for (resources, benchmark sorts, generator, place and
route), turn each into golden figures (:func:`run_qor`), and the report lines that go with
them; the performance model checked against the measured sorts (:func:`model_errors`)."""

from .figures import BlockFigures
from .resources import estimate_resources, resource_table
from .synth import flow_figures

__all__ = ["PARTS", "RESOURCE_CONFIGS", "GENERATOR_CONFIGS", "MODEL_TOLERANCE", "run_qor",
           "run_pnr", "model_errors", "resource_figures", "sort_figures", "pnr_figures",
           "pnr_table"]

PARTS = ("resources", "sorts", "generator", "pnr")
RESOURCE_CONFIGS = ("tiny", "u280")
GENERATOR_CONFIGS = ("tiny", "u280")    # generation timed, memory and Verilog measured
MODEL_TOLERANCE = 0.05      # the performance model must be this close to the RTL


def resource_figures(estimate):
    name = estimate.config.name
    figures = {}
    items = [(f"{name}.{block}", usage) for block, usage in estimate.blocks.items()]
    items += [(f"{name}.{group.replace(' ', '_')}", usage)
              for group, usage in estimate.groups.items()]
    for key, usage in items:
        figures[f"resources.{key}.luts"] = usage.luts
        figures[f"resources.{key}.ff"] = usage.ff
        figures[f"resources.{key}.bram"] = usage.bram
        figures[f"resources.{key}.uram"] = usage.uram
    for block, levels in estimate.levels.items():
        figures[f"levels.{name}.{block}.lut"] = levels.lut
        figures[f"levels.{name}.{block}.cells"] = levels.cells
    for block, flow in estimate.flows.items():
        figures.update(flow_figures(f"{name}.{block}", flow))
    return figures


def sort_figures(config, rows, by_order=False):
    """Figures of benchmark sorts: ``cycles.<config>.<records>.<phase>``, or with
    ``by_order`` ``cycles.<config>.<records>_<order>.<phase>``, and records per cycle."""
    from ...core.plan import tree_plans

    figures = {}
    for row in rows:
        n = row["records"]
        passes = max(len(plan.passes) for plan in tree_plans(config, n))
        key = f"{config.name}.{n}" + (f"_{row['order']}" if by_order else "")
        figures[f"cycles.{key}.phase1"] = row["phase1_cycles"]
        figures[f"cycles.{key}.phase2"] = row["phase2_cycles"]
        if row["phase1_cycles"]:
            figures[f"records_per_cycle.{key}.phase1"] = round(
                n * passes / row["phase1_cycles"], 3)
        figures[f"records_per_cycle.{key}.phase2"] = round(n / row["phase2_cycles"], 3)
    return figures


def pnr_figures(results):
    """Figures of ``{name: PnrResult}``: Fmax, then LUT4s, flip-flops, EBRs and DSPs."""
    figures = {}
    for name, r in results.items():
        figures[f"fmax_mhz.{name}"] = r.fmax_mhz
        for kind in ("luts", "ff", "ebr", "dsp"):
            figures[f"ecp5.{name}.{kind}"] = getattr(r, kind)
    return figures


def pnr_table(results, descriptions):
    from .pnr import PNR_BOARD

    lines = [f"After place and route on the {PNR_BOARD} (LFE5U-85F: 83,640 LUT4, 83,640 FF, "
             f"208 EBR, 156 DSP), nextpnr-ecp5; blocks out of context with registered ports",
             f"{'block':<44} {'LUT4':>7} {'FF':>7} {'EBR':>4} {'DSP':>4} {'Fmax MHz':>9}  "
             f"critical path (from -> to)"]
    for name, r in results.items():
        seeds = (" (median of " + " / ".join(f"{f:.1f}" for f in r.fmax_by_seed) + " MHz)"
                 if r.fmax_by_seed else "")
        lines.append(f"{descriptions[name]:<44} {r.luts:>7,} {r.ff:>7,} {r.ebr:>4} {r.dsp:>4} "
                     f"{r.fmax_mhz:>9.1f}  {r.critical_path}{seeds}")
    return lines


def run_pnr(progress=print, units=True, scheduler=None, workers=None):
    """Place and route the :func:`~.pnr.pnr_blocks` of the demo configuration (with
    ``units``, the FLiMS units beside them) and the demo's board build, every placement seed a
    job of its own (``scheduler``/``workers``: where, as :func:`.run_jobs`); return ``{name:
    PnrResult}`` and descriptions."""
    from ...core.config import PRESETS
    from .pnr import (
        BLOCK_SEEDS,
        DEMO_SEEDS,
        PNR_BOARD,
        block_builds,
        demo_builds,
        median_build,
        pnr_blocks,
        run_builds,
    )
    from .units import flims_pnr_blocks

    blocks = pnr_blocks(PRESETS["demo"]) + (flims_pnr_blocks(PRESETS["demo"]) if units else [])
    descriptions = {block.name: block.description for block in blocks}
    descriptions["demo"] = f"on-chip demo sorter on {PNR_BOARD} (in context)"
    # The demo's builds first: the longest jobs start first.
    builds = {"demo": demo_builds(PNR_BOARD)}
    builds.update((block.name, block_builds(block.build(), block.name)) for block in blocks)
    progress(f"place and route: {len(blocks)} blocks out of context, {len(BLOCK_SEEDS)} "
             f"placement seeds each, and the demo on the {PNR_BOARD}, {len(DEMO_SEEDS)} seeds "
             f"(about 25 minutes a build); cached builds are instant")
    done = iter(run_builds([build for group in builds.values() for build in group],
                           scheduler=scheduler, workers=workers, progress=progress))
    results = {name: median_build([next(done) for _ in group])
               for name, group in builds.items()}
    return {name: results[name] for name in descriptions}, descriptions


def model_errors(config, rows):
    """Per benchmark sort and phase: ``(records, phase, rtl, model, relative error)``, the
    model with ideal memory (what the simulations' AXI RAM gives) and the sort's input order
    (``order``, random when not given)."""
    from ..perf.model import estimate

    out = []
    for row in rows:
        e = estimate(config, row["records"], "ideal", row.get("order", "random"))
        for phase, model in (("phase1", e.phase1.cycles), ("phase2", e.phase2.cycles)):
            rtl = row[f"{phase}_cycles"]
            out.append((row["records"], phase, rtl, model, (model - rtl) / rtl if rtl else 0.0))
    return out


def run_qor(parts, resource_configs, progress=print, store_figures=False, units=False,
            scheduler=None, workers=None):
    """Measure ``parts`` (resources of the configurations ``resource_configs``, their block
    figures stored with the presets when ``store_figures``, and with ``units`` those of the
    merge units of every kind, :mod:`.units`); return ``(figures, report lines, model
    failures)``. The benchmark sorts and the place-and-route builds run as jobs
    (``scheduler``/``workers``: where, as :func:`.run_jobs`)."""
    from .measure import measure_generator, measure_sorts

    figures, lines, failures = {}, [], []
    if "resources" in parts:
        for config in resource_configs:
            progress(f"synthesising the blocks of {config.name} (cached ones are instant)")
            estimate = estimate_resources(config, progress, BlockFigures(
                scheduler=scheduler, workers=workers, progress=progress))
            figures.update(resource_figures(estimate))
            lines += resource_table(estimate) + [""]
            if store_figures:
                from ...core.block_figures import store_figures as store

                path = store(config, estimate.groups)
                lines += [f"stored the block figures of {config.name} in {path}", ""]
        if units:
            from .units import unit_figures

            progress("synthesising the FLiMS merge units (cached ones are instant)")
            flims, flims_lines = unit_figures(progress)
            figures.update(flims)
            lines += ["FLiMS merge units (Yosys xcup)", *flims_lines, ""]
    if "sorts" in parts:
        for config, rows, by_order in measure_sorts(progress, scheduler, workers):
            figures.update(sort_figures(config, rows, by_order))
            lines.append(f"{config.name} ({config.summary()}): RTL cycles vs the performance "
                         f"model (ideal memory)")
            lines.append(f"{'records':>20} {'phase':>6} {'RTL':>8} {'model':>8} {'error':>7}")
            for row, (records, phase, rtl, model, error) in zip(
                    (r for r in rows for _ in range(2)), model_errors(config, rows),
                    strict=True):
                label = f"{records} {row['order']}" if by_order else str(records)
                lines.append(f"{label:>20} {phase:>6} {rtl:>8} {model:>8} {error:>+7.1%}")
                if abs(error) > MODEL_TOLERANCE:
                    failures.append(f"MODEL {config.name} {label} records {phase}: model "
                                    f"{model} vs RTL {rtl} cycles ({error:+.1%}, allowed "
                                    f"{MODEL_TOLERANCE:.0%})")
            lines.append("")
    if "generator" in parts:
        for name in GENERATOR_CONFIGS:
            progress(f"generating the {name} kernel")
            generated = measure_generator(name)
            for key, value in generated.items():
                figures[f"generator.{key}.{name}"] = value
            lines.append(f"{name} generation: {generated['seconds']:.1f} s, peak "
                         f"{generated['peak_mb']} MB, {generated['verilog_mb']} MB of Verilog, "
                         f"{generated['modules']} distinct blocks")
    if "pnr" in parts:
        results, descriptions = run_pnr(progress, units, scheduler, workers)
        figures.update(pnr_figures(results))
        lines += [""] + pnr_table(results, descriptions)
    return figures, lines, failures
