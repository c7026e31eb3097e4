"""Inverse AUPRC of all (unit, concept) pairs by one compiled walk per unit (numpy backend, issue 36 item 4).

Average precision of the score ``a`` (a unit's activations) against the label ``y = B(c)`` is, with tied scores one
threshold (sklearn's step-wise ``average_precision_score``, 000 App. A.3 item 11)::

    |y|·AP = Σ_{i: y_i=1} TP(a ≥ a_i) / N(a ≥ a_i)

Walk the inputs in decreasing order of ``a`` once per unit, keeping for every label ``t`` of the chunk its
running count ``TP_t`` of positives seen so far. A group of tied inputs at positions ``s … e−1`` (0-based, in
walking order) is one threshold with ``N = e``: first every label positive at an input of the group adds 1 to
its ``TP_t``, then every such label adds ``TP_t / e`` once per positive it has in the group (all ties share the
group's last count, as the formula asks). A group of one input needs a single pass. Labels are read from a CSR
of the chunk's positives *by input*, so one unit costs ``n + Σ_t |B(c_t)|`` steps: every exact method visits
each (unit, positive) event once, and the walk does little else (≈ 4 ns per event on one core; no gather, no
per-pair sort). Units are walked in parallel (``numba.prange``) over the process's numba threads.

The sums equal :func:`neuroneval.metrics.ranking._ap_sparse`'s up to floating-point summation order (≈ 1e-16
relative); the order of tied inputs inside a group changes nothing, so any sort of the units serves.

The kernel is compiled by numba on its first call in a fresh environment (a few seconds) and cached on disk
(``cache=True``) for later processes.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from scipy import sparse

from neuroneval.metrics.context import SHARED_PREFIX, Context
from neuroneval.metrics.features import ROW_BLOCK_ELEMENTS, unit_sorted


@numba.njit(cache=True, nogil=True)
def _walk_unit(order: np.ndarray, tied_next: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
               sums: np.ndarray, true_positives: np.ndarray) -> None:  # pragma: no cover - compiled
    """Add ``TP/N`` of every positive to ``sums[label]`` walking one unit's inputs in ``order`` (decreasing score);
    ``tied_next[j]``: the input at position ``j`` ties with the one at ``j + 1``."""
    n = order.size
    start = 0
    while start < n:
        end = start + 1
        while end < n and tied_next[end - 1]:
            end += 1
        weight = 1.0 / end
        if end == start + 1:
            item = order[start]
            for place in range(indptr[item], indptr[item + 1]):
                label = indices[place]
                count = true_positives[label] + 1.0
                true_positives[label] = count
                sums[label] += count * weight
        else:
            for position in range(start, end):
                item = order[position]
                for place in range(indptr[item], indptr[item + 1]):
                    true_positives[indices[place]] += 1.0
            for position in range(start, end):
                item = order[position]
                for place in range(indptr[item], indptr[item + 1]):
                    label = indices[place]
                    sums[label] += true_positives[label] * weight
        start = end


@numba.njit(parallel=True, cache=True)
def _walk_units(orders: np.ndarray, tied_next: np.ndarray, indptr: np.ndarray, indices: np.ndarray,
                n_labels: int) -> np.ndarray:  # pragma: no cover - compiled
    """``|y|·AP`` for every (unit row, label): (S, L) float64, one :func:`_walk_unit` per row in parallel."""
    n_units = orders.shape[0]
    out = np.zeros((n_units, n_labels))
    for unit in numba.prange(n_units):
        _walk_unit(orders[unit], tied_next[unit], indptr, indices, out[unit], np.zeros(n_labels))
    return out


def descending_walk(ctx: Context) -> tuple[np.ndarray, np.ndarray]:
    """Each unit's inputs in decreasing order of activation (int32, (K', n); ties in any order) and whether each
    position ties with the next (bool, (K', n)): 5 bytes per element, shared like the units' other features.

    Reuses the units' kept sort (:func:`neuroneval.metrics.features.unit_sorted`) when a FeatureCache keeps
    features; otherwise sorts blocks of units so that the sort's transients stay within ``work_elements``.
    """
    def compute() -> tuple[np.ndarray, np.ndarray]:
        be, values = ctx.be, ctx.unit_values()
        n_units, n = values.shape
        orders = np.empty((n_units, n), dtype=np.int32)
        tied_next = np.zeros((n_units, n), dtype=bool)
        kept = unit_sorted(ctx) if ctx.keeps_features() else None
        step = n_units if kept is not None else max(1, ctx.work_elements // (ROW_BLOCK_ELEMENTS * max(1, n)))
        for first in range(0, n_units, step):
            rows = slice(first, min(n_units, first + step))
            sorted_values, order = kept if kept is not None else be.sort_any_order(values[rows])
            if kept is not None:
                sorted_values, order = sorted_values[rows], order[rows]
            orders[rows] = order[:, ::-1]
            descending = sorted_values[:, ::-1]
            np.equal(descending[:, 1:], descending[:, :-1], out=tied_next[rows, :-1])
        return orders, tied_next

    return ctx.memo(SHARED_PREFIX + "descending_walk", compute)


def labels_by_input(label_bits: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of the labels' positives by input: ``indices[indptr[i]:indptr[i+1]]`` are the labels (rows of
    ``label_bits``, (L, n) 0/1, dense or a scipy CSR) positive at input ``i``."""
    by_input = sparse.csc_matrix(label_bits if sparse.issparse(label_bits) else np.asarray(label_bits) != 0)
    by_input.sort_indices()
    if by_input.shape[1] != n:
        raise ValueError(f"label rows have {by_input.shape[1]} inputs, expected {n}")
    return by_input.indptr.astype(np.int64), by_input.indices.astype(np.int32)


def inverse_ap_sums(ctx: Context, label_bits: Any) -> np.ndarray:
    """``|B(c)|·AP`` of every unit of the call (score ``a``) against every label row of ``label_bits`` (``B(c)``
    of a concept chunk, (C', n), dense 0/1 or a scipy CSR): (K', C') float64, by :func:`_walk_units`."""
    orders, tied_next = descending_walk(ctx)
    indptr, indices = labels_by_input(label_bits, ctx.n)
    n_labels = int(label_bits.shape[0])
    return _walk_units(orders, tied_next, indptr, indices, n_labels)
