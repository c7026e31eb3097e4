"""The package's import graph, read with :mod:`ast`: no private name crosses a module, no step module imports
another, no module import loop.

A module is a file under ``src/neuroneval``; its package is the first name below ``neuroneval`` (``crowd``,
``worlds``, … or the module itself for top-level files). Every import counts, also those inside functions:
a lazy import hides a loop from Python but not from a reader.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "neuroneval"
#: Package-level loops not yet broken (none: the last, ``explain`` ↔ ``cosy``/``crowd``, was broken by moving the
#: Table-3 scorers into ``method_eval``, above all three). No package may join a loop.
PACKAGE_LOOPS_ALLOWED: tuple[set[str], ...] = ()


def _module_names() -> dict[str, Path]:
    names = {}
    for path in sorted((SOURCE / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SOURCE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


MODULES = _module_names()


def _imports(module: str) -> Iterator[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) of every ``neuroneval`` import of ``module``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                yield source, alias.name, node.lineno


def _top_package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_the_scan_sees_the_package() -> None:
    assert {"neuroneval.crowd", "neuroneval.cosy.generators", "neuroneval.worlds.vision"} <= set(MODULES)


def test_no_module_imports_a_private_name_from_another_module() -> None:
    """Issue 35: a name that another module needs is public where it lives (a private name is that module's own)."""
    found = []
    for module in MODULES:
        for source, name, line in _imports(module):
            if not source.startswith(PACKAGE) or source == module:
                continue
            private = [part for part in source.split(".") if _is_private(part)]
            if name is not None and _is_private(name):
                private.append(name)
            if private:
                found.append(f"{MODULES[module].relative_to(SOURCE)}:{line} imports {private} from {source}")
    assert not found, "private names imported across modules:\n" + "\n".join(found)


def _is_step_module(module: str) -> bool:
    """A module of ``neuroneval.pipeline`` whose functions feed workflow rules (``*_steps``)."""
    return module.startswith(f"{PACKAGE}.pipeline.") and module.endswith("_steps")


def test_the_step_modules_are_found() -> None:
    steps = {module for module in MODULES if _is_step_module(module)}
    assert {"neuroneval.pipeline.explain_steps", "neuroneval.pipeline.cosy_steps"} <= steps
    assert not _is_step_module("neuroneval.pipeline.runner")


def test_no_step_module_imports_another_step_module() -> None:
    """Issue 35: glue reads, calls the library, writes; what two steps share lives in the library."""
    found = [f"{MODULES[module].relative_to(SOURCE)}:{line} imports {source}{'.' + name if name else ''}"
             for module in filter(_is_step_module, MODULES) for source, name, line in _imports(module)
             if source != module and (_is_step_module(source) or _is_step_module(f"{source}.{name}"))]
    assert not found, "step modules importing step modules:\n" + "\n".join(found)


def _import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {module: set() for module in MODULES}
    for module in MODULES:
        for source, name, _ in _imports(module):
            target = f"{source}.{name}" if name is not None and f"{source}.{name}" in MODULES else source
            if target in MODULES and target != module:
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            successor = next(successors, None)
            if successor is not None:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                elif successor in on_stack:
                    low[node] = min(low[node], index[successor])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


@pytest.mark.parametrize(
    ("graph", "expected"),
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"a"}, "c": {"a"}}, [["a", "b"]]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"d"}}, [["a", "b", "c"]]),
    ],
)
def test_the_cycle_finder_finds_loops(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected


def test_no_import_loop_between_modules_of_the_package() -> None:
    loops = _cycles(_import_graph())
    assert not loops, "modules that import each other (directly or in a loop):\n" + "\n".join(map(str, loops))


def _package(module: str) -> str:
    """The package a module belongs to: ``neuroneval.<package>.…`` → ``<package>`` (a top-level file is its own)."""
    return _top_package(module) or module


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {_package(module): set() for module in graph}
    for module, targets in graph.items():
        packages[_package(module)] |= {_package(target) for target in targets} - {_package(module)}
    return packages


def test_the_package_graph_merges_the_modules_of_a_package() -> None:
    graph = {"neuroneval.a.x": {"neuroneval.b.y"}, "neuroneval.b.y": {"neuroneval.a.z"}, "neuroneval.a.z": set(),
             "neuroneval.io": {"neuroneval.a.x"}}
    packages = _package_graph(graph)
    assert packages == {"a": {"b"}, "b": {"a"}, "io": {"a"}}
    assert _cycles(packages) == [["a", "b"]]  # a module-level chain x → y → z is a package-level loop a ↔ b


def test_no_import_loop_between_packages() -> None:
    """Issue 35: ``explain`` ↔ ``fidelity`` (paper values, the oracle) and ``worlds`` ↔ ``figures`` (the preview)
    were loops; the papers' numbers now live in the low-level ``neuroneval.published``. ``explain`` ↔
    ``cosy``/``crowd`` was one (the Table-3 scorers in ``explain`` ran CoSy and the crowd, which parse
    explanations); those scorers now live in ``method_eval``, above all three."""
    loops = [set(loop) for loop in _cycles(_package_graph(_import_graph()))]
    unexpected = [sorted(loop) for loop in loops if loop not in PACKAGE_LOOPS_ALLOWED]
    assert not unexpected, "packages that import each other (directly or in a loop):\n" + "\n".join(
        map(str, unexpected)
    )


def test_the_table3_scorers_sit_above_explain_cosy_and_crowd() -> None:
    """docs/architecture.md, Layers: ``cosy`` and ``crowd`` may read the explanation grammar and its simulation
    (``explain``), never the reverse; ``method_eval`` (the explanation methods scored by CoSy and the crowd) reads
    all three, and none of them reads it."""
    packages = _package_graph(_import_graph())
    assert not packages["explain"] & {"cosy", "crowd", "method_eval"}, sorted(packages["explain"])
    assert {"explain", "cosy", "crowd"} <= packages["method_eval"]
    assert not [name for name in ("explain", "cosy", "crowd") if "method_eval" in packages[name]]


def test_the_papers_numbers_import_nothing_of_the_package() -> None:
    """``published`` reads only its appendix tables' module, which reads nothing of the package."""
    graph = _import_graph()
    assert set(graph["neuroneval.published"]) <= {"neuroneval.published_appendix"}
    assert not graph["neuroneval.published_appendix"]
