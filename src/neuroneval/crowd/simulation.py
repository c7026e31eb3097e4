"""Simulated crowd studies of explained units (paper 001, Sec. 4, Setting 1): per-unit relative errors.

A simulated study of a unit draws |S| inputs with replacement from a sampling distribution
(:mod:`neuroneval.crowd.sampling`), has them rated by simulated raters, aggregates the ratings
(:mod:`neuroneval.crowd.aggregation`) and estimates ρ_S with Eq. 5–6 (Eq. 11); its error is the relative
correlation error |ρ_S − ρ_gt| / ρ_gt of Eq. 13, averaged over trials. :func:`sampling_errors` runs the
sampling experiment (Fig. 2a), :func:`aggregation_errors` the aggregation experiment (Fig. 3a, App. A.3).

Randomness: each unit's draws and ratings come from a generator seeded by (seed, experiment, sampling
method, |S|, raters, unit key), the unit key being a CRC32 of the unit id. Results therefore do not depend
on the order of units, on chunking, or on which other units are studied. Within one (|S|, raters) cell,
all aggregation methods see the same draws and ratings (common random numbers), which sharpens their
comparison. Draws of the same input within one sample share their ratings, as a real study shows each
input once.
"""

from __future__ import annotations

import numpy as np

from neuroneval.crowd.aggregation import aggregate
from neuroneval.crowd.estimator import importance_weights, is_correlation
from neuroneval.crowd.sampling import SAMPLING_METHODS, draw_indices, sampling_distribution
from neuroneval.crowd.study_options import AggregationOptions, SamplingOptions
from neuroneval.crowd.study_units import StudyUnits
from neuroneval.progress import progress_bar

#: Fewest inputs per simulated study in the aggregation curve (fewer make Eq. 5 meaningless).
MIN_INPUTS = 5
#: Largest (units × trials × draws) block held in memory at once.
_BLOCK = 2_000_000
_SAMPLING_STAGE, _AGGREGATION_STAGE = 1, 2


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


def sampling_errors(units: StudyUnits, options: SamplingOptions, *, progress: bool = False) -> dict[str, np.ndarray]:
    """Per-unit relative errors of the sampling experiment (Fig. 2a).

    For each sampling method and sample size |S| of ``options``, each unit draws |S| inputs ``n_trials`` times,
    reads their ground-truth labels (each flipped with probability ``rater_error``; 0 by default as in Fig. 2a)
    and estimates ρ_S with Eq. 5–6. ``progress`` shows a tqdm bar over the (method, |S|) cells.

    Returns
    -------
    dict
        ``errors``: (methods, sizes, K) relative error |ρ_S − ρ_gt|/ρ_gt averaged over trials;
        ``unique``: (methods, sizes) mean number of distinct inputs per sample;
        ``undefined``: (methods, sizes) fraction of samples whose ρ_S is undefined (constant labels; the
        estimate is then 0, a relative error of 1).
    """
    sample_sizes, methods, rater_error = options.sample_sizes, options.methods, options.rater_error
    n_trials, epsilon, ddof, seed = options.simulation.table_columns().values()
    n_units = units.rho_true.size
    shape = (len(methods), len(sample_sizes))
    errors = np.zeros((*shape, n_units))
    unique, undefined = np.zeros(shape), np.zeros(shape)
    activations_t, labels_t = units.activations.T.copy(), units.labels.T.copy()
    bar = progress_bar(total=len(methods) * len(sample_sizes), desc="crowd sampling curve", unit="cell",
                       enabled=progress)
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
    units: StudyUnits, options: AggregationOptions, *, progress: bool = False
) -> dict[str, np.ndarray]:
    """Per-unit relative errors of the aggregation experiment (Fig. 3a, App. A.3).

    For each cost and number of raters r of ``options``, a study labels round(cost / r) inputs drawn from
    ``sampling``, each rated by r simulated raters with error ``rater_error``; every aggregation method turns the same
    ratings into concept values, and Eq. 5–6 gives ρ_S. Cells with fewer than :data:`MIN_INPUTS` inputs are
    NaN. ``progress`` shows a tqdm bar over the (raters, cost) cells.

    Returns
    -------
    dict
        ``errors``: (methods, raters, costs, K) relative errors averaged over trials; ``n_inputs``:
        (raters, costs) inputs per study.
    """
    costs, rater_counts, methods, sampling = options.costs, options.rater_counts, options.methods, options.sampling
    rater_error, eta_model = options.rater_error, options.model_rater_error
    uniform_prior, prior_clip = options.uniform_prior, options.prior_clip
    n_trials, epsilon, ddof, seed = options.simulation.table_columns().values()
    if "bayes_pseudo" in methods and units.pseudo_labels is None:
        raise ValueError('aggregation method "bayes_pseudo" needs pseudo_labels')
    n_units = units.rho_true.size
    n_inputs = np.array([[round(cost / r) for cost in costs] for r in rater_counts], dtype=np.int64)
    errors = np.full((len(methods), len(rater_counts), len(costs), n_units), np.nan)
    q = _distributions(units, sampling, epsilon)
    weights_t = importance_weights(q).T.copy()
    activations_t, labels_t = units.activations.T.copy(), units.labels.T.copy()
    pseudo_t = None if units.pseudo_labels is None else units.pseudo_labels.T.copy()
    q_code = SAMPLING_METHODS.index(sampling)
    bar = progress_bar(total=n_inputs.size, desc="crowd aggregation curve", unit="cell", enabled=progress)
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
