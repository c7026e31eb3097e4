"""Memory-bounded scoring: blocks change no number, peaks stay within the budget, the plan fits large tables."""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

from neuroneval.metrics import (
    METRICS,
    FeatureCache,
    NeuronEvalWarning,
    budget,
    engine,
    input_products,
    rank_products,
    score,
    score_grid,
    score_pairs,
    score_units,
)
from neuroneval.metrics.streams import stream_rows
from tests.metrics.conftest import metric_params, quiet_score

ALL = [*METRICS, "hmean:auc+inverse_auc"]


def params_of(metric: str) -> dict[str, float]:
    return metric_params(metric) if metric in METRICS else {"alpha": 0.03}


@pytest.fixture
def tiny_blocks(monkeypatch):
    """Every bounded call cut into blocks of 2 units, chunks of 3 concepts, 1-row feature blocks, 512-element
    temporaries, one grid point per pass, concept features stored across blocks (the most cuts possible); the passes
    over the inputs of Spearman, correlation and cosine (:mod:`neuroneval.metrics.rank_products`,
    :mod:`neuroneval.metrics.input_products`) only for unbounded calls, so that the bounded ones take the engine's
    blocks and the two are compared."""
    def tiny_plan(metric, budget_bytes, n, n_units, n_concepts, *, unit_room=0):
        if budget_bytes is None:
            return budget.plan(metric, None, n, n_units, n_concepts)
        return budget.ChunkPlan(unit_block=2, concept_chunk=3, work_elements=512, grid_points=1,
                                store_concepts=True)

    whole_pass_plan, whole_input_block = rank_products.pass_plan, input_products.input_block_size
    monkeypatch.setattr(engine, "plan", tiny_plan)
    monkeypatch.setattr(rank_products, "pass_plan",
                        lambda budget_bytes, *sizes: whole_pass_plan(None, *sizes) if budget_bytes is None else None)
    monkeypatch.setattr(input_products, "input_block_size",
                        lambda budget_bytes, *sizes: whole_input_block(None, *sizes) if budget_bytes is None else None)


def _warnings_of(function, *args, **kwargs) -> tuple[np.ndarray | list[np.ndarray], set[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuronEvalWarning)
        result = function(*args, **kwargs)
    return result, {str(w.message) for w in caught if issubclass(w.category, NeuronEvalWarning)}


@pytest.mark.parametrize("ties", ["average", "reference"])
@pytest.mark.parametrize("metric", ALL)
def test_blocks_and_chunks_change_no_score_and_no_warning(metric: str, ties: str, tricky_data, tiny_blocks) -> None:
    activations, concepts = tricky_data
    params = params_of(metric)
    whole, whole_notes = _warnings_of(score, metric, activations, concepts, ties=ties, memory_budget="unbounded",
                                      **params)
    blocked, blocked_notes = _warnings_of(score, metric, activations, concepts, ties=ties,
                                          memory_budget=budget.MIN_BUDGET, **params)
    np.testing.assert_allclose(blocked, whole, rtol=1e-12, atol=1e-12)
    assert blocked_notes == whole_notes


@pytest.mark.parametrize("metric", ALL)
def test_blocked_pairs_units_and_grids_equal_unbounded(metric: str, tricky_data, tiny_blocks) -> None:
    activations, concepts = tricky_data
    params = params_of(metric)
    full = quiet_score(score, metric, activations, concepts, memory_budget="unbounded", **params)
    units = [4, 0, 5, 2]  # any order
    got = quiet_score(score_units, metric, activations, concepts, units, memory_budget=budget.MIN_BUDGET, **params)
    np.testing.assert_allclose(got, full[units], rtol=1e-12, atol=1e-12)
    pairs = np.array([[5, 7], [0, 0], [3, 2], [0, 6], [4, 1], [1, 3], [5, 0]])
    got = quiet_score(score_pairs, metric, activations, concepts, pairs, memory_budget=budget.MIN_BUDGET, **params)
    np.testing.assert_allclose(got, full[pairs[:, 0], pairs[:, 1]], rtol=1e-12, atol=1e-12)
    if "alpha" in params:
        grid = [{"alpha": 0.01}, {"alpha": 0.03}, {"alpha": 0.2}]
        fixed = {key: value for key, value in params.items() if key != "alpha"}
        got = quiet_score(score_grid, metric, activations, concepts, None, grid, cache=FeatureCache(),
                          memory_budget=budget.MIN_BUDGET, **fixed)
        for point, scores in zip(grid, got, strict=True):
            expected = quiet_score(score, metric, activations, concepts, memory_budget="unbounded", **fixed, **point)
            np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12, err_msg=str(point))


def _table(kind: str, n: int, n_units: int, n_concepts: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    activations = rng.standard_normal((n, n_units), dtype=np.float32)
    activations[:, : n_units // 2] = np.maximum(activations[:, : n_units // 2], 0.0)
    if kind == "probabilities":
        logits = rng.standard_normal((n, n_concepts), dtype=np.float32) * 2 - 3
        concepts = np.round(1 / (1 + np.exp(-logits)), 3).astype(np.float32)
    else:  # one-hot labels: sparse
        concepts = np.zeros((n, n_concepts), dtype=np.float32)
        concepts[np.arange(n), rng.integers(0, n_concepts, n)] = 1.0
    return activations, concepts


def _traced_peak(function, *args, **kwargs) -> int:
    """Peak bytes allocated (numpy arrays included) while ``function`` runs, beyond what existed before."""
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NeuronEvalWarning)
            function(*args, **kwargs)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["probabilities", "one_hot"])
def test_every_metric_peaks_within_its_budget(kind: str) -> None:
    """tracemalloc peak of a call ≤ its ``memory_budget`` (16 MiB, on 13 MiB of float32 inputs), where the
    unbounded engine needs several times more (2**24-element temporaries, every unit's features at once)."""
    activations, concepts = _table(kind, 24_000, 96, 48)
    limit = budget.MIN_BUDGET
    for metric in METRICS:
        params = {"alpha": 0.005} if "alpha" in METRICS[metric].params else {}
        # warm up with the same call: lazy imports, and numba compiling a kernel on its first call in a fresh
        # environment (one specialization per argument types, e.g. the uint16 tie runs that only a budget split into
        # unit blocks reaches), allocate once per process, not per call
        quiet_score(score, metric, activations, concepts, memory_budget=limit, **params)
        peak = _traced_peak(score, metric, activations, concepts, memory_budget=limit, **params)
        assert peak <= limit, f"{metric}: {peak / 2**20:.1f} MiB > {limit / 2**20:.0f} MiB"
    # the top-and-random sample of every unit at once (inverse AUPRC, which this checked before, now ranks each
    # unit by a compiled sort with transients of a few rows)
    unbounded = _traced_peak(score, "correlation_tr", activations, concepts, memory_budget="unbounded")
    assert unbounded > 3 * limit


@pytest.mark.parametrize("metric", list(METRICS))
def test_auto_plan_fits_the_issue_size_in_the_inputs_size(metric: str) -> None:
    """At 204,800 inputs × 512 units × 300 concepts, ``"auto"`` plans unit blocks, chunks, temporaries and
    stored concept features whose estimated peak is within the inputs' own float32 size (so a call holds about
    twice its inputs), while the unbounded plan holds every unit's features at once."""
    n, n_units, n_concepts = 204_800, 512, 300
    inputs = 4 * n * (n_units + n_concepts)
    limit = budget.budget_bytes("auto", n, n_units, n_concepts)
    assert limit == inputs
    chunking = budget.plan(metric, limit, n, n_units, n_concepts)
    estimate = (chunking.unit_block * n * budget.UNIT_BYTES[metric]
                + chunking.concept_chunk * n * budget.CONCEPT_BYTES
                + chunking.work_elements * budget.TEMP_BYTES.get(metric, budget.DEFAULT_TEMP_BYTES)
                + (budget.STORE_BYTES * n * n_concepts if chunking.store_concepts else 0))
    assert estimate <= limit
    assert 8 <= chunking.unit_block < n_units and chunking.concept_chunk >= 8
    unbounded = budget.plan(metric, None, n, n_units, n_concepts)
    assert unbounded.unit_block * n * budget.UNIT_BYTES[metric] > limit


def test_a_feature_cache_keeps_its_units_in_one_block() -> None:
    """Calls sharing a FeatureCache may use its max_bytes for unit features (they set that memory aside)."""
    small = budget.plan("spearman", budget.MIN_BUDGET, 100_000, 400, 50)
    cached = budget.plan("spearman", budget.MIN_BUDGET, 100_000, 400, 50, unit_room=2**32)
    assert small.unit_block < 400 and cached.unit_block == 400


@pytest.mark.parametrize("value", [0, 2**20, -5, 1.5e9, "big", True, None])
def test_bad_budgets_are_rejected(value, tricky_data) -> None:
    activations, concepts = tricky_data
    with pytest.raises(ValueError, match="memory_budget must be"):
        score("iou", activations, concepts, memory_budget=value)


def test_random_stream_rows_do_not_depend_on_which_rows_are_drawn() -> None:
    whole = np.random.default_rng([3, 4]).random((9, 7))
    rows = np.array([8, 2, 3, 4, 0, 7])
    np.testing.assert_array_equal(stream_rows(3, 4, rows, 7, block_elements=10), whole[rows])
    np.testing.assert_array_equal(stream_rows(3, 4, rows, 7, dtype=np.float32), whole[rows].astype(np.float32))
    assert stream_rows(3, 4, np.array([], dtype=int), 7).shape == (0, 7)


def test_progress_bar_is_shown_on_request(tricky_data, monkeypatch, capsys) -> None:
    activations, concepts = tricky_data
    monkeypatch.setattr("neuroneval.progress.DELAY_S", 0.0)
    quiet_score(score, "spearman", activations, concepts, progress=True)
    assert "scoring spearman" in capsys.readouterr().err
    quiet_score(score, "spearman", activations, concepts)
    assert capsys.readouterr().err == ""
