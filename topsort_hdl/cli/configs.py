"""``topsort-hdl configs``: list the named configurations, each with the performance model's
figure for the largest sort it holds."""

__all__ = ["add_parser", "run"]


def add_parser(commands):
    commands.add_parser("configs", help="list the named configurations")


def run(args):
    from ..analysis.perf.model import estimate
    from ..core.config import PRESETS

    width = max(map(len, PRESETS))
    for name, config in PRESETS.items():
        full = estimate(config, config.capacity)
        print(f"{name:<{width}} {config.summary()}; modelled {full.total.gbps:.2f} GB/s "
              f"at capacity")
