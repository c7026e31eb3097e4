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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuroneval.metrics.binarize import top_count
from neuroneval.metrics.context import (
    STREAM_TR_BINARY,
    STREAM_TR_RANDOM,
    STREAM_TR_TOP,
    ConceptChunk,
    Context,
    Pairing,
)
from neuroneval.metrics.features import ZERO_VARIANCE
from neuroneval.metrics.ranks import average_ranks, stable_ranks
from neuroneval.metrics.streams import stream_rows


def _row_keys(seed: int, stream: int, width: int, rows: np.ndarray, block_elements: int) -> np.ndarray:
    """Uniform keys (len(rows), width) for the given rows of a (n_units, width) stream (only those rows drawn)."""
    return stream_rows(seed, stream, rows, width, block_elements=block_elements)


def _top_pool(values: np.ndarray, pool: int) -> np.ndarray:
    """Input indices (K', pool) of each row's ``pool`` largest values, ties going to the lower index."""
    n = values.shape[1]
    cutoff = np.partition(values, n - pool, axis=1)[:, n - pool][:, None]
    above = values > cutoff
    tied = values == cutoff
    needed = pool - above.sum(axis=1, keepdims=True)
    chosen = above | (tied & (np.cumsum(tied, axis=1) <= needed))
    return np.nonzero(chosen)[1].reshape(values.shape[0], pool)


def _smallest_keys(keys: np.ndarray, count: int) -> np.ndarray:
    """Column positions of each row's ``count`` smallest keys, ascending by position."""
    if count == 0:
        return np.empty((keys.shape[0], 0), dtype=np.int64)
    picked = np.argpartition(keys, count - 1, axis=1)[:, :count]
    return np.sort(picked, axis=1)


def sample_indices(activations: np.ndarray, unit_rows: np.ndarray, ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """T&R sample of every unit in ``unit_rows``: (index (K', s) int64, valid (K', s) bool), host arrays."""
    params = ctx.params
    n = activations.shape[0]
    pool = top_count(params.tr_top_fraction, n)
    n_top = min(params.tr_n_top, pool)
    n_random = min(params.tr_n_random, n - n_top)
    values = ctx.host_unit_values()
    binary_rows = np.zeros(unit_rows.size, dtype=bool)
    if params.ties == "reference":
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
    """Pearson correlation along the last axis over the entries where ``valid`` (broadcast) is true."""
    be = ctx.be
    weights = be.astype(valid, be.float64)
    count = be.sum(weights, axis=-1)

    def centred(values: Any) -> tuple[Any, Any]:
        mean = be.sum(values * weights, axis=-1) / count
        constant = be.max(be.where(valid, values, -np.inf), axis=-1) == be.min(be.where(valid, values, np.inf), axis=-1)
        return (values - mean[..., None]) * weights, constant

    x_centred, x_constant = centred(x)
    y_centred, y_constant = centred(y)
    degenerate = x_constant | y_constant
    ctx.notes.check(be, degenerate, ZERO_VARIANCE + " (on the top-and-random sample)")
    norms = be.sqrt(be.sum(x_centred * x_centred, axis=-1) * be.sum(y_centred * y_centred, axis=-1))
    safe = be.where(degenerate | (norms == 0), 1.0, norms)
    result = be.where(degenerate | (norms == 0), 0.0, be.clip(be.sum(x_centred * y_centred, axis=-1) / safe, -1, 1))
    if ctx.params.ties == "reference":
        result = result * (count - 1.0) / count
    return result


def _tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing, *, rank: bool) -> Any:
    be = ctx.be
    index, valid = _samples(ctx)
    reference = ctx.params.ties == "reference"
    if rank and reference:
        unit_source, concept_source = ctx.unit_noisy_values(), chunk.noisy_values()
    else:
        unit_source, concept_source = ctx.unit_values(), chunk.values()
    unit_sample = be.take_along(unit_source, index)
    concept_sample = pairing.gather_concepts(concept_source, index)
    unit_sample, unit_valid = pairing.u3(unit_sample), pairing.u3(valid)
    if rank:
        rank_of = stable_ranks if reference else average_ranks
        unit_sample = rank_of(be, be.where(unit_valid, unit_sample, np.inf))
        concept_sample = rank_of(be, be.where(unit_valid, concept_sample, np.inf))
    return _masked_pearson(ctx, unit_sample, concept_sample, unit_valid)


def correlation_tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    return _tr(ctx, chunk, pairing, rank=False)


def spearman_tr(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    return _tr(ctx, chunk, pairing, rank=True)
