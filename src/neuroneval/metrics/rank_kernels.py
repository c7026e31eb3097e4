"""Average ranks and AP rank keys of many rows by one sort of packed keys and one compiled pass (numpy backend).

Rows whose values are all exactly float32 (activation and concept tables are stored as float32) are sorted as one
64-bit key per element: the value's order-preserving bit pattern above its position (as
:meth:`neuroneval.metrics.backend.NumpyBackend.sort_any_order` does). The keys are built by a compiled pass, sorted
by numpy (in place), and read once by a compiled pass that finds the runs of equal values and writes each input's
result at its position, with no unpacked order/values arrays, run bounds or scatters in between:

* :func:`centred_average_ranks`: ``R(x)_i − (n + 1)/2`` with ``R`` the average rank (ties share the mean of the ranks
  they span, ``scipy.stats.rankdata``): an input whose run of equal values covers sorted places ``f…l`` (0-based) has
  ``R = (f + l)/2 + 1``. Half-integers, so the result is exactly that of
  :func:`neuroneval.metrics.ranks.average_ranks` minus ``(n + 1)/2``.
* :func:`active_rank_sums`: AUC's sums of a concept's centred ranks over each unit's active inputs, one sort per
  concept and no rank matrix written out.
* :func:`tie_firsts` / :func:`centred_ranks_from_firsts`: the same ranks kept compactly (each input's first sorted
  place of its tie run, uint16 below 2**16 inputs) and decoded, so a call sorts each concept once however many
  unit blocks read its ranks.
* :func:`rank_keys_of_rows`: the rank keys ``N(x ≥ x_i) << shift | p_i`` of :mod:`neuroneval.metrics.ap_kernel`
  (``p_i`` the place in decreasing order, ``N = n − f``) for rows that serve as AP scores.

Rows with some value that is not exactly float32 return ``None``; the caller keeps its generic path. −0.0 and 0.0
get one key, as they compare equal. Rows run in parallel (``numba.prange``); the kernels are compiled on their first
call in a fresh environment and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

#: Bits per digit of the radix sort: three passes over 32-bit keys, 2,048 counters each (in L1 cache).
DIGIT_BITS = 11
DIGITS = 3
#: Rows up to this length are sorted by insertion (the radix sort's counters would cost more than the row).
SHORT_ROW = 64
#: Most row blocks of a kernel call (each allocates its row buffers once and runs on one thread).
ROW_BLOCKS = 256


@numba.njit(cache=True)
def _sort_row(values: np.ndarray, buffers: np.ndarray,
              counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:  # pragma: no cover - compiled
    """One row's order-preserving float32 keys sorted ascending with their positions, and whether every value was
    exactly float32. A stable sort: insertion for rows up to :data:`SHORT_ROW`, else an LSD radix sort on
    :data:`DIGITS` digits, skipping a digit every key shares. ``buffers`` (4, n) uint32 and ``counts``
    (DIGITS, 2**DIGIT_BITS) int64 are the caller's scratch space."""
    n = values.size
    exact = True
    buckets = 1 << DIGIT_BITS
    keys, order = buffers[0], buffers[1]
    short = n <= SHORT_ROW
    if not short:
        counts[:] = 0
    single = np.empty(1, dtype=np.float32)
    bits = single.view(np.uint32)
    for i in range(n):
        value = np.float32(values[i])
        if value != values[i]:
            exact = False
        single[0] = value + np.float32(0.0)  # −0.0 + 0.0 = 0.0: one key for values that compare equal
        word = bits[0]
        key = ~word if word >> np.uint32(31) else word | np.uint32(0x80000000)
        if short:
            place = i
            while place > 0 and keys[place - 1] > key:
                keys[place] = keys[place - 1]
                order[place] = order[place - 1]
                place -= 1
            keys[place] = key
            order[place] = i
            continue
        keys[i] = key
        order[i] = i
        for digit in range(DIGITS):
            counts[digit, (key >> np.uint32(digit * DIGIT_BITS)) & np.uint32(buckets - 1)] += 1
    if short:
        return keys, order, exact
    source_keys, source_order, target_keys, target_order = keys, order, buffers[2], buffers[3]
    for digit in range(DIGITS):
        shift = np.uint32(digit * DIGIT_BITS)
        if counts[digit, (source_keys[0] >> shift) & np.uint32(buckets - 1)] == n:
            continue
        running = 0
        for bucket in range(buckets):  # counts become each bucket's next free place
            count = counts[digit, bucket]
            counts[digit, bucket] = running
            running += count
        for i in range(n):
            key = source_keys[i]
            bucket = (key >> shift) & np.uint32(buckets - 1)
            target_keys[counts[digit, bucket]] = key
            target_order[counts[digit, bucket]] = source_order[i]
            counts[digit, bucket] += 1
        source_keys, source_order, target_keys, target_order = target_keys, target_order, source_keys, source_order
    return source_keys, source_order, exact


@numba.njit(cache=True)
def _fill_centred_ranks(keys: np.ndarray, order: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[order[p]] = (f + l)/2 − (n − 1)/2`` for the sorted place ``p`` of a run of equal ``keys`` at ``f…l``."""
    n = keys.size
    centre = (n - 1) / 2.0
    first = 0
    while first < n:
        last = first
        while last + 1 < n and keys[last + 1] == keys[first]:
            last += 1
        rank = (first + last) * 0.5 - centre
        for place in range(first, last + 1):
            out[order[place]] = rank
        first = last + 1


@numba.njit(parallel=True, cache=True)
def _centred_ranks(values: np.ndarray, out: np.ndarray) -> bool:  # pragma: no cover - compiled
    """``out[r, i] = (f + l)/2 − (n − 1)/2`` for input ``i`` whose run of equal values spans sorted places ``f…l``;
    False when some value is not exactly float32 (``out`` is then incomplete)."""
    rows, n = values.shape
    blocks = min(rows, ROW_BLOCKS)
    exact = np.ones(blocks, dtype=np.bool_)
    for block in numba.prange(blocks):
        buffers = np.empty((4, n), dtype=np.uint32)
        counts = np.empty((DIGITS, 1 << DIGIT_BITS), dtype=np.int64)
        for row in range(block * rows // blocks, (block + 1) * rows // blocks):
            keys, order, row_exact = _sort_row(values[row], buffers, counts)
            exact[block] &= row_exact
            _fill_centred_ranks(keys, order, out[row])
    return bool(exact.all())


@numba.njit(parallel=True, cache=True)
def _active_rank_sums(values: np.ndarray, index: np.ndarray, weights: np.ndarray,
                      out: np.ndarray) -> bool:  # pragma: no cover - compiled
    """``out[k, t] = Σ_j weights[k, j]·R'(values[t])[index[k, j]]``, ``R'`` the centred average ranks of row ``t``
    (kept in one row buffer per thread, never written out); False as for :func:`_centred_ranks`."""
    rows, n = values.shape
    labels, width = index.shape
    blocks = min(rows, ROW_BLOCKS)
    exact = np.ones(blocks, dtype=np.bool_)
    for block in numba.prange(blocks):
        buffers = np.empty((4, n), dtype=np.uint32)
        counts = np.empty((DIGITS, 1 << DIGIT_BITS), dtype=np.int64)
        ranks = np.empty(n, dtype=np.float64)
        for row in range(block * rows // blocks, (block + 1) * rows // blocks):
            keys, order, row_exact = _sort_row(values[row], buffers, counts)
            exact[block] &= row_exact
            _fill_centred_ranks(keys, order, ranks)
            for label in range(labels):
                total = 0.0
                for j in range(width):
                    total += weights[label, j] * ranks[index[label, j]]
                out[label, row] = total
    return bool(exact.all())


@numba.njit(parallel=True, cache=True)
def _tie_walk(values: np.ndarray, shift: int, out: np.ndarray) -> bool:  # pragma: no cover - compiled
    """For input ``i`` at ascending sorted ``place`` whose run of equal values starts at ``f``: with ``shift`` ≥ 0
    the AP rank key ``out[r, i] = (n − f) << shift | (n − 1 − place)``
    (:func:`neuroneval.metrics.ap_kernel._rank_keys`), with ``shift`` < 0 the run's first place ``out[r, i] = f``;
    False as for :func:`_centred_ranks`."""
    rows, n = values.shape
    blocks = min(rows, ROW_BLOCKS)
    exact = np.ones(blocks, dtype=np.bool_)
    for block in numba.prange(blocks):
        buffers = np.empty((4, n), dtype=np.uint32)
        counts = np.empty((DIGITS, 1 << DIGIT_BITS), dtype=np.int64)
        for row in range(block * rows // blocks, (block + 1) * rows // blocks):
            keys, order, row_exact = _sort_row(values[row], buffers, counts)
            exact[block] &= row_exact
            first = 0
            for place in range(n):
                if place > 0 and keys[place] != keys[place - 1]:
                    first = place
                if shift < 0:
                    out[row, order[place]] = first
                else:
                    out[row, order[place]] = ((n - first) << shift) | (n - 1 - place)
    return bool(exact.all())


@numba.njit(parallel=True, cache=True)
def _ranks_from_firsts(firsts: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[r, i] = f + (g − 1)/2 − (n − 1)/2`` for ``f = firsts[r, i]`` and ``g`` the inputs of row ``r`` sharing
    that ``f`` (the run's length): the centred average rank, ``(f + l)/2 − (n − 1)/2`` with ``l = f + g − 1``."""
    rows, n = firsts.shape
    centre = (n - 1) / 2.0
    blocks = min(rows, ROW_BLOCKS)
    for block in numba.prange(blocks):
        lengths = np.empty(n, dtype=np.uint16)  # a run has at most n < 2**16 inputs
        for row in range(block * rows // blocks, (block + 1) * rows // blocks):
            lengths[:] = 0
            for i in range(n):
                lengths[firsts[row, i]] += 1
            for i in range(n):
                first = firsts[row, i]
                out[row, i] = first + (np.int64(lengths[first]) - 1) * 0.5 - centre


def _rows(values: np.ndarray) -> np.ndarray | None:
    """``values`` as C-contiguous float rows (R, n), or ``None`` when the kernels do not apply."""
    n = values.shape[-1] if values.ndim else 0
    if values.ndim == 0 or n == 0 or n >= 2**31 or values.dtype.kind != "f":
        return None
    return np.ascontiguousarray(values.reshape(-1, n))


def centred_average_ranks(values: np.ndarray) -> np.ndarray | None:
    """Average ranks minus (n + 1)/2 along the last axis (float64, any leading shape), or ``None`` when some value
    is not exactly float32 (see the module docstring).

    >>> centred_average_ranks(np.array([[0.5, 0.0, 0.5, 1.0]], dtype=np.float32))
    array([[ 0. , -1.5,  0. ,  1.5]])
    """
    rows = _rows(values)
    if rows is None:
        return None
    out = np.empty(rows.shape, dtype=np.float64)
    return out.reshape(values.shape) if _centred_ranks(rows, out) else None


def rank_keys_of_rows(values: np.ndarray, shift: int) -> np.ndarray | None:
    """AP rank keys of every row of ``values`` (R, n) (uint32 for ``shift`` 16, else int64), or ``None`` when some
    value is not exactly float32 (see the module docstring)."""
    rows = _rows(values)
    if rows is None:
        return None
    out = np.empty(rows.shape, dtype=np.uint32 if shift == 16 else np.int64)
    return out if _tie_walk(rows, shift, out) else None


def active_rank_sums(values: np.ndarray, index: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
    """``Σ_j weights[k, j]·R'(c_t)[index[k, j]]`` for every label row ``k`` of (index, weights) ((L, m): the active
    inputs of each unit, padded with weight 0) and every row ``c_t`` of ``values`` (C', n), ``R'`` the centred average
    ranks: (L, C') float64, the AUC rank sums of :func:`neuroneval.metrics.ranking.auc` with one sort per concept and
    no (C', n) rank matrix; ``None`` when some value is not exactly float32. The sums of half-integers are exact.
    """
    rows = _rows(values)
    if rows is None:
        return None
    out = np.empty((index.shape[0], rows.shape[0]), dtype=np.float64)
    ok = _active_rank_sums(rows, np.ascontiguousarray(index, dtype=np.int64),
                           np.ascontiguousarray(weights, dtype=np.float64), out)
    return out if ok else None


def tie_firsts(values: np.ndarray) -> np.ndarray | None:
    """Each input's first sorted place of its run of equal values, uint16 (R, n) for n < 2**16: the compact form of
    the average ranks (:func:`centred_ranks_from_firsts`); ``None`` when some value is not exactly float32.

    >>> tie_firsts(np.array([[0.5, 0.0, 0.5, 1.0]], dtype=np.float32))
    array([[1, 0, 1, 3]], dtype=uint16)
    """
    rows = _rows(values)
    if rows is None or rows.shape[1] >= 2**16:
        return None
    out = np.empty(rows.shape, dtype=np.uint16)
    return out if _tie_walk(rows, -1, out) else None


def centred_ranks_from_firsts(firsts: np.ndarray) -> np.ndarray:
    """The centred average ranks (float64, as :func:`centred_average_ranks`) of rows given by :func:`tie_firsts`.

    >>> centred_ranks_from_firsts(np.array([[1, 0, 1, 3]], dtype=np.uint16))
    array([[ 0. , -1.5,  0. ,  1.5]])
    """
    out = np.empty(firsts.shape, dtype=np.float64)
    _ranks_from_firsts(np.ascontiguousarray(firsts), out)
    return out
