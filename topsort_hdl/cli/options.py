"""What the subcommands share: the program's name, the user-mistake exception and the parser
that raises it, the ``--config``/``--set`` and record-width options, where jobs run, and the
checks of every output path (the rule is :mod:`topsort_hdl.core.output_paths`'s)."""

import argparse

from ..core.output_paths import check_output_file, check_output_folder

__all__ = ["PROG", "UsageError", "Parser", "add_config_options", "add_record_options",
           "config_of", "require", "add_job_options", "check_job_options", "output_file",
           "output_folder", "plot_file"]

PROG = "topsort-hdl"


class UsageError(Exception):
    """A mistake of the user's: reported in one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def add_record_options(parser):
    parser.add_argument("--key-bits", type=int, default=32, help="key width (default 32)")
    parser.add_argument("--value-bits", type=int, default=32, help="value width (default 32)")


def add_config_options(parser, default="u280", about="named configuration (default u280)"):
    parser.add_argument("--config", default=default, help=about)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a configuration parameter (repeatable)")


def config_of(args):
    """The configuration ``--config`` names, with ``--set``'s overrides."""
    from ..core.config import config_from

    try:
        return config_from(args.config, args.set)
    except ValueError as error:
        raise UsageError(str(error)) from None


def require(module, what, extra):
    """A user mistake unless Python module ``module`` can be imported: ``what`` (an option or a
    command) needs it, and the package's extra ``extra`` installs it."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise UsageError(f"{what} needs the Python package {module}, which is not installed: "
                         f"pip install 'topsort-hdl[{extra}]'")


def add_job_options(parser, jobs):
    """``--scheduler`` and ``--workers``: where ``jobs`` (what the command runs as independent
    jobs, for the help) run."""
    parser.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                        help=f"run {jobs} on this Dask scheduler's workers (default: local "
                             "processes)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="local processes (default one per core)")


def check_job_options(args):
    """A user mistake unless ``--scheduler`` can be used here and ``--workers`` is a count."""
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers must be 1 or more, not {args.workers}")
    if args.scheduler:
        if args.workers is not None:
            raise UsageError("--workers counts local processes; with --scheduler the cluster's "
                             "workers run the jobs: drop one of them")
        if not args.scheduler.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
            raise UsageError(f"--scheduler takes a Dask scheduler's address such as "
                             f"tcp://HOST:8786, not {args.scheduler!r}")
        require("distributed", "--scheduler", "explore")


def _usage(check, option, path):
    """``path``, unless ``check`` (of :mod:`~topsort_hdl.core.output_paths`) refuses it: then
    a user mistake. ``None`` (the option not given) passes."""
    if path is not None:
        try:
            check(option, path)
        except ValueError as error:
            raise UsageError(str(error)) from None
    return path


def output_file(option, path):
    """A user mistake unless a file can be written at ``path`` (``None``: not asked for), before
    any work: not a folder, not under a file; missing folders are made when it is written."""
    return _usage(check_output_file, option, path)


def output_folder(option, path):
    """A user mistake unless ``path`` (``None``: not asked for) is, or can be made, a folder
    to write in: not a file, not under a file."""
    return _usage(check_output_folder, option, path)


def plot_file(option, path):
    """:func:`output_file` for a plot, whose suffix must name a format matplotlib writes (and
    matplotlib installed)."""
    if path is None:
        return None
    require("matplotlib", option, "plot")
    output_file(option, path)
    from matplotlib.backend_bases import FigureCanvasBase

    formats = sorted(FigureCanvasBase.get_supported_filetypes())
    if path.suffix[1:].lower() not in formats:
        raise UsageError(f"{option} {path}: name a file ending in one of "
                         f"{', '.join('.' + f for f in formats)} (the image format)")
    return path
