"""Kernel paths taken with probability (soft) concepts, checked pair by pair against sklearn and scipy.

With float32 tables on the numpy backend the rank metrics take compiled paths (issue 36 item 4): the average ranks
of units and concepts by one sort per row (:mod:`neuroneval.metrics.rank_kernels`; AUC, inverse AUC, Spearman,
Spearman T&R) and AUPRC by the compiled AP walk with the concepts as scores
(:func:`neuroneval.metrics.ap_kernel.concept_ap_sums`); Spearman keeps its concepts' ranks compactly across unit
blocks. Oracles: ``sklearn.metrics.roc_auc_score`` and
``average_precision_score``, ``scipy.stats.spearmanr``/``pearsonr``/``rankdata`` per pair, on data with heavy ties
(ReLU zeros, rounded values, −0.0 next to 0.0), soft concepts whose ``B(c)`` is empty, all-positive or a single
input, and constant units and concepts; float64 tables that are not exactly float32 take the generic path and must
give the same numbers; so must unit blocks (a small memory budget), concept chunks and an α grid.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats
from sklearn import metrics as skm

from neuroneval.metrics import METRICS, budget, score, score_grid
from neuroneval.metrics import engine as engine_module
from neuroneval.metrics import reference as ref
from neuroneval.metrics.ap_kernel import _rank_keys
from neuroneval.metrics.backend import get_backend
from neuroneval.metrics.metric_options import engine_params
from neuroneval.metrics.rank_kernels import (
    centred_average_ranks,
    centred_ranks_from_firsts,
    rank_keys_of_rows,
    tie_firsts,
)
from neuroneval.metrics.topandrandom import sample_indices
from tests.metrics.conftest import make_activations, quiet_score

N_INPUTS = 1500
ALPHA = 0.02


@pytest.fixture(scope="module")
def soft_data() -> tuple[np.ndarray, np.ndarray]:
    """float32 activations (conftest's tied columns, a ReLU with −0.0 among its zeros, a coarse ReLU) and soft
    concepts: sigmoid of N(−3, 2²) rounded to 3 decimals (≈ 7 % of values ≥ 0.5), values rounded to 1 decimal
    (heavy ties), ReLU-like zeros, B(c) empty (all < 0.5, not constant), all-positive (all ≥ 0.5, not constant), a
    single positive, and a constant concept."""
    rng = np.random.default_rng(360041)
    n = N_INPUTS
    signed_zeros = np.maximum(np.round(rng.standard_normal(n), 2), 0.0)
    signed_zeros[::3] = np.where(signed_zeros[::3] == 0.0, -0.0, signed_zeros[::3])
    units = np.column_stack([make_activations(rng, n), signed_zeros,
                             np.maximum(np.round(rng.standard_normal(n), 0), 0.0)]).astype(np.float32)
    soft = np.round(1.0 / (1.0 + np.exp(-rng.normal(-3.0, 2.0, (n, 4)))), 3)
    single = np.round(rng.random(n) * 0.4, 2)
    single[rng.integers(n)] = 0.9
    concepts = np.column_stack([
        soft,
        np.round(rng.random(n), 1),
        np.clip(np.round(rng.normal(0.2, 0.4, n), 2), 0.0, 1.0),
        np.round(rng.random(n) * 0.49, 3),
        np.round(0.5 + rng.random(n) * 0.5, 3),
        single,
        np.full(n, 0.3),
    ]).astype(np.float32)
    return units, concepts


def _as_inexact_float64(table: np.ndarray) -> np.ndarray:
    """½ + (x − ½)(1 − 2⁻⁴⁰): the same order, ties, B(c) and [0, 1] range, but values that are not exactly float32
    (the compiled ranks do not apply). Every score is invariant to this map except cosine's."""
    return 0.5 + (table.astype(np.float64) - 0.5) * (1.0 - 2.0**-40)


def _oracle(metric: str, activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """sklearn/scipy per pair; B(a) is the top-α binarization (reference), B(c) is c ≥ 0.5; degenerate pairs as the
    engine documents them (AUC 0.5, AP 0 without a positive, correlation 0 for a constant vector)."""
    out = np.zeros((activations.shape[1], concepts.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(activations.shape[1]):
            a = activations[:, k].astype(np.float64)
            unit_label = ref.top_alpha(a, ALPHA)
            for t in range(concepts.shape[1]):
                c = concepts[:, t].astype(np.float64)
                concept_label = c >= 0.5
                if metric == "auc":
                    out[k, t] = skm.roc_auc_score(unit_label, c) if 0 < unit_label.sum() < a.size else 0.5
                elif metric == "auprc":
                    out[k, t] = skm.average_precision_score(unit_label, c)
                elif metric == "inverse_auc":
                    out[k, t] = skm.roc_auc_score(concept_label, a) if 0 < concept_label.sum() < a.size else 0.5
                elif metric == "inverse_auprc":
                    out[k, t] = skm.average_precision_score(concept_label, a) if concept_label.any() else 0.0
                elif metric in ("spearman", "correlation"):
                    if np.all(a == a[0]) or np.all(c == c[0]):
                        continue
                    oracle = stats.spearmanr if metric == "spearman" else stats.pearsonr
                    out[k, t] = oracle(a, c).statistic
    return out


def _params(metric: str) -> dict[str, float]:
    return {"alpha": ALPHA} if "alpha" in METRICS[metric].params else {}


@pytest.mark.parametrize("exact_float32", [True, False], ids=["float32", "float64"])
@pytest.mark.parametrize("metric", ["auc", "auprc", "inverse_auc", "inverse_auprc", "spearman", "correlation"])
def test_probability_concepts_equal_sklearn_and_scipy(metric: str, exact_float32: bool, soft_data) -> None:
    activations, concepts = soft_data
    oracle = _oracle(metric, activations, concepts)
    if not exact_float32:
        activations, concepts = _as_inexact_float64(activations), _as_inexact_float64(concepts)
    got = quiet_score(score, metric, activations, concepts, **_params(metric))
    np.testing.assert_allclose(got, oracle, rtol=0, atol=1e-12)


def test_auc_with_few_active_inputs_equals_sklearn(soft_data) -> None:
    """Units whose top α has few inputs (|B(a)|·24 < n: no constant, binary or top-tied unit) take AUC's fused
    compiled rank sums (:func:`neuroneval.metrics.rank_kernels.active_rank_sums`)."""
    activations, concepts = soft_data
    varying = activations[:, [0, 1, 5, 6]]
    got = quiet_score(score, "auc", varying, concepts, alpha=ALPHA)
    np.testing.assert_allclose(got, _oracle("auc", varying, concepts), rtol=0, atol=1e-12)


@pytest.mark.parametrize("metric", ["auc", "auprc", "inverse_auc", "spearman", "spearman_tr"])
def test_unit_blocks_chunks_and_backends_agree(metric: str, soft_data) -> None:
    """A 16 MiB budget on 40,000 inputs cuts the units into blocks; chunk_size=3 cuts the concepts; the torch backend
    (array paths) and the inexact float64 table (generic ranks) give the same scores."""
    rng = np.random.default_rng(7)
    n = 40_000
    activations = np.column_stack([np.maximum(rng.standard_normal((n, 6)), 0.0),
                                   np.round(rng.standard_normal((n, 6)), 1)]).astype(np.float32)
    concepts = np.round(1.0 / (1.0 + np.exp(-rng.normal(-3.0, 2.0, (n, 7)))), 3).astype(np.float32)
    params = _params(metric)
    whole = quiet_score(score, metric, activations, concepts, memory_budget="unbounded", **params)
    blocked = quiet_score(score, metric, activations, concepts, memory_budget=2**24, chunk_size=3, **params)
    generic = quiet_score(score, metric, _as_inexact_float64(activations), _as_inexact_float64(concepts), **params)
    np.testing.assert_allclose(blocked, whole, rtol=0, atol=1e-12)
    np.testing.assert_allclose(generic, whole, rtol=0, atol=1e-12)
    pytest.importorskip("torch")
    on_torch = quiet_score(score, metric, activations, concepts, device="cpu", **params)
    np.testing.assert_allclose(on_torch, whole, rtol=0, atol=1e-6)


def test_auprc_grid_equals_one_score_per_alpha(soft_data) -> None:
    """A grid context stacks one block of unit labels per α; each block's AUPRC equals sklearn's at that α."""
    activations, concepts = soft_data
    alphas = (0.005, 0.02, 0.3)
    scored = quiet_score(score_grid, "auprc", activations, concepts, None, [{"alpha": alpha} for alpha in alphas])
    for alpha, got in zip(alphas, scored, strict=True):
        expected = quiet_score(score, "auprc", activations, concepts, alpha=alpha, memory_budget="unbounded",
                               chunk_size=2)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k, t = 1, 0
            label = ref.top_alpha(activations[:, k].astype(np.float64), alpha)
            assert got[k, t] == pytest.approx(skm.average_precision_score(label, concepts[:, t]), abs=1e-12)


def test_spearman_tr_on_soft_concepts_equals_scipy_on_the_sample(soft_data) -> None:
    activations, concepts = soft_data
    scores = quiet_score(score, "spearman_tr", activations, concepts, seed=5)
    ctx = engine_module.Context(None, engine_params(METRICS["spearman_tr"].options(seed=5))[0], None,
                                activations.astype(np.float64), concepts, np.arange(activations.shape[1]))
    index, valid = sample_indices(ctx.activations, ctx.unit_rows, ctx)
    assert valid.all()
    for k in range(activations.shape[1]):
        a = activations[index[k], k].astype(np.float64)
        for t in range(concepts.shape[1]):
            c = concepts[index[k], t].astype(np.float64)
            if np.all(a == a[0]) or np.all(c == c[0]):
                assert scores[k, t] == 0.0, (k, t)
            else:
                assert scores[k, t] == pytest.approx(stats.spearmanr(a, c).statistic, abs=1e-12), (k, t)


def test_compiled_ranks_equal_rankdata_and_refuse_inexact_values() -> None:
    rng = np.random.default_rng(11)
    rows = np.round(rng.standard_normal((6, 700)), 1).astype(np.float32)
    rows[0] = 0.0
    rows[1, ::2] = -0.0
    rows[2, :3] = [np.inf, -np.inf, np.inf]
    rows[3] = np.maximum(rows[3], 0.0)
    expected = stats.rankdata(rows, axis=-1) - (rows.shape[1] + 1) / 2.0
    np.testing.assert_array_equal(centred_average_ranks(rows), expected)
    np.testing.assert_array_equal(centred_average_ranks(rows.astype(np.float64).reshape(2, 3, 700)),
                                  expected.reshape(2, 3, 700))
    short = np.round(rng.standard_normal((9, 50)), 0).astype(np.float32)  # insertion-sorted rows (≤ SHORT_ROW)
    short[0, :25] = -0.0
    np.testing.assert_array_equal(centred_average_ranks(short), stats.rankdata(short, axis=-1) - 25.5)
    inexact = rows.astype(np.float64)
    inexact[4, 10] = 0.1
    assert centred_average_ranks(inexact) is None
    assert rank_keys_of_rows(inexact, 16) is None


def test_compiled_rank_keys_equal_the_sorted_walk() -> None:
    """N(x ≥ x_i) equals the array path's; the places are a permutation that keeps ties' places together."""
    rng = np.random.default_rng(12)
    rows = np.maximum(np.round(rng.standard_normal((5, 900)), 1), 0.0).astype(np.float32)
    expected = np.empty(rows.shape, dtype=np.uint32)
    _rank_keys(*get_backend(None).sort_any_order(rows), 16, expected)
    got = rank_keys_of_rows(rows, 16)
    np.testing.assert_array_equal(got >> 16, expected >> 16)
    at_least = (rows[:, None, :] >= rows[:, :, None]).sum(axis=-1)
    np.testing.assert_array_equal(got >> 16, at_least)
    places = got & 0xFFFF
    np.testing.assert_array_equal(np.sort(places, axis=1), np.broadcast_to(np.arange(900), rows.shape))
    assert np.all(places < (got >> 16))


def test_compact_ranks_decode_to_rankdata_and_let_spearman_keep_its_concepts() -> None:
    """tie_firsts (uint16) decodes to scipy's average ranks; at paper scale the compact store (2 bytes per value)
    fits where float32 ranks do not, so Spearman sorts each concept once instead of once per unit block."""
    rng = np.random.default_rng(13)
    rows = np.maximum(np.round(rng.standard_normal((4, 3000)), 1), 0.0).astype(np.float32)
    firsts = tie_firsts(rows)
    assert firsts.dtype == np.uint16
    np.testing.assert_array_equal(centred_ranks_from_firsts(firsts), stats.rankdata(rows, axis=-1) - 1500.5)
    assert tie_firsts(rows.astype(np.float64) + 0.01) is None
    limit = budget.budget_bytes("auto", 50_000, 1400, 1400)
    assert not budget.plan("spearman", limit, 50_000, 1400, 1400).store_concepts
    compact = budget.compact_plan("spearman", limit, 50_000, 1400, 1400)
    assert compact.store_concepts and compact.compact_ranks
    assert budget.compact_ranks_apply("spearman", "numpy", False, 50_000, np.dtype(np.float32))
    assert not budget.compact_ranks_apply("spearman", "torch", False, 50_000, np.dtype(np.float32))
    assert not budget.compact_ranks_apply("spearman", "numpy", False, 2**16, np.dtype(np.float32))
    assert not budget.compact_ranks_apply("auc", "numpy", False, 50_000, np.dtype(np.float32))

