"""What reruns a job: changed code it runs, changed params it reads, changed inputs — never a timestamp alone.

The dry runs use one copy of the shared tiny build, with the copy's ``src`` first on ``PYTHONPATH`` so an edit to
the copy's library is the library Snakemake versions. Every test restores what it changes.
"""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from neuroneval.code_deps.workflow import dvc_stage_code, expand_code_deps
from tests.workflow.conftest import TINY_TARGETS, run_tool

ROOT = Path(__file__).resolve().parents[2]


def test_dvc_stages_depend_on_exactly_the_code_they_run() -> None:
    """Each stage's code deps in dvc.yaml = the Snakefile, common.smk, its rule files, the entry script, and the
    library files their step functions and import lines can run (the closure of neuroneval.code_deps);
    nothing missing, nothing extra."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    problems = []
    for name, (listed, expected) in dvc_stage_code(ROOT, stages).items():
        have, need = expand_code_deps(ROOT, listed), expand_code_deps(ROOT, expected)
        missing, extra = sorted(need - have), sorted(have - need)
        if missing or extra:
            problems.append(f"stage {name}: missing {missing}, not needed {extra}")
        assert any(dep.endswith(".smk") and dep != "workflow/rules/common.smk" for dep in listed), name
    assert not problems, ("\n".join(problems) + "\n`python -m neuroneval.code_deps` prints the lists")


@pytest.fixture(scope="module")
def workspace(built_workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tiny build (timestamps and Snakemake metadata kept) that these tests edit and restore."""
    copy = tmp_path_factory.mktemp("reruns") / "repo"
    shutil.copytree(built_workspace, copy, symlinks=True)
    return copy


def planned(workspace: Path, targets: list[str] = TINY_TARGETS) -> dict[str, int]:
    """Jobs per rule that ``snakemake -n`` plans for ``targets`` (empty when there is nothing to do)."""
    dry = run_tool(["snakemake", "-n", *targets], workspace, env={"PYTHONPATH": str(workspace / "src")})
    output = dry.stdout + dry.stderr
    if "Nothing to be done" in output:
        return {}
    stats = output[output.index("Job stats:"):]
    stats = stats[: stats.index("\ntotal")]
    return {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)\s*$", stats, re.MULTILINE)}


@contextmanager
def edited(path: Path, edit) -> Iterator[None]:
    original = path.read_text()
    path.write_text(edit(original))
    try:
        yield
    finally:
        path.write_text(original)


def add_to_function(name: str, line: str):
    """An edit adding ``line`` as the last statement of top-level function ``name``."""
    def edit(text: str) -> str:
        function = next(node for node in ast.parse(text).body
                        if isinstance(node, ast.FunctionDef) and node.name == name)
        lines = text.splitlines(keepends=True)
        indent = " " * function.body[-1].col_offset
        lines.insert(function.body[-1].end_lineno, f"{indent}{line}\n")
        return "".join(lines)
    return edit


def test_a_library_change_reruns_the_rules_that_run_it_and_their_downstream(workspace: Path) -> None:
    settings = yaml.safe_load((workspace / "params.yaml").read_text())["meta"]["settings"]
    search = workspace / "src/neuroneval/meta/search.py"
    # split_units is run by meta_setting (and the sanity rules, not in this DAG): those and Table 4 rerun
    with edited(search, add_to_function("split_units", "edited = True")):
        assert planned(workspace, ["results/table4.csv"]) == {"meta_setting": len(settings), "table4": 1}
    # build_table4, in a module every meta_setting job imports, is run by the table4 rule only
    with edited(workspace / "src/neuroneval/meta/table4.py", add_to_function("build_table4", "edited = True")):
        assert planned(workspace, ["results/table4.csv"]) == {"table4": 1}
    # comments, docstrings and formatting are not code
    with edited(search, lambda text: text.replace('"""Seeded split', '"""A seeded split')
                .replace("def split_units(", "# a comment\ndef split_units(  ")):
        assert planned(workspace) == {}
    # nor is a module no rule imports (the per-pair reference metrics, for tests and benchmarks) -- except for
    # explain_cosy_score, which can run your own model's factory (explain.cosy on a custom setting): a factory is a
    # computed importlib.import_module, which may reach any module of the library, so that rule and its downstream
    # rerun on any library change (more than needed, never less; splitting the custom path into its own rule would
    # narrow it)
    with edited(workspace / "src/neuroneval/metrics/reference.py", lambda text: text + "\nUNUSED = 1\n"):
        assert set(planned(workspace)) == {"explain_cosy_score", "explain_results", "explain_benchmark", "fidelity"}


def test_a_changed_step_reruns_its_rule(workspace: Path) -> None:
    steps = workspace / "src/neuroneval/pipeline/meta_steps.py"
    with edited(steps, add_to_function("table4", "edited = True")):
        assert planned(workspace, ["results/table4.csv"]) == {"table4": 1}


def test_the_entry_script_and_the_rule_runner_rerun_every_rule(workspace: Path) -> None:
    """workflow/scripts/step.py and neuroneval.pipeline.runner.run_rule run before every step: editing either
    reruns every job of the target, as ``--forceall`` plans it."""
    every_job = planned(workspace, ["--forceall", "results/table4.csv"])
    script = workspace / "workflow/scripts/step.py"
    with edited(script, lambda text: text + "assert snakemake.params\n"):
        assert planned(workspace, ["results/table4.csv"]) == every_job
    with edited(workspace / "src/neuroneval/pipeline/runner.py", add_to_function("run_rule", "edited = True")):
        assert planned(workspace, ["results/table4.csv"]) == every_job


def test_touching_code_or_data_without_changing_it_reruns_nothing(workspace: Path) -> None:
    """Timestamps alone never rerun a job: every script, library file and rule file touched, and inputs too
    (a file whose checksum Snakemake recorded when it made the outputs reading it)."""
    touched = [*(workspace / "workflow").rglob("*"), *(workspace / "src").rglob("*.py"),
               *(workspace / "data/activations").rglob("*.parquet"), *(workspace / "data/truth").rglob("*")]
    for path in touched:
        if path.is_file():
            path.touch()
    assert planned(workspace) == {}


def test_a_setting_description_reruns_only_the_report_that_shows_it(workspace: Path) -> None:
    """``description`` and ``paper_setting`` are display-only: rules take settings without them; only the worlds
    report (a description column), the fidelity report (which reads the worlds report and the paper numbers) and
    the viewer pages (which show the description) rerun."""
    params = yaml.safe_load((workspace / "params.yaml").read_text())

    def relabel(text: str) -> str:
        changed = yaml.safe_load(text)
        for name, setting in changed["settings"].items():
            setting["description"] = f"relabelled {name}"
            if "paper_setting" in setting:
                setting["paper_setting"] = 11 - setting["paper_setting"]
        return yaml.safe_dump(changed, sort_keys=False)

    assert all("description" in setting for setting in params["settings"].values())
    with edited(workspace / "params.yaml", relabel):
        assert planned(workspace, ["results/table4.csv"]) == {}
        viewer = params["viewer"]["settings"] or params["meta"]["settings"]
        assert planned(workspace) == {"worlds_report": 1, "fidelity": 1, "viewer_setting": len(viewer), "viewer": 1}
