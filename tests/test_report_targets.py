"""``make report``'s targets (:mod:`neuroneval.snakemake_report`): the declared report files that exist, a job's
files only when all of them exist; and the workflow's declarations: every result file is declared with a
category and a caption file that exists, and every caption file is used."""

from __future__ import annotations

import re
from pathlib import Path

from neuroneval.snakemake_report import report_command, report_targets, reported_patterns

ROOT = Path(__file__).resolve().parents[1]

RULES = '''rule table:
    output:
        table=report("results/table.csv", caption="../report/t.rst", category="T"),
        figure=report("results/table.png", caption="../report/t.rst", category="T"),
        tidy="results/tidy.csv",


rule per_setting:
    output:
        report(
            "results/pages/{setting}/index.html",
            caption="../report/p.rst",
            category="P",
        ),


rule plain:
    output:
        "results/plain.csv",
'''


def _tree(root: Path, files: list[str]) -> Path:
    (root / "workflow/rules").mkdir(parents=True)
    (root / "workflow/rules/x.smk").write_text(RULES)
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(name)
    return root


def test_patterns_are_read_per_rule(tmp_path: Path) -> None:
    assert reported_patterns(_tree(tmp_path, [])) == {
        "table": ("results/table.csv", "results/table.png"),
        "per_setting": ("results/pages/{setting}/index.html",)}


def test_targets_are_the_existing_declared_files(tmp_path: Path) -> None:
    root = _tree(tmp_path, ["results/table.csv", "results/table.png", "results/tidy.csv", "results/plain.csv",
                            "results/pages/a/index.html", "results/pages/b/index.html", "results/pages/b/x.png"])
    targets = report_targets(root)
    assert targets.present == ("results/pages/a/index.html", "results/pages/b/index.html", "results/table.csv",
                               "results/table.png")
    assert targets.incomplete == ()
    assert report_command(Path("results/report.html"), targets.present)[:3] == [
        "snakemake", "--report", "results/report.html"]


def test_a_job_with_a_missing_declared_file_is_left_out(tmp_path: Path) -> None:
    targets = report_targets(_tree(tmp_path, ["results/table.csv", "results/pages/a/index.html"]))
    assert targets.present == ("results/pages/a/index.html",)
    assert targets.incomplete == ("results/table.csv",)


def test_nothing_built_means_no_targets(tmp_path: Path) -> None:
    assert report_targets(_tree(tmp_path, [])).present == ()


def test_every_results_output_of_the_workflow_is_declared_with_a_caption() -> None:
    declared = {pattern for patterns in reported_patterns(ROOT).values() for pattern in patterns}
    captions, calls = set(), 0
    for path in sorted((ROOT / "workflow/rules").glob("*.smk")):
        text = path.read_text()
        for call in re.findall(r"report\(\s*\"[^\"]+\",\s*caption=\"([^\"]+)\",\s*category=\"[^\"]+\"", text):
            assert (path.parent / call).resolve().is_file(), call
            captions.add((path.parent / call).resolve())
            calls += 1
    assert calls == len(declared)  # each declaration has a caption and a category
    assert captions == {path.resolve() for path in (ROOT / "workflow/report").glob("*.rst")}
    assert len(declared) == sum(len(patterns) for patterns in reported_patterns(ROOT).values())  # no repeats
    for user_facing in ("results/table4.csv", "results/figure3.png", "results/fidelity.md",
                        "results/cosy/throughput.json", "results/viewer/{setting}/index.html"):
        assert user_facing in declared
