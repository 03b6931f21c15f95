"""Quality of results: resource estimates (Yosys), RTL cycle counts of benchmark sorts with the
performance model checked against them, and generator time and memory, kept as golden figures
with tolerances (``make qor``, ``make qor-update``)."""

from .golden import check, load, save, update
from .resources import estimate_resources, resource_table

__all__ = ["PARTS", "RESOURCE_CONFIGS", "MODEL_TOLERANCE", "run_qor", "model_errors",
           "resource_figures", "sort_figures", "check", "load", "save", "update",
           "estimate_resources", "resource_table"]

PARTS = ("resources", "sorts", "generator")
RESOURCE_CONFIGS = ("tiny", "u280")
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
    return figures


def sort_figures(config, rows):
    from ..kernel.plan import split_records, tree_plan

    figures = {}
    for row in rows:
        n = row["records"]
        passes = max(len(tree_plan(k, config.leaves, config.runs_per_tree).passes)
                     for k in split_records(n, config.trees))
        key = f"{config.name}.{n}"
        figures[f"cycles.{key}.phase1"] = row["phase1_cycles"]
        figures[f"cycles.{key}.phase2"] = row["phase2_cycles"]
        if row["phase1_cycles"]:
            figures[f"records_per_cycle.{key}.phase1"] = round(
                n * passes / row["phase1_cycles"], 3)
        figures[f"records_per_cycle.{key}.phase2"] = round(n / row["phase2_cycles"], 3)
    return figures


def model_errors(config, rows):
    """Per benchmark sort and phase: ``(records, phase, rtl, model, relative error)``, the
    model with ideal memory (what the simulations' AXI RAM gives)."""
    from ..perf.model import estimate

    out = []
    for row in rows:
        e = estimate(config, row["records"], "ideal")
        for phase, model in (("phase1", e.phase1.cycles), ("phase2", e.phase2.cycles)):
            rtl = row[f"{phase}_cycles"]
            out.append((row["records"], phase, rtl, model, (model - rtl) / rtl if rtl else 0.0))
    return out


def run_qor(parts, resource_configs, progress=print):
    """Measure ``parts`` (resources of the configurations ``resource_configs``); return
    ``(figures, report lines, model failures)``."""
    from .measure import BENCHMARK_SORTS, measure_generator, measure_sorts

    figures, lines, failures = {}, [], []
    if "resources" in parts:
        for config in resource_configs:
            progress(f"synthesising the blocks of {config.name} (cached ones are instant)")
            estimate = estimate_resources(config, progress)
            figures.update(resource_figures(estimate))
            lines += resource_table(estimate) + [""]
    if "sorts" in parts:
        for name in BENCHMARK_SORTS:
            config, rows = measure_sorts(name, progress)
            figures.update(sort_figures(config, rows))
            lines.append(f"{name} ({config.summary()}): RTL cycles vs the performance model "
                         f"(ideal memory)")
            lines.append(f"{'records':>8} {'phase':>6} {'RTL':>8} {'model':>8} {'error':>7}")
            for records, phase, rtl, model, error in model_errors(config, rows):
                lines.append(f"{records:>8} {phase:>6} {rtl:>8} {model:>8} {error:>+7.1%}")
                if abs(error) > MODEL_TOLERANCE:
                    failures.append(f"MODEL {name} {records} records {phase}: model {model} vs "
                                    f"RTL {rtl} cycles ({error:+.1%}, allowed "
                                    f"{MODEL_TOLERANCE:.0%})")
            lines.append("")
    if "generator" in parts:
        progress("generating the u280 kernel (about 10 minutes)")
        generated = measure_generator("u280")
        for key, value in generated.items():
            figures[f"generator.{key}.u280"] = value
        lines.append(f"u280 generation: {generated['seconds']:.0f} s, peak "
                     f"{generated['peak_mb']} MB, {generated['verilog_mb']} MB of Verilog")
    return figures, lines, failures
