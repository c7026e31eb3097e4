"""Top-and-random (T&R) correlation and Spearman correlation (000 Sec. 4.3; Bills et al. 2023).

Per unit k, a sample of its inputs is drawn once per call (numpy, host, from ``seed``), and
``s(a_k, c_t)`` is the (Spearman) correlation on that sample only:

* ``tr_n_top`` inputs uniformly without replacement from the unit's top ``⌈tr_top_fraction·n⌉`` inputs
  (ties at the cutoff go to the lower input index; if the pool is smaller than ``tr_n_top`` it is taken
  whole), then
* ``tr_n_random`` inputs uniformly without replacement from the remaining inputs.

With ``ties="reference"`` a unit whose activations are all 0 or 1 uses the authors' binary variant instead:
*all* its positive inputs plus ``tr_n_random`` inputs drawn uniformly from all n (a positive may appear
twice). That is what their theoretical test ran (a tuple-indexing quirk; see the reference CSV header), and
what makes Correlation(T&R) pass the missing labels test there.

The samples are gathered into an index matrix (K, s) (padded with a validity mask for the binary variant), so
every pair is scored at once from (K, C, s) blocks; the correlation is a masked Pearson over the last axis.

All pairs of a 0/1 concept chunk in average mode (class labels; every sample is then whole, no mask) take a
sparse product instead of the (K, C, s) gathers (:func:`_tr_binary`): with x̃ the unit's sample centred (its
average ranks centred, for Spearman), p = Σ_sample c the concept's positives in the sample,
``Σ (x − x̄)(c − c̄) = Σ x̃·c`` and ``Σ (c − c̄)² = p(s − p)/s``; the average ranks of a 0/1 sample are
``(s/2)·c − p/2`` once centred, with squared norm ``p(s − p)s/4``. The concepts at each unit's s sampled
inputs are read once per unit block as whole rows of the (n, C) table, so both sums over the sample are a
(1, s)·(s, C') product per unit: K·s·C operations in all, and no (K, C, s) mask or per-pair mean.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuroneval.metrics.binarize import top_count
from neuroneval.metrics.context import (
    STREAM_TR_BINARY,
    STREAM_TR_RANDOM,
    STREAM_TR_TOP,
    AllPairs,
    ConceptChunk,
    Context,
    Pairing,
)
from neuroneval.metrics.features import ZERO_VARIANCE
from neuroneval.metrics.ranks import average_ranks
from neuroneval.metrics.streams import stream_rows


def _row_keys(seed: int, stream: int, width: int, rows: np.ndarray, block_elements: int) -> np.ndarray:
    """Uniform keys (len(rows), width) for the given rows of a (n_units, width) stream (only those rows drawn)."""
    return stream_rows(seed, stream, rows, width, block_elements=block_elements)


def _top_pool(values: np.ndarray, pool: int) -> np.ndarray:
    """Input indices (K', pool) of each row's ``pool`` largest values, ties going to the lower index.

    The cumulative count that hands the cutoff's ties out by position runs only on rows with more tied inputs
    than places left (usually none).
    """
    n = values.shape[1]
    cutoff = np.partition(values, n - pool, axis=1)[:, n - pool][:, None]
    chosen = values >= cutoff
    crowded = np.flatnonzero(chosen.sum(axis=1) > pool)
    if crowded.size:
        rows = values[crowded]
        above = rows > cutoff[crowded]
        tied = rows == cutoff[crowded]
        needed = pool - above.sum(axis=1, keepdims=True)
        chosen[crowded] = above | (tied & (np.cumsum(tied, axis=1) <= needed))
    return np.nonzero(chosen)[1].reshape(values.shape[0], pool)


#: :func:`_smallest_keys` first keeps the keys below ``CANDIDATE_FACTOR · count / n`` (uniform keys: about that many
#: times ``count`` per row) and selects among them; rows with too few candidates or a tie at the boundary fall back
#: to a selection over the whole row.
CANDIDATE_FACTOR = 4.0


def _smallest_keys(keys: np.ndarray, count: int) -> np.ndarray:
    """Column positions of each row's ``count`` smallest keys, ascending by position.

    The keys are U[0, 1) draws (2.0 marks excluded inputs), so the ``count`` smallest lie below a threshold a few
    times ``count / n``: one comparison pass finds those candidates, and the selection runs on them only — the
    same positions as a selection over the whole row, which rows without enough candidates (or with equal keys
    at the ``count``-th place) still get.
    """
    rows, n = keys.shape
    if count == 0:
        return np.empty((rows, 0), dtype=np.int64)
    out = np.empty((rows, count), dtype=np.int64)
    fallback = np.ones(rows, dtype=bool)
    if count * 2 * CANDIDATE_FACTOR < n:
        candidate = keys < CANDIDATE_FACTOR * count / n
        found = candidate.sum(axis=1)
        width = int(found.max(initial=0))
        if width >= count:
            hit_rows, hit_columns = np.nonzero(candidate)
            slots = np.arange(hit_rows.size) - (np.cumsum(found) - found)[hit_rows]
            padded = np.full((rows, width), np.inf)
            padded[hit_rows, slots] = keys[hit_rows, hit_columns]
            columns = np.zeros((rows, width), dtype=np.int64)
            columns[hit_rows, slots] = hit_columns
            kth = [count - 1, count] if width > count else [count - 1]
            ordered = np.partition(padded, kth, axis=1)
            fallback = found < count
            if width > count:
                fallback |= ordered[:, count - 1] == ordered[:, count]
            picked = np.argpartition(padded, count - 1, axis=1)[:, :count]
            out = np.take_along_axis(columns, picked, axis=1)
    if fallback.any():
        out[fallback] = np.argpartition(keys[fallback], count - 1, axis=1)[:, :count]
    return np.sort(out, axis=1)


def sample_indices(activations: np.ndarray, unit_rows: np.ndarray, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """T&R sample of every unit in ``unit_rows``: (index (K', s) int64, valid (K', s) bool), host arrays."""
    params = ctx.params
    n = activations.shape[0]
    pool = top_count(params.tr_top_fraction, n)
    n_top = min(params.tr_n_top, pool)
    n_random = min(params.tr_n_random, n - n_top)
    values = ctx.host_unit_values()
    binary_rows = np.zeros(unit_rows.size, dtype=bool)
    if ctx.ties.binary_units_sample:
        binary_rows = np.all((values == 0) | (values == 1), axis=1)

    top_keys = _row_keys(params.seed, STREAM_TR_TOP, pool, unit_rows, ctx.work_elements)
    random_keys = _row_keys(params.seed, STREAM_TR_RANDOM, n, unit_rows, ctx.work_elements)
    top = np.take_along_axis(_top_pool(values, pool), _smallest_keys(top_keys, n_top), axis=1)
    top.sort(axis=1)
    np.put_along_axis(random_keys, top, 2.0, axis=1)
    standard = np.concatenate([top, _smallest_keys(random_keys, n_random)], axis=1)
    if not binary_rows.any():
        return standard, np.ones(standard.shape, dtype=bool)

    positives = values[binary_rows] == 1
    n_positive = positives.sum(axis=1)
    binary_keys = _row_keys(params.seed, STREAM_TR_BINARY, n, unit_rows[binary_rows],
                             ctx.work_elements)
    extra = _smallest_keys(binary_keys, min(params.tr_n_random, n))
    width = max(standard.shape[1], int(n_positive.max(initial=0)) + extra.shape[1])
    index = np.zeros((unit_rows.size, width), dtype=np.int64)
    valid = np.zeros((unit_rows.size, width), dtype=bool)
    index[~binary_rows, :standard.shape[1]] = standard[~binary_rows]
    valid[~binary_rows, :standard.shape[1]] = True
    order = np.argsort(~positives, axis=1, kind="stable")[:, :width - extra.shape[1]]
    slots = np.arange(width - extra.shape[1])[None, :] < n_positive[:, None]
    binary_index = np.zeros((positives.shape[0], width), dtype=np.int64)
    binary_valid = np.zeros((positives.shape[0], width), dtype=bool)
    binary_index[:, :order.shape[1]] = np.where(slots, order, 0)
    binary_valid[:, :order.shape[1]] = slots
    # The random inputs follow the positives of each row directly.
    columns = n_positive[:, None] + np.arange(extra.shape[1])[None, :]
    np.put_along_axis(binary_index, columns, extra, axis=1)
    np.put_along_axis(binary_valid, columns, True, axis=1)
    index[binary_rows] = binary_index
    valid[binary_rows] = binary_valid
    return index, valid


def _samples(ctx: Context) -> tuple[Any, Any]:
    def compute() -> tuple[Any, Any]:
        index, valid = sample_indices(ctx.activations, ctx.unit_rows, ctx)
        return ctx.be.index(index), ctx.be.asarray(valid)

    return ctx.memo("tr_samples", compute)


def sample_width(ctx: Context) -> int:
    """Width s of the sample matrix (for chunk sizing)."""
    return int(_samples(ctx)[0].shape[-1])


def _masked_pearson(ctx: Context, x: Any, y: Any, valid: Any) -> Any:
    """Pearson correlation along the last axis over the entries where ``valid`` (broadcast) is true; an empty sample
    (a 0/1 unit without positives when ``tr_n_random`` is 0) is constant, so it scores 0 with the zero-variance note."""
    be = ctx.be
    weights = be.astype(valid, be.float64)
    count = be.sum(weights, axis=-1)
    divisor = be.where(count > 0, count, 1.0)

    def centred(values: Any) -> tuple[Any, Any]:
        mean = be.sum(values * weights, axis=-1) / divisor
        constant = be.max(be.where(valid, values, -np.inf), axis=-1) == be.min(be.where(valid, values, np.inf), axis=-1)
        return (values - mean[..., None]) * weights, constant | (count == 0)

    x_centred, x_constant = centred(x)
    y_centred, y_constant = centred(y)
    degenerate = x_constant | y_constant
    ctx.notes.check(be, degenerate, ZERO_VARIANCE + " (on the top-and-random sample)")
    norms = be.sqrt(be.sum(x_centred * x_centred, axis=-1) * be.sum(y_centred * y_centred, axis=-1))
    safe = be.where(degenerate | (norms == 0), 1.0, norms)
    result = be.where(degenerate | (norms == 0), 0.0, be.clip(be.sum(x_centred * y_centred, axis=-1) / safe, -1, 1))
    if ctx.ties.covariance_factor:
        result = be.where(count > 0, result * (count - 1.0) / divisor, result)  # an empty sample stays +0.0
    return result


def _tr_unit_side(ctx: Context, *, rank: bool) -> tuple[Any, Any, Any]:
    """Each unit's sample (average mode: no mask) centred — its average ranks for Spearman — with the norm of the
    centred sample and whether the sample is constant: ((K', s), (K',), (K',))."""
    def compute() -> tuple[Any, Any, Any]:
        be = ctx.be
        index, _ = _samples(ctx)
        values = be.take_along(ctx.unit_values(), index)
        constant = be.max(values, axis=-1) == be.min(values, axis=-1)
        if rank:
            values = average_ranks(be, values)
        centred = values - (be.sum(values, axis=-1) / values.shape[-1])[:, None]
        return centred, be.sqrt(be.sum(centred * centred, axis=-1)), constant

    return ctx.memo("tr_unit_ranks" if rank else "tr_unit_values", compute)


def _tr_binary(ctx: Context, chunk: ConceptChunk, *, rank: bool) -> Any:
    """T&R (Spearman) correlation of all pairs with a 0/1 concept chunk, average ties (module docstring):

    Pearson (000 Eq. 6 on the sample): r = Σ x̃·c / (‖x̃‖·√(p(s − p)/s));
    Spearman (000 Eq. A.9 on the sample): ρ = (s/2)·Σ r̃·c / (‖r̃‖·√(p(s − p)s/4)), r̃ the centred sample ranks;
    0 for a constant sample (unit constant, p = 0 or p = s). Result (K', C') float64.
    """
    be = ctx.be
    index, _ = _samples(ctx)
    width = int(index.shape[-1])
    centred, norms, constant = _tr_unit_side(ctx, rank=rank)

    sampled = be.astype(_sampled_concepts(ctx)[:, :, be.index(chunk.rows)], be.float64)
    positives = be.sum(sampled, axis=1)  # p for every (unit, concept): (K', C')
    products = (centred[:, None, :] @ sampled)[:, 0, :]
    if rank:
        products = products * (width / 2.0)
        spread = positives * (width - positives) * (width / 4.0)
    else:
        spread = positives * (width - positives) / width
    degenerate = constant[:, None] | (positives == 0) | (positives == width)
    ctx.notes.check(be, degenerate, ZERO_VARIANCE + " (on the top-and-random sample)")
    scale = norms[:, None] * be.sqrt(be.where(degenerate, 1.0, spread))
    degenerate = degenerate | (scale == 0)
    return be.where(degenerate, 0.0, be.clip(products / be.where(degenerate, 1.0, scale), -1.0, 1.0))


def _sampled_concepts(ctx: Context) -> Any:
    """Every concept at each unit's sampled inputs as float32, read once per unit block as whole rows of the (n, C)
    table: (K', s, C) (exact for 0/1 concepts and float32 tables)."""
    def compute() -> Any:
        be = ctx.be
        index, _ = _samples(ctx)
        host_index = be.to_numpy(index).ravel()
        rows = np.asarray(ctx.concepts[host_index], dtype=np.float32)
        return be.asarray(rows.reshape(int(index.shape[0]), int(index.shape[-1]), ctx.concepts.shape[1]))

    return ctx.memo("tr_sampled_concepts", compute)


def _concept_samples(ctx: Context, chunk: ConceptChunk, pairing: Pairing, concept_source: Any, index: Any) -> Any:
    """The chunk's concepts at each pair's sample: (K', C', s) for all pairs, (P, s) for listed ones. All pairs of a
    float32 table on the numpy backend read the sampled rows of the table (:func:`_sampled_concepts`) instead of
    gathering from the chunk's float64 rows; ``concept_source`` is read only otherwise."""
    if (isinstance(pairing, AllPairs) and ctx.be.name == "numpy" and ctx.concepts.dtype == np.float32
            and not ctx.ties.noised):
        sampled = _sampled_concepts(ctx)[:, :, chunk.rows]
        return np.ascontiguousarray(np.swapaxes(sampled, 1, 2), dtype=np.float64)
    return pairing.gather_concepts(concept_source(), index)


def _tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing, *, rank: bool) -> Any:
    be = ctx.be
    if ctx.ties.binary_closed_forms and isinstance(pairing, AllPairs) and chunk.is_binary():
        return _tr_binary(ctx, chunk, rank=rank)
    index, valid = _samples(ctx)
    if rank and ctx.ties.noised:
        unit_source, concept_source = ctx.unit_noisy_values(), chunk.noisy_values
    else:
        unit_source, concept_source = ctx.unit_values(), chunk.values
    unit_sample = be.take_along(unit_source, index)
    concept_sample = _concept_samples(ctx, chunk, pairing, concept_source, index)
    unit_sample, unit_valid = pairing.u3(unit_sample), pairing.u3(valid)
    if rank:
        unit_sample = ctx.ties.ranks(be, be.where(unit_valid, unit_sample, np.inf))
        concept_sample = ctx.ties.ranks(be, be.where(unit_valid, concept_sample, np.inf))
    return _masked_pearson(ctx, unit_sample, concept_sample, unit_valid)


def correlation_tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """correlation_tr: Pearson (000 Eq. 6) on a top-and-random sample S_k of each unit's inputs,
    Σ_{i∈S}(a − ā_S)(c − c̄_S) / √(Σ_{i∈S}(a − ā_S)² Σ_{i∈S}(c − c̄_S)²) (000 Sec. 4.3, Bills et al. 2023; the
    sample: module docstring)."""
    return _tr(ctx, chunk, pairing, rank=False)


def spearman_tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """spearman_tr: Spearman (000 Eq. A.9), Pearson of the ranks within a top-and-random sample S_k of each
    unit's inputs (000 Sec. 4.3, Bricken et al. 2023; the sample: module docstring)."""
    return _tr(ctx, chunk, pairing, rank=True)
