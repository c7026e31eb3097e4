"""The theoretical Spearman cells (paper 000, Tables C.1–C.4) are single random draws: the findings of
docs/fidelity.md pinned on small constructed cases, ours against a transcription of the authors' rule.

The authors' rule (``metrics.py`` / ``theoretical_sanity_check.ipynb`` of Trustworthy-ML-Lab/Neuron_Eval @ 5538002,
transcribed, not copied): ranks are the double argsort of float32 ``x + 1e-7·U`` (fresh U for every call, the unit
and the concept each their own), Spearman is their Pearson correlation with torch's (n − 1)/n factor, and
``run_test_fast`` computes the original score once per γ and subtracts it from every draw's score.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from neuroneval import published
from neuroneval.metrics import options_for, score
from neuroneval.metrics.context import STREAM_CONCEPT_NOISE, STREAM_UNIT_NOISE, noise_rows
from neuroneval.sanity.printed_reference import published_reference
from neuroneval.sanity.shared_original import implied_decrease_acc, spearman_per_draw_sd
from neuroneval.sanity.theoretical import ideal_concepts, theoretical_deltas
from neuroneval.sanity.theoretical_reference import load_theoretical_reference

EPSILON = 1e-3


def _authors_ranks(values: np.ndarray, uniform: np.ndarray) -> np.ndarray:
    """Their ``_get_ranks``: float32 values plus float32 1e-7·U, double argsort (stable, as on CUDA)."""
    noisy = values.astype(np.float32) + np.float32(1e-7) * uniform.astype(np.float32)
    return np.argsort(np.argsort(noisy, kind="stable"), kind="stable").astype(np.float64)


def _authors_spearman(unit: np.ndarray, concept: np.ndarray, unit_noise: np.ndarray,
                      concept_noise: np.ndarray) -> float:
    ranks_unit, ranks_concept = _authors_ranks(unit, unit_noise), _authors_ranks(concept, concept_noise)
    n = unit.size
    return (n - 1) / n * float(np.corrcoef(ranks_unit, ranks_concept)[0, 1])


@pytest.mark.parametrize("seed", [0, 3])
def test_reference_spearman_is_the_authors_rank_rule_given_the_same_noise(seed: int) -> None:
    """Binary vectors full of ties: ours equals the transcribed rule fed the noise rows our engine draws."""
    rng = np.random.default_rng(seed)
    n = 64
    unit = (rng.random(n) < 0.3).astype(np.float32)
    concept = np.where(rng.random(n) < 0.8, unit, 1 - unit).astype(np.float32)
    ours = score("spearman", unit[:, None], concept[:, None],
                 options=options_for("spearman", ties="reference", seed=seed))[0, 0]
    theirs = _authors_spearman(unit, concept, noise_rows(seed, STREAM_UNIT_NOISE, np.arange(1), n)[0],
                               noise_rows(seed, STREAM_CONCEPT_NOISE, np.arange(1), n)[0])
    assert ours == pytest.approx(theirs, abs=1e-9)
    # Near 1.0 the float32 spacing (1.19e-7) swallows most of the noise: the ones stay tied in two groups.
    noisy_ones = np.unique(np.float32(1.0) + np.float32(1e-7) * rng.random(1000).astype(np.float32))
    assert noisy_ones.tolist() == [1.0, float(np.nextafter(np.float32(1), np.float32(2)))]


def _authors_run(n: int, gamma: float, draws: int, test: str, rng: np.random.Generator) -> np.ndarray:
    """Per-draw Δs of the transcribed ``run_test_fast`` for Spearman on one ideal unit (span 2)."""
    unit = ideal_concepts([gamma], n)[:, 0]

    def spearman(concept: np.ndarray) -> float:
        return _authors_spearman(unit, concept, rng.random(n), rng.random(n))

    original = spearman(unit)  # once, before the loop
    deltas = np.empty(draws)
    positives = unit.sum()
    for draw in range(draws):
        if test == "missing":
            concept = unit * (rng.random(n) > 0.5)
        else:
            concept = np.minimum(unit + (rng.random(n) < positives / (n - positives)), 1)
        deltas[draw] = (spearman(concept) - original) / 2
    return deltas


N, GAMMA, DRAWS, RUNS = 20_000, 0.001, 100, 16


@pytest.fixture(scope="module")
def our_runs() -> list[np.ndarray]:
    return [theoretical_deltas(["spearman"], gammas=[GAMMA], n=N, draws=DRAWS, tests=["extra"], seed=seed,
                               progress=False)[0][("spearman", 0, "extra")] for seed in range(RUNS)]


@pytest.fixture(scope="module")
def their_runs() -> list[np.ndarray]:
    rng = np.random.default_rng(2025)
    return [_authors_run(N, GAMMA, DRAWS, "extra", rng) for _ in range(RUNS)]


def _check_shared_original(runs: list[np.ndarray]) -> None:
    """Each run's Decrease Acc is Φ((−mean − ε)/σ) of its own mean, and run means scatter by a whole draw's σ."""
    sigma = float(np.mean([run.std(ddof=1) for run in runs]))
    assert sigma == pytest.approx(spearman_per_draw_sd(N), rel=0.15)
    for run in runs:
        observed = float(np.mean(run < -EPSILON))
        implied = implied_decrease_acc(run.mean(), run.std(ddof=1), epsilon=EPSILON)
        assert abs(observed - implied) <= 4 * np.sqrt(implied * (1 - implied) / DRAWS) + 0.02, (observed, implied)
    means = np.array([run.mean() for run in runs])
    # The one original score moves every draw of a run together: the means' spread is σ, not σ/√draws.
    assert means.std(ddof=1) > 5 * sigma / np.sqrt(DRAWS)
    assert stats.chi2(RUNS - 1).ppf(0.001) < (RUNS - 1) * means.var(ddof=1) / sigma**2 < stats.chi2(RUNS - 1).ppf(0.999)


def test_our_theoretical_spearman_shares_one_original_score_per_run(our_runs: list[np.ndarray]) -> None:
    _check_shared_original(our_runs)


def test_the_transcribed_authors_loop_shares_one_original_score_per_run(their_runs: list[np.ndarray]) -> None:
    _check_shared_original(their_runs)


def test_ours_and_the_transcribed_loop_have_the_same_per_draw_spread(our_runs: list[np.ndarray],
                                                                      their_runs: list[np.ndarray]) -> None:
    ours = np.concatenate([run - run.mean() for run in our_runs])
    theirs = np.concatenate([run - run.mean() for run in their_runs])
    # Two-sided F test of equal variances on the within-run deviations (2 × 16 × 99 degrees of freedom).
    ratio = ours.var() / theirs.var()
    degrees = RUNS * (DRAWS - 1)
    assert stats.f(degrees, degrees).ppf(0.0005) < ratio < stats.f(degrees, degrees).ppf(0.9995)


def _spearman_cells(source: str) -> list[tuple[float, float, float]]:
    """(γ, mean Δs, Decrease Acc) of the Spearman cells at γ ≤ 0.01 whose Decrease Acc is not 0 or 1."""
    reference = published_reference(load_theoretical_reference())
    rows = reference[(reference["metric"] == "spearman") & (reference["gamma"] <= 0.01)]
    delta, accuracy = (("ref_mean_delta", "ref_decrease_acc") if source == "printed"
                       else ("notebook_mean_delta", "notebook_decrease_acc"))
    rows = rows[(rows[accuracy] > 0) & (rows[accuracy] < 1)]
    return list(zip(rows["gamma"], rows[delta], rows[accuracy], strict=True))


def _implied_interval(mean_delta: float) -> tuple[float, float]:
    """Decrease Acc implied at n = 500,000 by a mean Δs printed to 4 decimals, with 1,000 draws' binomial error."""
    sigma = spearman_per_draw_sd(500_000)
    low = implied_decrease_acc(mean_delta + 5e-5, sigma * 1.1)
    high = implied_decrease_acc(mean_delta - 5e-5, sigma * 0.9)
    slack = 4 * np.sqrt(0.25 / 1000)
    return low - slack, high + slack


def test_the_notebook_spearman_cells_are_each_one_run_of_the_shared_original_loop() -> None:
    cells = _spearman_cells("notebook")
    assert len(cells) == 5
    for gamma, mean_delta, accuracy in cells:
        low, high = _implied_interval(mean_delta)
        assert low <= accuracy <= high, (gamma, mean_delta, accuracy, low, high)


def test_the_printed_spearman_cells_at_gamma_1e4_cannot_be_one_run() -> None:
    """Printed C.3/C.4 −0.0018 beside C.1/C.2 13.3 % and 11.6 %: a mean below −ε forces Decrease Acc above ½."""
    cells = {gamma: (mean_delta, accuracy) for gamma, mean_delta, accuracy in _spearman_cells("printed")}
    assert published.TABLE_C1["spearman"].at(0.0001) == 0.133 and published.TABLE_C3["spearman"].at(0.0001) == -0.0018
    mean_delta, accuracy = cells[0.0001]
    low, _ = _implied_interval(mean_delta)
    assert accuracy < 0.5 < low
    # Any σ (any n): P(Δs_d < −ε) ≥ ½ when the mean is below −ε, since the per-draw noise is symmetric.
    assert all(implied_decrease_acc(mean_delta, sigma) > 0.5 for sigma in (1e-5, 1e-4, 1e-3, 1e-2))
