"""Binarization of activations (top-α, 000 Eq. A.1) and concepts (rounding, 000 Eq. A.2)."""

from __future__ import annotations

import math
from typing import Any

from neuroneval.metrics.backend import Backend
from neuroneval.metrics.ranks import stable_ranks

CONCEPT_THRESHOLD = 0.5


def top_count(alpha: float, n: int) -> int:
    """k = ⌈α·n⌉, at least 1 and at most n (α·n is rounded to 9 decimals first so 0.005·10000 gives 50)."""
    return min(n, max(1, math.ceil(round(alpha * n, 9))))


def top_alpha(be: Backend, values: Any, alpha: float, ties: str, noisy_values: Any = None) -> Any:
    """``B(a)`` for each row of ``values`` (R, n), as float32 0/1.

    ``ties="average"``: active = a ≥ the k-th largest value, so every input tied at the cutoff is active and
    a row may have more than k active inputs (all n for a constant row).
    ``ties="reference"``: exactly k inputs are active, the largest of the float32-noised values
    ``noisy_values`` in stable-sort order (the authors' tie-breaking; see :mod:`neuroneval.metrics.ranks`).
    """
    n = values.shape[-1]
    k = top_count(alpha, n)
    if ties == "average":
        cutoff = be.kth_largest(values, k)
        return be.astype(values >= cutoff[..., None], be.float32)
    return be.astype(stable_ranks(be, noisy_values) > n - k, be.float32)


def round_concepts(be: Backend, values: Any) -> Any:
    """``B(c)`` = 1[c ≥ 0.5] as float32 0/1."""
    return be.astype(values >= CONCEPT_THRESHOLD, be.float32)
