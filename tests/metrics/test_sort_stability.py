"""The sort stability that reference mode's noise tie-breaking relies on (issue 14, item 5).

Reference mode adds ``1e-7·U`` to float32 values and ranks them by a stable sort; near 1 most of the noise is
below the float32 spacing, so huge runs of exactly equal values remain and their order — input position — is
part of the published behaviour. numpy's default ``argsort`` (quicksort/introsort) and torch's default sort
reorder such runs (the first test shows it on the data used here), so every test below would fail if the
engine's ranks came from an unstable sort. Expected ranks are brute force:
``rank_i = #{j : x_j < x_i} + #{j ≤ i : x_j = x_i}``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuroneval.metrics import score
from neuroneval.metrics.backend import NumpyBackend, TorchBackend
from neuroneval.metrics.binarize import exactly_top
from neuroneval.metrics.context import STREAM_CONCEPT_NOISE, STREAM_UNIT_NOISE, _noise
from neuroneval.metrics.ranks import noisy_values, stable_ranks


def torch_backends() -> list[TorchBackend]:
    return [TorchBackend(device) for device in ("cpu", *(["cuda"] if torch.cuda.is_available() else []))]


def massive_ties(rng: np.random.Generator, n: int) -> np.ndarray:
    """float32 rows in which the 1e-7 noise leaves huge runs of exactly equal values (as reference mode sees
    them): values near 1 (noise below the float32 spacing), all zeros, binary-plus-noise, and two levels."""
    noise = np.float32(1e-7) * rng.random((4, n)).astype(np.float32)
    rows = [
        np.float32(1.0) + noise[0],
        np.zeros(n, dtype=np.float32),
        np.where(rng.random(n) < 0.5, np.float32(0.0), np.float32(1.0)) + noise[2],
        np.where(rng.random(n) < 0.3, np.float32(0.5), np.float32(1.0)),
    ]
    return np.stack(rows)


def brute_force_stable_ranks(row: np.ndarray) -> np.ndarray:
    """rank_i = #{j : x_j < x_i} + #{j ≤ i : x_j = x_i} (1-based; ties by position)."""
    return np.array([np.sum(row < row[i]) + np.sum(row[:i + 1] == row[i]) for i in range(row.size)],
                    dtype=np.float64)


def ranks_from_order(order: np.ndarray) -> np.ndarray:
    ranks = np.empty(order.shape, dtype=np.float64)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(1, order.shape[-1] + 1, dtype=np.float64),
                                                    order.shape), axis=-1)
    return ranks


def test_the_tie_data_exposes_an_unstable_sort() -> None:
    """Guard: numpy's default argsort and torch's default sort order these ties differently from a stable sort,
    so the stability tests below would fail if the engine used them."""
    values = massive_ties(np.random.default_rng(5), 3000)
    expected = np.stack([brute_force_stable_ranks(row) for row in values])
    quick = ranks_from_order(np.argsort(values, axis=-1, kind="quicksort"))
    unstable_torch = ranks_from_order(torch.sort(torch.from_numpy(values), dim=-1).indices.numpy())
    assert not np.array_equal(quick, expected)
    assert not np.array_equal(unstable_torch, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stable_ranks_follow_input_order_within_ties_on_every_backend(dtype) -> None:
    values = massive_ties(np.random.default_rng(5), 3000).astype(dtype)
    if dtype == np.float64:
        values[:, ::7] += 1e-12  # not exactly float32: the numpy backend's argsort(kind="stable") path
    expected = np.stack([brute_force_stable_ranks(row) for row in values])
    np.testing.assert_array_equal(stable_ranks(NumpyBackend(), values), expected)
    for be in torch_backends():
        got = be.to_numpy(stable_ranks(be, be.asarray(values)))
        np.testing.assert_array_equal(got, expected, err_msg=str(be.device))


def test_exactly_k_equals_the_top_stable_ranks_without_sorting() -> None:
    values = massive_ties(np.random.default_rng(8), 3000)
    n = values.shape[-1]
    for k in (1, 7, 900, 1500, 2999, 3000):
        expected = stable_ranks(NumpyBackend(), values) > n - k
        np.testing.assert_array_equal(exactly_top(NumpyBackend(), values, k), expected, err_msg=str(k))
        for be in torch_backends():
            got = be.to_numpy(exactly_top(be, be.asarray(values), k))
            np.testing.assert_array_equal(got, expected, err_msg=f"{be.device} {k}")


def test_reference_spearman_on_massive_ties_follows_the_stable_order() -> None:
    """End to end: reference Spearman = (n−1)/n · Pearson of the stable ranks of the noised values (brute force),
    on numpy and torch alike; an unstable sort would order the ties near 1 differently."""
    rng = np.random.default_rng(9)
    n = 2000
    unit = np.where(rng.random(n) < 0.4, 1.0, 0.0)[:, None]
    concepts = np.column_stack([unit[:, 0], np.where(rng.random(n) < 0.5, 1.0, unit[:, 0])])
    seed = 4
    unit_ranks = brute_force_stable_ranks(noisy_values(unit.T, _noise(seed, STREAM_UNIT_NOISE, 1, n))[0])
    concept_noisy = noisy_values(concepts.T, _noise(seed, STREAM_CONCEPT_NOISE, 2, n))
    expected = [(n - 1) / n * np.corrcoef(unit_ranks, brute_force_stable_ranks(row))[0, 1] for row in concept_noisy]
    got = score("spearman", unit, concepts, ties="reference", seed=seed)[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    for be in torch_backends():
        on_torch = score("spearman", unit, concepts, ties="reference", seed=seed, device=str(be.device))[0]
        np.testing.assert_allclose(on_torch, expected, rtol=0, atol=1e-9)
