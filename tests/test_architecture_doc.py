"""docs/architecture.md stays a true map: it names every registered metric, every rule and every file a rule
writes under results/ (a newcomer looking for where something is made finds it there)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from neuroneval.metrics import METRICS

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text()
RULE_FILES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def _rules() -> dict[str, list[str]]:
    """Each rule's name → the quoted ``results/...`` paths of its ``output:`` block."""
    rules = {}
    for path in RULE_FILES:
        for block in re.split(r"^(?=rule \w+:)", path.read_text(), flags=re.MULTILINE):
            name = re.match(r"rule (\w+):", block)
            if name is None:
                continue
            output = re.search(r"^    output:\n((?:        .*\n)+)", block, re.MULTILINE)
            rules[name.group(1)] = re.findall(r'"(results/[^"]+)"', output.group(1)) if output else []
    return rules


RULES = _rules()


def test_the_workflow_has_the_rules_this_test_reads() -> None:
    assert len(RULES) > 60 and "meta_setting" in RULES and RULES["table4"]


@pytest.mark.parametrize("metric", sorted(METRICS))
def test_every_metric_is_named(metric: str) -> None:
    assert f"`{metric}`" in DOC


@pytest.mark.parametrize("rule", sorted(RULES))
def test_every_rule_is_named(rule: str) -> None:
    assert f"`{rule}`" in DOC


@pytest.mark.parametrize("output", sorted({output for outputs in RULES.values() for output in outputs}))
def test_every_results_file_is_named(output: str) -> None:
    assert f"`{output}`" in DOC


def test_every_rule_file_and_pipeline_module_is_named() -> None:
    missing = [path.name for path in RULE_FILES if path.name not in DOC and not path.name.endswith("common.smk")]
    modules = [path.stem for path in (ROOT / "src" / "neuroneval" / "pipeline").glob("*_steps.py")]
    missing += [module for module in modules if f"`{module}`" not in DOC]
    assert not missing, missing


def _table_index() -> list[list[str]]:
    """The rows of the "Where is paper table X built" section: [table, file, rule, step, library function]."""
    section = DOC.split("## Where is paper table X built", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| ") and not line.startswith(("| table ", "| ---"))]
    return [[row[0], *(re.match(r"`([^`]+)`", cell).group(1) for cell in row[1:])] for row in rows]  # type: ignore


TABLE_INDEX = _table_index()


def _steps() -> dict[str, str]:
    """Each rule's name → the step function of its ``step_version("...")`` param."""
    steps = {}
    for path in RULE_FILES:
        for block in re.split(r"^(?=rule \w+:)", path.read_text(), flags=re.MULTILINE):
            name, step = re.match(r"rule (\w+):", block), re.search(r'step_version\("(\w+)"\)', block)
            if name is not None and step is not None:
                steps[name.group(1)] = step.group(1)
    return steps


def _resolve(dotted: str) -> object:
    """The object named ``package.module.attribute`` (the longest importable module prefix, then attributes)."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(dotted)


def test_every_results_table_of_the_workflow_is_in_the_table_index() -> None:
    tables = {output for outputs in RULES.values() for output in outputs
              if re.fullmatch(r"table\w*\.csv", Path(output).name)}
    indexed = {row[1] for row in TABLE_INDEX}
    assert len(TABLE_INDEX) >= 25
    assert not tables - indexed, f"results tables missing from the table index: {sorted(tables - indexed)}"


@pytest.mark.parametrize("row", TABLE_INDEX, ids=[row[1] for row in TABLE_INDEX])
def test_each_table_index_row_is_one_true_hop_each(row: list[str]) -> None:
    _, output, rule, step, library = row
    assert output in RULES.get(rule, []), f"rule {rule} does not write {output}"
    module, function = step.split(".")
    assert _steps().get(rule) == function, f"rule {rule} does not run the step {function}"
    assert callable(_resolve(f"neuroneval.pipeline.{module}.{function}"))
    assert callable(_resolve(library)), f"{library} is not a function"
