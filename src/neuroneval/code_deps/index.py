"""The AST index of the library and the closure of what an entry can run (:mod:`neuroneval.code_deps` explains the
rules: top level, plain functions, computed names, lazy names)."""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

PACKAGE = "neuroneval"
#: Python files that are not Snakefiles/rule files are parsed whole; anything else only for its import lines.
_PYTHON_SUFFIX = ".py"
#: The target of a computed ``importlib.import_module(...)``: any module of the library.
_ANYTHING = "*"
#: The module-level mapping name → module of the lazy names a module's ``__getattr__`` serves (PEP 562).
LAZY_NAMES = "LAZY_NAMES"
_LAZY_GETATTR = "__getattr__"


def _lazy_names(tree: ast.Module) -> dict[str, str]:
    """The ``LAZY_NAMES = {"name": "module", ...}`` dict literal of a module's top level, if it has one and a
    ``__getattr__``; else empty."""
    has_getattr = any(isinstance(statement, ast.FunctionDef) and statement.name == _LAZY_GETATTR
                      for statement in tree.body)
    for statement in tree.body if has_getattr else ():
        target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == LAZY_NAMES and isinstance(statement.value, ast.Dict):
            pairs = list(zip(statement.value.keys, statement.value.values, strict=True))
            if all(isinstance(node, ast.Constant) and isinstance(node.value, str) for pair in pairs for node in pair):
                return {key.value: value.value for key, value in pairs}  # type: ignore[union-attr]
    return {}


def _is_lazy_names_lookup(argument: ast.AST | None) -> bool:
    """``LAZY_NAMES[...]``, the argument of the ``import_module`` in a lazy ``__getattr__``."""
    return isinstance(argument, ast.Subscript) and isinstance(argument.value, ast.Name) and \
        argument.value.id == LAZY_NAMES


def _is_lazy_function(statement: ast.stmt) -> bool:
    """A plain top-level function: its body runs only when called, so it is reached only when named."""
    return (isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and not statement.decorator_list
            and not (statement.name.startswith("__") and statement.name.endswith("__")))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """Every node under ``nodes``, leaving out the bodies of ``if TYPE_CHECKING:`` (their ``else`` runs)."""
    stack = list(nodes)
    while stack:
        node = stack.pop()
        yield node
        if type(node) is ast.If and _is_type_checking(node):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))


def _is_docstring(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            and isinstance(statement.value.value, str))


class _DropDocstrings(ast.NodeTransformer):
    def _strip(self, node: Any) -> Any:
        self.generic_visit(node)
        if node.body and _is_docstring(node.body[0]):
            node.body = node.body[1:] or [ast.Pass()]
        return node

    visit_Module = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _strip


def _digest(nodes: list[ast.stmt]) -> str:
    """SHA-256 of the syntax tree of ``nodes``: positions, comments and formatting do not enter it."""
    return hashlib.sha256(ast.dump(ast.Module(body=nodes, type_ignores=[])).encode()).hexdigest()


def _is_import_module(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    return (isinstance(function, ast.Attribute) and function.attr == "import_module") or (
        isinstance(function, ast.Name) and function.id in ("import_module", "__import__"))


def _scan(nodes: Iterable[ast.AST]) -> tuple[list[ast.AST], set[tuple[str, tuple[str, ...]]], set[str]]:
    """The import statements and ``import_module`` calls in ``nodes``; each name used there with the longest
    attribute chain read from it (``a.b.c`` → ``("a", ("b", "c"))``; the bare name is listed too); and the names
    whose attributes are looked up by a computed name (``getattr(name, variable)``)."""
    imports, found, looked_up = [], set(), set()
    for node in _walk(nodes):
        kind = type(node)
        if kind is ast.Call and isinstance(node.func, ast.Name) and node.func.id == "getattr" and node.args \
                and isinstance(node.args[0], ast.Name) and not (
                    len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
            looked_up.add(node.args[0].id)
        if kind is ast.Name:
            found.add((node.id, ()))
        elif kind is ast.Attribute:
            attrs = []
            current: ast.AST = node
            while isinstance(current, ast.Attribute):
                attrs.append(current.attr)
                current = current.value
            if isinstance(current, ast.Name):
                found.add((current.id, tuple(reversed(attrs))))
        elif kind is ast.Import or kind is ast.ImportFrom or _is_import_module(node):
            imports.append(node)
    return imports, found, looked_up


def snakefile_imports(text: str) -> str:
    """The top-level ``import``/``from … import`` statements of a Snakefile or rule file, as Python source."""
    kept, depth, keeping = [], 0, False
    for line in text.splitlines():
        if depth == 0 and not keeping:
            keeping = line.startswith(("import ", "from "))
        if keeping:
            kept.append(line)
            depth += line.count("(") - line.count(")")
            keeping = depth > 0 or line.rstrip().endswith("\\")
    return "\n".join(kept) + "\n"


@dataclass(frozen=True)
class _Target:
    """What an import runs and binds: a library module, or a name inside one (``attr``)."""

    module: str
    attr: str | None = None


class _Source:
    """One parsed file: its top level, its plain functions, and (cached) the imports and names of each piece."""

    def __init__(self, name: str, path: Path, text: str, *, package: str | None, whole: bool = False) -> None:
        self.name, self.path, self.package = name, path, package
        tree = ast.parse(snakefile_imports(text) if whole else text, filename=str(path))
        # read from the text, so a mention in a comment counts too (erring on the side of rerunning)
        self.reads_doc = "__doc__" in text  # docstrings are then data, and kept in the digests
        self.dynamic = "globals()" in text or "vars()" in text  # any function may be looked up by a computed name
        if not self.reads_doc:
            tree = _DropDocstrings().visit(tree)
        self.top: list[ast.stmt] = []
        self.functions: dict[str, list[ast.stmt]] = {}
        self.lazy_names = {} if whole else _lazy_names(tree)
        for statement in tree.body:
            if (_is_lazy_function(statement) or (self.lazy_names and isinstance(statement, ast.FunctionDef)
                                                 and statement.name == _LAZY_GETATTR)) and not whole:
                self.functions.setdefault(statement.name, []).append(statement)
            else:
                self.top.append(statement)
        self._digests: dict[str, str] = {}
        self._scans: dict[str, tuple[list[ast.AST], set[tuple[str, tuple[str, ...]]], set[str]]] = {}
        self.imports: dict[str, dict[str | None, set[_Target]]] = {}

    def nodes(self, name: str) -> list[ast.stmt]:
        return self.top if name == "" else self.functions[name]

    def scan(self, name: str) -> tuple[list[ast.AST], set[tuple[str, tuple[str, ...]]], set[str]]:
        if name not in self._scans:
            self._scans[name] = _scan(self.nodes(name))
        return self._scans[name]

    def digest(self, name: str) -> str:
        if name not in self._digests:
            self._digests[name] = _digest(self.nodes(name))
        return self._digests[name]


@dataclass(frozen=True)
class Closure:
    """The library code some entry points (workflow scripts, rule files) can run."""

    entries: tuple[Path, ...]
    #: (module or entry file name, definition) → digest of its syntax tree; definition "" is the top level.
    units: Mapping[tuple[str, str], str]
    #: every file holding reached code, entries included, sorted
    files: tuple[Path, ...]

    @cached_property
    def version(self) -> str:
        """One digest of all reached code: equal exactly when no reached definition changed."""
        lines = "".join(f"{module}\t{name}\t{digest}\n" for (module, name), digest in sorted(self.units.items()))
        return "sha256:" + hashlib.sha256(lines.encode()).hexdigest()[:32]


class CodeIndex:
    """Parsed sources of the ``neuroneval`` package under ``root`` (default: the one Python imports), shared by
    every closure; entry files are parsed on first use too."""

    def __init__(self, root: Path | None = None) -> None:
        if root is None:
            import neuroneval

            root = Path(neuroneval.__file__).resolve().parents[1]
        self.root = Path(root).resolve()
        self._sources: dict[str, _Source | None] = {}
        self._entries: dict[Path, _Source] = {}
        self._paths: dict[str, Path | None] = {}
        self._edge_cache: dict[tuple[Path, str], frozenset[tuple[_Source, str]]] = {}

    def module_path(self, name: str) -> Path | None:
        """The file of library module ``name`` (``a.b`` → ``a/b.py`` or ``a/b/__init__.py``), or None."""
        if name not in self._paths:
            found = None
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                base = self.root.joinpath(*name.split("."))
                found = next((path for path in (base.with_suffix(_PYTHON_SUFFIX), base / "__init__.py")
                              if path.is_file()), None)
            self._paths[name] = found
        return self._paths[name]

    def module(self, name: str) -> _Source | None:
        if name not in self._sources:
            path = self.module_path(name)
            source = None
            if path is not None:
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                source = _Source(name, path, path.read_text(), package=package)
            self._sources[name] = source
        return self._sources[name]

    def entry(self, path: Path) -> _Source:
        path = Path(path).resolve()
        if path not in self._entries:
            self._entries[path] = _Source(path.name, path, path.read_text(), package=None,
                                          whole=path.suffix != _PYTHON_SUFFIX)
        return self._entries[path]

    def library_modules(self) -> list[str]:
        """Every module of the package, by dotted name, sorted."""
        names = []
        for path in sorted((self.root / PACKAGE).rglob("*" + _PYTHON_SUFFIX)):
            if "__pycache__" in path.parts:
                continue
            parts = path.relative_to(self.root).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
        return names

    def imports(self, source: _Source, name: str) -> dict[str, set[_Target]]:
        """Name → targets bound by the library imports in piece ``name`` of ``source`` (key None: targets run but
        not bound under a name used here, e.g. ``import a.b`` binds ``a``, runs ``a.b``)."""
        if name not in source.imports:
            bound: dict[Any, set[_Target]] = {}
            for node in source.scan(name)[0]:
                if isinstance(node, ast.Import):
                    for alias in node.names:
                        if self.module_path(alias.name) is None:
                            continue
                        bound.setdefault(None, set()).add(_Target(alias.name))
                        key = alias.asname or alias.name.split(".")[0]
                        bound.setdefault(key, set()).add(_Target(alias.name if alias.asname else key))
                elif isinstance(node, ast.ImportFrom):
                    module = _absolute(source, node.module, node.level)
                    if module is None or self.module_path(module) is None:
                        continue
                    bound.setdefault(None, set()).add(_Target(module))
                    for alias in node.names:
                        if alias.name == "*":
                            bound[None].add(_Target(module, "*"))
                        elif self.module_path(f"{module}.{alias.name}") is not None:  # a submodule: it runs
                            bound[None].add(_Target(f"{module}.{alias.name}"))
                            bound.setdefault(alias.asname or alias.name, set()).add(_Target(f"{module}.{alias.name}"))
                        else:
                            bound.setdefault(alias.asname or alias.name, set()).add(_Target(module, alias.name))
                else:  # importlib.import_module(...) or __import__(...)
                    argument = node.args[0] if node.args else None
                    literal = isinstance(argument, ast.Constant) and isinstance(argument.value, str)
                    if not literal and source.lazy_names and _is_lazy_names_lookup(argument):
                        continue  # the module serving each name is reached with the name (_attr_nodes)
                    bound.setdefault(None, set()).add(_Target(argument.value if literal else _ANYTHING))
            source.imports[name] = bound
        return source.imports[name]

    # -- the graph: a node is (source, piece), piece "" being a module's top level ---------------------------------
    def _module_nodes(self, name: str) -> list[tuple[_Source, str]]:
        """What importing ``name`` runs: the top level of each package on the way (``a``, ``a.b``, ``a.b.c``)."""
        if name == _ANYTHING:
            return [node for module in self.library_modules() for node in self._all_nodes(module)]
        parts = name.split(".")
        sources = (self.module(".".join(parts[:depth])) for depth in range(1, len(parts) + 1))
        return [(source, "") for source in sources if source is not None]

    def _all_nodes(self, name: str) -> list[tuple[_Source, str]]:
        source = self.module(name)
        functions = [(source, function) for function in source.functions] if source is not None else []
        return [*self._module_nodes(name), *functions]

    def _attr_nodes(self, module: str, attr: str, seen: frozenset = frozenset()) -> list[tuple[_Source, str]]:
        """``module.attr``: a submodule, a plain function, a re-exported name, or anything else (its top level)."""
        if attr == "*":
            return self._all_nodes(module)
        if self.module_path(f"{module}.{attr}") is not None:
            return self._module_nodes(f"{module}.{attr}")
        nodes = self._module_nodes(module)
        source = self.module(module)
        if source is None or (module, attr) in seen:
            return nodes
        if attr in source.functions:
            nodes.append((source, attr))
        if attr in source.lazy_names and attr not in source.functions:  # served by __getattr__ (PEP 562)
            nodes.append((source, _LAZY_GETATTR))
            nodes += self._attr_nodes(source.lazy_names[attr], attr, seen | {(module, attr)})
        for target in self.imports(source, "").get(attr, ()):  # re-exported: ``from .engine import score``
            nodes += self._target_nodes(target, seen | {(module, attr)})
        return nodes

    def _target_nodes(self, target: _Target, seen: frozenset = frozenset()) -> list[tuple[_Source, str]]:
        if target.attr is None:
            return self._module_nodes(target.module)
        return self._attr_nodes(target.module, target.attr, seen)

    def _edges(self, source: _Source, name: str) -> frozenset[tuple[_Source, str]]:
        """The pieces that running piece ``name`` of ``source`` can run next (cached)."""
        key = (source.path, name)
        if key not in self._edge_cache:
            edges: list[tuple[_Source, str]] = []
            if name == "" and source.dynamic:
                edges += [(source, function) for function in source.functions]
            bound: dict[Any, set[_Target]] = {}
            for piece in {"", name}:
                for bound_name, targets in self.imports(source, piece).items():
                    bound.setdefault(bound_name, set()).update(targets)
            for target in bound.get(None, ()):
                edges += self._target_nodes(target)
            for head, attrs in source.scan(name)[1]:
                if head in source.functions:
                    edges.append((source, head))
                for target in bound.get(head, ()):
                    if target.attr is not None:
                        edges += self._attr_nodes(target.module, target.attr)
                        continue
                    module = target.module
                    edges += self._module_nodes(module)
                    for attr in attrs:  # a.b.c: follow submodules, stop at the first other attribute
                        edges += self._attr_nodes(module, attr)
                        if self.module_path(f"{module}.{attr}") is None:
                            break
                        module = f"{module}.{attr}"
            for head in source.scan(name)[2]:  # getattr(module, computed name): any of its functions
                for target in bound.get(head, ()):
                    if target.attr is None:
                        edges += self._all_nodes(target.module)
            self._edge_cache[key] = frozenset(edges)
        return self._edge_cache[key]

    def closure(self, *entries: Path, steps: Iterable[str] = (), dispatchers: Iterable[Path] = ()) -> Closure:
        """What ``entries`` and ``steps`` can run. A ``.py`` entry is a script, followed like library code; any other
        file is a Snakefile or rule file, not Python: only its import statements are read, and everything they name
        counts as called (all functions of a module it imports whole, ``import a.b as x``). A step
        (``"module:function"``, a step function of :mod:`neuroneval.pipeline`) counts as a script calling it
        through :func:`neuroneval.pipeline.runner.run_step`, as the workflow's one entry script does.

        A dispatcher is a script that runs the step by a computed name (``workflow/scripts/step.py`` calling
        :func:`neuroneval.pipeline.runner.run_rule`): its top level and the library definitions it names directly
        are reached, but not followed further, since their computed import is the step itself, not the whole
        library."""
        pinned: set[tuple[_Source, str]] = set()
        for dispatcher in dispatchers:
            source = self.entry(dispatcher)
            pinned.add((source, ""))
            bound = self.imports(source, "")
            for head, _ in source.scan("")[1]:
                for target in bound.get(head, ()):
                    pinned.update(self._target_nodes(target))
        todo: list[tuple[_Source, str]] = []
        for entry in entries:
            source = self.entry(entry)
            todo.append((source, ""))
            if source.path.suffix != _PYTHON_SUFFIX:  # its code is not parsed: what it imports, it may call
                for bound_name, targets in self.imports(source, "").items():
                    for target in targets if bound_name is not None else ():
                        todo += (self._all_nodes(target.module) if target.attr is None
                                 else self._attr_nodes(target.module, target.attr))
        todo += [(self._step_entry(step), "") for step in steps]
        reached: set[tuple[_Source, str]] = set()
        while todo:
            node = todo.pop()
            if node not in reached:
                reached.add(node)
                todo.extend(self._edges(*node))
        reached |= pinned
        units = {(source.name, name): source.digest(name) for source, name in reached}
        files = sorted({source.path for source, _ in reached if source.path.is_file()})
        return Closure(tuple(Path(entry) for entry in entries), units, tuple(files))

    def _step_entry(self, step: str) -> _Source:
        """A virtual script that runs step ``"module:function"`` as ``workflow/scripts/step.py`` does."""
        module, _, function = step.partition(":")
        if not function or self.module_path(module) is None:
            raise ValueError(f"step {step!r}: expected 'neuroneval.pipeline.<module>:<function>' of an existing module")
        key = Path(f"<step {step}>")
        if key not in self._entries:
            text = (f"from neuroneval.pipeline.runner import run_step\nfrom {module} import {function}\n\n"
                    f"run_step({function}, snakemake)\n")
            self._entries[key] = _Source(f"<step {step}>", key, text, package=None)  # no file: not in Closure.files
        return self._entries[key]


def _absolute(source: _Source, module: str | None, level: int) -> str | None:
    """The absolute name of ``from <level dots><module> import ...`` in ``source``."""
    if level == 0:
        return module
    if source.package is None:
        return None
    base = source.package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)
