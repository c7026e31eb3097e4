"""WPMI's 0/1-concept branch and the edge-case notes of WPMI and MAD, against the per-pair reference.

``tests/metrics/test_oracles.py`` scores every concept column at once; its mixed columns (probabilities beside
labels) send WPMI down the continuous branch only. Here the concepts are labels only, so the branch that counts
true positives (log max(c, 1e-8) = log(1e-8)·(1 − c)) is compared with the reference's plain mean of logs, and
each note is checked to appear exactly when its condition holds.
"""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics.context import columns_of
from neuroneval.metrics.wpmi_mad import MAD_DEGENERATE, ZERO_MEAN
from tests.metrics.conftest import make_activations, per_pair_matrix, scored_with_notes


def label_concepts(rng: np.random.Generator, n: int, *, empty: bool, full: bool) -> np.ndarray:
    """0/1 columns: γ = 0.3, 0.05, three positives, and optionally all 0 and all 1."""
    rare = np.zeros(n)
    rare[rng.choice(n, size=3, replace=False)] = 1.0
    columns = [(rng.random(n) < 0.3).astype(float), (rng.random(n) < 0.05).astype(float), rare]
    columns += [np.zeros(n)] * empty + [np.ones(n)] * full
    return np.column_stack(columns)


@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
@pytest.mark.parametrize("alpha", [0.005, 0.03, 0.2])
def test_wpmi_of_label_concepts_matches_the_reference(alpha: float, lam: float) -> None:
    rng = np.random.default_rng(37)
    n = 1200
    activations = make_activations(rng, n)
    concepts = label_concepts(rng, n, empty=True, full=True)
    scores, _ = scored_with_notes("wpmi", activations, concepts, alpha=alpha, lam=lam)
    np.testing.assert_allclose(scores, per_pair_matrix("wpmi", activations, concepts, alpha=alpha, lam=lam),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("labels", [True, False], ids=["labels", "probabilities"])
def test_wpmi_notes_a_zero_mean_concept_only_when_there_is_one(labels: bool) -> None:
    rng = np.random.default_rng(5)
    n = 600
    activations = make_activations(rng, n)
    concepts = label_concepts(rng, n, empty=False, full=True)
    if not labels:
        concepts = np.column_stack([concepts, np.round(rng.random(n), 2)])  # a probability: the continuous branch
    _, notes = scored_with_notes("wpmi", activations, concepts, alpha=0.05, lam=1.0)
    assert f"wpmi: {ZERO_MEAN}" not in notes
    with_empty = np.column_stack([concepts, np.zeros(n)])
    scores, notes = scored_with_notes("wpmi", activations, with_empty, alpha=0.05, lam=1.0)
    assert f"wpmi: {ZERO_MEAN}" in notes
    np.testing.assert_allclose(scores, per_pair_matrix("wpmi", activations, with_empty, alpha=0.05, lam=1.0),
                               rtol=1e-10, atol=1e-10)


def test_mad_notes_a_degenerate_concept_only_when_there_is_one() -> None:
    rng = np.random.default_rng(6)
    n = 400
    activations = make_activations(rng, n)
    concepts = label_concepts(rng, n, empty=False, full=False)
    _, notes = scored_with_notes("mad", activations, concepts)
    assert f"mad: {MAD_DEGENERATE}" not in notes
    for degenerate in (np.zeros(n), np.ones(n)):
        with_degenerate = np.column_stack([concepts, degenerate])
        scores, notes = scored_with_notes("mad", activations, with_degenerate)
        assert f"mad: {MAD_DEGENERATE}" in notes
        np.testing.assert_allclose(scores, per_pair_matrix("mad", activations, with_degenerate), rtol=1e-10, atol=1e-10)
        assert np.all(scores[:, -1] == 0.0)


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("columns", [[2, 3, 4], [5, 0, 3]], ids=["slice", "fancy"])
def test_columns_of_is_the_transformed_columns_input_major_with_their_sums(order: str, columns: list[int]) -> None:
    """One pass in input blocks (here 7 inputs, not a divisor of n) gives ``transform(matrix[:, columns])`` in a
    C-contiguous (n, C') float64 array and the float64 sums of the untransformed columns."""
    rng = np.random.default_rng(11)
    matrix = np.asarray(rng.random((45, 6)).astype(np.float32), order=order)
    index = np.array(columns)
    out, sums = columns_of(matrix, index, lambda block: np.log(block, out=block), block=7)
    expected = matrix[:, index].astype(np.float64)
    assert out.flags.c_contiguous and out.dtype == np.float64 and out.shape == (45, len(columns))
    np.testing.assert_array_equal(out, np.log(expected))
    np.testing.assert_allclose(sums, expected.sum(axis=0), rtol=1e-14)


@pytest.mark.parametrize("device", [None, "cpu"], ids=["numpy", "torch"])
def test_wpmi_of_probability_concepts_gathers_input_major_logs_and_matches_the_reference(
        device: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """With few active inputs per unit (small α) and all pairs, WPMI of probability concepts sums the logs computed
    input-major (:func:`columns_of`); it must equal the per-pair reference, with zeros among the values (the 1e-8
    floor) and a concept of mean 0 (its note), in one concept chunk and in several."""
    from neuroneval.metrics import wpmi_mad

    rng = np.random.default_rng(23)
    n = 2000
    activations = rng.standard_normal((n, 4))  # no ties: 10 active inputs per unit at α = 0.005
    concepts = np.column_stack([np.round(rng.random((n, 3)), 2), np.zeros(n),
                                np.where(rng.random(n) < 0.5, 0.0, rng.random(n))]).astype(np.float32)
    calls = []

    def spy(*args, **kwargs):
        calls.append(args[1].size)
        return columns_of(*args, **kwargs)

    monkeypatch.setattr(wpmi_mad, "columns_of", spy)
    expected = per_pair_matrix("wpmi", activations, concepts.astype(np.float64), alpha=0.005, lam=0.7)
    for chunk_size in (None, 2):
        calls.clear()
        scores, notes = scored_with_notes("wpmi", activations, concepts, alpha=0.005, lam=0.7, device=device,
                                          chunk_size=chunk_size)
        np.testing.assert_allclose(scores, expected, rtol=1e-10, atol=1e-10)
        assert f"wpmi: {ZERO_MEAN}" in notes
        assert sum(calls) == concepts.shape[1] and (chunk_size is None or max(calls) <= chunk_size)
