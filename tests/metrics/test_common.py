"""Registry-driven invariances every metric must satisfy (in the spirit of sklearn's metrics test_common)."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics import METRICS, get_spec, score
from tests.metrics.conftest import quiet_score

COMBINATIONS = ["hmean:auc+inverse_auc", "hmean:balanced_accuracy+inverse_balanced_accuracy",
                "hmean:recall+inverse_auc"]
ALL = [*METRICS, *COMBINATIONS]
SAMPLED = {name for name, spec in METRICS.items() if spec.kind == "sampled"}


def params_for(metric: str) -> dict[str, float]:
    spec = get_spec(metric)
    params: dict[str, float] = {}
    if spec.uses_alpha:
        params["alpha"] = 0.03
    if spec.uses_lam:
        params["lam"] = 0.7
    return params


def run(metric: str, activations: np.ndarray, concepts: np.ndarray, **extra) -> np.ndarray:
    return quiet_score(score, metric, activations, concepts, **params_for(metric), **extra)


@pytest.mark.parametrize("metric", ALL)
def test_shape_dtype_range_and_finiteness(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    scores = run(metric, activations, concepts)
    low, high = get_spec(metric).value_range
    assert scores.shape == (activations.shape[1], concepts.shape[1])
    assert scores.dtype == np.float64
    assert np.all(np.isfinite(scores))
    assert np.all(scores >= low - 1e-12) and np.all(scores <= high + 1e-12)


@pytest.mark.parametrize("metric", [name for name in ALL if name not in SAMPLED])
def test_permuting_inputs_changes_nothing(metric: str, tricky_data) -> None:
    """Sampled (T&R) metrics are excluded: their random inputs are drawn by position, by design."""
    activations, concepts = tricky_data
    order = np.random.default_rng(1).permutation(activations.shape[0])
    np.testing.assert_allclose(run(metric, activations[order], concepts[order]),
                               run(metric, activations, concepts), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ALL)
def test_permuting_concepts_permutes_columns(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    order = np.random.default_rng(2).permutation(concepts.shape[1])
    np.testing.assert_allclose(run(metric, activations, concepts[:, order]),
                               run(metric, activations, concepts)[:, order], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", [name for name in ALL if name not in SAMPLED])
def test_permuting_units_permutes_rows(metric: str, tricky_data) -> None:
    """T&R draws unit k's sample from row k of its random stream, so only non-sampled metrics are equivariant."""
    activations, concepts = tricky_data
    order = np.random.default_rng(3).permutation(activations.shape[1])
    np.testing.assert_allclose(run(metric, activations[:, order], concepts),
                               run(metric, activations, concepts)[order], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("metric", ALL)
def test_affine_transform_of_activations(metric: str, tricky_data) -> None:
    """Invariant under a ↦ 2a + 0.5 where the registry says so; MAD scales by 2; cosine changes."""
    activations, concepts = tricky_data
    before = run(metric, activations, concepts)
    after = run(metric, 2.0 * activations + 0.5, concepts)
    if get_spec(metric).affine_invariant:
        np.testing.assert_allclose(after, before, rtol=1e-9, atol=1e-12)
    elif metric == "mad":
        np.testing.assert_allclose(after, 2.0 * before, rtol=1e-9, atol=1e-12)
    else:
        assert metric == "cosine"
        assert np.max(np.abs(after - before)) > 0.01


def test_cosine_is_not_shift_invariant_but_correlation_is(tricky_data) -> None:
    """000 App. E.2: adding a constant to the activations changes cosine, never correlation."""
    activations, concepts = tricky_data
    shifted = activations + 10.0
    assert np.max(np.abs(run("cosine", shifted, concepts) - run("cosine", activations, concepts))) > 0.05
    np.testing.assert_allclose(run("correlation", shifted, concepts), run("correlation", activations, concepts),
                               atol=1e-10)


def equal_count_binary(rng: np.random.Generator, n: int, columns: int, ones: int) -> np.ndarray:
    matrix = np.zeros((n, columns))
    for column in range(columns):
        matrix[rng.choice(n, size=ones, replace=False), column] = 1.0
    return matrix


@pytest.mark.parametrize("metric", [name for name, spec in METRICS.items() if spec.inverse])
def test_inverse_metric_is_the_metric_with_roles_swapped(metric: str) -> None:
    """On 0/1 data where top-α keeps exactly the ones, s_inverse(a, c) = s(c, a) (000 App. A.2)."""
    rng = np.random.default_rng(4)
    n, ones = 400, 40
    activations = equal_count_binary(rng, n, 5, ones)
    concepts = equal_count_binary(rng, n, 6, ones)
    inverse = METRICS[metric].inverse
    alpha = {"alpha": ones / n}
    direct = quiet_score(score, metric, activations, concepts, **(alpha if METRICS[metric].uses_alpha else {}))
    swapped = quiet_score(score, inverse, concepts, activations, **(alpha if METRICS[inverse].uses_alpha else {}))
    np.testing.assert_allclose(direct, swapped.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", [name for name, spec in METRICS.items() if spec.kind == "binary"])
def test_binary_metrics_see_activations_only_through_top_alpha(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    alpha = 0.05
    k = int(np.ceil(alpha * activations.shape[0]))
    kth = -np.sort(-activations, axis=0)[k - 1]
    binarized = (activations >= kth).astype(float)
    counts = binarized.sum(axis=0)
    # Top-α of the 0/1 matrix keeps exactly its ones when α·n does not exceed each column's count.
    same = counts >= k
    direct = quiet_score(score, metric, activations[:, same], concepts, alpha=alpha)
    via_bits = quiet_score(score, metric, binarized[:, same], concepts, alpha=alpha)
    np.testing.assert_allclose(direct, via_bits, atol=1e-12)
