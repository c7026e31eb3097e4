"""score_table: several metrics as one tidy table, equal to per-metric calls and to the per-pair references;
its pieces and their writer (CSV, Parquet)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval.io import ID_COLUMN
from neuroneval.metrics import METRICS, FeatureCache, WpmiAndRandomOptions, score, score_table, score_table_chunks
from neuroneval.metrics.reference import per_pair
from neuroneval.metrics.table import metric_names, table_params
from neuroneval.tidy_writer import write_tidy
from tests.metrics.conftest import quiet_score

UNITS = ["u0", "u1", "u2"]
CONCEPTS = ["dog", "cat", "pet", "soft"]


def _tables(n: int = 80) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(7)
    concepts = np.column_stack([(rng.random((n, 3)) < 0.25).astype(float), np.round(rng.random(n), 2)])
    activations = np.round(rng.standard_normal((n, len(UNITS))), 1)
    activations[:, :2] += concepts[:, :2]
    activation_table = pd.DataFrame(activations, columns=UNITS)
    activation_table.insert(0, ID_COLUMN, np.arange(n))
    concept_table = pd.DataFrame(concepts, columns=CONCEPTS)
    concept_table.insert(0, ID_COLUMN, np.arange(n))
    return activation_table, concept_table


def _rows(table: pd.DataFrame, metric: str, **point: float) -> pd.DataFrame:
    chosen = table["metric"] == metric
    for name, value in point.items():
        chosen &= table[name] == value
    return table[chosen]


def test_every_metric_equals_its_score_call_and_its_per_pair_reference() -> None:
    activations, concepts = _tables()
    table = quiet_score(score_table, "all", activations, concepts, alpha=0.05, lam=0.5)
    assert list(table.columns) == ["unit", "concept", "metric", "alpha", "lam", "tr_top_fraction", "tr_n_top",
                                   "tr_n_random", "top_alpha", "score"]
    assert len(table) == len(METRICS) * len(UNITS) * len(CONCEPTS)
    values_a = activations[UNITS].to_numpy()
    values_c = concepts[CONCEPTS].to_numpy()
    for metric, spec in METRICS.items():
        rows = _rows(table, metric)
        params = {name: value for name, value in {"alpha": 0.05, "lam": 0.5}.items() if name in spec.params}
        expected = quiet_score(score, metric, values_a, values_c, **params)
        np.testing.assert_array_equal(rows["score"].to_numpy().reshape(len(UNITS), len(CONCEPTS)), expected,
                                      err_msg=metric)
        for name in table_params(list(METRICS)):
            assert rows[name].isna().all() != (name in spec.params), (metric, name)
        assert list(rows["unit"]) == [u for u in UNITS for _ in CONCEPTS]
        assert list(rows["concept"]) == CONCEPTS * len(UNITS)
        if spec.is_sampled:
            continue
        reference = per_pair(metric)
        for k, t in [(0, 0), (1, 1), (2, 3), (0, 3)]:  # independent oracle on a few pairs
            row = rows[(rows["unit"] == UNITS[k]) & (rows["concept"] == CONCEPTS[t])]
            assert row["score"].item() == pytest.approx(reference(values_a[:, k], values_c[:, t], **params),
                                                        abs=1e-10), (metric, k, t)


def test_a_grid_scores_each_metric_at_the_points_it_takes() -> None:
    activations, concepts = _tables()
    grid = [{"alpha": 0.05, "lam": 0.0}, {"alpha": 0.05, "lam": 1.0}, {"alpha": 0.2, "lam": 1.0}]
    table = quiet_score(score_table, ["wpmi", "iou", "spearman"], activations, concepts, grid=grid)
    assert list(table.columns) == ["unit", "concept", "metric", "alpha", "lam", "top_alpha", "score"]
    sizes = table.groupby("metric", observed=True).size().to_dict()
    pairs = len(UNITS) * len(CONCEPTS)
    assert sizes == {"wpmi": 3 * pairs, "iou": 2 * pairs, "spearman": pairs}  # iou: α 0.05 once; spearman: once
    for metric, points in [("wpmi", grid), ("iou", [{"alpha": 0.05}, {"alpha": 0.2}]), ("spearman", [{}])]:
        for point in points:
            rows = _rows(table, metric, **point)
            expected = quiet_score(score, metric, activations, concepts, **point)
            np.testing.assert_allclose(rows["score"].to_numpy().reshape(len(UNITS), len(CONCEPTS)),
                                       expected.to_numpy(), rtol=1e-12, atol=1e-12, err_msg=f"{metric} {point}")


def test_shared_options_go_to_the_metrics_that_take_them() -> None:
    activations, concepts = _tables()
    options = WpmiAndRandomOptions(alpha=0.1, ties="reference", seed=3, tr_n_top=5, tr_n_random=10)
    table = quiet_score(score_table, "iou,correlation_tr", activations, concepts, options=options)
    for metric, params in [("iou", {"alpha": 0.1}), ("correlation_tr", {"tr_n_top": 5, "tr_n_random": 10})]:
        expected = quiet_score(score, metric, activations, concepts, ties="reference", seed=3, **params)
        np.testing.assert_array_equal(_rows(table, metric)["score"].to_numpy(), expected.to_numpy().ravel())
    assert _rows(table, "correlation_tr")["tr_n_top"].unique().tolist() == [5]
    with pytest.raises(TypeError, match="not both"):
        score_table("iou", activations, concepts, options=options, alpha=0.1)


def test_pieces_cover_the_table_in_order_and_share_one_cache() -> None:
    activations, concepts = _tables()
    whole = quiet_score(score_table, "auc,spearman,recall", activations, concepts)
    cache = FeatureCache()
    pieces = list(quiet_score(score_table_chunks, "auc,spearman,recall", activations, concepts, chunk_rows=5,
                              cache=cache))
    assert [len(piece) for piece in pieces] == [5, 5, 2] * 3  # 12 pairs per metric, cut per metric
    assert cache.bytes > 0
    pd.testing.assert_frame_equal(pd.concat(pieces, ignore_index=True), whole)
    assert whole["unit"].dtype == "category" and whole["metric"].dtype == "category"


def test_metric_names_and_their_errors() -> None:
    assert metric_names("all") == list(METRICS)
    assert metric_names(" iou, auc ,iou") == ["iou", "auc"]
    assert metric_names(["hmean:auc+inverse_auc"]) == ["hmean:auc+inverse_auc"]
    with pytest.raises(ValueError, match="unknown metric 'nope'"):
        metric_names("iou,nope")
    with pytest.raises(ValueError, match="at least one metric"):
        metric_names("iou,")


def test_arrays_are_labelled_by_position_and_ids_are_aligned() -> None:
    activations, concepts = _tables()
    from_arrays = quiet_score(score_table, "iou", activations[UNITS].to_numpy(), concepts[CONCEPTS].to_numpy())
    assert from_arrays["unit"].tolist()[:5] == [0, 0, 0, 0, 1]
    shuffled = concepts.iloc[np.random.default_rng(0).permutation(len(concepts))]
    np.testing.assert_array_equal(quiet_score(score_table, "iou", activations, shuffled)["score"],
                                  from_arrays["score"])
    with pytest.raises(ValueError, match="only in activations: 1"):
        score_table("iou", activations, concepts.iloc[1:])
    with pytest.raises(ValueError, match="activations must be a 2-D"):
        score_table("iou", np.zeros(5), np.zeros((5, 2)))


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_writer_round_trips_the_pieces(tmp_path: Path, suffix: str) -> None:
    activations, concepts = _tables()
    whole = quiet_score(score_table, "iou,correlation,wpmi", activations, concepts)
    pieces = quiet_score(score_table_chunks, "iou,correlation,wpmi", activations, concepts, chunk_rows=7)
    out = tmp_path / f"scores{suffix}"
    assert write_tidy(out, pieces) == len(whole)
    written = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert list(written.columns) == list(whole.columns)
    assert written["unit"].astype(str).tolist() == whole["unit"].astype(str).tolist()
    assert written["metric"].astype(str).tolist() == whole["metric"].astype(str).tolist()
    np.testing.assert_allclose(written["score"], whole["score"], rtol=1e-7)
    np.testing.assert_array_equal(written["alpha"].isna(), whole["alpha"].isna())
    if suffix == ".parquet":
        assert all(written[name].dtype == "category" for name in ("unit", "concept", "metric"))
    assert [path.name for path in tmp_path.iterdir()] == [out.name]  # the temporary file was renamed


def test_writer_leaves_nothing_when_a_piece_fails(tmp_path: Path) -> None:
    def pieces():
        yield pd.DataFrame({"unit": ["a"], "score": [1.0]})
        yield pd.DataFrame({"unit": ["b"], "other": [2.0]})

    for suffix in (".csv", ".parquet"):
        with pytest.raises(ValueError, match=r"piece 1 has columns \['unit', 'other'\]"):
            write_tidy(tmp_path / f"s{suffix}", pieces())
        with pytest.raises(ValueError, match="no rows to write"):
            write_tidy(tmp_path / f"s{suffix}", iter([]))
    assert list(tmp_path.iterdir()) == []


def test_docstring_examples_run() -> None:
    import doctest

    import neuroneval.metrics.table as table_module

    results = doctest.testmod(table_module, verbose=False)
    assert results.attempted >= 3 and results.failed == 0
