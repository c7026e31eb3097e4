"""Rules of the label perturbations (``neuroneval.sanity.perturb``) against independent oracles.

Pinned here:

* keyword-only arguments after the documented positional ones; ``draw_uniforms`` is ``default_rng([seed, stream, t,
  d]).random(n)``;
* the constants: the two tests, the streams 1 / 2 / 3 of the missing, extra and semantic draws, the paper's
  strengths r₋ = 0.5 and r₊ = 2, the three subclass rules;
* ``missing_labels`` and ``extra_labels``: every output value against a per-input loop over the documented uniforms
  ``default_rng([seed, stream, t, d])`` (Eq. 9: keep ``c_i`` when ``U_i > 1 − r₋``; Eq. 12: ``min(1, c_i + 1[U_i <
  q])``), for binary, continuous, empty, full and one-negative concepts, explicit draw indices and concept ids, the
  defaults (one draw, seed 0, float32, the paper's strengths) and the ``dtype``;
* ``extra_cutoffs``: ``q = (r₊ − 1)·s/(n − s)`` in closed form, clipped to [0, 1] from both sides, 0 for s = 0 and
  s = n, defined for s = n − 1;
* argument bounds one at a time from both sides: r₋ ∈ (0, 1], r₊ ≥ 1 (NaN refused), draws ≥ 1 or a non-empty 1-D
  list of indices ≥ 0, one concept id ≥ 0 per column, a vector or an (n, C) numeric / boolean table;
* ``perturb_labels`` and ``default_strength``: dispatch by the test's name (equal strings, not the same object),
  unknown names refused whichever side of "missing" they sort;
* the semantic rules of App. E.3 on a hand-made hierarchy: the smallest parent in the table (ties: earlier column),
  the largest child (ties: earlier column), parents or children outside the table ignored, unique names (also
  beyond 256 of them); ``random_child`` / ``random_subset`` against a loop over ``default_rng([seed, 3, t, d])``,
  the subset always non-empty and (two or more children) proper, ``keep`` ∈ (0, 1) and the rule name checked.
"""

from __future__ import annotations

import inspect
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from neuroneval.sanity import perturb
from neuroneval.sanity.perturb import (
    default_strength,
    draw_uniforms,
    extra_cutoffs,
    extra_labels,
    missing_labels,
    perturb_labels,
    semantic_extra_labels,
    semantic_missing_labels,
    semantic_subclasses,
    semantic_superclass,
)


def fresh(text: str) -> str:
    """An equal string that is not the interned literal (so ``is`` and ``==`` differ)."""
    return "".join(list(text))


def uniforms(n: int, seed: int, stream: int, concept: int, draw: int) -> np.ndarray:
    """The documented uniforms of one concept and draw."""
    return np.random.default_rng([seed, stream, concept, draw]).random(n)


def brute_missing(column, keep: float, seed: int, concept: int, draw: int) -> np.ndarray:
    """Eq. 9 with r₋: each input keeps its value when its uniform exceeds 1 − r₋, else becomes 0."""
    u = uniforms(len(column), seed, 1, concept, draw)
    return np.array([float(value) if u[i] > 1.0 - keep else 0.0 for i, value in enumerate(column)])


def brute_q(column, multiplier: float) -> float:
    """q = (r₊ − 1)·s/(n − s) clipped to [0, 1]; 0 when s = 0 or s = n."""
    n, s = len(column), float(np.sum(column, dtype=np.float64))
    if s == 0 or s == n:
        return 0.0
    return min(1.0, max(0.0, (multiplier - 1.0) * (s / (n - s))))


def brute_extra(column, multiplier: float, seed: int, concept: int, draw: int) -> np.ndarray:
    """Eq. 12 with r₊: an input whose uniform is below q turns positive (values capped at 1)."""
    q = brute_q(column, multiplier)
    u = uniforms(len(column), seed, 2, concept, draw)
    return np.array([min(1.0, float(value) + (1.0 if u[i] < q else 0.0)) for i, value in enumerate(column)])


N = 40
# binary (10 positives), continuous, empty, full, one negative, binary (3 positives)
TABLE = np.column_stack([
    (np.arange(N) % 4 == 0).astype(float),
    np.where(np.arange(N) % 3 == 0, 0.6, 0.0),
    np.zeros(N),
    np.ones(N),
    (np.arange(N) > 0).astype(float),
    (np.arange(N) < 3).astype(float),
])


# --- constants ------------------------------------------------------------------------------------------------


def test_constants() -> None:
    assert perturb.TESTS == ("missing", "extra")
    assert (perturb.STREAM_MISSING, perturb.STREAM_EXTRA, perturb.STREAM_SEMANTIC) == (1, 2, 3)
    assert perturb.DEFAULT_KEEP == 0.5 and perturb.DEFAULT_MULTIPLIER == 2.0
    assert perturb.SUBCLASS_RULES == ("largest", "random_child", "random_subset")


@pytest.mark.parametrize(("function", "positional"), [
    (draw_uniforms, ["n"]), (missing_labels, ["concepts", "draws"]), (extra_labels, ["concepts", "draws"]),
    (perturb_labels, ["test", "concepts", "draws"]), (semantic_missing_labels, ["concepts", "names", "hierarchy"]),
])
def test_keyword_only_arguments(function, positional: list[str]) -> None:
    parameters = inspect.signature(function).parameters.values()
    assert [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters if p.name not in positional)


def test_draw_uniforms_are_the_documented_generator() -> None:
    np.testing.assert_array_equal(draw_uniforms(7, seed=3, stream=2, concept_id=np.int64(5), draw=4),
                                  np.random.default_rng([3, 2, 5, 4]).random(7))
    assert draw_uniforms(n=4, seed=0, stream=1, concept_id=0, draw=0).dtype == np.float64


# --- random perturbations -------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [0.25, 0.5, 1.0])
def test_missing_labels_equal_the_per_input_loop(keep: float) -> None:
    out = missing_labels(TABLE, [2, 0, 5], keep=keep, seed=7)
    assert out.shape == (N, TABLE.shape[1], 3) and out.dtype == np.float32
    for t in range(TABLE.shape[1]):
        for slot, draw in enumerate([2, 0, 5]):
            expected = brute_missing(TABLE[:, t], keep, 7, t, draw).astype(np.float32)
            np.testing.assert_array_equal(out[:, t, slot], expected, err_msg=f"concept {t} draw {draw}")
    if keep == 1.0:  # r₋ = 1 keeps everything
        np.testing.assert_array_equal(out, np.repeat(TABLE[:, :, None], 3, axis=2).astype(np.float32))


@pytest.mark.parametrize("multiplier", [1.0, 1.5, 2.0, 3.0, 40.0])
def test_extra_labels_equal_the_per_input_loop(multiplier: float) -> None:
    out = extra_labels(TABLE, 3, multiplier=multiplier, seed=4, concept_ids=[9, 3, 0, 11, 2, 5])
    assert out.shape == (N, TABLE.shape[1], 3)
    for t, concept in enumerate([9, 3, 0, 11, 2, 5]):
        for draw in range(3):
            expected = brute_extra(TABLE[:, t], multiplier, 4, concept, draw).astype(np.float32)
            np.testing.assert_array_equal(out[:, t, draw], expected, err_msg=f"concept {t} draw {draw}")
    np.testing.assert_array_equal(out[:, 2:4, :], TABLE[:, 2:4, None].repeat(3, axis=2))  # s = 0 and s = n unchanged


def test_missing_labels_use_the_concept_ids_and_seed() -> None:
    out = missing_labels(TABLE[:, [5, 0]], [1], keep=0.6, seed=3, concept_ids=[8, 0])
    np.testing.assert_array_equal(out[:, 0, 0], brute_missing(TABLE[:, 5], 0.6, 3, 8, 1).astype(np.float32))
    np.testing.assert_array_equal(out[:, 1, 0], brute_missing(TABLE[:, 0], 0.6, 3, 0, 1).astype(np.float32))


def test_more_concepts_than_inputs() -> None:
    table = np.array([[1.0, 0.0, 1.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0, 0.0]])
    out = missing_labels(table, 2, keep=0.6, seed=8)
    extra = extra_labels(table, 2, seed=8)
    for t in range(5):
        for d in range(2):
            np.testing.assert_array_equal(out[:, t, d], brute_missing(table[:, t], 0.6, 8, t, d))
            np.testing.assert_array_equal(extra[:, t, d], brute_extra(table[:, t], 2.0, 8, t, d))


def test_defaults_are_one_draw_seed_zero_float32_and_the_paper_strengths() -> None:
    column = TABLE[:, 0]
    out = missing_labels(column)
    assert out.shape == (N, 1, 1) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 0, 0], brute_missing(column, 0.5, 0, 0, 0))
    out = extra_labels(column)
    assert out.shape == (N, 1, 1) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 0, 0], brute_extra(column, 2.0, 0, 0, 0))
    assert missing_labels(column, 2, dtype=np.float64).dtype == np.float64
    assert extra_labels(column, 2, dtype=np.float64).dtype == np.float64
    assert default_strength("missing") == 0.5 and default_strength("extra") == 2.0
    assert default_strength(fresh("missing")) == 0.5 and default_strength(fresh("extra")) == 2.0


def test_boolean_and_vector_concepts_are_accepted() -> None:
    column = TABLE[:, 0]
    np.testing.assert_array_equal(missing_labels(column.astype(bool), 2, seed=1), missing_labels(column, 2, seed=1))
    np.testing.assert_array_equal(extra_labels(column.astype(bool), 2, seed=1)[:, 0, 1],
                                  brute_extra(column, 2.0, 1, 0, 1))
    np.testing.assert_array_equal(missing_labels(column[:, None], 2, seed=1), missing_labels(column, 2, seed=1))


def test_perturb_labels_dispatches_on_the_test_name() -> None:
    table = TABLE[:, [0, 5]]
    cases = (("missing", 0.5, brute_missing, 0.3, 0), ("extra", 2.0, brute_extra, 1.4, 1))
    for test, default, brute, strength, column in cases:
        for name in (test, fresh(test)):
            out = perturb_labels(name, table, [1, 4], seed=2, concept_ids=[3, 6], dtype=np.float64)
            assert out.dtype == np.float64
            np.testing.assert_array_equal(out[:, 1, 0], brute(table[:, 1], default, 2, 6, 1))
            np.testing.assert_array_equal(out[:, 0, 1], brute(table[:, 0], default, 2, 3, 4))
            out = perturb_labels(name, table, 1, strength=strength, seed=2)
            np.testing.assert_array_equal(out[:, column, 0], brute(table[:, column], strength, 2, column, 0))
    out = perturb_labels("missing", table)
    assert out.shape == (N, 2, 1) and out.dtype == np.float32
    np.testing.assert_array_equal(out[:, 0, 0], brute_missing(table[:, 0], 0.5, 0, 0, 0))


@pytest.mark.parametrize("name", ["both", "", "Missing", "semantic", "zzz", "extras"])
def test_unknown_test_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="test must be 'missing' or 'extra'"):
        perturb_labels(name, TABLE)
    with pytest.raises(ValueError, match="test must be 'missing' or 'extra'"):
        default_strength(name)


# --- extra_cutoffs --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("positives", "n", "multiplier", "expected"), [
    (3, 12, 2.0, 3 / 9),
    (3, 12, 1.5, 0.5 * 3 / 9),
    (3, 12, 1.0, 0.0),
    (3, 12, 0.5, 0.0),      # r₊ < 1 would give q < 0: clipped to 0
    (6, 12, 3.0, 1.0),      # (r₊ − 1)s > n − s: clipped to 1
    (4, 12, 3.0, 1.0),      # exactly n − s: q = 1
    (11, 12, 1.05, 0.05 * 11),   # one negative: n − s = 1
    (0, 12, 2.0, 0.0),
    (12, 12, 2.0, 0.0),
])
def test_extra_cutoffs_closed_form(positives: int, n: int, multiplier: float, expected: float) -> None:
    column = (np.arange(n) < positives).astype(float)
    assert extra_cutoffs(column, multiplier)[0] == pytest.approx(expected, rel=1e-12, abs=0)


def test_extra_cutoffs_per_column_and_default() -> None:
    got = extra_cutoffs(TABLE)
    expected = [brute_q(TABLE[:, t], 2.0) for t in range(TABLE.shape[1])]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    assert got.tolist()[2:5] == [0.0, 0.0, 1.0]
    assert extra_cutoffs(np.r_[np.full(4, 0.5), np.zeros(8)])[0] == pytest.approx(2 / 10)


# --- argument bounds ------------------------------------------------------------------------------------------


def test_keep_bounds() -> None:
    column = TABLE[:, 0]
    for keep in (0.0, -0.5, 1.0 + 1e-9, 1.5):
        with pytest.raises(ValueError, match="keep"):
            missing_labels(column, keep=keep)
    for keep in (1e-9, 1.0):
        assert missing_labels(column, keep=keep).shape == (N, 1, 1)


def test_multiplier_bounds() -> None:
    column = TABLE[:, 0]
    for multiplier in (1.0 - 1e-9, 0.5, 0.0, float("nan")):
        with pytest.raises(ValueError, match="multiplier"):
            extra_labels(column, multiplier=multiplier)
    for multiplier in (1.0, 1.0 + 1e-9, 1.5):
        assert extra_labels(column, multiplier=multiplier).shape == (N, 1, 1)


def test_draw_bounds() -> None:
    column = TABLE[:, 0]
    for draws in (0, -1, np.int64(0), [], [-1], [0, -2], [[0, 1]]):
        with pytest.raises(ValueError, match="draws must be"):
            missing_labels(column, draws)
    assert missing_labels(column, 1).shape == (N, 1, 1)
    assert extra_labels(column, np.int64(2)).shape == (N, 1, 2)
    out = extra_labels(column, [0], seed=5)
    np.testing.assert_array_equal(out[:, 0, 0], brute_extra(column, 2.0, 5, 0, 0))
    out = missing_labels(column, range(2, 4), seed=5)
    np.testing.assert_array_equal(out[:, 0, 1], brute_missing(column, 0.5, 5, 0, 3))


def test_concept_id_bounds() -> None:
    table = TABLE[:, :2]
    for ids in ([0], [0, 1, 2], [0, -1], [[0, 1]]):
        with pytest.raises(ValueError, match="concept_ids"):
            missing_labels(table, concept_ids=ids)
    out = missing_labels(table, concept_ids=[0, 0], seed=1)  # id 0 is valid, twice too
    np.testing.assert_array_equal(out[:, 1, 0], brute_missing(table[:, 1], 0.5, 1, 0, 0).astype(np.float32))


def test_concept_shape_and_type_checks() -> None:
    for bad in (np.float64(1.0), np.zeros((4, 2, 2))):
        with pytest.raises(ValueError, match="vector or an"):
            extra_labels(bad)
        with pytest.raises(ValueError, match="vector or an"):
            extra_cutoffs(bad)
    for bad in (np.array(["1", "0"]), np.array([1, 0], dtype=object)):
        with pytest.raises(ValueError, match="must be numeric"):
            missing_labels(bad)


# --- semantic sub- and superclasses ---------------------------------------------------------------------------

NAMES = ["dog", "cat", "bird", "pet", "animal", "fish", "thing", "flyer"]
POSITIVES = [3, 4, 2, 7, 9, 4, 12, 9]
#: flyer is listed before animal (bird's two parents tie at 9 positives: the earlier column, animal, wins);
#: animal before pet (dog's parents: pet is smaller though listed later); ghost and rock are not columns,
#: unicorn is not a column, fish has no children.
HIERARCHY = {"flyer": ["bird"], "animal": ["dog", "cat", "bird", "fish", "unicorn"], "pet": ["dog", "cat"],
             "ghost": ["bird", "thing"], "thing": ["animal"], "fish": [], "rock": ["unicorn", "fish"]}


def semantic_table() -> np.ndarray:
    n = 12
    rng = np.random.default_rng(0)
    table = np.zeros((n, len(NAMES)))
    for column, count in enumerate(POSITIVES):
        table[rng.permutation(n)[:count], column] = 1.0
    return table


def test_semantic_superclass_is_the_smallest_parent_in_the_table() -> None:
    got = semantic_superclass(NAMES, HIERARCHY, POSITIVES)
    # dog → pet (7 < 9), cat → pet, bird → animal (tie with flyer at 9: earlier column), fish → animal,
    # animal → thing; pet, thing and flyer have no parent in the table.
    assert got == {0: 3, 1: 3, 2: 4, 4: 6, 5: 4}
    assert semantic_superclass(NAMES, HIERARCHY, [3, 4, 2, 7, 9, 4, 12, 8]) == {0: 3, 1: 3, 2: 7, 4: 6, 5: 4}
    assert semantic_superclass(["a", "b"], {"c": ["a"]}, [1, 1]) == {}


def test_semantic_subclasses_are_the_children_in_the_table() -> None:
    assert semantic_subclasses(NAMES, HIERARCHY) == {7: [2], 4: [0, 1, 2, 5], 3: [0, 1], 6: [4]}
    assert semantic_subclasses(["a", "b"], {"a": ["c"], "d": ["b"]}) == {}


def test_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="unique"):
        semantic_subclasses(["a", "b", "a"], {"a": ["b"]})
    with pytest.raises(ValueError, match="unique"):
        semantic_superclass(["a", "a"], {}, [1, 1])
    many = [f"c{i}" for i in range(300)]
    assert semantic_subclasses(many, {"c0": ["c299"]}) == {0: [299]}
    assert semantic_superclass(many, {"c0": ["c299"]}, np.ones(300)) == {299: 0}


def test_semantic_extra_labels_take_the_superclass_column() -> None:
    table = semantic_table()
    positions, labels = semantic_extra_labels(table, NAMES, HIERARCHY)
    assert positions.tolist() == [0, 1, 2, 4, 5] and positions.dtype == np.int64
    assert labels.shape == (12, 5, 1) and labels.dtype == np.float32
    np.testing.assert_array_equal(labels[:, :, 0], table[:, [3, 3, 4, 6, 4]])


def test_the_smallest_superclass_counts_positives_per_column() -> None:
    """a's parents: p1 (2 positives) and p2 (4); the row sums would pick p2."""
    a, p1, p2 = [1, 0, 0, 0, 0], [1, 1, 0, 0, 0], [1, 1, 1, 1, 0]
    table = np.column_stack([a, p1, p2]).astype(float)
    positions, labels = semantic_extra_labels(table, ["a", "p1", "p2"], {"p2": ["a"], "p1": ["a"]})
    assert positions.tolist() == [0]
    np.testing.assert_array_equal(labels[:, 0, 0], p1)
    positions, labels = semantic_missing_labels(table[:, ::-1], ["p2", "p1", "a"], {"p2": ["a", "p1"]})
    np.testing.assert_array_equal(labels[:, 0, 0], p1)  # the child with more positives


def test_semantic_missing_labels_take_the_largest_child() -> None:
    table = semantic_table()
    for rule in ("largest", fresh("largest")):
        positions, labels = semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule, draws=3)
        assert positions.tolist() == [3, 4, 6, 7] and labels.shape == (12, 4, 1) and labels.dtype == np.float32
        # pet → cat (4 > 3), animal → cat (ties with fish at 4: earlier column), thing → animal, flyer → bird
        np.testing.assert_array_equal(labels[:, :, 0], table[:, [1, 1, 4, 2]])
    positions, labels = semantic_missing_labels(table, NAMES, HIERARCHY)
    np.testing.assert_array_equal(labels[:, :, 0], table[:, [1, 1, 4, 2]])


def brute_random_child(children: list[int], seed: int, parent: int, draw: int) -> list[int]:
    rng = np.random.default_rng([seed, 3, parent, draw])
    return [children[int(rng.integers(len(children)))]]


def brute_random_subset(children: list[int], keep: float, seed: int, parent: int, draw: int) -> list[int]:
    if len(children) == 1:
        return children
    rng = np.random.default_rng([seed, 3, parent, draw])
    while True:
        mask = rng.random(len(children)) < keep
        if 0 < mask.sum() < len(children):
            return [child for child, kept in zip(children, mask, strict=True) if kept]


CHILDREN = {3: [0, 1], 4: [0, 1, 2, 5], 6: [4], 7: [2]}


class LimitedGenerator:
    """A generator that refuses to be drawn from more than ``limit`` times (a loop that never ends fails)."""

    def __init__(self, seed: int, limit: int = 1_000) -> None:
        self.rng, self.calls, self.limit = np.random.default_rng(seed), 0, limit

    def random(self, size: int) -> np.ndarray:
        self.calls += 1
        if self.calls > self.limit:
            raise AssertionError(f"more than {self.limit} draws")
        return self.rng.random(size)


def test_random_subsets_are_non_empty_and_proper() -> None:
    assert perturb._random_subset(LimitedGenerator(0), np.array([5]), 0.5).tolist() == [5]
    assert perturb._random_subset(LimitedGenerator(0), np.array([5]), 0.01).tolist() == [5]
    for children in ([2, 7], [1, 4, 6]):
        for seed in range(40):
            for keep in (0.05, 0.5, 0.95):
                generator = LimitedGenerator(seed)
                got = perturb._random_subset(generator, np.array(children), keep).tolist()
                assert 0 < len(got) < len(children) and set(got) <= set(children)
                rng = np.random.default_rng(seed)
                while True:  # the first draw that gives a proper non-empty subset
                    mask = rng.random(len(children)) < keep
                    if 0 < mask.sum() < len(children):
                        break
                assert got == [child for child, kept in zip(children, mask, strict=True) if kept]


def test_random_child_and_random_subset_equal_the_seeded_loop() -> None:
    table = semantic_table()
    draws = [0, 4, 1, 7, 2, 3, 5, 6, 8, 9, 10, 11]
    for rule in ("random_child", fresh("random_child")):
        positions, labels = semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule, draws=draws, seed=6)
        assert positions.tolist() == [3, 4, 6, 7] and labels.shape == (12, 4, len(draws))
        assert labels.dtype == np.float32
        for slot, parent in enumerate(positions):
            for slot_d, draw in enumerate(draws):
                members = brute_random_child(CHILDREN[parent], 6, parent, draw)
                np.testing.assert_array_equal(labels[:, slot, slot_d], table[:, members].max(axis=1))
    for keep in (0.3, 0.8):
        for rule in ("random_subset", fresh("random_subset")):
            _, labels = semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule, draws=12, keep=keep, seed=6)
            for slot, parent in enumerate([3, 4, 6, 7]):
                for draw in range(12):
                    members = brute_random_subset(CHILDREN[parent], keep, 6, parent, draw)
                    np.testing.assert_array_equal(labels[:, slot, draw], table[:, members].max(axis=1))
    _, labels = semantic_missing_labels(table, NAMES, HIERARCHY, rule="random_subset", draws=12)
    for draw in range(12):  # default keep 0.5 and seed 0
        members = brute_random_subset(CHILDREN[4], 0.5, 0, 4, draw)
        np.testing.assert_array_equal(labels[:, 1, draw], table[:, members].max(axis=1))
    _, one = semantic_missing_labels(table, NAMES, HIERARCHY, rule="random_child")
    assert one.shape == (12, 4, 1)


def test_semantic_argument_checks() -> None:
    table = semantic_table()
    for keep in (0.0, -0.1, 1.0, 1.2):
        with pytest.raises(ValueError, match="keep must lie in"):
            semantic_missing_labels(table, NAMES, HIERARCHY, rule="random_subset", keep=keep)
        with pytest.raises(ValueError, match="keep must lie in"):  # the rule's name equal, not the same object
            semantic_missing_labels(table, NAMES, HIERARCHY, rule=fresh("random_subset"), keep=keep)
        for rule in ("largest", "random_child"):  # rules without a keep ignore it
            expected = semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule, draws=2)
            got = semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule, draws=2, keep=keep)
            np.testing.assert_array_equal(got[1], expected[1])
    for keep in (1e-9, 1.0 - 1e-9):
        assert semantic_missing_labels(table, NAMES, HIERARCHY, rule="random_subset", keep=keep)[1].shape == (12, 4, 1)
    for rule in ("smallest", "random", ""):
        with pytest.raises(ValueError, match="rule must be one of"):
            semantic_missing_labels(table, NAMES, HIERARCHY, rule=rule)
    with pytest.raises(ValueError, match="draws must be"):
        semantic_missing_labels(table, NAMES, HIERARCHY, rule="random_child", draws=0)


def _conditional_subset_law(m: int, keep: float) -> dict[tuple[int, ...], float]:
    """Every proper non-empty subset of m children with its probability under independent keeps, renormalised."""
    weights = {}
    for mask in itertools.product([False, True], repeat=m):
        if 0 < sum(mask) < m:
            weights[tuple(i for i in range(m) if mask[i])] = math.prod(keep if kept else 1 - keep for kept in mask)
    total = sum(weights.values())
    return {subset: weight / total for subset, weight in weights.items()}


@pytest.mark.parametrize("m", [4, 5])
@pytest.mark.parametrize("tries", [perturb.SUBSET_TRIES, 0])
@pytest.mark.parametrize("keep", [0.3, 0.05])
def test_random_subsets_follow_the_conditional_law_whether_redrawn_or_drawn_directly(monkeypatch, tries: int,
                                                                                    keep: float, m: int) -> None:
    """Frequencies of 4,000 subsets of m children against the enumerated law (chi-square, p > 1e-4), by
    redrawing and by the direct draw alone (``SUBSET_TRIES`` = 0)."""
    monkeypatch.setattr(perturb, "SUBSET_TRIES", tries)
    law = _conditional_subset_law(m, keep)
    rng = np.random.default_rng(17)
    children = np.arange(10, 10 + m)
    counts = dict.fromkeys(law, 0)
    for _ in range(4000):
        counts[tuple(int(c) - 10 for c in perturb._random_subset(rng, children, keep))] += 1
    observed = np.array([counts[subset] for subset in law])
    expected = 4000 * np.array([law[subset] for subset in law])
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_the_direct_draw_gives_subset_sizes_the_conditional_binomial_law(monkeypatch) -> None:
    """20,000 direct draws (``SUBSET_TRIES`` = 0) of 5 children at keep 0.3: sizes 1 … 4 against Bin(5, 0.3)
    restricted to 1 … 4 (scipy), chi-square p > 1e-4 (a weight off by one factor 0.7 at one size fails)."""
    monkeypatch.setattr(perturb, "SUBSET_TRIES", 0)
    rng = np.random.default_rng(23)
    sizes = [perturb._random_subset(rng, np.arange(5), 0.3).size for _ in range(20_000)]
    law = stats.binom.pmf(np.arange(1, 5), 5, 0.3)
    expected = 20_000 * law / law.sum()
    assert stats.chisquare(np.bincount(sizes, minlength=5)[1:], expected).pvalue > 1e-4


def test_the_direct_draw_comes_after_exactly_64_failed_redraws() -> None:
    """The documented order of the stream (so a seed gives the same subsets): 64 redraws of m uniforms, then one
    draw of the size from the conditional law and one of k children without replacement."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        got = perturb._random_subset(rng, np.array([7, 8, 9, 10]), 1e-9)
        oracle = np.random.default_rng(seed)
        oracle.random((64, 4))
        law = stats.binom.pmf(np.arange(1, 4), 4, 1e-9)
        size = int(oracle.choice(np.arange(1, 4), p=law / law.sum()))
        expected = 7 + np.sort(oracle.choice(4, size=size, replace=False))
        np.testing.assert_array_equal(got, expected)
        assert rng.random() == oracle.random()  # nothing else drawn


@pytest.mark.parametrize(("keep", "size"), [(1e-9, 1), (1e-300, 1), (1 - 1e-9, 2)])
def test_a_keep_near_0_or_1_draws_single_children_or_all_but_one_without_hanging(keep: float, size: int) -> None:
    """The redraws almost never find a proper subset here (≈ 1e-9 per try), so the direct draw decides: one
    child (keep → 0) or all but one (keep → 1), each of the three uniformly."""
    rng = np.random.default_rng(3)
    children = np.array([4, 5, 6])
    draws = [tuple(perturb._random_subset(rng, children, keep).tolist()) for _ in range(3000)]
    assert {len(draw) for draw in draws} == {size}
    assert all(list(draw) == sorted(draw) for draw in draws)  # in the children's order
    kinds = sorted(set(draws))
    assert len(kinds) == 3
    assert stats.chisquare([draws.count(kind) for kind in kinds]).pvalue > 1e-4
