"""Layers that point one way: every module of ``topsort_hdl/`` has a layer, and
imports only from its own layer and those below.

Each layer is a folder of ``topsort_hdl/`` (the map below is data, here and nowhere else: only
this test reads it). Lowest first:

- ``core``: plain Python, no Amaranth (directly or through another module): parameter checks,
  configuration and presets, the pass plan, the host contract (register map, kernel arguments,
  buffer layout, report), board data, the stored block figures; and the golden models, which
  are plain Python and describe what the hardware must do without it, so that the kernel
  model, the host and the configuration can use them.
- ``hardware``: the Amaranth blocks (records, ``block.py``, merge units, trees, AXI engines,
  control, the kernel's gateware).
- ``targets``: what turns the hardware into artefacts: Verilog emission, the Vitis project,
  the on-chip demo and its board builds.
- ``host``: the host library and the card-side host; it imports the core only (an extra rule,
  below), so a host needs no HDL toolchain.
- ``simulation``: the harnesses that run the hardware in a simulator (``sim/``, with
  ``kernel_sort.py`` behind ``topsort-hdl sort``) and the tree model, whose padded layout is
  the Amaranth record layout the testbenches pack bundles with. The cocotb kernel testbench
  drives the simulated kernel through the host library, hence host below simulation.
- ``formal``: the proofs of the blocks' properties (``formal/``): each block's environment,
  the list of proofs with their broken variants, and the SymbiYosys runner. Beside the
  simulation layer, not above it: a proof needs no simulator.
- ``analysis``: the performance model, QoR and the golden figures' format and policy. QoR
  measures benchmark sorts in simulation and synthesises the targets' output, hence analysis
  above simulation and targets. The performance model is plain Python but belongs here:
  nothing below needs it, and it is what QoR compares the measured sorts with.
- ``cli``: the command line, which may use everything.

Rules, each reported naming the module, the line and the import at fault:

1. every module has exactly one layer;
2. a module imports only from its own layer and the layers below (``host``: the core only);
3. a core or host module never reaches Amaranth, directly or through the modules it imports;
4. nothing imports a private Amaranth module or name (a part starting with ``_``).

One exception, listed in :data:`ENTRY_POINTS`: the package root's ``topsort_hdl.sort`` runs the
simulation layer's ``sort_array`` when it is called. That import must sit inside a function
(checked), and it is not an edge of the graph: ``import topsort_hdl`` runs none of it, so the
core and the host stay free of Amaranth (``tests/sim/test_arrays.py`` imports the package in a
fresh interpreter and checks).

Imports inside functions count, and so do the packages an import runs first: importing
``topsort_hdl.core.boards.load`` runs ``topsort_hdl/core/boards/__init__.py``. Files in a folder
without ``__init__.py`` (the Vitis templates) are scripts copied out of the package: their own
imports count, the folders around them do not.
"""

import ast
import re
import subprocess
import sys
from collections import deque
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("topsort_hdl",)

# Lowest first. Patterns are relative paths; ``*`` stays within one folder, ``**`` does not. A
# layer is a folder of the package; the one exception is the card-side host, a script the Vitis
# project copies out of the package's templates.
LAYERS = {
    "core": ["topsort_hdl/__init__.py", "topsort_hdl/core/**.py"],
    "hardware": ["topsort_hdl/hardware/**.py"],
    "targets": ["topsort_hdl/targets/*.py", "topsort_hdl/targets/vitis/*.py",
                "topsort_hdl/targets/onchip/*.py"],
    "host": ["topsort_hdl/host/**.py", "topsort_hdl/targets/vitis/templates/host.py"],
    "simulation": ["topsort_hdl/sim/**.py"],
    "formal": ["topsort_hdl/formal/**.py"],
    "analysis": ["topsort_hdl/analysis/**.py"],
    "cli": ["topsort_hdl/cli/**.py", "topsort_hdl/__main__.py"],
}
RANK = {layer: rank for rank, layer in enumerate(LAYERS)}
# Imports a module makes only inside a function that is its public entry point (the package
# root's `sort`), not when it is imported: {module: {imported module}}.
ENTRY_POINTS = {"topsort_hdl": {"topsort_hdl.sim.arrays"}}
# Layers that may import only some of the layers below them.
ONLY = {"host": {"core", "host"}}
NO_AMARANTH = {"core", "host"}


def _pattern(glob):
    wild = {"**": ".*", "*": "[^/]*"}
    return re.compile("".join(wild.get(part, re.escape(part))
                              for part in re.split(r"(\*\*|\*)", glob)) + r"\Z")


PATTERNS = {layer: [_pattern(glob) for glob in globs] for layer, globs in LAYERS.items()}


@dataclass(frozen=True)
class Module:
    name: str       # dotted
    path: str       # relative to the root, for messages
    source: str
    package: bool   # an __init__.py
    script: bool    # in a folder without __init__.py: not imported as part of a package


def collect(root=ROOT):
    """Every module of :data:`PACKAGES` under ``root``: ``{dotted name: Module}``."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            parts = list(relative.with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            modules[".".join(parts)] = Module(
                ".".join(parts), relative.as_posix(), path.read_text(), is_package,
                not (path.parent / "__init__.py").exists())
    return modules


def layer_of(path):
    """The layers whose patterns match ``path`` (exactly one, when the map is right)."""
    return [layer for layer, patterns in PATTERNS.items()
            if any(pattern.match(path) for pattern in patterns)]


def _parents(name):
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports(module, known):
    """``(line, imported name)`` for every import in ``module``, functions included, relative
    imports resolved; ``from P import x`` names ``P.x`` when that is a module of ``known``."""
    found = []
    for node in ast.walk(ast.parse(module.source, module.path)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.name.split(".")
                if not module.package:
                    package.pop()
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                private = base.split(".")[0] == "amaranth" and alias.name.startswith("_")
                found.append((node.lineno, full if full in known or private else base))
    return found


def deferred_lines(module, known):
    """The lines of ``module``'s :data:`ENTRY_POINTS` imports, each inside a function (an
    entry import at module level is not deferred and stays an edge)."""
    entries = ENTRY_POINTS.get(module.name, set())
    inside = {statement.lineno
              for node in ast.walk(ast.parse(module.source, module.path))
              if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
              for statement in ast.walk(node)
              if isinstance(statement, ast.Import | ast.ImportFrom)}
    return {line for line, imported in imports(module, known)
            if imported in entries and line in inside}


def edges(modules):
    """``{module: [(line, module of ours or external name)]}``, with the packages each import
    runs first (and the module's own packages, as line 0); the deferred entry-point imports
    (:data:`ENTRY_POINTS`) left out."""
    graph = {}
    for name, module in modules.items():
        own = [] if module.script else _parents(name)
        targets = [(0, parent) for parent in own]
        deferred = deferred_lines(module, modules)
        for line, imported in imports(module, modules):
            if line in deferred:
                continue
            if imported.split(".")[0] in PACKAGES:
                targets += [(line, parent) for parent in _parents(imported)
                            if parent in modules and parent not in [*own, name]]
            targets.append((line, imported))
        graph[name] = targets
    return graph


def _amaranth_path(graph, start):
    """The shortest chain of imports from ``start`` to Amaranth, or None."""
    seen, queue = {start: None}, deque([start])
    while queue:
        name = queue.popleft()
        for line, target in graph.get(name, ()):
            root = target.split(".")[0]
            if target in seen or (root not in PACKAGES and root != "amaranth"):
                continue
            seen[target] = (name, line)
            if root == "amaranth":
                chain, step = [], target
                while seen[step] is not None:
                    parent, at = seen[step]
                    chain.append(f"{parent}:{at} -> {step}" if at else f"{parent} -> {step}")
                    step = parent
                return list(reversed(chain))
            if target in graph:
                queue.append(target)
    return None


def check(modules):
    """The violations of the layer rules, one message each (empty when all rules hold)."""
    problems = []
    layers = {}
    for name, module in modules.items():
        found = layer_of(module.path)
        if not found:
            problems.append(f"{module.path}: has no layer: give it one in LAYERS "
                            f"(tests/test_layers.py)")
        elif len(found) > 1:
            problems.append(f"{module.path}: in {len(found)} layers ({', '.join(found)}): "
                            f"give it one in LAYERS (tests/test_layers.py)")
        else:
            layers[name] = found[0]
    graph = edges(modules)
    for name, targets in graph.items():
        module, layer = modules[name], layers.get(name)
        for line, target in targets:
            if target.split(".")[0] == "amaranth" and any(
                    part.startswith("_") for part in target.split(".")[1:]):
                problems.append(f"{module.path}:{line} imports {target}, a private part of "
                                f"Amaranth: use its public API")
            if layer is None or target not in layers:
                continue
            allowed = ONLY.get(layer, {other for other in LAYERS
                                       if RANK[other] <= RANK[layer]})
            if layers[target] not in allowed:
                what = f"line {line} imports" if line else "is inside"
                problems.append(
                    f"{module.path} ({layer}) {what} {target} ({layers[target]}): a {layer} "
                    f"module may import only {', '.join(sorted(allowed, key=RANK.get))}")
        if layer in NO_AMARANTH:
            chain = _amaranth_path(graph, name)
            if chain:
                problems.append(f"{module.path} ({layer}) reaches Amaranth, which a {layer} "
                                f"module must not: {'; '.join(chain)}")
    return list(dict.fromkeys(problems))     # one message per import, not per name


def _report(problems):
    return f"{len(problems)} layer rule(s) broken:\n" + "\n".join(problems)


def test_imports_point_one_way():
    problems = check(collect())
    assert not problems, _report(problems)


def test_every_pattern_matches_a_module():
    paths = [module.path for module in collect().values()]
    stale = [glob for layer, globs in LAYERS.items() for glob in globs
             if not any(_pattern(glob).match(path) for path in paths)]
    assert not stale, f"patterns that match no module: {stale}"


def _with(modules, name, source):
    module = modules[name]
    return {**modules, name: Module(name, module.path, source, module.package, module.script)}


def test_a_backwards_import_is_reported():
    """A core module reaching for the kernel's hardware, inside a function, is caught twice:
    by the layer order and by the no-Amaranth rule."""
    modules = collect()
    source = modules["topsort_hdl.core.plan"].source + (
        "\n\ndef _backwards():\n    from ..hardware.kernel.kernel import TopSortKernel\n"
        "    return TopSortKernel\n")
    problems = check(_with(modules, "topsort_hdl.core.plan", source))
    print(_report(problems))
    line = source.count("\n") - 1
    assert (f"topsort_hdl/core/plan.py (core) line {line} imports "
            f"topsort_hdl.hardware.kernel.kernel (hardware): a core module may import only core"
            ) in problems
    assert any(p.startswith("topsort_hdl/core/plan.py (core) reaches Amaranth") and
               f"topsort_hdl.core.plan:{line} -> topsort_hdl.hardware.kernel.kernel" in p
               for p in problems)


def test_the_entry_point_is_deferred_only_inside_a_function():
    """``topsort_hdl.sort``'s import of the simulation is not an edge; the same import at the
    package's top level is (a backwards import that reaches Amaranth)."""
    modules = collect()
    assert check(modules) == []
    source = "from .sim.arrays import sort_array\n" + modules["topsort_hdl"].source
    problems = check(_with(modules, "topsort_hdl", source))
    assert ("topsort_hdl/__init__.py (core) line 1 imports topsort_hdl.sim.arrays (simulation): "
            "a core module may import only core") in problems


def test_a_host_importing_beyond_the_core_is_reported():
    modules = collect()
    source = ("from ..targets.vitis.identity import KERNEL_NAME\n"
              + modules["topsort_hdl.host"].source)
    problems = check(_with(modules, "topsort_hdl.host", source))
    assert ("topsort_hdl/host/__init__.py (host) line 1 imports topsort_hdl.targets.vitis.identity "
            "(targets): a host module may import only core, host") in problems
    # ... and the package the import runs first
    assert ("topsort_hdl/host/__init__.py (host) line 1 imports topsort_hdl.targets.vitis "
            "(targets): a host module may import only core, host") in problems


def test_private_amaranth_and_unmapped_modules_are_reported(tmp_path):
    modules = collect()
    source = "from amaranth.hdl import _ir\nimport amaranth.hdl._ast\n" + \
        modules["topsort_hdl.hardware.tree.coupler"].source
    problems = check(_with(modules, "topsort_hdl.hardware.tree.coupler", source))
    assert ("topsort_hdl/hardware/tree/coupler.py:1 imports amaranth.hdl._ir, a private part of "
            "Amaranth: use its public API") in problems
    assert ("topsort_hdl/hardware/tree/coupler.py:2 imports amaranth.hdl._ast, a private part of "
            "Amaranth: use its public API") in problems
    (tmp_path / "topsort_hdl" / "stray").mkdir(parents=True)
    for package in PACKAGES:
        (tmp_path / package).mkdir(exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "topsort_hdl" / "stray" / "__init__.py").write_text("")
    (tmp_path / "topsort_hdl" / "stray" / "thing.py").write_text("import amaranth\n")
    problems = check(collect(tmp_path))
    assert ("topsort_hdl/stray/thing.py: has no layer: give it one in LAYERS "
            "(tests/test_layers.py)") in problems


def test_core_and_host_load_without_amaranth():
    """What the import graph says, Python confirms: the core and the host library load with no
    Amaranth module in ``sys.modules`` (this also catches a third-party package that brings
    Amaranth along, which the graph does not follow)."""
    modules = collect()
    names = [name for name, module in modules.items() if not module.script and
             layer_of(module.path) in (["core"], ["host"])]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'amaranth'))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout
