"""DataFrame inputs: rows matched by ``input_id`` in every public scoring function, labelled results, FeatureCache."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.io import ID_COLUMN
from neuroneval.metrics import FeatureCache, score, score_grid, score_pairs, score_units
from neuroneval.metrics.reference import per_pair
from tests.metrics.conftest import quiet_score

UNITS = ["u0", "u1", "u2", "u3"]
CONCEPTS = ["dog", "cat", "pet"]


def _tables(n: int = 60, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An activation and a concept table of the data contract (ids 100…, sorted), concepts tied to units."""
    rng = np.random.default_rng(seed)
    concepts = (rng.random((n, len(CONCEPTS))) < 0.3).astype(np.float32)
    activations = rng.standard_normal((n, len(UNITS))).astype(np.float32)
    activations[:, :3] += 2 * concepts
    ids = np.arange(100, 100 + n)
    activation_table = pd.DataFrame(activations, columns=UNITS)
    activation_table.insert(0, ID_COLUMN, ids)
    concept_table = pd.DataFrame(concepts, columns=CONCEPTS)
    concept_table.insert(0, ID_COLUMN, ids)
    return activation_table, concept_table


def _shuffled(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    return frame.iloc[np.random.default_rng(seed).permutation(len(frame))].reset_index(drop=True)


CALLS = {
    "score": lambda metric, a, c: score(metric, a, c),
    "score_units": lambda metric, a, c: score_units(metric, a, c, [3, 1]),
    "score_grid": lambda metric, a, c: score_grid(metric, a, c, [0, 2], [{"alpha": 0.1}, {"alpha": 0.2}])
    if metric == "iou" else score_grid(metric, a, c, [0, 2], [{}]),
    "score_pairs": lambda metric, a, c: score_pairs(metric, a, c, [[0, 0], [2, 1], [3, 2]]),
}


def _as_arrays(result: object) -> list[np.ndarray]:
    return [np.asarray(part) for part in (result if isinstance(result, list) else [result])]


@pytest.mark.parametrize("function", list(CALLS))
@pytest.mark.parametrize("metric", ["iou", "spearman", "correlation_tr", "auprc"])
def test_shuffled_frames_equal_the_sorted_call(function: str, metric: str) -> None:
    activations, concepts = _tables()
    ordered = quiet_score(CALLS[function], metric, activations, concepts)
    for shuffled_a, shuffled_c in [(_shuffled(activations, 1), concepts), (activations, _shuffled(concepts, 2)),
                                   (_shuffled(activations, 3), _shuffled(concepts, 4))]:
        got = quiet_score(CALLS[function], metric, shuffled_a, shuffled_c)
        for same, expected in zip(_as_arrays(got), _as_arrays(ordered), strict=True):
            np.testing.assert_array_equal(same, expected, err_msg=f"{function} {metric}")


def test_frames_score_like_the_value_arrays_and_never_score_input_id() -> None:
    activations, concepts = _tables()
    from_frames = score("correlation", activations, concepts)
    values = score("correlation", activations[UNITS].to_numpy(), concepts[CONCEPTS].to_numpy())
    assert list(from_frames.index) == UNITS and list(from_frames.columns) == CONCEPTS
    np.testing.assert_array_equal(from_frames.to_numpy(), values)
    # independent oracle: the per-pair Pearson reference on the rows matched by id
    shuffled = _shuffled(activations, 5)
    got = score("correlation", shuffled, concepts)
    by_id = shuffled.set_index(ID_COLUMN).loc[concepts[ID_COLUMN]]
    for unit in UNITS:
        for concept in CONCEPTS:
            expected = per_pair("correlation")(by_id[unit].to_numpy(np.float64), concepts[concept].to_numpy(np.float64))
            assert got.loc[unit, concept] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("function", list(CALLS))
def test_different_id_sets_are_an_error_naming_them(function: str) -> None:
    activations, concepts = _tables()
    fewer = concepts.iloc[:-7]
    with pytest.raises(ValueError, match=r"same input_ids; only in activations: 7 \(153, 154, 155, 156, 157, …\); "
                                         r"only in concepts: none"):
        CALLS[function]("iou", activations, fewer)
    other = concepts.copy()
    other.loc[0, ID_COLUMN] = 5
    with pytest.raises(ValueError, match=r"only in activations: 1 \(100\); only in concepts: 1 \(5\)"):
        CALLS[function]("iou", activations, other)


@pytest.mark.parametrize("function", list(CALLS))
def test_input_id_on_one_side_only_is_an_error(function: str) -> None:
    activations, concepts = _tables()
    with pytest.raises(ValueError, match=r"activations has an 'input_id' column but concepts is a DataFrame without"):
        CALLS[function]("iou", activations, concepts.drop(columns=[ID_COLUMN]))
    with pytest.raises(ValueError, match=r"concepts has an 'input_id' column but activations is an array"):
        CALLS[function]("iou", activations[UNITS].to_numpy(), concepts)


def test_repeated_or_non_integer_ids_are_named() -> None:
    activations, concepts = _tables()
    repeated = activations.copy()
    repeated.loc[4, ID_COLUMN] = 101
    with pytest.raises(ValueError, match=r"activations: input_id 101 is repeated \(rows \[1, 4\]\)"):
        score("iou", repeated, concepts)
    named = concepts.astype({ID_COLUMN: str})
    with pytest.raises(ValueError, match=r"concepts: column 'input_id' must hold integer ids"):
        score("iou", activations, named)


def test_labels_follow_the_frame_side_and_arrays_stay_arrays() -> None:
    activations, concepts = _tables()
    plain_a, plain_c = activations[UNITS], concepts[CONCEPTS]  # frames without ids: matched by position
    both = score("iou", plain_a, plain_c)
    assert list(both.index) == UNITS and list(both.columns) == CONCEPTS
    assert both.index.name == "unit" and both.columns.name == "concept"
    left = score("iou", plain_a, plain_c.to_numpy())
    assert list(left.index) == UNITS and list(left.columns) == [0, 1, 2]
    right = score("iou", plain_a.to_numpy(), plain_c)
    assert list(right.index) == [0, 1, 2, 3] and list(right.columns) == CONCEPTS
    arrays = score("iou", plain_a.to_numpy(), plain_c.to_numpy())
    assert type(arrays) is np.ndarray
    np.testing.assert_array_equal(both.to_numpy(), arrays)
    units = score_units("iou", activations, concepts, [3, 1])
    assert list(units.index) == ["u3", "u1"]
    np.testing.assert_array_equal(units.to_numpy(), arrays[[3, 1]])
    assert type(score_pairs("iou", activations, concepts, [[0, 0]])) is np.ndarray


@pytest.mark.parametrize("metric", ["spearman", "iou", "correlation_tr"])
def test_feature_cache_with_the_same_frame_on_the_second_call(metric: str) -> None:
    for activations in (_tables()[0], _shuffled(_tables()[0], 6)):  # sorted, and reordered by every call
        concepts = _tables()[1]
        cache = FeatureCache()
        first = score(metric, activations, concepts, cache=cache)
        stored = cache.bytes
        second = score(metric, activations, concepts, cache=cache)
        assert stored > 0 and cache.bytes == stored  # the second call found the features the first prepared
        pd.testing.assert_frame_equal(first, second)
        pd.testing.assert_frame_equal(second, score(metric, activations, concepts))
    with pytest.raises(ValueError, match="belongs to one activations matrix"):
        score(metric, activations.copy(), concepts, cache=cache)
