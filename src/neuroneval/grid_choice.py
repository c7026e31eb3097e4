"""The tie rule of every hyperparameter search: the first grid point among those that tie with the best.

A search scores each point of a grid (α, λ, a number of raters, …) and keeps the best one; the authors' code
keeps the *first* best point (``if val > best_val``, ``np.argmax``). With exact arithmetic that is a rule about
real ties; with floats it is not: two grid points that both rank the validation units perfectly can give an
average precision of ``0.9999999999999999`` and ``1.0`` — the same sum added in another order — and the last
ulp then picks the point. Here two values tie when

.. math:: |v_i - v_j| \\le \\mathrm{rtol} \\cdot \\max(|v_i|, |v_j|), \\qquad \\mathrm{rtol} = 10^{-12}
          \\ (:data:`GRID_TIE_RTOL`),

and a search keeps the first point whose value ties with the best value ``v*`` (the largest, or the smallest
when lower is better): ``i* = min{i : |v_i − v*| ≤ rtol·max(|v_i|, |v*|)}``. The tolerance is chosen so that
float-sum ties are ties and real differences are not: a sum of ``m`` terms of size ≤ 1 in float64 is off by at
most ~``m·2⁻⁵³ ≈ m·1.1e-16``, below 1e-12 for up to ~10⁴ terms, while the smallest real change of an average
precision (one positive moving one place among ``N`` scored pairs with ``P`` positives) is ≥ ``1/(P·N)``, above
1e-12 for any ``P·N < 10¹²`` — far beyond the pairs a validation split holds. Values are compared relative to
their size, so a mean relative error near 0 ties only with values as small as itself.

A grid whose points all tie (:func:`grid_all_tied`) cannot be told apart by the data: the first point is then
the tie rule's choice, not the data's, and the search says so (a warning and a ``grid_tied`` column).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: Relative tolerance of a tie between two grid values (module docstring): float-sum noise, not a real difference.
GRID_TIE_RTOL = 1e-12


def _values(values: Sequence[float] | np.ndarray, *, higher_is_better: bool) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"a grid search needs a non-empty 1-d sequence of values, got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError(f"grid values must not be NaN (positions {np.flatnonzero(np.isnan(array)).tolist()[:5]}); "
                         "leave out the points that were not scored")
    return array if higher_is_better else -array


def tied_with_best(values: Sequence[float] | np.ndarray, *, higher_is_better: bool = True,
                   rtol: float = GRID_TIE_RTOL) -> np.ndarray:
    """Boolean mask of the grid values that tie with the best one (module docstring's rule).

    >>> tied_with_best([0.5, 0.9999999999999999, 1.0]).tolist()
    [False, True, True]
    >>> tied_with_best([0.3, 0.1 + 0.2, 0.4], higher_is_better=False).tolist()  # 0.30000000000000004 ties
    [True, True, False]
    """
    if rtol < 0:
        raise ValueError(f"rtol must be >= 0, got {rtol}")
    array = _values(values, higher_is_better=higher_is_better)
    best = array.max()
    if np.isinf(best):
        return array == best
    with np.errstate(invalid="ignore"):  # an infinite value (a point never scored) ties with nothing finite
        return np.isfinite(array) & (np.abs(array - best) <= rtol * np.maximum(np.abs(array), abs(best)))


def first_best_index(values: Sequence[float] | np.ndarray, *, higher_is_better: bool = True,
                     rtol: float = GRID_TIE_RTOL) -> int:
    """Position of the grid point a search keeps: the first one whose value ties with the best value.

    ``i* = min{i : |v_i − v*| ≤ rtol·max(|v_i|, |v*|)}`` with ``v*`` the largest value (smallest when
    ``higher_is_better=False``); with ``rtol = 0`` it is ``np.argmax`` (``np.argmin``). Values must not be NaN.

    >>> first_best_index([0.9999999999999999, 1.0])  # a float-sum tie keeps the first point
    0
    >>> first_best_index([0.8, 1.0, 0.9999999999999999])  # the best point need not be the first
    1
    """
    return int(np.flatnonzero(tied_with_best(values, higher_is_better=higher_is_better, rtol=rtol))[0])


def grid_all_tied(values: Sequence[float] | np.ndarray, *, rtol: float = GRID_TIE_RTOL) -> bool:
    """Whether a grid of two or more points gives one value everywhere (within ``rtol``): the data cannot tell
    its points apart. A one-point grid is never tied (it has nothing to choose).

    >>> grid_all_tied([1.0, 0.9999999999999999]), grid_all_tied([1.0, 0.99]), grid_all_tied([0.5])
    (True, False, False)
    """
    array = np.asarray(values, dtype=np.float64)
    return array.size >= 2 and bool(tied_with_best(array, rtol=rtol).all())
