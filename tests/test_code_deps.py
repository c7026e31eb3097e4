"""neuroneval.code_deps: which library code a script can run, and a version that follows exactly that code."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from neuroneval.code_deps.cache import StepVersionCache, default_cache_dir, tree_key
from neuroneval.code_deps.index import CodeIndex, snakefile_imports
from neuroneval.code_deps.workflow import StepVersions, dvc_code_deps, pipeline_steps

ROOT = Path(__file__).resolve().parents[1]

LIBRARY = {
    "neuroneval/__init__.py": '__version__ = "1"\n',
    "neuroneval/io.py": "def read():\n    return 1\n\n\ndef write():\n    return 2\n",
    "neuroneval/steps.py": (
        "from neuroneval import io\n\n\n"
        "def step_a(job):\n    from neuroneval.alpha import helper\n\n    return helper() + io.read()\n\n\n"
        "def step_b(job):\n    from neuroneval.beta import other\n\n    return other()\n"),
    "neuroneval/alpha.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from neuroneval import heavy\n\n"
        "SCALE = 2\n\n\n"
        "def helper():\n    \"\"\"Twice the inner value.\"\"\"\n    return SCALE * _inner()\n\n\n"
        "def _inner():\n    return 1\n\n\n"
        "def unused():\n    return 0\n"),
    "neuroneval/beta.py": "def other():\n    return 3\n",
    "neuroneval/heavy.py": "X = 1\n",
    "neuroneval/pkg/__init__.py": "from .engine import score\n",
    "neuroneval/pkg/engine.py": ("def score():\n    return _kernel()\n\n\ndef _kernel():\n    return 4\n\n\n"
                                 "def spare():\n    return 5\n"),
    "neuroneval/pipeline/__init__.py": "from neuroneval.pipeline.runner import run_rule, run_step\n",
    "neuroneval/pipeline/runner.py": (
        "def run_step(step, snakemake):\n    return step(snakemake)\n\n\n"
        "def run_rule(snakemake):\n    import importlib\n\n"
        "    module, _, function = snakemake.params['step'].partition('@')[0].partition(':')\n"
        "    return run_step(getattr(importlib.import_module(module), function), snakemake)\n"),
    "neuroneval/pipeline/demo_steps.py": (
        "def step_one(job):\n    from neuroneval.alpha import helper\n\n    return helper()\n\n\n"
        "def step_two(job):\n    from neuroneval.beta import other\n\n    return other()\n\n\n"
        "def not_a_step(value):\n    return value\n"),
    "neuroneval/lazy/__init__.py": (
        "import importlib\n\nLAZY_NAMES = {\"helper\": \"neuroneval.alpha\", \"other\": \"neuroneval.beta\"}\n\n\n"
        "def __getattr__(name):\n    if name not in LAZY_NAMES:\n        raise AttributeError(name)\n"
        "    return getattr(importlib.import_module(LAZY_NAMES[name]), name)\n"),
    "neuroneval/registry.py": (
        "def first():\n    return 1\n\n\ndef second():\n    return 2\n\n\n"
        "def lookup(name):\n    return globals()[name]()\n"),
}
SCRIPTS = {
    "script_a.py": "from neuroneval.steps import step_a\n\nstep_a(None)\n",
    "script_b.py": "from neuroneval.steps import step_b\n\nstep_b(None)\n",
    "script_pkg.py": "from neuroneval.pkg import score\n\nscore()\n",
    "script_chain.py": ("import neuroneval.pkg.engine as engine\nimport neuroneval\n\n"
                        "engine.score()\nneuroneval.io.read()\n"),
    "script_registry.py": "from neuroneval.registry import lookup\n\nlookup('first')\n",
    "script_lazy.py": "from neuroneval.lazy import helper\n\nhelper()\n",
    "script_lazy_attr.py": "import neuroneval.lazy\n\nneuroneval.lazy.other()\n",
    "script_lazy_package.py": "import neuroneval.lazy\n",
    "script_getattr.py": "import sys\n\nfrom neuroneval import beta\n\ngetattr(beta, sys.argv[1])()\n",
}


#: The workflow's one entry script, as in workflow/scripts/step.py.
ENTRY_SCRIPT = "from neuroneval.pipeline import run_rule\n\nrun_rule(snakemake)\n"


@pytest.fixture(autouse=True)
def cache_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Step versions are cached under $XDG_CACHE_HOME: each test gets an empty one of its own."""
    home = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name, text in {**{f"src/{key}": value for key, value in LIBRARY.items()},
                       **{f"scripts/{key}": value for key, value in SCRIPTS.items()},
                       "workflow/scripts/step.py": ENTRY_SCRIPT}.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def closure(tree: Path, script: str):
    return CodeIndex(tree / "src").closure(tree / "scripts" / script)


def library_files(tree: Path, script: str) -> set[str]:
    return {path.relative_to(tree / "src").as_posix() for path in closure(tree, script).files
            if (tree / "src") in path.parents}


def version_after(tree: Path, script: str, path: str, old: str, new: str) -> tuple[str, str]:
    before = closure(tree, script).version
    file = tree / "src" / path if not path.startswith("scripts/") else tree / path
    text = file.read_text()
    assert old in text, old
    file.write_text(text.replace(old, new))
    return before, closure(tree, script).version


def test_follows_the_functions_a_script_calls_not_whole_modules(tree: Path) -> None:
    assert library_files(tree, "script_a.py") == {"neuroneval/__init__.py", "neuroneval/steps.py",
                                                  "neuroneval/io.py", "neuroneval/alpha.py"}
    # steps.py imports io at its top level, so io's top level runs for step_b too, but not io.read
    assert library_files(tree, "script_b.py") == {"neuroneval/__init__.py", "neuroneval/steps.py",
                                                  "neuroneval/io.py", "neuroneval/beta.py"}
    assert ("neuroneval.io", "read") not in closure(tree, "script_b.py").units
    units = closure(tree, "script_a.py").units
    assert ("neuroneval.alpha", "_inner") in units and ("neuroneval.alpha", "unused") not in units
    assert ("neuroneval.steps", "step_b") not in units and ("neuroneval.io", "write") not in units


@pytest.mark.parametrize(("path", "old", "new"), [
    ("neuroneval/alpha.py", "return 1", "return 10"),            # a function the script's step calls, indirectly
    ("neuroneval/alpha.py", "SCALE = 2", "SCALE = 3"),           # top-level code of a module it imports
    ("neuroneval/io.py", "return 1", "return 11"),               # a function used as module.attribute
    ("neuroneval/__init__.py", '"1"', '"2"'),                    # a parent package (runs on import)
    ("neuroneval/steps.py", "return helper() +", "return 2 * helper() +"),  # the step itself
    ("scripts/script_a.py", "step_a(None)", "step_a(1)"),        # the script
])
def test_any_change_to_code_the_script_runs_changes_its_version(tree: Path, path: str, old: str, new: str) -> None:
    before, after = version_after(tree, "script_a.py", path, old, new)
    assert before != after


@pytest.mark.parametrize(("path", "old", "new"), [
    ("neuroneval/alpha.py", "return 0", "return 100"),           # a function nothing calls
    ("neuroneval/steps.py", "return other()", "return 2 * other()"),  # another step in the same module
    ("neuroneval/io.py", "return 2", "return 20"),               # another function of a module it uses
    ("neuroneval/beta.py", "return 3", "return 30"),             # a module only another step imports
    ("neuroneval/heavy.py", "X = 1", "X = 2"),                   # imported under TYPE_CHECKING only
    ("neuroneval/alpha.py", '"""Twice the inner value."""', '"""Two times the inner value."""'),  # docstring
    ("neuroneval/alpha.py", "def _inner():\n    return 1", "def _inner(  ):\n    # one\n    return (1)"),  # format
])
def test_changes_to_code_it_cannot_run_keep_its_version(tree: Path, path: str, old: str, new: str) -> None:
    before, after = version_after(tree, "script_a.py", path, old, new)
    assert before == after


def test_re_exports_attribute_chains_relative_imports_and_dynamic_lookups(tree: Path) -> None:
    for script in ("script_pkg.py", "script_chain.py"):
        units = closure(tree, script).units
        assert {("neuroneval.pkg", ""), ("neuroneval.pkg.engine", "score"),
                ("neuroneval.pkg.engine", "_kernel")} <= set(units), script
        assert ("neuroneval.pkg.engine", "spare") not in units
    assert ("neuroneval.io", "read") in closure(tree, "script_chain.py").units
    # globals() may look up any function of its module by a computed name, and so may getattr(module, name)
    assert {("neuroneval.registry", "first"), ("neuroneval.registry", "second")} <= set(
        closure(tree, "script_registry.py").units)
    assert ("neuroneval.beta", "other") in closure(tree, "script_getattr.py").units


def test_lazy_names_reach_only_the_module_that_serves_them(tree: Path) -> None:
    served = {"script_lazy.py": ("neuroneval.alpha", "helper"), "script_lazy_attr.py": ("neuroneval.beta", "other")}
    for script, (module, name) in served.items():
        units = closure(tree, script).units
        assert {(module, ""), (module, name), ("neuroneval.lazy", ""), ("neuroneval.lazy", "__getattr__")} <= set(units)
        other = "neuroneval.beta" if module == "neuroneval.alpha" else "neuroneval.alpha"
        assert (other, "") not in units and ("neuroneval.heavy", "") not in units, script
    # importing the package runs neither its __getattr__ nor the modules behind it
    assert set(closure(tree, "script_lazy_package.py").units) == {("script_lazy_package.py", ""),
                                                                 ("neuroneval", ""), ("neuroneval.lazy", "")}
    before, after = version_after(tree, "script_lazy.py", "neuroneval/lazy/__init__.py", "AttributeError(name)",
                                  "AttributeError(name + '!')")
    assert before != after  # the mechanism is code the script runs


def test_a_rule_file_counts_by_its_import_lines_and_whole_modules_it_imports(tree: Path) -> None:
    rules = tree / "rules.smk"
    rules.write_text("from neuroneval.pkg import (\n    score,\n)\nimport neuroneval.alpha as alpha\n\n\n"
                     "rule x:\n    params:\n        value=alpha.unused(),\n")
    assert snakefile_imports(rules.read_text()) == "from neuroneval.pkg import (\n    score,\n)\n" \
                                                   "import neuroneval.alpha as alpha\n"
    units = CodeIndex(tree / "src").closure(rules).units
    assert {("neuroneval.pkg.engine", "score"), ("neuroneval.alpha", "unused"), ("neuroneval.alpha", "helper")} \
        <= set(units)


def test_steps_are_the_job_functions_of_the_pipeline_modules(tree: Path) -> None:
    assert pipeline_steps(tree / "src") == {"step_one": "neuroneval.pipeline.demo_steps",
                                            "step_two": "neuroneval.pipeline.demo_steps"}
    (tree / "src/neuroneval/pipeline/more_steps.py").write_text("def step_one(job):\n    return 0\n")
    with pytest.raises(ValueError, match="'step_one' is defined in both"):
        pipeline_steps(tree / "src")


def test_a_step_version_follows_exactly_the_code_the_step_runs(tree: Path) -> None:
    def versions() -> tuple[str, str]:
        steps = StepVersions(CodeIndex(tree / "src"))
        return steps("step_one"), steps("step_two")

    one, two = versions()
    assert one.startswith("neuroneval.pipeline.demo_steps:step_one@sha256:") and two.partition("@")[2]
    alpha = tree / "src/neuroneval/alpha.py"
    alpha.write_text(alpha.read_text().replace("return 1\n", "return 2\n", 1))  # _inner, run by step_one only
    changed_one, same_two = versions()
    assert changed_one != one and same_two == two
    runner = tree / "src/neuroneval/pipeline/runner.py"
    runner.write_text(runner.read_text() + "\n\ndef unused():\n    return 0\n")  # not run: no change
    assert versions()[1] == two
    runner.write_text(runner.read_text().replace("return step(snakemake)", "return step(snakemake) or None"))
    assert versions()[1] != two  # every step runs through run_step
    with pytest.raises(KeyError, match="no such step function"):
        StepVersions(CodeIndex(tree / "src"))("not_a_step")


def test_every_step_version_covers_the_entry_script_and_the_rule_runner(tree: Path) -> None:
    """Every rule runs workflow/scripts/step.py, which calls run_rule, which imports the step its param names: a
    change to either reruns every rule; run_rule's computed import does not tie a step to the whole library."""
    def versions() -> dict[str, str]:
        steps = StepVersions(CodeIndex(tree / "src"))
        return {step: steps(step) for step in ("step_one", "step_two")}

    before = versions()
    assert "neuroneval/beta.py" not in {path.relative_to(tree / "src").as_posix() for path in CodeIndex(
        tree / "src").closure(steps=["neuroneval.pipeline.demo_steps:step_one"]).files}
    script = tree / "workflow/scripts/step.py"
    script.write_text(script.read_text() + "print('done')\n")
    after_script = versions()
    assert all(after_script[step] != before[step] for step in before)
    runner = tree / "src/neuroneval/pipeline/runner.py"
    runner.write_text(runner.read_text().replace("partition('@')[0]", "partition('@')[0].strip()"))
    after_runner = versions()
    assert all(after_runner[step] != after_script[step] for step in before)
    script.write_text(script.read_text() + "# a comment changes no code\n")
    assert versions() == after_runner
    script.unlink()
    with pytest.raises(FileNotFoundError, match=r"workflow/scripts/step\.py"):
        StepVersions(CodeIndex(tree / "src"))


def test_rules_must_run_their_step_with_its_version(tree: Path) -> None:
    versions = StepVersions(CodeIndex(tree / "src"))
    good = SimpleNamespace(name="a", script="../scripts/step.py", params={"step": versions("step_one")})
    aggregate = SimpleNamespace(name="all", script=None, norun=True, params={})
    versions.check([good, aggregate])
    stale = SimpleNamespace(name="b", script="../scripts/step.py",
                            params={"step": versions("step_one").replace("step_one", "step_two")})
    missing = SimpleNamespace(name="c", script="../scripts/step.py", params={})
    own_script = SimpleNamespace(name="e", script="../scripts/own.py", params={})
    shell = SimpleNamespace(name="d", script=None, norun=False, params={})
    with pytest.raises(ValueError, match="rules must pass their step") as error:
        versions.check([good, stale, missing, own_script, shell])
    message = str(error.value)
    assert 'rule b: pass `step=step_version("step_two"),`' in message
    assert 'rule c: pass `step=step_version("<step function>"),`' in message
    assert "rule e: runs ../scripts/own.py" in message
    assert "rule d: runs shell/run" in message


def test_the_repository_closures_are_deterministic() -> None:
    first = dvc_code_deps(ROOT, ["workflow/rules/meta.smk"])
    again = dvc_code_deps(ROOT, ["workflow/rules/meta.smk"])
    assert first == again and "workflow/scripts/step.py" in first and "src/neuroneval/meta" in first
    step = "neuroneval.pipeline.meta_steps:meta_setting"
    versions = [CodeIndex(ROOT / "src").closure(steps=[step]).version for _ in range(2)]
    assert versions[0] == versions[1]


def _forbid_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    def closure(*args, **kwargs):
        raise AssertionError("a closure was computed although the cache holds this tree's versions")
    monkeypatch.setattr(CodeIndex, "closure", closure)


def test_cached_step_versions_are_the_fresh_ones_for_every_step_of_the_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Snakefile parse of an unchanged library reads every step's version from the cache, computing no closure,
    and reads exactly what a fresh index computes."""
    fresh = StepVersions(CodeIndex(ROOT / "src"), cache=False)
    expected = {step: fresh(step) for step in fresh.steps}
    assert not (tmp_path / "step_versions").exists()
    storing = StepVersions(CodeIndex(ROOT / "src"), cache_dir=tmp_path)
    assert {step: storing(step) for step in storing.steps} == expected
    _forbid_closures(monkeypatch)
    cached = StepVersions(CodeIndex(ROOT / "src"), cache_dir=tmp_path)
    assert cached.steps == fresh.steps
    assert {step: cached(step) for step in cached.steps} == expected


@pytest.mark.parametrize(("path", "old", "new"), [
    ("src/neuroneval/heavy.py", "X = 1\n", "X = 1  # a comment, in code no step runs\n"),
    ("src/neuroneval/alpha.py", "return 1\n", "return 2\n"),
    ("workflow/scripts/step.py", "run_rule(snakemake)\n", "run_rule(snakemake)\nprint('done')\n"),
])
def test_any_change_to_the_library_or_the_entry_script_is_a_new_cache_key(tree: Path, cache_home: Path, path: str,
                                                                          old: str, new: str) -> None:
    """The key covers every library file and the entry script: after an edit, the versions are computed afresh
    (equal to a fresh index's), never read from the entry of the tree before the edit."""
    def versions(**options) -> dict[str, str]:
        steps = StepVersions(CodeIndex(tree / "src"), **options)
        return {step: steps(step) for step in ("step_one", "step_two")}

    script = tree / "workflow/scripts/step.py"
    key = tree_key(tree / "src", script)
    before = versions()
    assert StepVersionCache(cache_home / "neuroneval", key).versions == before
    file = tree / path
    file.write_text(file.read_text().replace(old, new))
    edited_key = tree_key(tree / "src", script)
    assert edited_key != key
    assert versions() == versions(cache=False)
    (tree / "src/neuroneval/extra.py").write_text("Y = 2\n")  # a new module: whole-library steps reach it
    assert tree_key(tree / "src", script) != edited_key


def test_a_broken_or_unwritable_cache_only_costs_time(tree: Path, tmp_path: Path) -> None:
    expected = StepVersions(CodeIndex(tree / "src"), cache=False)("step_one")
    folder = tmp_path / "store"
    StepVersions(CodeIndex(tree / "src"), cache_dir=folder)("step_one")
    (stored,) = (folder / "step_versions").glob("*.json")
    for broken in ("{not json", '{"steps": {"step_one": 1}, "versions": {}}', "[]"):
        stored.write_text(broken)
        assert StepVersions(CodeIndex(tree / "src"), cache_dir=folder)("step_one") == expected
    blocked = tmp_path / "a_file"
    blocked.write_text("")
    assert StepVersions(CodeIndex(tree / "src"), cache_dir=blocked)("step_one") == expected


def test_without_a_home_directory_there_is_no_cache(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(Path, "home", no_home)
    assert default_cache_dir() is None
    assert StepVersions(CodeIndex(tree / "src"))("step_one") == StepVersions(CodeIndex(tree / "src"),
                                                                             cache=False)("step_one")
