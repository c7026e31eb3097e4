"""Rules of the experimental Missing/Extra Labels test (``neuroneval.sanity.experimental``) against independent oracles.

Pinned here:

* Δs of every tested pair and draw (Eq. 10 before the mean over draws) against a brute force: cosine, Pearson and
  MAD written out here, on perturbations rebuilt from the documented uniforms ``default_rng([seed, stream, t, d])``
  (Eq. 9 / 12 with r₋ / r₊), for both tests, explicit strengths and the defaults (r₋ = 0.5, r₊ = 2), and for
  ``block_elements`` below n, at n, 2n, 3n, 7n, 9n and the default (one or several draws and concepts per block);
* the tested pairs: all pairs in their given order (also a concept column beyond n); for semantic perturbations only
  those whose concept has a subclass (missing) / superclass (extra) in the table;
* ``max − min``: 1 / 2 from the registry range, the observed spread of MAD over the full unit × concept matrix of
  the original concepts and every perturbed score, or the ``span`` passed (returned as a float);
* the engine calls (a spy on ``score_pairs`` / ``score``): the original scores and the full matrix with the seed
  ``SeedSequence([seed, 8])``, each block with ``SeedSequence([seed, 9, first concept slot, first draw])``; a block
  holds ``w = min(D, ⌊B/n⌋)`` draws (at least 1; 1 for the sampled top-and-random metrics) of ``⌊B/(n·w)⌋``
  concepts (at least 1), in increasing column order; every call prepares all tested units in ``ties="average"``
  mode and only its own ones (``units=None``) in ``"reference"`` mode;
* ``experimental_deltas``: the mean over draws; the semantic rules (largest child, smallest parent, random child,
  random subset with ``keep``), one draw for the deterministic ones;
* ``experimental_test``: one row per test in the order asked, the strength of each test (``keep`` only for missing,
  ``multiplier`` only for extra, the paper's default when ``None``, ``keep`` for the semantic random-subset rule,
  NaN for the deterministic semantic rules), the summary columns from the oracle Δs and ε, the columns in order;
* names compared by equality (equal strings that are not the interned literals work the same);
* argument checks one at a time: test, perturbation, draws = 0 refused and 1 accepted, the shape and integer dtype
  of ``pairs``, names and hierarchy each needed for semantic perturbations; keyword-only arguments and the defaults.
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

from neuroneval.metrics import options_for
from neuroneval.sanity import experimental
from neuroneval.sanity.experimental import experimental_deltas, experimental_draw_deltas, experimental_test


def fresh(text: str) -> str:
    """An equal string that is not the interned literal (so ``is`` and ``==`` differ)."""
    return "".join(list(text))


def derived(*entropy: int) -> int:
    return int(np.random.SeedSequence(list(entropy)).generate_state(1)[0])


# --- oracles --------------------------------------------------------------------------------------------------


def cosine(a: np.ndarray, c: np.ndarray) -> float:
    norm = math.sqrt(float(np.sum(a * a)) * float(np.sum(c * c)))
    return 0.0 if norm == 0 else float(np.sum(a * c) / norm)


def pearson(a: np.ndarray, c: np.ndarray) -> float:
    a, c = a - a.mean(), c - c.mean()
    norm = math.sqrt(float(np.sum(a * a)) * float(np.sum(c * c)))
    return 0.0 if norm == 0 else float(np.sum(a * c) / norm)


def mad(a: np.ndarray, c: np.ndarray) -> float:
    positive = c > 0.5
    if positive.all() or not positive.any():
        return 0.0
    return float(a[positive].mean() - a[~positive].mean())


ORACLES = {"cosine": cosine, "correlation": pearson, "mad": mad}


def perturbed(test: str, column: np.ndarray, strength: float, seed: int, concept: int, draw: int) -> np.ndarray:
    """c⁻ (Eq. 9, keep when U > 1 − r₋) or c⁺ (Eq. 12, positive when U < q) from the documented uniforms."""
    n = column.size
    u = np.random.default_rng([seed, 1 if test == "missing" else 2, concept, draw]).random(n)
    if test == "missing":
        return np.where(u > 1.0 - strength, column, 0.0)
    s = column.sum()
    q = 0.0 if s in (0, n) else min(1.0, (strength - 1.0) * (s / (n - s)))
    return np.minimum(1.0, column + (u < q))


def brute_scores(metric, activations, concepts, pairs, test, draws, strength, seed):
    """(original (m,), perturbed (m, D)) scores of each pair from the oracles."""
    score = ORACLES[metric]
    original = np.array([score(activations[:, k], concepts[:, t]) for k, t in pairs])
    changed = np.array([[score(activations[:, k], perturbed(test, concepts[:, t], strength, seed, t, d))
                         for d in range(draws)] for k, t in pairs])
    return original, changed


def brute_deltas(metric, activations, concepts, pairs, test, draws, strength, seed, span):
    original, changed = brute_scores(metric, activations, concepts, pairs, test, draws, strength, seed)
    return (changed - original[:, None]) / span


# --- data -----------------------------------------------------------------------------------------------------

N = 30
COUNTS = [9, 12, 7, 15, 10, 6, 8]


def make_setting(seed: int = 2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    concepts = np.zeros((N, len(COUNTS)))
    for column, count in enumerate(COUNTS):
        concepts[rng.permutation(N)[:count], column] = 1.0
    activations = np.column_stack([concepts[:, 4], concepts[:, 0], concepts[:, 6]]) + 0.3 * rng.random((N, 3))
    return activations, concepts


ACTIVATIONS, CONCEPTS = make_setting()
PAIRS = np.array([[0, 4], [2, 0], [1, 2], [0, 0], [2, 6], [1, 5]])  # concepts 0, 2, 4, 5, 6; 0 twice; unsorted


# --- Δs against the brute force -------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:cosine. all-zero vector")  # c⁻ of r₋ = 0.3 may lose every label (cosine 0)
@pytest.mark.parametrize("block_elements", [5, N, 2 * N, 3 * N, 7 * N, 9 * N, 2**24])
@pytest.mark.parametrize(("metric", "test", "strength"),
                         [("cosine", "missing", 0.3), ("cosine", "extra", 3.0), ("correlation", "extra", None)])
def test_draw_deltas_equal_the_formula_for_any_blocks(metric, test, strength, block_elements) -> None:
    deltas, tested, span, draws = experimental_draw_deltas(
        metric, ACTIVATIONS, CONCEPTS, PAIRS, test=fresh(test), draws=3, strength=strength, seed=5,
        block_elements=block_elements)
    assert tested.tolist() == PAIRS.tolist() and tested.dtype == np.int64
    assert span == 2.0 and isinstance(span, float) and draws == 3 and deltas.shape == (6, 3)
    default = 0.5 if test == "missing" else 2.0
    expected = brute_deltas(metric, ACTIVATIONS, CONCEPTS, PAIRS, test, 3, default if strength is None else strength,
                            5, 2.0)
    np.testing.assert_allclose(deltas, expected, rtol=0, atol=1e-12)


def test_defaults_one_draw_missing_labels_seed_zero() -> None:
    deltas, tested, span, draws = experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS)
    assert deltas.shape == (6, 1) and draws == 1 and span == 2.0 and tested.tolist() == PAIRS.tolist()
    np.testing.assert_allclose(deltas, brute_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, "missing", 1, 0.5, 0, 2.0),
                               rtol=0, atol=1e-12)


def test_deltas_are_the_mean_over_draws() -> None:
    deltas, tested, span, draws = experimental_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, test="extra", draws=4,
                                                      seed=1, block_elements=2 * N)
    expected = brute_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, "extra", 4, 2.0, 1, 2.0).mean(axis=1)
    assert deltas.shape == (6,) and draws == 4 and span == 2.0 and tested.tolist() == PAIRS.tolist()
    np.testing.assert_allclose(deltas, expected, rtol=0, atol=1e-12)


def test_a_concept_column_beyond_the_number_of_inputs_is_tested() -> None:
    rng = np.random.default_rng(3)
    concepts = (rng.random((8, 10)) < 0.5).astype(float)
    concepts[:3, 9], concepts[3:, 9] = 1.0, 0.0
    activations = rng.random((8, 2))
    pairs = [[1, 9], [0, 2]]
    deltas, tested, _, _ = experimental_draw_deltas("cosine", activations, concepts, pairs, test="extra", draws=2)
    assert tested.tolist() == pairs
    np.testing.assert_allclose(deltas, brute_deltas("cosine", activations, concepts, np.array(pairs), "extra", 2, 2.0,
                                                    0, 2.0), rtol=0, atol=1e-12)


# --- max − min ------------------------------------------------------------------------------------------------


def test_mad_is_normalised_by_the_observed_spread_of_every_score() -> None:
    for test, strength in (("missing", 0.4), ("extra", 2.5)):
        deltas, _, span, _ = experimental_draw_deltas("mad", ACTIVATIONS, CONCEPTS, PAIRS, test=test, draws=3,
                                                      strength=strength, seed=2, block_elements=2 * N)
        original, changed = brute_scores("mad", ACTIVATIONS, CONCEPTS, PAIRS, test, 3, strength, 2)
        full = np.array([[mad(ACTIVATIONS[:, k], CONCEPTS[:, t]) for t in range(CONCEPTS.shape[1])]
                         for k in range(ACTIVATIONS.shape[1])])
        everything = np.concatenate([full.ravel(), changed.ravel()])
        expected_span = everything.max() - everything.min()
        assert span == pytest.approx(expected_span, rel=1e-12)
        np.testing.assert_allclose(deltas, (changed - original[:, None]) / expected_span, rtol=1e-9, atol=1e-12)


def test_a_given_span_replaces_the_range_and_is_returned_as_a_float() -> None:
    for metric in ("cosine", "mad"):
        deltas, _, span, _ = experimental_draw_deltas(metric, ACTIVATIONS, CONCEPTS, PAIRS, test="extra", draws=2,
                                                      span=4)
        assert span == 4.0 and isinstance(span, float)
        original, changed = brute_scores(metric, ACTIVATIONS, CONCEPTS, PAIRS, "extra", 2, 2.0, 0)
        np.testing.assert_allclose(deltas, (changed - original[:, None]) / 4.0, rtol=1e-9, atol=1e-12)
    assert experimental_draw_deltas("recall", ACTIVATIONS, CONCEPTS, PAIRS, options=options_for("recall", alpha=0.2))[
        2] == 1.0


# --- engine calls ---------------------------------------------------------------------------------------------


class Spy:
    """Records the engine calls of the module (``score_pairs`` and ``score``) and forwards them."""

    def __init__(self, monkeypatch) -> None:
        self.calls: list[tuple[str, np.ndarray, dict]] = []
        real_pairs, real_score = experimental.score_pairs, experimental.score

        def score_pairs(metric, activations, concepts, pairs, **kwargs):
            self.calls.append(("pairs", np.array(concepts), dict(kwargs, pairs=np.array(pairs))))
            return real_pairs(metric, activations, concepts, pairs, **kwargs)

        def score(metric, activations, concepts, **kwargs):
            self.calls.append(("score", np.array(concepts), dict(kwargs)))
            return real_score(metric, activations, concepts, **kwargs)

        monkeypatch.setattr(experimental, "score_pairs", score_pairs)
        monkeypatch.setattr(experimental, "score", score)


USED = [0, 2, 4, 5, 6]  # the concepts of PAIRS in increasing order


def expected_blocks(draws: int, block_elements: int, sampled: bool = False) -> list[tuple[int, int, list, range]]:
    """(first concept slot, first draw, concepts, draw range) of each block, from the documented sizes."""
    width = 1 if sampled else max(1, min(draws, block_elements // N))
    per_block = max(1, block_elements // (N * width))
    return [(start, first, USED[start:start + per_block], range(first, min(draws, first + width)))
            for start in range(0, len(USED), per_block) for first in range(0, draws, width)]


@pytest.mark.parametrize(("draws", "block_elements"), [(3, 7 * N), (3, 2 * N), (3, 5), (2, 9 * N), (4, 2**24)])
def test_blocks_seeds_and_units_of_the_engine_calls(monkeypatch, draws, block_elements) -> None:
    spy = Spy(monkeypatch)
    experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, test="missing", draws=draws, seed=11,
                             block_elements=block_elements)
    kind, concepts, original = spy.calls[0]
    assert kind == "pairs" and original["pairs"].tolist() == PAIRS.tolist()
    np.testing.assert_array_equal(concepts, CONCEPTS)
    assert original["options"].seed == derived(11, 8)
    blocks = expected_blocks(draws, block_elements)
    assert len(spy.calls) == 1 + len(blocks)
    for (kind, labels, call), (start, first, columns, draw_range) in zip(spy.calls[1:], blocks, strict=True):
        assert kind == "pairs" and call["options"].seed == derived(11, 9, start, first)
        assert call["units"].tolist() == [0, 1, 2]
        assert labels.shape == (N, len(columns) * len(draw_range))
        expected = [perturbed("missing", CONCEPTS[:, t], 0.5, 11, t, d) for t in columns for d in draw_range]
        np.testing.assert_array_equal(labels, np.column_stack(expected))
        if block_elements >= N:
            assert labels.size <= block_elements


def test_sampled_metrics_take_one_draw_per_call(monkeypatch) -> None:
    spy = Spy(monkeypatch)
    options = options_for("correlation_tr", tr_n_top=5, tr_n_random=5)
    experimental_draw_deltas("correlation_tr", ACTIVATIONS, CONCEPTS, PAIRS, test="extra", draws=3, seed=4,
                             block_elements=2 * N, options=options)
    blocks = expected_blocks(3, 2 * N, sampled=True)
    assert len(spy.calls) == 1 + len(blocks) and spy.calls[0][2]["options"].seed == derived(4, 8)
    for (_, labels, call), (start, first, columns, _) in zip(spy.calls[1:], blocks, strict=True):
        assert labels.shape == (N, len(columns)) and call["options"].seed == derived(4, 9, start, first)
        assert call["options"].tr_n_top == 5


@pytest.mark.parametrize("ties", ["average", "reference"])
def test_reference_mode_prepares_only_each_calls_units(monkeypatch, ties) -> None:
    spy = Spy(monkeypatch)
    experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS[[0, 2]], test="missing", draws=2, seed=1,
                             block_elements=N, options=options_for("cosine", ties=fresh(ties)))
    units = [call["units"] for _, _, call in spy.calls]
    assert len(units) == 1 + 2 * 2
    if ties == "average":
        assert all(u.tolist() == [0, 1] for u in units)
    else:
        assert all(u is None for u in units)
        assert all(call["options"].ties == "reference" for _, _, call in spy.calls)


def test_the_full_matrix_of_mad_is_scored_with_the_original_seed(monkeypatch) -> None:
    spy = Spy(monkeypatch)
    experimental_draw_deltas("mad", ACTIVATIONS, CONCEPTS, PAIRS, test="extra", draws=2, seed=9)
    kinds = [kind for kind, _, _ in spy.calls]
    assert kinds.count("score") == 1 and kinds[-1] == "score"
    _, concepts, call = spy.calls[-1]
    np.testing.assert_array_equal(concepts, CONCEPTS)
    assert call["options"].seed == derived(9, 8)
    spy.calls.clear()
    experimental_draw_deltas("mad", ACTIVATIONS, CONCEPTS, PAIRS, test="extra", draws=2, seed=9, span=1.0)
    assert [kind for kind, _, _ in spy.calls].count("score") == 0


# --- semantic perturbations -----------------------------------------------------------------------------------

SEM_NAMES = ["dog", "cat", "bird", "pet", "animal", "rock"]
SEM_HIERARCHY = {"animal": ["cat", "dog", "bird"], "pet": ["dog", "cat"]}
SEM_PAIRS = np.array([[0, 3], [1, 0], [2, 2], [0, 5], [1, 4], [2, 1]])


def semantic_setting() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    kind = rng.permutation(np.repeat([0, 1, 2, 3], [7, 4, 3, 16]))  # dog 7, cat 4, bird 3, none 16
    dog, cat, bird = (kind == 0) * 1.0, (kind == 1) * 1.0, (kind == 2) * 1.0
    rock = (rng.random(N) < 0.3) * 1.0
    concepts = np.column_stack([dog, cat, bird, np.maximum(dog, cat), np.maximum.reduce([dog, cat, bird]), rock])
    activations = np.column_stack([concepts[:, 3], concepts[:, 0], concepts[:, 2]]) + 0.2 * rng.random((N, 3))
    return activations, concepts


def semantic_oracle(activations, concepts, pairs, targets: list[list[list[int]]], span: float = 2.0) -> np.ndarray:
    """Δ of each pair and draw for the union of the given target columns (per pair, per draw)."""
    return np.array([[(cosine(activations[:, k], concepts[:, members].max(axis=1))
                       - cosine(activations[:, k], concepts[:, t])) / span for members in per_draw]
                     for (k, t), per_draw in zip(pairs, targets, strict=True)])


@pytest.mark.parametrize("block_elements", [N, 2**24])
def test_semantic_largest_child_and_smallest_parent(block_elements) -> None:
    activations, concepts = semantic_setting()
    common = {"perturbation": fresh("semantic"), "names": SEM_NAMES, "hierarchy": SEM_HIERARCHY,
              "block_elements": block_elements}
    deltas, tested, span, draws = experimental_draw_deltas("cosine", activations, concepts, SEM_PAIRS,
                                                           test=fresh("missing"), draws=4, **common)
    assert tested.tolist() == [[0, 3], [1, 4]] and draws == 1 and deltas.shape == (2, 1)
    np.testing.assert_allclose(deltas, semantic_oracle(activations, concepts, tested, [[[0]], [[0]]]), atol=1e-12)
    deltas, tested, span, draws = experimental_draw_deltas("cosine", activations, concepts, SEM_PAIRS,
                                                           test=fresh("extra"), draws=4, **common)
    assert tested.tolist() == [[1, 0], [2, 2], [2, 1]] and draws == 1 and span == 2.0
    np.testing.assert_allclose(deltas, semantic_oracle(activations, concepts, tested, [[[3]], [[4]], [[3]]]),
                               atol=1e-12)


def child_draws(children: list[int], parent: int, draws: int, seed: int) -> list[list[int]]:
    out = []
    for d in range(draws):
        rng = np.random.default_rng([seed, 3, parent, d])
        out.append([children[int(rng.integers(len(children)))]])
    return out


def subset_draws(children: list[int], parent: int, draws: int, seed: int, keep: float) -> list[list[int]]:
    out = []
    for d in range(draws):
        rng = np.random.default_rng([seed, 3, parent, d])
        while True:
            mask = rng.random(len(children)) < keep
            if 0 < mask.sum() < len(children):
                break
        out.append([c for c, kept in zip(children, mask, strict=True) if kept])
    return out


def test_semantic_random_rules_per_draw() -> None:
    activations, concepts = semantic_setting()
    common = {"perturbation": "semantic", "names": SEM_NAMES, "hierarchy": SEM_HIERARCHY, "test": "missing",
              "seed": 3, "block_elements": N}
    deltas, tested, _, draws = experimental_draw_deltas("cosine", activations, concepts, SEM_PAIRS, draws=5,
                                                        subclass_rule=fresh("random_child"), **common)
    assert draws == 5 and tested.tolist() == [[0, 3], [1, 4]]
    targets = [child_draws([0, 1], 3, 5, 3), child_draws([1, 0, 2], 4, 5, 3)]
    np.testing.assert_allclose(deltas, semantic_oracle(activations, concepts, tested, targets), atol=1e-12)
    for strength, keep in ((None, 0.5), (0.3, 0.3)):
        deltas, tested, _, draws = experimental_draw_deltas("cosine", activations, concepts, SEM_PAIRS, draws=5,
                                                            subclass_rule="random_subset", strength=strength,
                                                            **common)
        targets = [subset_draws([0, 1], 3, 5, 3, keep), subset_draws([1, 0, 2], 4, 5, 3, keep)]
        np.testing.assert_allclose(deltas, semantic_oracle(activations, concepts, tested, targets), atol=1e-12)


# --- experimental_test ----------------------------------------------------------------------------------------

COLUMNS = ["metric", "test", "perturbation", "strength", "draws", "epsilon", "ties", "seed", "span", "mean_delta",
           "delta_se", "decrease_acc", "increase_frac", "n_pairs"]


def summary(deltas: np.ndarray, epsilon: float) -> dict[str, float]:
    return {"mean_delta": deltas.mean(), "delta_se": deltas.std(ddof=1) / math.sqrt(deltas.size),
            "decrease_acc": np.mean(deltas < -epsilon), "increase_frac": np.mean(deltas > epsilon)}


def check_row(row, expected_deltas: np.ndarray, epsilon: float) -> None:
    for key, value in summary(expected_deltas, epsilon).items():
        assert row[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize(("keep", "multiplier"), [(0.3, 3.0), (None, None), (0.7, None), (None, 1.5)])
def test_the_table_of_the_random_tests(keep, multiplier) -> None:
    epsilon = 0.02
    table = experimental_test("cosine", ACTIVATIONS, CONCEPTS, PAIRS, tests=[fresh("extra"), fresh("missing")],
                              draws=2, epsilon=epsilon, keep=keep, multiplier=multiplier,
                              perturbation=fresh("random"), seed=6)
    assert list(table.columns) == COLUMNS and table["test"].tolist() == ["extra", "missing"]
    strengths = {"extra": 2.0 if multiplier is None else multiplier, "missing": 0.5 if keep is None else keep}
    for _, row in table.iterrows():
        test = row["test"]
        assert row["strength"] == strengths[test]
        assert (row["metric"], row["perturbation"], row["draws"], row["epsilon"], row["ties"], row["seed"],
                row["span"], row["n_pairs"]) == ("cosine", "random", 2, epsilon, "average", 6, 2.0, 6)
        expected = brute_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, test, 2, strengths[test], 6, 2.0).mean(axis=1)
        check_row(row, expected, epsilon)


def test_epsilon_decides_the_decrease_and_increase_fractions() -> None:
    expected = brute_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, "missing", 1, 0.5, 0, 2.0)[:, 0]
    magnitudes = np.sort(np.abs(expected))
    for epsilon in (0.0, float(magnitudes[2]), 1e-3):
        row = experimental_test("cosine", ACTIVATIONS, CONCEPTS, PAIRS, tests=["missing"], epsilon=epsilon).iloc[0]
        assert row["epsilon"] == epsilon
        check_row(row, expected, epsilon)


def test_the_table_of_the_semantic_tests() -> None:
    activations, concepts = semantic_setting()
    common = {"perturbation": "semantic", "names": SEM_NAMES, "hierarchy": SEM_HIERARCHY, "seed": 3, "draws": 3}
    table = experimental_test("cosine", activations, concepts, SEM_PAIRS, keep=0.3, multiplier=3.0, **common)
    assert table["test"].tolist() == ["missing", "extra"] and np.isnan(table["strength"]).all()
    assert table["draws"].tolist() == [1, 1] and table["n_pairs"].tolist() == [2, 3]
    for rule in ("random_subset", fresh("random_subset")):
        table = experimental_test("cosine", activations, concepts, SEM_PAIRS, keep=0.3, multiplier=3.0,
                                  subclass_rule=rule, tests=[fresh("missing"), fresh("extra")],
                                  **common).set_index("test")
        assert table.loc["missing", "strength"] == 0.3 and np.isnan(table.loc["extra", "strength"])
        assert table.loc["missing", "draws"] == 3 and table.loc["extra", "draws"] == 1
        targets = [subset_draws([0, 1], 3, 3, 3, 0.3), subset_draws([1, 0, 2], 4, 3, 3, 0.3)]
        expected = semantic_oracle(activations, concepts, np.array([[0, 3], [1, 4]]), targets).mean(axis=1)
        check_row(table.loc["missing"], expected, 1e-3)
    table = experimental_test("cosine", activations, concepts, SEM_PAIRS, subclass_rule="random_subset",
                              **common).set_index("test")
    assert table.loc["missing", "strength"] == 0.5
    table = experimental_test("cosine", activations, concepts, SEM_PAIRS, tests=["missing"],
                              subclass_rule="random_child", keep=1.0, **common)
    assert np.isnan(table["strength"].item()) and table["draws"].item() == 3


# --- argument checks and signatures ---------------------------------------------------------------------------


def test_test_and_perturbation_names_are_checked_alone() -> None:
    for options in ({"test": "both"}, {"perturbation": "wordnet"}, {"test": "zzz"}, {"perturbation": "a"}):
        with pytest.raises(ValueError, match="test must be one of"):
            experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, **options)


def test_experimental_test_checks_every_test_name_and_the_perturbation_up_front() -> None:
    """One message for an unknown name whatever the other options (a ``multiplier`` or not), naming the list."""
    for tests, perturbation in ((["zzz"], "random"), (["missing", "both"], "random"), (["extra"], "wordnet"),
                                ([""], "semantic")):
        for multiplier in (None, 3.0):
            with pytest.raises(ValueError, match=re.escape(f"got {tests!r}, {perturbation!r}")):
                experimental_test("cosine", ACTIVATIONS, CONCEPTS, PAIRS, tests=tests, perturbation=perturbation,
                                  multiplier=multiplier)


def test_draws_bounds() -> None:
    for draws in (0, -1):
        with pytest.raises(ValueError, match="draws must be ≥ 1"):
            experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, draws=draws)
    assert experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, draws=1)[0].shape == (6, 1)


@pytest.mark.parametrize("pairs", [np.array([0, 4]), np.array([[0, 4, 1]]), np.array([[0], [1]]),
                                   np.zeros((2, 2, 2), dtype=int), np.array([[0.0, 4.0]]), np.zeros((2, 3), int)])
def test_pairs_must_be_an_integer_m_by_2_array(pairs) -> None:
    # the module's own message (naming the shape), not the engine's later one (naming dtype and shape)
    with pytest.raises(ValueError, match=r"pairs must be an integer \(m, 2\) array of \(unit, concept\) positions, "
                                         r"got \(\d"):
        experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, pairs)


def test_semantic_perturbations_need_names_and_hierarchy() -> None:
    for options in ({"names": SEM_NAMES}, {"hierarchy": SEM_HIERARCHY}, {}):
        with pytest.raises(ValueError, match="needs concept names and a hierarchy"):
            experimental_draw_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, perturbation="semantic", **options)


def test_signatures_and_defaults() -> None:
    assert experimental.PERTURBATIONS == ("random", "semantic")
    for function in (experimental_deltas, experimental_draw_deltas):
        parameters = inspect.signature(function).parameters
        assert [name for name, p in parameters.items() if p.kind is p.POSITIONAL_OR_KEYWORD] == [
            "metric", "activations", "concepts", "pairs"]
        assert all(p.kind is p.KEYWORD_ONLY for name, p in parameters.items()
                   if name not in ("metric", "activations", "concepts", "pairs"))
        assert {name: p.default for name, p in parameters.items() if p.default is not p.empty} == {
            "test": "missing", "draws": 1, "strength": None, "perturbation": "random", "names": None,
            "hierarchy": None, "subclass_rule": "largest", "seed": 0, "options": None, "span": None,
            "block_elements": 2**24, "cache": None}
    parameters = inspect.signature(experimental_test).parameters
    assert all(p.kind is p.KEYWORD_ONLY for name, p in parameters.items()
               if name not in ("metric", "activations", "concepts", "pairs"))
    assert {name: p.default for name, p in parameters.items() if p.default is not p.empty} == {
        "tests": ("missing", "extra"), "draws": 1, "epsilon": 1e-3, "keep": None, "multiplier": None,
        "perturbation": "random", "names": None, "hierarchy": None, "subclass_rule": "largest", "seed": 0,
        "options": None, "span": None, "cache": None}
    with pytest.raises(TypeError):
        experimental_deltas("cosine", ACTIVATIONS, CONCEPTS, PAIRS, "extra")
    with pytest.raises(TypeError):
        experimental_test("cosine", ACTIVATIONS, CONCEPTS, PAIRS, ["extra"])
    table = experimental_test("cosine", ACTIVATIONS, CONCEPTS, PAIRS)
    assert table["test"].tolist() == ["missing", "extra"] and table["draws"].tolist() == [1, 1]
    assert table["seed"].tolist() == [0, 0] and table["epsilon"].tolist() == [1e-3, 1e-3]
