"""The tie mode: one Literal, one parse point, resolved once into the Context the kernels receive (issue 35)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import numpy as np
import pytest
import scipy.stats

import neuroneval.metrics as metrics_package
from neuroneval.metrics import score
from neuroneval.metrics.context import Context
from neuroneval.metrics.metric_options import MetricOptions, engine_params
from neuroneval.metrics.ranks import noisy_values
from neuroneval.metrics.ties import TIES, TieMode, tie_rule
from neuroneval.options import OptionsError

METRICS_SOURCE = Path(metrics_package.__file__).parent


def _is_tie_mode(node: ast.AST) -> bool:
    """``ties``, ``x.ties`` or a string naming a tie mode."""
    return ((isinstance(node, ast.Name) and node.id == "ties")
            or (isinstance(node, ast.Attribute) and node.attr == "ties")
            or (isinstance(node, ast.Constant) and node.value in TIES))


def _tie_switches(path: Path) -> list[str]:
    """Lines of ``path`` that compare a tie mode (``ties == "reference"``, ``"average" != params.ties``, ...)."""
    return [f"{path.name}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Compare) and any(_is_tie_mode(side) for side in [node.left, *node.comparators])]


def test_the_choices_are_the_literal() -> None:
    assert TIES == get_args(TieMode) == ("average", "reference")


def test_an_unknown_mode_is_named_at_the_options_boundary() -> None:
    with pytest.raises(OptionsError, match=r"MetricOptions\.ties must be one of \['average', 'reference'\], got 'avg'"):
        MetricOptions(ties="avg")
    with pytest.raises(ValueError, match=r"ties must be one of \['average', 'reference'\], got 'avg'"):
        tie_rule("avg")  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", TIES)
def test_the_context_holds_the_resolved_rule(mode: TieMode) -> None:
    params = engine_params(MetricOptions(ties=mode))[0]
    ctx = Context(None, params, None, np.zeros((3, 1)), np.zeros((3, 1)), np.arange(1))
    assert ctx.ties is tie_rule(mode) and ctx.ties.mode == mode


def test_no_metric_module_switches_on_the_tie_mode_string() -> None:
    found = [line for path in sorted(METRICS_SOURCE.glob("*.py")) if path.name != "ties.py"
             for line in _tie_switches(path)]
    assert not found, "read the resolved TieRule (ctx.ties) instead:\n" + "\n".join(found)


def test_the_rules_ranks_match_scipy_and_the_stable_noised_order() -> None:
    """average: scipy's average ranks; reference: ranks 1…n of the noised values in stable (position) order."""
    rng = np.random.default_rng(0)
    values = rng.integers(0, 3, size=(4, 30)).astype(np.float64)
    from neuroneval.metrics.backend import get_backend

    be = get_backend(None)
    assert np.array_equal(tie_rule("average").ranks(be, values), scipy.stats.rankdata(values, axis=1))
    noised = noisy_values(values, rng.random(values.shape))
    expected = np.argsort(np.argsort(noised, axis=1, kind="stable"), axis=1, kind="stable") + 1.0
    assert np.array_equal(tie_rule("reference").ranks(be, noised), expected)


def test_the_degenerate_auc_follows_the_rule() -> None:
    """A constant unit has every input active (at_least_kth): no negative, so AUC is undefined — 0.5 in average
    mode, the authors' 0 in reference mode (their (Σ ranks − m(m−1)/2) / clip(m(n−m), min=1) has numerator 0)."""
    activations = np.ones((20, 1))
    concepts = np.linspace(0, 1, 20)[:, None]
    with pytest.warns(UserWarning):
        average = score("auc", activations, concepts, ties="average", alpha=0.1)
    with pytest.warns(UserWarning):
        reference = score("auc", activations, concepts, ties="reference", alpha=0.1)
    assert float(np.asarray(average)[0, 0]) == tie_rule("average").degenerate_auc == 0.5
    assert float(np.asarray(reference)[0, 0]) == tie_rule("reference").degenerate_auc == 0.0
