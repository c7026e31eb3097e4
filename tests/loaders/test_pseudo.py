"""Pseudo-label calibration σ(a·(cos − b)) against independent references (sklearn log_loss, scipy.optimize)."""

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.metrics import log_loss

from neuroneval.concepts import pseudo
from neuroneval.concepts.pseudo import (
    PseudoLabelOptions,
    calibration_vectors,
    cosine_similarities,
    fit_calibration,
    fit_calibrations,
    pseudo_labels,
)
from neuroneval.options import OptionsError


def calibration_data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Labels drawn from a true σ(20·(cos − 0.25)), so the best grid point is near a = 20, b = 0.25."""
    rng = np.random.default_rng(seed)
    cosines = rng.uniform(0.0, 0.5, size=(n // 4, 4))
    labels = (rng.random(cosines.shape) < expit(20 * (cosines - 0.25))).astype(np.int64)
    return cosines, labels


def brute_force_bce(cosines: np.ndarray, labels: np.ndarray, a_grid: list[float], b_grid: list[float]) -> np.ndarray:
    grid = np.empty((len(a_grid), len(b_grid)))
    for i, a in enumerate(a_grid):
        for j, b in enumerate(b_grid):
            probabilities = expit(a * (cosines.ravel() - b))
            grid[i, j] = log_loss(labels.ravel(), probabilities, labels=[0, 1])
    return grid


def test_fit_matches_a_loop_over_sklearn_log_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    cosines, labels = calibration_data()
    a_grid, b_grid = [1.0, 5.0, 10.0, 20.0, 40.0], [0.0, 0.1, 0.2, 0.25, 0.3, 0.4]
    expected = brute_force_bce(cosines, labels, a_grid, b_grid)
    monkeypatch.setattr(pseudo, "GRID_CHUNK_ELEMENTS", 7 * len(a_grid) * len(b_grid))  # many uneven chunks
    fit = fit_calibration(cosines, labels, a_grid, b_grid)
    np.testing.assert_allclose(fit.bce_grid, expected, rtol=1e-10)
    best = np.unravel_index(np.argmin(expected), expected.shape)
    assert (fit.a, fit.b) == (a_grid[best[0]], b_grid[best[1]]) == (20.0, 0.25)
    assert fit.bce == pytest.approx(expected.min())


def test_fine_grid_agrees_with_scipy_optimize() -> None:
    cosines, labels = calibration_data(n=2000, seed=1)

    def loss(parameters: np.ndarray) -> float:
        a, b = parameters
        return log_loss(labels.ravel(), expit(a * (cosines.ravel() - b)), labels=[0, 1])

    optimum = minimize(loss, x0=[5.0, 0.1], method="Nelder-Mead", options={"xatol": 1e-6, "fatol": 1e-10})
    a_grid, b_grid = np.linspace(5, 40, 141), np.linspace(0.1, 0.4, 121)
    fit = fit_calibration(cosines, labels, a_grid, b_grid)
    assert fit.a == pytest.approx(optimum.x[0], abs=0.25 + 1e-9)
    assert fit.b == pytest.approx(optimum.x[1], abs=0.0025 + 1e-9)
    assert optimum.fun <= fit.bce <= optimum.fun + 1e-4


def test_extreme_logits_stay_finite_and_soft_labels_work() -> None:
    cosines = np.array([-1.0, 1.0, 0.0])
    fit = fit_calibration(cosines, np.array([0, 1, 1]), [1e4], [0.5])
    assert np.isfinite(fit.bce) and fit.bce == pytest.approx(5000 / 3)  # z = a·(cos − b) = −15000, 5000, −5000
    soft = fit_calibration(cosines, np.array([0.2, 0.9, 0.5]), [2.0], [0.0])
    probabilities = expit(2.0 * cosines)
    reference = -np.mean([0.2, 0.9, 0.5] * np.log(probabilities) + [0.8, 0.1, 0.5] * np.log1p(-probabilities))
    assert soft.bce == pytest.approx(reference)


def test_ties_go_to_the_first_grid_point() -> None:
    fit = fit_calibration(np.array([0.3, 0.3]), np.array([0, 1]), [0.0, 0.0], [0.1, 0.2])
    assert (fit.a, fit.b) == (0.0, 0.1) and fit.bce == pytest.approx(np.log(2))


def test_pseudo_labels_apply_the_calibration_to_cosines() -> None:
    rng = np.random.default_rng(0)
    images, texts = rng.normal(size=(6, 5)), rng.normal(size=(3, 5))
    cosines = cosine_similarities(images, texts)
    manual = np.array([[image @ text / np.linalg.norm(image) / np.linalg.norm(text) for text in texts]
                       for image in images])
    np.testing.assert_allclose(cosines, manual)
    labels = pseudo_labels(10 * images, texts, a=15.0, b=0.2)
    assert labels.dtype == np.float32 and labels.shape == (6, 3)
    np.testing.assert_allclose(labels, 1 / (1 + np.exp(-15.0 * (manual - 0.2))), rtol=1e-6)
    assert np.all((labels >= 0) & (labels <= 1))


@pytest.mark.parametrize("cosines, labels, a_grid, b_grid, message", [
    (np.zeros(3), np.zeros(4), [1.0], [0.0], "differ in shape"),
    (np.array([0.1, np.nan]), np.zeros(2), [1.0], [0.0], "NaN"),
    (np.zeros(2), np.array([0, 2]), [1.0], [0.0], r"labels must lie in \[0, 1\]"),
    (np.zeros(2), np.zeros(2), [], [0.0], "a_grid must be a non-empty 1-D"),
    (np.zeros(0), np.zeros(0), [1.0], [0.0], "cosines are empty"),
])
def test_fit_calibration_validates_inputs(cosines: np.ndarray, labels: np.ndarray, a_grid: list, b_grid: list,
                                          message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fit_calibration(cosines, labels, a_grid, b_grid)


def test_pseudo_labels_validate_embeddings() -> None:
    with pytest.raises(ValueError, match="dimension 3, text embeddings 4"):
        pseudo_labels(np.ones((2, 3)), np.ones((2, 4)), 1.0, 0.0)
    with pytest.raises(ValueError, match="text_embeddings has all-zero rows"):
        pseudo_labels(np.ones((2, 3)), np.zeros((1, 3)), 1.0, 0.0)


def test_pseudo_label_quality_is_sklearn_auc_per_concept() -> None:
    from sklearn.metrics import roc_auc_score

    from neuroneval.concepts.pseudo import pseudo_label_quality

    rng = np.random.default_rng(3)
    labels = np.column_stack([rng.random(100) < 0.3, rng.random(100) < 0.5, np.zeros(100)]).astype(np.float32)
    pseudo = np.clip(labels * 0.4 + rng.random((100, 3)) * 0.6, 0, 1)
    names = ["shape:a", "shape:b", "colour:never"]
    quality = pseudo_label_quality(labels, pseudo, names)
    expected = {name: roc_auc_score(labels[:, k], pseudo[:, k]) for k, name in enumerate(names[:2])}
    assert quality["auc"] == {name: round(value, 6) for name, value in expected.items()}  # no positive: left out
    assert quality["mean_auc"] == round(float(np.mean(list(expected.values()))), 6)
    assert quality["mean_auc_by_kind"] == {"shape": round(float(np.mean(list(expected.values()))), 6)}
    assert pseudo_label_quality(labels[:, 2:], pseudo[:, 2:], names[2:])["mean_auc"] is None
    counted = {"shape": {"labels": sum(int(v >= 0.5) for v in labels[:, :2].ravel()) / 200,
                         "pseudo": sum(int(v >= 0.5) for v in pseudo[:, :2].ravel()) / 200},
               "colour": {"labels": 0.0, "pseudo": sum(int(v >= 0.5) for v in pseudo[:, 2]) / 100}}
    assert quality["positive_rate_by_kind"] == {kind: {key: round(value, 6) for key, value in rates.items()}
                                                for kind, rates in sorted(counted.items())}


def test_per_concept_calibration_is_each_columns_own_sklearn_optimum() -> None:
    """Two concepts drawn from different sigmoids: per concept, each column's grid optimum (brute force over
    sklearn's log_loss on that column alone); shared, the optimum over all entries, repeated."""
    rng = np.random.default_rng(4)
    cosines = np.column_stack([rng.uniform(0.0, 0.5, 600), rng.uniform(-0.2, 0.3, 600)])
    truth_a, truth_b = np.array([20.0, 40.0]), np.array([0.25, 0.1])
    labels = (rng.random(cosines.shape) < expit(truth_a * (cosines - truth_b))).astype(np.int64)
    a_grid, b_grid = [5.0, 10.0, 20.0, 40.0, 80.0], [0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3]
    fits = fit_calibrations(cosines, labels, a_grid, b_grid, scope="per_concept")
    for column in range(2):
        grid = brute_force_bce(cosines[:, column], labels[:, column], a_grid, b_grid)
        best = np.unravel_index(np.argmin(grid), grid.shape)
        assert (fits.a[column], fits.b[column]) == (a_grid[best[0]], b_grid[best[1]])
        assert fits.bce[column] == pytest.approx(grid.min())
    assert fits.b.tolist() == [0.25, 0.1]
    shared = fit_calibrations(cosines, labels, a_grid, b_grid, scope="shared")
    grid = brute_force_bce(cosines, labels, a_grid, b_grid)
    best = np.unravel_index(np.argmin(grid), grid.shape)
    assert shared.a.tolist() == [a_grid[best[0]]] * 2 and shared.b.tolist() == [b_grid[best[1]]] * 2
    assert fits.bce.mean() < shared.bce.mean()  # a sigmoid per column fits at least as well as one for all


def test_per_concept_pseudo_labels_and_their_metadata_vectors() -> None:
    images, texts = np.array([[1.0, 0.0], [0.6, 0.8]]), np.array([[1.0, 0.0], [0.0, 1.0]])
    a, b = np.array([10.0, 30.0]), np.array([0.5, 0.2])
    expected = expit(a * (cosine_similarities(images, texts) - b))
    np.testing.assert_allclose(pseudo_labels(images, texts, a, b), expected, rtol=1e-6)
    slopes, offsets = calibration_vectors({"a": {"u": 10.0, "v": 30.0}, "b": {"u": 0.5, "v": 0.2}}, ["v", "u"])
    assert slopes.tolist() == [30.0, 10.0] and offsets.tolist() == [0.2, 0.5]
    slopes, offsets = calibration_vectors({"a": 7.0, "b": 0.1}, ["u", "v"])
    assert slopes.tolist() == [7.0, 7.0] and offsets.tolist() == [0.1, 0.1]
    with pytest.raises(ValueError, match="no calibration 'b'"):
        calibration_vectors({"a": 7.0}, ["u"])


def test_pseudo_label_options_name_the_bad_field() -> None:
    assert PseudoLabelOptions.from_params({"calibration_split": "train", "a_grid": [5, 10], "b_grid": [0.1],
                                          "scope": "shared"}).a_grid == (5, 10)
    with pytest.raises(OptionsError, match="scope must be one of"):
        PseudoLabelOptions.from_params({"scope": "per_kind"})
    with pytest.raises(OptionsError, match="a_grid"):
        PseudoLabelOptions.from_params({"a_grid": [0.0]})
    with pytest.raises(OptionsError, match="unknown option 'calibration'"):
        PseudoLabelOptions.from_params({"calibration": "x"})
    with pytest.raises(ValueError, match="scope must be one of"):
        fit_calibrations(np.zeros((2, 1)), np.zeros((2, 1)), [1.0], [0.0], scope="kind")
