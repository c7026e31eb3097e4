"""Simulated crowd study (paper 001, Sec. 4, Setting 1): sampling curves, aggregation curves, cost factors.

Given the activations of K units and the ground-truth labels of C concepts on the probing set:

1. each unit is explained by the concept that maximises its correlation on the full data,
   t_k = argmax_t ρ(a_k, c_t^gt) (Eq. 9), and ρ_gt = ρ(a_k, c_{t_k}^gt) is the ground truth (Eq. 10);
2. a simulated study draws |S| inputs with replacement from a sampling distribution
   (:mod:`neuroneval.crowd.sampling`), has them rated by simulated raters (:mod:`neuroneval.crowd.raters`),
   aggregates the ratings (:mod:`neuroneval.crowd.aggregation`) and estimates ρ_S with Eq. 5–6 (Eq. 11);
3. the error is the Relative Correlation Error (Eq. 13), averaged over trials and units.

Two experiments: the **sampling curve** (Fig. 2a), RCE against the number of labelled inputs for each
sampling distribution (noiseless ratings by default, as in Fig. 2a); and the **aggregation curve**
(Fig. 3a, App. A.3), RCE against the cost (inputs × raters per input) for each aggregation method, noisy
raters (η = 0.13), keeping for each cost the number of raters with the lowest RCE. The **cost-reduction
factor** of a method over a baseline is the ratio of the costs at which their curves reach the same RCE,
with a bootstrap over units for its uncertainty.

Randomness: each unit's draws and ratings come from a generator seeded by (seed, experiment, sampling
method, |S|, raters, unit key), the unit key being a CRC32 of the unit id. Results therefore do not depend
on the order of units, on chunking, or on which other units are studied. Within one (|S|, raters) cell,
all aggregation methods see the same draws and ratings (common random numbers), which sharpens their
comparison. Draws of the same input within one sample share their ratings, as a real study shows each
input once.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from tqdm import tqdm

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    DEFAULT_PRIOR_CLIP,
    DEFAULT_RATER_ERROR,
    DEFAULT_UNIFORM_PRIOR,
    aggregate,
)
from neuroneval.crowd.estimator import correlation_matrix, importance_weights, is_correlation
from neuroneval.crowd.sampling import DEFAULT_EPSILON, SAMPLING_METHODS, draw_indices, sampling_distribution

#: Numbers of labelled inputs of the sampling curve.
DEFAULT_SAMPLE_SIZES = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
#: Costs (inputs × raters per input) of the aggregation curve.
DEFAULT_COSTS = (20, 50, 100, 200, 500, 1000, 2000, 5000)
#: Raters per input tried at each cost.
DEFAULT_RATER_COUNTS = (1, 2, 3, 5, 9)
#: Trials averaged per point (10 in the paper).
DEFAULT_TRIALS = 10
#: Units whose best concept correlates less than this are left out (RCE divides by ρ_gt).
DEFAULT_MIN_TRUE_CORRELATION = 0.1
#: Fewest inputs per simulated study in the aggregation curve (fewer make Eq. 5 meaningless).
MIN_INPUTS = 5
#: Largest (units × trials × draws) block held in memory at once.
_BLOCK = 2_000_000
_SAMPLING_STAGE, _AGGREGATION_STAGE = 1, 2
#: Comparisons of the summary table: (experiment, baseline, method).
DEFAULT_COMPARISONS = (
    ("sampling", "uniform", "pseudo"),
    ("sampling", "uniform", "activation"),
    ("aggregation", "majority", "bayes_pseudo"),
    ("aggregation", "bayes_uniform", "bayes_pseudo"),
    ("aggregation", "majority", "bayes_uniform"),
)


@dataclass(frozen=True)
class StudyUnits:
    """The units of a simulated study with their explanation (Eq. 9) and true correlation (Eq. 10).

    Attributes
    ----------
    unit_ids, concept_names
        Unit id and chosen concept name per kept unit.
    activations, labels
        (n, K) activations and the binary ground-truth labels of each unit's concept.
    pseudo_labels
        (n, K) pseudo-label scores of each unit's concept, or None.
    rho_true
        (K,) ground-truth correlations ρ_gt.
    unit_keys
        (K,) integer keys (CRC32 of the unit id) that seed each unit's randomness.
    """

    unit_ids: tuple[str, ...]
    concept_names: tuple[str, ...]
    activations: np.ndarray
    labels: np.ndarray
    pseudo_labels: np.ndarray | None
    rho_true: np.ndarray
    unit_keys: np.ndarray


def select_explanations(
    activations: np.ndarray,
    labels: np.ndarray,
    pseudo_labels: np.ndarray | None = None,
    *,
    unit_ids: Sequence[str] | None = None,
    concept_names: Sequence[str] | None = None,
    min_true_correlation: float = DEFAULT_MIN_TRUE_CORRELATION,
    max_units: int | None = None,
) -> StudyUnits:
    """Explain each unit by its best-correlated concept (Eq. 9) and record ρ_gt (Eq. 10).

    Parameters
    ----------
    activations
        (n, K) unit activations on the probing set.
    labels
        (n, C) binary ground-truth concept labels (class and superclass labels in the paper).
    pseudo_labels
        Optional (n, C) pseudo-label scores of the same concepts, in [0, 1].
    unit_ids, concept_names
        Names of the K columns of ``activations`` and C columns of ``labels`` (default ``"0"``, ``"1"``…).
    min_true_correlation
        Keep only units with ρ_gt >= this value (default 0.1): Eq. 13 divides by ρ_gt, so units that no
        concept explains would dominate the RCE with noise.
    max_units
        Keep at most this many units (those with the smallest unit keys, a seed-free deterministic subset
        that does not depend on the column order); None keeps all.

    Returns
    -------
    StudyUnits
    """
    a = np.asarray(activations, dtype=np.float64)
    c = np.asarray(labels, dtype=np.float64)
    if a.ndim != 2 or c.ndim != 2 or a.shape[0] != c.shape[0]:
        raise ValueError(f"need (n, K) activations and (n, C) labels with equal n, got {a.shape} and {c.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("activations contain NaN or infinite values")
    if not np.all((c == 0) | (c == 1)):
        raise ValueError("labels must be binary (0/1) ground-truth concept labels")
    p = None
    if pseudo_labels is not None:
        p = np.asarray(pseudo_labels, dtype=np.float64)
        if p.shape != c.shape:
            raise ValueError(f"pseudo_labels shape {p.shape} does not match labels shape {c.shape}")
        if not np.all(np.isfinite(p)):
            raise ValueError("pseudo_labels contain NaN or infinite values")
    units = [str(u) for u in (range(a.shape[1]) if unit_ids is None else unit_ids)]
    concepts = [str(t) for t in (range(c.shape[1]) if concept_names is None else concept_names)]
    if len(units) != a.shape[1] or len(concepts) != c.shape[1]:
        raise ValueError(f"got {len(units)} unit ids for {a.shape[1]} units and {len(concepts)} names for {c.shape[1]}")
    rho = correlation_matrix(a, c)
    best = np.argmax(rho, axis=1)
    rho_best = rho[np.arange(a.shape[1]), best]
    keys = np.array([zlib.crc32(u.encode()) for u in units], dtype=np.int64)
    keep = np.flatnonzero(rho_best >= min_true_correlation)
    if max_units is not None and keep.size > max_units:
        keep = np.sort(keep[np.argsort(keys[keep], kind="stable")[:max_units]])
    if keep.size == 0:
        raise ValueError(f"no unit reaches a best-concept correlation of {min_true_correlation}")
    chosen = best[keep]
    return StudyUnits(
        unit_ids=tuple(units[k] for k in keep),
        concept_names=tuple(concepts[t] for t in chosen),
        activations=a[:, keep],
        labels=c[:, chosen],
        pseudo_labels=None if p is None else p[:, chosen],
        rho_true=rho_best[keep],
        unit_keys=keys[keep],
    )


def _unit_generators(units: StudyUnits, rows: slice, *cell: int) -> list[np.random.Generator]:
    return [np.random.default_rng([*cell, int(key)]) for key in units.unit_keys[rows]]


def _chunks(n_units: int, per_unit: int) -> list[slice]:
    step = max(1, _BLOCK // max(per_unit, 1))
    return [slice(start, min(start + step, n_units)) for start in range(0, n_units, step)]


def _gather(matrix_t: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """``matrix_t[k, indices[k, ...]]`` for a (K, n) matrix and (K, ...) indices."""
    n_units, n = matrix_t.shape
    offsets = (np.arange(n_units) * n).reshape((n_units,) + (1,) * (indices.ndim - 1))
    return matrix_t.ravel()[indices + offsets]


def _first_occurrence(sorted_indices: np.ndarray) -> np.ndarray:
    """Position of each draw's first copy along the last axis of sorted indices."""
    size = sorted_indices.shape[-1]
    is_first = np.ones(sorted_indices.shape, dtype=bool)
    is_first[..., 1:] = sorted_indices[..., 1:] != sorted_indices[..., :-1]
    positions = np.where(is_first, np.arange(size), 0)
    return np.maximum.accumulate(positions, axis=-1)


def _distributions(units: StudyUnits, method: str, epsilon: float) -> np.ndarray:
    if method == "pseudo" and units.pseudo_labels is None:
        raise ValueError('sampling method "pseudo" needs pseudo_labels')
    return sampling_distribution(method, units.activations, units.pseudo_labels, epsilon=epsilon)


def sampling_errors(
    units: StudyUnits,
    *,
    sample_sizes: Sequence[int] = DEFAULT_SAMPLE_SIZES,
    methods: Sequence[str] = SAMPLING_METHODS,
    n_trials: int = DEFAULT_TRIALS,
    rater_error: float = 0.0,
    epsilon: float = DEFAULT_EPSILON,
    ddof: int = 1,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Per-unit relative errors of the sampling experiment (Fig. 2a).

    For each sampling method and sample size |S|, each unit draws |S| inputs ``n_trials`` times, reads
    their ground-truth labels (each flipped with probability ``rater_error``; 0 by default as in Fig. 2a)
    and estimates ρ_S with Eq. 5–6. ``progress`` shows a tqdm bar over the (method, |S|) cells.

    Returns
    -------
    dict
        ``errors``: (methods, sizes, K) relative error |ρ_S − ρ_gt|/ρ_gt averaged over trials;
        ``unique``: (methods, sizes) mean number of distinct inputs per sample;
        ``undefined``: (methods, sizes) fraction of samples whose ρ_S is undefined (constant labels; the
        estimate is then 0, a relative error of 1).
    """
    n_units = units.rho_true.size
    shape = (len(methods), len(sample_sizes))
    errors = np.zeros((*shape, n_units))
    unique, undefined = np.zeros(shape), np.zeros(shape)
    activations_t, labels_t = units.activations.T.copy(), units.labels.T.copy()
    bar = tqdm(total=len(methods) * len(sample_sizes), desc="crowd sampling curve", unit="cell", disable=not progress)
    for m_index, method in enumerate(methods):
        q = _distributions(units, method, epsilon)
        weights_t = importance_weights(q).T.copy()
        q_code = SAMPLING_METHODS.index(method)
        for s_index, size in enumerate(sample_sizes):
            for rows in _chunks(n_units, n_trials * size):
                rngs = _unit_generators(units, rows, seed, _SAMPLING_STAGE, q_code, int(size))
                draws = draw_indices(q[:, rows], (n_trials, int(size)), rngs)
                labels = _gather(labels_t[rows], draws)
                if rater_error > 0:
                    flips = np.stack([rng.random((n_trials, int(size))) for rng in rngs]) < rater_error
                    flips = np.take_along_axis(flips, _first_occurrence(draws), axis=-1)
                    labels = np.abs(labels - flips)
                estimates = is_correlation(
                    _gather(activations_t[rows], draws), labels, _gather(weights_t[rows], draws), ddof=ddof
                )
                rho = units.rho_true[rows, None]
                errors[m_index, s_index, rows] = (np.abs(estimates - rho) / rho).mean(axis=1)
                distinct = 1 + (draws[..., 1:] != draws[..., :-1]).sum(axis=-1)
                unique[m_index, s_index] += distinct.sum() / (n_units * n_trials)
                undefined[m_index, s_index] += (estimates == 0).sum() / (n_units * n_trials)
            bar.update()
    bar.close()
    return {"errors": errors, "unique": unique, "undefined": undefined}


def aggregation_errors(
    units: StudyUnits,
    *,
    costs: Sequence[int] = DEFAULT_COSTS,
    rater_counts: Sequence[int] = DEFAULT_RATER_COUNTS,
    methods: Sequence[str] = AGGREGATION_METHODS,
    sampling: str = "pseudo",
    n_trials: int = DEFAULT_TRIALS,
    rater_error: float = DEFAULT_RATER_ERROR,
    assumed_rater_error: float | None = None,
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR,
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP,
    epsilon: float = DEFAULT_EPSILON,
    ddof: int = 1,
    seed: int = 0,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """Per-unit relative errors of the aggregation experiment (Fig. 3a, App. A.3).

    For each cost and number of raters r, a study labels round(cost / r) inputs drawn from ``sampling``,
    each rated by r simulated raters with error ``rater_error``; every aggregation method turns the same
    ratings into concept values, and Eq. 5–6 gives ρ_S. Cells with fewer than :data:`MIN_INPUTS` inputs are
    NaN. ``progress`` shows a tqdm bar over the (raters, cost) cells.

    Returns
    -------
    dict
        ``errors``: (methods, raters, costs, K) relative errors averaged over trials; ``n_inputs``:
        (raters, costs) inputs per study.
    """
    if "bayes_pseudo" in methods and units.pseudo_labels is None:
        raise ValueError('aggregation method "bayes_pseudo" needs pseudo_labels')
    eta_model = rater_error if assumed_rater_error is None else assumed_rater_error
    n_units = units.rho_true.size
    n_inputs = np.array([[round(cost / r) for cost in costs] for r in rater_counts], dtype=np.int64)
    errors = np.full((len(methods), len(rater_counts), len(costs), n_units), np.nan)
    q = _distributions(units, sampling, epsilon)
    weights_t = importance_weights(q).T.copy()
    activations_t, labels_t = units.activations.T.copy(), units.labels.T.copy()
    pseudo_t = None if units.pseudo_labels is None else units.pseudo_labels.T.copy()
    q_code = SAMPLING_METHODS.index(sampling)
    bar = tqdm(total=n_inputs.size, desc="crowd aggregation curve", unit="cell", disable=not progress)
    for r_index, n_raters in enumerate(rater_counts):
        for c_index in range(len(costs)):
            bar.update()
            size = int(n_inputs[r_index, c_index])
            if size < MIN_INPUTS:
                continue
            for rows in _chunks(n_units, n_trials * size * n_raters):
                rngs = _unit_generators(units, rows, seed, _AGGREGATION_STAGE, q_code, size, int(n_raters))
                draws = draw_indices(q[:, rows], (n_trials, size), rngs)
                truth = _gather(labels_t[rows], draws)
                flips = np.stack([rng.random((n_trials, size, n_raters)) for rng in rngs]) < rater_error
                first = _first_occurrence(draws)
                flips = np.take_along_axis(flips, first[..., None], axis=-2)
                positives = (truth[..., None] != flips).sum(axis=-1)
                activations = _gather(activations_t[rows], draws)
                weights = _gather(weights_t[rows], draws)
                pseudo = None if pseudo_t is None else _gather(pseudo_t[rows], draws)
                rho = units.rho_true[rows, None]
                for m_index, method in enumerate(methods):
                    concept = aggregate(
                        method,
                        positives,
                        n_raters,
                        rater_error=eta_model,
                        uniform_prior=uniform_prior,
                        pseudo_labels=pseudo,
                        prior_clip=prior_clip,
                    )
                    estimates = is_correlation(activations, concept, weights, ddof=ddof)
                    errors[m_index, r_index, c_index, rows] = (np.abs(estimates - rho) / rho).mean(axis=1)
    bar.close()
    return {"errors": errors, "n_inputs": n_inputs}


def _envelope(errors: np.ndarray, unit_rows: np.ndarray | None = None) -> np.ndarray:
    """Best-over-raters mean-RCE curve, made non-increasing (the best RCE reachable up to each cost).

    ``errors`` is (raters, costs, K); NaN cells (too few inputs) are skipped.
    """
    selected = errors if unit_rows is None else errors[..., unit_rows]
    means = selected.mean(axis=-1)
    curve = np.where(np.isnan(means), np.inf, means).min(axis=0)
    running = np.minimum.accumulate(curve)
    return np.where(np.isfinite(running), running, np.nan)


def cost_at_rce(costs: np.ndarray, curve: np.ndarray, target: float) -> float:
    """Cost at which a non-increasing RCE curve first reaches ``target`` (log-log interpolation).

    Returns NaN when the curve never reaches ``target``, and also when it is already at or below it at the
    smallest cost (the crossing lies outside the measured range).

    Examples
    --------
    >>> round(cost_at_rce(np.array([10.0, 100.0]), np.array([0.4, 0.1]), 0.2), 6)
    31.622777
    """
    x = np.log(np.asarray(costs, dtype=np.float64))
    y = np.asarray(curve, dtype=np.float64)
    reached = np.flatnonzero(np.nan_to_num(y, nan=np.inf) <= target)
    if reached.size == 0 or reached[0] == 0 or np.isnan(y[reached[0] - 1]):
        return float("nan")
    j = reached[0]
    y0, y1 = np.log(y[j - 1]), np.log(max(y[j], 1e-300))
    fraction = 1.0 if y0 == y1 else (y0 - np.log(target)) / (y0 - y1)
    return float(np.exp(x[j - 1] + fraction * (x[j] - x[j - 1])))


def default_target_rce(baseline_curve: np.ndarray, method_curve: np.ndarray) -> float:
    """Geometric middle of the RCE range that both curves cover strictly inside their cost ranges.

    The baseline must reach the target above its smallest cost and the method must still be above it at
    its smallest cost, so the range is (max(min baseline, min method), min(baseline[0], method[0])).
    NaN when the ranges do not overlap (then no factor can be read off without extrapolation).
    """
    finite_b, finite_m = baseline_curve[np.isfinite(baseline_curve)], method_curve[np.isfinite(method_curve)]
    if finite_b.size < 2 or finite_m.size < 2:
        return float("nan")
    low = max(finite_b.min(), finite_m.min())
    high = min(finite_b[0], finite_m[0])
    if not low < high:
        return float("nan")
    return float(np.sqrt(low * high))


def cost_reduction_factor(
    costs: Sequence[float],
    baseline_errors: np.ndarray,
    method_errors: np.ndarray,
    *,
    target_rce: float | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int = 0,
) -> dict[str, float]:
    """Cost reduction of a method over a baseline at equal RCE, with a bootstrap over units.

    factor = cost_baseline(r*) / cost_method(r*), where cost_X(r*) is the cost at which X's curve first
    reaches the RCE level r* (:func:`cost_at_rce`). A curve is the mean over units of the per-unit errors,
    minimised over the number of raters at each cost (App. A.3) and made non-increasing.

    Parameters
    ----------
    costs
        (S,) increasing costs shared by both curves.
    baseline_errors, method_errors
        Per-unit relative errors, (S, K) or (raters, S, K); NaN marks cells that were not run.
    target_rce
        r*; default :func:`default_target_rce` of the two full-data curves. It stays fixed in the
        bootstrap.
    n_boot
        Bootstrap resamples of the K units (with replacement); 0 skips the interval.
    ci_level
        Coverage of the percentile interval (default 0.95).
    seed
        Seed of the unit resampling.

    Returns
    -------
    dict
        ``target_rce``, ``baseline_cost``, ``method_cost``, ``factor``, ``ci_low``, ``ci_high`` (percentile
        interval over the resamples where both curves reach r*), ``valid_boot_fraction`` (share of those
        resamples).
    """
    grid = np.asarray(costs, dtype=np.float64)
    base = np.asarray(baseline_errors, dtype=np.float64)
    new = np.asarray(method_errors, dtype=np.float64)
    base = base[None] if base.ndim == 2 else base
    new = new[None] if new.ndim == 2 else new
    n_units = base.shape[-1]
    base_curve, new_curve = _envelope(base), _envelope(new)
    target = default_target_rce(base_curve, new_curve) if target_rce is None else float(target_rce)
    base_cost = cost_at_rce(grid, base_curve, target)
    new_cost = cost_at_rce(grid, new_curve, target)
    result = {
        "target_rce": target,
        "baseline_cost": base_cost,
        "method_cost": new_cost,
        "factor": base_cost / new_cost,
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        "valid_boot_fraction": float("nan"),
    }
    if n_boot > 0 and np.isfinite(target):
        rng = np.random.default_rng([seed, 7])
        factors = np.full(n_boot, np.nan)
        for b in range(n_boot):
            rows = rng.integers(0, n_units, n_units)
            factors[b] = cost_at_rce(grid, _envelope(base, rows), target) / cost_at_rce(
                grid, _envelope(new, rows), target
            )
        valid = factors[np.isfinite(factors)]
        result["valid_boot_fraction"] = valid.size / n_boot
        if valid.size:
            tail = (1 - ci_level) / 2
            result["ci_low"], result["ci_high"] = (float(v) for v in np.quantile(valid, [tail, 1 - tail]))
    return result


def _mean_se(errors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over units (last axis) and its standard error."""
    n_units = errors.shape[-1]
    if n_units < 2:
        return errors.mean(axis=-1), np.full(errors.shape[:-1], np.nan)
    return errors.mean(axis=-1), errors.std(axis=-1, ddof=1) / np.sqrt(n_units)


def _unit_frame(
    units: StudyUnits, keys: dict[str, np.ndarray], errors: np.ndarray, **parameters: object
) -> pd.DataFrame:
    """Tidy per-unit errors: one row per cell of ``errors`` (key axes..., K), keys first, then the unit."""
    n_units = units.rho_true.size
    cells = int(np.prod([values.size for values in keys.values()]))
    grids = np.meshgrid(*keys.values(), indexing="ij")
    frame = pd.DataFrame({name: np.repeat(grid.ravel(), n_units) for name, grid in zip(keys, grids, strict=True)})
    frame["unit"] = np.tile(np.asarray(units.unit_ids, dtype=object), cells)
    frame["concept"] = np.tile(np.asarray(units.concept_names, dtype=object), cells)
    frame["rho_true"] = np.tile(units.rho_true, cells)
    frame["relative_error"] = errors.reshape(cells * n_units)
    for name, value in parameters.items():
        frame[name] = value
    return frame


def sampling_study(
    units: StudyUnits,
    *,
    sample_sizes: Sequence[int] = DEFAULT_SAMPLE_SIZES,
    methods: Sequence[str] = SAMPLING_METHODS,
    rater_error: float = 0.0,
    epsilon: float = DEFAULT_EPSILON,
    ddof: int = 1,
    n_trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sampling curve (Fig. 2a) of a simulated study: its tidy table and the per-unit errors behind it.

    Parameters are those of :func:`sampling_errors`.

    Returns
    -------
    curve_df
        One row per (method, n_inputs): ``rce`` (Eq. 13, mean over units and trials), ``rce_se`` (standard
        error over units), ``unique_inputs`` (mean distinct inputs per sample), ``undefined_fraction``, and
        the parameters (rater_error, n_units, n_trials, epsilon, ddof, seed).
    unit_df
        One row per (method, n_inputs, unit): ``concept`` (Eq. 9), ``rho_true`` (Eq. 10),
        ``relative_error`` (|ρ_S − ρ_gt|/ρ_gt averaged over trials) and the parameters; the input of
        :func:`cost_reduction_table`.
    """
    sampled = sampling_errors(
        units,
        sample_sizes=sample_sizes,
        methods=methods,
        n_trials=n_trials,
        rater_error=rater_error,
        epsilon=epsilon,
        ddof=ddof,
        seed=seed,
        progress=progress,
    )
    parameters = {"n_trials": n_trials, "epsilon": epsilon, "ddof": ddof, "seed": seed}
    rce, rce_se = _mean_se(sampled["errors"])
    curve_df = pd.DataFrame(
        [
            {
                "method": method,
                "n_inputs": int(size),
                "rce": rce[i, j],
                "rce_se": rce_se[i, j],
                "unique_inputs": sampled["unique"][i, j],
                "undefined_fraction": sampled["undefined"][i, j],
                "rater_error": rater_error,
                "n_units": units.rho_true.size,
                **parameters,
            }
            for i, method in enumerate(methods)
            for j, size in enumerate(sample_sizes)
        ]
    )
    keys = {"method": np.asarray(methods, dtype=object), "n_inputs": np.asarray(sample_sizes, dtype=np.int64)}
    unit_df = _unit_frame(units, keys, sampled["errors"], rater_error=rater_error, **parameters)
    return curve_df, unit_df


def aggregation_study(
    units: StudyUnits,
    *,
    costs: Sequence[int] = DEFAULT_COSTS,
    rater_counts: Sequence[int] = DEFAULT_RATER_COUNTS,
    methods: Sequence[str] = AGGREGATION_METHODS,
    sampling: str = "pseudo",
    rater_error: float = DEFAULT_RATER_ERROR,
    assumed_rater_error: float | None = None,
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR,
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP,
    epsilon: float = DEFAULT_EPSILON,
    ddof: int = 1,
    n_trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The aggregation curve (Fig. 3a, App. A.3) of a simulated study: its table and the per-unit errors.

    Parameters are those of :func:`aggregation_errors`.

    Returns
    -------
    curve_df
        One row per (method, cost, n_raters) that was run (at least :data:`MIN_INPUTS` inputs): ``n_inputs``,
        ``rce``, ``rce_se``, ``best`` (lowest RCE over rater counts at this cost and method), and the
        parameters.
    unit_df
        One row per (method, n_raters, cost, unit): ``n_inputs``, ``concept``, ``rho_true``,
        ``relative_error`` (empty where the cell was not run) and the parameters.
    """
    aggregated = aggregation_errors(
        units,
        costs=costs,
        rater_counts=rater_counts,
        methods=methods,
        sampling=sampling,
        n_trials=n_trials,
        rater_error=rater_error,
        assumed_rater_error=assumed_rater_error,
        uniform_prior=uniform_prior,
        prior_clip=prior_clip,
        epsilon=epsilon,
        ddof=ddof,
        seed=seed,
        progress=progress,
    )
    parameters = {
        "sampling": sampling,
        "rater_error": rater_error,
        "assumed_rater_error": rater_error if assumed_rater_error is None else assumed_rater_error,
        "uniform_prior": uniform_prior,
        "n_units": units.rho_true.size,
        "n_trials": n_trials,
        "epsilon": epsilon,
        "ddof": ddof,
        "seed": seed,
    }
    errors = aggregated["errors"]
    agg_rce, agg_se = _mean_se(errors)
    rows = []
    for i, method in enumerate(methods):
        best_r = np.argmin(np.where(np.isnan(agg_rce[i]), np.inf, agg_rce[i]), axis=0)
        for r_index, n_raters in enumerate(rater_counts):
            for c_index, cost in enumerate(costs):
                if np.isnan(agg_rce[i, r_index, c_index]):
                    continue
                rows.append(
                    {
                        "method": method,
                        "cost": int(cost),
                        "n_raters": int(n_raters),
                        "n_inputs": int(aggregated["n_inputs"][r_index, c_index]),
                        "rce": agg_rce[i, r_index, c_index],
                        "rce_se": agg_se[i, r_index, c_index],
                        "best": bool(best_r[c_index] == r_index),
                        **parameters,
                    }
                )
    curve_df = pd.DataFrame(rows)
    keys = {
        "method": np.asarray(methods, dtype=object),
        "n_raters": np.asarray(rater_counts, dtype=np.int64),
        "cost": np.asarray(costs, dtype=np.int64),
    }
    unit_df = _unit_frame(units, keys, errors, **{k: v for k, v in parameters.items() if k != "n_units"})
    n_inputs = np.broadcast_to(aggregated["n_inputs"], (len(methods), *aggregated["n_inputs"].shape))
    unit_df.insert(3, "n_inputs", np.repeat(n_inputs.ravel(), units.rho_true.size))
    return curve_df, unit_df


#: Per-unit error columns that :func:`cost_reduction_table` reads, per experiment.
UNIT_ERROR_COLUMNS = {
    "sampling": ("method", "n_inputs", "unit", "relative_error"),
    "aggregation": ("method", "n_raters", "cost", "unit", "relative_error"),
}


def _error_arrays(unit_df: pd.DataFrame, experiment: str) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Cost grid and, per method, the (raters, grid, K) errors of a per-unit table (NaN where absent)."""
    missing = [column for column in UNIT_ERROR_COLUMNS[experiment] if column not in unit_df.columns]
    if missing:
        raise ValueError(f"{experiment} per-unit errors lack column(s) {missing}")
    grid_column = "n_inputs" if experiment == "sampling" else "cost"
    frame = unit_df if experiment == "aggregation" else unit_df.assign(n_raters=1)
    unit_ids = pd.unique(frame["unit"].astype(str))
    grid = np.sort(pd.unique(frame[grid_column]))
    raters = np.sort(pd.unique(frame["n_raters"]))
    index = pd.MultiIndex.from_product([raters, grid, unit_ids], names=["n_raters", grid_column, "unit"])
    arrays = {}
    for method, rows in frame.groupby("method", sort=False):
        values = rows.assign(unit=rows["unit"].astype(str)).set_index(["n_raters", grid_column, "unit"])
        if values.index.duplicated().any():
            raise ValueError(f"{experiment} per-unit errors list a ({method}, raters, {grid_column}, unit) cell twice")
        errors = values["relative_error"].astype(np.float64).reindex(index).to_numpy()
        arrays[str(method)] = errors.reshape(raters.size, grid.size, unit_ids.size)
    return grid.astype(np.float64), arrays, unit_ids.size


def cost_reduction_table(
    sampling_units: pd.DataFrame,
    aggregation_units: pd.DataFrame,
    *,
    comparisons: Sequence[tuple[str, str, str]] = DEFAULT_COMPARISONS,
    concept_groups: Sequence[str] = (),
    target_rce: float | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Cost-reduction factors at equal RCE (:func:`cost_reduction_factor`) from per-unit error tables.

    Parameters
    ----------
    sampling_units, aggregation_units
        The ``unit_df`` of :func:`sampling_study` and :func:`aggregation_study` (or the same tables read back
        from CSV); the unit order of their first appearance fixes the bootstrap resampling.
    comparisons
        (experiment, baseline, method) triples (default :data:`DEFAULT_COMPARISONS`); triples whose methods
        are absent are skipped.
    concept_groups
        Concept-name prefixes (e.g. ``"class:"``, ``"parent:"``): each comparison is repeated on the units
        whose explanation starts with the prefix (needs a ``concept`` column), after the row for all units.
        Rare concepts gain most from importance sampling, so this shows where a factor comes from.
    target_rce, n_boot, ci_level, seed
        See :func:`cost_reduction_factor`; the target is chosen per row when None.

    Returns
    -------
    pandas.DataFrame
        One row per (comparison, unit group): experiment, baseline, method, ``unit_group`` (``"all"`` or the
        prefix), ``target_rce``, ``baseline_cost``, ``method_cost``, ``factor``, ``ci_low``, ``ci_high``,
        ``valid_boot_fraction``, ``n_units``, ``n_boot``, ``ci_level``, ``seed``. Groups without units are
        left out.
    """
    selections: list[tuple[str, pd.DataFrame, pd.DataFrame]] = [("all", sampling_units, aggregation_units)]
    for prefix in concept_groups:
        if "concept" not in sampling_units.columns or "concept" not in aggregation_units.columns:
            raise ValueError("per-unit errors need a concept column to be grouped by concept prefix")
        chosen = [
            frame[frame["concept"].astype(str).str.startswith(prefix)] for frame in (sampling_units, aggregation_units)
        ]
        if len(chosen[0]) and len(chosen[1]):
            selections.append((prefix, chosen[0], chosen[1]))
    rows = []
    for group, sampling_rows, aggregation_rows in selections:
        per_experiment = {
            "sampling": _error_arrays(sampling_rows, "sampling"),
            "aggregation": _error_arrays(aggregation_rows, "aggregation"),
        }
        for experiment, baseline, method in comparisons:
            grid, curves, n_units = per_experiment[experiment]
            if baseline not in curves or method not in curves:
                continue
            factor = cost_reduction_factor(
                grid,
                curves[baseline],
                curves[method],
                target_rce=target_rce,
                n_boot=n_boot,
                ci_level=ci_level,
                seed=seed,
            )
            rows.append(
                {
                    "experiment": experiment,
                    "baseline": baseline,
                    "method": method,
                    "unit_group": group,
                    **factor,
                    "n_units": n_units,
                    "n_boot": n_boot,
                    "ci_level": ci_level,
                    "seed": seed,
                }
            )
    return pd.DataFrame(rows)


def simulated_study_tables(
    activations: np.ndarray,
    labels: np.ndarray,
    pseudo_labels: np.ndarray | None = None,
    *,
    unit_ids: Sequence[str] | None = None,
    concept_names: Sequence[str] | None = None,
    sample_sizes: Sequence[int] = DEFAULT_SAMPLE_SIZES,
    sampling_methods: Sequence[str] = SAMPLING_METHODS,
    sampling_rater_error: float = 0.0,
    costs: Sequence[int] = DEFAULT_COSTS,
    rater_counts: Sequence[int] = DEFAULT_RATER_COUNTS,
    aggregation_methods: Sequence[str] = AGGREGATION_METHODS,
    aggregation_sampling: str = "pseudo",
    rater_error: float = DEFAULT_RATER_ERROR,
    assumed_rater_error: float | None = None,
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR,
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP,
    epsilon: float = DEFAULT_EPSILON,
    ddof: int = 1,
    n_trials: int = DEFAULT_TRIALS,
    min_true_correlation: float = DEFAULT_MIN_TRUE_CORRELATION,
    max_units: int | None = None,
    comparisons: Sequence[tuple[str, str, str]] = DEFAULT_COMPARISONS,
    target_rce: float | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Run the simulated study of paper 001 (Setting 1) and return its three result tables.

    :func:`select_explanations`, then :func:`sampling_study`, :func:`aggregation_study` and
    :func:`cost_reduction_table` (the workflow runs these as separate steps).

    Parameters
    ----------
    activations, labels, pseudo_labels, unit_ids, concept_names, min_true_correlation, max_units
        See :func:`select_explanations` (Eq. 9–10). Without ``pseudo_labels`` the ``"pseudo"`` sampling
        and ``"bayes_pseudo"`` aggregation are dropped and the aggregation study samples by activation.
    sample_sizes
        Labelled inputs per unit on the sampling curve (default 10 … 10000).
    sampling_methods
        Sampling distributions compared in Fig. 2a (default uniform, activation, pseudo).
    sampling_rater_error
        Label-flip rate of the sampling curve (default 0: noiseless labels, as in Fig. 2a).
    costs
        Costs (inputs × raters per input) on the aggregation curve (default 20 … 5000).
    rater_counts
        Raters per input tried at each cost (default 1, 2, 3, 5, 9).
    aggregation_methods
        Methods compared in Fig. 3a (default average, majority, bayes_uniform, bayes_pseudo).
    aggregation_sampling
        Sampling distribution of the aggregation study (default ``"pseudo"``, the paper's choice).
    rater_error
        η of the simulated raters (default 0.13).
    assumed_rater_error
        η assumed by the Bayes aggregation (default: ``rater_error``).
    uniform_prior
        β of Bayes with uniform prior (default 0.01).
    prior_clip
        Clip range of the pseudo-label prior (default (0.001, 0.999)).
    epsilon
        ε of the sampling distributions (default 0.001).
    ddof
        Delta degrees of freedom of Eq. 5–6 (default 1; see :mod:`neuroneval.crowd.estimator`).
    n_trials
        Simulated studies per unit and point (default 10, as in the paper).
    comparisons
        (experiment, baseline, method) triples of the summary (default :data:`DEFAULT_COMPARISONS`);
        triples whose methods were not run are skipped.
    target_rce
        RCE level at which factors are read off (default: :func:`default_target_rce` per comparison).
    n_boot, ci_level
        Bootstrap resamples of units and interval coverage for the factors (default 1000, 0.95).
    seed
        Master seed (default 0).

    Returns
    -------
    sampling_df, aggregation_df
        The ``curve_df`` of :func:`sampling_study` and :func:`aggregation_study`.
    summary_df
        :func:`cost_reduction_table`.
    """
    units = select_explanations(
        activations,
        labels,
        pseudo_labels,
        unit_ids=unit_ids,
        concept_names=concept_names,
        min_true_correlation=min_true_correlation,
        max_units=max_units,
    )
    has_pseudo = units.pseudo_labels is not None
    sampling_methods = [m for m in sampling_methods if has_pseudo or m != "pseudo"]
    aggregation_methods = [m for m in aggregation_methods if has_pseudo or m != "bayes_pseudo"]
    if aggregation_sampling == "pseudo" and not has_pseudo:
        aggregation_sampling = "activation"
    shared = {"epsilon": epsilon, "ddof": ddof, "n_trials": n_trials, "seed": seed}
    sampling_df, sampling_units = sampling_study(
        units, sample_sizes=sample_sizes, methods=sampling_methods, rater_error=sampling_rater_error, **shared
    )
    aggregation_df, aggregation_units = aggregation_study(
        units,
        costs=costs,
        rater_counts=rater_counts,
        methods=aggregation_methods,
        sampling=aggregation_sampling,
        rater_error=rater_error,
        assumed_rater_error=assumed_rater_error,
        uniform_prior=uniform_prior,
        prior_clip=prior_clip,
        **shared,
    )
    summary_df = cost_reduction_table(
        sampling_units,
        aggregation_units,
        comparisons=comparisons,
        target_rce=target_rce,
        n_boot=n_boot,
        ci_level=ci_level,
        seed=seed,
    )
    return sampling_df, aggregation_df, summary_df
