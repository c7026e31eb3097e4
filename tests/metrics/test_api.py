"""The public API: validation messages, warnings, backends, chunking, seeds, pandas input, documentation."""

from __future__ import annotations

import pydoc
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

from neuroneval.metrics import (
    DEFAULTS,
    METRICS,
    NeuronEvalWarning,
    engine,
    get_spec,
    score,
    score_grid,
    score_pairs,
    score_units,
)
from tests.metrics.conftest import metric_params, quiet_score

ALL = [*METRICS, "hmean:auc+inverse_auc"]


def torch_devices() -> list[str]:
    return ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]


@pytest.mark.parametrize("ties", ["average", "reference"])
@pytest.mark.parametrize("metric", ALL)
def test_torch_backend_matches_numpy(metric: str, ties: str, tricky_data) -> None:
    activations, concepts = tricky_data
    params = metric_params(metric) if metric in METRICS else {"alpha": 0.03}
    expected = quiet_score(score, metric, activations, concepts, ties=ties, **params)
    for device in torch_devices():
        got = quiet_score(score, metric, activations, concepts, ties=ties, device=device, **params)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6, err_msg=device)


@pytest.mark.parametrize("metric", ALL)
def test_chunking_does_not_change_results(metric: str, tricky_data) -> None:
    activations, concepts = tricky_data
    params = metric_params(metric) if metric in METRICS else {"alpha": 0.03}
    whole = quiet_score(score, metric, activations, concepts, ties="reference", **params)
    chunked = quiet_score(score, metric, activations, concepts, ties="reference", chunk_size=3, **params)
    np.testing.assert_allclose(chunked, whole, rtol=1e-12, atol=1e-12)


def test_float32_and_dataframe_inputs_give_the_float64_result(tricky_data) -> None:
    activations, concepts = tricky_data
    single = activations.astype(np.float32)
    expected = quiet_score(score, "correlation", single.astype(np.float64), concepts)
    np.testing.assert_allclose(quiet_score(score, "correlation", single, concepts), expected, atol=1e-15)
    frame_a = pd.DataFrame(activations, columns=[f"u{k}" for k in range(activations.shape[1])])
    frame_c = pd.DataFrame(concepts, columns=[f"c{t}" for t in range(concepts.shape[1])])
    np.testing.assert_array_equal(quiet_score(score, "iou", frame_a, frame_c, alpha=0.05),
                                  quiet_score(score, "iou", activations, concepts, alpha=0.05))
    booleans = activations > 0.5
    np.testing.assert_array_equal(quiet_score(score, "recall", booleans, concepts),
                                  quiet_score(score, "recall", booleans.astype(float), concepts))


def test_seed_controls_top_and_random_samples(tricky_data) -> None:
    activations, concepts = tricky_data
    first = quiet_score(score, "correlation_tr", activations, concepts, seed=1)
    again = quiet_score(score, "correlation_tr", activations, concepts, seed=1)
    other = quiet_score(score, "correlation_tr", activations, concepts, seed=2)
    np.testing.assert_array_equal(first, again)
    assert np.max(np.abs(first - other)) > 1e-3


def test_sample_size_parameters_are_used(tricky_data) -> None:
    activations, concepts = tricky_data
    small = quiet_score(score, "correlation_tr", activations, concepts, tr_n_top=3, tr_n_random=3)
    whole = quiet_score(score, "correlation_tr", activations, concepts, tr_top_fraction=1.0,
                        tr_n_top=activations.shape[0], tr_n_random=0)
    np.testing.assert_allclose(whole, quiet_score(score, "correlation", activations, concepts), atol=1e-12)
    assert np.max(np.abs(small - whole)) > 0.05


def test_wpmi_is_linear_in_lambda(tricky_data) -> None:
    activations, concepts = tricky_data
    at = {lam: quiet_score(score, "wpmi", activations, concepts, lam=lam) for lam in (0.0, 0.3, 1.0)}
    np.testing.assert_allclose(at[0.3], at[0.0] - 0.3 * (at[0.0] - at[1.0]), atol=1e-12)


@pytest.mark.parametrize(("metric", "concept_column", "message"), [
    ("precision", np.zeros(50), "no positive"),
    ("inverse_auprc", np.zeros(50), "no positive"),
    ("inverse_auc", np.ones(50), "AUC is set to 0.5"),
    ("mad", np.ones(50), "MAD is set to 0"),
    ("correlation", np.full(50, 0.2), "zero-variance"),
    ("spearman", np.full(50, 0.2), "zero-variance"),
    ("cosine", np.zeros(50), "all-zero"),
    ("wpmi", np.zeros(50), "log 0"),
])
def test_edge_cases_warn_once_and_return_the_documented_value(metric, concept_column, message) -> None:
    rng = np.random.default_rng(0)
    activations = rng.standard_normal((50, 4))
    concepts = np.column_stack([concept_column, concept_column, rng.random(50)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = score(metric, activations, concepts, **metric_params(metric, 0.1))
    relevant = [w for w in caught if issubclass(w.category, NeuronEvalWarning)]
    assert len(relevant) == 1 and message in str(relevant[0].message), [str(w.message) for w in caught]
    documented = {"inverse_auc": 0.5, "wpmi": None}.get(metric, 0.0)
    if documented is not None:
        assert np.all(scores[:, :2] == documented)
    else:
        assert np.all(np.isfinite(scores))


def test_all_active_binarization_is_warned_and_defined() -> None:
    activations = np.column_stack([np.ones(20), np.arange(20.0)])
    concepts = (np.arange(20.0)[:, None] >= 10).astype(float)
    with pytest.warns(NeuronEvalWarning, match="every input active"):
        scores = score("balanced_accuracy", activations, concepts, alpha=0.2)
    assert scores[0, 0] == 0.25  # recall 0.5 halved; the TN rate of an empty negative class is 0
    with pytest.warns(NeuronEvalWarning):
        assert score("auc", activations, concepts, alpha=0.2)[0, 0] == 0.5


def test_clean_data_raise_no_warning(tricky_data) -> None:
    rng = np.random.default_rng(1)
    activations, concepts = rng.standard_normal((300, 3)), rng.random((300, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for metric in ALL:
            score(metric, activations, concepts, **(metric_params(metric) if metric in METRICS else {}))


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda a, c: score("nope", a, c), ValueError, "unknown metric 'nope'"),
    (lambda a, c: score("hmean:auc", a, c), ValueError, "combination"),
    (lambda a, c: score("hmean:auc+bogus", a, c), ValueError, "bogus"),
    (lambda a, c: score("iou", a[:, 0], c), ValueError, "2-D"),
    (lambda a, c: score("iou", a[:-1], c), ValueError, "same number of rows"),
    (lambda a, c: score("iou", np.where(a > 1, np.nan, a), c), ValueError, "finite"),
    (lambda a, c: score("iou", a.astype(str), c), ValueError, "numbers"),
    (lambda a, c: score("iou", a, c, alpha=0.0), ValueError, "alpha must lie in"),
    (lambda a, c: score("iou", a, c, alpha=1.5), ValueError, "alpha must lie in"),
    (lambda a, c: score("correlation", a, c, alpha=0.1), ValueError, "takes no parameter"),
    (lambda a, c: score("iou", a, c, beta=1), TypeError, "unknown parameter"),
    (lambda a, c: score("iou", a, c, ties="random"), ValueError, "ties must be one of"),
    (lambda a, c: score("iou", a, c, device="not-a-device"), ValueError, "device"),
    (lambda a, c: score_pairs("iou", a, c, [[0, 9]]), ValueError, "out of range"),
    (lambda a, c: score_pairs("iou", a, c, [[0.5, 1]]), ValueError, "integer"),
])
def test_bad_inputs_get_clear_errors(call, error, match) -> None:
    rng = np.random.default_rng(2)
    with pytest.raises(error, match=match):
        call(rng.standard_normal((30, 3)), rng.random((30, 2)))


def test_empty_inputs() -> None:
    rng = np.random.default_rng(3)
    assert score("iou", rng.standard_normal((10, 0)), rng.random((10, 2))).shape == (0, 2)
    assert score_pairs("iou", rng.standard_normal((10, 2)), rng.random((10, 2)), np.empty((0, 2), int)).shape == (0,)


def test_help_documents_every_metric_and_parameter() -> None:
    text = pydoc.render_doc(score, renderer=pydoc.plaintext)
    for name in METRICS:
        assert f"``{name}``" in text
    for param in DEFAULTS:
        assert param in text
    for phrase in ("ties", "reference", "(n−1)/n", "NeuronEvalWarning", "hmean:", "Simulation framing"):
        assert phrase in text


def test_registry_facts() -> None:
    assert len(METRICS) == 18
    for name, spec in METRICS.items():
        assert spec.name == name and spec.higher_is_better
        if spec.inverse:
            assert METRICS[spec.inverse].inverse == name
    combination = get_spec("hmean:recall+inverse_auc")
    assert combination.components == ("recall", "inverse_auc") and combination.params == ("alpha", "top_alpha")
    assert get_spec("wpmi").uses_lam and get_spec("wpmi").uses_alpha and not get_spec("cosine").uses_alpha


def test_docstring_examples_run() -> None:
    import doctest

    import neuroneval.metrics as metrics_module

    results = doctest.testmod(metrics_module, verbose=False)
    assert results.attempted >= 4 and results.failed == 0


@pytest.mark.parametrize("ties", ["average", "reference"])
@pytest.mark.parametrize("metric", ALL)
def test_score_units_is_the_rows_of_score(metric: str, ties: str, tricky_data) -> None:
    activations, concepts = tricky_data
    params = metric_params(metric) if metric in METRICS else {"alpha": 0.03}
    full = quiet_score(score, metric, activations, concepts, ties=ties, **params)
    units = np.array([4, 0, 2])
    got = quiet_score(score_units, metric, activations, concepts, units, ties=ties, **params)
    np.testing.assert_allclose(got, full[units], rtol=1e-12, atol=1e-12)
    assert quiet_score(score_units, metric, activations, concepts, np.array([], dtype=int), ties=ties,
                       **params).shape == (0, concepts.shape[1])


@pytest.mark.parametrize(("units", "message"), [
    ([0, 99], r"units\[1\] = 99 is out of range"),
    ([1, 1], "must not repeat"),
    ([[0, 1]], "1-D integer array"),
    ([0.0, 1.0], "1-D integer array"),
])
def test_score_units_rejects_bad_unit_lists(units, message: str, tricky_data) -> None:
    activations, concepts = tricky_data
    with pytest.raises(ValueError, match=message):
        score_units("iou", activations, concepts, np.asarray(units))


@pytest.mark.parametrize("stacked", [True, False], ids=["one_pass", "pass_per_point"])
@pytest.mark.parametrize("ties", ["average", "reference"])
@pytest.mark.parametrize("metric", ALL)
def test_score_grid_equals_one_call_per_point(metric: str, ties: str, stacked: bool, tricky_data,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    activations, concepts = tricky_data
    if not stacked:
        monkeypatch.setattr(engine, "GRID_ELEMENTS", 1)
    spec_params = get_spec(metric).params
    grid = [{}]
    if "alpha" in spec_params:
        grid = [{"alpha": alpha} for alpha in (0.003, 0.03, 0.3)]
    if "lam" in spec_params:
        grid = [{**point, "lam": lam} for point in grid for lam in (0.0, 0.7)]
    units = np.array([5, 1, 3])
    got = quiet_score(score_grid, metric, activations, concepts, units, grid, ties=ties, chunk_size=3)
    assert len(got) == len(grid)
    for point, scores in zip(grid, got, strict=True):
        expected = quiet_score(score_units, metric, activations, concepts, units, ties=ties, **point)
        np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12, err_msg=str(point))


def test_score_grid_points_may_vary_only_alpha_and_lambda(tricky_data) -> None:
    activations, concepts = tricky_data
    with pytest.raises(ValueError, match=r"only \['alpha', 'lam'\]; got \['ties'\]"):
        score_grid("auc", activations, concepts, None, [{"ties": "reference"}])
    with pytest.raises(ValueError, match="at least one point"):
        score_grid("auc", activations, concepts, None, [])
    with pytest.raises(ValueError, match="takes no parameter"):
        score_grid("correlation", activations, concepts, None, [{"alpha": 0.1}])


@pytest.mark.parametrize("function", [score, score_units, score_pairs, score_grid])
def test_concept_values_outside_zero_one_are_rejected_with_row_and_column(function) -> None:
    rng = np.random.default_rng(4)
    activations, concepts = rng.standard_normal((30, 3)), rng.random((30, 4))
    concepts[7, 2], concepts[9, 0] = 2.0, -0.5
    call = {score: lambda a, c: score("iou", a, c),
            score_units: lambda a, c: score_units("iou", a, c, [0]),
            score_pairs: lambda a, c: score_pairs("iou", a, c, [[0, 0]]),
            score_grid: lambda a, c: score_grid("iou", a, c, None, [{"alpha": 0.1}])}[function]
    with pytest.raises(ValueError, match=r"concepts must lie in \[0, 1\].*2 value\(s\) outside, first 2\.0 at row 7, "
                                         r"column 2$"):
        call(activations, concepts)
    frame = pd.DataFrame(concepts, columns=["dog", "cat", "pet", "animal"])
    with pytest.raises(ValueError, match=r"first 2\.0 at row 7, column 2 \('pet'\)"):
        call(activations, frame)
    call(activations, np.clip(concepts, 0.0, 1.0))  # the bounds themselves are valid
