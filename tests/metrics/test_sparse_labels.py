"""Products with sparse concept rows (:mod:`neuroneval.metrics.sparse_kernels`), and the sparse-label path of the
metrics that multiply unit rows by ``B(c)`` (inverse AUC, MAD) on probability concepts, of which few reach 0.5.

Oracles: the dense numpy product for the kernel (bit-equal on integers and half-integers, where every float64 sum is
exact), ``sklearn.metrics.roc_auc_score`` per pair for inverse AUC and the per-pair MAD of
:mod:`neuroneval.metrics.reference`, with a spy showing which path each call took.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from sklearn import metrics as skm

from neuroneval.metrics import budget, engine, score, score_pairs, sparse_kernels
from neuroneval.metrics import reference as ref
from neuroneval.metrics.sparse_kernels import rows_times_sparse
from tests.metrics.conftest import quiet_score

N_INPUTS = 1200


def _concept_rows(rng: np.random.Generator, n_rows: int, n: int, density: float, weighted: bool) -> csr_matrix:
    """A CSR (n_rows, n) with an empty row, a full row and a single-entry row among random ones."""
    dense = (rng.random((n_rows, n)) < density).astype(np.float64)
    dense[0] = 0.0
    dense[1] = 1.0
    dense[2] = 0.0
    dense[2, n - 1] = 1.0
    if weighted:
        dense *= np.round(rng.random((n_rows, n)), 3)
    return csr_matrix(dense)


@pytest.mark.parametrize("n_units", [1, 4, 7, 9])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_equals_the_dense_product_on_exact_sums(n_units: int, dtype: type) -> None:
    """Half-integer units (centred ranks) and 0/1 rows: every sum is exact, so the kernel equals a float64 GEMM bit
    for bit, for unit counts that fill and do not fill its groups of four, with empty, full and one-entry rows."""
    rng = np.random.default_rng(n_units)
    units = (rng.integers(-400, 400, (n_units, 301)) / 2.0).astype(dtype)
    rows = _concept_rows(rng, 6, 301, 0.1, weighted=False)
    got = rows_times_sparse(units, rows)
    assert got.dtype == np.float64 and got.shape == (n_units, 6)
    assert np.array_equal(got, units.astype(np.float64) @ rows.toarray().T)


def test_half_precision_and_integer_units_are_converted_first() -> None:
    """Unit rows of another dtype (float16, which the compiled kernel cannot read; int8) are converted to float64
    before the pass and give the dense product."""
    rng = np.random.default_rng(3)
    rows = _concept_rows(rng, 4, 200, 0.1, weighted=False)
    for dtype in (np.float16, np.int8):
        units = rng.integers(-8, 8, (5, 200)).astype(dtype)
        assert np.array_equal(rows_times_sparse(units, rows), units.astype(np.float64) @ rows.toarray().T)


def test_weighted_rows_and_strided_units_equal_the_dense_product() -> None:
    """Weighted entries (concept values) are multiplied; a non-contiguous unit view is read correctly."""
    rng = np.random.default_rng(5)
    units = rng.standard_normal((10, 500))[::2]
    rows = _concept_rows(rng, 5, 500, 0.2, weighted=True)
    np.testing.assert_allclose(rows_times_sparse(units, rows), units @ rows.toarray().T, rtol=1e-12, atol=1e-12)


@pytest.fixture(scope="module")
def sparse_label_data() -> tuple[np.ndarray, np.ndarray]:
    """float32 activations with ties (ReLU zeros, rounding) and soft concepts, ≈ 7 % of values ≥ 0.5, one with an
    empty B(c), one with a single positive; all of B(c) together is below the sparse-label share (1/8)."""
    rng = np.random.default_rng(36)
    n = N_INPUTS
    units = np.maximum(np.round(rng.standard_normal((n, 9)), 1), 0.0).astype(np.float32)
    units[:, 0] = np.round(rng.standard_normal(n), 3)
    concepts = np.round(1.0 / (1.0 + np.exp(-rng.normal(-3.0, 2.0, (n, 6)))), 3)
    concepts[:, 4] = np.round(rng.random(n) * 0.49, 3)
    concepts[:, 5] = np.round(rng.random(n) * 0.4, 2)
    concepts[rng.integers(n), 5] = 0.9
    return units, concepts.astype(np.float32)


def _oracle(metric: str, activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """Per pair: sklearn's AUC of a against B(c) (0.5 without a positive or a negative), the reference MAD."""
    out = np.zeros((activations.shape[1], concepts.shape[1]))
    for k in range(activations.shape[1]):
        for t in range(concepts.shape[1]):
            labels = concepts[:, t] >= 0.5
            if metric == "inverse_auc":
                single = labels.all() or not labels.any()
                out[k, t] = 0.5 if single else skm.roc_auc_score(labels, activations[:, k])
            else:
                out[k, t] = ref.mad(activations[:, k].astype(np.float64), concepts[:, t].astype(np.float64))
    return out


@pytest.fixture
def kernel_calls(monkeypatch) -> list[tuple[int, ...]]:
    """The shapes of the sparse rows each call of the kernel received."""
    calls: list[tuple[int, ...]] = []
    original = sparse_kernels.rows_times_sparse

    def spy(units, sparse):
        calls.append(sparse.shape)
        return original(units, sparse)

    monkeypatch.setattr(sparse_kernels, "rows_times_sparse", spy)
    return calls


@pytest.fixture
def blocks_of_two(monkeypatch) -> None:
    """Bounded calls cut into blocks of 2 units and chunks of 2 concepts (as tests/metrics/test_memory.py does)."""
    def small_plan(metric, budget_bytes, n, n_units, n_concepts, *, unit_room=0):
        if budget_bytes is None:
            return budget.plan(metric, None, n, n_units, n_concepts)
        return budget.ChunkPlan(unit_block=2, concept_chunk=2, work_elements=4096, grid_points=1)

    monkeypatch.setattr(engine, "plan", small_plan)


@pytest.mark.parametrize("metric", ["inverse_auc", "mad"])
def test_sparse_labels_of_soft_concepts_equal_the_oracle(metric: str, sparse_label_data, kernel_calls,
                                                         blocks_of_two) -> None:
    """Soft concepts whose B(c) is sparse go through the kernel (one call per unit block and concept chunk) and give
    the per-pair oracle's values, whole, in unit blocks and concept chunks, and as listed pairs (dense rows)."""
    activations, concepts = sparse_label_data
    expected = _oracle(metric, activations, concepts)
    whole = quiet_score(score, metric, activations, concepts, memory_budget="unbounded")
    assert kernel_calls == [(concepts.shape[1], N_INPUTS)]
    np.testing.assert_allclose(whole, expected, rtol=1e-9, atol=1e-12)
    kernel_calls.clear()
    blocked = quiet_score(score, metric, activations, concepts)
    assert len(kernel_calls) == 5 * 3 and all(shape == (2, N_INPUTS) for shape in kernel_calls)
    np.testing.assert_allclose(blocked, expected, rtol=1e-9, atol=1e-12)
    pairs = np.array([[k, t] for k in range(activations.shape[1]) for t in range(concepts.shape[1])])
    listed = quiet_score(score_pairs, metric, activations, concepts, pairs)
    np.testing.assert_allclose(listed, expected.ravel(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("metric", ["inverse_auc", "mad"])
def test_dense_labels_keep_the_gemm(metric: str, sparse_label_data, kernel_calls) -> None:
    """Where B(c) is mostly 1 (here ≈ 93 %), the chunk is multiplied densely, with the same oracle values."""
    activations, concepts = sparse_label_data
    flipped = (1.0 - concepts).astype(np.float32)
    got = quiet_score(score, metric, activations, flipped)
    assert kernel_calls == []
    np.testing.assert_allclose(got, _oracle(metric, activations, flipped), rtol=1e-9, atol=1e-12)


def test_torch_backend_keeps_labels_dense(sparse_label_data, kernel_calls) -> None:
    """The torch backend never takes the sparse path, and agrees with the numpy one."""
    activations, concepts = sparse_label_data
    on_torch = quiet_score(score, "inverse_auc", activations, concepts, device="cpu")
    assert kernel_calls == []
    np.testing.assert_allclose(on_torch, quiet_score(score, "inverse_auc", activations, concepts), rtol=1e-9)
