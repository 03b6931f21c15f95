"""``topsort-hdl generate``: write a configuration's kernel Verilog (and its Vitis files)."""

import sys
from pathlib import Path

from .options import UsageError, add_config_options, config_of, output_folder

__all__ = ["add_parser", "run"]


def add_parser(commands):
    generate = commands.add_parser("generate", help="write a configuration's kernel Verilog")
    add_config_options(generate)
    generate.add_argument("--out", type=Path, default=None,
                          help="output directory (default build/CONFIG)")


def run(args):
    from ..targets.kernel_verilog import generate
    config = config_of(args)
    out = output_folder("--out", args.out or Path("build") / config.name)
    print(f"generating {config.name}: {config.summary()}", file=sys.stderr, flush=True)
    try:
        done = generate(config, out)
    except OSError as error:
        raise UsageError(f"cannot write {out}: {error.strerror}") from None

    print(f"wrote {done['verilog']} ({done['bytes'] / 1e6:.1f} MB: {done['modules']} distinct "
          f"blocks, {done['instances']} instances), {out / 'registers.json'} and "
          f"{out / 'layout.json'} in {done['seconds']:.1f} s", file=sys.stderr)
    if done["vitis"]:
        names = ", ".join(path.name for path in done["vitis"])
        print(f"Vitis files in {out}: {names}; see {out / 'Makefile'}", file=sys.stderr)
    else:
        print(f"no Vitis files: board {config.board} has no Vitis shell",
              file=sys.stderr)
