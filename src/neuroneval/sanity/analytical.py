"""Closed forms of the theoretical Missing/Extra Labels tests on ideal neurons (paper 000, App. D).

Setting: an ideal binary unit ``a = c`` with s positives among n inputs (γ = s/n); the unit is binarized
with top-α at α = γ, so ``B(a) = a``. Missing labels keep each positive with probability r₋ (Eq. 9: r₋ = ½,
i.e. p = 1 − r₋ = ½ in App. D), extra labels turn each negative positive with probability
q = (r₊ − 1)·s/(n − s) (Eq. 12: r₊ = 2, App. D's p = r₊ − 1 = 1).

Every metric is then a function of one count: the K kept positives of c⁻ (K ~ Binomial(s, r₋); TP = K,
‖c⁻‖ = K) or the X added positives of c⁺ (X ~ Binomial(n − s, q); TP = s, ‖c⁺‖ = s + X). With ``k = K/s``
and ``x = X/s`` (so a fraction γ·k resp. γ(1 + x) of inputs is positive in c±):

==========================  ==============================================  ============================================
metric                       s(a, c⁻)                                        s(a, c⁺)
==========================  ==============================================  ============================================
recall                       k                                               1
precision                    1  (0 if K = 0)                                 1/(1 + x)
F1                           2k/(1 + k)                                      2/(2 + x)
IoU                          k                                               1/(1 + x)
accuracy                     1 − γ(1 − k)                                    1 − γx
balanced accuracy            (1 + k)/2                                       1 − γx/(2(1 − γ))
inverse balanced accuracy    ½ + (1 − γ)/(2(1 − γk))                          1/(2(1 + x)) + ½
AUC                          (1 + k)/2                                       1 − γx/(2(1 − γ))
inverse AUC                  1 − γ(1 − k)/(2(1 − γk))                         (1 + x/2)/(1 + x)
Pearson (= Spearman, avg.)   √(k(1 − γ)/(1 − γk))                             √((1 − γ(1 + x))/((1 − γ)(1 + x)))
cosine                       √k                                              1/√(1 + x)
AUPRC                        k + (1 − k)γ                                    1/(1 + x)
inverse AUPRC                k                                               1/(1 + x) + γx
MAD                          1 − γ(1 − k)/(1 − γk)                            1/(1 + x)
WPMI (λ)                     (1 − k)·log 1e-8 − λ log(γk)                     −λ log(γ(1 + x))
==========================  ==============================================  ============================================

and every original score s(a, c) is the value at k = 1 resp. x = 0 (1 for every metric except
WPMI = −λ log γ). Spearman with average ranks equals Pearson on binary vectors (ranks of a two-valued vector
are an affine function of it); harmonic-mean combinations (App. E.6) take the harmonic mean of these.

Population limit (n → ∞ at fixed γ; App. D's confusion-matrix fractions): k = r₋ and x = r₊ − 1. With the
paper's strengths this gives Table D.2 — recall −½ | 0, precision 0 | −½, F1 −⅓ | −⅓, IoU −½ | −½,
accuracy −γ/2 | −γ, balanced accuracy −¼ | −γ/(2(1 − γ)), inverse balanced accuracy −γ/(2(2 − γ)) | −¼ —
and the forms derived here: AUC −¼ | −γ/(2(1 − γ)); inverse AUC −γ/(2(2 − γ)) | −¼; Pearson
√((1 − γ)/(2 − γ)) − 1 | √((1 − 2γ)/(2(1 − γ))) − 1 (divided by 2 when normalised; γ → 0: −0.1464 for
both); cosine (1/√2 − 1)/2 = −0.1464 for both; AUPRC −(1 − γ)/2 | −½; inverse AUPRC −½ | −½ + γ;
MAD −γ/(2 − γ) | −½; WPMI ½·log 1e-8 + λ log 2 | −λ log 2 (raw).

Finite n: :func:`expected_delta` with ``n`` sums the binomial distribution of K or X exactly (the ratio
metrics carry an O(1/s) bias at small s, visible in the paper's γ = 1e-4 column), and
:func:`decrease_probability` gives the exact expected Decrease Acc ``P(Δs < −ε)``.

The forms use the metric engine's ``ties="average"`` conventions, including its values for undefined cases
where the table's expression does not apply: c⁻ that lost every label (K = 0) scores precision 0, inverse
balanced accuracy (1 − γ)/2, inverse AUC ½, MAD 0 and WPMI 0; c⁺ positive everywhere (X = n − s) scores inverse
balanced accuracy γ/2, inverse AUC ½ and MAD 0. In ``ties="reference"`` mode AUC under extra labels differs:
the authors' float32 tie-breaking noise leaves c⁺ = 1 values tied in two float32 levels ordered by input
position, so an added positive beats a true positive with probability w ≈ 0.404·0.596 ≈ 0.241 instead of ½,
giving AUC⁺ ≈ 1 − γx(1 − w)/(1 − γ) (−0.756 at γ = 0.499, the published Table C.4 value).

Δs is normalised by the metric's value-range width (1 or 2) from the registry; MAD and WPMI have no fixed
range, so their differences are returned raw unless a ``span`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from neuroneval.metrics import get_spec
from neuroneval.sanity.delta import DEFAULT_EPSILON, has_fixed_span, value_span
from neuroneval.sanity.perturb import DEFAULT_KEEP, DEFAULT_MULTIPLIER

#: log of the WPMI floor (``log max(c, 1e-8)``, docs/design.md §3.3).
LOG_FLOOR = math.log(1e-8)

Form = Callable[[np.ndarray, float, float, float], np.ndarray]


def _ratio(numerator: np.ndarray, denominator: np.ndarray, empty: float = 0.0) -> np.ndarray:
    """numerator / denominator, ``empty`` where the denominator is 0."""
    numerator, denominator = np.broadcast_arrays(np.asarray(numerator, float), np.asarray(denominator, float))
    out = np.full(numerator.shape, empty, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


# Scores after removing labels: K kept positives of s, n inputs (K may be real in the population limit).
def _missing_forms(lam: float) -> dict[str, Form]:
    def iba(k, s, n, _):
        return _ratio(k, 2 * k) + _ratio(n - s, 2 * (n - k))

    def inverse_auc(k, s, n, _):
        return np.where(k > 0, 1 - _ratio(s - k, 2 * (n - k)), 0.5)

    def mad(k, s, n, _):
        return np.where(k > 0, 1 - _ratio(s - k, n - k), 0.0)

    def wpmi(k, s, n, lam_):
        log_mean = np.log(np.maximum(_ratio(k, n), 1e-8))
        return (s - k) / s * LOG_FLOOR - lam_ * log_mean

    correlation = lambda k, s, n, _: np.sqrt(_ratio(k * (n - s), s * (n - k)))  # noqa: E731
    return {
        "recall": lambda k, s, n, _: k / s,
        "precision": lambda k, s, n, _: np.where(k > 0, 1.0, 0.0),
        "f1": lambda k, s, n, _: 2 * k / (s + k),
        "iou": lambda k, s, n, _: k / s,
        "accuracy": lambda k, s, n, _: 1 - (s - k) / n,
        "balanced_accuracy": lambda k, s, n, _: 0.5 + k / (2 * s),
        "inverse_balanced_accuracy": iba,
        "auc": lambda k, s, n, _: (s + k) / (2 * s),
        "inverse_auc": inverse_auc,
        "correlation": correlation,
        "spearman": correlation,
        "cosine": lambda k, s, n, _: np.sqrt(k / s),
        "auprc": lambda k, s, n, _: k / s + (1 - k / s) * s / n,
        "inverse_auprc": lambda k, s, n, _: k / s,
        "mad": mad,
        "wpmi": wpmi,
    }


# Scores after adding labels: X added positives among the n − s negatives.
def _extra_forms(lam: float) -> dict[str, Form]:
    def iba(x, s, n, _):
        return _ratio(s, 2 * (s + x)) + _ratio(n - s - x, 2 * (n - s - x))

    def inverse_auc(x, s, n, _):
        return np.where(n - s - x > 0, (s + 0.5 * x) / (s + x), 0.5)

    def mad(x, s, n, _):
        return np.where(n - s - x > 0, s / (s + x), 0.0)

    correlation = lambda x, s, n, _: np.sqrt(_ratio(s * (n - s - x), (n - s) * (s + x)))  # noqa: E731
    return {
        "recall": lambda x, s, n, _: np.ones_like(np.asarray(x, float)),
        "precision": lambda x, s, n, _: s / (s + x),
        "f1": lambda x, s, n, _: 2 * s / (2 * s + x),
        "iou": lambda x, s, n, _: s / (s + x),
        "accuracy": lambda x, s, n, _: 1 - x / n,
        "balanced_accuracy": lambda x, s, n, _: 1 - x / (2 * (n - s)),
        "inverse_balanced_accuracy": iba,
        "auc": lambda x, s, n, _: 1 - x / (2 * (n - s)),
        "inverse_auc": inverse_auc,
        "correlation": correlation,
        "spearman": correlation,
        "cosine": lambda x, s, n, _: np.sqrt(s / (s + x)),
        "auprc": lambda x, s, n, _: s / (s + x),
        "inverse_auprc": lambda x, s, n, _: s / (s + x) + x / n,
        "mad": mad,
        "wpmi": lambda x, s, n, lam_: -lam_ * np.log((s + x) / n),
    }


#: Metrics (and combinations of them) with a closed form; the top-and-random metrics have none.
ANALYTICAL_METRICS = tuple(_missing_forms(1.0))


def _check(metric: str, test: str) -> tuple[str, ...]:
    spec = get_spec(metric)
    parts = spec.components or (spec.name,)
    missing = [part for part in parts if part not in ANALYTICAL_METRICS]
    if missing:
        raise ValueError(f"no closed form for {missing} (top-and-random metrics are sampled); available: "
                         f"{', '.join(ANALYTICAL_METRICS)} and their hmean: combinations")
    if test not in ("missing", "extra"):
        raise ValueError(f"test must be 'missing' or 'extra', got {test!r}")
    return parts


def score_after(metric: str, test: str, count: np.ndarray | float, positives: float, n: float, *,
                lam: float = 1.0) -> np.ndarray:
    """Score of the ideal unit against c⁻ with ``count`` = K kept labels, or c⁺ with ``count`` = X added labels.

    ``count`` = ``positives`` (missing) or 0 (extra) gives the original score s(a, c). Counts may be real
    (population limit); the forms are homogeneous of degree 0 in (count, positives, n).
    """
    parts = _check(metric, test)
    forms = _missing_forms(lam) if test == "missing" else _extra_forms(lam)
    count = np.asarray(count, dtype=np.float64)
    values = [forms[part](count, float(positives), float(n), lam) for part in parts]
    if len(values) == 1:
        return values[0]
    stacked = np.stack(np.broadcast_arrays(*values))
    positive = np.all(stacked > 0, axis=0)
    return np.where(positive, len(values) / np.sum(1.0 / np.where(stacked > 0, stacked, 1.0), axis=0), 0.0)


def _span(metric: str, span: float | None) -> float:
    if span is not None:
        return float(span)
    return value_span(metric) if has_fixed_span(metric) else 1.0


def _strength(test: str, strength: float | None) -> float:
    """r₋ (missing, in (0, 1]) or r₊ (extra, ≥ 1), the defaults when ``strength`` is None; the domains of
    :mod:`neuroneval.sanity.perturb`, so no expectation is given for a perturbation that cannot be drawn."""
    if test not in ("missing", "extra"):
        raise ValueError(f"test must be 'missing' or 'extra', got {test!r}")
    if strength is None:
        return DEFAULT_KEEP if test == "missing" else DEFAULT_MULTIPLIER
    strength = float(strength)
    if test == "missing" and not 0.0 < strength <= 1.0:
        raise ValueError(f"strength (r₋, the share of positives kept) must lie in (0, 1] for missing labels, "
                         f"got {strength}")
    if test == "extra" and not strength >= 1.0:
        raise ValueError(f"strength (r₊, the multiplier of positives) must be ≥ 1 for extra labels, got {strength}")
    return strength


def _distribution(test: str, positives: int, n: int, strength: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and probabilities of K ~ Bin(s, r₋) or X ~ Bin(n − s, q)."""
    if test == "missing":
        support = np.arange(positives + 1)
        return support, stats.binom.pmf(support, positives, strength)
    q = min(1.0, (strength - 1.0) * positives / (n - positives))
    support = np.arange(n - positives + 1)
    return support, stats.binom.pmf(support, n - positives, q)


def _positives(gamma: float, n: int) -> int:
    positives = round(gamma * n)
    if not 0 < positives < n:
        raise ValueError(f"γ·n must round to 1 … n − 1 positives, got γ = {gamma}, n = {n}")
    return positives


def expected_delta(metric: str, test: str, gamma: float, n: int | None = None, *, strength: float | None = None,
                   lam: float = 1.0, span: float | None = None) -> float:
    """Expected Δs of the ideal unit ``a = c`` at activation frequency γ (App. D; Eq. 10 normalised).

    Parameters
    ----------
    metric : str
        A metric of ``ANALYTICAL_METRICS`` or an ``hmean:`` combination of them.
    test : {"missing", "extra"}
    gamma : float in (0, 1)
    n : int, optional
        None: population limit (App. D, Table D.2 generalised). An int: exact expectation over the binomial
        number of kept/added labels with ``s = round(γ·n)`` positives.
    strength : float, optional
        r₋ (missing, in (0, 1], default 0.5) or r₊ (extra, ≥ 1, default 2).
    lam : float, default 1.0
        λ of WPMI.
    span : float, optional
        Normalising ``max − min``; default the registry's range width (1 or 2), and 1 (raw differences) for
        MAD and WPMI.

    Examples
    --------
    >>> round(expected_delta("accuracy", "extra", 0.1), 6), round(expected_delta("correlation", "missing", 0.499), 4)
    (-0.1, -0.2111)
    >>> round(expected_delta("precision", "extra", 0.0001, n=500_000), 4)  # the published -0.4974 is this bias
    -0.4975
    """
    strength = _strength(test, strength)
    if n is None:
        if not 0.0 < gamma < 1.0:
            raise ValueError(f"gamma must lie in (0, 1), got {gamma}")
        count = gamma * strength if test == "missing" else gamma * (strength - 1.0)
        count = min(count, 1.0 - gamma) if test == "extra" else count
        perturbed = score_after(metric, test, count, gamma, 1.0, lam=lam)
        original = score_after(metric, test, gamma if test == "missing" else 0.0, gamma, 1.0, lam=lam)
        return float((perturbed - original) / _span(metric, span))
    positives = _positives(gamma, n)
    support, probabilities = _distribution(test, positives, n, strength)
    scores = score_after(metric, test, support, positives, n, lam=lam)
    original = score_after(metric, test, positives if test == "missing" else 0, positives, n, lam=lam)
    return float(np.sum(probabilities * (scores - original)) / _span(metric, span))


def decrease_probability(metric: str, test: str, gamma: float, n: int, *, epsilon: float = DEFAULT_EPSILON,
                         strength: float | None = None, lam: float = 1.0, span: float | None = None) -> float:
    """Exact expected Decrease Acc ``P(Δs < −ε)`` of one draw on the ideal unit (finite n; see module doc).

    Examples
    --------
    >>> [round(decrease_probability("recall", test, 0.01, 20_000), 9) for test in ("missing", "extra")]
    [1.0, 0.0]
    """
    strength = _strength(test, strength)
    positives = _positives(gamma, n)
    support, probabilities = _distribution(test, positives, n, strength)
    scores = score_after(metric, test, support, positives, n, lam=lam)
    original = score_after(metric, test, positives if test == "missing" else 0, positives, n, lam=lam)
    deltas = (scores - original) / _span(metric, span)
    return float(min(1.0, np.sum(probabilities[deltas < -epsilon])))


def analytical_table(metrics: Sequence[str] | None = None, gammas: Sequence[float] = (0.499, 0.1, 0.01, 0.001, 1e-4),
                     n: int | None = None, *, epsilon: float = DEFAULT_EPSILON, lam: float = 1.0) -> pd.DataFrame:
    """Expected Δs (and, for finite n, expected Decrease Acc) for each metric, γ and test, as a tidy table.

    Columns: ``metric, test, gamma, n, expected_delta, expected_decrease_acc``. In the population limit
    (``n=None``) one draw's Δs equals its mean, so Decrease Acc is 1 if Δs < −ε and 0 otherwise.
    """
    rows = []
    for metric in ANALYTICAL_METRICS if metrics is None else metrics:
        for test in ("missing", "extra"):
            for gamma in gammas:
                delta = expected_delta(metric, test, gamma, n, lam=lam)
                accuracy = (float(delta < -epsilon) if n is None
                            else decrease_probability(metric, test, gamma, n, epsilon=epsilon, lam=lam))
                rows.append({"metric": metric, "test": test, "gamma": gamma, "n": n, "expected_delta": delta,
                             "expected_decrease_acc": accuracy})
    return pd.DataFrame(rows, columns=["metric", "test", "gamma", "n", "expected_delta", "expected_decrease_acc"])
