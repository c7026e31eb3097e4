"""The α search keeps the first grid point among float-sum ties (issue 33): checked against average precision
in exact rational arithmetic, the authors' rule (first exact maximum) computed without floats."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from neuroneval.meta.search import evaluate_metric
from neuroneval.metrics import score
from neuroneval.metrics.unit_checks import TiedGridWarning

N_INPUTS, N_CONCEPTS = 2000, 17


def _exact_average_precision(scores: np.ndarray, truth: np.ndarray) -> Fraction:
    """Step-wise AP over distinct thresholds, Σ (ΔTP/P)·TP/(inputs at or above the threshold), in fractions."""
    flat, labels = [Fraction(float(value)) for value in scores.ravel()], truth.ravel()
    positives, above, true_above, total = int(labels.sum()), 0, 0, Fraction(0)
    for threshold in sorted(set(flat), reverse=True):
        at = [index for index, value in enumerate(flat) if value == threshold]
        gained = int(labels[at].sum())
        above, true_above = above + len(at), true_above + gained
        total += Fraction(gained, positives) * Fraction(true_above, above)
    return total


def _exact_choice(alpha_grid: tuple[float, ...], activations: np.ndarray, concepts: np.ndarray, truth: np.ndarray,
                  val_units: np.ndarray) -> tuple[float, bool]:
    """The authors' rule with exact arithmetic: the first α of largest validation AP, and whether all tie."""
    exact = [_exact_average_precision(score("precision", activations, concepts, alpha=alpha)[val_units],
                                      truth[val_units]) for alpha in alpha_grid]
    return alpha_grid[exact.index(max(exact))], len(set(exact)) == 1


def _setting(decoys: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """17 concepts of 30–78 primary positives plus 3 % random ones; units 0–16 (validation) and 17–33 (test) are
    noisy copies of them, so every α from 0.005 to 0.1 ranks the validation units perfectly: top-α precision
    is ``α·n / n_t`` at small α (17 distinct own scores: the step-wise sum gives 0.9999999999999999) and 1 once
    the top α holds the whole concept (one threshold: 1.0). ``decoys`` inputs top every unit (a poor small α)."""
    rng = np.random.default_rng(0)
    labels = np.full(N_INPUTS, -1)
    labels[: int(np.sum(30 + 3 * np.arange(N_CONCEPTS)))] = np.repeat(np.arange(N_CONCEPTS),
                                                                      30 + 3 * np.arange(N_CONCEPTS))
    labels = rng.permutation(labels)
    concepts = ((labels[:, None] == np.arange(N_CONCEPTS)) | (rng.random((N_INPUTS, N_CONCEPTS)) < 0.03))
    concepts = concepts.astype(np.float64)
    activations = np.concatenate([concepts + 0.2 * rng.random(concepts.shape),
                                  concepts + 0.2 * rng.random(concepts.shape)], axis=1)
    activations[np.flatnonzero(labels == -1)[:decoys]] = 2.0
    return activations, concepts, np.concatenate([np.eye(N_CONCEPTS, dtype=bool)] * 2)


def _search(alpha_grid: tuple[float, ...], decoys: int = 0):
    activations, concepts, truth = _setting(decoys)
    val_units, test_units = np.arange(N_CONCEPTS), np.arange(N_CONCEPTS, 2 * N_CONCEPTS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate_metric("precision", activations, concepts, truth, val_units=val_units,
                                 test_units=test_units, alpha_grid=alpha_grid, lam_grid=(0.0,))
    tied_warnings = [warning for warning in caught if issubclass(warning.category, TiedGridWarning)]
    return result, tied_warnings, _exact_choice(alpha_grid, activations, concepts, truth, val_units)


def test_a_float_sum_tie_keeps_the_first_alpha_and_flags_the_grid() -> None:
    grid = (0.005, 0.01, 0.1)
    result, tied_warnings, (exact_alpha, exact_all_tied) = _search(grid)
    assert exact_alpha == 0.005 and exact_all_tied  # every α ranks the validation units perfectly: AP = 1
    assert result.val_auprc == pytest.approx(1.0, abs=1e-15)
    assert result.params == {"alpha": exact_alpha}  # the old rule took 0.1, whose float sum came out 1.0
    assert result.grid_tied and len(tied_warnings) == 1
    assert "at every one of the 3 grid points" in str(tied_warnings[0].message)


def test_the_best_alpha_is_not_the_first_and_float_ties_behind_it_do_not_move_it() -> None:
    """Five decoy inputs top every unit: α = 0.0025 (5 inputs) selects only them and ranks badly; 0.01 and 0.1
    both rank perfectly (0.9999999999999999 vs 1.0), so the search must take 0.01 — not the first point, and
    not 0.1, which the last ulp favours."""
    grid = (0.0025, 0.01, 0.1)
    result, tied_warnings, (exact_alpha, exact_all_tied) = _search(grid, decoys=5)
    assert exact_alpha == 0.01 and not exact_all_tied
    assert result.params == {"alpha": exact_alpha}
    assert not result.grid_tied and not tied_warnings
