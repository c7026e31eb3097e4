"""The expected Decrease Acc of a binary metric under random Missing Labels, in closed form (000 Sec. 4.3; issue 33).

The Missing Labels test (000 Eq. 9) keeps each label of ``c`` with probability r₋ (``keep``): of a pair's
``P = |B(c)|`` positives, ``x ~ Bin(TP, 1 − r₋)`` of the ``TP = |B(a) ∩ B(c)|`` true positives and
``y ~ Bin(P − TP, 1 − r₋)`` of the others are removed, independently, while ``B(a)`` (``A`` active inputs of ``n``)
stays. A metric computed from the confusion counts then moves from ``s(TP, A, P)`` to ``s(TP − x, A, P − x − y)``,
and the pair counts as a decrease when that change is below ``−ε`` (Eq. 11; these metrics' span is 1). Its
probability is the double sum over the two binomials::

    Pr[decrease] = Σ_x Σ_y Bin(x; TP, 1 − r₋) · Bin(y; P − TP, 1 − r₋) · 1[s(TP − x, A, P − x − y) − s(TP, A, P) < −ε]

and its mean over a setting's pairs is the test's expected Decrease Acc. This explains the experimental F1 and IoU
results where the top-α set is small: with ``A`` ≪ ``P``, F1 = 2TP/(A + P) falls only if the removed labels hold
more than a share TP/(A + P) of true positives, which for TP ≤ A = 5 inputs and P ≈ 90 happens about half the time.

:data:`COUNT_METRICS` are the metrics whose score is a function of (TP, A, P, n) alone: recall, precision, F1, IoU,
accuracy and the two balanced accuracies (formulas of :mod:`neuroneval.metrics.confusion`, 0/0 = 0 as there), and
AUPRC where the concepts are 0/1 (:data:`BINARY_CONCEPTS_ONLY`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.stats import binom

from neuroneval.metrics.backend import get_backend
from neuroneval.metrics.binarize import AT_LEAST_KTH, TopAlphaRule, top_alpha
from neuroneval.metrics.edgecases import safe_divide

Counts = Callable[[np.ndarray, np.ndarray, np.ndarray, int], np.ndarray]


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    return safe_divide(get_backend(None), np.asarray(numerator, dtype=np.float64),
                       np.asarray(denominator, dtype=np.float64), 0.0)


#: metric → its score from (TP, |B(a)|, |B(c)|, n), elementwise (000 Eq. 4, 8, A.3–A.6, 5, A.13).
COUNT_METRICS: dict[str, Counts] = {
    "recall": lambda tp, a, p, n: _ratio(tp, a),
    "precision": lambda tp, a, p, n: _ratio(tp, p),
    "f1": lambda tp, a, p, n: _ratio(2.0 * tp, a + p),
    "iou": lambda tp, a, p, n: _ratio(tp, a + p - tp),
    "accuracy": lambda tp, a, p, n: (2.0 * tp + n - a - p) / n,
    "balanced_accuracy": lambda tp, a, p, n: 0.5 * (_ratio(tp, a) + _ratio(n - a - p + tp, n - a)),
    "inverse_balanced_accuracy": lambda tp, a, p, n: 0.5 * (_ratio(tp, p) + _ratio(n - a - p + tp, n - p)),
    # AUPRC with a 0/1 concept as the score has two thresholds: AP = R₁·P₁ + (1 − R₁)·|B(a)|/n (metrics.ranking)
    "auprc": lambda tp, a, p, n: _ratio(tp, a) * _ratio(tp, p) + (1.0 - _ratio(tp, a)) * a / n,
}
#: Metrics of :data:`COUNT_METRICS` whose formula holds only for 0/1 concepts (the others read ``B(c)`` alone).
BINARY_CONCEPTS_ONLY = frozenset({"auprc"})


def decrease_odds(metric: str, tp: int, active: int, positives: int, n: int, *, keep: float,
                  epsilon: float) -> float:
    """Pr[s(a, c⁻) − s(a, c) < −ε] for one pair with the given counts (see the module docstring).

    >>> round(decrease_odds("recall", tp=5, active=5, positives=90, n=10_000, keep=0.5, epsilon=1e-3), 5)  # 1 − 0.5⁵
    0.96875
    """
    if metric not in COUNT_METRICS:
        raise ValueError(f"no closed form for {metric!r}: only {sorted(COUNT_METRICS)}")
    if not 0.0 < keep <= 1.0:
        raise ValueError(f"keep (r₋) must lie in (0, 1], got {keep}")
    if not 0 <= tp <= min(active, positives) or max(active, positives) > n:
        raise ValueError(f"counts must satisfy 0 ≤ TP ≤ min(|B(a)|, |B(c)|) and both ≤ n, got TP = {tp}, "
                         f"|B(a)| = {active}, |B(c)| = {positives}, n = {n}")
    score = COUNT_METRICS[metric]
    removed_tp = np.arange(tp + 1)[:, None]
    removed_other = np.arange(positives - tp + 1)[None, :]
    weights = binom.pmf(removed_tp, tp, 1.0 - keep) * binom.pmf(removed_other, positives - tp, 1.0 - keep)
    before = score(np.asarray(tp), np.asarray(active), np.asarray(positives), n)
    after = score(tp - removed_tp, np.asarray(active), positives - removed_tp - removed_other, n)
    return float(np.sum(weights * (after - before < -epsilon)))


def pair_counts(activations: np.ndarray, concepts: np.ndarray, pairs: np.ndarray, *, alpha: float,
                top_alpha_rule: TopAlphaRule = AT_LEAST_KTH) -> np.ndarray:
    """(TP, |B(a)|, |B(c)|) of each (unit, concept) pair, int64 (P, 3): ``B(a)`` by the engine's top-α rule,
    ``B(c) = 1[c ≥ 0.5]`` (000 Eq. A.1–A.2)."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    be = get_backend(None)
    units = np.ascontiguousarray(np.asarray(activations, dtype=np.float64)[:, pairs[:, 0]].T)
    active = np.asarray(top_alpha(be, units, alpha, top_alpha_rule)) > 0
    labels = np.asarray(concepts)[:, pairs[:, 1]].T >= 0.5
    return np.column_stack([(active & labels).sum(axis=1), active.sum(axis=1), labels.sum(axis=1)])


def mean_decrease_odds(metric: str, counts: np.ndarray, n: int, *, keep: float, epsilon: float) -> float:
    """The mean of :func:`decrease_odds` over rows (TP, |B(a)|, |B(c)|) of ``counts`` (:func:`pair_counts`): the
    random Missing Labels test's expected Decrease Acc over those pairs; NaN without pairs."""
    odds = [decrease_odds(metric, int(tp), int(active), int(positives), n, keep=keep, epsilon=epsilon)
            for tp, active, positives in counts]
    return float(np.mean(odds)) if odds else float("nan")


def expected_missing_decrease(metric: str, activations: np.ndarray, concepts: np.ndarray, pairs: np.ndarray, *,
                              alpha: float, keep: float, epsilon: float,
                              top_alpha_rule: TopAlphaRule = AT_LEAST_KTH) -> float:
    """:func:`mean_decrease_odds` over ``pairs`` of a setting's activations and concepts at ``alpha``."""
    counts = pair_counts(activations, concepts, pairs, alpha=alpha, top_alpha_rule=top_alpha_rule)
    return mean_decrease_odds(metric, counts, np.asarray(activations).shape[0], keep=keep, epsilon=epsilon)
