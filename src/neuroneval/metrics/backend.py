"""Array backends of the metric engine: numpy on the CPU, torch on any device (``device=``).

The kernels are written once against :class:`Backend`, a deliberately small set of array operations whose
numpy and torch versions agree bit for bit where it matters:

* 0/1 matrices are multiplied in float32, which is exact for counts below 2**24 inputs;
* everything continuous (ranks, standardized vectors, logs, means) is computed and multiplied in float64;
* sorts are stable on both sides, so tie order and rank assignment are identical;
* random numbers are always drawn by numpy on the host and moved to the device, so a seed gives the same
  samples whatever the backend.

Operations act on the last axis unless stated otherwise.
"""

from __future__ import annotations

from typing import Any

import numpy as np

Array = Any

#: Elements per block of the numpy backend's row-wise sorts and run scans (8 MiB of 64-bit keys): small enough to
#: stay in cache, large enough that the per-block overhead is nothing.
BLOCK_ELEMENTS = 2**20


class NumpyBackend:
    """Reference backend: plain numpy on the host."""

    name = "numpy"
    float32 = np.float32
    float64 = np.float64
    int32 = np.int32
    int64 = np.int64

    def asarray(self, values: np.ndarray, dtype: Any = None) -> np.ndarray:
        return np.ascontiguousarray(values, dtype=dtype)

    def to_numpy(self, values: np.ndarray) -> np.ndarray:
        return np.asarray(values)

    def astype(self, values: np.ndarray, dtype: Any) -> np.ndarray:
        return values.astype(dtype, copy=False)

    def arange(self, stop: int) -> np.ndarray:
        return np.arange(stop, dtype=np.int64)

    def full(self, shape: tuple[int, ...], value: float, dtype: Any) -> np.ndarray:
        return np.full(shape, value, dtype=dtype)

    def where(self, condition: np.ndarray, first: Any, second: Any) -> np.ndarray:
        return np.where(condition, first, second)

    def sum(self, values: np.ndarray, axis: int = -1) -> np.ndarray:
        return values.sum(axis=axis)

    def max(self, values: np.ndarray, axis: int = -1) -> np.ndarray:
        return values.max(axis=axis)

    def min(self, values: np.ndarray, axis: int = -1) -> np.ndarray:
        return values.min(axis=axis)

    def sqrt(self, values: np.ndarray) -> np.ndarray:
        return np.sqrt(values)

    def log(self, values: np.ndarray) -> np.ndarray:
        return np.log(values)

    def clip(self, values: np.ndarray, low: float | None, high: float | None) -> np.ndarray:
        return np.clip(values, low, high)

    def any(self, values: np.ndarray) -> bool:
        return bool(np.any(values))

    def all(self, values: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.all(values, axis=axis)

    def moveaxis01(self, values: np.ndarray) -> np.ndarray:
        return np.swapaxes(values, 0, 1)

    def broadcast_to(self, values: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
        return np.ascontiguousarray(np.broadcast_to(values, shape))

    def kth_largest(self, values: np.ndarray, k: int) -> np.ndarray:
        n = values.shape[-1]
        return np.partition(values, n - k, axis=-1)[..., n - k]

    def sort(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted rows and their order, equal values in input order (a stable sort; the reference-mode ranks
        rely on it). Exactly-float32 values (the reference-mode noised values always are) are sorted by the
        unique packed key of :meth:`_packed_sort`, whose order is the stable one whatever algorithm sorts the
        keys; other values by ``argsort(kind="stable")``."""
        packed = self._packed_sort(values)
        if packed is not None:
            return packed
        order = np.argsort(values, axis=-1, kind="stable")
        return np.take_along_axis(values, order, axis=-1), order

    def sort_any_order(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Like :meth:`sort`, but equal values may come in any order (for results that treat ties alike).

        Values that are exactly float32 (activation tables are stored as float32) are sorted as one packed
        64-bit key per element (:meth:`_packed_sort`), which is about three times faster than an argsort plus
        a sort of the values.
        """
        packed = self._packed_sort(values)
        if packed is not None:
            return packed
        return np.sort(values, axis=-1), np.argsort(values, axis=-1)

    @staticmethod
    def _packed_sort(values: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Sort of exactly-float32 rows by one 64-bit key per element — the value's order-preserving bit
        pattern above its position — or ``None`` when the values are not all float32 (or a row is too long).

        The keys are distinct, so the result is the stable order (equal values by position) whatever the
        sort algorithm; −0.0 and 0.0 get one key pattern, as they compare equal. Rows are keyed, sorted and
        unpacked :data:`BLOCK_ELEMENTS` elements at a time, so the temporaries stay in cache however many rows
        come (a whole layer's units at once when a FeatureCache keeps them).
        """
        n = values.shape[-1] if values.ndim else 0
        if values.ndim == 0 or n >= 2**32:
            return None
        flat = values.reshape(-1, n)
        out_values = np.empty(flat.shape, dtype=values.dtype)
        out_order = np.empty(flat.shape, dtype=np.int64)
        positions = np.arange(n, dtype=np.uint64)
        step = max(1, BLOCK_ELEMENTS // max(1, n))
        for start in range(0, flat.shape[0], step):
            block = flat[start:start + step]
            single = block.astype(np.float32) + np.float32(0.0)  # + 0 maps −0.0 to 0.0, as equal as they compare
            if not np.array_equal(single, block):
                return None
            bits = single.view(np.uint32)
            keys = np.where(bits >> 31, ~bits, bits | np.uint32(0x80000000)).astype(np.uint64) << np.uint64(32)
            keys |= positions
            keys.sort(axis=-1)
            out_order[start:start + step] = keys & np.uint64(0xFFFFFFFF)
            high = (keys >> np.uint64(32)).astype(np.uint32)
            sorted_bits = np.where(high >> 31, high & np.uint32(0x7FFFFFFF), ~high)
            out_values[start:start + step] = sorted_bits.view(np.float32)
        return out_values.reshape(values.shape), out_order.reshape(values.shape)

    def run_bounds(self, sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For every position of sorted rows, the first and last position (int64) of its run of equal values
        (:data:`BLOCK_ELEMENTS` elements at a time)."""
        shape, n = sorted_values.shape, sorted_values.shape[-1]
        flat = sorted_values.reshape(-1, n)
        firsts = np.empty(flat.shape, dtype=np.int64)
        lasts = np.empty(flat.shape, dtype=np.int64)
        step = max(1, BLOCK_ELEMENTS // max(1, n))
        for start in range(0, flat.shape[0], step):
            flags = self.run_starts(flat[start:start + step]).ravel()
            first = np.flatnonzero(flags)
            lengths = np.diff(np.append(first, flags.size))
            local = first % n
            firsts[start:start + step].reshape(-1)[:] = np.repeat(local, lengths)
            lasts[start:start + step].reshape(-1)[:] = np.repeat(local + lengths - 1, lengths)
        return firsts.reshape(shape), lasts.reshape(shape)

    def sort_values(self, values: np.ndarray) -> np.ndarray:
        return np.sort(values, axis=-1)

    def take_along(self, values: np.ndarray, index: np.ndarray) -> np.ndarray:
        return np.take_along_axis(values, index, axis=-1)

    def scatter_along(self, index: np.ndarray, values: np.ndarray) -> np.ndarray:
        out = np.empty_like(values)
        np.put_along_axis(out, index, values, axis=-1)
        return out

    def run_starts(self, sorted_values: np.ndarray) -> np.ndarray:
        """True where a sorted row starts a run of equal values."""
        starts = np.ones(sorted_values.shape, dtype=bool)
        np.not_equal(sorted_values[..., 1:], sorted_values[..., :-1], out=starts[..., 1:])
        return starts

    def run_ends(self, sorted_values: np.ndarray) -> np.ndarray:
        """True where a sorted row ends a run of equal values."""
        ends = np.ones(sorted_values.shape, dtype=bool)
        np.not_equal(sorted_values[..., :-1], sorted_values[..., 1:], out=ends[..., :-1])
        return ends

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        return np.cumsum(values, axis=-1, dtype=values.dtype)

    def cummax(self, values: np.ndarray) -> np.ndarray:
        return np.maximum.accumulate(values, axis=-1)

    def reverse_cummin(self, values: np.ndarray) -> np.ndarray:
        return np.minimum.accumulate(values[..., ::-1], axis=-1)[..., ::-1]

    def take_rows(self, values: np.ndarray, rows: Array) -> np.ndarray:
        return values[self.index(rows)]

    def concatenate(self, blocks: list[np.ndarray]) -> np.ndarray:
        """Blocks stacked along the first axis."""
        return np.concatenate(blocks, axis=0)

    def nonzero(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row, column) of the nonzero entries of a matrix, in row-major order."""
        rows, columns = np.nonzero(values)
        return rows.astype(np.int64), columns.astype(np.int64)

    def scatter_2d(self, shape: tuple[int, int], rows: np.ndarray, columns: np.ndarray, values: np.ndarray,
                   fill: int) -> np.ndarray:
        out = np.full(shape, fill, dtype=np.int64)
        out[rows, columns] = values
        return out

    def gather_columns(self, values: np.ndarray, index: Array) -> np.ndarray:
        """``values[:, index]`` for a (R, n) matrix and an integer matrix (L, m): shape (R, L, m)."""
        return values[:, self.index(index)]

    def weighted_column_sums(self, values: np.ndarray, index: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``Σ_j weights[l, j] · values[:, index[l, j]]`` for (R, n) values and (L, m) index/weights: (L, R) float64.

        A sparse (L, n) matrix with the weights at the indexed columns times ``valuesᵀ``: one pass over the
        L·m entries reading R contiguous values each, with no (R, L, m) temporary.
        """
        return self.weighted_input_sums(np.ascontiguousarray(values.T), index, weights)

    def weighted_input_sums(self, inputs_major: np.ndarray, index: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``Σ_j weights[l, j] · inputs_major[index[l, j], :]`` for (n, R) values stored input-major: (L, R) float64,
        :meth:`weighted_column_sums` without its transpose (for values computed input-major in the first place)."""
        from scipy.sparse import csr_matrix

        rows, width = index.shape
        weights64 = np.ascontiguousarray(weights, dtype=np.float64).ravel()
        selector = csr_matrix((weights64, np.ascontiguousarray(index).ravel(), np.arange(0, rows * width + 1, width)),
                              shape=(rows, inputs_major.shape[0]))
        return np.asarray(selector @ inputs_major, dtype=np.float64)

    def gather_pairs(self, values: np.ndarray, rows: Array, index: Array) -> np.ndarray:
        """``values[rows[:, None], index]``: shape (P, m)."""
        return values[self.index(rows)[:, None], self.index(index)]

    def sparse_concept_rows(self, concepts: np.ndarray, max_density: float) -> Any:
        """A concept matrix (n, C) as a float64 CSR matrix (C, n), one row per concept, when at most
        ``max_density`` of its entries are nonzero; else ``None`` (a dense GEMM is then the faster product)."""
        from scipy.sparse import csr_matrix

        if concepts.size == 0 or np.count_nonzero(concepts) > max_density * concepts.size:
            return None
        if concepts.flags.f_contiguous and not concepts.flags.c_contiguous:  # column-major (Parquet tables):
            columns, inputs = np.nonzero(concepts.T)  # scan in memory order, ~10x faster than across it
        else:
            inputs, columns = np.nonzero(concepts)
        values = np.asarray(concepts[inputs, columns], dtype=np.float64)
        return csr_matrix((values, (columns, inputs)), shape=(concepts.shape[1], concepts.shape[0]))

    def times_sparse_rows(self, units: np.ndarray, sparse: Any) -> np.ndarray:
        """``U Sᵀ``, i.e. Σ_i U[k, i]·S[t, i], from a unit-side matrix ``U`` (K', n) and a CSR ``S`` (C', n): (K', C')
        float64, K'·nnz(S) multiply-adds instead of the K'·n·C' of a dense GEMM, summed in float64 in the order of
        ``S``'s entries (:func:`neuroneval.metrics.sparse_kernels.rows_times_sparse`)."""
        from neuroneval.metrics.sparse_kernels import rows_times_sparse

        return rows_times_sparse(units, sparse)

    def index(self, values: Array) -> np.ndarray:
        return np.asarray(values, dtype=np.int64)


class TorchBackend:
    """Torch backend on ``device`` (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``)."""

    name = "torch"

    def __init__(self, device: Any) -> None:
        import torch

        self.torch = torch
        self.device = torch.device(device)
        self.float32 = torch.float32
        self.float64 = torch.float64
        self.int32 = torch.int32
        self.int64 = torch.int64

    def asarray(self, values: Any, dtype: Any = None) -> Any:
        torch = self.torch
        if isinstance(values, torch.Tensor):
            return values.to(device=self.device, dtype=dtype or values.dtype).contiguous()
        array = np.ascontiguousarray(values)
        tensor = torch.from_numpy(array).to(self.device)
        return tensor.to(dtype) if dtype is not None else tensor

    def to_numpy(self, values: Any) -> np.ndarray:
        return values.detach().cpu().numpy()

    def astype(self, values: Any, dtype: Any) -> Any:
        return values.to(dtype)

    def arange(self, stop: int) -> Any:
        return self.torch.arange(stop, device=self.device, dtype=self.torch.int64)

    def full(self, shape: tuple[int, ...], value: float, dtype: Any) -> Any:
        return self.torch.full(shape, value, dtype=dtype, device=self.device)

    def where(self, condition: Any, first: Any, second: Any) -> Any:
        torch = self.torch
        if not isinstance(first, torch.Tensor):
            first = torch.tensor(first, dtype=second.dtype, device=self.device)
        if not isinstance(second, torch.Tensor):
            second = torch.tensor(second, dtype=first.dtype, device=self.device)
        return torch.where(condition, first, second)

    def sum(self, values: Any, axis: int = -1) -> Any:
        return values.sum(dim=axis)

    def max(self, values: Any, axis: int = -1) -> Any:
        return values.amax(dim=axis)

    def min(self, values: Any, axis: int = -1) -> Any:
        return values.amin(dim=axis)

    def sqrt(self, values: Any) -> Any:
        return self.torch.sqrt(values)

    def log(self, values: Any) -> Any:
        return self.torch.log(values)

    def clip(self, values: Any, low: float | None, high: float | None) -> Any:
        return self.torch.clamp(values, low, high)

    def any(self, values: Any) -> bool:
        return bool(values.any().item())

    def all(self, values: Any, axis: int = -1) -> Any:
        return values.all(dim=axis)

    def moveaxis01(self, values: Any) -> Any:
        return values.transpose(0, 1)

    def broadcast_to(self, values: Any, shape: tuple[int, ...]) -> Any:
        return values.expand(shape).contiguous()

    def kth_largest(self, values: Any, k: int) -> Any:
        n = values.shape[-1]
        return self.torch.kthvalue(values, n - k + 1, dim=-1).values

    def sort(self, values: Any) -> tuple[Any, Any]:
        """Stable on every device (``stable=True``): equal values keep their input order, as in numpy."""
        result = self.torch.sort(values, dim=-1, stable=True)
        return result.values, result.indices

    def sort_any_order(self, values: Any) -> tuple[Any, Any]:
        result = self.torch.sort(values, dim=-1)
        return result.values, result.indices

    def run_bounds(self, sorted_values: Any) -> tuple[Any, Any]:
        n = sorted_values.shape[-1]
        positions = self.arange(n)
        starts = self.cummax(self.where(self.run_starts(sorted_values), positions, 0))
        ends = self.reverse_cummin(self.where(self.run_ends(sorted_values), positions, n - 1))
        return starts, ends

    def sort_values(self, values: Any) -> Any:
        return self.torch.sort(values, dim=-1).values

    def take_along(self, values: Any, index: Any) -> Any:
        return self.torch.gather(values, -1, index)

    def scatter_along(self, index: Any, values: Any) -> Any:
        return self.torch.empty_like(values).scatter_(-1, index, values)

    def run_starts(self, sorted_values: Any) -> Any:
        starts = self.torch.ones(sorted_values.shape, dtype=self.torch.bool, device=self.device)
        starts[..., 1:] = sorted_values[..., 1:] != sorted_values[..., :-1]
        return starts

    def run_ends(self, sorted_values: Any) -> Any:
        ends = self.torch.ones(sorted_values.shape, dtype=self.torch.bool, device=self.device)
        ends[..., :-1] = sorted_values[..., :-1] != sorted_values[..., 1:]
        return ends

    def cumsum(self, values: Any) -> Any:
        return self.torch.cumsum(values, dim=-1, dtype=values.dtype)

    def cummax(self, values: Any) -> Any:
        return self.torch.cummax(values, dim=-1).values

    def reverse_cummin(self, values: Any) -> Any:
        flipped = self.torch.flip(values, dims=(-1,))
        return self.torch.flip(self.torch.cummin(flipped, dim=-1).values, dims=(-1,))

    def take_rows(self, values: Any, rows: Array) -> Any:
        return values[self.index(rows)]

    def concatenate(self, blocks: list[Any]) -> Any:
        return self.torch.cat(blocks, dim=0)

    def nonzero(self, values: Any) -> tuple[Any, Any]:
        found = self.torch.nonzero(values)
        return found[:, 0], found[:, 1]

    def scatter_2d(self, shape: tuple[int, int], rows: Any, columns: Any, values: Any, fill: int) -> Any:
        out = self.torch.full(shape, fill, dtype=self.torch.int64, device=self.device)
        out[rows, columns] = values
        return out

    def gather_columns(self, values: Any, index: Array) -> Any:
        return values[:, self.index(index)]

    def weighted_column_sums(self, values: Any, index: Any, weights: Any) -> Any:
        return self.weighted_input_sums(values.T.contiguous(), index, weights)

    def weighted_input_sums(self, inputs_major: Any, index: Any, weights: Any) -> Any:
        return (inputs_major[self.index(index)].to(self.float64) * weights[..., None]).sum(dim=1)

    def gather_pairs(self, values: Any, rows: Array, index: Array) -> Any:
        return values[self.index(rows)[:, None], self.index(index)]

    def sparse_concept_rows(self, concepts: Any, max_density: float) -> None:
        """Never sparse: on a torch device the dense GEMM is the product (see NumpyBackend.sparse_concept_rows)."""
        return None

    def times_sparse_rows(self, units: Any, sparse: Any) -> Any:
        raise NotImplementedError("the torch backend keeps concepts dense (sparse_concept_rows returns None)")

    def index(self, values: Array) -> Any:
        torch = self.torch
        if isinstance(values, torch.Tensor):
            return values.to(device=self.device, dtype=torch.int64)
        return torch.as_tensor(np.asarray(values, dtype=np.int64), device=self.device)


Backend = NumpyBackend | TorchBackend


def get_backend(device: Any) -> Backend:
    """``None`` → numpy; anything else is a torch device (``"cpu"``, ``"cuda"``, ``torch.device(...)``)."""
    if device is None:
        return NumpyBackend()
    try:
        return TorchBackend(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device must be None (numpy) or a torch device such as 'cpu' or 'cuda', "
                         f"got {device!r}: {error}") from error
