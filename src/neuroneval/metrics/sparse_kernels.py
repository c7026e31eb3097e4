"""Products of unit-side rows with sparse concept rows by one compiled pass (numpy backend).

:func:`rows_times_sparse` computes ``P[k, t] = Σ_i U[k, i]·S[t, i]`` for a unit-side matrix ``U`` (K', n) (activations,
ranks, 0/1 bits, standardized values) and a CSR concept matrix ``S`` (C', n): the concepts' values or their
binarization ``B(c)``. It reads ``U`` unit-major, four units at a time: their rows (4·n values, in L2 cache up to
n ≈ 60,000 in float64) are read once from memory, and every stored entry of ``S`` then costs one gather from each of
the four rows, accumulated in float64 in four independent sums. The work is K'·nnz(S) multiply-adds, against
K'·n·C' for a dense GEMM, and the memory traffic is one pass over ``U`` per call, where a row-by-row sparse product
(``S @ Uᵀ``, scipy) reads a whole row of ``Uᵀ`` from memory for every stored entry.

Sums of integers and half-integers below 2**53 (0/1 bits, centred ranks) are exact, so the result equals that of a
float64 GEMM bit for bit there; sums of other values differ from a GEMM only by float rounding (another order of
the same float64 additions). Units run in parallel (``numba.prange``); the kernel is compiled on its first call in
a fresh environment and cached on disk (``cache=True``).
"""

from __future__ import annotations

import numba
import numpy as np

#: Units read together: their rows share each gathered index (four independent float64 sums per entry).
UNITS_PER_PASS = 4


@numba.njit(parallel=True, cache=True)
def _rows_times_sparse(units: np.ndarray, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
                       weighted: bool, out: np.ndarray) -> None:  # pragma: no cover - compiled
    """``out[k, t] = Σ_j units[k, indices[j]]·data[j]`` over ``indptr[t] ≤ j < indptr[t + 1]`` (``data[j]`` read only
    when ``weighted``; 1 otherwise), for groups of :data:`UNITS_PER_PASS` units in parallel."""
    n_units = units.shape[0]
    n_concepts = indptr.size - 1
    groups = (n_units + UNITS_PER_PASS - 1) // UNITS_PER_PASS
    for group in numba.prange(groups):
        first = group * UNITS_PER_PASS
        last = min(first + UNITS_PER_PASS, n_units)
        if last - first == UNITS_PER_PASS:
            row0, row1, row2, row3 = units[first], units[first + 1], units[first + 2], units[first + 3]
            for t in range(n_concepts):
                sum0 = sum1 = sum2 = sum3 = 0.0
                for j in range(indptr[t], indptr[t + 1]):
                    i = indices[j]
                    weight = data[j] if weighted else 1.0
                    sum0 += np.float64(row0[i]) * weight
                    sum1 += np.float64(row1[i]) * weight
                    sum2 += np.float64(row2[i]) * weight
                    sum3 += np.float64(row3[i]) * weight
                out[first, t] = sum0
                out[first + 1, t] = sum1
                out[first + 2, t] = sum2
                out[first + 3, t] = sum3
        else:
            for k in range(first, last):
                row = units[k]
                for t in range(n_concepts):
                    total = 0.0
                    for j in range(indptr[t], indptr[t + 1]):
                        total += np.float64(row[indices[j]]) * (data[j] if weighted else 1.0)
                    out[k, t] = total


def rows_times_sparse(units: np.ndarray, sparse: object) -> np.ndarray:
    """``Σ_i units[k, i]·sparse[t, i]`` for every unit row ``k`` of ``units`` (K', n) and concept row ``t`` of the CSR
    matrix ``sparse`` (C', n): (K', C') float64 (see the module docstring). A 0/1 ``sparse`` skips the
    multiplications.

    >>> from scipy.sparse import csr_matrix
    >>> rows_times_sparse(np.array([[1.0, 2.0, 4.0]]), csr_matrix(np.array([[1.0, 0.0, 1.0], [0.0, 0.5, 0.0]])))
    array([[5., 1.]])
    """
    data = np.ascontiguousarray(sparse.data, dtype=np.float64)
    weighted = bool(np.any(data != 1.0))
    out = np.empty((units.shape[0], sparse.shape[0]), dtype=np.float64)
    if units.dtype not in (np.float32, np.float64):
        units = units.astype(np.float64)
    _rows_times_sparse(np.ascontiguousarray(units), np.ascontiguousarray(sparse.indptr, dtype=np.int64),
                       np.ascontiguousarray(sparse.indices, dtype=np.int32), data, weighted, out)
    return out
