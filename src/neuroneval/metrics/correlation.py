"""Pearson correlation, Spearman correlation and cosine similarity (000 Eq. 6, A.9, A.10).

All three are one float64 GEMM: the unit side is standardized (centred, unit norm; for cosine only unit
norm), the concept side enters raw and is scaled afterwards by 1/‖c − c̄‖ (1/‖c‖). Because each unit row
sums to zero, ``Σ (a − ā)(c − c̄) = Σ (a − ā) c``, so the concept side never has to be centred in memory.
Spearman is the same on centred rank rows.
"""

from __future__ import annotations

from typing import Any

from neuroneval.metrics.context import ConceptChunk, Context, Pairing
from neuroneval.metrics.features import concept_centred_ranks, inverse_norms, standardize, unit_centred_ranks


def reference_factor(ctx: Context, size: int) -> float:
    """The authors' Pearson carries a factor (n−1)/n (a biased covariance over unbiased deviations)."""
    return (size - 1) / size if ctx.params.ties == "reference" else 1.0


def _finish(ctx: Context, products: Any) -> Any:
    return ctx.be.clip(products, -1.0, 1.0) * reference_factor(ctx, ctx.n)


def correlation(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    be = ctx.be
    units = ctx.memo("standardized", lambda: standardize(be, ctx.unit_values(), ctx.notes))
    scale = chunk.memo("inverse_norms", lambda: inverse_norms(be, chunk.values(), ctx.notes))
    return _finish(ctx, pairing.dot(units, chunk.values()) * pairing.c(scale))


def spearman(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    be = ctx.be
    units = ctx.memo("standardized_ranks", lambda: standardize(be, unit_centred_ranks(ctx), ctx.notes))
    scale = chunk.memo("inverse_rank_norms", lambda: inverse_norms(be, concept_centred_ranks(chunk), ctx.notes))
    return _finish(ctx, pairing.dot(units, concept_centred_ranks(chunk)) * pairing.c(scale))


def cosine(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    be = ctx.be
    units = ctx.memo("normalized", lambda: standardize(be, ctx.unit_values(), ctx.notes, centre=False))
    scale = chunk.memo("inverse_plain_norms", lambda: inverse_norms(be, chunk.values(), ctx.notes, centre=False))
    return be.clip(pairing.dot(units, chunk.values()) * pairing.c(scale), -1.0, 1.0)
