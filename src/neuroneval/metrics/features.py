"""Per-vector features shared by several kernels, cached once per call (units) or per chunk (concepts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from neuroneval.metrics.backend import Backend
from neuroneval.metrics.binarize import CONCEPT_THRESHOLD, EXACTLY_K, round_concepts, top_alpha
from neuroneval.metrics.context import SHARED_PREFIX, AllPairs, ConceptChunk, Context, Pairing
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.ranks import average_ranks, count_at_least

ALL_ACTIVE = ("top-α binarization marks every input active for some unit (constant activations, α·n ≥ n "
              "or ties at the cutoff); terms divided by the number of inactive inputs are set to 0")
ZERO_VARIANCE = "zero-variance vector(s): their correlation is set to 0"
ZERO_NORM = "all-zero vector(s): their cosine similarity is set to 0"


def unit_binary(ctx: Context) -> tuple[Any, Any]:
    """``B(a)`` of the call's units as float32 0/1 (K', n) and the active counts ``|B(a)|`` (float64).

    In a grid context (:class:`Context` ``points``) one block of K' rows per point, at that point's α: (g·K', n).
    """
    def compute() -> tuple[Any, Any]:
        be = ctx.be
        blocks = [unit_top_alpha(ctx, point.alpha) for point in ctx.grid_points()]
        if len(blocks) == 1:
            return blocks[0]
        return be.concatenate([bits for bits, _ in blocks]), be.concatenate([counts for _, counts in blocks])

    return ctx.memo("binary", compute)


def unit_top_alpha(ctx: Context, alpha: float) -> tuple[Any, Any]:
    """``B(a)`` at one α by the call's top-α rule, and its counts, kept with the units' α-free features (shared
    across calls). Only ``top_alpha="exactly_k"`` in reference mode reads the noised activations."""
    rule = ctx.params.top_alpha

    def compute() -> tuple[Any, Any]:
        be = ctx.be
        values = ctx.unit_values()
        noisy = ctx.unit_noisy_values() if rule == EXACTLY_K and ctx.ties.noised else None
        binary = by_row_blocks(ctx, values.shape[0], be.float32, lambda rows: top_alpha(
            be, values[rows], alpha, rule, None if noisy is None else noisy[rows]))
        counts = be.astype(be.sum(binary, axis=-1), be.float64)
        ctx.notes.check(be, counts == ctx.n, ALL_ACTIVE)
        return binary, counts

    return ctx.shared_memo(f"{SHARED_PREFIX}top_alpha:{rule}:{alpha!r}", compute)


#: Work elements per (row, input) of a row block of :func:`by_row_blocks` (a sort's transients are ~6 float64
#: copies; the same share as a concept of a chunk).
ROW_BLOCK_ELEMENTS = 4

#: Sum over the active inputs by gathering (instead of a GEMM with B(A)) when |B(a)|·SPARSE_FACTOR < n.
SPARSE_FACTOR = 24
#: ``B(c)`` of dense concepts (probabilities) is multiplied as a sparse matrix when at most this share of it is 1:
#: :func:`neuroneval.metrics.sparse_kernels.rows_times_sparse` then costs about what one float32 GEMM does at 7 %
#: (n = 50,000), against about three for the float64 GEMM it replaces (benchmarks/bench_paper_scale.py).
SPARSE_LABELS = 1 / 8


def positive_index(be: Backend, bits: Any, counts: Any) -> tuple[Any, Any]:
    """Positions of the ones of each row of a 0/1 matrix (R, n), padded with 0 to the largest count.

    Returns (index (R, m) int64, valid (R, m) bool), positions ascending within a row.
    """
    counts = be.astype(counts, be.int64)
    width = max(1, int(be.to_numpy(be.max(counts, axis=-1))) if counts.shape[0] else 1)
    rows, columns = be.nonzero(bits)
    starts = be.cumsum(counts) - counts
    slots = be.arange(int(rows.shape[0])) - starts[rows]
    index = be.scatter_2d((int(bits.shape[0]), width), rows, slots, columns, 0)
    valid = be.arange(width)[None, :] < counts[:, None]
    return index, valid


def unit_active_index(ctx: Context) -> tuple[Any, Any]:
    """Positions of each unit's active inputs, padded to the largest count: (index (K', m), weights (K', m))."""
    def compute() -> tuple[Any, Any]:
        be = ctx.be
        bits, counts = unit_binary(ctx)
        index, valid = positive_index(be, bits, counts)
        return index, be.astype(valid, be.float64)

    return ctx.memo("active_index", compute)


def few_active(ctx: Context) -> bool:
    """Whether every unit has so few active inputs (|B(a)|·SPARSE_FACTOR < n) that gathering them beats a GEMM."""
    def compute() -> bool:
        counts = unit_binary(ctx)[1]
        return int(ctx.be.to_numpy(ctx.be.max(counts, axis=-1))) * SPARSE_FACTOR < ctx.n

    return ctx.memo("few_active", compute)


def sum_over_active(ctx: Context, concept_side: Any, pairing: Pairing) -> Any:
    """Σ_{i ∈ B(a_k)} X[t, i] for the pairing's pairs, from a concept-side matrix X (C', n), in float64.

    A float64 GEMM with the 0/1 matrix B(A) in general; when every unit has few active inputs (top-α with
    small α) a gather of those inputs and a sum, which costs K·|B(a)|·C instead of K·n·C.
    """
    be = ctx.be
    if not few_active(ctx):
        return pairing.dot(unit_binary64(ctx), concept_side)
    index, weights = unit_active_index(ctx)
    if isinstance(pairing, AllPairs):
        return be.weighted_column_sums(concept_side, index, weights)
    return be.sum(pairing.gather_concepts(concept_side, index) * pairing.u3(weights), axis=-1)


def concept_sparse(chunk: ConceptChunk, which: str) -> Any:
    """The chunk's raw values (``which="values"``) or ``B(c)`` (``"binary"``) as a host CSR (C', n) matrix, or
    ``None`` when the concepts are too dense or the backend keeps them dense (:meth:`Context.sparse_concepts`)."""
    def compute() -> Any:
        values = chunk.sparse_values()
        if which == "values" or values is None or chunk.is_binary():
            return values
        binary = values.copy()
        binary.data = (binary.data >= CONCEPT_THRESHOLD).astype(np.float64)
        binary.eliminate_zeros()
        return binary

    return chunk.memo("sparse_" + which, compute)


def sparse_concept_product(ctx: Context, chunk: ConceptChunk, pairing: Pairing, unit_side: Callable[[], Any],
                           which: str) -> Any:
    """Σ_i U[k, i]·X[t, i] for all pairs, X the chunk's values or ``B(c)`` (``which``) kept sparse, or ``None``
    when the chunk is dense or the pairs are listed (then a dense product is the caller's)."""
    if not isinstance(pairing, AllPairs):
        return None
    sparse = concept_sparse(chunk, which)
    if sparse is None:
        return None
    return ctx.be.times_sparse_rows(unit_side(), sparse)


def concept_binary_rows(chunk: ConceptChunk) -> Any:
    """``B(c)`` of a chunk as a host CSR (C', n) when at most :data:`SPARSE_LABELS` of it is 1, also where the
    concept values themselves are dense (probabilities, of which few reach 0.5); ``None`` otherwise or where the
    backend keeps concepts dense. Built once per call (:meth:`ConceptChunk.per_call`), so later unit blocks do not
    read the chunk's values again."""
    sparse = concept_sparse(chunk, "binary")
    if sparse is not None:
        return sparse

    def compute() -> Any:
        bits = chunk.host_values() >= CONCEPT_THRESHOLD
        return chunk.ctx.be.sparse_concept_rows(bits.T, SPARSE_LABELS)

    return chunk.per_call("binary_rows", compute)


def concept_product(ctx: Context, chunk: ConceptChunk, pairing: Pairing, unit_side: Callable[[], Any],
                    which: str) -> Any:
    """Σ_i U[k, i]·X[t, i] for the pairing's pairs: sparse (:func:`sparse_concept_product`; for ``B(c)`` also
    where only the labels are sparse, :func:`concept_binary_rows`) when it can be, else one dense GEMM (all pairs)
    or row products (listed pairs)."""
    product = sparse_concept_product(ctx, chunk, pairing, unit_side, which)
    if product is not None:
        return product
    if which == "binary" and isinstance(pairing, AllPairs):
        labels = concept_binary_rows(chunk)
        if labels is not None:
            return ctx.be.times_sparse_rows(unit_side(), labels)
    dense = chunk.values() if which == "values" else concept_binary64(chunk)
    return pairing.dot(unit_side(), dense)


def concept_inverse_norms(chunk: ConceptChunk, *, centre: bool) -> Any:
    """1/‖c − c̄‖ (``centre``) or 1/‖c‖ of the chunk's concepts, 0 for degenerate ones (see :func:`inverse_norms`),
    once per call (:meth:`ConceptChunk.per_call`).

    On a sparse chunk the centred sum of squares is Σ_{c_i ≠ 0} (c_i − c̄)² + (n − nnz)·c̄², exact without
    forming the dense centred rows; a row is constant only when it has no nonzero or only equal nonzeros at
    every input.
    """
    def compute() -> Any:
        ctx = chunk.ctx
        sparse = concept_sparse(chunk, "values")
        if sparse is None:
            return inverse_norms(ctx.be, chunk.values(), ctx.notes, centre=centre)
        n = ctx.n
        counts = np.diff(sparse.indptr)
        row_of_entry = np.repeat(np.arange(counts.size), counts)
        if centre:
            means = np.bincount(row_of_entry, weights=sparse.data, minlength=counts.size) / n
            squares = np.bincount(row_of_entry, weights=(sparse.data - means[row_of_entry]) ** 2,
                                  minlength=counts.size) + (n - counts) * means ** 2
            spread = np.zeros(counts.size)
            nonempty = counts > 0
            if nonempty.any():
                starts = sparse.indptr[:-1][nonempty]
                spread[nonempty] = np.maximum.reduceat(sparse.data, starts) - np.minimum.reduceat(sparse.data, starts)
            degenerate = (counts == 0) | ((counts == n) & (spread == 0))
        else:
            squares = np.bincount(row_of_entry, weights=sparse.data ** 2, minlength=counts.size)
            degenerate = counts == 0
        norms = np.sqrt(squares)
        degenerate = degenerate | (norms == 0)
        ctx.notes.check(ctx.be, ctx.be.asarray(degenerate), ZERO_VARIANCE if centre else ZERO_NORM)
        return ctx.be.asarray(np.where(degenerate, 0.0, 1.0 / np.where(degenerate, 1.0, norms)))

    return chunk.per_call("inverse_norms" if centre else "inverse_plain_norms", compute)


def unit_binary64(ctx: Context) -> Any:
    return ctx.memo("binary64", lambda: ctx.be.astype(unit_binary(ctx)[0], ctx.be.float64))


def concept_binary(chunk: ConceptChunk) -> tuple[Any, Any]:
    """``B(c)`` of the chunk as float32 0/1 (C', n) and the positive counts ``|B(c)|`` (float64)."""
    def compute() -> tuple[Any, Any]:
        be = chunk.ctx.be
        binary = round_concepts(be, chunk.values())
        return binary, be.astype(be.sum(binary, axis=-1), be.float64)

    return chunk.memo("binary", compute)


def concept_positives(chunk: ConceptChunk) -> Any:
    """``|B(c)|`` of the chunk's concepts (float64), once per call: from the sparse form when there is one."""
    def compute() -> Any:
        binary = concept_sparse(chunk, "binary")
        if binary is None:
            return concept_binary(chunk)[1]
        return chunk.ctx.be.asarray(np.diff(binary.indptr).astype(np.float64))

    return chunk.per_call("positives", compute)


def concept_binary64(chunk: ConceptChunk) -> Any:
    return chunk.memo("binary64", lambda: chunk.ctx.be.astype(concept_binary(chunk)[0], chunk.ctx.be.float64))


def _centred(be: Backend, ranks: Any) -> Any:
    n = ranks.shape[-1]
    return ranks - (n + 1) / 2.0


def centred_ranks(ctx: Context, values: Any) -> Any:
    """Ranks of each row of ``values`` minus their mean (n+1)/2, by ``ctx.ties``: average ties of exactly-float32
    rows on the numpy backend by one compiled sort per row
    (:func:`neuroneval.metrics.rank_kernels.centred_average_ranks`, the same half-integers), otherwise
    :meth:`~neuroneval.metrics.ties.TieRule.ranks` then centred."""
    if not ctx.ties.noised and ctx.be.name == "numpy":
        from neuroneval.metrics.rank_kernels import centred_average_ranks

        ranks = centred_average_ranks(values)
        if ranks is not None:
            return ranks
    return _centred(ctx.be, ctx.ties.ranks(ctx.be, values))


def unit_centred_ranks(ctx: Context) -> Any:
    """Ranks of each unit's activations minus their mean (n+1)/2; average or reference ties."""
    def compute() -> Any:
        be = ctx.be
        if not ctx.ties.noised and ctx.keeps_features():
            return _centred(be, average_ranks(be, ctx.unit_values(), unit_sorted(ctx)))
        return by_row_blocks(ctx, ctx.unit_rows.size, be.float64, lambda rows: unit_centred_rank_rows(ctx, rows))

    return ctx.memo("centred_ranks", compute)


def unit_centred_rank_rows(ctx: Context, rows: slice) -> Any:
    """:func:`unit_centred_ranks` of a block of the call's units (one sort of just those rows)."""
    values = ctx.unit_noisy_values() if ctx.ties.noised else ctx.unit_values()
    return centred_ranks(ctx, values[rows])


def unit_standardized(ctx: Context, key: str, source_rows: Callable[[slice], Any], *, centre: bool = True) -> Any:
    """Rows of ``source_rows`` (a unit-side feature for a block of rows) standardized (:func:`standardize`), built
    in row blocks so that only the result is held, kept under ``key``."""
    def compute() -> Any:
        be = ctx.be
        return by_row_blocks(ctx, ctx.unit_rows.size, be.float64,
                             lambda rows: standardize(be, source_rows(rows), ctx.notes, centre=centre))

    return ctx.memo(key, compute)


def unit_sorted(ctx: Context) -> tuple[Any, Any]:
    """Each unit's activations sorted and their order (ties in any order): one sort for ranks and counts, kept
    for later calls (only computed when a :class:`FeatureCache` keeps features, see :meth:`Context.keeps_features`)."""
    return ctx.memo("sorted", lambda: ctx.be.sort_any_order(ctx.unit_values()))


def unit_counts_at_least(ctx: Context) -> Any:
    """``#{j : a_kj ≥ a_ki}`` for every unit and input (int64, (K', n)): one sort per unit for all concept chunks."""
    def compute() -> Any:
        be, values = ctx.be, ctx.unit_values()
        if ctx.keeps_features():
            return count_at_least(be, values, unit_sorted(ctx))
        return by_row_blocks(ctx, values.shape[0], be.int64, lambda rows: count_at_least(be, values[rows]))

    return ctx.memo("at_least", compute)


def by_row_blocks(ctx: Context, n_rows: int, dtype: Any, compute: Callable[[slice], Any]) -> Any:
    """A (n_rows, n) feature computed ``compute(rows)`` for blocks of rows (a ``slice``), so that the transients
    of a row-wise computation (sorts, partitions) stay within the call's ``work_elements``: a block has
    ``work_elements / (ROW_BLOCK_ELEMENTS·n)`` rows, as a concept chunk does. The result is the same as one call on
    all rows."""
    step = max(1, ctx.work_elements // (ROW_BLOCK_ELEMENTS * max(1, ctx.n)))
    if n_rows <= step:
        return ctx.be.astype(compute(slice(0, n_rows)), dtype)
    out = ctx.be.full((n_rows, ctx.n), 0, dtype)
    for start in range(0, n_rows, step):
        rows = slice(start, min(n_rows, start + step))
        out[rows] = compute(rows)
    return out


def concept_centred_ranks(chunk: ConceptChunk) -> Any:
    """Centred ranks of the chunk's concepts (float64), average or reference ties; sorted once per call, in row
    blocks (:func:`by_row_blocks`). With :attr:`Context.compact_ranks` the call keeps each input's first sorted place
    of its tie run (uint16, :func:`neuroneval.metrics.rank_kernels.tie_firsts`) and every unit block decodes the
    same ranks from it."""
    ctx = chunk.ctx
    if ctx.compact_ranks:
        from neuroneval.metrics.rank_kernels import centred_ranks_from_firsts, tie_firsts

        store_key = ("tie_firsts", chunk.rows.tobytes())
        if store_key not in ctx.concept_store:
            firsts = tie_firsts(ctx.be.to_numpy(chunk.values()))
            if firsts is not None:
                ctx.concept_store[store_key] = firsts
        if store_key in ctx.concept_store:
            return chunk.memo("centred_ranks", lambda: centred_ranks_from_firsts(ctx.concept_store[store_key]))

    def rows_of_ranks(rows: slice) -> Any:
        values = chunk.noisy_values() if ctx.ties.noised else chunk.values()
        return centred_ranks(ctx, values[rows])

    def compute() -> Any:
        if not ctx.ties.noised and ctx.be.name == "numpy":  # compiled: no transients beyond a row buffer per thread
            from neuroneval.metrics.rank_kernels import centred_average_ranks

            ranks = centred_average_ranks(chunk.values())
            if ranks is not None:
                return ranks
        return by_row_blocks(ctx, chunk.rows.size, ctx.be.float64, rows_of_ranks)

    return chunk.stored("centred_ranks", compute, ctx.be.float64)


def concept_counts_at_least(chunk: ConceptChunk) -> Any:
    """``#{j : c_tj ≥ c_ti}`` for the chunk's concepts (int64, (C', n)); sorted once per call, in row blocks."""
    ctx = chunk.ctx

    def compute() -> Any:
        return by_row_blocks(ctx, chunk.rows.size, ctx.be.int64,
                             lambda rows: count_at_least(ctx.be, chunk.values()[rows]))

    return chunk.stored("at_least", compute, ctx.be.int64)


def inverse_norms(be: Backend, values: Any, notes: Notes, *, centre: bool = True) -> Any:
    """1/‖x − x̄‖ (``centre``) or 1/‖x‖ of every row, 0 for degenerate rows (recorded as a note).

    A row is degenerate when it is constant (``centre=True``; tested exactly as "every value equals the
    first", so rounding in the mean cannot fake a variance) or all zero (``centre=False``).
    """
    n = values.shape[-1]
    if centre:
        shifted = values - (be.sum(values, axis=-1) / n)[..., None]
        degenerate = be.all(values == values[..., :1], axis=-1)
    else:
        shifted = values
        degenerate = be.all(values == 0, axis=-1)
    norms = be.sqrt(be.sum(shifted * shifted, axis=-1))
    degenerate = degenerate | (norms == 0)
    notes.check(be, degenerate, ZERO_VARIANCE if centre else ZERO_NORM)
    return be.where(degenerate, 0.0, 1.0 / be.where(degenerate, 1.0, norms))


def standardize(be: Backend, values: Any, notes: Notes, *, centre: bool = True) -> Any:
    """Rows centred (when ``centre``) and scaled to unit norm; degenerate rows become 0 (see inverse_norms)."""
    scale = inverse_norms(be, values, notes, centre=centre)
    if centre:
        values = values - (be.sum(values, axis=-1) / values.shape[-1])[..., None]
    return values * scale[..., None]
