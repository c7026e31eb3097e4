"""The workflow side of :mod:`neuroneval.code_deps`: the steps and scripts of rule files, each rule's step version
(:class:`StepVersions`, a Snakemake param) and each DVC stage's code deps (:func:`dvc_code_deps`)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from neuroneval.code_deps.cache import StepVersionCache, default_cache_dir, tree_key
from neuroneval.code_deps.index import PACKAGE, CodeIndex

_SCRIPT = re.compile(r'^\s*script:\s*\n?\s*"([^"]+)"', re.MULTILINE)
_STEP = re.compile(r'step_version\(\s*"(\w+)"\s*\)')


def rule_scripts(rule_file: Path) -> list[Path]:
    """The ``script:`` files of a Snakemake rule file, resolved against its directory, in order."""
    rule_file = Path(rule_file)
    return [(rule_file.parent / name).resolve() for name in _SCRIPT.findall(rule_file.read_text())]


def rule_steps(rule_file: Path) -> list[str]:
    """The step functions the rules of a rule file run (``step=step_version("<name>")``), in order."""
    return _STEP.findall(Path(rule_file).read_text())


def pipeline_steps(root: Path) -> dict[str, str]:
    """Every step function of ``<root>/neuroneval/pipeline/*_steps.py`` (public top-level functions taking a
    job) → its module's dotted name; a name defined twice is an error (rules name steps by function alone)."""
    steps: dict[str, str] = {}
    for path in sorted((Path(root) / PACKAGE / "pipeline").glob("*_steps.py")):
        module = f"{PACKAGE}.pipeline.{path.stem}"
        for node in ast.parse(path.read_text(), filename=str(path)).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and [
                    argument.arg for argument in node.args.args] == ["job"]:
                if node.name in steps:
                    raise ValueError(f"step {node.name!r} is defined in both {steps[node.name]} and {module}")
                steps[node.name] = module
    return steps


class StepVersions:
    """``step_version("meta_setting")`` → ``"neuroneval.pipeline.meta_steps:meta_setting@sha256:…"``: which step
    function a rule runs and the :attr:`Closure.version` of the code it can run, memoized.

    Rules pass it as ``params: step=...`` and run ``workflow/scripts/step.py``, which calls the function the param
    names (:func:`neuroneval.pipeline.runner.run_rule`). The param is what Snakemake's params trigger compares, so
    a change to that code reruns the rule and nothing else; :meth:`check` makes sure every rule does this. The
    entry script and ``run_rule`` are in every step's code (a dispatcher of :meth:`CodeIndex.closure`): a change
    to them reruns every rule.

    ``script``: the entry script, by default ``workflow/scripts/step.py`` beside the ``src`` folder of the index.
    ``cache``: read and store the steps and versions of this library tree (the index's root) and entry script in
    :class:`~neuroneval.code_deps.cache.StepVersionCache` under ``cache_dir`` (default
    :func:`~neuroneval.code_deps.cache.default_cache_dir`), so a Snakefile parse of an unchanged tree computes no
    closure; any change to a library file or the script is another key
    (:func:`~neuroneval.code_deps.cache.tree_key`)."""

    PARAM = "step"
    SCRIPT = "step.py"

    def __init__(self, index: CodeIndex | None = None, script: Path | None = None, *, cache: bool = True,
                 cache_dir: Path | None = None) -> None:
        self.index = index or CodeIndex()
        self.script = Path(script) if script is not None else self.index.root.parent / "workflow/scripts" / self.SCRIPT
        if not self.script.is_file():
            raise FileNotFoundError(f"{self.script}: the workflow's entry script (workflow/scripts/{self.SCRIPT}) is "
                                    f"missing; step versions include its code")
        folder = (cache_dir or default_cache_dir()) if cache else None
        self._cache = StepVersionCache(folder, tree_key(self.index.root, self.script)) if folder is not None else None
        cached_steps = self._cache.steps if self._cache is not None else None
        self.steps = cached_steps if cached_steps is not None else pipeline_steps(self.index.root)
        self._versions: dict[str, str] = dict(self._cache.versions) if self._cache is not None else {}

    def locate(self, step: str) -> str:
        """``"module:function"`` of step function ``step``; ``KeyError`` naming the known steps otherwise."""
        if step not in self.steps:
            raise KeyError(f"step_version({step!r}): no such step function in neuroneval.pipeline's *_steps.py "
                           f"modules; known: {sorted(self.steps)}")
        return f"{self.steps[step]}:{step}"

    def __call__(self, step: str) -> str:
        if step not in self._versions:
            located = self.locate(step)
            version = self.index.closure(steps=[located], dispatchers=[self.script]).version
            self._versions[step] = f"{located}@{version}"
            if self._cache is not None:
                self._cache.store(self.steps, self._versions)
        return self._versions[step]

    def check(self, rules: Iterable[Any]) -> None:
        """Fail unless each rule that runs code runs ``workflow/scripts/step.py`` and passes
        ``params: step=step_version("<its step>")`` (``rules``: Snakemake's ``workflow.rules``, or anything with
        ``name``, ``script``, ``params`` and ``norun``). The profile leaves Snakemake's own ``code`` trigger off (it
        compares a script's timestamp, not its content), so this param is the only way a change to a rule's code
        reruns it."""
        problems = []
        for rule in rules:
            script = getattr(rule, "script", None)
            if not script:
                if not getattr(rule, "norun", True):
                    problems.append(f"rule {rule.name}: runs shell/run/notebook/wrapper code, whose changes no rerun "
                                    f"trigger sees; run a step function through workflow/scripts/{self.SCRIPT}")
                continue
            if Path(script).name != self.SCRIPT:
                problems.append(f"rule {rule.name}: runs {script}; rules run workflow/scripts/{self.SCRIPT} with "
                                f"`{self.PARAM}=step_version(\"<step function>\")`")
                continue
            value = rule.params.get(self.PARAM) if hasattr(rule.params, "get") else None
            step = str(value).partition(":")[2].partition("@")[0] if value else ""
            if not step or step not in self.steps or value != self(step):
                problems.append(f"rule {rule.name}: pass `{self.PARAM}=step_version(\"{step or '<step function>'}\"),`"
                                f" among its params")
        if problems:
            raise ValueError("rules must pass their step and the version of its code as a param, or changes to it go "
                             "unnoticed:\n" + "\n".join(problems))


def dvc_code_deps(repo: Path, rule_files: Iterable[str], index: CodeIndex | None = None) -> list[str]:
    """The code a DVC stage running the rules of ``rule_files`` depends on, repository-relative and sorted:
    the Snakefile, ``workflow/rules/common.smk``, the rule files, the entry script, and the library code their
    step functions and the import lines of these Snakefiles can run. A package whose every module is needed is
    one directory entry (DVC hashes directories whole)."""
    repo = Path(repo).resolve()
    index = index or CodeIndex(repo / "src")
    snakefiles = [repo / "Snakefile", repo / "workflow/rules/common.smk", *(repo / name for name in rule_files)]
    scripts = {script for rule_file in snakefiles for script in rule_scripts(rule_file)}  # workflow/scripts/step.py
    steps = pipeline_steps(index.root)
    located = [f"{steps[step]}:{step}" for rule_file in snakefiles for step in rule_steps(rule_file)]
    closure = index.closure(*snakefiles, steps=located)
    files = {path.resolve().relative_to(repo).as_posix() for path in (*snakefiles, *scripts, *closure.files)}
    return _collapse(repo, files)


def expand_code_deps(repo: Path, deps: Iterable[str]) -> set[str]:
    """``deps`` with each directory under ``src/`` replaced by its Python files (what DVC hashes of it)."""
    repo = Path(repo)
    files = set()
    for dep in deps:
        path = repo / dep
        if path.is_dir():
            files.update(child.relative_to(repo).as_posix() for child in path.rglob("*.py")
                         if "__pycache__" not in child.parts)
        else:
            files.add(dep)
    return files


def _collapse(repo: Path, files: set[str]) -> list[str]:
    """``files`` with every library package all of whose Python files are listed written as its directory."""
    package_root = repo / "src" / PACKAGE
    packages = sorted((path.parent for path in package_root.rglob("__init__.py") if path.parent != package_root),
                      key=lambda path: len(path.parts))
    kept = set(files)
    for package in packages:
        name = package.relative_to(repo).as_posix()
        inside = expand_code_deps(repo, [name])
        if inside <= files and not any(name.startswith(dep + "/") for dep in kept):
            kept = {dep for dep in kept if not dep.startswith(name + "/")} | {name}
    return sorted(kept)


def dvc_stage_code(repo: Path, stages: Mapping[str, Any]) -> dict[str, tuple[list[str], list[str]]]:
    """Per stage of dvc.yaml's ``stages``: (its code deps as listed, its code deps as they should be). Code deps
    are those under ``src/``, ``workflow/`` and the Snakefile; a stage's rule files are the ``.smk`` deps it lists."""
    repo = Path(repo)
    index = CodeIndex(repo / "src")
    result = {}
    for name, stage in stages.items():
        deps = [dep for dep in stage.get("deps", []) if _is_code(dep)]
        rule_files = [dep for dep in deps if dep.endswith(".smk") and dep != "workflow/rules/common.smk"]
        result[name] = (deps, dvc_code_deps(repo, rule_files, index))
    return result


def _is_code(dep: str) -> bool:
    return dep == "Snakefile" or dep.startswith(("src/", "workflow/"))


def main(argv: list[str] | None = None) -> None:
    """Print the code deps each stage of dvc.yaml should have (run from the repository root)."""
    import argparse

    import yaml

    parser = argparse.ArgumentParser(description="Print the code deps each stage of dvc.yaml should have.")
    parser.add_argument("dvc_yaml", nargs="?", default="dvc.yaml")
    arguments = parser.parse_args(argv)
    path = Path(arguments.dvc_yaml).resolve()
    stages = yaml.safe_load(path.read_text())["stages"]
    for name, (_, expected) in dvc_stage_code(path.parent, stages).items():
        print(f"{name}:")
        for dep in expected:
            print(f"  - {dep}")


if __name__ == "__main__":
    main()
