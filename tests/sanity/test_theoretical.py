"""Theoretical test (App. C) on ideal units: reproducibility, chunking, worker processes, output columns.

Its comparison with the authors' published numbers is in ``test_theoretical_reference.py``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval.sanity.theoretical import ideal_concepts, positive_counts, theoretical_deltas, theoretical_test


def test_results_are_reproducible_and_do_not_depend_on_chunking() -> None:
    kwargs = {"gammas": (0.3, 0.02), "n": 3_000, "draws": 9, "progress": False}
    first = theoretical_test(["iou", "spearman", "correlation_tr"], ties="reference", **kwargs)
    again = theoretical_test(["iou", "spearman", "correlation_tr"], ties="reference", **kwargs)
    pd.testing.assert_frame_equal(first.drop(columns="seconds"), again.drop(columns="seconds"))
    metrics = ["iou", "auc", "spearman", "wpmi"]
    small, _ = theoretical_deltas(metrics, ties="average", chunk_draws=2, **kwargs)
    large, _ = theoretical_deltas(metrics, ties="average", chunk_draws=9, **kwargs)
    for key, values in small.items():
        np.testing.assert_allclose(values, large[key], rtol=0, atol=1e-12)


def test_worker_processes_give_the_same_draws_as_one_process() -> None:
    kwargs = {"gammas": (0.3, 0.02), "n": 3_000, "draws": 9, "chunk_draws": 4, "progress": False, "ties": "reference"}
    metrics = ["iou", "spearman", "correlation_tr", "wpmi"]
    inline, inline_spans = theoretical_deltas(metrics, **kwargs)
    pooled, pooled_spans = theoretical_deltas(metrics, workers=2, **kwargs)
    assert pooled_spans == inline_spans and pooled.keys() == inline.keys()
    for key, values in inline.items():
        np.testing.assert_array_equal(pooled[key], values, err_msg=str(key))
    with pytest.raises(ValueError, match="workers"):
        theoretical_deltas(metrics, workers=0, **kwargs)


def test_workers_start_from_a_script_without_a_main_guard(tmp_path) -> None:
    """Snakemake runs steps as top-level scripts; spawned workers must not run the script again."""
    script = tmp_path / "step.py"
    script.write_text("from neuroneval.sanity.theoretical import theoretical_test\n"
                      "print('step ran')\n"
                      "theoretical_test(['iou'], gammas=(0.3,), n=500, draws=4, chunk_draws=1, workers=2,"
                      " progress=False)\n")
    source = str(Path(__file__).resolve().parents[2] / "src")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            env={**os.environ, "PYTHONPATH": source})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.count("step ran") == 1


def test_output_columns_and_ideal_units() -> None:
    table = theoretical_test(["recall", "wpmi"], gammas=(0.2,), n=1_000, draws=4, progress=False)
    assert list(table.columns) == ["metric", "test", "gamma", "n", "positives", "draws", "ties", "epsilon", "seed",
                                   "strength", "span", "mean_delta", "delta_se", "decrease_acc", "increase_frac",
                                   "seconds"]
    assert table["strength"].tolist() == [0.5, 2.0, 0.5, 2.0]
    concepts = ideal_concepts((0.499, 0.0001), 500_000)
    assert positive_counts((0.499, 0.1, 0.01, 0.001, 0.0001), 500_000).tolist() == [249_500, 50_000, 5_000, 500, 50]
    assert concepts[:, 1].sum() == 50 and concepts[49, 1] == 1 and concepts[50, 1] == 0
    with pytest.raises(ValueError, match="positives"):
        positive_counts((1e-6,), 1_000)


def test_positive_counts_take_1_to_n_minus_1_positives_and_refuse_all_or_more() -> None:
    assert positive_counts((0.001, 0.999), 1_000).tolist() == [1, 999]  # the two ends allowed
    for gamma in (1.0, 1.5):  # n and more than n positives
        with pytest.raises(ValueError, match="positives"):
            positive_counts((gamma,), 1_000)


@pytest.mark.parametrize(("options", "message"), [({"draws": 0}, "draws"), ({"n": 1, "gammas": (0.5,)}, "n ≥ 2"),
                                                  ({"workers": 2.0}, "workers"), ({"workers": True}, "workers")])
def test_theoretical_arguments_are_refused_one_at_a_time(options: dict, message: str) -> None:
    kwargs = {"gammas": (0.3,), "n": 100, "draws": 2, "progress": False} | options
    with pytest.raises(ValueError, match=message):
        theoretical_deltas(["iou"], **kwargs)
