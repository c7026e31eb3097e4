"""Meta-AUPRC (paper 000, Eq. 13): how well a metric's scores single out each unit's correct concept."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def truth_mask(truth: pd.DataFrame, unit_names: Sequence[str], concept_names: Sequence[str]) -> np.ndarray:
    """(K, C) boolean matrix, True where ``truth`` (columns ``unit, concept``) pairs unit k with concept t.

    Every unit and concept named in ``truth`` must exist, so a typo cannot silently shrink the ground truth.
    """
    unit_position = {name: k for k, name in enumerate(unit_names)}
    concept_position = {name: t for t, name in enumerate(concept_names)}
    missing_units = sorted(set(truth["unit"]) - set(unit_position))
    missing_concepts = sorted(set(truth["concept"]) - set(concept_position))
    if missing_units:
        raise ValueError(f"truth names units that are not in the activation tables: {missing_units[:5]}")
    if missing_concepts:
        raise ValueError(f"truth names concepts that are not in the concept table: {missing_concepts[:5]}")
    mask = np.zeros((len(unit_names), len(concept_names)), dtype=bool)
    mask[truth["unit"].map(unit_position).to_numpy(), truth["concept"].map(concept_position).to_numpy()] = True
    return mask


def meta_auprc(scores: np.ndarray, truth: np.ndarray, *, higher_is_better: bool = True) -> float:
    r"""Average precision of the flattened scores of all (unit, concept) pairs, correct pairs as positives.

    .. math:: \text{meta-AUPRC} = \mathrm{AP}\big(\{s_M(a_k, c_t)\}_{k,t},\ \{\mathbb{1}[t \in T_k]\}_{k,t}\big)

    (000 Eq. 13): a metric that scores every unit's correct concept above all wrong (unit, concept) pairs gets
    1. Scores must be finite (the metric engine defines its undefined cases); ``higher_is_better=False``
    negates them first. Ties between scores are grouped, as in ``sklearn.metrics.average_precision_score``.
    """
    if scores.shape != truth.shape:
        raise ValueError(f"scores shape {scores.shape} differs from truth shape {truth.shape}")
    if not truth.any():
        raise ValueError("meta-AUPRC needs at least one correct (unit, concept) pair")
    flat_scores = np.asarray(scores, dtype=np.float64).ravel()
    if not np.isfinite(flat_scores).all():
        raise ValueError("meta-AUPRC got non-finite scores; the metric must define its undefined cases")
    if not higher_is_better:
        flat_scores = -flat_scores
    return average_precision(truth.ravel(), flat_scores)


def own_concept_first(scores: np.ndarray, truth: np.ndarray, *, higher_is_better: bool = True) -> float:
    r"""Share of units (rows) whose best-scoring concept is one of their own: :math:`\frac1K\sum_k
    \mathbb{1}[\arg\max_t s_M(a_k, c_t) \in T_k]`.

    Meta-AUPRC pools all (unit, concept) pairs, so it also asks that one unit's correct score beat *other* units'
    wrong ones; this per-unit rate asks only that each unit picks its own concept, and tells the two failures
    apart (a high rate with a low meta-AUPRC: scores not comparable across units). A tie at the top counts as
    correct only when every tied concept is correct. Rows without a correct concept are skipped.
    """
    if scores.shape != truth.shape:
        raise ValueError(f"scores shape {scores.shape} differs from truth shape {truth.shape}")
    values = np.asarray(scores, dtype=np.float64) * (1.0 if higher_is_better else -1.0)
    rows = truth.any(axis=1)
    if not rows.any():
        raise ValueError("own_concept_first needs at least one unit with a correct concept")
    values, known = values[rows], truth[rows].astype(bool)
    top = values == values.max(axis=1, keepdims=True)
    return float(np.mean(~(top & ~known).any(axis=1)))


def average_precision(labels: np.ndarray, scores: np.ndarray) -> float:
    r"""Step-wise average precision :math:`\sum_i (R_i - R_{i-1}) P_i` over the distinct score thresholds.

    Tied scores form one threshold, as in ``sklearn.metrics.average_precision_score`` (which the tests use as
    the oracle); 0 when there are no positive labels.
    """
    labels = np.asarray(labels, dtype=bool)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    ordered = np.asarray(scores, dtype=np.float64)[order]
    threshold_ends = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True])
    true_positives = np.cumsum(labels[order], dtype=np.float64)[threshold_ends]
    if true_positives[-1] == 0:
        return 0.0
    precision = true_positives / (threshold_ends + 1)
    recall_gain = np.diff(true_positives, prepend=0.0) / true_positives[-1]
    return float(np.sum(recall_gain * precision))


#: Largest (positive thresholds × units) checkpoint matrix :func:`bootstrap_meta_auprc` builds (float64: 256 MiB);
#: beyond it replicates take one pass of cumulative sums over all pairs each.
CHECKPOINT_ELEMENTS = 2**25


def bootstrap_meta_auprc(scores: np.ndarray, truth: np.ndarray, *, n_boot: int, seed: int, level: float = 0.95,
                         higher_is_better: bool = True, chunk: int = 16) -> tuple[float, float]:
    r"""Percentile confidence interval of meta-AUPRC over units (rows), resampled with replacement.

    A replicate draws ``K`` units with replacement; unit ``k`` drawn ``m_k`` times counts each of its pairs
    ``m_k`` times. That is a weighted average precision over the *same* sorted scores (tied scores stay one
    threshold, as in :func:`meta_auprc`), and it changes only at the thresholds that hold a correct pair:

    .. math:: \mathrm{AP}(m) = \sum_j \frac{TP_j(m) - TP_{j-1}(m)}{TP_J(m)} \cdot \frac{TP_j(m)}{N_j(m)},
       \quad TP_j(m) = \sum_k m_k P_{jk}, \quad N_j(m) = \sum_k m_k A_{jk},

    with :math:`A_{jk}` (:math:`P_{jk}`) the number of unit k's pairs (correct pairs) scored at or above the
    j-th such threshold. So the pairs are sorted once, ``A`` and ``P`` counted once, and all replicates are two
    matrix products (when ``A`` has at most :data:`CHECKPOINT_ELEMENTS` entries; else each replicate takes a
    pass of cumulative sums over the pairs, same result). Replicates without any correct pair are skipped.
    Returns ``(low, high)`` at ``level``; ``(nan, nan)`` when no replicate holds a correct pair (``truth`` without
    any, on either path).
    """
    if n_boot < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if scores.shape != truth.shape:
        raise ValueError(f"scores shape {scores.shape} differs from truth shape {truth.shape}")
    n_units, n_concepts = scores.shape
    flat = np.asarray(scores, dtype=np.float64).ravel()
    if not higher_is_better:
        flat = -flat
    order = np.argsort(-flat, kind="stable")
    ordered = flat[order]
    ends = np.flatnonzero(np.r_[ordered[1:] != ordered[:-1], True])
    labels = truth.ravel()[order].astype(np.float64)
    unit_of_pair = order // n_concepts
    counts = np.random.default_rng(seed).multinomial(n_units, np.full(n_units, 1.0 / n_units), size=n_boot)
    group = np.searchsorted(ends, np.arange(ordered.size))  # threshold of each sorted pair
    checkpoints = ends[np.unique(group[labels > 0])]  # thresholds holding a correct pair
    if not checkpoints.size:  # no correct pair: no replicate holds one
        return float("nan"), float("nan")
    if checkpoints.size * n_units <= CHECKPOINT_ELEMENTS:
        values = _checkpoint_replicates(counts, unit_of_pair, labels, checkpoints, n_units)
    else:
        values = _cumsum_replicates(counts, unit_of_pair, labels, ends, chunk)
    if not values.size:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0
    return float(np.quantile(values, tail)), float(np.quantile(values, 1.0 - tail))


def _checkpoint_replicates(counts: np.ndarray, unit_of_pair: np.ndarray, labels: np.ndarray,
                           checkpoints: np.ndarray, n_units: int) -> np.ndarray:
    """Replicate APs from the checkpoint matrices ``A``, ``P`` of :func:`bootstrap_meta_auprc` (J, K)."""
    n_checks = checkpoints.size
    slot = np.searchsorted(checkpoints, np.arange(unit_of_pair.size))  # first checkpoint at or after each pair
    kept = slot < n_checks  # pairs below the last correct pair never count
    cells = slot[kept] * n_units + unit_of_pair[kept]
    pairs_at = np.bincount(cells, minlength=n_checks * n_units).reshape(n_checks, n_units)
    correct_at = np.bincount(cells, weights=labels[kept], minlength=n_checks * n_units).reshape(n_checks, n_units)
    weights = counts.astype(np.float64)
    totals = weights @ np.cumsum(pairs_at, axis=0, dtype=np.float64).T  # N_j(m): (n_boot, J)
    positives = weights @ np.cumsum(correct_at, axis=0).T  # TP_j(m)
    return _replicate_ap(positives, totals)


def _cumsum_replicates(counts: np.ndarray, unit_of_pair: np.ndarray, labels: np.ndarray, ends: np.ndarray,
                       chunk: int) -> np.ndarray:
    """Replicate APs by cumulative sums over all sorted pairs, ``chunk`` replicates at a time."""
    values = []
    for start in range(0, counts.shape[0], chunk):
        weights = counts[start:start + chunk][:, unit_of_pair].astype(np.float64)
        values.append(_replicate_ap(np.cumsum(weights * labels, axis=1)[:, ends],
                                    np.cumsum(weights, axis=1)[:, ends]))
    return np.concatenate(values)


def _replicate_ap(positives: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Σ_j ΔTP_j / TP_J · TP_j / N_j per row of (replicates, thresholds) counts; rows without a positive dropped."""
    rows = positives[:, -1] > 0
    positives, totals = positives[rows], totals[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(totals > 0, positives / np.where(totals > 0, totals, 1.0), 0.0)
    gains = np.diff(positives, axis=1, prepend=0.0) / positives[:, -1:]
    return np.sum(gains * precision, axis=1)
