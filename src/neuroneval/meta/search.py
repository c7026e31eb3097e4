"""Validation split of units and the α/λ grid search of paper 000 Sec. 5 (DESIGN.md §4)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from neuroneval.meta.auprc import meta_auprc
from neuroneval.metrics import get_spec, score_units


def split_units(n_units: int, *, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded split of unit positions into (validation, test), each sorted.

    The validation set has ``max(1, round(val_fraction * n_units))`` units and the test set the rest; both
    must be non-empty.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    if n_units < 2:
        raise ValueError(f"a validation/test split needs at least 2 units with known concepts, got {n_units}")
    n_val = min(n_units - 1, max(1, round(val_fraction * n_units)))
    permutation = np.random.default_rng(seed).permutation(n_units)
    return np.sort(permutation[:n_val]), np.sort(permutation[n_val:])


def hyperparameter_grid(
    metric: str, *, alpha_grid: Sequence[float], lam_grid: Sequence[float]
) -> list[dict[str, float]]:
    """Every parameter combination to try for ``metric``: α for α-metrics, (α, λ) for WPMI, else ``[{}]``."""
    spec = get_spec(metric)
    grid: list[dict[str, float]] = [{}]
    if "alpha" in spec.params:
        grid = [{"alpha": float(alpha)} for alpha in alpha_grid]
    if "lam" in spec.params:
        grid = [{**point, "lam": float(lam)} for point in grid for lam in lam_grid]
    return grid


@dataclass(frozen=True)
class MetaResult:
    """Outcome of one metric on one setting: chosen parameters and validation/test meta-AUPRC."""

    metric: str
    params: Mapping[str, float]
    val_auprc: float
    test_auprc: float
    n_val_units: int
    n_test_units: int


def evaluate_metric(
    metric: str,
    activations: np.ndarray,
    concepts: np.ndarray,
    truth: np.ndarray,
    *,
    val_units: np.ndarray,
    test_units: np.ndarray,
    alpha_grid: Sequence[float],
    lam_grid: Sequence[float],
    fixed_params: Mapping[str, object],
) -> MetaResult:
    """Choose the metric's α/λ by validation meta-AUPRC, then report meta-AUPRC on the test units.

    Ties in the validation score go to the first grid point (grids are listed in ascending order). WPMI is
    linear in λ, ``s(λ) = s(0) − λ·(s(0) − s(1))``, so each α costs two score evaluations whatever the λ grid.
    ``fixed_params`` (``ties``, ``seed``, ...) are passed to every evaluation.
    """
    spec = get_spec(metric)
    higher = spec.higher_is_better
    known = truth.any(axis=1)
    val_units = val_units[known[val_units]]
    test_units = test_units[known[test_units]]
    if val_units.size == 0 or test_units.size == 0:
        raise ValueError(f"{metric}: validation and test sets both need units with a known concept")
    grid = hyperparameter_grid(metric, alpha_grid=alpha_grid, lam_grid=lam_grid)
    best_params: dict[str, float] = {}
    best_val = -math.inf
    cache: dict[tuple, np.ndarray] = {}
    for point in grid:
        scores = _scores_at(metric, activations, concepts, val_units, point, fixed_params, cache)
        val = meta_auprc(scores, truth[val_units], higher_is_better=higher)
        if val > best_val:
            best_val, best_params = val, point
    test_scores = _scores_at(metric, activations, concepts, test_units, best_params, fixed_params, {})
    test = meta_auprc(test_scores, truth[test_units], higher_is_better=higher)
    return MetaResult(metric, best_params, best_val, test, int(val_units.size), int(test_units.size))


def _scores_at(
    metric: str,
    activations: np.ndarray,
    concepts: np.ndarray,
    units: np.ndarray,
    point: Mapping[str, float],
    fixed_params: Mapping[str, object],
    cache: dict[tuple, np.ndarray],
) -> np.ndarray:
    """Scores (len(units), C) at one grid point; WPMI's λ grid reuses the λ=0 and λ=1 evaluations.

    Only the given units are scored (:func:`neuroneval.metrics.score_units`): the grid search touches the
    small validation set at every point and the test units once, at the chosen point.
    """
    if "lam" in point:
        base = {name: value for name, value in point.items() if name != "lam"}
        at_zero = _scores_at(metric, activations, concepts, units, {**base, "lam_fixed": 0.0}, fixed_params, cache)
        at_one = _scores_at(metric, activations, concepts, units, {**base, "lam_fixed": 1.0}, fixed_params, cache)
        return at_zero - point["lam"] * (at_zero - at_one)
    key = tuple(sorted(point.items()))
    if key not in cache:
        params = {("lam" if name == "lam_fixed" else name): value for name, value in point.items()}
        cache[key] = score_units(metric, activations, concepts, units, **params, **fixed_params)
    return cache[key]
