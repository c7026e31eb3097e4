"""The rank helpers of ``metrics/ranks.py`` on their own, against independent oracles on every backend.

``average_ranks`` against ``scipy.stats.rankdata(method="average")``, ``count_at_least`` against a brute-force
count, ``noisy_values`` against the float32 arithmetic it documents. The engine's Spearman and top-α tests reach
these helpers only through whole metrics; here a wrong rank offset or tie rule shows directly.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from neuroneval.metrics.backend import NumpyBackend, TorchBackend
from neuroneval.metrics.ranks import REFERENCE_NOISE, average_ranks, count_at_least, noisy_values, stable_ranks


def backends() -> list:
    return [NumpyBackend(), TorchBackend("cpu"), *([TorchBackend("cuda")] if torch.cuda.is_available() else [])]


def tied_rows(rng: np.random.Generator, n: int) -> np.ndarray:
    """Rows with many ties (rounded normals, a constant, two levels) and one without (float64 noise)."""
    return np.stack([np.round(rng.standard_normal(n), 1), np.full(n, 0.25), np.where(rng.random(n) < 0.3, 2.0, -1.0),
                     rng.standard_normal(n), np.float32(rng.standard_normal(n)).astype(np.float64)])


@pytest.mark.parametrize("be", backends(), ids=lambda be: type(be).__name__ + str(getattr(be, "device", "")))
def test_average_ranks_equal_scipy_rankdata(be) -> None:
    values = tied_rows(np.random.default_rng(11), 257)
    expected = stats.rankdata(values, method="average", axis=-1)
    np.testing.assert_array_equal(be.to_numpy(average_ranks(be, be.asarray(values))), expected)
    given = be.sort_any_order(be.asarray(values))
    np.testing.assert_array_equal(be.to_numpy(average_ranks(be, be.asarray(values), given)), expected)
    single = be.to_numpy(average_ranks(be, be.asarray(values[0])))  # one row: the last axis is the only axis
    np.testing.assert_array_equal(single, expected[0])


@pytest.mark.parametrize("be", backends(), ids=lambda be: type(be).__name__ + str(getattr(be, "device", "")))
def test_count_at_least_equals_a_brute_force_count(be) -> None:
    values = tied_rows(np.random.default_rng(12), 131)
    expected = np.array([[np.sum(row >= x) for x in row] for row in values])
    np.testing.assert_array_equal(be.to_numpy(count_at_least(be, be.asarray(values))), expected)
    given = be.sort_any_order(be.asarray(values))
    np.testing.assert_array_equal(be.to_numpy(count_at_least(be, be.asarray(values), given)), expected)


@pytest.mark.parametrize("be", backends(), ids=lambda be: type(be).__name__ + str(getattr(be, "device", "")))
def test_ranks_run_along_the_last_axis_of_one_row_and_of_a_stack_of_matrices(be) -> None:
    """1-D and 3-D inputs (the helpers are vectorised over every leading axis): the last axis is not axis 1."""
    rows = tied_rows(np.random.default_rng(14), 60)
    stacked = np.stack([rows, rows[::-1] * 2.0])  # (2, 5, 60)
    for values in (rows[0], stacked):
        flat = values.reshape(-1, values.shape[-1])
        at_least = np.array([[np.sum(row >= x) for x in row] for row in flat]).reshape(values.shape)
        stable = np.array([[np.sum(row < row[i]) + np.sum(row[:i + 1] == row[i]) for i in range(row.size)]
                           for row in flat], dtype=np.float64).reshape(values.shape)
        np.testing.assert_array_equal(be.to_numpy(count_at_least(be, be.asarray(values))), at_least)
        np.testing.assert_array_equal(be.to_numpy(stable_ranks(be, be.asarray(values))), stable)
        np.testing.assert_array_equal(be.to_numpy(average_ranks(be, be.asarray(values))),
                                      stats.rankdata(values, method="average", axis=-1))


def test_noisy_values_add_float32_noise_of_1e_minus_7() -> None:
    rng = np.random.default_rng(13)
    values, noise = rng.standard_normal((3, 50)), rng.random((3, 50))
    got = noisy_values(values, noise)
    assert got.dtype == np.float32 and REFERENCE_NOISE == np.float32(1e-7)
    expected = np.array([[np.float32(v) + np.float32(1e-7) * np.float32(u) for v, u in zip(row, noise_row, strict=True)]
                         for row, noise_row in zip(values, noise, strict=True)], dtype=np.float32)
    np.testing.assert_array_equal(got, expected)
    small = noisy_values(np.zeros(4), np.array([0.0, 0.25, 0.5, 0.75]))  # near 0 the noise is exact
    np.testing.assert_array_equal(small, np.float32([0.0, 0.25e-7, 0.5e-7, 0.75e-7]))
