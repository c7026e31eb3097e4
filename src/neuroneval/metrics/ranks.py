"""Ranks along the last axis, vectorised over every leading axis.

Two tie conventions (the ``ties`` parameter of :func:`neuroneval.metrics.score`):

``average``
    Tied values share the mean of the ranks they span (the statistical convention of
    ``scipy.stats.rankdata``). Spearman's correlation of any vector with itself is then 1.
``reference``
    The authors' published code breaks ties with noise: values are cast to float32, ``1e-7·U``
    (U uniform on [0, 1), float32) is added, and a *stable* sort assigns ranks 1…n. Near 1.0 the float32
    spacing (1.19e-7) exceeds most of the noise, so equal values mostly stay tied and are then ordered by
    input position; near 0 the noise is exact and orders them at random. Spearman's correlation of a binary
    vector with itself is ≈ 3γ(1−γ)-ish rather than 1, which is what makes Spearman fail the missing/extra
    labels tests in paper 000 (Tables C.3–C.4).

    Those ranks depend on the tie order of the sort, which must be the stable one (equal values by input
    position) on every backend and device: numpy's default ``argsort`` (quicksort/introsort) and an
    unstable torch sort would order ties differently from run to run, from CPU to CUDA, and from the
    published behaviour. :meth:`~neuroneval.metrics.backend.NumpyBackend.sort` sorts the float32 noised values
    by a unique packed (value bits, position) key, so any algorithm gives the stable order; the torch backend
    sorts with ``stable=True``. Reference-mode top-α with ``top_alpha="exactly_k"`` uses no sort at all
    (:func:`neuroneval.metrics.binarize.exactly_top`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from neuroneval.metrics.backend import Backend

REFERENCE_NOISE = np.float32(1e-7)


def average_ranks(be: Backend, values: Any, sorted_pair: tuple[Any, Any] | None = None) -> Any:
    """Ranks 1…n (float64) along the last axis; ties get the average of the ranks they span.

    ``sorted_pair`` is ``be.sort_any_order(values)`` when the caller already has it. Without one, exactly-float32
    values on the numpy backend take the compiled path (:mod:`neuroneval.metrics.rank_kernels`, the same ranks).
    """
    if sorted_pair is None and be.name == "numpy":
        from neuroneval.metrics.rank_kernels import centred_average_ranks

        centred = centred_average_ranks(values)
        if centred is not None:
            return centred + (values.shape[-1] + 1) / 2.0
    sorted_values, order = sorted_pair or be.sort_any_order(values)  # tied inputs get one rank in any order
    starts, ends = be.run_bounds(sorted_values)
    ranks_sorted = be.astype(starts + ends, be.float64) * 0.5 + 1.0
    return be.scatter_along(order, ranks_sorted)


def count_at_least(be: Backend, values: Any, sorted_pair: tuple[Any, Any] | None = None) -> Any:
    """``#{j : x_j ≥ x_i}`` for every element (int64), along the last axis (``sorted_pair`` as for average_ranks)."""
    n = values.shape[-1]
    sorted_values, order = sorted_pair or be.sort_any_order(values)  # tied inputs get one count in any order
    starts, _ = be.run_bounds(sorted_values)
    return be.scatter_along(order, n - starts)


def noisy_values(values: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """float32(x) + float32(1e-7)·U, computed in float32 as in the authors' code (host side)."""
    return values.astype(np.float32) + REFERENCE_NOISE * noise.astype(np.float32)


def stable_ranks(be: Backend, values: Any) -> Any:
    """Ranks 1…n (float64) from a stable sort: ties are ordered by position, never averaged.

    ``rank_i = #{j : x_j < x_i} + #{j ≤ i : x_j = x_i}``, whatever the backend (see the module docstring).
    """
    n = values.shape[-1]
    _, order = be.sort(values)
    ranks_sorted = be.broadcast_to(be.astype(be.arange(n), be.float64) + 1.0, tuple(order.shape))
    return be.scatter_along(order, ranks_sorted)

