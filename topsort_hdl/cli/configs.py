"""``topsort-hdl configs``: list the named configurations."""

__all__ = ["add_parser", "run"]


def add_parser(commands):
    commands.add_parser("configs", help="list the named configurations")


def run(args):
    from ..core.config import PRESETS

    for name, config in PRESETS.items():
        print(f"{name:<6} {config.summary()}")
