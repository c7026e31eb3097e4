"""Simulation (paper 001 Eq. 14–19) against hand-computed values; scores against numpy and the metric engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.explain import (
    SANITY_PASSING_METRICS,
    ConceptSimulator,
    ProbingData,
    UnknownConceptError,
    explanation_frame,
    parse,
    random_explanations,
    score_explanations,
    simulate,
    simulate_table,
    simulation_correlation,
    simulation_metrics,
    truth_explanations,
)
from neuroneval.explain.options import RandomOptions
from neuroneval.metrics import TopAlphaOptions, get_spec, score

CONCEPTS = np.array([[0.9, 0.2, 0.5], [0.4, 1.0, 0.0], [0.0, 0.5, 1.0]])
NAMES = ["a", "b", "c"]


@pytest.mark.parametrize("text, expected", [
    ("a", [0.9, 0.4, 0.0]),                                      # Eq. 14
    ("a AND b", [0.18, 0.4, 0.0]),                               # Eq. 16: 0.9·0.2, 0.4·1, 0·0.5
    ("a OR b", [0.92, 1.0, 0.5]),                                # Eq. 17: 1 − 0.1·0.8, 1 − 0.6·0, 1 − 1·0.5
    ("NOT c", [0.5, 1.0, 0.0]),                                  # Eq. 18
    ("a AND (b OR NOT c)", [0.9 * 0.6, 0.4, 0.0]),               # 1 − 0.8·0.5 = 0.6; 1 − 0·0 = 1; 1 − 0.5·1 = 0.5
    ("2*a + 0.5*c - 1", [1.05, -0.2, -0.5]),                     # Eq. 15 with a bias
    ("[1, 3] (a); [4, 6] (b AND NOT c)", [1.8 + 0.5, 0.8 + 5.0, 0.0]),  # Eq. 19: 2·s(a) + 5·s(b AND NOT c)
])
def test_simulation_matches_hand_computed_values(text: str, expected: list[float]) -> None:
    np.testing.assert_allclose(simulate(text, CONCEPTS, NAMES), expected, atol=1e-12)


def test_table_simulation_equals_row_by_row() -> None:
    texts = ["a", "a AND (b OR NOT c)", "2*a + 0.5*c - 1", "0.5*b", "[1, 3] (a); [4, 6] (b AND NOT c)"]
    frame = explanation_frame([f"u{i}" for i in range(5)], [parse(t) for t in texts])
    table = simulate_table(frame, pd.DataFrame(CONCEPTS, columns=NAMES))
    for column, text in enumerate(texts):
        np.testing.assert_allclose(table[:, column], simulate(text, CONCEPTS, NAMES))


def test_unknown_concepts_name_the_file_row_and_name() -> None:
    frame = explanation_frame(["u0", "u1"], [parse("a"), parse("1.5*zebra + 2*a")])
    with pytest.raises(UnknownConceptError, match=r"my\.csv, row 1: concept 'zebra'"):
        simulate_table(frame, CONCEPTS, NAMES, source="my.csv")
    with pytest.raises(ValueError, match="LLM simulator"):
        simulate(parse("stripes", "text"), CONCEPTS, NAMES)


def test_simulation_correlation_is_numpy_pearson() -> None:
    rng = np.random.default_rng(0)
    actual, predicted = rng.random((200, 6)), rng.random((200, 6))
    predicted[:, 5] = 1.0
    expected = [np.corrcoef(actual[:, k], predicted[:, k])[0, 1] for k in range(5)] + [0.0]
    np.testing.assert_allclose(simulation_correlation(actual, predicted), expected)


def test_metric_bridge_calls_the_engine_on_the_diagonal() -> None:
    rng = np.random.default_rng(1)
    concepts = (rng.random((500, 4)) < 0.1).astype(float)
    actual = concepts + 0.1 * rng.random((500, 4))
    simulated = 3.0 * concepts - 1.0  # outside [0, 1]: rescaled to concepts exactly
    scores = simulation_metrics(actual, simulated, options=TopAlphaOptions(alpha=0.1))
    assert list(scores.columns) == ["unit", "simulation_correlation", *SANITY_PASSING_METRICS]
    for metric in SANITY_PASSING_METRICS:
        params = {"alpha": 0.1} if "alpha" in get_spec(metric).params else {}
        np.testing.assert_allclose(scores[metric], np.diag(score(metric, actual, concepts, **params)))
    assert set(SANITY_PASSING_METRICS) == {"f1", "iou", "correlation", "cosine", "auprc"}


def test_truth_scores_above_random_in_every_scorer() -> None:
    rng = np.random.default_rng(2)
    concepts = (rng.random((3000, 40)) < 0.05).astype(float)
    names = [f"c{t}" for t in range(40)]
    truth = pd.DataFrame({"unit": [f"u{k}" for k in range(10)] + ["u0"],
                          "concept": [f"c{3 * k}" for k in range(10)] + ["c1"]})
    activations = np.stack([np.maximum(concepts[:, 0], concepts[:, 1])]
                           + [concepts[:, 3 * k] for k in range(1, 10)], axis=1) + 0.2 * rng.random((3000, 10))
    units = [f"u{k}" for k in range(10)]
    ceiling = truth_explanations(truth, units)
    assert ceiling.loc[0, "explanation"] == "c0 OR c1"
    floor = random_explanations(units, names, RandomOptions(seed=3))
    frame = pd.DataFrame(activations, columns=units)
    best = score_explanations(ceiling, frame, concepts, names, options=TopAlphaOptions(alpha=0.05))
    worst = score_explanations(floor, frame, concepts, names, options=TopAlphaOptions(alpha=0.05))
    for column in ["simulation_correlation", *SANITY_PASSING_METRICS]:
        assert best[column].mean() > worst[column].mean() + 0.3, column


def test_random_explanations_depend_on_the_unit_not_the_order() -> None:
    names = [f"c{t}" for t in range(50)]
    forward = random_explanations(["x", "y", "z"], names, RandomOptions(length=2))
    backward = random_explanations(["z", "y", "x"], names, RandomOptions(length=2))
    assert list(forward["explanation"]) == list(backward["explanation"])[::-1]
    assert set(forward["length"]) == {2}


def test_concept_simulator_selects_inputs() -> None:
    probing = ProbingData.build(CONCEPTS, NAMES)
    np.testing.assert_allclose(ConceptSimulator().simulate("a OR b", probing, [2, 0]), [0.5, 0.92])


def test_a_linear_explanation_simulates_on_more_inputs_than_concepts() -> None:
    """Five inputs, three concepts: one value per input (Eq. 15), not per concept."""
    concepts = np.vstack([CONCEPTS, [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]])
    np.testing.assert_allclose(simulate("2*a + 0.5*c - 1", concepts, NAMES), [1.05, -0.2, -0.5, 1.0, -1.0],
                               atol=1e-12)


@pytest.mark.parametrize(("column", "expected"), [
    ([0.2, 0.5, 0.8], [0.2, 0.5, 0.8]),      # inside [0, 1]: kept as it is
    ([0.0, 0.5, 1.0], [0.0, 0.5, 1.0]),      # touching both ends: kept
    ([0.0, 0.25, 0.5], [0.0, 0.25, 0.5]),    # touching 0 only: kept
    ([0.5, 0.75, 1.0], [0.5, 0.75, 1.0]),    # touching 1 only: kept
    ([-1.0, 0.0, 0.5], [0.0, 2 / 3, 1.0]),   # below 0 only
    ([0.5, 1.0, 2.0], [0.0, 1 / 3, 1.0]),    # above 1 only
    ([0.5, 1.0, 1.5], [0.0, 0.5, 1.0]),      # above 1 by less than 1
    ([3.0, 3.0, 3.0], [0.0, 0.0, 0.0]),      # constant outside [0, 1]: 0
])
def test_to_unit_interval_rescales_exactly_the_columns_that_leave_0_1(column, expected) -> None:
    import warnings

    from neuroneval.explain.simulate import to_unit_interval

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a constant column is not divided by its zero span
        result = to_unit_interval(np.array(column)[:, None])
    np.testing.assert_allclose(result[:, 0], expected, atol=1e-15)


def test_simulation_correlation_stays_within_1_where_round_off_would_leave_it() -> None:
    """A unit against three times itself and its negation: unclipped, this sample gives ±1.0000000000000002."""
    unit = np.random.default_rng(1).normal(size=(7, 1))
    assert simulation_correlation(np.hstack([unit, unit]), np.hstack([3.0 * unit, -3.0 * unit])).tolist() == [1.0, -1.0]


def _scored_table(units: int) -> tuple[pd.DataFrame, np.ndarray]:
    frame = explanation_frame([f"u{k}" for k in range(units)], [parse("a")] * units)
    return frame, np.random.default_rng(units).random((3, units))


def test_score_explanations_names_the_first_missing_unit() -> None:
    frame, actual = _scored_table(3)
    table = pd.DataFrame(actual, columns=["u0", "x1", "x2"])
    with pytest.raises(ValueError, match=r"my\.csv: unit 'u1' is not a column of the activation table"):
        score_explanations(frame, table, CONCEPTS, NAMES, source="my.csv")


@pytest.mark.parametrize("shape", [(3,), (3, 2, 1), (3, 3), (3, 1)])
def test_score_explanations_needs_one_activation_column_per_unit(shape) -> None:
    frame, _ = _scored_table(2)
    with pytest.raises(ValueError, match=r"one column per explained unit \(2\), got shape"):
        score_explanations(frame, np.zeros(shape), CONCEPTS, NAMES)


@pytest.mark.parametrize("inputs", [2, 4])
def test_score_explanations_needs_as_many_activation_rows_as_concept_rows(inputs: int) -> None:
    frame, _ = _scored_table(2)
    with pytest.raises(ValueError, match=rf"activations have {inputs} inputs but concepts 3"):
        score_explanations(frame, np.zeros((inputs, 2)), CONCEPTS, NAMES)


def test_score_explanations_scores_300_units_from_an_array() -> None:
    """More units than Python caches as small integers: the column count is compared by value."""
    frame, actual = _scored_table(300)
    scores = score_explanations(frame, actual, CONCEPTS, NAMES, metrics=("correlation",))
    assert len(scores) == 300
    np.testing.assert_allclose(scores["simulation_correlation"],
                               [np.corrcoef(actual[:, k], CONCEPTS[:, 0])[0, 1] for k in range(300)], atol=1e-12)


def test_score_explanations_takes_its_options_by_keyword_only() -> None:
    frame, actual = _scored_table(2)
    with pytest.raises(TypeError):
        score_explanations(frame, actual, CONCEPTS, NAMES, ("correlation",))  # type: ignore[misc]


def test_a_clustered_explanation_simulates_on_more_inputs_than_concepts() -> None:
    """Eq. 19 with five inputs and three concepts: 2·s(a) + 5·s(b AND NOT c) per input."""
    concepts = np.vstack([CONCEPTS, [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]])
    np.testing.assert_allclose(simulate("[1, 3] (a); [4, 6] (b AND NOT c)", concepts, NAMES),
                               [1.8 + 0.5, 0.8 + 5.0, 0.0, 2.0 + 5.0, 0.0], atol=1e-12)


def test_a_linear_table_simulates_on_fewer_inputs_than_concepts() -> None:
    """Two inputs, three concepts; the last concept's weight lands in its own row of the weight matrix."""
    frame = explanation_frame(["u0", "u1"], [parse("2*c + 1"), parse("1*a - 1*b")])
    np.testing.assert_allclose(simulate_table(frame, CONCEPTS[:2], NAMES), [[2.0, 0.7], [1.0, -0.6]], atol=1e-12)


@pytest.mark.parametrize(("actual", "predicted"), [((5, 2), (5, 3)), ((5, 3), (5, 2)), ((4, 2), (5, 2))])
def test_simulation_scores_need_one_simulation_per_activation(actual, predicted) -> None:
    for scorer in (simulation_correlation, simulation_metrics):
        with pytest.raises(ValueError, match="must have the same shape"):
            scorer(np.ones(actual), np.ones(predicted))


def test_score_explanations_columns_start_with_unit_kind_length() -> None:
    frame, actual = _scored_table(2)
    scores = score_explanations(frame, actual, CONCEPTS, NAMES, metrics=("correlation",))
    assert list(scores.columns) == ["unit", "kind", "length", "simulation_correlation", "correlation"]
    assert scores["kind"].tolist() == list(frame["kind"]) and scores["length"].tolist() == list(frame["length"])


def test_simulation_functions_take_their_options_by_keyword_only() -> None:
    frame, actual = _scored_table(2)
    with pytest.raises(TypeError):
        simulate("a", CONCEPTS, NAMES, "formula")  # type: ignore[misc]
    with pytest.raises(TypeError):
        simulate_table(frame, CONCEPTS, NAMES, "my.csv")  # type: ignore[misc]
    with pytest.raises(TypeError):
        simulation_metrics(actual, actual, ("correlation",))  # type: ignore[misc]
