"""Inverse AUPRC of all (unit, concept) pairs by a compiled kernel (numpy backend, issue 36 item 4).

Average precision of the score ``a`` (a unit's activations) against the label ``y = B(c)`` is, with tied scores one
threshold (sklearn's step-wise ``average_precision_score``, 000 App. A.3 item 11)::

    |y|·AP = Σ_{i: y_i=1} TP(a ≥ a_i) / N(a ≥ a_i)

Each unit is sorted once (shared with its other rank features). Every input ``i`` then gets a *rank key*: its place
``p_i`` in decreasing order of ``a`` (0-based, ties in any order) and ``N_i = N(a ≥ a_i)``, the end of its tie
group, so the inputs at places ``< N_i`` are exactly those with ``a ≥ a_i``. For one (unit, label) pair, with the
label's ``m`` positives listed by input:

1. mark ``p_i`` of every positive in a bitmap of ``n`` bits (one read of the unit's keys per positive);
2. count the marks before each 64-bit word (``n/64`` popcounts);
3. ``TP(a ≥ a_i)`` = the marks at places ``< N_i`` = the count before ``N_i``'s word plus the popcount of that word
   below ``N_i``; add ``TP/N_i``.

No per-pair sort and no branch on the data: ``m`` key reads, ``m`` popcounts and ``n/64`` word steps per pair, so
a call costs ≈ ``K·Σ_t |B(c_t)|`` cheap steps, the lower bound of any exact method (every (unit, positive) event is
visited once). Tied positives share ``N_i`` and so the same ``TP``, as the formula asks. Units run in parallel
(``numba.prange``) over the process's numba threads. The sums equal the sparse path's
(:func:`neuroneval.metrics.ranking._ap_sparse`) up to floating-point summation order (≈ 1e-16 relative).

The kernels are compiled by numba on their first call in a fresh environment (a few seconds) and cached on disk
(``cache=True``) for later processes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic
from scipy import sparse

from neuroneval.metrics.binarize import CONCEPT_THRESHOLD
from neuroneval.metrics.context import SHARED_PREFIX, ConceptChunk, Context
from neuroneval.metrics.features import ROW_BLOCK_ELEMENTS, unit_sorted
from neuroneval.metrics.rank_kernels import rank_keys_of_rows

#: Inputs below this fit a rank key's place and count in 16 bits each: one uint32 per (unit, input).
PACKED_INPUTS = 2**16


@intrinsic
def _popcount(typingctx: Any, word: Any) -> Any:  # pragma: no cover - compiled
    """Set bits of a uint64 (LLVM's ``ctpop``: one instruction on x86-64 and ARM)."""
    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@numba.njit(parallel=True, cache=True)
def _rank_keys(sorted_values: np.ndarray, order: np.ndarray, shift: int, keys: np.ndarray) -> None:  # pragma: no cover
    """``keys[u, i] = N(a ≥ a_i) << shift | p_i`` from each row's ascending sort (``sorted_values``, ``order``): the
    input at ascending place ``j`` has decreasing place ``n − 1 − j`` and ``N = n − (first place of its tie run)``."""
    n_units, n = order.shape
    for unit in numba.prange(n_units):
        values = sorted_values[unit]
        first = 0
        for place in range(n):
            if place > 0 and values[place] != values[place - 1]:
                first = place
            keys[unit, order[unit, place]] = ((n - first) << shift) | (n - 1 - place)


@numba.njit(cache=True, inline="always", fastmath={"reassoc", "nsz"})
def _marked_sum(marks: np.ndarray, before: np.ndarray, counts: np.ndarray, m: int) -> float:  # pragma: no cover
    """Steps 2 and 3 for one (unit, label) pair whose ``m`` positives are marked in ``marks`` and whose counts
    ``N_i`` are ``counts[:m]``: ``Σ_i TP(a ≥ a_i)/N_i``. Clears ``marks`` for the next label."""
    running = 0
    for word in range(marks.size):
        before[word] = running
        running += _popcount(marks[word])
    total = 0.0
    for offset in range(m):
        count = counts[offset]
        word = count >> 6
        below = marks[word] & ((np.uint64(1) << np.uint64(count & 63)) - np.uint64(1))
        total += (before[word] + _popcount(below)) / count
    marks[:] = 0
    return total


@numba.njit(parallel=True, cache=True, fastmath={"reassoc", "nsz"})
def _ap_sums(keys: np.ndarray, shift: int, indptr: np.ndarray, indices: np.ndarray) -> np.ndarray:  # pragma: no cover
    """``|y|·AP`` of every (unit row of ``keys``, label) pair: (S, L) float64. Label ``t``'s positives are the inputs
    ``indices[indptr[t]:indptr[t + 1]]`` (a CSR by label); see the module docstring for the three steps.

    Units go in twos: each positive's input is read once for both units of a step, whose keys and bitmaps are marked
    in the same loop (≈ 15 % fewer cycles per event than one unit at a time). An odd last unit is both units of
    its step (the same sum written twice).
    """
    n_units, n = keys.shape
    n_labels = indptr.size - 1
    out = np.zeros((n_units, n_labels))
    words = n // 64 + 1
    place_mask = (1 << shift) - 1
    widest = 0
    for label in range(n_labels):
        widest = max(widest, indptr[label + 1] - indptr[label])
    for step in numba.prange((n_units + 1) // 2):
        first_unit = 2 * step
        second_unit = min(first_unit + 1, n_units - 1)
        first_marks = np.zeros(words, np.uint64)
        second_marks = np.zeros(words, np.uint64)
        before = np.zeros(words, np.int64)
        first_counts = np.empty(widest, np.int64)
        second_counts = np.empty(widest, np.int64)
        first_keys, second_keys = keys[first_unit], keys[second_unit]
        for label in range(n_labels):
            start, stop = indptr[label], indptr[label + 1]
            if stop == start:
                continue
            for offset in range(stop - start):
                position = indices[start + offset]
                key = np.int64(first_keys[position])
                first_counts[offset] = key >> shift
                place = key & place_mask
                first_marks[place >> 6] |= np.uint64(1) << np.uint64(place & 63)
                key = np.int64(second_keys[position])
                second_counts[offset] = key >> shift
                place = key & place_mask
                second_marks[place >> 6] |= np.uint64(1) << np.uint64(place & 63)
            out[first_unit, label] = _marked_sum(first_marks, before, first_counts, stop - start)
            out[second_unit, label] = _marked_sum(second_marks, before, second_counts, stop - start)
    return out


def rank_keys(ctx: Context) -> tuple[np.ndarray, int]:
    """The units' rank keys (see the module docstring; (K', n) uint32 below :data:`PACKED_INPUTS` inputs, else
    int64) and their shift, shared like the units' other features.

    Reuses the units' kept sort (:func:`neuroneval.metrics.features.unit_sorted`) when a FeatureCache keeps
    features; otherwise one compiled radix sort per unit (:func:`neuroneval.metrics.rank_kernels.rank_keys_of_rows`,
    transients of four rows per thread) where every value is exactly float32, else the backend's sort of blocks of
    units whose transients stay within ``work_elements``. Tied inputs may take their places in another order on each
    path; the sums do not depend on it (tied positives share ``N_i``).
    """
    def compute() -> tuple[np.ndarray, int]:
        be, values = ctx.be, ctx.unit_values()
        n_units, n = values.shape
        shift = 16 if n < PACKED_INPUTS else 32
        keys = np.empty((n_units, n), dtype=np.uint32 if shift == 16 else np.int64)
        if ctx.keeps_features():
            _rank_keys(*unit_sorted(ctx), shift, keys)
            return keys, shift
        compiled = rank_keys_of_rows(be.to_numpy(values), shift)
        if compiled is not None:
            return compiled, shift
        step = max(1, ctx.work_elements // (ROW_BLOCK_ELEMENTS * max(1, n)))
        for first in range(0, n_units, step):
            rows = slice(first, min(n_units, first + step))
            _rank_keys(*be.sort_any_order(values[rows]), shift, keys[rows])
        return keys, shift

    return ctx.memo(SHARED_PREFIX + "rank_keys", compute)


def positives_by_label(label_bits: Any) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the labels' positives: ``indices[indptr[t]:indptr[t+1]]`` are the inputs (ascending) where row ``t``
    of ``label_bits`` ((L, n) 0/1, dense or a scipy CSR) is nonzero."""
    if sparse.issparse(label_bits):
        csr = sparse.csr_matrix(label_bits)
        csr.eliminate_zeros()
        csr.sort_indices()
        return csr.indptr.astype(np.int64), csr.indices.astype(np.int64)
    rows, columns = np.nonzero(np.asarray(label_bits))
    indptr = np.zeros(label_bits.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=label_bits.shape[0]), out=indptr[1:])
    return indptr, columns.astype(np.int64)


def concept_label_positives(chunk: ConceptChunk) -> tuple[np.ndarray, np.ndarray]:
    """CSR (indptr, indices) of ``B(c) = 1[c ≥ 0.5]`` of the chunk's concepts, read from the host concept table as
    0/1 bytes (no float64 copy of the chunk): the labels of :func:`inverse_ap_sums`, listed once per call
    (:meth:`ConceptChunk.per_call`; int32 positions, 4 bytes per positive, below 2**31 inputs)."""
    def compute() -> tuple[np.ndarray, np.ndarray]:
        columns = np.asarray(chunk.ctx.concepts)[:, chunk.rows]
        indptr, indices = positives_by_label(np.ascontiguousarray((columns >= CONCEPT_THRESHOLD).T))
        return indptr, indices.astype(np.int32) if chunk.ctx.n < 2**31 else indices

    return chunk.per_call("label_positives", compute)


def inverse_ap_sums(ctx: Context, label_bits: Any) -> np.ndarray:
    """``|B(c)|·AP`` of every unit of the call (score ``a``) against every label row of ``label_bits`` (``B(c)``
    of a concept chunk, (C', n), dense 0/1 or a scipy CSR, or its (indptr, indices) from
    :func:`concept_label_positives`): (K', C') float64, by :func:`_ap_sums`."""
    keys, shift = rank_keys(ctx)
    indptr, indices = label_bits if isinstance(label_bits, tuple) else positives_by_label(label_bits)
    return _ap_sums(keys, shift, indptr, indices)


def concept_ap_sums(ctx: Context, chunk: ConceptChunk, label_bits: Any) -> np.ndarray:
    """``|B(a)|·AP`` of every concept of ``chunk`` (score ``c``) against every unit-side label row of ``label_bits``
    (``B(a)``, (L, n) 0/1; a grid context stacks one block of units per point): (L, C') float64, by :func:`_ap_sums`
    with the concepts' rank keys (auprc, 000 App. A.3 item 10).

    The keys come from one compiled sort per concept (:func:`neuroneval.metrics.rank_kernels.rank_keys_of_rows`), or
    from the backend's sort when a value is not exactly float32. The labels' positives are listed once per context.
    """
    def keys() -> np.ndarray:
        values = ctx.be.to_numpy(chunk.values())
        shift = 16 if ctx.n < PACKED_INPUTS else 32
        packed = rank_keys_of_rows(values, shift)
        if packed is None:
            packed = np.empty(values.shape, dtype=np.uint32 if shift == 16 else np.int64)
            _rank_keys(*ctx.be.sort_any_order(values), shift, packed)
        return packed

    concept_keys = chunk.memo("rank_keys", keys)
    indptr, indices = ctx.memo("label_positives", lambda: positives_by_label(label_bits))
    shift = 16 if concept_keys.dtype == np.uint32 else 32
    return _ap_sums(concept_keys, shift, indptr, indices).T
