"""Binarization of activations (top-α, 000 Eq. A.1) and concepts (rounding, 000 Eq. A.2).

Top-α has two rules, chosen by the ``top_alpha`` parameter of :func:`neuroneval.metrics.score`
(:data:`TopAlphaRule`); both use ``k = ⌈α·n⌉`` (:func:`top_count`):

``"at_least_kth"`` (default, both tie modes)
    ``B(a)_i = 1[a_i ≥ a_(k)]`` where ``a_(k)`` is the k-th largest activation, so every input tied with
    the k-th largest is active and ``|B(a)| ≥ k`` (all n inputs for a constant unit). This is paper 000's
    Eq. A.1 (``z_i ≥ b_α``) and what the authors' public code does (Neuron_Eval ``metrics._binarize_act``:
    ``cutoff = topk(a, k).values[-1]``, ``B(a) = (a >= cutoff)``, on the raw activations, no noise). Every
    notebook of their release that passes an α uses it: the experimental sanity tests (Table 3 experimental
    columns, App. F.1; E.1, E.3, E.8), the known-neuron meta-AUPRC (Table 4, App. F.2, E.9) and the cosine
    failure case (E.2). The theoretical tables (Table 3 theoretical columns, C.1–C.4, E.6–E.7; D.1–D.2 are
    their closed forms) skip the binarization of the already binary ideal units (``alpha=False``:
    ``B(a) = a``); at ``α = s/n`` (s = the unit's positives) both rules give exactly ``B(a) = a``, which is
    how :mod:`neuroneval.sanity.theoretical` reproduces them.
``"exactly_k"``
    Exactly k inputs are active: the k largest of the tie-breaking values, ties at the cutoff going to the
    later inputs — the top k ranks of a stable ascending sort, consistent with the reference-mode ranks of
    :func:`neuroneval.metrics.ranks.stable_ranks`. With ``ties="reference"`` the tie-breaking values are the
    float32-noised activations ``a + 1e-7·U`` (so ties near 0 are broken at random, ties near 1 mostly by
    position); with ``ties="average"`` the raw activations (ties broken by position only). No published
    table used this rule (it was this engine's reference-mode rule until reference mode was aligned with
    ``_binarize_act``); it stays available for exactly-k selections. Computed without a sort — the k-th
    largest value, the count strictly above it and a suffix count of the tied inputs — so it does not
    depend on any sort's tie order.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from neuroneval.concepts.threshold import CONCEPT_THRESHOLD
from neuroneval.metrics.backend import Backend

#: The two top-α rules (see the module docstring).
TopAlphaRule = Literal["at_least_kth", "exactly_k"]
AT_LEAST_KTH: TopAlphaRule = "at_least_kth"
EXACTLY_K: TopAlphaRule = "exactly_k"
TOP_ALPHA_RULES: tuple[TopAlphaRule, ...] = (AT_LEAST_KTH, EXACTLY_K)


def top_count(alpha: float, n: int) -> int:
    """k = ⌈α·n⌉, at least 1 and at most n (α·n is rounded to 9 decimals first so 0.005·10000 gives 50).

    The authors compute ``math.ceil(alpha * n)`` without the rounding; the two agree for every α of the paper's
    grid (1e-4 … 0.5) at the dataset sizes it used (checked in the tests) and differ only where α·n lies within
    float error above an integer.
    """
    return min(n, max(1, math.ceil(round(alpha * n, 9))))


def top_alpha(be: Backend, values: Any, alpha: float, rule: TopAlphaRule = AT_LEAST_KTH,
              tie_values: Any = None) -> Any:
    """``B(a)`` for each row of ``values`` (R, n), as float32 0/1, by ``rule`` (module docstring).

    ``"at_least_kth"``: ``1[a ≥ k-th largest a]`` on ``values`` (a row may have more than k active inputs).
    ``"exactly_k"``: the k largest of ``tie_values`` (``values`` when ``None``; the noised activations in
    reference mode), ties at the cutoff going to the later inputs.
    """
    n = values.shape[-1]
    k = top_count(alpha, n)
    if rule == AT_LEAST_KTH:
        cutoff = be.kth_largest(values, k)
        return be.astype(values >= cutoff[..., None], be.float32)
    if rule == EXACTLY_K:
        return be.astype(exactly_top(be, values if tie_values is None else tie_values, k), be.float32)
    raise ValueError(f"top_alpha must be one of {TOP_ALPHA_RULES}, got {rule!r}")


def exactly_top(be: Backend, values: Any, k: int) -> Any:
    """Boolean (R, n): the k largest values of each row, ties at the cutoff going to the later positions.

    Equal to ``stable_ranks(values) > n − k`` (the top k ranks of a stable ascending sort) but computed from the
    k-th largest value ``v``: every input above ``v``, plus the last ``k − #{a > v}`` inputs equal to ``v``
    (a suffix count of the tied inputs). No sort is involved, so no sort's tie order can change it.
    """
    cutoff = be.kth_largest(values, k)[..., None]
    above = values > cutoff
    tied = values == cutoff
    needed = k - be.sum(be.astype(above, be.int64), axis=-1)
    tied_count = be.astype(tied, be.int64)
    tied_from_here = be.sum(tied_count, axis=-1)[..., None] - be.cumsum(tied_count) + tied_count
    return above | (tied & (tied_from_here <= needed[..., None]))


def round_concepts(be: Backend, values: Any) -> Any:
    """``B(c)`` = 1[c ≥ 0.5] as float32 0/1."""
    return be.astype(values >= CONCEPT_THRESHOLD, be.float32)
