"""Rules of :mod:`neuroneval.sanity.analytical` (paper 000, App. D) against independent oracles.

Pinned here:

* ``ANALYTICAL_METRICS``: the fifteen metrics of the module's table plus Spearman, nothing sampled;
* ``score_after``: every metric's form against the module docstring's table in (k, x, γ) at integer and real counts
  inside the domain (K ≥ 1 kept, X < n − s added; s below and above n/2; λ ≠ 1), and against the metric engine
  (``ties="average"``, α = s/n) on explicit c⁻ / c⁺ vectors at every count, the undefined ends K = 0 and
  X = n − s included; ``hmean:`` combinations of two and three metrics (0 where any part is ≤ 0), a single
  metric keeping its negative values; λ defaulting to 1; degree-0 homogeneity; the refusals (a metric without a
  closed form named alone, checked before a bad test name, which is named too, whatever its type: ``None`` and
  ``1`` get the same ValueError in every entry point); test names compared by value, not identity; the leading
  arguments accepted by name and λ, strength, ε and span only by name;
* ``expected_delta`` with ``n``: the exact binomial sum (pmf written here with ``math.comb``) of engine Δs over
  K ~ Bin(s, r₋) or X ~ Bin(n − s, q), q = (r₊ − 1)·s/(n − s) capped at 1 (all of the mass at X = n − s), for
  every metric and two combinations, default and other strengths; the span (the registry's range width, 1 for
  MAD and WPMI, or ``span``); s = round(γ·n) accepted from 1 to n − 1 and refused at 0, n, above n and below 0;
* ``expected_delta`` without ``n`` (population limit): the engine at an n where the counts γ·r₋·n, γ(r₊ − 1)·n
  are integers (the forms are homogeneous of degree 0), the added fraction capped at 1 − γ (extra labels only),
  small r₋ (K = 1), Table D.2 at the default strengths; γ refused at 0, 1 and outside, accepted just inside;
* ``decrease_probability``: ``P(Δs < −ε)`` summed here over the binomial support, strict at Δs = −ε, ε
  defaulting to 1e-3, normalised Δs, every draw counted for a negative ε (the whole mass, never above 1);
* ``analytical_table``: rows metric × test × γ in order, the default γ columns (0.499, 0.1, 0.01, 0.001, 1e-4),
  ``n``, Decrease Acc ``1[Δs < −ε]`` in the population limit and the exact probability for finite n, λ and ε
  passed on with their defaults.
"""

from __future__ import annotations

import math
import warnings
from functools import cache

import numpy as np
import pytest

from neuroneval.metrics import get_spec, options_for, score
from neuroneval.sanity import analytical
from neuroneval.sanity.params import metric_params

LOG_1E8 = math.log(1e-8)
LAM = 0.7  # λ ≠ 1, so that a dropped λ shows

# The module docstring's table: s(a, c⁻) in k = K/s and s(a, c⁺) in x = X/s at activation frequency γ (g), λ (lam).
MISSING_TABLE = {
    "recall": lambda k, g, lam: k,
    "precision": lambda k, g, lam: 1.0 if k > 0 else 0.0,
    "f1": lambda k, g, lam: 2 * k / (1 + k),
    "iou": lambda k, g, lam: k,
    "accuracy": lambda k, g, lam: 1 - g * (1 - k),
    "balanced_accuracy": lambda k, g, lam: (1 + k) / 2,
    "inverse_balanced_accuracy": lambda k, g, lam: 0.5 + (1 - g) / (2 * (1 - g * k)),
    "auc": lambda k, g, lam: (1 + k) / 2,
    "inverse_auc": lambda k, g, lam: 1 - g * (1 - k) / (2 * (1 - g * k)),
    "correlation": lambda k, g, lam: math.sqrt(k * (1 - g) / (1 - g * k)),
    "spearman": lambda k, g, lam: math.sqrt(k * (1 - g) / (1 - g * k)),
    "cosine": lambda k, g, lam: math.sqrt(k),
    "auprc": lambda k, g, lam: k + (1 - k) * g,
    "inverse_auprc": lambda k, g, lam: k,
    "mad": lambda k, g, lam: 1 - g * (1 - k) / (1 - g * k),
    "wpmi": lambda k, g, lam: (1 - k) * LOG_1E8 - lam * math.log(g * k),
}
EXTRA_TABLE = {
    "recall": lambda x, g, lam: 1.0,
    "precision": lambda x, g, lam: 1 / (1 + x),
    "f1": lambda x, g, lam: 2 / (2 + x),
    "iou": lambda x, g, lam: 1 / (1 + x),
    "accuracy": lambda x, g, lam: 1 - g * x,
    "balanced_accuracy": lambda x, g, lam: 1 - g * x / (2 * (1 - g)),
    "inverse_balanced_accuracy": lambda x, g, lam: 1 / (2 * (1 + x)) + 0.5,
    "auc": lambda x, g, lam: 1 - g * x / (2 * (1 - g)),
    "inverse_auc": lambda x, g, lam: (1 + x / 2) / (1 + x),
    "correlation": lambda x, g, lam: math.sqrt((1 - g * (1 + x)) / ((1 - g) * (1 + x))),
    "spearman": lambda x, g, lam: math.sqrt((1 - g * (1 + x)) / ((1 - g) * (1 + x))),
    "cosine": lambda x, g, lam: 1 / math.sqrt(1 + x),
    "auprc": lambda x, g, lam: 1 / (1 + x),
    "inverse_auprc": lambda x, g, lam: 1 / (1 + x) + g * x,
    "mad": lambda x, g, lam: 1 / (1 + x),
    "wpmi": lambda x, g, lam: -lam * math.log(g * (1 + x)),
}
METRICS = tuple(MISSING_TABLE)
COMBINATIONS = ("hmean:recall+precision", "hmean:auc+inverse_auc", "hmean:wpmi+recall", "hmean:f1+iou+cosine")
TESTS = ("missing", "extra")


@cache
def engine(metric: str, test: str, s: int, n: int, lam: float = 1.0) -> np.ndarray:
    """Engine scores (``ties="average"``, α = s/n) of the ideal unit against c⁻ with K = 0 … s kept positives or
    c⁺ with X = 0 … n − s added positives, built as explicit vectors."""
    ideal = (np.arange(n) < s).astype(np.float64)
    columns = []
    for count in range(s + 1) if test == "missing" else range(n - s + 1):
        concept = ideal.copy()
        if test == "missing":
            concept[count:s] = 0.0
        else:
            concept[s:s + count] = 1.0
        columns.append(concept)
    options = options_for(metric, ties="average", **metric_params(metric, alpha=s / n, lam=lam))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        values = score(metric, ideal[:, None], np.stack(columns, axis=1), options=options)
    return np.asarray(values, dtype=np.float64).ravel()


def span_of(metric: str) -> float:
    """The registry's range width, 1 for unbounded ranges (raw differences)."""
    low, high = get_spec(metric).value_range
    return high - low if math.isfinite(low) and math.isfinite(high) else 1.0


def pmf(test: str, s: int, n: int, strength: float) -> np.ndarray:
    """Bin(s, r₋) over K = 0 … s or Bin(n − s, q) over X = 0 … n − s, q = (r₊ − 1)·s/(n − s) capped at 1."""
    trials, p = (s, strength) if test == "missing" else (n - s, min(1.0, (strength - 1.0) * s / (n - s)))
    return np.array([math.comb(trials, j) * p**j * (1 - p) ** (trials - j) for j in range(trials + 1)])


def exact_deltas(metric: str, test: str, s: int, n: int, lam: float = 1.0, span: float | None = None) -> np.ndarray:
    """Normalised Δs of every count against the original (K = s resp. X = 0)."""
    scores = engine(metric, test, s, n, lam)
    original = scores[-1] if test == "missing" else scores[0]
    return (scores - original) / (span_of(metric) if span is None else span)


def exact_expectation(metric, test, s, n, strength, lam=1.0, span=None) -> float:
    return float(np.sum(pmf(test, s, n, strength) * exact_deltas(metric, test, s, n, lam, span)))


def exact_decrease(metric, test, s, n, strength, epsilon, lam=1.0, span=None) -> float:
    deltas = exact_deltas(metric, test, s, n, lam, span)
    return float(sum(p for p, delta in zip(pmf(test, s, n, strength), deltas, strict=True) if delta < -epsilon))


DEFAULT_STRENGTH = {"missing": 0.5, "extra": 2.0}


# --- ANALYTICAL_METRICS and score_after -------------------------------------------------------------------------


def test_analytical_metrics_are_the_table_rows() -> None:
    assert set(analytical.ANALYTICAL_METRICS) == set(METRICS)
    assert len(analytical.ANALYTICAL_METRICS) == 16


@pytest.mark.parametrize("metric", METRICS)
def test_score_after_follows_the_documented_table(metric: str) -> None:
    """Integer counts inside the domain at s < n/2 and s > n/2, real counts, and degree-0 homogeneity."""
    for s, n in ((3, 10), (7, 10)):
        g = s / n
        kept = np.arange(1, s + 1)
        expected = [MISSING_TABLE[metric](k / s, g, LAM) for k in kept]
        np.testing.assert_allclose(analytical.score_after(metric, "missing", kept, s, n, lam=LAM), expected,
                                   rtol=1e-12, atol=1e-12)
        added = np.arange(n - s)
        expected = [EXTRA_TABLE[metric](x / s, g, LAM) for x in added]
        np.testing.assert_allclose(analytical.score_after(metric, "extra", added, s, n, lam=LAM), expected,
                                   rtol=1e-12, atol=1e-12)
    # Real counts (population limit) and the same fractions scaled by 1/20 (s and n as floats).
    for scale in (1.0, 0.05):
        got = analytical.score_after(metric, "missing", 1.5 * scale, 3 * scale, 10 * scale, lam=LAM)
        assert float(got) == pytest.approx(MISSING_TABLE[metric](0.5, 0.3, LAM), rel=1e-12, abs=1e-12)
        got = analytical.score_after(metric, "extra", 0.5 * scale, 3 * scale, 10 * scale, lam=LAM)
        assert float(got) == pytest.approx(EXTRA_TABLE[metric](0.5 / 3, 0.3, LAM), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("metric", [*METRICS, *COMBINATIONS])
def test_score_after_is_the_engine_at_every_count(metric: str) -> None:
    """All K = 0 … s and X = 0 … n − s, the undefined ends (no label left, no negative left) included."""
    for s, n in ((3, 10), (7, 10), (1, 2)):
        for test in TESTS:
            counts = np.arange(s + 1) if test == "missing" else np.arange(n - s + 1)
            got = analytical.score_after(metric, test, counts, s, n, lam=LAM)
            np.testing.assert_allclose(got, engine(metric, test, s, n, LAM), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{metric} {test} s={s} n={n}")


def test_combinations_are_harmonic_means_and_zero_where_a_part_is_not_positive() -> None:
    """hmean of the parts where all are > 0, else 0; one metric alone keeps a negative value."""
    k = np.arange(4)
    parts = [analytical.score_after(m, "missing", k, 3, 10, lam=LAM) for m in ("wpmi", "recall")]
    assert parts[0][0] < 0 and parts[1][0] == 0  # K = 0: WPMI = (1 − λ) log 1e-8 < 0 and recall 0
    expected = [2 / (1 / a + 1 / b) if a > 0 and b > 0 else 0.0 for a, b in zip(*parts, strict=True)]
    np.testing.assert_allclose(analytical.score_after("hmean:wpmi+recall", "missing", k, 3, 10, lam=LAM), expected,
                               rtol=1e-12)
    # A negative part beside a positive one: WPMI at K = 0 is (1 − λ) log 1e-8 < 0, AUC ½.
    wpmi = (1 - LAM) * LOG_1E8
    assert float(analytical.score_after("wpmi", "missing", 0, 3, 10, lam=LAM)) == pytest.approx(wpmi)
    assert float(analytical.score_after("hmean:wpmi+auc", "missing", 0, 3, 10, lam=LAM)) == 0.0
    three = analytical.score_after("hmean:f1+iou+cosine", "extra", 2, 3, 10)
    f1, iou, cosine = 2 * 3 / (2 * 3 + 2), 3 / 5, math.sqrt(3 / 5)
    assert float(three) == pytest.approx(3 / (1 / f1 + 1 / iou + 1 / cosine), rel=1e-12)


def test_score_after_lam_defaults_to_one() -> None:
    assert float(analytical.score_after("wpmi", "extra", 0, 3, 10)) == pytest.approx(-math.log(0.3), rel=1e-12)
    assert float(analytical.score_after("wpmi", "missing", 3, 3, 10)) == pytest.approx(-math.log(0.3), rel=1e-12)


def test_score_after_refusals() -> None:
    with pytest.raises(ValueError, match=r"no closed form for \['correlation_tr'\] \(top-and-random"):
        analytical.score_after("correlation_tr", "missing", 1, 3, 10)
    with pytest.raises(ValueError, match=r"no closed form for \['spearman_tr'\]"):
        analytical.score_after("hmean:iou+spearman_tr", "extra", 1, 3, 10)
    with pytest.raises(ValueError, match="no closed form"):  # the metric is checked first
        analytical.score_after("correlation_tr", "both", 1, 3, 10)
    for bad in ("both", "Missing", ""):
        with pytest.raises(ValueError, match=f"test must be 'missing' or 'extra', got '{bad}'"):
            analytical.score_after("iou", bad, 1, 3, 10)


def test_test_names_are_compared_by_value() -> None:
    """A test name built at run time (not the interned literal) selects the same forms."""
    missing, extra = "".join(["miss", "ing"]), "".join(["ext", "ra"])
    assert float(analytical.score_after("iou", missing, 1, 3, 10)) == pytest.approx(1 / 3)
    assert float(analytical.score_after("iou", extra, 1, 3, 10)) == pytest.approx(3 / 4)
    assert analytical.expected_delta("iou", missing, 0.3) == pytest.approx(-0.5)
    assert analytical.expected_delta("iou", extra, 0.3, 10) == pytest.approx(exact_expectation("iou", "extra", 3, 10,
                                                                                                2.0))
    assert analytical.expected_delta("iou", missing, 0.3, 10) == pytest.approx(
        exact_expectation("iou", "missing", 3, 10, 0.5))
    assert analytical.decrease_probability("iou", missing, 0.3, 10) == pytest.approx(
        exact_decrease("iou", "missing", 3, 10, 0.5, 1e-3))
    # The population limit caps the added fraction at 1 − γ for extra labels given by value too (x = 7/3).
    assert analytical.expected_delta("iou", extra, 0.3, strength=4.0) == pytest.approx(0.3 - 1)


def test_test_names_that_are_not_strings_are_refused_by_name() -> None:
    """A test name of another type gets the same ValueError as an unknown string, in every entry point."""
    for bad in (None, 1):
        message = f"test must be 'missing' or 'extra', got {bad!r}"
        with pytest.raises(ValueError, match=message):
            analytical.score_after("iou", bad, 1, 3, 10)
        with pytest.raises(ValueError, match=message):
            analytical.expected_delta("iou", bad, 0.3)
        with pytest.raises(ValueError, match=message):
            analytical.expected_delta("iou", bad, 0.3, 10)
        with pytest.raises(ValueError, match=message):
            analytical.decrease_probability("iou", bad, 0.3, 10)


def test_signatures_keyword_only_options() -> None:
    """The leading arguments may be given by name; λ, strength, ε and span only by name."""
    got = analytical.score_after(metric="iou", test="extra", count=1, positives=3, n=10, lam=1.0)
    assert float(got) == pytest.approx(3 / 4)
    got = analytical.expected_delta(metric="iou", test="missing", gamma=0.3, n=10, strength=0.5)
    assert got == pytest.approx(exact_expectation("iou", "missing", 3, 10, 0.5))
    got = analytical.decrease_probability(metric="iou", test="missing", gamma=0.3, n=10, epsilon=1e-3)
    assert got == pytest.approx(exact_decrease("iou", "missing", 3, 10, 0.5, 1e-3))
    assert len(analytical.analytical_table(metrics=["iou"], gammas=(0.3,), n=None, epsilon=1e-3, lam=1.0)) == 2
    with pytest.raises(TypeError):
        analytical.score_after("wpmi", "extra", 1, 3, 10, 0.5)
    with pytest.raises(TypeError):
        analytical.expected_delta("iou", "missing", 0.3, 10, 0.5)
    with pytest.raises(TypeError):
        analytical.decrease_probability("iou", "missing", 0.3, 10, 1e-3)
    with pytest.raises(TypeError):
        analytical.analytical_table(["iou"], (0.3,), None, 1e-3)


# --- expected_delta, finite n ------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [*METRICS, *COMBINATIONS[:2]])
def test_finite_expectation_is_the_binomial_sum(metric: str) -> None:
    """Default strengths (r₋ = ½, r₊ = 2), other strengths, λ and the default span; s = 3 of n = 10."""
    for test in TESTS:
        got = analytical.expected_delta(metric, test, 0.3, 10, lam=LAM)
        assert got == pytest.approx(exact_expectation(metric, test, 3, 10, DEFAULT_STRENGTH[test], LAM), abs=1e-12)
    got = analytical.expected_delta(metric, "missing", 0.3, 10, strength=0.8, lam=LAM)
    assert got == pytest.approx(exact_expectation(metric, "missing", 3, 10, 0.8, LAM), abs=1e-12)
    got = analytical.expected_delta(metric, "extra", 0.3, 10, strength=1.5, lam=LAM)
    assert got == pytest.approx(exact_expectation(metric, "extra", 3, 10, 1.5, LAM), abs=1e-12)


def test_finite_expectation_span_and_lam_defaults() -> None:
    got = analytical.expected_delta("correlation", "extra", 0.3, 10, span=4.0)
    assert got == pytest.approx(exact_expectation("correlation", "extra", 3, 10, 2.0, span=4.0), abs=1e-12)
    got = analytical.expected_delta("mad", "missing", 0.3, 10, span=0.5)
    assert got == pytest.approx(exact_expectation("mad", "missing", 3, 10, 0.5, span=0.5), abs=1e-12)
    assert span_of("cosine") == 2.0 and span_of("wpmi") == 1.0
    for test in TESTS:
        got = analytical.expected_delta("wpmi", test, 0.3, 10)
        assert got == pytest.approx(exact_expectation("wpmi", test, 3, 10, DEFAULT_STRENGTH[test], 1.0), abs=1e-12)


def test_extra_probability_is_capped_at_one() -> None:
    """q = (r₊ − 1)·s/(n − s) ≥ 1 puts the whole mass on X = n − s (every negative turned positive)."""
    for strength in (4.0, 1 + 7 / 3):  # q = 9/7 (capped) and q = 1
        for metric in ("precision", "accuracy", "correlation"):
            got = analytical.expected_delta(metric, "extra", 0.3, 10, strength=strength)
            scores = engine(metric, "extra", 3, 10)
            assert got == pytest.approx((scores[-1] - scores[0]) / span_of(metric), abs=1e-12)
    # n = 2, s = 1: the one negative always turns positive at r₊ = 2.
    assert analytical.expected_delta("precision", "extra", 0.5, 2) == pytest.approx(-0.5, abs=1e-12)
    assert analytical.decrease_probability("precision", "extra", 0.5, 2) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("function", ["expected_delta", "decrease_probability"])
def test_positive_counts_from_one_to_n_minus_one(function: str) -> None:
    """s = round(γ·n): 1 and n − 1 accepted, 0, n, more than n and negative counts refused with the message."""
    call = getattr(analytical, function)
    for test in TESTS:
        for gamma, s in ((0.1, 1), (0.9, 9)):
            expected = exact_expectation if function == "expected_delta" else exact_decrease
            args = (DEFAULT_STRENGTH[test],) if function == "expected_delta" else (DEFAULT_STRENGTH[test], 1e-3)
            assert call("iou", test, gamma, 10) == pytest.approx(expected("iou", test, s, 10, *args), abs=1e-12)
        for gamma in (0.04, 0.96, 1.0, 1.5, -0.1, -1.0):
            with pytest.raises(ValueError, match=r"γ·n must round to 1 … n − 1 positives, got γ = .*, n = 10"):
                call("iou", test, gamma, 10)


# --- expected_delta, population limit ---------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [*METRICS, *COMBINATIONS[:2]])
def test_population_limit_is_the_engine_at_integer_counts(metric: str) -> None:
    """γ = 0.3 at n = 20 (s = 6): r₋ = ½ → K = 3, r₊ = 2 → X = 6, r₊ = 1.5 → X = 3, r₊ = 4 → X capped at
    n − s = 14; γ = 0.5 at n = 20 (s = 10): r₋ = 0.1 → K = 1; γ = 0.8 at n = 10 (s = 8): r₋ = ½ → K = 4 (not
    capped), r₊ = 1.25 → X = 2."""
    span = span_of(metric)
    cases = [(0.3, 20, "missing", None, 3), (0.5, 20, "missing", 0.1, 1), (0.3, 20, "extra", None, 6),
             (0.3, 20, "extra", 1.5, 3), (0.3, 20, "extra", 4.0, 14), (0.8, 10, "missing", 0.5, 4),
             (0.8, 10, "extra", 1.25, 2)]
    for gamma, n, test, strength, count in cases:
        s = round(gamma * n)
        scores = engine(metric, test, s, n, LAM)
        original = scores[-1] if test == "missing" else scores[0]
        got = analytical.expected_delta(metric, test, gamma, strength=strength, lam=LAM)
        assert got == pytest.approx((scores[count] - original) / span, abs=1e-12), (gamma, test, strength)


def test_population_limit_table_d2_and_defaults() -> None:
    """Table D.2 at the paper's strengths; λ defaults to 1; ``span`` replaces the registry width."""
    for gamma in (0.499, 0.1, 0.01):
        assert analytical.expected_delta("accuracy", "missing", gamma) == pytest.approx(-gamma / 2, abs=1e-12)
        assert analytical.expected_delta("accuracy", "extra", gamma) == pytest.approx(-gamma, abs=1e-12)
        assert analytical.expected_delta("wpmi", "missing", gamma) == pytest.approx(0.5 * LOG_1E8 + math.log(2))
        assert analytical.expected_delta("wpmi", "extra", gamma) == pytest.approx(-math.log(2))
        assert analytical.expected_delta("cosine", "extra", gamma) == pytest.approx((math.sqrt(0.5) - 1) / 2)
        assert analytical.expected_delta("cosine", "extra", gamma, span=1.0) == pytest.approx(math.sqrt(0.5) - 1)


def test_population_gamma_bounds() -> None:
    """γ must lie strictly inside (0, 1): 0, 1 and beyond refused, the values just inside accepted."""
    for gamma in (0.0, 1.0, -0.2, 1.5):
        for test in TESTS:
            with pytest.raises(ValueError, match=rf"gamma must lie in \(0, 1\), got {gamma}"):
                analytical.expected_delta("iou", test, gamma)
    for test in TESTS:
        assert analytical.expected_delta("iou", test, 1e-6) == pytest.approx(-0.5)
    assert analytical.expected_delta("iou", "missing", 1 - 1e-6) == pytest.approx(-0.5)
    # γ → 1: r₊ = 2 would add γ of the inputs, capped at the 1 − γ negatives: x = (1 − γ)/γ.
    gamma = 1 - 1e-6
    assert analytical.expected_delta("iou", "extra", gamma) == pytest.approx(gamma - 1, abs=1e-9)


# --- decrease_probability --------------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [*METRICS, *COMBINATIONS[:2]])
def test_decrease_probability_is_the_binomial_mass_below_minus_epsilon(metric: str) -> None:
    """Default ε = 1e-3 and ε = 0.1 (so that the span matters), default and other strengths, λ."""
    for test in TESTS:
        for epsilon in (None, 0.1):
            options = {} if epsilon is None else {"epsilon": epsilon}
            got = analytical.decrease_probability(metric, test, 0.3, 10, lam=LAM, **options)
            expected = exact_decrease(metric, test, 3, 10, DEFAULT_STRENGTH[test], epsilon or 1e-3, LAM)
            assert got == pytest.approx(expected, abs=1e-12), (test, epsilon)
    got = analytical.decrease_probability(metric, "missing", 0.3, 10, strength=0.8, lam=LAM)
    assert got == pytest.approx(exact_decrease(metric, "missing", 3, 10, 0.8, 1e-3, LAM), abs=1e-12)
    got = analytical.decrease_probability(metric, "extra", 0.3, 10, strength=1.5, lam=LAM, epsilon=0.05)
    assert got == pytest.approx(exact_decrease(metric, "extra", 3, 10, 1.5, 0.05, LAM), abs=1e-12)


def test_decrease_probability_thresholds() -> None:
    """Strict ``Δs < −ε``; ε defaults to 1e-3; the span and ``span`` normalise Δs; λ defaults to 1."""
    # Recall, s = 4 of 10: Δs = K/4 − 1 is exactly −0.25 at K = 3, which ε = 0.25 leaves out.
    p = pmf("missing", 4, 10, 0.5)
    assert analytical.decrease_probability("recall", "missing", 0.4, 10, epsilon=0.25) == pytest.approx(p[:3].sum())
    assert analytical.decrease_probability("recall", "missing", 0.4, 10, epsilon=0.2499) == pytest.approx(p[:4].sum())
    # Accuracy, s = 1 of 2000: losing the label costs 1/2000 = 5e-4, below the default ε but above 1e-4.
    assert analytical.decrease_probability("accuracy", "missing", 0.0005, 2000) == 0.0
    assert analytical.decrease_probability("accuracy", "missing", 0.0005, 2000, epsilon=1e-4) == pytest.approx(0.5)
    # Cosine, s = 3: Δs/2 = (√(2/3) − 1)/2 ≈ −0.092 at K = 2 is not below −0.1, the raw −0.18 is.
    p = pmf("missing", 3, 10, 0.5)
    assert analytical.decrease_probability("cosine", "missing", 0.3, 10, epsilon=0.1) == pytest.approx(p[:2].sum())
    got = analytical.decrease_probability("cosine", "missing", 0.3, 10, epsilon=0.1, span=1.0)
    assert got == pytest.approx(p[:3].sum())
    # WPMI at K = 0 (s = 3, γ = 0.3): Δs = (1 − λ) log 1e-8 + λ log γ < 0 at λ = 1, > 0 at λ = 2.
    assert analytical.decrease_probability("wpmi", "missing", 0.3, 10) == pytest.approx(p[:3].sum())
    assert analytical.decrease_probability("wpmi", "missing", 0.3, 10, lam=2.0) == pytest.approx(p[1:3].sum())
    # Extra WPMI: Δs = −λ log(1 + X/s) < 0 for every X ≥ 1 at λ = 1.
    q = pmf("extra", 3, 10, 2.0)
    assert analytical.decrease_probability("wpmi", "extra", 0.3, 10) == pytest.approx(q[1:].sum())


def test_decrease_probability_of_every_draw_is_one() -> None:
    """−ε above every Δs counts every draw, K = s and X = 0 included: the whole binomial mass, capped at 1
    (its float sum may exceed 1 by rounding, e.g. Bin(3, ½))."""
    for metric, test, gamma, n in (("recall", "missing", 0.3, 10), ("iou", "missing", 0.2, 10),
                                   ("precision", "extra", 0.3, 10), ("precision", "extra", 0.5, 6)):
        got = analytical.decrease_probability(metric, test, gamma, n, epsilon=-1.5)
        assert got <= 1.0 and got == pytest.approx(1.0, abs=1e-12), (metric, test)


# --- analytical_table ------------------------------------------------------------------------------------------


def test_table_population_limit_rows_and_defaults() -> None:
    """metric × test × the default γ columns, in order; Decrease Acc 1[Δs < −ε] (strict); λ defaults to 1."""
    table = analytical.analytical_table(["iou", "wpmi", "recall"])
    gammas = [0.499, 0.1, 0.01, 0.001, 1e-4]
    assert list(table.columns) == ["metric", "test", "gamma", "n", "expected_delta", "expected_decrease_acc"]
    assert table["metric"].tolist() == [m for m in ("iou", "wpmi", "recall") for _ in range(10)]
    assert table["test"].tolist() == [t for _ in range(3) for t in TESTS for _ in range(5)]
    assert table["gamma"].tolist() == gammas * 6
    assert table["n"].isna().all()
    wpmi_missing = 0.5 * LOG_1E8 + math.log(2)
    expected = [-0.5] * 10 + [wpmi_missing] * 5 + [-math.log(2)] * 5 + [-0.5] * 5 + [0.0] * 5
    np.testing.assert_allclose(table["expected_delta"], expected, atol=1e-12)
    assert table["expected_decrease_acc"].tolist() == [1.0] * 25 + [0.0] * 5
    # Δs = −0.5 exactly is not below −ε = 0.5; λ = 0 leaves WPMI under extra labels unchanged.
    table = analytical.analytical_table(["iou", "wpmi"], gammas=(0.3,), epsilon=0.5, lam=0.0)
    assert table["expected_decrease_acc"].tolist() == [0.0, 0.0, 1.0, 0.0]
    np.testing.assert_allclose(table["expected_delta"], [-0.5, -0.5, 0.5 * LOG_1E8, 0.0], atol=1e-12)


def test_table_finite_n_uses_the_exact_expectation_and_probability() -> None:
    table = analytical.analytical_table(["cosine", "wpmi"], gammas=(0.3, 0.5), n=10)
    assert table["n"].tolist() == [10] * 8
    rows = [(m, t, g) for m in ("cosine", "wpmi") for t in TESTS for g in (0.3, 0.5)]
    assert list(zip(table["metric"], table["test"], table["gamma"], strict=True)) == rows
    for row, (metric, test, gamma) in zip(table.itertuples(), rows, strict=True):
        s = round(gamma * 10)
        assert row.expected_delta == pytest.approx(exact_expectation(metric, test, s, 10, DEFAULT_STRENGTH[test]),
                                                   abs=1e-12)
        assert row.expected_decrease_acc == pytest.approx(
            exact_decrease(metric, test, s, 10, DEFAULT_STRENGTH[test], 1e-3), abs=1e-12)
    table = analytical.analytical_table(["wpmi"], gammas=(0.3,), n=10, epsilon=0.5, lam=2.0)
    expected = [exact_decrease("wpmi", t, 3, 10, DEFAULT_STRENGTH[t], 0.5, 2.0) for t in TESTS]
    np.testing.assert_allclose(table["expected_decrease_acc"], expected, atol=1e-12)
    expected = [exact_expectation("wpmi", t, 3, 10, DEFAULT_STRENGTH[t], 2.0) for t in TESTS]
    np.testing.assert_allclose(table["expected_delta"], expected, atol=1e-12)


def test_table_default_metrics_are_all_analytical_metrics() -> None:
    table = analytical.analytical_table(gammas=(0.2,))
    assert table["metric"].tolist() == [m for m in analytical.ANALYTICAL_METRICS for _ in TESTS]
    assert set(table["metric"]) == set(METRICS)


@pytest.mark.parametrize("n", [None, 10])
def test_a_strength_outside_the_perturbations_domain_is_refused(n: int | None) -> None:
    """r₋ outside (0, 1] and r₊ below 1 cannot be drawn (``sanity.perturb`` refuses them): no expectation."""
    for keep in (1.5, 0.0, -0.2, math.nan):
        with pytest.raises(ValueError, match=r"must lie in \(0, 1\] for missing labels"):
            analytical.expected_delta("iou", "missing", 0.3, n, strength=keep)
    for multiplier in (0.5, 0.999, math.nan):
        with pytest.raises(ValueError, match="must be ≥ 1 for extra labels"):
            analytical.expected_delta("iou", "extra", 0.3, n, strength=multiplier)
    for keep, multiplier in ((1.0, 1.0), (1e-9, 1e9)):  # the domains' ends are drawable
        assert math.isfinite(analytical.expected_delta("iou", "missing", 0.3, n, strength=keep))
        assert math.isfinite(analytical.expected_delta("iou", "extra", 0.3, n, strength=multiplier))
    assert analytical.expected_delta("iou", "missing", 0.3, n, strength=1.0) == 0.0  # nothing removed
    assert analytical.expected_delta("iou", "extra", 0.3, n, strength=1.0) == 0.0  # nothing added


def test_decrease_probability_refuses_an_impossible_strength() -> None:
    with pytest.raises(ValueError, match=r"for missing labels, got 1\.5"):
        analytical.decrease_probability("iou", "missing", 0.3, 10, strength=1.5)
    with pytest.raises(ValueError, match=r"for extra labels, got 0\.5"):
        analytical.decrease_probability("iou", "extra", 0.3, 10, strength=0.5)


def test_a_test_name_built_at_run_time_is_checked_by_value() -> None:
    """A test name read from a file or joined at run time is equal to "missing"/"extra" but not the same object as
    the literal: the strength domain is checked all the same (an identity comparison would let r₋ = 1.5 through
    and return NaN)."""
    missing, extra = "".join(["mis", "sing"]), "".join(["ex", "tra"])
    assert missing == "missing" and missing is not "missing"  # noqa: F632 (the point of the test)
    assert extra == "extra" and extra is not "extra"  # noqa: F632
    with pytest.raises(ValueError, match=r"for missing labels, got 1\.5"):
        analytical.expected_delta("iou", missing, 0.3, 10, strength=1.5)
    with pytest.raises(ValueError, match=r"for extra labels, got 0\.5"):
        analytical.expected_delta("iou", extra, 0.3, 10, strength=0.5)
    assert analytical.expected_delta("iou", missing, 0.3, 10) == analytical.expected_delta("iou", "missing", 0.3, 10)


def test_an_empty_metric_list_gives_an_empty_table_with_the_columns() -> None:
    table = analytical.analytical_table([], gammas=(0.1,))
    assert table.empty
    assert list(table.columns) == ["metric", "test", "gamma", "n", "expected_delta", "expected_decrease_acc"]
    assert list(analytical.analytical_table(["recall"], gammas=(0.1,)).columns) == list(table.columns)
