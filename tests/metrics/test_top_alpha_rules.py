"""Top-α rules and the sort stability reference mode relies on (issue 14, item 5).

The authors' public code (Neuron_Eval ``metrics.py``, ``_binarize_act``) binarizes a unit by
``k = ceil(alpha * n)``, ``cutoff = k-th largest activation`` and ``B(a) = 1[a >= cutoff]``: every input tied
at the cutoff is active. Their metric formulas, as described in that file, with ``m = |B(a)|`` and
``P = |B(c)|`` (``B(c) = 1[c >= 0.5]``):

* precision = TP / max(P, 1); recall = TP / m; F1 = 2TP / (2TP + FP + FN); IoU = TP / (m + P − TP);
* accuracy = (TP + TN) / n; balanced accuracy = ½ (TP / max(m, 1) + TN / max(n − m, 1));
  inverse balanced accuracy = ½ (TP / max(P, 1) + TN / max(n − P, 1));
* AUC = (Σ_{i ∈ B(a)} r_i − m(m − 1)/2) / max(m(n − m), 1), r = 0-based ranks of c after adding 1e-7·U;
* AUPRC = average precision of the score c against the label B(a) (torcheval ``binary_auprc``);
* WPMI = (1/m) Σ_{i ∈ B(a)} log max(c_i, 1e-8) − λ log mean(c).

:func:`transcribed` below is written from that description, one pair at a time with explicit sets and loops;
it shares no code with the engine. Concepts are continuous with distinct values at least 1e-3 apart, so the
1e-7 noise of the AUC ranks cannot reorder them and every value is deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from neuroneval.metrics import DEFAULTS, METRICS, TOP_ALPHA_RULES, FeatureCache, score, score_grid, score_pairs
from neuroneval.metrics.backend import NumpyBackend
from neuroneval.metrics.binarize import top_alpha, top_count
from neuroneval.metrics.context import STREAM_UNIT_NOISE, _noise
from neuroneval.metrics.ranks import noisy_values
from tests.metrics.conftest import quiet_score

TOP_METRICS = ["recall", "precision", "f1", "iou", "accuracy", "balanced_accuracy", "inverse_balanced_accuracy",
               "auc", "auprc", "wpmi"]
LAM = 0.6
ALPHAS = (0.0025, 0.01, 0.05, 0.2, 0.5)
N = 400

#: α grid of the paper (App. F) and the numbers of inputs of its settings and theoretical test.
PAPER_ALPHAS = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
PAPER_SIZES = (50_000, 36_500, 5_794, 500_000, 100_000, 20_000)


def tied_units(rng: np.random.Generator, n: int) -> np.ndarray:
    """Units with ties at many top-α cutoffs: rounded normal, ReLU zeros, constant, binary, a float32 sigmoid
    saturated at exactly 1.0 on a fifth of the inputs, a 3-level unit, and one without ties."""
    saturated = (1.0 / (1.0 + np.exp(-(rng.standard_normal(n) * 2 + np.where(rng.random(n) < 0.2, 200.0, 0.0)))))
    columns = [
        np.round(rng.standard_normal(n), 1),
        np.maximum(np.round(rng.standard_normal(n), 1), 0.0),
        np.full(n, 0.25),
        (rng.random(n) < 0.3).astype(float),
        saturated.astype(np.float32).astype(float),
        rng.integers(0, 3, n).astype(float),
        rng.permutation(n) / n,
    ]
    return np.column_stack(columns)


def distinct_concepts(rng: np.random.Generator, n: int) -> np.ndarray:
    """Concepts whose values are distinct and at least 6e-4 apart (so 1e-7 noise never reorders them): three
    uniform on [0, 1) and one with few values ≥ 0.5."""
    columns = [rng.choice(1000, size=n, replace=False) / 1000.0 for _ in range(3)]
    rare = rng.choice(1000, size=n, replace=False) * 0.0006
    return np.column_stack([*columns, rare])


def transcribed(metric: str, a: np.ndarray, c: np.ndarray, alpha: float, lam: float = LAM) -> float:
    """The authors' behaviour for one (unit, concept) pair, from the description in the module docstring."""
    n = len(a)
    k = math.ceil(alpha * n)
    kth_largest = sorted(a.tolist(), reverse=True)[k - 1]
    active = {i for i in range(n) if a[i] >= kth_largest}
    positive = {i for i in range(n) if c[i] >= 0.5}
    everything = set(range(n))
    tp = len(active & positive)
    fp = len(positive - active)
    fn = len(active - positive)
    tn = len(everything - active - positive)
    m, p = len(active), len(positive)
    if metric == "recall":
        return tp / m
    if metric == "precision":
        return tp / max(p, 1)
    if metric == "f1":
        return 2 * tp / (2 * tp + fp + fn)
    if metric == "iou":
        return tp / (m + p - tp)
    if metric == "accuracy":
        return (tp + tn) / n
    if metric == "balanced_accuracy":
        return 0.5 * (tp / max(m, 1) + tn / max(n - m, 1))
    if metric == "inverse_balanced_accuracy":
        return 0.5 * (tp / max(p, 1) + tn / max(n - p, 1))
    if metric == "auc":
        rank = {i: sum(1 for j in range(n) if c[j] < c[i]) for i in active}
        return (sum(rank.values()) - m * (m - 1) / 2) / max(m * (n - m), 1)
    if metric == "auprc":
        area, previous_recall = 0.0, 0.0
        for threshold in sorted(set(c.tolist()), reverse=True):
            predicted = {i for i in range(n) if c[i] >= threshold}
            hits = len(predicted & active)
            area += (hits / m - previous_recall) * hits / len(predicted)
            previous_recall = hits / m
        return area
    if metric == "wpmi":
        return sum(math.log(max(c[i], 1e-8)) for i in active) / m - lam * math.log(float(np.mean(c)))
    raise AssertionError(metric)


@pytest.fixture(scope="module")
def tied_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(141)
    return tied_units(rng, N), distinct_concepts(rng, N)


def test_the_data_has_ties_at_the_cutoff(tied_data) -> None:
    """Guard: on these units most α leave ties at the cutoff, so the two rules really differ."""
    activations, _ = tied_data
    straddled = 0
    for alpha in ALPHAS:
        k = math.ceil(alpha * N)
        for unit in activations.T:
            kth = np.sort(unit)[::-1][k - 1]
            straddled += int(np.sum(unit >= kth) > k)
    assert straddled >= 15


@pytest.mark.parametrize("metric", TOP_METRICS)
def test_reference_mode_matches_the_transcribed_authors_behaviour_on_tied_units(metric: str, tied_data) -> None:
    activations, concepts = tied_data
    for alpha in ALPHAS:
        assert top_count(alpha, N) == math.ceil(alpha * N)
        params = {"alpha": alpha, **({"lam": LAM} if metric == "wpmi" else {})}
        got = quiet_score(score, metric, activations, concepts, ties="reference", seed=3, **params)
        for k in range(activations.shape[1]):
            for t in range(concepts.shape[1]):
                expected = transcribed(metric, activations[:, k], concepts[:, t], alpha)
                assert got[k, t] == pytest.approx(expected, abs=1e-12), (alpha, k, t)


@pytest.mark.parametrize("metric", TOP_METRICS)
def test_exactly_k_is_a_different_rule_on_tied_units(metric: str, tied_data) -> None:
    """The former reference-mode rule (exactly k inputs) differs from the authors' on these units by up to ½."""
    activations, concepts = tied_data
    params = {"alpha": 0.2, **({"lam": LAM} if metric == "wpmi" else {})}
    kept = quiet_score(score, metric, activations, concepts, ties="reference", **params)
    exact = quiet_score(score, metric, activations, concepts, ties="reference", top_alpha="exactly_k", **params)
    assert np.max(np.abs(kept - exact)) > 0.01
    assert np.array_equal(kept[-1], exact[-1])  # the unit without ties


def test_constant_unit_auc_is_zero_in_reference_mode_and_half_in_average_mode(tied_data) -> None:
    activations, concepts = tied_data
    constant = activations[:, 2:3]
    assert np.all(quiet_score(score, "auc", constant, concepts, ties="reference", alpha=0.05) == 0.0)
    assert np.all(quiet_score(score, "auc", constant, concepts, alpha=0.05) == 0.5)
    empty = np.zeros((N, 1))
    assert quiet_score(score, "inverse_auc", activations, empty, ties="reference")[0, 0] == 0.0


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_exactly_k_keeps_the_k_largest_with_later_inputs_winning_ties(ties: str, tied_data) -> None:
    """``exactly_k`` = the last k inputs in (tie value, position) order; the tie values are the activations
    (average mode) or the float32-noised activations of the engine's unit-noise stream (reference mode)."""
    activations, _ = tied_data
    seed = 11
    n_units = activations.shape[1]
    if ties == "reference":
        tie_values = noisy_values(activations.T, _noise(seed, STREAM_UNIT_NOISE, n_units, N))
    else:
        tie_values = activations.T
    for alpha in ALPHAS:
        k = top_count(alpha, N)
        expected = np.zeros((n_units, N), dtype=bool)
        for unit in range(n_units):
            order = sorted(range(N), key=lambda i, row=tie_values[unit]: (row[i], i))
            expected[unit, order[N - k:]] = True
        # recall's numerator with a concept that is 1 on a single input reads B(a) one input at a time
        probes = np.eye(N)
        got = quiet_score(score, "recall", activations, probes, ties=ties, seed=seed, alpha=alpha,
                          top_alpha="exactly_k") * k
        np.testing.assert_array_equal(np.rint(got).astype(bool), expected, err_msg=str(alpha))


def test_both_rules_give_the_ideal_unit_itself_in_the_theoretical_setting() -> None:
    """Tables C.1–C.4: the authors skip binarization (``alpha=False``, B(a) = a); at α = s/n both rules agree."""
    n = 500_000
    counts = [round(gamma * n) for gamma in (0.499, 0.1, 0.01, 0.001, 0.0001)]
    units = (np.arange(n)[None, :] < np.array(counts)[:, None]).astype(np.float64)
    be = NumpyBackend()
    for row, count in enumerate(counts):
        for rule in TOP_ALPHA_RULES:
            bits = top_alpha(be, units[row:row + 1], count / n, rule)
            assert np.array_equal(bits[0], units[row]), (count, rule)


def test_k_equals_the_authors_ceiling_on_the_paper_grid() -> None:
    for n in PAPER_SIZES:
        for alpha in PAPER_ALPHAS:
            assert top_count(alpha, n) == min(n, math.ceil(alpha * n)), (n, alpha)


def test_k_rounds_alpha_n_to_9_decimals_and_keeps_at_least_one_input() -> None:
    """k = ⌈round(α·n, 9)⌉ clipped to [1, n], written out: α·n = 3.0000000004 (float error at the 10th decimal)
    gives 3, not 4, while 3.000000004 (the 9th) gives 4; an α so small that α·n rounds to 0 still selects one
    input, and α = 1 all n."""
    assert 0.030000000004 * 100 != 3.0  # the product carries the error the rounding removes
    assert top_count(0.030000000004, 100) == 3
    assert top_count(0.03000000004, 100) == 4
    assert top_count(1e-12, 100) == 1
    assert top_count(1.0, 100) == 100


def test_top_alpha_option_is_validated_and_defaults_to_the_authors_rule(tied_data) -> None:
    activations, concepts = tied_data
    assert DEFAULTS["top_alpha"] == "at_least_kth"
    for metric in TOP_METRICS:
        assert "top_alpha" in METRICS[metric].params
    with pytest.raises(ValueError, match="top_alpha must be one of"):
        score("iou", activations, concepts, top_alpha="exact")
    with pytest.raises(ValueError, match="takes no parameter"):
        score("correlation", activations, concepts, top_alpha="exactly_k")
    default = quiet_score(score, "iou", activations, concepts, alpha=0.2)
    explicit = quiet_score(score, "iou", activations, concepts, alpha=0.2, top_alpha="at_least_kth")
    np.testing.assert_array_equal(default, explicit)


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_a_shared_cache_keeps_the_rules_apart(ties: str, tied_data) -> None:
    activations, concepts = tied_data
    cache = FeatureCache()
    for metric in ("iou", "auprc", "wpmi"):
        for rule in (*TOP_ALPHA_RULES, "at_least_kth"):
            fresh = quiet_score(score, metric, activations, concepts, ties=ties, alpha=0.2, top_alpha=rule)
            cached = quiet_score(score, metric, activations, concepts, ties=ties, alpha=0.2, top_alpha=rule,
                                 cache=cache)
            np.testing.assert_array_equal(cached, fresh, err_msg=f"{metric} {rule}")
            listed = quiet_score(score_pairs, metric, activations, concepts, [[0, 1], [4, 2]], ties=ties,
                                 alpha=0.2, top_alpha=rule, cache=cache)
            np.testing.assert_allclose(listed, fresh[[0, 4], [1, 2]], rtol=0, atol=1e-12)


@pytest.mark.parametrize("rule", TOP_ALPHA_RULES)
def test_score_grid_carries_the_rule(rule: str, tied_data) -> None:
    activations, concepts = tied_data
    grid = [{"alpha": alpha} for alpha in ALPHAS]
    got = quiet_score(score_grid, "f1", activations, concepts, None, grid, ties="reference", top_alpha=rule)
    for point, scores in zip(grid, got, strict=True):
        expected = quiet_score(score, "f1", activations, concepts, ties="reference", top_alpha=rule, **point)
        np.testing.assert_array_equal(scores, expected)
