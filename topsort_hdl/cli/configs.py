"""``topsort-hdl configs``: list the named configurations, each with the performance model's
figure for the largest sort it holds."""

__all__ = ["add_parser", "run"]


def add_parser(commands):
    commands.add_parser("configs", help="list the named configurations")


def run(args):
    from ..analysis.perf.model import estimate
    from ..core.config import PRESETS, presets_dir, saved_presets
    from .options import UsageError

    try:
        saved = saved_presets()
    except ValueError as error:
        raise UsageError(str(error)) from None
    everything = {**PRESETS, **{k: v for k, v in saved.items() if k not in PRESETS}}
    width = max(map(len, everything))
    for name, config in everything.items():
        full = estimate(config, config.capacity)
        where = f" (saved in {presets_dir()})" if name not in PRESETS else ""
        print(f"{name:<{width}} {config.summary()}; modelled {full.total.gbps:.2f} GB/s "
              f"at capacity{where}")
