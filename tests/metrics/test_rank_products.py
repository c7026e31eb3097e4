"""Spearman's one pass over the inputs (neuroneval.metrics.rank_products) against scipy, the block-by-chunk engine
and exact integer arithmetic; where it applies and where the engine's blocks take over; its memory budget."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy.stats import rankdata, spearmanr

from neuroneval.metrics import rank_products as rp
from neuroneval.metrics import score, score_pairs, score_units
from neuroneval.metrics.budget import MIN_BUDGET
from tests.metrics.conftest import make_activations, make_concepts, warning_notes

ZERO_VARIANCE = "spearman: zero-variance vector(s): their correlation is set to 0"


@pytest.fixture
def pass_calls(monkeypatch) -> list[tuple[int, int]]:
    """(units, concepts) of every product the pass computes: empty when the engine's blocks scored the call."""
    calls: list[tuple[int, int]] = []
    original = rp._products

    def spy(unit_ranks, concept_ranks, width):
        calls.append((unit_ranks.shape[0], concept_ranks.shape[0]))
        return original(unit_ranks, concept_ranks, width)

    monkeypatch.setattr(rp, "_products", spy)
    return calls


def _probabilities(rng: np.random.Generator, n: int, n_units: int, n_concepts: int,
                   dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    """ReLU-like activations (ties at 0) and probability concepts rounded to 2 decimals (heavy ties)."""
    activations = np.maximum(rng.standard_normal((n, n_units)), 0).astype(dtype)
    concepts = np.round(1 / (1 + np.exp(-(rng.standard_normal((n, n_concepts)) * 2 - 2))), 2).astype(dtype)
    return activations, concepts


def _scipy(activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """scipy's spearmanr of every pair, 0 where a column is constant (the documented convention)."""
    out = np.zeros((activations.shape[1], concepts.shape[1]))
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            a, c = activations[:, k], concepts[:, t]
            if np.ptp(a) > 0 and np.ptp(c) > 0:
                out[k, t] = spearmanr(a, c).statistic
    return out


def test_the_pass_equals_scipy_and_the_engines_blocks_with_the_same_notes(pass_calls) -> None:
    rng = np.random.default_rng(0)
    activations, concepts = make_activations(rng, 700), make_concepts(rng, 700)  # float64, constant columns
    fast, fast_notes = warning_notes(score, "spearman", activations, concepts)
    assert pass_calls == [(activations.shape[1], concepts.shape[1])]
    blocked, blocked_notes = warning_notes(score, "spearman", activations, concepts, chunk_size=2)
    assert len(pass_calls) == 1  # a chunk size is the engine's
    np.testing.assert_allclose(fast, _scipy(activations, concepts), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast, blocked, rtol=0, atol=1e-12)
    assert fast_notes == blocked_notes == {ZERO_VARIANCE}


def test_no_note_without_a_constant_column(pass_calls) -> None:
    activations, concepts = _probabilities(np.random.default_rng(1), 400, 5, 4)
    scores, notes = warning_notes(score, "spearman", activations, concepts)
    assert pass_calls and not notes
    np.testing.assert_allclose(scores, _scipy(activations, concepts), rtol=0, atol=1e-12)


def test_a_constant_concept_alone_is_noted_and_scores_zero(pass_calls) -> None:
    activations, concepts = _probabilities(np.random.default_rng(2), 300, 4, 3)
    concepts[:, 1] = 0.5
    scores, notes = warning_notes(score, "spearman", activations, concepts)
    assert pass_calls and notes == {ZERO_VARIANCE}
    assert np.all(scores[:, 1] == 0) and np.all(scores[:, [0, 2]] != 0)


def test_several_unit_blocks_rank_blocks_and_a_short_last_input_block_change_nothing(monkeypatch, pass_calls) -> None:
    rng = np.random.default_rng(3)
    activations, concepts = _probabilities(rng, 1000, 37, 11)
    whole = score("spearman", activations, concepts, memory_budget="unbounded")
    assert pass_calls == [(37, 11)]
    monkeypatch.setattr(rp, "INPUT_BLOCK", 300)  # 1000 = 3·300 + 100
    monkeypatch.setattr(rp, "pass_plan", lambda *args: rp.PassPlan(unit_block=8, rank_rows=3, input_block=300))
    cut = score("spearman", activations, concepts)
    assert pass_calls[1:] == [(8, 11)] * 4 + [(5, 11)]
    np.testing.assert_allclose(cut, whole, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cut, _scipy(activations, concepts), rtol=0, atol=1e-12)


def test_the_sums_of_rank_products_are_exact() -> None:
    """Below 2**17 inputs every Σ R'(a)R'(c) is a multiple of 1/4 that float64 holds: the pass's products equal
    the integer sums of 2R'(a)·2R'(c) / 4 exactly."""
    rng = np.random.default_rng(4)
    activations, concepts = _probabilities(rng, 5000, 6, 5)
    twice_units = (2 * rankdata(activations, axis=0) - 5001).astype(np.int64).T
    twice_concepts = (2 * rankdata(concepts, axis=0) - 5001).astype(np.int64).T
    exact = (twice_units @ twice_concepts.T) / 4
    unit_ranks = (twice_units / 2).astype(np.float32)
    concept_ranks = (twice_concepts / 2).astype(np.float32)
    assert np.array_equal(rp._products(unit_ranks, concept_ranks, 777), exact)


@pytest.mark.parametrize("case", ["reference ties", "torch", "binary concepts", "chunk size", "budget"])
def test_where_the_pass_does_not_apply_the_engine_scores_the_same(case: str, pass_calls) -> None:
    rng = np.random.default_rng(5)
    activations, concepts = _probabilities(rng, 600, 5, 4)
    options: dict = {}
    if case == "reference ties":
        options = {"ties": "reference"}
    elif case == "torch":
        pytest.importorskip("torch")
        options = {"device": "cpu"}
    elif case == "binary concepts":
        concepts = (concepts > 0.3).astype(np.float32)
    elif case == "chunk size":
        options = {"chunk_size": 3}
    else:  # the concepts' ranks of 100,000 inputs × 48 concepts alone take more than 16 MiB
        activations, concepts = _probabilities(rng, 100_000, 2, 48)
        options = {"memory_budget": MIN_BUDGET}
    scores = score("spearman", activations, concepts, **options)
    assert pass_calls == []
    if case != "reference ties":  # noised ties are the authors' convention, not scipy's
        sample = slice(0, 2)
        np.testing.assert_allclose(scores[:, sample], _scipy(activations, concepts[:, sample]), rtol=0, atol=1e-9)


def test_listed_pairs_and_unit_subsets_agree_with_the_pass(pass_calls) -> None:
    activations, concepts = _probabilities(np.random.default_rng(6), 500, 7, 5)
    everything = score("spearman", activations, concepts)
    units = score_units("spearman", activations, concepts, [5, 1, 3])
    assert pass_calls[-1] == (3, 5)
    np.testing.assert_allclose(units, everything[[5, 1, 3]], rtol=0, atol=1e-13)
    pairs = np.array([[0, 4], [6, 0], [3, 3]])
    listed = score_pairs("spearman", activations, concepts, pairs)
    np.testing.assert_allclose(listed, everything[pairs[:, 0], pairs[:, 1]], rtol=0, atol=1e-12)


def test_pass_plan_holds_what_the_docstring_counts() -> None:
    n, n_units, n_concepts = 20_000, 10_000, 40
    assert rp.pass_plan(None, n, n_units, n_concepts) == rp.PassPlan(n_units, rp.RANK_ROWS, rp.INPUT_BLOCK)
    assert rp.pass_plan(None, 100, 3, 2).input_block == 100
    budget = MIN_BUDGET
    for inputs, ranked_rows in ((n, 1), (2_000, 16)):  # one ranked row at a time, and several
        width = min(inputs, rp.INPUT_BLOCK)
        plan = rp.pass_plan(budget, inputs, n_units, n_concepts)
        assert plan.rank_rows == budget // 8 // (rp.RANK_BYTES * inputs) == ranked_rows
        held = (4 * inputs * n_concepts + 8 * width * n_concepts + rp.RANK_BYTES * plan.rank_rows * inputs
                + plan.unit_block * (4 * inputs + 8 * width + 16 * n_concepts))
        assert plan.unit_block < n_units  # the budget binds
        assert held <= budget < held + 4 * inputs + 8 * width + 16 * n_concepts  # the largest block that fits
    assert rp.pass_plan(budget, n, 5, n_concepts).unit_block == 5  # never more units than asked for
    assert rp.pass_plan(budget, 200_000, n_units, n_concepts) is None  # the concepts' ranks alone exceed it
    width = rp.INPUT_BLOCK
    room_for_15 = (4 * n * n_concepts + 8 * width * n_concepts + rp.RANK_BYTES * n
                   + 15 * (4 * n + 8 * width + 16 * n_concepts))
    assert rp.pass_plan(room_for_15, n, n_units, n_concepts) is None  # fewer than MIN_UNIT_BLOCK units fit
    assert rp.pass_plan(room_for_15, n, 15, n_concepts).unit_block == 15  # unless that is every unit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_pass_peaks_within_its_budget(dtype: type, pass_calls) -> None:
    rng = np.random.default_rng(7)
    activations, concepts = _probabilities(rng, 24_000, 96, 48, dtype)
    if dtype is np.float64:  # values that float32 does not hold: numpy's sort instead of the compiled one
        activations += 1e-9 * rng.random(activations.shape)
    score("spearman", activations[:50], concepts[:50])  # lazy imports and compilation, not part of the peak
    tracemalloc.start()
    try:
        score("spearman", activations, concepts, memory_budget=MIN_BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pass_calls[-1][0] < 96  # the budget cut the units into blocks
    assert peak <= MIN_BUDGET, f"{peak / 2**20:.1f} MiB"


def test_progress_counts_every_pair_once_per_unit_block(monkeypatch) -> None:
    from neuroneval.metrics.edgecases import Notes
    from neuroneval.metrics.metric_options import MetricOptions, engine_params

    activations, concepts = _probabilities(np.random.default_rng(8), 300, 21, 6)
    monkeypatch.setattr(rp, "pass_plan", lambda *args: rp.PassPlan(unit_block=8, rank_rows=5, input_block=128))
    params, _ = engine_params(MetricOptions())
    counted: list[int] = []
    scores = rp.spearman_all_pairs(activations, concepts, np.arange(21), params, "numpy", Notes("spearman"),
                                   counted.append)
    assert counted == [8 * 6, 8 * 6, 5 * 6]
    np.testing.assert_allclose(scores, _scipy(activations, concepts), rtol=0, atol=1e-12)


def test_the_ranking_gets_an_eighth_of_the_budget_in_whole_rows_between_one_and_rank_rows() -> None:
    n = 1000
    row = rp.RANK_BYTES * n
    for rows in (2, 10, rp.RANK_ROWS - 1):
        assert rp.pass_plan(8 * row * rows, n, 3, 2).rank_rows == rows
        assert rp.pass_plan(8 * row * rows - 1, n, 3, 2).rank_rows == rows - 1
    assert rp.pass_plan(8 * row * (rp.RANK_ROWS + 5), n, 3, 2).rank_rows == rp.RANK_ROWS
    assert rp.pass_plan(200_000, n, 3, 2) == rp.PassPlan(3, 1, n)  # less than one row's eighth: still one row


def test_a_unit_ranked_as_its_concept_scores_exactly_one_and_its_negation_minus_one(pass_calls) -> None:
    """At n = 10, Σ R'² · (1/‖R'‖)² rounds to 1 + 2**-52: the clip to [−1, 1] is what keeps the bounds."""
    concept = np.linspace(0.0, 1.0, 10, dtype=np.float32)[:, None]
    scores = score("spearman", np.hstack([concept, -concept]), concept)
    assert pass_calls == [(2, 1)]
    assert scores[0, 0] == 1.0 and scores[1, 0] == -1.0


def test_from_2_24_inputs_the_engine_ranks(pass_calls) -> None:
    """Centred ranks are float32-exact half-integers below 2**24 inputs only: one more and the pass steps aside."""
    n = 2**24 + 1
    values = (np.arange(n, dtype=np.float32) % 7)[:, None]
    scores = score("spearman", values, values / 6, memory_budget="unbounded")  # a budget the pass would fit in
    assert pass_calls == [] and scores[0, 0] == pytest.approx(1.0, abs=1e-12)


def test_float64_values_with_an_odd_number_of_inputs_are_centred_on_n_plus_1_over_2(pass_calls) -> None:
    """Values that float32 does not hold take numpy's sort; its ranks 1…n are centred on (n + 1)/2, which an odd n
    tells apart from n/2 + 1/2 only by the exact formula."""
    rng = np.random.default_rng(9)
    activations = np.round(rng.standard_normal((701, 4)), 1)  # 0.1 steps: not float32, many ties
    concepts = np.round(rng.random((701, 3)), 1)
    scores = score("spearman", activations, concepts)
    assert pass_calls == [(4, 3)]
    np.testing.assert_allclose(scores, _scipy(activations, concepts), rtol=0, atol=1e-12)


def test_a_pass_plan_is_frozen() -> None:
    import dataclasses

    plan = rp.pass_plan(None, 100, 3, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.unit_block = 1


@pytest.mark.parametrize("row", [0, 5000])
def test_one_value_that_is_not_0_or_1_anywhere_makes_the_concepts_non_binary(row: int, pass_calls) -> None:
    """The 0/1 test reads the concepts in blocks of inputs: a fraction in the first block or in a later one counts."""
    rng = np.random.default_rng(10)
    activations = rng.standard_normal((2 * rp.BINARY_TEST_ROWS + 100, 2)).astype(np.float32)
    concepts = (rng.random((activations.shape[0], 2)) < 0.3).astype(np.float32)
    concepts[row, 1] = 0.5
    scores = score("spearman", activations, concepts)
    assert pass_calls == [(2, 2)]
    np.testing.assert_allclose(scores, _scipy(activations, concepts), rtol=0, atol=1e-12)


def test_the_auto_budget_is_the_inputs_float32_size(monkeypatch) -> None:
    from neuroneval.metrics import budget
    from neuroneval.metrics.budget import budget_bytes

    monkeypatch.setattr(budget, "AUTO_FLOOR", 0)  # so that the inputs' size is the budget at this size
    budgets: list[int | None] = []
    original = rp.pass_plan
    monkeypatch.setattr(rp, "pass_plan", lambda budget, *sizes: budgets.append(budget) or original(budget, *sizes))
    activations, concepts = _probabilities(np.random.default_rng(11), 300, 7, 3)
    score("spearman", activations, concepts)
    score_units("spearman", activations, concepts, [1, 2])
    assert budgets == [budget_bytes("auto", 300, 7, 3)] * 2
