"""WPMI (000 Eq. A.11) and MAD (000 Eq. 7), one float64 GEMM each.

WPMI = (1/|B(a)|) Σ_{i ∈ B(a)} log max(c_i, 1e-8) − λ·log max(mean(c), 1e-8): the GEMM of ``B(A)``
with ``log max(C, 1e-8)`` (when α is small, a gather over the active inputs of the logs computed input-major in
one pass over the concepts, :func:`~neuroneval.metrics.context.columns_of`; for 0/1 concepts, where
``log max(c, 1e-8) = log(1e-8)·(1 − c)``, from the true positives of :mod:`~neuroneval.metrics.confusion`).
Eq. A.11 sums over the active inputs; the mean divides by the same |B(a)| for every concept, so rankings of
concepts per unit are unchanged, and values stay comparable across α.

MAD = mean of a over B(c) − mean of a over not B(c). With each unit's activations centred (ā = 0), the
second mean is −S/(n − |B(c)|) where S = Σ_{B(c)} (a − ā), so MAD = S·n / (|B(c)|·(n − |B(c)|)): one GEMM,
and the centring removes the cancellation a raw difference of means would suffer.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from neuroneval.metrics.confusion import confusion
from neuroneval.metrics.context import AllPairs, ConceptChunk, Context, Pairing, columns_of
from neuroneval.metrics.edgecases import safe_divide
from neuroneval.metrics.features import (
    concept_positives,
    concept_product,
    few_active,
    sum_over_active,
    unit_active_index,
    unit_binary,
)

LOG_FLOOR = 1e-8
ZERO_MEAN = "concept(s) with mean 0: log mean(c) = log 0 is replaced by log 1e-8"
MAD_DEGENERATE = "concept(s) positive on no input or on every input: MAD is set to 0"


def wpmi(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """wpmi = (1/|B(a)|) Σ_{i∈B(a)} log max(c_i, 1e-8) − λ·log max(mean(c), 1e-8) (000 Eq. A.11, a mean instead of
    the sum); a 0/1 concept uses log max(c, 1e-8) = log(1e-8)·(1 − c), i.e. log(1e-8)·(|B(a)| − TP)/|B(a)|."""
    be = ctx.be

    def concept_logs() -> tuple[Any, Any]:
        values = chunk.values()
        means = be.sum(values, axis=-1) / ctx.n
        ctx.notes.check(be, means <= 0, ZERO_MEAN)
        return be.log(be.clip(values, LOG_FLOOR, None)), be.log(be.clip(means, LOG_FLOOR, None))

    def input_major_logs() -> tuple[Any, Any]:  # the gather's layout, in one pass (context.columns_of)
        logs, sums = columns_of(ctx.concepts, chunk.rows, _floor_log)
        means = be.asarray(sums / ctx.n)
        ctx.notes.check(be, means <= 0, ZERO_MEAN)
        return be.asarray(logs), be.log(be.clip(means, LOG_FLOOR, None))

    lam = pairing.u(ctx.row_lams()) if ctx.points else ctx.params.lam
    active = pairing.u(unit_binary(ctx)[1])
    if chunk.is_binary():  # log max(c, 1e-8) = log(1e-8)·(1 − c): the sum over B(a) is log(1e-8)·(|B(a)| − TP)
        positives = concept_positives(chunk)
        ctx.notes.check(be, positives == 0, ZERO_MEAN)
        log_means = be.log(be.clip(positives / ctx.n, LOG_FLOOR, None))
        true_positives = confusion(ctx, chunk, pairing)[0]
        return math.log(LOG_FLOOR) * (active - true_positives) / active - lam * pairing.c(log_means)
    if isinstance(pairing, AllPairs) and few_active(ctx):  # the gather reads the logs input-major
        logs, log_means = chunk.memo("wpmi_input_logs", input_major_logs)
        index, weights = unit_active_index(ctx)
        return be.weighted_input_sums(logs, index, weights) / active - lam * pairing.c(log_means)
    logs, log_means = chunk.memo("wpmi_logs", concept_logs)
    return sum_over_active(ctx, logs, pairing) / active - lam * pairing.c(log_means)


def _floor_log(block: np.ndarray) -> None:
    """log max(c, 1e-8) in place."""
    np.maximum(block, LOG_FLOOR, out=block)
    np.log(block, out=block)


def mad(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """mad = mean of a over B(c) − mean of a over not B(c) = n·Σ_{i∈B(c)}(a_i − ā) / (p(n − p)), p = |B(c)|
    (000 Eq. 7, Table A.2); 0 for a concept positive on no input or on every input (with a note)."""
    be = ctx.be

    def centred() -> Any:
        values = ctx.unit_values()
        return values - (be.sum(values, axis=-1) / ctx.n)[:, None]

    sums = concept_product(ctx, chunk, pairing, lambda: ctx.memo("centred", centred), "binary")
    positives = pairing.c(concept_positives(chunk))
    pairs = positives * (ctx.n - positives)
    ctx.notes.check(be, pairs == 0, MAD_DEGENERATE)
    return safe_divide(be, sums * ctx.n, pairs, 0.0)
