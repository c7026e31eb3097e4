"""The console script: validate, metrics, score — results equal the library's, errors exit 2 with the file named."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.cli import main
from neuroneval.metrics import METRICS, score


@pytest.fixture
def tables(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    n = 200
    activations = pd.DataFrame({"input_id": np.arange(n), "u0": rng.normal(size=n), "u1": rng.normal(size=n)})
    concepts = pd.DataFrame({"input_id": np.arange(n), "dog": (rng.random(n) < 0.1).astype(float),
                             "cat": rng.random(n)})
    return (io.write_activation_table(tmp_path / "a.parquet", activations, metadata={"model": "m"}),
            io.write_concept_table(tmp_path / "c.parquet", concepts, metadata={"source": "labels"}))


def test_validate_reports_ok_and_errors(tables, capsys) -> None:
    activation_path, concept_path = tables
    assert main(["validate", str(activation_path), "--kind", "activation"]) == 0
    assert "ok, 200 inputs x 2 activation columns" in capsys.readouterr().out
    assert main(["validate", str(concept_path), "--kind", "concept"]) == 0
    assert "ok, 200 inputs x 2 concept columns" in capsys.readouterr().out
    assert main(["validate", str(activation_path), "--kind", "concept"]) == 2
    assert "a.parquet: holds a activation table" in capsys.readouterr().err


def test_metrics_lists_every_metric(capsys) -> None:
    assert main(["metrics"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == list(METRICS)


def test_score_writes_the_library_values(tables, tmp_path: Path) -> None:
    activation_path, concept_path = tables
    out = tmp_path / "iou.csv"
    assert main(["score", "--metric", "iou", "--alpha", "0.05", "--activations", str(activation_path),
                 "--concepts", str(concept_path), "--out", str(out)]) == 0
    written = pd.read_csv(out)
    activations, _ = io.read_activation_table(activation_path)
    concepts, _ = io.read_concept_table(concept_path)
    expected = score("iou", io.value_matrix(activations), io.value_matrix(concepts), alpha=0.05)
    assert written[["unit", "concept"]].values.tolist() == [["u0", "dog"], ["u0", "cat"], ["u1", "dog"], ["u1", "cat"]]
    np.testing.assert_allclose(written["score"].to_numpy(), expected.ravel(), rtol=1e-7)


def test_score_rejects_a_parameter_the_metric_does_not_take(tables, tmp_path: Path, capsys) -> None:
    activation_path, concept_path = tables
    code = main(["score", "--metric", "correlation", "--alpha", "0.05", "--activations", str(activation_path),
                 "--concepts", str(concept_path), "--out", str(tmp_path / "x.csv")])
    assert code == 2 and "takes no parameter(s) ['alpha']" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()


def _foreign_table(path: Path, values: dict[str, np.ndarray]) -> Path:
    """A Parquet file written without the library's checks (as another tool would)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(next(iter(values.values())))
    pq.write_table(pa.Table.from_pandas(pd.DataFrame({"input_id": np.arange(n), **values}), preserve_index=False),
                   path)
    return path


@pytest.mark.parametrize(("bad", "message"), [
    ("activation", "column 'u1' has value 1e+300 at input_id 3 (row 3), which overflows float32 (|x| > 3.402823e+38)"),
    ("activation_nan", "column 'u1' has a non-finite value nan at input_id 3 (row 3)"),
    ("concept", "concept column 'cat' has value 2.0 outside [0, 1] at input_id 5 (row 5)"),
])
def test_validate_and_score_reject_the_same_values_with_the_same_message(tables, tmp_path: Path, capsys, bad: str,
                                                                          message: str) -> None:
    activation_path, concept_path = tables
    n = 200
    if bad.startswith("activation"):
        u1 = np.random.default_rng(1).normal(size=n)
        u1[3] = 1e300 if bad == "activation" else np.nan
        activation_path = _foreign_table(tmp_path / "bad.parquet", {"u0": np.zeros(n), "u1": u1})
        kind, path = "activation", activation_path
    else:
        cat = np.linspace(0, 1, n)
        cat[5] = 2.0
        concept_path = _foreign_table(tmp_path / "bad.parquet", {"dog": np.zeros(n), "cat": cat})
        kind, path = "concept", concept_path
    assert main(["validate", str(path), "--kind", kind]) == 2
    validate_error = capsys.readouterr().err
    assert main(["score", "--metric", "auc", "--activations", str(activation_path), "--concepts", str(concept_path),
                 "--out", str(tmp_path / "s.csv")]) == 2
    score_error = capsys.readouterr().err
    assert validate_error == score_error == f"neuroneval: error: {path}: {message}\n"
    assert not (tmp_path / "s.csv").exists()


def test_score_output_has_the_users_normal_permissions(tables, tmp_path: Path) -> None:
    import os

    activation_path, concept_path = tables
    previous = os.umask(0o022)
    try:
        assert main(["score", "--metric", "iou", "--activations", str(activation_path), "--concepts",
                     str(concept_path), "--out", str(tmp_path / "s.csv")]) == 0
    finally:
        os.umask(previous)
    assert (tmp_path / "s.csv").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("budget", ["unbounded", "16M", "auto", "268435456"])
def test_memory_budget_changes_no_score(tables, tmp_path: Path, budget: str) -> None:
    activation_path, concept_path = tables
    outs = []
    for setting in ("auto", budget):
        out = tmp_path / f"{setting}.csv"
        assert main(["score", "--metric", "spearman", "--activations", str(activation_path), "--concepts",
                     str(concept_path), "--out", str(out), "--memory-budget", setting, "--no-progress"]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def test_bad_memory_budgets_are_usage_errors(tables, tmp_path: Path, capsys) -> None:
    activation_path, concept_path = tables
    with pytest.raises(SystemExit):
        main(["score", "--metric", "iou", "--activations", str(activation_path), "--concepts", str(concept_path),
              "--out", str(tmp_path / "s.csv"), "--memory-budget", "lots"])
    assert "--memory-budget" in capsys.readouterr().err
    assert main(["score", "--metric", "iou", "--activations", str(activation_path), "--concepts", str(concept_path),
                 "--out", str(tmp_path / "s.csv"), "--memory-budget", "1K"]) == 2
    assert "memory_budget must be" in capsys.readouterr().err
