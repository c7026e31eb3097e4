"""Statistics, determinism and edge cases of the label perturbations (paper 000, Eq. 9, 12, App. E.1, E.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from neuroneval.sanity.perturb import (
    extra_cutoffs,
    extra_labels,
    missing_labels,
    perturb_labels,
    semantic_extra_labels,
    semantic_missing_labels,
)

N, POSITIVES, DRAWS = 20_000, 2_000, 40


@pytest.fixture(scope="module")
def concept() -> np.ndarray:
    column = np.zeros(N)
    column[:POSITIVES] = 1.0
    return column


@pytest.mark.parametrize("keep", [0.33, 0.5, 0.75])
def test_missing_labels_keep_the_target_fraction(concept: np.ndarray, keep: float) -> None:
    labels = missing_labels(concept, DRAWS, keep=keep, seed=3)[:, 0, :]
    assert labels.shape == (N, DRAWS)
    assert np.all(labels <= concept[:, None])  # a subset: only positives may be removed
    kept = labels.sum(axis=0) / POSITIVES
    # Each draw keeps Binomial(s, r₋)/s: sd √(r₋(1 − r₋)/s); the mean of 40 draws is within 4 standard errors.
    standard_error = math.sqrt(keep * (1 - keep) / POSITIVES / DRAWS)
    assert abs(kept.mean() - keep) < 4 * standard_error
    assert 0 < kept.std() < 3 * math.sqrt(keep * (1 - keep) / POSITIVES)


@pytest.mark.parametrize("multiplier", [1.33, 2.0, 3.0])
def test_extra_labels_multiply_the_positives(concept: np.ndarray, multiplier: float) -> None:
    labels = extra_labels(concept, DRAWS, multiplier=multiplier, seed=3)[:, 0, :]
    assert np.all(labels >= concept[:, None]) and set(np.unique(labels)) <= {0.0, 1.0}  # a superset
    ratio = labels.sum(axis=0) / POSITIVES
    q = (multiplier - 1) * POSITIVES / (N - POSITIVES)
    standard_error = math.sqrt((N - POSITIVES) * q * (1 - q)) / POSITIVES / math.sqrt(DRAWS)
    assert abs(ratio.mean() - multiplier) < 4 * standard_error


def test_the_standard_tests_halve_and_double(concept: np.ndarray) -> None:
    assert perturb_labels("missing", concept, 10)[:, 0].sum(axis=0).mean() == pytest.approx(POSITIVES / 2, rel=0.03)
    assert perturb_labels("extra", concept, 10)[:, 0].sum(axis=0).mean() == pytest.approx(2 * POSITIVES, rel=0.03)
    assert extra_cutoffs(concept)[0] == pytest.approx(POSITIVES / (N - POSITIVES))  # Eq. 12: s / (n − s)


def test_extra_labels_saturate_and_leave_degenerate_concepts_alone() -> None:
    concept = np.r_[np.ones(600), np.zeros(400)]
    assert extra_cutoffs(concept, 3.0)[0] == 1.0  # (r₊ − 1)s > n − s: every input becomes positive
    assert np.all(extra_labels(concept, 2, multiplier=3.0) == 1.0)
    empty, full = np.zeros(50), np.ones(50)
    assert np.all(extra_labels(empty, 3) == 0) and np.all(extra_labels(full, 3) == 1)
    assert np.all(missing_labels(empty, 3) == 0)


def test_continuous_concepts_use_their_l1_norm() -> None:
    concept = np.r_[np.full(100, 0.5), np.zeros(900)]
    assert extra_cutoffs(concept)[0] == pytest.approx(50 / 950)
    out = extra_labels(concept, 1, seed=1)[:, 0, 0]
    assert set(np.unique(out)) <= {0.0, 0.5, 1.0}


def test_draws_do_not_depend_on_order_chunking_or_other_concepts() -> None:
    rng = np.random.default_rng(0)
    concepts = (rng.random((3_000, 4)) < [0.02, 0.1, 0.3, 0.5]).astype(np.float32)
    for test in ("missing", "extra"):
        full = perturb_labels(test, concepts, 6, seed=11)
        np.testing.assert_array_equal(full, perturb_labels(test, concepts, 6, seed=11))
        np.testing.assert_array_equal(full[:, :, 2:5], perturb_labels(test, concepts, range(2, 5), seed=11))
        alone = perturb_labels(test, concepts[:, [2]], [4, 1], seed=11, concept_ids=[2])
        np.testing.assert_array_equal(full[:, 2, [4, 1]], alone[:, 0, :])
        order = [3, 0, 2, 1]
        shuffled = perturb_labels(test, concepts[:, order], 6, seed=11, concept_ids=order)
        np.testing.assert_array_equal(full[:, order, :], shuffled)
        assert not np.array_equal(full, perturb_labels(test, concepts, 6, seed=12))
        assert not np.array_equal(full[:, :, 0], full[:, :, 1])


def test_invalid_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="keep"):
        missing_labels(np.ones(5), keep=0.0)
    with pytest.raises(ValueError, match="multiplier"):
        extra_labels(np.ones(5), multiplier=0.5)
    with pytest.raises(ValueError, match="test"):
        perturb_labels("both", np.ones(5))
    with pytest.raises(ValueError, match="draws"):
        missing_labels(np.ones(5), draws=0)
    with pytest.raises(ValueError, match="concept_ids"):
        missing_labels(np.ones((5, 2)), concept_ids=[0])


@pytest.fixture(scope="module")
def hierarchy_table() -> tuple[np.ndarray, list[str], dict[str, list[str]]]:
    """animal ⊃ {dog, cat, bird}, pet ⊃ {dog, cat}; dog 300, cat 200, bird 100 positives of 2000 inputs."""
    n = 2_000
    dog, cat, bird = np.zeros(n), np.zeros(n), np.zeros(n)
    dog[:300], cat[300:500], bird[500:600] = 1, 1, 1
    pet, animal = np.maximum(dog, cat), np.maximum.reduce([dog, cat, bird])
    names = ["dog", "cat", "bird", "pet", "animal"]
    hierarchy = {"animal": ["dog", "cat", "bird"], "pet": ["dog", "cat"], "dog": []}
    return np.column_stack([dog, cat, bird, pet, animal]), names, hierarchy


def test_semantic_extra_labels_use_the_smallest_superclass(hierarchy_table) -> None:
    concepts, names, hierarchy = hierarchy_table
    positions, labels = semantic_extra_labels(concepts, names, hierarchy)
    assert positions.tolist() == [0, 1, 2]  # dog, cat, bird have a parent in the table
    np.testing.assert_array_equal(labels[:, :, 0], concepts[:, [3, 3, 4]])  # dog, cat → pet; bird → animal


def test_semantic_missing_labels_use_the_largest_subclass_or_random_subsets(hierarchy_table) -> None:
    concepts, names, hierarchy = hierarchy_table
    positions, labels = semantic_missing_labels(concepts, names, hierarchy)
    assert positions.tolist() == [3, 4] and labels.shape == (2_000, 2, 1)
    np.testing.assert_array_equal(labels[:, :, 0], concepts[:, [0, 0]])  # dog is the largest child of both
    _, random_child = semantic_missing_labels(concepts, names, hierarchy, rule="random_child", draws=20, seed=5)
    sizes = random_child.sum(axis=0)
    assert set(np.unique(sizes)) <= {100.0, 200.0, 300.0}
    _, subsets = semantic_missing_labels(concepts, names, hierarchy, rule="random_subset", draws=20, seed=5)
    for slot, parent in enumerate([3, 4]):
        assert np.all(subsets[:, slot, :] <= concepts[:, [parent]])  # a subset of the parent …
        assert np.all(subsets[:, slot, :].sum(axis=0) < concepts[:, parent].sum())  # … and a proper one
    again = semantic_missing_labels(concepts, names, hierarchy, rule="random_subset", draws=20, seed=5)[1]
    np.testing.assert_array_equal(subsets, again)
