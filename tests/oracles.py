"""Independent oracles for statistics whose implementation calls scipy: written from the textbook definitions in
plain Python (``math`` and integer counting), sharing no code with scipy, so a test comparing the library with them
checks the numbers, not that the same function was called twice."""

from __future__ import annotations

import math
from collections.abc import Sequence

#: scipy's documented ``method="auto"`` rule of ``mannwhitneyu``: the exact null distribution when the smaller
#: sample has at most this many values and nothing is tied, else the normal approximation.
EXACT_MANN_WHITNEY_MAX = 8


def mann_whitney_u(first: Sequence[float], second: Sequence[float]) -> float:
    """U of ``first`` against ``second``: pairs where ``first`` is larger, ties counted ½ (by pairs)."""
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in first for b in second)


def _rank_sum_counts(n_pooled: int, m: int) -> dict[int, int]:
    """How many m-subsets of the ranks 1..n_pooled have each rank sum (the exact null distribution, counted)."""
    counts: list[dict[int, int]] = [{0: 1}] + [{} for _ in range(m)]
    for rank in range(1, n_pooled + 1):
        for size in range(min(rank, m), 0, -1):
            for total, ways in counts[size - 1].items():
                counts[size][total + rank] = counts[size].get(total + rank, 0) + ways
    return counts[m]


def mann_whitney_exact_p(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided exact p without ties: the share of the C(m+n, m) equally likely splits of the pooled ranks whose
    U is at least as far from ``m n / 2`` as the observed U (counted by rank sums: U = R - m (m + 1) / 2)."""
    m, n = len(first), len(second)
    if len(set(first) | set(second)) < m + n:
        raise ValueError("the exact distribution assumes no ties")
    observed = abs(mann_whitney_u(first, second) - m * n / 2)
    counts = _rank_sum_counts(m + n, m)
    extreme = sum(ways for total, ways in counts.items() if abs(total - m * (m + 1) / 2 - m * n / 2) >= observed)
    return extreme / math.comb(m + n, m)


def mann_whitney_normal_p(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided p of the normal approximation: ``erfc(z / √2)`` with ``z = (max(U, mn − U) − mn/2 − ½) / σ`` and
    the tie-corrected ``σ² = mn/12 · ((N + 1) − Σ(t³ − t) / (N (N − 1)))`` (t: sizes of tied groups)."""
    m, n = len(first), len(second)
    u = mann_whitney_u(first, second)
    pooled = [*first, *second]
    tied = sum(t**3 - t for t in (pooled.count(value) for value in set(pooled)))
    variance = m * n / 12 * ((m + n + 1) - tied / ((m + n) * (m + n - 1)))
    z = (max(u, m * n - u) - m * n / 2 - 0.5) / math.sqrt(variance)
    return min(1.0, math.erfc(z / math.sqrt(2)))


def mann_whitney_p(first: Sequence[float], second: Sequence[float]) -> float:
    """Two-sided p under the ``auto`` rule (:data:`EXACT_MANN_WHITNEY_MAX`): exact for small untied samples."""
    untied = len(set(first) | set(second)) == len(first) + len(second)
    if untied and min(len(first), len(second)) <= EXACT_MANN_WHITNEY_MAX:
        return mann_whitney_exact_p(first, second)
    return mann_whitney_normal_p(first, second)


def _log_binomial_pmf(k: int, n: int, p: float) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


def _binomial_tail(successes: range, n: int, p: float) -> float:
    """P(X ∈ successes) for X ~ Binomial(n, p), summed in log space (no overflow for large n)."""
    logs = [_log_binomial_pmf(k, n, p) for k in successes]
    top = max(logs)
    return math.exp(top) * sum(math.exp(value - top) for value in logs)


def _bisect(increasing, target: float) -> float:
    """The p in (0, 1) where the increasing function ``increasing(p)`` crosses ``target`` (to machine precision)."""
    low, high = 0.0, 1.0
    for _ in range(200):
        middle = (low + high) / 2
        if increasing(middle) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def clopper_pearson(successes: int, trials: int, level: float) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion at confidence ``level``: the lower bound is
    the p with ``P(X ≥ k; p) = α/2`` (0 when k = 0), the upper the p with ``P(X ≤ k; p) = α/2`` (1 when k = n),
    found by bisection on the binomial tails."""
    alpha = 1 - level
    low = 0.0 if successes == 0 else _bisect(lambda p: _binomial_tail(range(successes, trials + 1), trials, p),
                                             alpha / 2)
    high = 1.0 if successes == trials else _bisect(
        lambda p: 1 - _binomial_tail(range(0, successes + 1), trials, p), 1 - alpha / 2)
    return low, high
