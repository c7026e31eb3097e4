"""Obvious per-pair implementations of the metrics, written from paper 000's formulas (App. A).

Each function takes one activation vector ``a`` and one concept vector ``c`` (length n) and follows the
definition literally: explicit sets, explicit counts, explicit pairwise comparisons. They are slow on
purpose and share no code with the engine, so tests and benchmarks can use them as an independent oracle.
Conventions (simulation framing, ``B(c) = c ≥ 0.5``, top-α with ties at the cutoff active, edge-case
values) are those of ``ties="average"`` in :func:`neuroneval.metrics.score`; the top-α rule is also the default
``top_alpha="at_least_kth"`` of both tie modes (the authors' ``_binarize_act``).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

DEFAULT_ALPHA = 0.005


def top_alpha(a: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """B(a): 1 where a is at least the k-th largest value, k = ⌈α·n⌉ (000 Eq. A.1)."""
    n = len(a)
    k = min(n, max(1, math.ceil(round(alpha * n, 9))))
    kth_largest = np.sort(a)[::-1][k - 1]
    return a >= kth_largest


def round_concept(c: np.ndarray) -> np.ndarray:
    """B(c) = 1[c ≥ 0.5] (000 Eq. A.2)."""
    return c >= 0.5


def _ratio(numerator: float, denominator: float) -> float:
    return 0.0 if denominator == 0 else numerator / denominator


def confusion(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> tuple[int, int, int, int]:
    """(TP, FP, FN, TN) with the neuron as label and the concept as prediction (000 App. A.2)."""
    neuron, concept = top_alpha(a, alpha), round_concept(c)
    tp = int(np.sum(neuron & concept))
    fp = int(np.sum(~neuron & concept))
    fn = int(np.sum(neuron & ~concept))
    tn = int(np.sum(~neuron & ~concept))
    return tp, fp, fn, tn


def recall(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """recall = TP / (TP + FN) = B(a)·B(c) / |B(a)| (000 Eq. 4, Table A.1); 0 when B(a) is empty."""
    tp, _, fn, _ = confusion(a, c, alpha)
    return _ratio(tp, tp + fn)


def precision(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """precision = TP / (TP + FP) = B(a)·B(c) / |B(c)| (000 Eq. 8, Table A.1); 0 when B(c) is empty."""
    tp, fp, _, _ = confusion(a, c, alpha)
    return _ratio(tp, tp + fp)


def f1(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """f1 = 2TP / (2TP + FP + FN) = 2·B(a)·B(c) / (|B(a)| + |B(c)|) (000 Eq. A.4); 0 when both sets are empty."""
    tp, fp, fn, _ = confusion(a, c, alpha)
    return _ratio(2 * tp, 2 * tp + fp + fn)


def iou(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """iou = TP / (TP + FP + FN), the Jaccard index of B(a) and B(c) (000 Eq. 5, A.13); 0 when both are empty."""
    tp, fp, fn, _ = confusion(a, c, alpha)
    return _ratio(tp, tp + fp + fn)


def accuracy(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """accuracy = (TP + TN) / n (000 Eq. A.3)."""
    tp, fp, fn, tn = confusion(a, c, alpha)
    return (tp + tn) / (tp + fp + fn + tn)


def balanced_accuracy(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """balanced_accuracy = TP / (2|B(a)|) + TN / (2(n − |B(a)|)) (000 Eq. A.5), the neuron as label; an empty class
    contributes 0."""
    tp, fp, fn, tn = confusion(a, c, alpha)
    return 0.5 * _ratio(tp, tp + fn) + 0.5 * _ratio(tn, tn + fp)


def inverse_balanced_accuracy(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """inverse_balanced_accuracy = TP / (2|B(c)|) + TN / (2(n − |B(c)|)) (000 Eq. A.6), the concept as label; an
    empty class contributes 0."""
    tp, fp, fn, tn = confusion(a, c, alpha)
    return 0.5 * _ratio(tp, tp + fp) + 0.5 * _ratio(tn, tn + fn)


def _mann_whitney(label: np.ndarray, score: np.ndarray) -> float:
    """Σ_{i neg, j pos} 1[x_i < x_j] + ½·1[x_i = x_j], over |pos|·|neg| (000 Eq. A.7); 0.5 if undefined."""
    positive, negative = score[label], score[~label]
    if positive.size == 0 or negative.size == 0:
        return 0.5
    wins = 0.0
    for value in positive:
        wins += np.sum(negative < value) + 0.5 * np.sum(negative == value)
    return float(wins / (positive.size * negative.size))


def auc(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """auc: Mann–Whitney AUC of the score c against the label B(a), ties count ½ (000 Eq. A.7); 0.5 if B(a) is
    empty or all inputs."""
    return _mann_whitney(top_alpha(a, alpha), c)


def inverse_auc(a: np.ndarray, c: np.ndarray) -> float:
    """inverse_auc: Mann–Whitney AUC of the score a against the label B(c), ties count ½ (000 Eq. A.8); 0.5 if
    B(c) is empty or all inputs."""
    return _mann_whitney(round_concept(c), a)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Σ(x − x̄)(y − ȳ) / √(Σ(x − x̄)² Σ(y − ȳ)²); 0 when either vector is constant."""
    if np.all(x == x[0]) or np.all(y == y[0]):
        return 0.0
    dx, dy = x - x.mean(), y - y.mean()
    return float(np.sum(dx * dy) / math.sqrt(np.sum(dx * dx) * np.sum(dy * dy)))


def average_rank(x: np.ndarray) -> np.ndarray:
    """Rank of each element: #smaller + (#equal + 1)/2, i.e. ties share their average rank."""
    ordered = np.sort(x)
    smaller = np.searchsorted(ordered, x, side="left")
    equal = np.searchsorted(ordered, x, side="right") - smaller
    return smaller + (equal + 1) / 2.0


def correlation(a: np.ndarray, c: np.ndarray) -> float:
    """correlation (Pearson): Σ(a − ā)(c − c̄) / √(Σ(a − ā)² Σ(c − c̄)²) (000 Eq. 6, Table A.2); 0 for a
    constant vector."""
    return _pearson(a, c)


def spearman(a: np.ndarray, c: np.ndarray) -> float:
    """spearman: Pearson of the average ranks R(a), R(c) (000 Eq. A.9); 0 for a constant vector."""
    return _pearson(average_rank(a), average_rank(c))


def cosine(a: np.ndarray, c: np.ndarray) -> float:
    """cosine = a·c / (‖a‖₂ ‖c‖₂) (000 Eq. A.10); 0 for an all-zero vector."""
    norm = math.sqrt(np.sum(a * a) * np.sum(c * c))
    return 0.0 if norm == 0 else float(np.sum(a * c) / norm)


def wpmi(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA, lam: float = 1.0) -> float:
    """wpmi = mean over B(a) of log max(c, 1e-8) − λ·log max(mean(c), 1e-8) (000 Eq. A.11, as a mean)."""
    active = top_alpha(a, alpha)
    return float(np.mean(np.log(np.maximum(c[active], 1e-8))) - lam * math.log(max(np.mean(c), 1e-8)))


def mad(a: np.ndarray, c: np.ndarray) -> float:
    """mad = mean of a over B(c) − mean of a over not B(c) (000 Eq. 7, Table A.2); 0 if either group is empty."""
    concept = round_concept(c)
    if concept.all() or not concept.any():
        return 0.0
    return float(np.mean(a[concept]) - np.mean(a[~concept]))


def _average_precision(label: np.ndarray, score: np.ndarray) -> float:
    """Σ_i (R_i − R_{i−1}) P_i over the distinct score values τ_i in decreasing order (000 App. A.3)."""
    n_positive = int(np.sum(label))
    if n_positive == 0:
        return 0.0
    area, previous_recall = 0.0, 0.0
    for threshold in np.unique(score)[::-1]:
        predicted = score >= threshold
        hits = int(np.sum(label & predicted))
        recall_here = hits / n_positive
        area += (recall_here - previous_recall) * hits / int(np.sum(predicted))
        previous_recall = recall_here
    return area


def auprc(a: np.ndarray, c: np.ndarray, alpha: float = DEFAULT_ALPHA) -> float:
    """auprc: step-wise average precision Σ_i (R_i − R_{i−1}) P_i of the score c against the label B(a) (000 App.
    A.3 item 10); 0 when B(a) is empty."""
    return _average_precision(top_alpha(a, alpha), c)


def inverse_auprc(a: np.ndarray, c: np.ndarray) -> float:
    """inverse_auprc: step-wise average precision Σ_i (R_i − R_{i−1}) P_i of the score a against the label B(c)
    (000 App. A.3 item 11); 0 when B(c) is empty."""
    return _average_precision(round_concept(c), a)


def top_and_random_sample(a: np.ndarray, rng: np.random.Generator, top_fraction: float = 0.002, n_top: int = 25,
                          n_random: int = 25) -> np.ndarray:
    """Input indices: ``n_top`` drawn from the ⌈top_fraction·n⌉ largest activations, then ``n_random`` others.

    Same distribution as the engine's sampler (ties at the pool cutoff go to the lower index), its own
    random numbers.
    """
    n = len(a)
    pool_size = min(n, max(1, math.ceil(round(top_fraction * n, 9))))
    pool = np.argsort(-a, kind="stable")[:pool_size]
    top = rng.choice(pool, size=min(n_top, pool_size), replace=False)
    rest = np.setdiff1d(np.arange(n), top)
    randoms = rng.choice(rest, size=min(n_random, rest.size), replace=False)
    return np.concatenate([top, randoms])


def correlation_on(a: np.ndarray, c: np.ndarray, sample: np.ndarray) -> float:
    """correlation_tr: Pearson (000 Eq. 6) restricted to the inputs ``sample``, a top-and-random sample of the
    unit's inputs given by the caller (000 Sec. 4.3, Bills et al. 2023)."""
    return _pearson(a[sample], c[sample])


def spearman_on(a: np.ndarray, c: np.ndarray, sample: np.ndarray) -> float:
    """spearman_tr: Spearman (000 Eq. A.9) restricted to the inputs ``sample``, a top-and-random sample of the
    unit's inputs given by the caller (000 Sec. 4.3, Bricken et al. 2023)."""
    return spearman(a[sample], c[sample])


def harmonic_mean(values: list[float]) -> float:
    """q / Σ 1/x_i, or 0 when some x_i ≤ 0 (000 Eq. E.2)."""
    if any(value <= 0 for value in values):
        return 0.0
    return len(values) / sum(1.0 / value for value in values)


#: Per-pair function of each metric taking (a, c, **metric params); T&R metrics need a sample instead.
PER_PAIR = {
    "recall": recall,
    "precision": precision,
    "f1": f1,
    "iou": iou,
    "accuracy": accuracy,
    "balanced_accuracy": balanced_accuracy,
    "inverse_balanced_accuracy": inverse_balanced_accuracy,
    "auc": auc,
    "inverse_auc": inverse_auc,
    "correlation": correlation,
    "spearman": spearman,
    "cosine": cosine,
    "wpmi": wpmi,
    "mad": mad,
    "auprc": auprc,
    "inverse_auprc": inverse_auprc,
}


def per_pair(metric: str) -> Callable[..., float]:
    """The per-pair implementation of a registered metric: the function of this module that its registry entry
    names (:attr:`neuroneval.metrics.registry.MetricSpec.reference`). ``ValueError`` for a metric without one
    (a combination) or an unknown metric."""
    from neuroneval.metrics.registry import get_spec

    name = get_spec(metric).reference
    if name is None:
        raise ValueError(f"metric {metric!r} has no per-pair reference (combinations are scored by their parts)")
    return globals()[name]
