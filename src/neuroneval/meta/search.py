"""Validation split of units and the α/λ grid search of paper 000 Sec. 5 (docs/design.md §4.4)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from neuroneval.grid_choice import GRID_TIE_RTOL, first_best_index, grid_all_tied
from neuroneval.meta.auprc import bootstrap_meta_auprc, meta_auprc, own_concept_first
from neuroneval.metrics import FeatureCache, MetricOptions, get_spec, score_grid, score_units
from neuroneval.metrics.unit_checks import TiedGridWarning


def split_units(n_units: int, *, val_fraction: float, seed: int, min_val_units: int = 1) -> tuple[np.ndarray,
                                                                                                  np.ndarray]:
    """Seeded split of unit positions into (validation, test), each sorted.

    The validation set has ``max(min_val_units, round(val_fraction * n_units))`` units, but never more than
    half of them (``n_units // 2``) and at least one; the test set has the rest. The paper's 5 % (000 Sec. 5)
    leaves 1–6 validation units on settings of 27–500 units, where the α a metric gets is noise;
    ``min_val_units`` keeps the choice sound on small settings and leaves large ones at the paper's fraction.
    """
    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must lie in (0, 1), got {val_fraction}")
    if min_val_units < 1:
        raise ValueError(f"min_val_units must be >= 1, got {min_val_units}")
    if n_units < 2:
        raise ValueError(f"a validation/test split needs at least 2 units with known concepts, got {n_units}")
    n_val = max(1, min(n_units // 2, max(min_val_units, round(val_fraction * n_units))))
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


#: Metrics that use the same prepared unit features (top-α binarizations; float64 rows; ranks), in the order a
#: meta-evaluation scores them so that a bounded :class:`~neuroneval.metrics.FeatureCache` still holds what the
#: next metric needs. Metrics not listed (combinations) come last.
FEATURE_FAMILIES: tuple[tuple[str, ...], ...] = (
    ("recall", "precision", "f1", "iou", "accuracy", "balanced_accuracy", "inverse_balanced_accuracy", "auc",
     "auprc", "wpmi"),
    ("correlation", "cosine", "mad", "correlation_tr"),
    ("inverse_auc", "inverse_auprc", "spearman", "spearman_tr"),
)


def scoring_order(metrics: Sequence[str]) -> list[str]:
    """``metrics`` grouped by :data:`FEATURE_FAMILIES` (stable within a family); results do not depend on it."""
    family = {name: index for index, names in enumerate(FEATURE_FAMILIES) for name in names}
    return sorted(metrics, key=lambda name: family.get(name, len(FEATURE_FAMILIES)))


@dataclass(frozen=True)
class MetaResult:
    """Outcome of one metric on one setting: chosen parameters and validation/test meta-AUPRC; ``grid_tied`` says
    that every grid point tied on validation (:func:`~neuroneval.grid_choice.grid_all_tied`), so the parameters are
    the first grid point by the tie rule, not the data's choice."""

    metric: str
    params: Mapping[str, float]
    val_auprc: float
    test_auprc: float
    n_val_units: int
    n_test_units: int
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    test_top1: float = float("nan")
    grid_tied: bool = False


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
    options: MetricOptions | None = None,
    cache: FeatureCache | None = None,
    n_boot: int = 0,
    ci_level: float = 0.95,
    boot_seed: int = 0,
    progress: bool = False,
) -> MetaResult:
    """Choose the metric's α/λ by validation meta-AUPRC, then report meta-AUPRC on the test units.

    Ties in the validation score go to the first grid point (grids are listed in ascending order), as in the
    authors' code, with float-sum ties counted as ties: the first point within a relative 1e-12 of the best
    validation meta-AUPRC wins (:func:`~neuroneval.grid_choice.first_best_index`), so ``0.9999999999999999`` and
    ``1.0`` tie. A grid whose points all tie gets ``grid_tied = True`` and a
    :class:`~neuroneval.metrics.unit_checks.TiedGridWarning` (:func:`warn_tied_grid`). WPMI is linear in λ, so
    the λ grid costs one extra evaluation (see :func:`_scores_on_grid`); a user metric that takes λ is scored at every
    grid point.
    ``options`` (``ties``, ``seed``, ...; shared by the metrics, each taking the fields it has,
    :meth:`~neuroneval.metrics.MetricSpec.options_from`) hold in every evaluation, the grid setting α/λ; ``cache``
    shares the units' prepared features with the other metrics scored on the same activations. With ``n_boot > 0``
    the test meta-AUPRC gets a percentile bootstrap interval over test units (:func:`bootstrap_meta_auprc`, α/λ
    fixed).
    ``progress`` shows the engine's bar for scoring calls that run longer than 2 s.
    """
    if n_boot < 0:
        raise ValueError(f"{metric}: n_boot must be >= 0 (0: no interval), got {n_boot}")
    spec = get_spec(metric)
    higher = spec.higher_is_better
    fixed = spec.options_from(MetricOptions() if options is None else options)
    known = truth.any(axis=1)
    val_units = val_units[known[val_units]]
    test_units = test_units[known[test_units]]
    if val_units.size == 0 or test_units.size == 0:
        raise ValueError(f"{metric}: validation and test sets both need units with a known concept")
    grid = hyperparameter_grid(metric, alpha_grid=alpha_grid, lam_grid=lam_grid)
    if len(grid) == 1:  # nothing to choose: score validation and test units in one call, at that one point
        units = np.concatenate([val_units, test_units])
        scores = (_scores_on_grid(metric, activations, concepts, units, grid, fixed, cache, progress)[0] if grid[0]
                  else score_units(metric, activations, concepts, units, cache=cache, progress=progress,
                                   options=fixed))
        val_scores, test_scores = scores[:val_units.size], scores[val_units.size:]
        best_params: Mapping[str, float] = grid[0]
        best_val = meta_auprc(val_scores, truth[val_units], higher_is_better=higher)
        grid_tied = False
    else:
        val_grid = _scores_on_grid(metric, activations, concepts, val_units, grid, fixed, cache, progress)
        val_auprcs = [meta_auprc(val_scores, truth[val_units], higher_is_better=higher) for val_scores in val_grid]
        grid_tied = warn_tied_grid(metric, grid, val_auprcs)
        best = first_best_index(val_auprcs)
        best_val, best_params = val_auprcs[best], grid[best]
        test_scores = _scores_on_grid(metric, activations, concepts, test_units, [best_params], fixed, cache,
                                      progress)[0]
    test = meta_auprc(test_scores, truth[test_units], higher_is_better=higher)
    low, high = (bootstrap_meta_auprc(test_scores, truth[test_units], n_boot=n_boot, seed=boot_seed, level=ci_level,
                                      higher_is_better=higher) if n_boot > 0 else (float("nan"), float("nan")))
    top1 = own_concept_first(test_scores, truth[test_units], higher_is_better=higher)
    return MetaResult(metric, best_params, best_val, test, int(val_units.size), int(test_units.size), low, high,
                      top1, grid_tied)


def warn_tied_grid(metric: str, grid: Sequence[Mapping[str, float]], val_auprcs: Sequence[float]) -> bool:
    """A :class:`~neuroneval.metrics.unit_checks.TiedGridWarning` when a grid of two or more points gives one and
    the same validation meta-AUPRC everywhere, within :data:`~neuroneval.grid_choice.GRID_TIE_RTOL` (the search
    then keeps the first point by its tie rule, a choice the data did not make); names the metric, the value and
    the grid. Returns whether it warned."""
    if not grid_all_tied(val_auprcs, rtol=GRID_TIE_RTOL):
        return False
    points = ", ".join(",".join(f"{name}={value:g}" for name, value in point.items()) for point in grid)
    warnings.warn(f"{metric}: validation meta-AUPRC is {val_auprcs[0]:.6g} at every one of the {len(grid)} grid "
                  f"points ({points}); the chosen {dict(grid[0])} is the first point, not a choice made by the data "
                  f"(more validation units or inputs may tell the points apart)", TiedGridWarning, stacklevel=3)
    return True


def _scores_on_grid(
    metric: str,
    activations: np.ndarray,
    concepts: np.ndarray,
    units: np.ndarray,
    grid: Sequence[Mapping[str, float]],
    options: MetricOptions,
    cache: FeatureCache | None = None,
    progress: bool = False,
) -> list[np.ndarray]:
    """Scores (len(units), C) at each grid point, from one :func:`neuroneval.metrics.score_grid` pass.

    WPMI is linear in λ, ``s(λ) = s(0) − λ·(s(0) − s(1))``, and its slope ``s(0) − s(1) = log mean(c_t)``
    (000 Eq. A.11) does not depend on α (:attr:`~neuroneval.metrics.MetricSpec.linear_in_lam`): λ = 0 is scored at
    every α and λ = 1 at the first α only. Any other metric is scored at every point of the grid.
    """
    if not get_spec(metric).linear_in_lam or not any("lam" in point for point in grid):
        return score_grid(metric, activations, concepts, units, grid, cache=cache, progress=progress, options=options)

    def without_lam(point: Mapping[str, float]) -> tuple[tuple[str, float], ...]:
        return tuple(sorted((name, value) for name, value in point.items() if name != "lam"))

    bases = list(dict.fromkeys(without_lam(point) for point in grid))  # the α values, in grid order
    at_zero = [{**dict(base), "lam": 0.0} for base in bases]
    # s(0) − s(1) = log mean(c_t) involves no α, so λ = 1 is scored at one α only.
    ends = [*at_zero, {**at_zero[0], "lam": 1.0}]
    scored = score_grid(metric, activations, concepts, units, ends, cache=cache, progress=progress, options=options)
    slope = scored[0] - scored[-1]
    at = dict(zip(bases, scored, strict=False))
    return [at[without_lam(point)] - point["lam"] * slope for point in grid]
