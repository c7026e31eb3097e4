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
    assert code == 2 and "takes no parameter 'alpha'" in capsys.readouterr().err
    assert not (tmp_path / "x.csv").exists()
