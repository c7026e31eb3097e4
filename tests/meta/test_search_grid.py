"""The α/λ search of paper 000 Sec. 5 (``meta.search``) against a brute-force search that scores every grid point
with its own ``score`` call, on data where the points differ (the best is not the first), and its argument checks.

WPMI is linear in λ with a slope free of α (000 Eq. A.11), which the search uses to score the λ grid with one extra
evaluation; a user metric that takes α and λ need not be, so it is scored at every point.
"""

import dataclasses

import numpy as np
import pytest

from neuroneval.grid_choice import first_best_index
from neuroneval.meta import evaluate_metric, meta_auprc, split_units
from neuroneval.meta.search import MetaResult, _scores_on_grid, hyperparameter_grid
from neuroneval.metrics import get_spec, score
from neuroneval.metrics.unit_checks import TiedGridWarning
from neuroneval.metrics.user import user_metric

ALPHAS = [0.01, 0.05, 0.2]
LAMS = [0.0, 0.4, 1.0]


@user_metric(params=("alpha", "lam"), formula="(λ² + α)·r(a, c) + (1 − λ)²·mean(c): not linear in λ")
def curved_in_lam(a: np.ndarray, c: np.ndarray, alpha: float, lam: float) -> float:
    """A user metric whose λ enters squared and whose λ-slope depends on α: at λ = 0 the concept's mean swamps the
    correlation, at λ = 1 the correlation alone ranks the concepts."""
    r = float(np.corrcoef(a, c)[0, 1])
    return (lam * lam + alpha) * r + (1.0 - lam) ** 2 * float(np.mean(c))


def _world(seed: int = 4) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Soft concepts of very different base rates and noisy units, each tied to one concept: WPMI's λ term
    (−λ·log mean c) moves rare concepts up, so the validation meta-AUPRC differs between grid points."""
    rng = np.random.default_rng(seed)
    n, k = 700, 8
    rates = np.linspace(0.02, 0.6, k)
    concepts = np.clip(rng.random((n, k)) * 0.3 + (rng.random((n, k)) < rates) * 0.7, 0.0, 1.0)
    activations = concepts[:, rng.permutation(k)] + 1.2 * rng.standard_normal((n, k))
    truth = np.zeros((k, k), dtype=bool)
    truth[np.arange(k), np.abs(np.corrcoef(activations.T, concepts.T)[:k, k:]).argmax(axis=1)] = True
    return activations, concepts, truth


def _brute_force(metric: str, activations, concepts, truth, val_units, test_units, points):
    full = [score(metric, activations, concepts, **point) for point in points]
    val = [meta_auprc(scores[val_units], truth[val_units]) for scores in full]
    best = first_best_index(val)
    return full, val, best, meta_auprc(full[best][test_units], truth[test_units])


def _points(metric: str) -> list[dict[str, float]]:
    params = get_spec(metric).params
    points: list[dict[str, float]] = [{}]
    if "alpha" in params:
        points = [{"alpha": alpha} for alpha in ALPHAS]
    if "lam" in params:
        points = [{**point, "lam": lam} for point in points for lam in LAMS]
    return points


@pytest.mark.parametrize("metric", ["wpmi", "tests.meta.test_search_grid:curved_in_lam"])
def test_scores_on_the_grid_equal_one_score_call_per_point(metric: str) -> None:
    """Every grid point's scores, WPMI's from λ = 0 at each α plus one λ = 1 call, equal a direct call there."""
    activations, concepts, _ = _world()
    units = np.array([0, 2, 3, 6])
    points = _points(metric)
    got = _scores_on_grid(metric, activations, concepts, units, points, get_spec(metric).options())
    assert len(got) == len(points)
    for point, scores in zip(points, got, strict=True):
        expected = score(metric, activations, concepts, **point)[units]
        np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-12, err_msg=str(point))


@pytest.mark.parametrize("metric", ["wpmi", "tests.meta.test_search_grid:curved_in_lam", "iou"])
def test_the_search_equals_a_brute_force_search_whose_best_is_not_the_first(metric: str) -> None:
    activations, concepts, truth = _world()
    val_units, test_units = np.array([0, 3, 5]), np.array([1, 2, 4, 6, 7])
    points = _points(metric)
    _, val, best, test = _brute_force(metric, activations, concepts, truth, val_units, test_units, points)
    assert best != 0 and len(set(np.round(val, 12))) > 1  # the setting tells the points apart
    result = evaluate_metric(metric, activations, concepts, truth, val_units=val_units, test_units=test_units,
                             alpha_grid=ALPHAS, lam_grid=LAMS)
    assert dict(result.params) == points[best]
    assert result.val_auprc == pytest.approx(val[best], abs=1e-12)
    assert result.test_auprc == pytest.approx(test, abs=1e-12)
    assert not result.grid_tied


def test_a_one_point_alpha_grid_is_scored_at_that_point_in_one_call() -> None:
    activations, concepts, truth = _world()
    val_units, test_units = np.array([0, 3]), np.array([1, 2, 4])
    result = evaluate_metric("recall", activations, concepts, truth, val_units=val_units, test_units=test_units,
                             alpha_grid=[0.2], lam_grid=[0.0])
    at_point = score("recall", activations, concepts, alpha=0.2)
    assert dict(result.params) == {"alpha": 0.2} and result.grid_tied is False
    assert result.val_auprc == pytest.approx(meta_auprc(at_point[val_units], truth[val_units]), abs=1e-12)
    assert result.test_auprc == pytest.approx(meta_auprc(at_point[test_units], truth[test_units]), abs=1e-12)
    assert (result.n_val_units, result.n_test_units) == (2, 3)


def test_units_without_a_known_concept_leave_the_split_and_an_empty_side_is_an_error() -> None:
    activations, concepts, truth = _world()
    truth[[0, 3]] = False
    with pytest.raises(ValueError, match="iou: validation and test sets both need units with a known concept"):
        evaluate_metric("iou", activations, concepts, truth, val_units=np.array([0, 3]),
                        test_units=np.array([1, 2]), alpha_grid=[0.05], lam_grid=[0.0])
    with pytest.raises(ValueError, match="validation and test sets both need"):
        evaluate_metric("iou", activations, concepts, truth, val_units=np.array([1, 2]),
                        test_units=np.array([0, 3]), alpha_grid=[0.05], lam_grid=[0.0])
    result = evaluate_metric("iou", activations, concepts, truth, val_units=np.array([0, 1]),
                             test_units=np.array([2, 3, 4]), alpha_grid=[0.05], lam_grid=[0.0])
    assert (result.n_val_units, result.n_test_units) == (1, 2)


def test_no_interval_without_resamples_and_the_default_resampling_seed_is_zero() -> None:
    activations, concepts, truth = _world()
    common = dict(val_units=np.array([0, 3]), test_units=np.arange(8)[[1, 2, 4, 5, 6, 7]], alpha_grid=[0.05],
                  lam_grid=[0.0])
    plain = evaluate_metric("f1", activations, concepts, truth, **common)
    assert np.isnan(plain.ci_low) and np.isnan(plain.ci_high)
    default_seed = evaluate_metric("f1", activations, concepts, truth, n_boot=40, **common)
    seed_zero = evaluate_metric("f1", activations, concepts, truth, n_boot=40, boot_seed=0, **common)
    seed_one = evaluate_metric("f1", activations, concepts, truth, n_boot=40, boot_seed=1, **common)
    assert (default_seed.ci_low, default_seed.ci_high) == (seed_zero.ci_low, seed_zero.ci_high)
    assert (seed_one.ci_low, seed_one.ci_high) != (seed_zero.ci_low, seed_zero.ci_high)
    assert default_seed.ci_low <= default_seed.test_auprc <= default_seed.ci_high
    one = evaluate_metric("f1", activations, concepts, truth, n_boot=1, **common)  # one resample: a point "interval"
    assert np.isfinite(one.ci_low) and one.ci_low == one.ci_high
    with pytest.raises(ValueError, match="f1: n_boot must be >= 0"):
        evaluate_metric("f1", activations, concepts, truth, n_boot=-1, **common)


def test_a_meta_result_states_no_interval_and_no_tie_unless_told() -> None:
    result = MetaResult("auc", {}, 0.5, 0.6, 3, 4)
    assert np.isnan(result.ci_low) and np.isnan(result.ci_high) and np.isnan(result.test_top1)
    assert result.grid_tied is False


def test_a_meta_result_is_frozen() -> None:
    activations, concepts, truth = _world()
    result = evaluate_metric("auc", activations, concepts, truth, val_units=np.array([0, 3]),
                             test_units=np.array([1, 2]), alpha_grid=[0.05], lam_grid=[0.0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.test_auprc = 1.0  # type: ignore[misc]


def test_a_tied_grid_warns_at_the_caller_naming_the_first_point() -> None:
    """Every point of a grid tied (a unit per concept, each its concept exactly): the warning names the chosen
    first point and is reported at the line that called the search."""
    concepts = np.eye(6)[np.arange(300) % 6]
    activations = concepts.copy()
    truth = np.eye(6, dtype=bool)
    with pytest.warns(TiedGridWarning) as record:
        result = evaluate_metric("recall", activations, concepts, truth, val_units=np.array([0, 1]),
                                 test_units=np.arange(2, 6), alpha_grid=[0.1, 0.15], lam_grid=[0.0])
    assert result.grid_tied and dict(result.params) == {"alpha": 0.1}
    tied = [warning for warning in record if issubclass(warning.category, TiedGridWarning)]
    assert len(tied) == 1 and tied[0].filename == __file__
    assert "the chosen {'alpha': 0.1} is the first point" in str(tied[0].message)


def test_the_split_defaults_to_one_validation_unit_and_refuses_fractions_outside_0_1() -> None:
    val, test = split_units(10, val_fraction=0.05, seed=0)  # round(0.5) = 0 → the floor of one unit
    assert val.size == 1 and test.size == 9
    val, test = split_units(2, val_fraction=0.5, seed=0)  # the fewest units a split takes: one each
    assert sorted([*val, *test]) == [0, 1] and val.size == test.size == 1
    with pytest.raises(ValueError, match="at least 2 units"):
        split_units(1, val_fraction=0.5, seed=0)
    with pytest.raises(TypeError):
        split_units(10, 0.05, 0)  # type: ignore[misc]
    for fraction in (-0.5, 0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="val_fraction must lie in"):
            split_units(10, val_fraction=fraction, seed=0)


def test_the_grid_takes_its_options_by_keyword_only() -> None:
    assert hyperparameter_grid(metric="wpmi", alpha_grid=[0.1], lam_grid=[0.0, 1.0]) == [
        {"alpha": 0.1, "lam": 0.0}, {"alpha": 0.1, "lam": 1.0}]
    with pytest.raises(TypeError):
        hyperparameter_grid("wpmi", [0.1], [0.0])  # type: ignore[misc]


def test_a_two_point_grid_is_searched_and_its_second_point_can_win() -> None:
    activations, concepts, truth = _world()
    val_units, test_units = np.array([0, 3, 5]), np.array([1, 2, 4, 6, 7])
    _, _, best, _ = _brute_force("iou", activations, concepts, truth, val_units, test_units, _points("iou"))
    two = [ALPHAS[0], ALPHAS[best]]  # the first point loses to the best of three
    result = evaluate_metric("iou", activations, concepts, truth, val_units=val_units, test_units=test_units,
                             alpha_grid=two, lam_grid=[0.0])
    assert dict(result.params) == {"alpha": ALPHAS[best]}


def test_wpmi_scores_lambda_0_at_every_alpha_and_lambda_1_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The λ grid of WPMI costs one extra evaluation (its score is linear in λ); a user metric with λ is scored at
    every (α, λ) point."""
    import neuroneval.meta.search as search

    scored: list[list[dict[str, float]]] = []
    real = search.score_grid

    def recording(metric, activations, concepts, units, grid, **kwargs):
        scored.append([dict(point) for point in grid])
        return real(metric, activations, concepts, units, grid, **kwargs)

    monkeypatch.setattr(search, "score_grid", recording)
    activations, concepts, _ = _world()
    units = np.array([0, 2])
    for metric, expected in (("wpmi", [*({"alpha": a, "lam": 0.0} for a in ALPHAS), {"alpha": ALPHAS[0], "lam": 1.0}]),
                             ("tests.meta.test_search_grid:curved_in_lam", _points("tests.meta.test_search_grid:"
                                                                                   "curved_in_lam"))):
        scored.clear()
        _scores_on_grid(metric, activations, concepts, units, _points(metric), get_spec(metric).options())
        assert scored == [expected]


def test_the_search_takes_its_units_and_grids_by_keyword_only() -> None:
    activations, concepts, truth = _world()
    with pytest.raises(TypeError):
        evaluate_metric("iou", activations, concepts, truth, np.array([0, 3]), np.array([1, 2]),  # type: ignore[misc]
                        alpha_grid=[0.05], lam_grid=[0.0])


def test_wpmi_points_without_alpha_take_the_default_alpha() -> None:
    activations, concepts, _ = _world()
    units = np.array([1, 4])
    points = [{"lam": lam} for lam in LAMS]
    got = _scores_on_grid("wpmi", activations, concepts, units, points, get_spec("wpmi").options())
    for point, scores in zip(points, got, strict=True):
        np.testing.assert_allclose(scores, score("wpmi", activations, concepts, **point)[units], rtol=1e-12,
                                   atol=1e-12)
