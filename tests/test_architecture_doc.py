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
