"""Normalised score differences and the Decrease Acc of the Missing/Extra Labels tests (paper 000, Eq. 10–11).

For a unit k with correct concept t_k and a perturbed concept c± (see :mod:`neuroneval.sanity.perturb`)::

    Δs(k) = E[ s(a_k, c±_{t_k}) − s(a_k, c_{t_k}) ] / (max − min)          (Eq. 10, normalised as in Sec. 4.2)
    Decrease Acc = (1/|K|) Σ_k 1[Δs(k) < −ε]                                (Eq. 11, ε = 1e-3)
    Increase fraction = (1/|K|) Σ_k 1[Δs(k) > ε]

``max − min`` is the width of the metric's value range, read from ``neuroneval.metrics`` (``MetricSpec.
value_range``): 1 for [0, 1] metrics, 2 for [−1, 1] metrics. Metrics with an unbounded range (MAD, WPMI)
are normalised by the observed spread of their scores, ``max − min`` over the score matrices of the
experiment (docs/design.md §4.2; the authors take it over the full unit × concept score matrices of the original,
missing- and extra-labels concepts).

Decrease Acc and the increase fraction are fractions in [0, 1] here (the paper prints percentages).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neuroneval.metrics import get_spec

#: ε of Eq. 11 (the paper's choice; App. E.4 varies it).
DEFAULT_EPSILON = 1e-3


def has_fixed_span(metric: str) -> bool:
    """Whether the metric's value range is finite (so ``max − min`` does not depend on the data)."""
    low, high = get_spec(metric).value_range
    return math.isfinite(low) and math.isfinite(high)


def value_span(metric: str, *score_arrays: Any) -> float:
    """``max − min`` used to normalise score differences of ``metric``.

    Parameters
    ----------
    metric : str
        A registered metric or ``hmean:`` combination.
    *score_arrays : array-like
        Observed scores (any shapes). Used only when the metric's range is unbounded: the span is then
        ``max − min`` over all finite values of all arrays.

    Returns
    -------
    float
        ``high − low`` of ``METRICS[metric].value_range`` when finite (1 for [0, 1], 2 for [−1, 1]),
        otherwise the observed span.

    Raises
    ------
    ValueError
        Unbounded range and no observed scores, or observed scores that are all equal.

    Examples
    --------
    >>> value_span("iou"), value_span("correlation"), value_span("mad", [0.2, -0.3], [[0.7]])
    (1.0, 2.0, 1.0)
    """
    low, high = get_spec(metric).value_range
    if math.isfinite(low) and math.isfinite(high):
        return float(high - low)
    values = [np.asarray(array, dtype=np.float64).ravel() for array in score_arrays]
    values = [v[np.isfinite(v)] for v in values]
    values = [v for v in values if v.size]
    if not values:
        raise ValueError(f"{metric} has an unbounded value range {(low, high)}: pass observed scores to "
                         f"normalise its differences by their max − min")
    observed = np.concatenate(values)
    span = float(observed.max() - observed.min())
    if not span > 0:
        raise ValueError(f"{metric}: the observed scores are all equal ({observed[0]}), so max − min is 0")
    return span


def normalized_delta(perturbed: Any, original: Any, span: float) -> np.ndarray:
    """``(s(a, c±) − s(a, c)) / span`` elementwise (Eq. 10 before the expectation), as float64."""
    if not span > 0:
        raise ValueError(f"span must be positive, got {span}")
    return (np.asarray(perturbed, dtype=np.float64) - np.asarray(original, dtype=np.float64)) / span


def decrease_accuracy(deltas: Any, epsilon: float = DEFAULT_EPSILON) -> float:
    """Decrease Acc = mean of ``1[Δs < −ε]`` (Eq. 11), a fraction in [0, 1]; NaN for no deltas."""
    values = np.asarray(deltas, dtype=np.float64).ravel()
    return float(np.mean(values < -epsilon)) if values.size else math.nan


def increase_fraction(deltas: Any, epsilon: float = DEFAULT_EPSILON) -> float:
    """Fraction of ``Δs > ε`` (the perturbed concept scores *better*), in [0, 1]; NaN for no deltas."""
    values = np.asarray(deltas, dtype=np.float64).ravel()
    return float(np.mean(values > epsilon)) if values.size else math.nan


def summarize_deltas(deltas: Any, epsilon: float = DEFAULT_EPSILON) -> dict[str, float]:
    """Mean Δs, its standard error, Decrease Acc and increase fraction of a set of normalised differences.

    Examples
    --------
    >>> summary = summarize_deltas([-0.5, -0.0005, 0.01, -0.2])
    >>> summary["decrease_acc"], summary["increase_frac"], summary["n"]
    (0.5, 0.25, 4)
    """
    values = np.asarray(deltas, dtype=np.float64).ravel()
    n = values.size
    return {
        "mean_delta": float(values.mean()) if n else math.nan,
        "delta_se": float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.nan,
        "decrease_acc": decrease_accuracy(values, epsilon),
        "increase_frac": increase_fraction(values, epsilon),
        "n": n,
    }
