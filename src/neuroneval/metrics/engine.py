"""Dispatch, chunking and pair bookkeeping behind :func:`neuroneval.metrics.score` and ``score_pairs``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from neuroneval.metrics import confusion, correlation, ranking, topandrandom, wpmi_mad
from neuroneval.metrics.backend import get_backend
from neuroneval.metrics.context import WORK_ELEMENTS, AllPairs, ConceptChunk, Context, ListedPairs, Params
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.registry import COMMON_PARAMS, MetricSpec, get_spec
from neuroneval.metrics.validation import check_inputs, check_pairs, check_units, resolve_params

Kernel = Callable[[Context, ConceptChunk, Any], Any]

KERNELS: Mapping[str, Kernel] = {
    "recall": confusion.recall,
    "precision": confusion.precision,
    "f1": confusion.f1,
    "iou": confusion.iou,
    "accuracy": confusion.accuracy,
    "balanced_accuracy": confusion.balanced_accuracy,
    "inverse_balanced_accuracy": confusion.inverse_balanced_accuracy,
    "auc": ranking.auc,
    "inverse_auc": ranking.inverse_auc,
    "correlation": correlation.correlation,
    "correlation_tr": topandrandom.correlation_tr,
    "spearman": correlation.spearman,
    "spearman_tr": topandrandom.spearman_tr,
    "cosine": correlation.cosine,
    "wpmi": wpmi_mad.wpmi,
    "mad": wpmi_mad.mad,
    "auprc": ranking.auprc,
    "inverse_auprc": ranking.inverse_auprc,
}

_SAMPLED = ("correlation_tr", "spearman_tr")


def _elements_per_concept(metric: str, ctx: Context, n_units: int) -> int:
    """Largest temporary per concept of a chunk, in elements (sets the chunk size)."""
    if metric in _SAMPLED:
        return max(ctx.n, 4 * n_units * topandrandom.sample_width(ctx))
    return 4 * ctx.n


def _all_pairs(metric: str, activations: np.ndarray, concepts: np.ndarray, params: Params, device: Any,
               notes: Notes, unit_rows: np.ndarray) -> np.ndarray:
    """Scores (len(unit_rows), C) of the given units against every concept, concept block by block."""
    be = get_backend(device)
    n_units, n_concepts = unit_rows.size, concepts.shape[1]
    out = np.empty((n_units, n_concepts), dtype=np.float64)
    if n_units == 0 or n_concepts == 0:
        return out
    ctx = Context(be, params, notes, activations, concepts, unit_rows)
    kernel, pairing = KERNELS[metric], AllPairs(be)
    step = params.chunk_size or max(1, WORK_ELEMENTS // _elements_per_concept(metric, ctx, n_units))
    for start in range(0, n_concepts, step):
        rows = np.arange(start, min(n_concepts, start + step))
        out[:, rows] = be.to_numpy(kernel(ctx, ConceptChunk(ctx, rows), pairing))
    return out


def _listed_pairs(metric: str, activations: np.ndarray, concepts: np.ndarray, pairs: np.ndarray,
                  params: Params, device: Any, notes: Notes) -> np.ndarray:
    be = get_backend(device)
    out = np.empty(pairs.shape[0], dtype=np.float64)
    if pairs.shape[0] == 0:
        return out
    unit_rows, unit_positions = np.unique(pairs[:, 0], return_inverse=True)
    ctx = Context(be, params, notes, activations, concepts, unit_rows)
    kernel = KERNELS[metric]
    per_pair = _elements_per_concept(metric, ctx, 1)
    step = params.chunk_size or max(1, WORK_ELEMENTS // per_pair)
    by_concept = np.argsort(pairs[:, 1], kind="stable")
    for start in range(0, by_concept.size, step):
        group = by_concept[start:start + step]
        concept_rows, concept_positions = np.unique(pairs[group, 1], return_inverse=True)
        pairing = ListedPairs(be, unit_positions[group], concept_positions)
        out[group] = be.to_numpy(kernel(ctx, ConceptChunk(ctx, concept_rows), pairing))
    return out


def _harmonic_mean(parts: list[np.ndarray]) -> np.ndarray:
    """q / Σ 1/x_i, and 0 wherever some x_i ≤ 0 (the mean of positive numbers only)."""
    stacked = np.stack(parts)
    positive = np.all(stacked > 0, axis=0)
    safe = np.where(stacked > 0, stacked, 1.0)
    return np.where(positive, len(parts) / np.sum(1.0 / safe, axis=0), 0.0)


def run(metric: str, activations: Any, concepts: Any, pairs: Any, given: Mapping[str, Any], *,
        units: Any = None) -> np.ndarray:
    """Validate, then score all pairs (``pairs is None``; only the rows of ``units`` when given) or the listed
    ones; warnings once per call."""
    spec: MetricSpec = get_spec(metric)
    params, device = resolve_params(spec, given)
    activation_matrix, concept_matrix = check_inputs(activations, concepts)
    if pairs is not None:
        pairs = check_pairs(pairs, activation_matrix.shape[1], concept_matrix.shape[1])
    unit_rows = (np.arange(activation_matrix.shape[1]) if units is None
                 else check_units(units, activation_matrix.shape[1]))
    names = spec.components or (spec.name,)
    parts = []
    for name in names:
        if spec.components:
            accepted = set(get_spec(name).params) | set(COMMON_PARAMS)
            params_part, _ = resolve_params(get_spec(name), {k: v for k, v in given.items() if k in accepted})
        else:
            params_part = params
        notes = Notes(name)
        if pairs is None:
            parts.append(_all_pairs(name, activation_matrix, concept_matrix, params_part, device, notes, unit_rows))
        else:
            parts.append(_listed_pairs(name, activation_matrix, concept_matrix, pairs, params_part, device, notes))
        notes.emit(stacklevel=4)
    return parts[0] if len(parts) == 1 else _harmonic_mean(parts)
