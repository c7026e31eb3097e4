"""Pearson correlation, Spearman correlation and cosine similarity (000 Eq. 6, A.9, A.10).

All three are one float64 GEMM: the unit side is standardized (centred, unit norm; for cosine only unit
norm), the concept side enters raw and is scaled afterwards by 1/‖c − c̄‖ (1/‖c‖). Because each unit row
sums to zero, ``Σ (a − ā)(c − c̄) = Σ (a − ā) c``, so the concept side never has to be centred in memory.
Spearman is the same on centred rank rows.
"""

from __future__ import annotations

from typing import Any

from neuroneval.metrics.context import ConceptChunk, Context, Pairing
from neuroneval.metrics.features import (
    ZERO_VARIANCE,
    concept_centred_ranks,
    concept_inverse_norms,
    concept_positives,
    concept_product,
    inverse_norms,
    unit_centred_rank_rows,
    unit_centred_ranks,
    unit_standardized,
)


def reference_factor(ctx: Context, size: int) -> float:
    """The authors' Pearson carries a factor (n−1)/n (a biased covariance over unbiased deviations)."""
    return ctx.ties.pearson_factor(size)


def _finish(ctx: Context, products: Any) -> Any:
    return ctx.be.clip(products, -1.0, 1.0) * reference_factor(ctx, ctx.n)


def correlation(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """correlation (Pearson): Σ(a − ā)(c − c̄) / √(Σ(a − ā)² Σ(c − c̄)²) (000 Eq. 6, Table A.2), one GEMM of
    standardized rows, clipped to [−1, 1]; 0 for a constant row (with a note); times ``(n − 1)/n`` where
    ``ctx.ties.covariance_factor`` (the authors' code)."""
    def units() -> Any:
        return unit_standardized(ctx, "standardized", lambda rows: ctx.unit_values()[rows])

    scale = concept_inverse_norms(chunk, centre=True)
    return _finish(ctx, concept_product(ctx, chunk, pairing, units, "values") * pairing.c(scale))


def spearman(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """spearman: Pearson of the ranks R(a), R(c) (000 Eq. A.9), average or noised stable ranks as
    ``ctx.ties`` says; 0/1 concepts use the closed form of their average ranks where
    ``ctx.ties.binary_closed_forms`` (:func:`_binary_rank_products`)."""
    be = ctx.be

    def units() -> Any:
        if ctx.keeps_features():  # the ranks are kept for other metrics anyway
            return unit_standardized(ctx, "standardized_ranks", lambda rows: unit_centred_ranks(ctx)[rows])
        return unit_standardized(ctx, "standardized_ranks", lambda rows: unit_centred_rank_rows(ctx, rows))

    if ctx.ties.binary_closed_forms and chunk.is_binary():
        return _finish(ctx, _binary_rank_products(ctx, chunk, pairing, units))
    scale = chunk.per_call("inverse_rank_norms", lambda: inverse_norms(be, concept_centred_ranks(chunk), ctx.notes))
    return _finish(ctx, pairing.dot(units(), concept_centred_ranks(chunk)) * pairing.c(scale))


def _binary_rank_products(ctx: Context, chunk: ConceptChunk, pairing: Pairing, units: Any) -> Any:
    """Σ_i u_i·r̂(c)_i for standardized unit ranks ``u`` and the standardized average ranks of binary concepts.

    With n₁ positives and n₀ = n − n₁ negatives, the centred average ranks of a 0/1 vector are −n₁/2 on the
    negatives and n₀/2 on the positives, i.e. (n/2)·c − n₁/2, with norm √(n₀·n₁·n/4): no concept is sorted, and
    the product with the units is the sparse Σ_i u_i·c_i plus (−n₁/2)·Σ_i u_i.
    """
    be, n = ctx.be, ctx.n
    positives = concept_positives(chunk)
    negatives = n - positives
    degenerate = positives * negatives == 0
    ctx.notes.check(be, degenerate, ZERO_VARIANCE)
    scale = be.where(degenerate, 0.0, 1.0 / be.sqrt(be.where(degenerate, 1.0, positives * negatives * n / 4.0)))
    row_sums = ctx.memo("standardized_ranks_sums", lambda: be.sum(units(), axis=-1))
    products = (n / 2.0) * concept_product(ctx, chunk, pairing, units, "binary")
    products = products - pairing.u(row_sums) * pairing.c(positives / 2.0)
    return products * pairing.c(scale)


def cosine(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """cosine = a·c / (‖a‖₂ ‖c‖₂) (000 Eq. A.10), one GEMM of row-normalized rows, clipped to [−1, 1]; 0 for an
    all-zero row (with a note)."""
    be = ctx.be

    def units() -> Any:
        return unit_standardized(ctx, "normalized", lambda rows: ctx.unit_values()[rows], centre=False)

    scale = concept_inverse_norms(chunk, centre=False)
    return be.clip(concept_product(ctx, chunk, pairing, units, "values") * pairing.c(scale), -1.0, 1.0)
