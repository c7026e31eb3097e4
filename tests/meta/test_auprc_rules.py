"""Rules of :mod:`neuroneval.meta.auprc` (paper 000, Eq. 13 and Table 4), each against an independent oracle.

Pinned here:

* ``truth_mask``: the exact mask (units and concepts absent from ``truth`` stay False), the error naming the
  first five missing units / concepts (sorted), units checked before concepts;
* ``average_precision``: sklearn's ``average_precision_score`` and a brute-force per-positive loop on hand-made
  cases with ties, one positive, negatives at the top thresholds, a positive only at the lowest threshold; 0 for
  no positive at all;
* ``meta_auprc``: the same oracles on the flattened (unit, concept) pairs, ``higher_is_better=False`` negating
  non-integer scores, the default, the keyword-only flag, and every refusal (shape either way, no correct pair,
  NaN / inf);
* ``own_concept_first``: a per-unit loop (ties at the top count only when every tied concept is correct, a unit
  whose top includes an unknown concept fails, rows without a correct concept skipped), float-exactness at
  tiny and huge scores, the refusals;
* ``CHECKPOINT_ELEMENTS``: the documented 256 MiB of float64;
* ``bootstrap_meta_auprc``: the replicates of both computation paths (forced by ``CHECKPOINT_ELEMENTS`` tiny,
  huge, and at the boundary ``J * K`` / ``J * K - 1``) equal a brute-force bootstrap that draws the same unit
  multiplicities from ``seed`` and scores each replicate with sklearn (replicates without a correct pair
  skipped); the interval is the percentile interval of those replicates at ``level`` 0.5 / 0.9 / 0.95 (the
  default); ``(nan, nan)`` when no replicate holds a correct pair; the ``n_boot`` and ``level`` bounds;
* ``_replicate_ap``: the closed form per row of hand-made (replicates, thresholds) counts.
"""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from neuroneval.meta import auprc


def brute_ap(labels, scores) -> float:
    """AP as the mean, over positives, of the precision among all pairs scored at or above that positive."""
    labels = np.asarray(labels, dtype=bool).ravel()
    scores = np.asarray(scores, dtype=np.float64).ravel()
    precisions = []
    for i in np.flatnonzero(labels):
        above = scores >= scores[i]
        precisions.append(labels[above].sum() / above.sum())
    return float(np.mean(precisions)) if precisions else 0.0


def oracle_ap(labels, scores) -> float:
    """sklearn's AP, checked against the brute-force loop."""
    expected = float(average_precision_score(np.asarray(labels, dtype=bool).ravel(), np.ravel(scores)))
    assert expected == pytest.approx(brute_ap(labels, scores), abs=1e-12)
    return expected


# --- truth_mask -----------------------------------------------------------------------------------------------


def test_truth_mask_marks_exactly_the_named_pairs() -> None:
    """Unit u1 and concept b appear in no pair: their row / column stay False."""
    truth = pd.DataFrame({"unit": ["u0", "u2", "u0"], "concept": ["a", "d", "c"]})
    mask = auprc.truth_mask(truth, ["u0", "u1", "u2"], ["a", "b", "c", "d"])
    expected = np.array([[1, 0, 1, 0], [0, 0, 0, 0], [0, 0, 0, 1]], dtype=bool)
    assert mask.dtype == bool and mask.shape == (3, 4)
    np.testing.assert_array_equal(mask, expected)


def test_truth_mask_names_the_first_five_missing_units_then_concepts() -> None:
    """Six unknown units: the message lists the first five (sorted); units are checked before concepts."""
    units = [f"x{i}" for i in (5, 3, 0, 4, 1, 2)]
    truth = pd.DataFrame({"unit": units, "concept": ["zz"] * 6})
    with pytest.raises(ValueError) as info:
        auprc.truth_mask(truth, ["u0"], ["a"])
    assert str(info.value) == ("truth names units that are not in the activation tables: "
                               "['x0', 'x1', 'x2', 'x3', 'x4']")
    concepts = [f"c{i}" for i in (2, 5, 0, 1, 4, 3)]
    truth = pd.DataFrame({"unit": ["u0"] * 6, "concept": concepts})
    with pytest.raises(ValueError) as info:
        auprc.truth_mask(truth, ["u0", "u1"], ["a"])
    assert str(info.value) == ("truth names concepts that are not in the concept table: "
                               "['c0', 'c1', 'c2', 'c3', 'c4']")


# --- average_precision ----------------------------------------------------------------------------------------

AP_CASES = {
    "ties mixing classes": ([0, 1, 1, 0, 1, 0, 0], [0.3, 0.9, 0.8, 0.8, 0.3, 0.1, 0.35]),
    "one positive": ([0, 0, 1, 0, 0], [0.9, 0.7, 0.5, 0.4, 0.2]),
    "negatives on top": ([0, 0, 0, 1, 0, 1], [0.95, 0.85, 0.85, 0.6, 0.5, 0.45]),
    "positive only at the lowest threshold": ([0, 0, 0, 1], [0.4, 0.3, 0.2, 0.1]),
    "unsorted with a tie at the top": ([1, 0, 1, 1, 0, 0], [0.2, 0.7, 0.7, 0.5, 0.25, 0.5]),
    "a single pair": ([1], [0.5]),
}


@pytest.mark.parametrize("case", AP_CASES)
def test_average_precision_matches_sklearn_and_the_per_positive_loop(case: str) -> None:
    """Tied scores form one threshold; labels may be ints and scores a list."""
    labels, scores = AP_CASES[case]
    assert auprc.average_precision(np.array(labels), scores) == pytest.approx(oracle_ap(labels, scores), abs=1e-12)


def test_average_precision_hand_values() -> None:
    """Closed forms: one positive at rank 3 gives 1/3; a positive tied with one negative at the top gives 1/2."""
    assert auprc.average_precision(np.array([0, 0, 1, 0]), np.array([0.9, 0.8, 0.7, 0.1])) == pytest.approx(1 / 3)
    assert auprc.average_precision(np.array([1, 0, 0]), np.array([0.5, 0.5, 0.1])) == pytest.approx(0.5)
    assert auprc.average_precision(np.array([1, 0, 1]), np.array([0.9, 0.5, 0.1])) == pytest.approx((1 + 2 / 3) / 2)


def test_average_precision_is_zero_without_positives() -> None:
    """No positive label: 0.0 (not NaN), at a single threshold and at several."""
    assert auprc.average_precision(np.zeros(4, dtype=bool), np.array([0.4, 0.3, 0.3, 0.1])) == 0.0
    assert auprc.average_precision(np.zeros(3, dtype=bool), np.array([0.2, 0.2, 0.2])) == 0.0


# --- meta_auprc -----------------------------------------------------------------------------------------------

SCORES = np.array([[0.35, 0.85, 0.15, 0.55],
                   [0.85, 0.25, 0.45, 0.05],
                   [0.55, 0.65, 0.95, 0.35],
                   [0.15, 0.45, 0.25, 0.75],
                   [0.65, 0.05, 0.35, 0.45]])
TRUTH = np.array([[0, 1, 0, 0],
                  [1, 0, 1, 0],
                  [0, 0, 0, 1],
                  [0, 0, 0, 0],
                  [0, 0, 1, 0]], dtype=bool)


def test_meta_auprc_pools_all_pairs() -> None:
    """AP over all (unit, concept) pairs (ties across units grouped); the default ranks high scores first."""
    assert auprc.meta_auprc(SCORES, TRUTH) == pytest.approx(oracle_ap(TRUTH, SCORES), abs=1e-12)


def test_meta_auprc_lower_is_better_negates_the_scores() -> None:
    """``higher_is_better=False`` ranks low (non-integer) scores first."""
    low_first = oracle_ap(TRUTH, -SCORES)
    assert low_first != pytest.approx(oracle_ap(TRUTH, SCORES))
    assert auprc.meta_auprc(SCORES, TRUTH, higher_is_better=False) == pytest.approx(low_first, abs=1e-12)
    assert auprc.meta_auprc(-SCORES, TRUTH, higher_is_better=False) == pytest.approx(oracle_ap(TRUTH, SCORES))
    assert auprc.meta_auprc(SCORES, TRUTH, higher_is_better=True) == pytest.approx(oracle_ap(TRUTH, SCORES))


def test_meta_auprc_perfect_and_keyword_only() -> None:
    """Every correct pair above every wrong one: exactly 1; ``higher_is_better`` cannot be given by position."""
    assert auprc.meta_auprc(TRUTH + 0.5 * SCORES, TRUTH) == 1.0
    with pytest.raises(TypeError):
        auprc.meta_auprc(SCORES, TRUTH, False)  # type: ignore[misc]


def test_meta_auprc_refusals() -> None:
    """A shape mismatch either way, a truth without correct pair, NaN or inf scores are refused."""
    for scores, truth in ((SCORES[:, :3], TRUTH), (SCORES, TRUTH[:, :3]), (SCORES[:4], TRUTH), (SCORES, TRUTH[:4])):
        with pytest.raises(ValueError, match="differs from truth shape"):
            auprc.meta_auprc(scores, truth)
    with pytest.raises(ValueError, match="at least one correct"):
        auprc.meta_auprc(SCORES, np.zeros_like(TRUTH))
    for bad in (np.nan, np.inf, -np.inf):
        scores = SCORES.copy()
        scores[3, 1] = bad
        with pytest.raises(ValueError, match="non-finite"):
            auprc.meta_auprc(scores, TRUTH)


# --- own_concept_first ----------------------------------------------------------------------------------------

OWN_SCORES = np.array([[0.3, 0.7, 0.2],    # top is its concept: right
                       [0.5, 0.5, 0.1],    # top tied with an unknown concept: wrong
                       [0.9, 0.9, 0.05],   # top tied, both concepts its own: right
                       [1.0, 0.2, 0.3],    # no concept: skipped
                       [0.6, 0.4, 0.8],    # top is an unknown concept: wrong
                       [0.15, 0.35, 0.25]])  # its own concept scores lowest: right only low first
OWN_TRUTH = np.array([[0, 1, 0], [1, 0, 0], [1, 1, 0], [0, 0, 0], [1, 0, 0], [1, 0, 0]], dtype=bool)


def own_loop(scores: np.ndarray, truth: np.ndarray) -> float:
    """Per-unit loop over the units with a correct concept: right when every top-scored concept is correct."""
    right = [all(truth[k, scores[k] == scores[k].max()]) for k in range(len(scores)) if truth[k].any()]
    return float(np.mean(right))


def test_own_concept_first_against_a_per_unit_loop() -> None:
    """2 of the 5 units with a concept pick theirs (high first); low first by the loop on negated scores."""
    assert own_loop(OWN_SCORES, OWN_TRUTH) == pytest.approx(2 / 5)
    assert auprc.own_concept_first(OWN_SCORES, OWN_TRUTH) == pytest.approx(2 / 5)
    assert auprc.own_concept_first(OWN_SCORES, OWN_TRUTH, higher_is_better=True) == pytest.approx(2 / 5)
    low = own_loop(-OWN_SCORES, OWN_TRUTH)
    assert low == pytest.approx(1 / 5)  # only unit 5 has its own concept lowest
    assert auprc.own_concept_first(OWN_SCORES, OWN_TRUTH, higher_is_better=False) == pytest.approx(low)


def test_own_concept_first_lower_is_better_with_mixed_signs() -> None:
    """Negative and positive scores: low first picks the most negative, not the reciprocal's maximum."""
    scores = np.array([[-1.5, 2.5, 0.5], [0.25, -0.75, 1.5], [3.5, 1.25, 2.75]])
    truth = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0]], dtype=bool)
    assert auprc.own_concept_first(scores, truth, higher_is_better=False) == pytest.approx(own_loop(-scores, truth))
    assert own_loop(-scores, truth) == pytest.approx(2 / 3)
    assert auprc.own_concept_first(scores, truth) == pytest.approx(own_loop(scores, truth)) == pytest.approx(1 / 3)


def test_own_concept_first_is_float_exact() -> None:
    """Scores a hair apart and huge finite scores stay distinct (no shift or rescale creates a tie)."""
    scores = np.array([[2e-17, 0.0, 1e-17], [1e308, 1.5e308, 0.0], [-1e308, -1.5e308, 0.0]])
    truth = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=bool)
    assert auprc.own_concept_first(scores, truth) == 1.0
    truth_low = np.array([[0, 1, 0], [0, 0, 1], [0, 1, 0]], dtype=bool)
    assert own_loop(-scores, truth_low) == 1.0
    assert auprc.own_concept_first(scores, truth_low, higher_is_better=False) == 1.0


def test_own_concept_first_refusals_and_keyword_only() -> None:
    """A shape mismatch either way and a truth without any correct concept are refused; the flag is keyword-only."""
    for scores, truth in ((OWN_SCORES[:, :2], OWN_TRUTH), (OWN_SCORES, OWN_TRUTH[:, :2]),
                          (OWN_SCORES[:4], OWN_TRUTH), (OWN_SCORES, OWN_TRUTH[:4])):
        with pytest.raises(ValueError, match="differs from truth shape"):
            auprc.own_concept_first(scores, truth)
    with pytest.raises(ValueError, match="at least one unit"):
        auprc.own_concept_first(OWN_SCORES, np.zeros_like(OWN_TRUTH))
    with pytest.raises(TypeError):
        auprc.own_concept_first(OWN_SCORES, OWN_TRUTH, False)  # type: ignore[misc]


# --- bootstrap_meta_auprc -------------------------------------------------------------------------------------


def test_checkpoint_budget_is_256_mib_of_float64() -> None:
    """The documented bound of the checkpoint matrix: 256 MiB of 8-byte floats."""
    assert auprc.CHECKPOINT_ELEMENTS * 8 == 256 * 2**20


def _main_data() -> tuple[np.ndarray, np.ndarray]:
    """7 units × 5 concepts: non-integer tied scores, a unit with two concepts, the top-scored unit with none."""
    rng = np.random.default_rng(11)
    scores = np.round(rng.normal(size=(7, 5)), 1) + 0.05
    truth = np.zeros((7, 5), dtype=bool)
    truth[np.arange(6), rng.integers(0, 5, 6)] = True
    truth[1, [0, 3]] = True
    scores[truth] += 0.6
    scores[6] = 4.05 + 0.1 * np.arange(5)  # above every correct pair, no concept of its own
    return scores, truth


def _sparse_data() -> tuple[np.ndarray, np.ndarray]:
    """3 units × 4 concepts, only unit 0 has a concept: about a third of the replicates hold no correct pair."""
    scores = np.array([[0.45, 0.15, 0.85, 0.25], [0.95, 0.35, 0.55, 0.05], [0.65, 0.75, 0.15, 0.45]])
    truth = np.zeros((3, 4), dtype=bool)
    truth[0, 2] = True
    return scores, truth


def _bottom_data() -> tuple[np.ndarray, np.ndarray]:
    """4 units × 3 concepts whose lowest score is a correct pair, tied with a wrong one (the last threshold)."""
    scores = np.array([[0.55, 0.15, 0.85], [0.35, 0.75, 0.15], [0.95, 0.45, 0.25], [0.65, 0.05, 0.05]])
    truth = np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=bool)
    return scores, truth


DATA = {"main": _main_data, "sparse": _sparse_data, "bottom": _bottom_data}


@cache
def oracle_replicates(name: str, n_boot: int, seed: int, negate: bool) -> np.ndarray:
    """Brute force: the module's draw of unit multiplicities from ``seed``, rows repeated, AP by sklearn."""
    scores, truth = DATA[name]()
    ranked = -scores if negate else scores
    n_units = len(scores)
    counts = np.random.default_rng(seed).multinomial(n_units, np.full(n_units, 1 / n_units), size=n_boot)
    values = []
    for count in counts:
        rows = np.repeat(np.arange(n_units), count)
        if truth[rows].any():
            values.append(average_precision_score(truth[rows].ravel(), ranked[rows].ravel()))
    return np.array(values)


class PathSpy:
    """Records which replicate path ran and what it returned."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, np.ndarray]] = []
        for name in ("_checkpoint_replicates", "_cumsum_replicates"):
            monkeypatch.setattr(auprc, name, self._wrap(name, getattr(auprc, name)))

    def _wrap(self, name, function):
        def spy(*args, **kwargs):
            values = function(*args, **kwargs)
            self.calls.append((name, np.asarray(values)))
            return values
        return spy


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    tail = (1 - level) / 2
    return float(np.quantile(values, tail)), float(np.quantile(values, 1 - tail))


@pytest.mark.parametrize("name", ["main", "sparse", "bottom"])
@pytest.mark.parametrize(("budget", "path"), [(10**12, "_checkpoint_replicates"), (0, "_cumsum_replicates")])
def test_both_paths_give_the_brute_force_replicates(monkeypatch, name: str, budget: int, path: str) -> None:
    """Forced by a huge / zero budget, each path returns the brute-force replicates in draw order."""
    scores, truth = DATA[name]()
    monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
    spy = PathSpy(monkeypatch)
    low, high = auprc.bootstrap_meta_auprc(scores, truth, n_boot=60, seed=4, level=0.9, chunk=7)
    expected = oracle_replicates(name, 60, 4, False)
    assert [call[0] for call in spy.calls] == [path]
    np.testing.assert_allclose(spy.calls[0][1], expected, rtol=0, atol=1e-12)
    assert (low, high) == pytest.approx(_interval(expected, 0.9), abs=1e-12)
    if name == "sparse":
        assert 5 < expected.size < 55  # replicates without the one correct pair are skipped


def test_budget_boundary_picks_the_path(monkeypatch) -> None:
    """J thresholds holding a correct pair, K units: a budget of J*K keeps the checkpoints, J*K - 1 does not."""
    scores, truth = _main_data()
    n_units = len(scores)
    n_checks = np.unique(scores[truth]).size
    assert n_checks >= 4 and n_checks != n_units
    expected = oracle_replicates("main", 40, 8, False)
    boundary = n_checks * n_units
    for budget, path in ((boundary, "_checkpoint_replicates"), (boundary - 1, "_cumsum_replicates")):
        monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
        spy = PathSpy(monkeypatch)
        auprc.bootstrap_meta_auprc(scores, truth, n_boot=40, seed=8)
        assert [call[0] for call in spy.calls] == [path]
        np.testing.assert_allclose(spy.calls[0][1], expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95])
@pytest.mark.parametrize("budget", [None, 0])
def test_interval_is_the_percentile_interval_of_the_replicates(monkeypatch, level: float, budget: int | None) -> None:
    """200 replicates (more than one chunk of 16): the interval at ``level`` on either path."""
    if budget is not None:
        monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
    scores, truth = _main_data()
    expected = _interval(oracle_replicates("main", 200, 3, False), level)
    assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=200, seed=3, level=level) == pytest.approx(
        expected, abs=1e-12)


@pytest.mark.parametrize("budget", [None, 0])
def test_bootstrap_defaults_and_lower_is_better(monkeypatch, budget: int | None) -> None:
    """Default level 0.95 and high-first; ``higher_is_better=False`` ranks the negated (non-integer) scores."""
    if budget is not None:
        monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
    scores, truth = _main_data()
    high_first = _interval(oracle_replicates("main", 100, 6, False), 0.95)
    low_first = _interval(oracle_replicates("main", 100, 6, True), 0.95)
    assert high_first != pytest.approx(low_first)
    assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=100, seed=6) == pytest.approx(high_first, abs=1e-12)
    assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=100, seed=6, higher_is_better=False) == pytest.approx(
        low_first, abs=1e-12)
    assert auprc.bootstrap_meta_auprc(-scores, truth, n_boot=100, seed=6, higher_is_better=False) == pytest.approx(
        high_first, abs=1e-12)


@pytest.mark.parametrize("budget", [None, 0])
def test_no_replicate_with_a_correct_pair_gives_nan(monkeypatch, budget: int | None) -> None:
    """Two units, only unit 0 with a concept, one replicate drawing unit 1 twice: ``(nan, nan)``."""
    if budget is not None:
        monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
    scores = np.array([[0.25, 0.65, 0.45], [0.85, 0.15, 0.55]])
    truth = np.array([[0, 1, 0], [0, 0, 0]], dtype=bool)
    seed = next(s for s in range(100)
                if np.random.default_rng(s).multinomial(2, [0.5, 0.5], size=1)[0, 0] == 0)
    low, high = auprc.bootstrap_meta_auprc(scores, truth, n_boot=1, seed=seed)
    assert np.isnan(low) and np.isnan(high)
    other = next(s for s in range(100) if np.random.default_rng(s).multinomial(2, [0.5, 0.5], size=1)[0, 0] == 2)
    single = oracle_ap([[0, 1, 0], [0, 1, 0]], [[0.25, 0.65, 0.45]] * 2)
    assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=1, seed=other) == pytest.approx((single, single))


@pytest.mark.parametrize("budget", [None, -1])
def test_a_truth_without_correct_pairs_gives_nan_on_either_path(monkeypatch, budget: int | None) -> None:
    """No correct pair at all (``meta_auprc`` refuses it): the bootstrap skips every replicate and returns
    ``(nan, nan)``, on the checkpoint path (default budget) as on the cumsum path (budget −1)."""
    if budget is not None:
        monkeypatch.setattr(auprc, "CHECKPOINT_ELEMENTS", budget)
    scores = np.array([[0.1, 0.2], [0.3, 0.4]])
    low, high = auprc.bootstrap_meta_auprc(scores, np.zeros((2, 2), dtype=bool), n_boot=5, seed=0)
    assert np.isnan(low) and np.isnan(high)


def test_bootstrap_argument_bounds() -> None:
    """``n_boot`` >= 1 and ``level`` strictly inside (0, 1); a shape mismatch either way is refused."""
    scores, truth = _main_data()
    one = oracle_replicates("main", 1, 2, False)
    assert one.size == 1
    assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=1, seed=2) == pytest.approx((one[0], one[0]), abs=1e-12)
    for n_boot in (0, -1):
        with pytest.raises(ValueError, match=re.escape(f"n_boot must be >= 1, got {n_boot}")):
            auprc.bootstrap_meta_auprc(scores, truth, n_boot=n_boot, seed=2)
    for level in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError, match=re.escape(f"level must lie in (0, 1), got {level}")):
            auprc.bootstrap_meta_auprc(scores, truth, n_boot=5, seed=2, level=level)
    values = oracle_replicates("main", 5, 2, False)
    for level in (1e-9, 1 - 1e-9):
        assert auprc.bootstrap_meta_auprc(scores, truth, n_boot=5, seed=2, level=level) == pytest.approx(
            _interval(values, level), abs=1e-9)
    for bad_scores, bad_truth in ((scores[:, :4], truth), (scores, truth[:, :4]), (scores[:6], truth),
                                  (scores, truth[:6])):
        with pytest.raises(ValueError, match="differs from truth shape"):
            auprc.bootstrap_meta_auprc(bad_scores, bad_truth, n_boot=5, seed=2)
    with pytest.raises(TypeError):
        auprc.bootstrap_meta_auprc(scores, truth, 5, 2)  # type: ignore[misc]


# --- _replicate_ap --------------------------------------------------------------------------------------------


def test_replicate_ap_closed_form() -> None:
    """Σ_j ΔTP_j / TP_J · TP_j / N_j per row, zero totals contributing nothing, rows without a positive dropped."""
    positives = np.array([[0.0, 1.0, 1.0, 3.0], [0.0, 0.0, 0.0, 0.0], [2.0, 2.0, 4.0, 5.0], [0.0, 0.0, 2.0, 2.0]])
    totals = np.array([[1.0, 3.0, 5.0, 9.0], [2.0, 4.0, 4.0, 6.0], [2.0, 3.0, 6.0, 10.0], [0.0, 0.0, 4.0, 7.0]])
    expected = [1 / 3 * 1 / 3 + 2 / 3 * 3 / 9,
                2 / 5 * 2 / 2 + 2 / 5 * 4 / 6 + 1 / 5 * 5 / 10,
                1.0 * 2 / 4]
    np.testing.assert_allclose(auprc._replicate_ap(positives, totals), expected, rtol=0, atol=1e-15)
