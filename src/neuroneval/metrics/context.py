"""What a kernel sees: the parameters, the units, one chunk of concepts, and how pairs are formed.

A kernel computes ``s(a_k, c_t)`` for a block of (unit, concept) pairs. The block is either *all* pairs of
the call's units and the current concept chunk (:class:`AllPairs`, result (K, C_chunk)) or a list of
(unit, concept) pairs (:class:`ListedPairs`, result (P,)). Kernels are written once against the small
pairing interface (``dot``, ``u``, ``c``, ``gather_*``), so ``score`` and ``score_pairs`` share every formula.
Unit-side features (binarizations, ranks, standardized rows) are computed once per call and cached on
:class:`Context`; concept-side features are cached on the :class:`ConceptChunk`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neuroneval.metrics.backend import Backend
from neuroneval.metrics.binarize import TopAlphaRule
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.streams import stream_rows
from neuroneval.metrics.ties import TieMode, TieRule, tie_rule

#: Elements of the largest temporary a kernel may build (float64: 128 MiB).
WORK_ELEMENTS = 2**24

# Stream ids of numpy.random.default_rng([seed, stream]) for each random quantity of a call.
STREAM_TR_TOP = 1
STREAM_TR_RANDOM = 2
STREAM_UNIT_NOISE = 3
STREAM_CONCEPT_NOISE = 4
STREAM_TR_BINARY = 5

#: A concept matrix with at most this fraction of nonzero entries is kept sparse (numpy backend): products with
#: the unit side then cost K'·nnz instead of the K'·n·C' of a dense GEMM (one-hot labels: next tokens, classes).
SPARSE_CONCEPTS = 1 / 32

#: Unit-side cache keys starting with this are shared like ALPHA_FREE_UNIT_FEATURES (they name their α).
SHARED_PREFIX = "shared:"

#: Unit-side cache keys that depend on no parameter a grid varies (α, λ): shared by a grid's contexts.
ALPHA_FREE_UNIT_FEATURES = frozenset({"host_values", "values", "noisy_values", "centred_ranks",
                                      "standardized", "standardized_ranks", "normalized", "centred", "at_least",
                                      "standardized_ranks_sums", "sorted"})


@dataclass(frozen=True)
class Params:
    """Resolved, validated parameters of one call (see ``help(neuroneval.metrics.score)``)."""

    alpha: float
    lam: float
    tr_top_fraction: float
    tr_n_top: int
    tr_n_random: int
    ties: TieMode
    seed: int
    chunk_size: int | None
    top_alpha: TopAlphaRule = "at_least_kth"
    memory_budget: int | str = "auto"


def _is_range(columns: np.ndarray) -> bool:
    """Whether ``columns`` are consecutive ascending indices (then a slice reads them, with no fancy-index copy)."""
    return bool(columns.size > 0 and columns[-1] - columns[0] + 1 == columns.size and np.all(np.diff(columns) == 1))


def rows_of(matrix: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """``matrix[:, columns].T`` as a C-contiguous float64 array, cast and transposed in cache-sized blocks."""
    n = matrix.shape[0]
    contiguous = _is_range(columns)
    source = matrix[:, columns[0]:columns[-1] + 1] if contiguous else matrix[:, columns]
    out = np.empty((columns.size, n), dtype=np.float64)
    block = 256
    for start in range(0, n, block):
        out[:, start:start + block] = source[start:start + block].T
    return out


def columns_of(matrix: np.ndarray, columns: np.ndarray, transform: Callable[[np.ndarray], None],
               block: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """``transform(matrix[:, columns])`` as a C-contiguous float64 (n, C') array, input-major, and the column sums
    of the untransformed float64 values (C',), in blocks of ``block`` inputs: one read of the columns and one write,
    where :func:`rows_of` and a transform would pass over n·C' float64 values three times and a transpose a fourth.

    ``transform`` works in place on a float64 block (e.g. ``np.log`` of a clip)."""
    n = matrix.shape[0]
    contiguous = _is_range(columns)
    out = np.empty((n, columns.size), dtype=np.float64)
    sums = np.zeros(columns.size, dtype=np.float64)
    for start in range(0, n, block):
        part = out[start:start + block]
        rows = matrix[start:start + block]
        part[...] = rows[:, columns[0]:columns[-1] + 1] if contiguous else rows[:, columns]
        sums += part.sum(axis=0)
        transform(part)
    return out, sums


def _noise(seed: int, stream: int, rows: int, n: int) -> np.ndarray:
    """U[0, 1) as float32 for rows 0…rows−1 of a stream (see :func:`noise_rows`)."""
    return noise_rows(seed, stream, np.arange(rows), n)


def noise_rows(seed: int, stream: int, rows: np.ndarray, n: int) -> np.ndarray:
    """Reference-mode noise U[0, 1) as float32 for the given rows (units or concepts) only; row r is the same
    whatever else is drawn (:func:`neuroneval.metrics.streams.stream_rows`)."""
    return stream_rows(seed, stream, rows, n, dtype=np.float32, block_elements=WORK_ELEMENTS // 4)


def _nbytes(value: Any) -> int:
    """Memory held by a cached feature: arrays and tensors (also inside tuples); 0 for scalars."""
    if isinstance(value, tuple):
        return sum(_nbytes(part) for part in value)
    if hasattr(value, "nbytes"):
        return int(value.nbytes)
    if hasattr(value, "element_size") and hasattr(value, "numel"):
        return int(value.element_size() * value.numel())
    return 0


class FeatureCache:
    """Unit-side features kept across scoring calls on one activations matrix, up to ``max_bytes``.

    Every call of :func:`neuroneval.metrics.score` prepares its units — float64 rows, ranks, standardized
    rows, top-α binarizations — before it meets a concept. Scoring many metrics on the same units (a
    meta-evaluation scores 18) repeats that work; passing one cache as ``cache=`` to each call shares it.
    Entries are keyed by the units, tie mode, seed and device; the least recently used are dropped first
    when the cache would exceed ``max_bytes``. A cache belongs to one activations matrix: the same object passed
    to every call (an array, or a DataFrame whatever copy of its values a call makes);
    the edge-case notes a feature raised are replayed when it is reused, so warnings do not change.
    """

    def __init__(self, max_bytes: int = 2**32) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = int(max_bytes)
        self.bytes = 0
        self._entries: OrderedDict[tuple[Any, ...], tuple[Any, tuple[str, ...], int]] = OrderedDict()
        self._activations: Any = None
        self._concepts: Any = None
        self._concept_features: dict[str, Any] = {}

    def view(self, activations: Any, group: tuple[Any, ...]) -> CacheView:
        """The entries of one group of calls (same units, ties, seed, device) on ``activations``."""
        if self._activations is None:
            self._activations = activations
        elif activations is not self._activations:
            raise ValueError("a FeatureCache belongs to one activations matrix (the same array object); "
                             "create a new cache for other activations")
        return CacheView(self, group)

    def concept_feature(self, concepts: Any, key: str, compute: Callable[[], Any]) -> Any:
        """A feature of a whole concept matrix (its sparse form), kept while calls pass
        the same matrix object. Only the last matrix's features are kept, outside the ``max_bytes`` budget."""
        if concepts is not self._concepts:
            self._concepts, self._concept_features = concepts, {}
        if key not in self._concept_features:
            self._concept_features[key] = compute()
        return self._concept_features[key]

    def get(self, key: tuple[Any, ...]) -> tuple[Any, tuple[str, ...]] | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0], entry[1]

    def put(self, key: tuple[Any, ...], value: Any, notes: tuple[str, ...]) -> None:
        size = _nbytes(value)
        if size > self.max_bytes:
            return
        if key in self._entries:
            self.bytes -= self._entries.pop(key)[2]
        self._entries[key] = (value, notes, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            self.bytes -= self._entries.popitem(last=False)[1][2]


@dataclass
class CacheView:
    """The entries of one (units, ties, seed, device) group of a :class:`FeatureCache`."""

    cache: FeatureCache
    group: tuple[Any, ...]

    def lookup(self, key: str) -> tuple[Any, tuple[str, ...]] | None:
        return self.cache.get((self.group, key))

    def store(self, key: str, value: Any, notes: tuple[str, ...]) -> None:
        self.cache.put((self.group, key), value, notes)


@dataclass
class Context:
    """Inputs and cached unit-side features of one call.

    ``activations`` and ``concepts`` are the full host matrices (n, K) and (n, C); ``unit_rows`` are the
    units this call scores (all of them for ``score``, the listed ones for ``score_pairs``).

    ``points`` (empty: just ``params``) stacks several parameter settings that differ only in α and λ
    (:func:`neuroneval.metrics.score_grid`): the kernel's unit side then has one block of ``len(unit_rows)``
    rows per point, in order, built from the shared unit values by :func:`neuroneval.metrics.features.unit_binary` and
    :meth:`row_lams`,
    so one pass over a concept chunk scores every point.

    ``ties`` is the call's tie convention resolved once (:class:`~neuroneval.metrics.ties.TieRule`): kernels read
    its facts instead of comparing the mode's name.

    ``work_elements`` bounds the elements of a kernel's largest temporary (the memory budget's share,
    :mod:`neuroneval.metrics.budget`); ``concept_store`` keeps features of the whole concept matrix (its sparse
    form) for every unit block of one call and, when ``store_concepts``, the costly features of each concept
    chunk (ranks, counts; :meth:`ConceptChunk.stored`), so later unit blocks do not sort the concepts again;
    ``compact_ranks``: kept concept ranks are compact (uint16 tie-run starts,
    :func:`neuroneval.metrics.features.concept_centred_ranks`).
    """

    be: Backend
    params: Params
    notes: Notes
    activations: np.ndarray
    concepts: np.ndarray
    unit_rows: np.ndarray
    points: tuple[Params, ...] = ()
    work_elements: int = WORK_ELEMENTS
    concept_store: dict[Any, Any] = field(default_factory=dict)
    store_concepts: bool = False
    compact_ranks: bool = False
    _cache: dict[str, Any] = field(default_factory=dict)
    _shared: dict[str, Any] | CacheView = field(default_factory=dict)
    _shared_keys: frozenset[str] = frozenset()
    ties: TieRule = field(init=False)

    def __post_init__(self) -> None:
        self.ties = tie_rule(self.params.ties)

    @property
    def n(self) -> int:
        return int(self.activations.shape[0])

    def grid_points(self) -> tuple[Params, ...]:
        """The parameter settings stacked on the unit side (just ``params`` outside a grid)."""
        return self.points or (self.params,)

    def row_lams(self) -> Any:
        """λ of each unit-side row of a grid context, a (points·K',) vector on the device."""
        lams = np.repeat([point.lam for point in self.points], self.unit_rows.size).astype(np.float64)
        return self.memo("row_lams", lambda: self.be.asarray(lams))

    def share(self, cache: dict[str, Any] | CacheView, keys: frozenset[str]) -> None:
        """Keep the features named in ``keys`` in ``cache``, shared with other contexts of the same units."""
        self._shared, self._shared_keys = cache, keys

    def keeps_features(self) -> bool:
        """Whether unit features go to a :class:`FeatureCache` for later calls (then intermediates such as the sorted
        activations are kept too, for other metrics); otherwise features are built in row blocks, keeping only
        what the kernel reads."""
        return isinstance(self._shared, CacheView)

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        if key in self._shared_keys or key.startswith(SHARED_PREFIX):
            return self.shared_memo(key, compute)
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def shared_memo(self, key: str, compute: Callable[[], Any]) -> Any:
        """A feature of the units alone, shared with other contexts of the same units (grid passes, and the
        calls of a :class:`FeatureCache`); the notes it raised are replayed on reuse."""
        if isinstance(self._shared, CacheView):
            found = self._shared.lookup(key)
            if found is not None:
                for message in found[1]:
                    self.notes.add(message)
                return found[0]
            before = set(self.notes.messages())
            value = compute()
            self._shared.store(key, value, tuple(m for m in self.notes.messages() if m not in before))
            return value
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]

    def sparse_concepts(self) -> Any:
        """The whole concept matrix as a host CSR (C, n), one row per concept, when at most
        :data:`SPARSE_CONCEPTS` of it is nonzero and the backend multiplies sparse matrices; else ``None``."""
        def compute() -> Any:
            return self.be.sparse_concept_rows(self.concepts, SPARSE_CONCEPTS)

        if isinstance(self._shared, CacheView):
            return self._shared.cache.concept_feature(self.concepts, "sparse", compute)
        if "sparse" not in self.concept_store:
            self.concept_store["sparse"] = compute()
        return self.concept_store["sparse"]

    def host_unit_values(self) -> np.ndarray:
        """Activations of the call's units, unit-major (K', n) float64 on the host."""
        return self.memo("host_values", lambda: rows_of(self.activations, self.unit_rows))

    def unit_values(self) -> Any:
        """Activations of the call's units, unit-major (K', n) float64 on the device."""
        return self.memo("values", lambda: self.be.asarray(self.host_unit_values()))

    def unit_noisy_values(self) -> Any:
        """Reference-mode noised activations (float32, (K', n)); the noise of unit k depends only on the seed."""
        def compute() -> Any:
            from neuroneval.metrics.ranks import noisy_values

            noise = noise_rows(self.params.seed, STREAM_UNIT_NOISE, self.unit_rows, self.n)
            return self.be.asarray(noisy_values(self.host_unit_values(), noise))

        return self.memo("noisy_values", compute)


@dataclass
class ConceptChunk:
    """A block of concepts (global column indices ``rows``) with its cached features."""

    ctx: Context
    rows: np.ndarray
    _cache: dict[str, Any] = field(default_factory=dict)

    def memo(self, key: str, compute: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def stored(self, key: str, compute: Callable[[], Any], dtype: Any) -> Any:
        """A costly feature of the chunk (ranks, counts: exact in float32 below 2**23 inputs), computed once per
        call: with :attr:`Context.store_concepts` its float32 copy goes to the call's concept store and later
        unit blocks read it back as ``dtype`` instead of computing it again."""
        def build() -> Any:
            ctx = self.ctx
            if not ctx.store_concepts:
                return compute()
            store_key = ("stored", key, self.rows.tobytes())
            if store_key in ctx.concept_store:
                return ctx.be.astype(ctx.concept_store[store_key], dtype)
            value = compute()
            ctx.concept_store[store_key] = ctx.be.astype(value, ctx.be.float32)
            return value

        return self.memo(key, build)

    def per_call(self, key: str, compute: Callable[[], Any]) -> Any:
        """A small feature of the chunk (a number per concept: norms), computed once per call whatever the unit
        blocks: kept in the call's concept store, so later blocks do not pass over the chunk's values again."""
        def build() -> Any:
            store_key = ("per_call", key, self.rows.tobytes())
            if store_key not in self.ctx.concept_store:
                self.ctx.concept_store[store_key] = compute()
            return self.ctx.concept_store[store_key]

        return self.memo(key, build)

    def host_values(self) -> np.ndarray:
        """Concept values, concept-major (C', n) float64 on the host."""
        return self.memo("host", lambda: rows_of(self.ctx.concepts, self.rows))

    def values(self) -> Any:
        return self.memo("values", lambda: self.ctx.be.asarray(self.host_values()))

    def noisy_values(self) -> Any:
        def compute() -> Any:
            from neuroneval.metrics.ranks import noisy_values

            noise = noise_rows(self.ctx.params.seed, STREAM_CONCEPT_NOISE, self.rows, self.ctx.n)
            return self.ctx.be.asarray(noisy_values(self.host_values(), noise))

        return self.memo("noisy_values", compute)

    def sparse_values(self) -> Any:
        """The chunk's rows of :meth:`Context.sparse_concepts` (CSR (C', n)), or ``None`` when that is dense."""
        def compute() -> Any:
            whole = self.ctx.sparse_concepts()
            return None if whole is None else whole[self.rows]

        return self.memo("sparse_values", compute)

    def is_binary(self) -> bool:
        """Whether every value of the chunk is exactly 0 or 1 (labels rather than probabilities)."""
        def compute() -> bool:
            sparse = self.sparse_values()
            if sparse is not None:
                return bool(np.all(sparse.data == 1))
            host = self.host_values()
            return bool(np.all((host == 0) | (host == 1)))

        return self.per_call("is_binary", compute)


class AllPairs:
    """Every (unit, concept) pair of the call's units and one concept chunk; results are (K', C')."""

    def __init__(self, be: Backend) -> None:
        self.be = be

    def dot(self, unit_side: Any, concept_side: Any) -> Any:
        return unit_side @ concept_side.T

    def u(self, unit_vector: Any) -> Any:
        return unit_vector[:, None]

    def c(self, concept_vector: Any) -> Any:
        return concept_vector[None, :]

    def gather_concepts(self, concept_values: Any, unit_index: Any) -> Any:
        """Concept values at unit-specific inputs: (C', n) × (K', m) → (K', C', m)."""
        return self.be.moveaxis01(self.be.gather_columns(concept_values, unit_index))

    def gather_units(self, unit_values: Any, concept_index: Any) -> Any:
        """Unit values at concept-specific inputs: (K', n) × (C', m) → (K', C', m)."""
        return self.be.gather_columns(unit_values, concept_index)

    def u3(self, unit_rows: Any) -> Any:
        """Unit-side rows (K', m) broadcast against gathered blocks: (K', 1, m)."""
        return unit_rows[:, None, :]

    def c3(self, concept_rows: Any) -> Any:
        return concept_rows[None, :, :]


class ListedPairs:
    """Listed pairs: ``units[i]`` (positions in the call's units) with ``concepts[i]`` (positions in the chunk)."""

    def __init__(self, be: Backend, units: np.ndarray, concepts: np.ndarray) -> None:
        self.be = be
        self.units = be.index(units)
        self.concepts = be.index(concepts)

    def dot(self, unit_side: Any, concept_side: Any) -> Any:
        return self.be.sum(unit_side[self.units] * concept_side[self.concepts], axis=-1)

    def u(self, unit_vector: Any) -> Any:
        return unit_vector[self.units]

    def c(self, concept_vector: Any) -> Any:
        return concept_vector[self.concepts]

    def gather_concepts(self, concept_values: Any, unit_index: Any) -> Any:
        return self.be.gather_pairs(concept_values, self.concepts, unit_index[self.units])

    def gather_units(self, unit_values: Any, concept_index: Any) -> Any:
        return self.be.gather_pairs(unit_values, self.units, concept_index[self.concepts])

    def u3(self, unit_rows: Any) -> Any:
        return unit_rows[self.units]

    def c3(self, concept_rows: Any) -> Any:
        return concept_rows[self.concepts]


Pairing = AllPairs | ListedPairs
