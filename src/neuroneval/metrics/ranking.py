"""AUC, inverse AUC, AUPRC and inverse AUPRC (000 Eq. A.7–A.8, App. A.3 items 10–11).

AUC (Mann–Whitney) with label ``y`` and score ``x``: with ranks ``R(x)`` centred at (n+1)/2,
``AUC = ½ + Σ_{y_i=1} R'(x)_i / (|y|·(n − |y|))``, so all pairs cost one float64 GEMM of the 0/1 label
matrix with the centred rank matrix (integers and halves: exact). For a binary concept table the ranks of
``c`` are known in closed form and ``AUC = (TP·TN + ½(TP·FP + FN·TN)) / (|B(a)|·(n − |B(a)|))``.

AUPRC is step-wise average precision with ties grouped at unique thresholds, exactly
``sklearn.metrics.average_precision_score``::

    AP = (1/|y|) Σ_{i: y_i=1} TP(x ≥ x_i) / N(x ≥ x_i)

where ``N(x ≥ x_i)`` counts all inputs scoring at least ``x_i`` and ``TP(x ≥ x_i)`` the positives among
them. ``N`` is one sort per score vector. ``TP`` is computed either *sparsely* — gather ``N`` at the ``|y|``
positives of each label, sort those short rows, read ``TP`` off the sorted position — when labels have few
positives (top-α units), or *densely* — sort each score vector once and scan cumulative sums of all labels
at once — when they have many. For a binary concept table the two thresholds give the closed form
``AP = R₁·P₁ + (1 − R₁)·|y|/n`` with ``R₁ = TP/|y|`` and ``P₁ = TP/|B(c)|``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from neuroneval.metrics.backend import Backend
from neuroneval.metrics.confusion import confusion
from neuroneval.metrics.context import AllPairs, ConceptChunk, Context, Pairing
from neuroneval.metrics.edgecases import safe_divide
from neuroneval.metrics.features import (
    concept_binary,
    concept_centred_ranks,
    concept_counts_at_least,
    concept_positives,
    concept_product,
    concept_sparse,
    few_active,
    positive_index,
    sum_over_active,
    unit_active_index,
    unit_binary,
    unit_centred_ranks,
    unit_counts_at_least,
)
from neuroneval.metrics.ranks import count_at_least

AUC_DEGENERATE = "a label with no positive or no negative input: AUC is set to 0.5"
AUC_DEGENERATE_REFERENCE = ("a label with no positive or no negative input: AUC is set to 0 (reference mode, as the "
                            "authors' code: a rank sum of 0 over a denominator clipped to 1)")
NO_LABEL_POSITIVES = "concept(s) with no positive input (c ≥ 0.5 nowhere): inverse AUPRC is set to 0"


def _auc(ctx: Context, rank_sum: Any, positives: Any) -> Any:
    """AUC from the sum of centred ranks over the label's positives.

    A label with no positive or no negative input has no pair to compare: 0.5 in average mode (no
    information); 0 in reference mode, the value of the authors' ``auc``/``inverse_auc``
    ``(Σ ranks − m(m−1)/2) / clip(m(n−m), min=1)``, whose numerator is then exactly 0 (e.g. a constant unit,
    all of whose inputs are active under the ``at_least_kth`` top-α, or a c⁻ that lost every label).
    """
    pairs = positives * (ctx.n - positives)
    note = AUC_DEGENERATE if ctx.ties.degenerate_auc == 0.5 else AUC_DEGENERATE_REFERENCE
    ctx.notes.check(ctx.be, pairs == 0, note)
    return safe_divide(ctx.be, rank_sum + 0.5 * pairs, pairs, ctx.ties.degenerate_auc)


def auc(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """auc: Mann–Whitney AUC of the score c against the label B(a), ties count ½ (000 Eq. A.7):
    (Σ_{i∈B(a)} R(c)_i − m(m+1)/2) / (m(n − m)), m = |B(a)|, from the centred ranks of the concepts. With
    ``ctx.ties.binary_closed_forms`` a 0/1 concept uses the confusion counts instead: (TP·TN + ½(TP·FP + FN·TN))
    / (m(n − m)). A label with no pair gives ``ctx.ties.degenerate_auc`` (:func:`_auc`)."""
    if ctx.ties.binary_closed_forms and chunk.is_binary():
        tp, active, positives = confusion(ctx, chunk, pairing)
        fn, fp = active - tp, positives - tp
        tn = ctx.n - active - fp
        pairs = active * (ctx.n - active)
        ctx.notes.check(ctx.be, pairs == 0, AUC_DEGENERATE)
        return safe_divide(ctx.be, tp * tn + 0.5 * (tp * fp + fn * tn), pairs, 0.5)
    rank_sum = _compiled_rank_sums(ctx, chunk, pairing)
    if rank_sum is None:
        rank_sum = sum_over_active(ctx, concept_centred_ranks(chunk), pairing)
    return _auc(ctx, rank_sum, pairing.u(unit_binary(ctx)[1]))


def _compiled_rank_sums(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """AUC's rank sums Σ_{i∈B(a)} R'(c)_i of all pairs by one compiled sort per concept
    (:func:`neuroneval.metrics.rank_kernels.active_rank_sums`) when the numpy backend scores all pairs with average
    ties, few active inputs per unit and no kept concept ranks; ``None`` otherwise (or for values not exactly
    float32)."""
    if not (isinstance(pairing, AllPairs) and ctx.be.name == "numpy" and not ctx.ties.noised
            and not ctx.store_concepts and few_active(ctx)):
        return None
    from neuroneval.metrics.rank_kernels import active_rank_sums

    index, weights = unit_active_index(ctx)
    return active_rank_sums(chunk.values(), index, weights)


def inverse_auc(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """inverse_auc: Mann–Whitney AUC of the score a against the label B(c), ties count ½ (000 Eq. A.8):
    (Σ_{i∈B(c)} R(a)_i − p(p+1)/2) / (p(n − p)), p = |B(c)|, one GEMM of the centred unit ranks with the
    binarized concepts."""
    rank_sum = concept_product(ctx, chunk, pairing, lambda: unit_centred_ranks(ctx), "binary")
    return _auc(ctx, rank_sum, pairing.c(concept_positives(chunk)))


def _label_index(be: Backend, bits: Any, counts: np.ndarray, rows: np.ndarray) -> tuple[Any, Any]:
    """Positions of the positives of ``bits[rows]`` padded to the bucket's largest count, and a validity mask."""
    return positive_index(be, be.take_rows(bits, rows), be.asarray(counts[rows], be.int64))


def _buckets(counts: np.ndarray, rows: np.ndarray | None = None) -> list[np.ndarray]:
    """Group positions by ⌊log2 count⌋ so padding to a bucket's largest count at most doubles the work."""
    rows = np.arange(counts.size) if rows is None else rows
    keys = np.floor(np.log2(np.maximum(counts[rows], 1))).astype(np.int64)
    return [rows[keys == key] for key in np.unique(keys)]


def _use_dense(width: int, n: int) -> bool:
    """The sorted-scan path beats sorting the gathered positives once rows hold ≳ n/log2(n) positives."""
    return width * (math.log2(width + 1) + 2.0) > 3.0 * n


def _ap_sparse(be: Backend, at_least: Any, valid: Any, n: int) -> Any:
    """Σ over valid positives of TP(x ≥ x_i)/N(x ≥ x_i) for gathered counts ``at_least`` (…, m): |y|·AP of
    000 Eq. A.8 (sklearn's step-wise average precision, tied scores one threshold).

    Sorted ascending, the positive at (0-based) place p has N = N_(p) and, without ties, TP = p + 1. A run of
    g equal counts at places f…l shares TP = l + 1, and Σ_run (l + 1) = g·(l + 1) = Σ_run (2p + 1 − f): so each
    place takes ``(2p + 1 − f_p) / N_(p)``, f_p the first place of its run (a forward running maximum of the run
    starts), and the sum over the row is exact without a backward scan. Padding (invalid places) sorts last as
    n + 1 and adds nothing. Counts are sorted as int32 below 2**31 inputs (half the memory traffic).
    """
    width = at_least.shape[-1]
    padded = be.where(valid, at_least, n + 1)
    ordered = be.sort_values(be.astype(padded, be.int32) if n + 1 < 2**31 else padded)
    places = be.arange(width)
    firsts = be.cummax(be.where(be.run_starts(ordered), places, 0))
    ratio = be.astype(2 * places + 1 - firsts, be.float64) / be.astype(ordered, be.float64)
    return be.sum(be.where(ordered <= n, ratio, 0.0), axis=-1)


def _ap_dense(be: Backend, label_bits: Any, score_values: Any) -> Any:
    """Σ over positives of TP/N for every (label row, score row) by one sort per score row: (L, S)."""
    n = score_values.shape[-1]
    sorted_scores, order = be.sort(-score_values)
    last = be.reverse_cummin(be.where(be.run_ends(sorted_scores), be.arange(n), n - 1))
    labels = be.gather_columns(label_bits, order)
    hits = be.cumsum(labels)
    at_last = be.take_along(hits, be.broadcast_to(last[None], tuple(hits.shape)))
    ratio = be.astype(at_last, be.float64) / be.astype(last + 1, be.float64)[None]
    return be.sum(be.astype(labels, be.float64) * ratio, axis=-1)


def _ap_all_pairs(ctx: Context, label_bits: Any, label_counts: Any, score_values: Any,
                  score_at_least: Callable[[], Any] | None = None) -> Any:
    """AP of every score row (S, n) against every label row (L, n): (L, S) float64.

    ``score_at_least`` returns :func:`count_at_least` of ``score_values`` when the caller keeps it across calls
    (the units' counts serve every concept chunk of inverse AUPRC).
    """
    be, n, work = ctx.be, ctx.n, ctx.work_elements
    counts = np.rint(be.to_numpy(label_counts)).astype(np.int64)
    n_labels, n_scores = counts.size, score_values.shape[0]
    out = be.full((n_labels, n_scores), 0.0, be.float64)
    at_least = None
    for rows in _buckets(counts):
        width = max(1, int(counts[rows].max()))
        row_index = be.index(rows)
        if _use_dense(width, n):
            label_rows = max(1, min(rows.size, work // n))
            for start in range(0, rows.size, label_rows):
                part = row_index[start:start + label_rows]
                bits = be.take_rows(label_bits, part)
                score_rows = max(1, work // (int(part.shape[0]) * n))
                for first in range(0, n_scores, score_rows):
                    block = score_values[first:first + score_rows]
                    out[part, first:first + block.shape[0]] = _ap_dense(be, bits, block)
            continue
        if at_least is None:
            at_least = score_at_least() if score_at_least else count_at_least(be, score_values)
        index, valid = _label_index(be, label_bits, counts, rows)
        label_rows = max(1, min(rows.size, work // width))
        for start in range(0, rows.size, label_rows):
            part_index, part_valid = index[start:start + label_rows], valid[start:start + label_rows]
            part = row_index[start:start + label_rows]
            score_rows = max(1, work // (int(part_index.shape[0]) * width))
            for first in range(0, n_scores, score_rows):
                gathered = be.gather_columns(at_least[first:first + score_rows], part_index)  # (S', L', m)
                sums = _ap_sparse(be, gathered, part_valid[None, :, :], n)
                out[part, first:first + gathered.shape[0]] = be.moveaxis01(sums)
    return out


def _ap_listed(ctx: Context, label_bits: Any, label_counts: Any, score_values: Any,
               label_of_pair: np.ndarray, score_of_pair: np.ndarray, score_at_least: Any = None) -> Any:
    """AP of listed (label row, score row) pairs, always by the sparse path: (P,) float64."""
    be, n, work = ctx.be, ctx.n, ctx.work_elements
    counts = np.rint(be.to_numpy(label_counts)).astype(np.int64)
    at_least = count_at_least(be, score_values) if score_at_least is None else score_at_least
    out = be.full((label_of_pair.size,), 0.0, be.float64)
    for pairs in _buckets(counts[label_of_pair]):
        labels = label_of_pair[pairs]
        index, valid = _label_index(be, label_bits, counts, labels)
        width = int(index.shape[-1])
        step = max(1, work // width)
        for start in range(0, pairs.size, step):
            stop = start + step
            gathered = be.gather_pairs(at_least, score_of_pair[pairs[start:stop]], index[start:stop])
            out[be.index(pairs[start:stop])] = _ap_sparse(be, gathered, valid[start:stop], n)
    return out


def _pair_positions(pairing: Pairing) -> tuple[np.ndarray, np.ndarray]:
    be = pairing.be
    return be.to_numpy(pairing.units).astype(np.int64), be.to_numpy(pairing.concepts).astype(np.int64)


def auprc(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """auprc: step-wise average precision AP = Σ_i (R_i − R_{i−1}) P_i of the score c against the label B(a),
    over the distinct values of c in decreasing order (000 App. A.3 item 10); 0 for an empty label. All pairs of
    soft concepts on the numpy backend: the compiled walk of :mod:`neuroneval.metrics.ap_kernel` with the concepts
    as scores (:func:`~neuroneval.metrics.ap_kernel.concept_ap_sums`); otherwise the sparse/dense paths of
    :func:`_ap_all_pairs`."""
    be = ctx.be
    unit_bits, active = unit_binary(ctx)
    if chunk.is_binary():
        tp, active_b, positives = confusion(ctx, chunk, pairing)
        recall = tp / active_b
        precision = safe_divide(be, tp, positives, 0.0)
        return recall * precision + (1.0 - recall) * active_b / ctx.n
    if isinstance(pairing, AllPairs) and be.name == "numpy":
        from neuroneval.metrics.ap_kernel import concept_ap_sums

        return concept_ap_sums(ctx, chunk, unit_bits) / active[:, None]
    if isinstance(pairing, AllPairs):
        return _ap_all_pairs(ctx, unit_bits, active, chunk.values(),
                             score_at_least=lambda: concept_counts_at_least(chunk)) / active[:, None]
    units, concepts = _pair_positions(pairing)
    return _ap_listed(ctx, unit_bits, active, chunk.values(), units, concepts) / pairing.u(active)


def inverse_auprc(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """inverse_auprc: step-wise average precision AP = Σ_i (R_i − R_{i−1}) P_i of the score a against the
    label B(c), over the distinct activations in decreasing order (000 App. A.3 item 11); 0 for a concept with no
    positive (with a note). All pairs on the numpy backend: one compiled walk per unit over the positives by
    input (:mod:`neuroneval.metrics.ap_kernel`); otherwise the sparse/dense paths of :func:`_ap_all_pairs`."""
    be = ctx.be
    if isinstance(pairing, AllPairs) and be.name == "numpy":
        from neuroneval.metrics.ap_kernel import concept_label_positives, inverse_ap_sums

        sparse_bits = concept_sparse(chunk, "binary")
        if sparse_bits is None:
            labels = concept_label_positives(chunk)
            sums = inverse_ap_sums(ctx, labels)
            positives = be.asarray(np.diff(labels[0]).astype(np.float64))
        else:
            sums = inverse_ap_sums(ctx, sparse_bits)
            positives = concept_positives(chunk)
    elif isinstance(pairing, AllPairs):
        concept_bits, positives = concept_binary(chunk)
        sums = be.moveaxis01(_ap_all_pairs(ctx, concept_bits, positives, ctx.unit_values(),
                                           score_at_least=lambda: unit_counts_at_least(ctx)))
    else:
        concept_bits, positives = concept_binary(chunk)
        units, concepts = _pair_positions(pairing)
        sums = _ap_listed(ctx, concept_bits, positives, ctx.unit_values(), concepts, units,
                          score_at_least=unit_counts_at_least(ctx))
    denominator = pairing.c(positives)
    ctx.notes.check(be, denominator == 0, NO_LABEL_POSITIVES)
    return safe_divide(be, sums, denominator, 0.0)
