"""Correlation and cosine by passes over input blocks (neuroneval.metrics.input_products) against scipy/numpy per
pair and the block-by-chunk engine; where they apply and where the engine's blocks take over; their memory."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy.stats import pearsonr

from neuroneval.metrics import input_products as ip
from neuroneval.metrics import score, score_units
from neuroneval.metrics.budget import MIN_BUDGET
from tests.metrics.conftest import make_activations, make_concepts, warning_notes

NOTES = {"correlation": "correlation: zero-variance vector(s): their correlation is set to 0",
         "cosine": "cosine: all-zero vector(s): their cosine similarity is set to 0"}


@pytest.fixture
def pass_widths(monkeypatch) -> list[int]:
    """The input block of every pass: empty when the engine's blocks scored the call."""
    widths: list[int] = []
    original = ip._pass

    def spy(activations, concepts, unit_rows, width, centre, notes):
        widths.append(width)
        return original(activations, concepts, unit_rows, width, centre, notes)

    monkeypatch.setattr(ip, "_pass", spy)
    return widths


def _per_pair(metric: str, activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """scipy's pearsonr / numpy's normalised dot product of every pair, 0 for a constant (all-zero) column."""
    out = np.zeros((activations.shape[1], concepts.shape[1]))
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            a, c = activations[:, k].astype(np.float64), concepts[:, t].astype(np.float64)
            if metric == "correlation" and np.ptp(a) > 0 and np.ptp(c) > 0:
                out[k, t] = pearsonr(a, c).statistic
            elif metric == "cosine" and a.any() and c.any():
                out[k, t] = a @ c / (np.linalg.norm(a) * np.linalg.norm(c))
    return out


def _probabilities(rng: np.random.Generator, n: int, n_units: int, n_concepts: int,
                   dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
    activations = (np.maximum(rng.standard_normal((n, n_units)), 0) * 3 + 5).astype(dtype)  # far from 0: centring
    concepts = (1 / (1 + np.exp(-(rng.standard_normal((n, n_concepts)) * 2 - 2)))).astype(dtype)
    return activations, concepts


@pytest.mark.parametrize("metric", ["correlation", "cosine"])
def test_the_pass_equals_the_per_pair_oracle_and_the_engines_blocks_with_the_same_notes(metric, pass_widths) -> None:
    rng = np.random.default_rng(0)
    activations, concepts = make_activations(rng, 700), make_concepts(rng, 700)  # constant and all-zero columns
    fast, fast_notes = warning_notes(score, metric, activations, concepts)
    assert pass_widths == [700]
    blocked, blocked_notes = warning_notes(score, metric, activations, concepts, chunk_size=2)
    assert len(pass_widths) == 1
    np.testing.assert_allclose(fast, _per_pair(metric, activations, concepts), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fast, blocked, rtol=0, atol=1e-12)
    assert fast_notes == blocked_notes == {NOTES[metric]}


@pytest.mark.parametrize("metric", ["correlation", "cosine"])
def test_short_last_blocks_unit_subsets_and_column_major_tables_change_nothing(metric, monkeypatch,
                                                                             pass_widths) -> None:
    rng = np.random.default_rng(1)
    activations, concepts = _probabilities(rng, 1000, 9, 6)
    whole, notes = warning_notes(score, metric, activations, concepts)
    assert not notes and pass_widths == [1000]
    monkeypatch.setattr(ip, "INPUT_BLOCK", 300)  # 1000 = 3·300 + 100
    cut = score(metric, np.asfortranarray(activations), np.asfortranarray(concepts))
    assert pass_widths[-1] == 300
    np.testing.assert_allclose(cut, whole, rtol=0, atol=1e-13)
    np.testing.assert_allclose(cut, _per_pair(metric, activations, concepts), rtol=0, atol=1e-12)
    subset = score_units(metric, activations, concepts, [7, 2, 4])
    np.testing.assert_allclose(subset, whole[[7, 2, 4]], rtol=0, atol=1e-13)


def test_a_constant_unit_alone_is_noted_and_scores_zero(pass_widths) -> None:
    activations, concepts = _probabilities(np.random.default_rng(2), 300, 4, 3)
    activations[:, 2] = 7.25
    scores, notes = warning_notes(score, "correlation", activations, concepts)
    assert pass_widths and notes == {NOTES["correlation"]}
    assert np.all(scores[2] == 0) and np.all(scores[[0, 1, 3]] != 0)
    cosine, cosine_notes = warning_notes(score, "cosine", activations, concepts)  # constant but not zero: a cosine
    assert not cosine_notes and np.all(cosine[2] > 0)


def test_reference_ties_carry_the_authors_factor(pass_widths) -> None:
    activations, concepts = _probabilities(np.random.default_rng(3), 250, 3, 2)
    average = score("correlation", activations, concepts)
    reference = score("correlation", activations, concepts, ties="reference")
    assert len(pass_widths) == 2
    np.testing.assert_allclose(reference, average * 249 / 250, rtol=1e-15)


@pytest.mark.parametrize("case", ["sparse concepts", "torch", "chunk size", "budget"])
def test_where_the_pass_does_not_apply_the_engine_scores_the_same(case: str, pass_widths) -> None:
    rng = np.random.default_rng(4)
    activations, concepts = _probabilities(rng, 600, 5, 4)
    options: dict = {}
    if case == "sparse concepts":  # 1/40 of the values nonzero: the sparse product
        concepts = (rng.random((600, 4)) < 1 / 40).astype(np.float32)
    elif case == "torch":
        pytest.importorskip("torch")
        options = {"device": "cpu"}
    elif case == "chunk size":
        options = {"chunk_size": 3}
    else:  # 1,500 × 1,500 sums alone take more than 16 MiB
        activations, concepts = _probabilities(rng, 200, 1500, 1500)
        options = {"memory_budget": MIN_BUDGET}
    for metric in ("correlation", "cosine"):
        scores = score(metric, activations, concepts, **options)
        sample = (slice(0, 3), slice(0, 3))
        np.testing.assert_allclose(scores[sample], _per_pair(metric, activations[:, :3], concepts[:, :3]), rtol=0,
                                   atol=1e-9)
    assert pass_widths == []


def test_input_block_size_holds_what_the_docstring_counts() -> None:
    n, n_units, n_concepts = 50_000, 600, 400
    assert ip.input_block_size(None, n, n_units, n_concepts) == ip.INPUT_BLOCK
    assert ip.input_block_size(None, 100, n_units, n_concepts) == 100
    per_input = 8 * n_units + 16 * n_concepts + max(n_units, n_concepts)
    sums = 24 * n_units * n_concepts
    width = ip.input_block_size(MIN_BUDGET, n, n_units, n_concepts)
    assert sums + width * per_input <= MIN_BUDGET < sums + (width + 1) * per_input  # the widest block that fits
    assert ip.input_block_size(10**12, n, n_units, n_concepts) == ip.INPUT_BLOCK
    just_short = sums + (ip.MIN_INPUT_BLOCK - 1) * per_input
    assert ip.input_block_size(just_short, n, n_units, n_concepts) is None
    assert ip.input_block_size(just_short, ip.MIN_INPUT_BLOCK - 1, n_units, n_concepts) == ip.MIN_INPUT_BLOCK - 1


@pytest.mark.parametrize("metric", ["correlation", "cosine"])
def test_the_pass_peaks_within_its_budget(metric: str, pass_widths) -> None:
    activations, concepts = _probabilities(np.random.default_rng(5), 24_000, 400, 300)
    score(metric, activations[:50], concepts[:50])
    tracemalloc.start()
    try:
        score(metric, activations, concepts, memory_budget=MIN_BUDGET)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert pass_widths[-1] < ip.INPUT_BLOCK  # the budget narrowed the blocks
    assert peak <= MIN_BUDGET, f"{peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("metric", ["correlation", "cosine"])
def test_progress_counts_every_pair_once(metric: str) -> None:
    from neuroneval.metrics.edgecases import Notes
    from neuroneval.metrics.metric_options import MetricOptions, engine_params

    activations, concepts = _probabilities(np.random.default_rng(6), 300, 7, 4)
    params, _ = engine_params(MetricOptions())
    whole_pass = ip.correlation_all_pairs if metric == "correlation" else ip.cosine_all_pairs
    counted: list[int] = []
    scores = whole_pass(activations, concepts, np.arange(7), params, "numpy", Notes(metric), counted.append)
    assert counted == [7 * 4]
    np.testing.assert_allclose(scores, _per_pair(metric, activations, concepts), rtol=0, atol=1e-12)


@pytest.mark.parametrize(("metric", "n"), [("correlation", 4), ("cosine", 7)])
def test_a_unit_equal_to_its_concept_scores_exactly_one_and_its_negation_minus_one(metric, n, pass_widths) -> None:
    """At these n the unclipped scores of c with c and −c round past 1 and −1 (by 2**-52): the clip to [−1, 1] is
    what keeps the bounds."""
    concept = np.linspace(0.0, 1.0, n, dtype=np.float32)[:, None]
    scores = score(metric, np.hstack([concept, -concept]), concept)
    assert pass_widths == [n]
    assert scores[0, 0] == 1.0 and scores[1, 0] == -1.0


def test_a_unit_whose_first_value_is_its_largest_is_not_constant(pass_widths) -> None:
    activations, concepts = _probabilities(np.random.default_rng(7), 200, 3, 2)
    activations[0] = activations.max(axis=0) + 1.0  # every later value below the first
    scores, notes = warning_notes(score, "correlation", activations, concepts)
    assert pass_widths and not notes
    np.testing.assert_allclose(scores, _per_pair("correlation", activations, concepts), rtol=0, atol=1e-12)


def test_the_auto_budget_is_the_inputs_float32_size(monkeypatch) -> None:
    from neuroneval.metrics import budget
    from neuroneval.metrics.budget import budget_bytes

    monkeypatch.setattr(budget, "AUTO_FLOOR", 0)  # so that the inputs' size is the budget at this size
    budgets: list[int | None] = []
    original = ip.input_block_size
    monkeypatch.setattr(ip, "input_block_size",
                        lambda budget, *sizes: budgets.append(budget) or original(budget, *sizes))
    activations, concepts = _probabilities(np.random.default_rng(8), 300, 7, 3)
    score("correlation", activations, concepts)
    score_units("cosine", activations, concepts, [1, 2])
    assert budgets == [budget_bytes("auto", 300, 7, 3)] * 2


def test_the_first_units_alone_are_read_as_a_subset(pass_widths) -> None:
    activations, concepts = _probabilities(np.random.default_rng(9), 400, 7, 3)
    whole = score("correlation", activations, concepts)
    first_three = score_units("correlation", activations, concepts, [0, 1, 2])
    assert pass_widths == [400, 400]
    np.testing.assert_allclose(first_three, whole[:3], rtol=0, atol=1e-13)


@pytest.mark.parametrize(("nonzero", "takes_the_pass"), [(20, False), (21, True)])
def test_concepts_at_most_one_32nd_nonzero_keep_the_sparse_product(nonzero, takes_the_pass, pass_widths) -> None:
    rng = np.random.default_rng(10)
    activations = rng.standard_normal((320, 3)).astype(np.float32)
    concepts = np.zeros((320, 2), dtype=np.float32)  # 640 values: 20 nonzero are exactly 1/32 of them
    concepts[rng.choice(320, 10, replace=False), 0] = 0.75
    concepts[rng.choice(320, nonzero - 10, replace=False), 1] = 0.25
    scores = score("correlation", activations, concepts)
    assert bool(pass_widths) is takes_the_pass
    np.testing.assert_allclose(scores, _per_pair("correlation", activations, concepts), rtol=0, atol=1e-12)


def test_block_stats_are_frozen() -> None:
    import dataclasses

    stats = ip.BlockStats(np.zeros(2), np.ones(2, dtype=bool))
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.sums = np.ones(2)
