"""``neuroneval score`` with several metrics: one tidy file with metric and parameter columns, written in pieces."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.cli import main
from neuroneval.metrics import METRICS, score

N_UNITS, N_CONCEPTS = 6, 5


@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(3)
    n = 150
    ids = rng.permutation(n) + 1000  # stored unsorted: the readers sort them
    activations = pd.DataFrame({"input_id": ids, **{f"unit_{k}": rng.normal(size=n) for k in range(N_UNITS)}})
    concepts = pd.DataFrame({"input_id": ids, **{f"concept_{t}": (rng.random(n) < 0.2).astype(float)
                                                 for t in range(N_CONCEPTS)}})
    return (io.write_activation_table(tmp_path / "a.parquet", activations, metadata={"model": "m"}),
            io.write_concept_table(tmp_path / "c.parquet", concepts, metadata={"source": "labels"}))


def _run(tables: tuple[Path, Path], out: Path, *options: str) -> int:
    activation_path, concept_path = tables
    return main(["score", "--activations", str(activation_path), "--concepts", str(concept_path), "--out", str(out),
                 "--no-progress", *options])


def _expected(tables: tuple[Path, Path], metric: str, **params: float) -> np.ndarray:
    activations, _ = io.read_activation_table(tables[0])
    concepts, _ = io.read_concept_table(tables[1])
    return np.asarray(score(metric, io.value_matrix(activations), io.value_matrix(concepts), **params)).ravel()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_several_metrics_in_one_tidy_file(tables, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"scores{suffix}"
    assert _run(tables, out, "--metric", "iou,auc,correlation,wpmi", "--alpha", "0.05", "--lam", "0.5") == 0
    written = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out)
    assert list(written.columns) == ["unit", "concept", "metric", "alpha", "lam", "top_alpha", "score", "degenerate"]
    assert not written["degenerate"].any()  # random tables: every unit varies
    assert written["metric"].astype(str).unique().tolist() == ["iou", "auc", "correlation", "wpmi"]
    for metric in ["iou", "auc", "correlation", "wpmi"]:
        rows = written[written["metric"] == metric]
        params = {name: value for name, value in {"alpha": 0.05, "lam": 0.5}.items() if name in METRICS[metric].params}
        np.testing.assert_allclose(rows["score"].to_numpy(), _expected(tables, metric, **params), rtol=1e-7,
                                   err_msg=metric)
        assert rows["alpha"].isna().all() == (metric == "correlation")
        assert rows["lam"].isna().all() == (metric != "wpmi")
        assert rows["unit"].astype(str).tolist()[:N_CONCEPTS + 1] == ["unit_0"] * N_CONCEPTS + ["unit_1"]
    if suffix == ".parquet":
        assert all(written[name].dtype == "category" for name in ("unit", "concept", "metric"))


def test_all_metrics(tables, tmp_path: Path) -> None:
    out = tmp_path / "all.csv"
    assert _run(tables, out, "--metric", "all") == 0
    written = pd.read_csv(out)
    assert written["metric"].unique().tolist() == list(METRICS)
    assert len(written) == len(METRICS) * N_UNITS * N_CONCEPTS
    assert list(written.columns) == ["unit", "concept", "metric", "alpha", "lam", "tr_top_fraction", "tr_n_top",
                                     "tr_n_random", "top_alpha", "score", "degenerate"]


def test_a_parameter_no_metric_takes_is_an_error(tables, tmp_path: Path, capsys) -> None:
    out = tmp_path / "x.csv"
    assert _run(tables, out, "--metric", "correlation,spearman", "--alpha", "0.05") == 2
    assert "none of the metrics ['correlation', 'spearman'] takes parameter(s) ['alpha']" in capsys.readouterr().err
    assert _run(tables, out, "--metric", "iou,nope") == 2
    assert "nope" in capsys.readouterr().err
    assert not out.exists()


def test_the_file_is_written_in_several_pieces(tables, tmp_path: Path, monkeypatch) -> None:
    import neuroneval.metrics.table as table
    import neuroneval.tidy_writer as tidy_writer

    monkeypatch.setattr(table, "MAX_CHUNK_ROWS", 7)  # a piece per 7 rows whatever the budget
    sizes: list[int] = []
    write = tidy_writer.write_tidy

    def counting(path, pieces, **keywords):
        def counted():
            for piece in pieces:
                sizes.append(len(piece))
                yield piece
        return write(path, counted(), **keywords)

    monkeypatch.setattr(tidy_writer, "write_tidy", counting)
    pieces_out, whole_out = tmp_path / "pieces.csv", tmp_path / "whole.csv"
    assert _run(tables, pieces_out, "--metric", "spearman,recall", "--memory-budget", "16M") == 0
    assert sizes == [7, 7, 7, 7, 2] * 2  # 30 pairs per metric
    monkeypatch.setattr(table, "MAX_CHUNK_ROWS", 2**22)
    assert _run(tables, whole_out, "--metric", "spearman,recall", "--memory-budget", "unbounded") == 0
    assert pieces_out.read_bytes() == whole_out.read_bytes()
