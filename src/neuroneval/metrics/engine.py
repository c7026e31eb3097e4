"""Dispatch, chunking and pair bookkeeping behind :func:`neuroneval.metrics.score` and ``score_pairs``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from neuroneval.metrics import topandrandom
from neuroneval.metrics.backend import get_backend
from neuroneval.metrics.budget import ChunkPlan, budget_bytes, compact_plan, compact_ranks_apply, plan
from neuroneval.metrics.context import (
    ALPHA_FREE_UNIT_FEATURES,
    AllPairs,
    ConceptChunk,
    Context,
    FeatureCache,
    ListedPairs,
    Params,
)
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.metric_options import MetricOptions, engine_params, restrict_options, with_point
from neuroneval.metrics.progress import progress_bar
from neuroneval.metrics.registry import MetricSpec, get_spec
from neuroneval.metrics.ties import tie_rule
from neuroneval.metrics.validation import check_inputs, check_pairs, check_units

#: Parameters a grid point of :func:`run_grid` may vary.
GRID_PARAMS = frozenset({"alpha", "lam"})

#: Most binarized unit values (grid points × units × inputs) stacked into one pass of :func:`_all_pairs`.
GRID_ELEMENTS = 2**25


def _elements_per_concept(metric: str, ctx: Context, n_units: int) -> int:
    """Largest temporary per concept of a chunk, in elements (sets the chunk size)."""
    if get_spec(metric).is_sampled:
        return max(ctx.n, 4 * n_units * topandrandom.sample_width(ctx))
    return 4 * ctx.n


def _chunk_step(metric: str, ctx: Context, chunking: ChunkPlan, n_units: int) -> int:
    """Concepts per chunk: the plan's, or (unbounded) as many as fit in ``work_elements``; never more than the
    top-and-random gathers (K'·C'·s elements) allow."""
    by_work = max(1, chunking.work_elements // _elements_per_concept(metric, ctx, n_units))
    if chunking.concept_chunk is None:
        return by_work
    return min(chunking.concept_chunk, by_work) if get_spec(metric).is_sampled else chunking.concept_chunk


def _plan(metric: str, params: Params, activations: np.ndarray, concepts: np.ndarray, n_units: int,
          cache: FeatureCache | None, backend_name: str = "numpy") -> ChunkPlan:
    """The call's :class:`~neuroneval.metrics.budget.ChunkPlan` from its ``memory_budget`` and input sizes."""
    n, n_concepts = activations.shape[0], concepts.shape[1]
    budget = budget_bytes(params.memory_budget, n, activations.shape[1], n_concepts)
    compact = compact_ranks_apply(metric, backend_name, tie_rule(params.ties).noised, n, concepts.dtype)
    return (compact_plan if compact else plan)(metric, budget, n, n_units, n_concepts,
                                               unit_room=0 if cache is None else cache.max_bytes)


def _blocks(rows: np.ndarray, size: int) -> list[np.ndarray]:
    """``rows`` cut into consecutive blocks of at most ``size``."""
    return [rows[start:start + size] for start in range(0, rows.size, size)]


def _all_pairs(metric: str, activations: np.ndarray, concepts: np.ndarray, params_list: Sequence[Params],
               device: Any, notes: Notes, unit_rows: np.ndarray, cache: FeatureCache | None = None,
               progress: bool = False, cache_source: Any = None) -> list[np.ndarray]:
    """Scores (len(unit_rows), C) of the given units against every concept, one array per entry of
    ``params_list``, unit block by unit block and, within a block, concept chunk by concept chunk.

    Block and chunk sizes come from the memory budget (:mod:`neuroneval.metrics.budget`): a block's unit features
    and a chunk's concept features with the kernel's temporaries stay within it. The entries may differ only in
    α and λ (see :func:`run_grid`). They are stacked on the unit side, as many per pass as fit in
    :data:`GRID_ELEMENTS` binarized values and the budget, so each pass reads and prepares every concept chunk
    once for all its entries and scores them with one kernel call (one GEMM of (g·K', n) by (n, C')). A block's
    raw values, ranks and noise are computed once for all its passes. Every pair's score depends only on its
    unit and concept, so the cut changes no result beyond float rounding of differently shaped GEMMs.

    A metric with a :attr:`~neuroneval.metrics.registry.MetricSpec.whole_pass` (Spearman, correlation, cosine)
    scores the call with it instead, by passes over the inputs, wherever it applies (it returns ``None`` where not;
    it reads no ``cache``, so cached and fresh calls still give the same bits).
    """
    be = get_backend(device)
    n_units, n_concepts = unit_rows.size, concepts.shape[1]
    outs = [np.empty((n_units, n_concepts), dtype=np.float64) for _ in params_list]
    if n_units == 0 or n_concepts == 0:
        return outs
    whole_pass = get_spec(metric).whole_pass
    if whole_pass is not None and len(params_list) == 1:
        if cache is not None:
            cache.view(cache_source, ())  # binds the cache to these activations, or refuses others
        with progress_bar(n_units * n_concepts, metric, enabled=progress) as bar:
            scores = whole_pass(activations, concepts, unit_rows, params_list[0], be.name, notes, bar.update)
        if scores is not None:
            outs[0][...] = scores
            return outs
    chunking = _plan(metric, params_list[0], activations, concepts, n_units, cache, be.name)
    blocks = _blocks(np.arange(n_units), chunking.unit_block)
    per_pass = max(1, min(GRID_ELEMENTS // (blocks[0].size * activations.shape[0]), chunking.grid_points))
    passes = range(0, len(params_list), per_pass)
    kernel, pairing, concept_store = get_spec(metric).kernel, AllPairs(be), {}
    with progress_bar(n_units * n_concepts * len(params_list), metric, enabled=progress) as bar:
        for positions in blocks:
            block_rows = unit_rows[positions]
            group = _group(block_rows, params_list[0], be, device)
            shared_unit_cache: Any = {} if cache is None else cache.view(cache_source, group)
            for first in passes:
                points = tuple(params_list[first:first + per_pass])
                ctx = Context(be, points[0], notes, activations, concepts, block_rows,
                              points if len(points) > 1 else (), chunking.work_elements, concept_store,
                              chunking.store_concepts, chunking.compact_ranks)
                ctx.share(shared_unit_cache, ALPHA_FREE_UNIT_FEATURES)
                step = points[0].chunk_size or _chunk_step(metric, ctx, chunking, block_rows.size)
                for start in range(0, n_concepts, step):
                    stop = min(n_concepts, start + step)
                    block = be.to_numpy(kernel(ctx, ConceptChunk(ctx, np.arange(start, stop)), pairing))
                    for offset in range(len(points)):
                        scores = block[offset * block_rows.size:(offset + 1) * block_rows.size]
                        outs[first + offset][positions[0]:positions[-1] + 1, start:stop] = scores
                    bar.update(block_rows.size * (stop - start) * len(points))
    return outs


def _group(unit_rows: np.ndarray, params: Params, be: Any, device: Any) -> tuple[Any, ...]:
    """What the units' shared features depend on: the units, tie mode, device, and the seed only where noise
    enters (reference ties)."""
    noised = tie_rule(params.ties).noised
    return unit_rows.tobytes(), params.ties, params.seed if noised else None, be.name, str(device)


def _listed_pairs(metric: str, activations: np.ndarray, concepts: np.ndarray, pairs: np.ndarray,
                  params: Params, device: Any, notes: Notes, units: np.ndarray | None = None,
                  cache: FeatureCache | None = None, progress: bool = False, cache_source: Any = None) -> np.ndarray:
    """Scores of the listed pairs, unit block by unit block (features prepared for ``units`` when given), and
    within a block in groups of pairs sorted by concept, sized by the memory budget."""
    be = get_backend(device)
    out = np.empty(pairs.shape[0], dtype=np.float64)
    if pairs.shape[0] == 0:
        return out
    if units is None:
        unit_rows, unit_positions = np.unique(pairs[:, 0], return_inverse=True)
    else:
        unit_rows = np.unique(units)
        unit_positions = np.minimum(np.searchsorted(unit_rows, pairs[:, 0]), unit_rows.size - 1)
        missing = unit_rows[unit_positions] != pairs[:, 0]
        if missing.any():
            row = int(np.flatnonzero(missing)[0])
            raise ValueError(f"pair {row} = {tuple(pairs[row].tolist())}: its unit is not among the given units")
    chunking = _plan(metric, params, activations, concepts, unit_rows.size, cache, be.name)
    kernel, concept_store = get_spec(metric).kernel, {}
    blocks = _blocks(np.arange(unit_rows.size), chunking.unit_block)
    with progress_bar(pairs.shape[0], metric, enabled=progress) as bar:
        for positions in blocks:
            in_block = np.flatnonzero((unit_positions >= positions[0]) & (unit_positions <= positions[-1]))
            block_rows = unit_rows[positions]
            ctx = Context(be, params, notes, activations, concepts, block_rows, (), chunking.work_elements,
                          concept_store)
            if cache is not None:
                ctx.share(cache.view(cache_source, _group(block_rows, params, be, device)), ALPHA_FREE_UNIT_FEATURES)
            per_pair = _elements_per_concept(metric, ctx, 1)
            step = params.chunk_size or max(1, chunking.work_elements // per_pair)
            by_concept = in_block[np.argsort(pairs[in_block, 1], kind="stable")]
            for start in range(0, by_concept.size, step):
                group = by_concept[start:start + step]
                concept_rows, concept_positions = np.unique(pairs[group, 1], return_inverse=True)
                pairing = ListedPairs(be, unit_positions[group] - positions[0], concept_positions)
                out[group] = be.to_numpy(kernel(ctx, ConceptChunk(ctx, concept_rows), pairing))
                bar.update(group.size)
    return out


def _harmonic_mean(parts: list[np.ndarray]) -> np.ndarray:
    """q / Σ 1/x_i, and 0 wherever some x_i ≤ 0 (the mean of positive numbers only)."""
    stacked = np.stack(parts)
    positive = np.all(stacked > 0, axis=0)
    safe = np.where(stacked > 0, stacked, 1.0)
    return np.where(positive, len(parts) / np.sum(1.0 / safe, axis=0), 0.0)


def run(metric: str, activations: Any, concepts: Any, pairs: Any, options: MetricOptions, *,
        units: Any = None, cache: FeatureCache | None = None, progress: bool = False,
        cache_source: Any = None) -> np.ndarray:
    """Validate, then score all pairs (``pairs is None``; only the rows of ``units`` when given) or the listed
    ones (features prepared for ``units`` when given, a superset of the pairs' units); warnings once per call;
    a progress bar when ``progress``. ``options`` are the metric's (:meth:`MetricSpec.make_options`).

    ``cache_source`` is the object a ``cache`` is bound to (:meth:`FeatureCache.view`; default ``activations``):
    the activations the caller passed, the same object on every call, while ``activations`` may be a fresh
    copy of it (a DataFrame's values, rows in ``input_id`` order)."""
    source = activations if cache_source is None else cache_source
    if pairs is None:
        return run_grid(metric, activations, concepts, units, [{}], options, cache=cache, progress=progress,
                        cache_source=source)[0]
    spec: MetricSpec = get_spec(metric)
    options = spec.make_options(options)
    activation_matrix, concept_matrix = check_inputs(activations, concepts)
    pairs = check_pairs(pairs, activation_matrix.shape[1], concept_matrix.shape[1])
    unit_set = None if units is None else check_units(units, activation_matrix.shape[1])
    parts = []
    for name in spec.components or (spec.name,):
        params, device = engine_params(restrict_options(get_spec(name).options, options))
        notes = Notes(name)
        parts.append(_listed_pairs(name, activation_matrix, concept_matrix, pairs, params, device, notes, unit_set,
                                   cache, progress, source))
        notes.emit(stacklevel=4)
    return parts[0] if len(parts) == 1 else _harmonic_mean(parts)


def run_grid(metric: str, activations: Any, concepts: Any, units: Any, points: Sequence[Mapping[str, Any]],
             options: MetricOptions, *, cache: FeatureCache | None = None,
             progress: bool = False, cache_source: Any = None) -> list[np.ndarray]:
    """Scores of the rows ``units`` (all units when ``None``) at each point: ``options`` with the point's values.
    ``cache_source`` as for :func:`run`.

    The points may set only ``alpha`` and ``lam``; everything else comes from ``options`` and is shared, which
    lets every point reuse one pass over the concepts (see :func:`_all_pairs`). Warnings once per call.
    """
    spec: MetricSpec = get_spec(metric)
    options = spec.make_options(options)
    if not points:
        raise ValueError("a parameter grid needs at least one point")
    for point in points:
        varying = sorted(set(point) - GRID_PARAMS)
        if varying:
            raise ValueError(f"grid points may set only {sorted(GRID_PARAMS)}; got {varying} (pass shared "
                             f"parameters once, outside the grid)")
    point_options = [with_point(spec.name, options, point) for point in points]
    source = activations if cache_source is None else cache_source
    activation_matrix, concept_matrix = check_inputs(activations, concepts)
    unit_rows = (np.arange(activation_matrix.shape[1]) if units is None
                 else check_units(units, activation_matrix.shape[1]))
    parts = []
    for name in spec.components or (spec.name,):
        resolved = [engine_params(restrict_options(get_spec(name).options, point)) for point in point_options]
        params_list, device = [params for params, _ in resolved], resolved[0][1]
        distinct = list(dict.fromkeys(params_list))  # a combination's part may ignore the grid's α or λ
        notes = Notes(name)
        scores = _all_pairs(name, activation_matrix, concept_matrix, distinct, device, notes, unit_rows, cache,
                            progress, source)
        parts.append([scores[distinct.index(params)] for params in params_list])
        notes.emit(stacklevel=4)
    if len(parts) == 1:
        return parts[0]
    return [_harmonic_mean([part[i] for part in parts]) for i in range(len(points))]
