"""``ties="reference"`` reproduces the authors' published theoretical sanity-check numbers.

Spot values are copied from the authors' published table, bundled in ``neuroneval.sanity.reference_data`` (saved
cell outputs of their theoretical_sanity_check.ipynb: n = 500,000 inputs, 1000 draws, a = c binary with the first
γ·n inputs positive). Δs = (s(a, c±) − s(a, c)) / (max − min), with max − min = 2 for [−1, 1] metrics.

The missing/extra perturbations (docs/design.md §4.1) are implemented minimally here; the real ones live in
``neuroneval.sanity``. We use n = 50,000 and 6 draws (T&R: n = 500,000, as its sample size depends on n).
The expected Δs of these metrics does not depend on n (ranks, rates and correlations of fixed proportions),
and the per-draw standard deviation measured for every spot is ≤ 0.004, so a spot passes when
|mean − CSV| ≤ 4·sd/√draws + 0.002 (sampling error of our mean, plus rounding and the CSV's own sampling
error of about 0.0001).
"""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics import get_spec, score
from tests.metrics.conftest import quiet_score

DRAWS = 6

# (metric, γ, n, CSV missing Δs, CSV extra Δs); None = not checked (rare-event dominated, see below).
SPOTS = [
    ("spearman", 0.499, 50_000, -0.2000, -0.5671),
    ("spearman", 0.1, 50_000, -0.0676, -0.0228),
    ("auc", 0.499, 50_000, -0.2500, -0.7562),
    ("auc", 0.1, 50_000, -0.2500, -0.0844),
    ("correlation", 0.499, 50_000, -0.2111, -0.4776),
    ("correlation", 0.1, 50_000, -0.1559, -0.1667),
    ("cosine", 0.1, 50_000, -0.1464, -0.1464),
    ("auprc", 0.1, 50_000, -0.4500, -0.5000),
    ("inverse_auprc", 0.499, 50_000, -0.5000, -0.0010),
    ("inverse_auc", 0.499, 50_000, -0.1662, None),
    ("hmean:auc+inverse_auc", 0.499, 50_000, -0.2104, -0.6320),
    ("recall", 0.1, 50_000, -0.5000, 0.0000),
    ("inverse_balanced_accuracy", 0.1, 50_000, -0.0263, -0.2500),
    # The binary T&R variant (all positives + 25 random); its extra-labels Δs at γ = 0.499 hinges on the rare
    # draws where one random negative stays 0 (c⁺ is otherwise constant on the sample), so it is not checked.
    ("correlation_tr", 0.499, 500_000, -0.4965, None),
    ("correlation_tr", 0.01, 500_000, -0.4649, None),
    ("spearman_tr", 0.499, 500_000, -0.1020, -0.0012),
]


def missing_and_extra(concept: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """c⁻ = c·1[U > 0.5]; c⁺ = min(1, c + 1[U < s/(n − s)]) with s the positives of c (docs/design.md §4.1)."""
    n, positives = concept.size, concept.sum()
    missing = concept * (rng.random(n) > 0.5)
    extra = np.minimum(1.0, concept + (rng.random(n) < positives / (n - positives)))
    return missing, extra


def theoretical_diffs(metric: str, gamma: float, n: int, ties: str) -> np.ndarray:
    """(DRAWS, 2) normalized Δs for missing and extra labels on the ideal binary neuron a = c."""
    positives = round(gamma * n)
    neuron = np.zeros(n)
    neuron[:positives] = 1.0
    spec = get_spec(metric)
    low, high = spec.value_range
    params = {"alpha": positives / n} if spec.uses_alpha else {}
    diffs = []
    for draw in range(DRAWS):
        missing, extra = missing_and_extra(neuron, np.random.default_rng([7, draw]))
        scores = quiet_score(score, metric, neuron[:, None], np.column_stack([neuron, missing, extra]),
                             ties=ties, seed=draw, **params)[0]
        diffs.append([(scores[1] - scores[0]) / (high - low), (scores[2] - scores[0]) / (high - low)])
    return np.array(diffs)


@pytest.mark.parametrize(("metric", "gamma", "n", "missing", "extra"), SPOTS)
def test_reference_mode_reproduces_published_spot_values(metric, gamma, n, missing, extra) -> None:
    diffs = theoretical_diffs(metric, gamma, n, ties="reference")
    tolerance = 4 * diffs.std(axis=0, ddof=1) / np.sqrt(DRAWS) + 0.002
    for column, published in enumerate((missing, extra)):
        if published is not None:
            assert abs(diffs[:, column].mean() - published) <= tolerance[column], (column, diffs.mean(axis=0))


def test_average_ties_do_not_reproduce_the_spearman_collapse() -> None:
    """At γ = 0.01 the published Spearman Δs (−0.0079, a near-failure) is the tie-breaking artefact; with
    average ranks Spearman of binary vectors is the phi coefficient, i.e. Pearson (−0.1474 in the CSV)."""
    reference = theoretical_diffs("spearman", 0.01, 50_000, ties="reference").mean(axis=0)
    average = theoretical_diffs("spearman", 0.01, 50_000, ties="average").mean(axis=0)
    pearson = theoretical_diffs("correlation", 0.01, 50_000, ties="average").mean(axis=0)
    assert abs(reference[0] - (-0.0079)) < 0.004
    np.testing.assert_allclose(average, pearson, atol=1e-9)
    assert abs(average[0] - (-0.1474)) < 0.004


def test_reference_spearman_of_a_binary_vector_with_itself_is_not_one() -> None:
    neuron = np.zeros(20_000)
    neuron[:10_000] = 1.0
    average = score("spearman", neuron[:, None], neuron[:, None])[0, 0]
    reference = score("spearman", neuron[:, None], neuron[:, None], ties="reference")[0, 0]
    assert average == pytest.approx(1.0, abs=1e-12)
    assert 0.7 < reference < 0.85


def test_reference_pearson_carries_the_n_minus_one_over_n_factor() -> None:
    rng = np.random.default_rng(3)
    n = 50
    activations = rng.permutation(n)[:, None] / n + 0.0
    concepts = rng.permutation(n)[:, None] / n + np.zeros((n, 1))
    for metric in ("correlation", "spearman"):
        average = score(metric, activations, concepts)[0, 0]
        reference = score(metric, activations, concepts, ties="reference")[0, 0]
        assert reference == pytest.approx(average * (n - 1) / n, abs=1e-12)
