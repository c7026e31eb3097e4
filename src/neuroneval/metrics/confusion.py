"""Binary metrics from the confusion counts of ``B(a)`` (label) and ``B(c)`` (prediction), 000 Table A.1.

All pairs at once: ``TP = B(A)ᵀ B(C)`` is one float32 GEMM of 0/1 matrices (exact below 2**24 inputs), or,
when every unit has few active inputs (small α), a gather of ``B(C)`` at those inputs and a sum, and when
``B(C)`` is sparse (one-hot labels), a sparse product over its positives;
``FN = |B(a)| − TP``, ``FP = |B(c)| − TP``, ``TN = n − |B(a)| − |B(c)| + TP`` follow from the row sums.
"""

from __future__ import annotations

from typing import Any

from neuroneval.metrics.context import ConceptChunk, Context, Pairing
from neuroneval.metrics.edgecases import safe_divide
from neuroneval.metrics.features import (
    ALL_ACTIVE,
    concept_binary,
    concept_positives,
    few_active,
    sparse_concept_product,
    sum_over_active,
    unit_binary,
)

NO_POSITIVES = "concept(s) with no positive input (c ≥ 0.5 nowhere): 0/0 is set to 0"
ALL_POSITIVES = "concept(s) positive on every input: 0/0 is set to 0"


def confusion(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> tuple[Any, Any, Any]:
    """(TP, |B(a)|, |B(c)|) broadcast to the pairing's shape, all float64."""
    unit_bits, active = unit_binary(ctx)
    positives = concept_positives(chunk)
    true_positives = sparse_concept_product(ctx, chunk, pairing, lambda: unit_bits, "binary")
    if true_positives is None:
        if few_active(ctx):
            true_positives = sum_over_active(ctx, concept_binary(chunk)[0], pairing)
        else:
            true_positives = ctx.be.astype(pairing.dot(unit_bits, concept_binary(chunk)[0]), ctx.be.float64)
    return true_positives, pairing.u(active), pairing.c(positives)


def _divide(ctx: Context, numerator: Any, denominator: Any, message: str) -> Any:
    ctx.notes.check(ctx.be, denominator == 0, message)
    return safe_divide(ctx.be, numerator, denominator, 0.0)


def recall(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """recall = TP / (TP + FN) = B(a)·B(c) / |B(a)| (000 Eq. 4, Table A.1), the neuron as label; 0/0 (no active
    input) is set to 0 with a note. TP is one GEMM of the binarized units with the binarized concepts."""
    tp, active, _ = confusion(ctx, chunk, pairing)
    return _divide(ctx, tp, active, "units with no active input: recall 0/0 is set to 0")


def precision(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """precision = TP / (TP + FP) = B(a)·B(c) / |B(c)| (000 Eq. 8, Table A.1); 0/0 (a concept with no
    positive) is set to 0 with a note."""
    tp, _, positives = confusion(ctx, chunk, pairing)
    return _divide(ctx, tp, positives, NO_POSITIVES)


def f1(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """f1 = 2TP / (2TP + FP + FN) = 2·B(a)·B(c) / (|B(a)| + |B(c)|) (000 Eq. A.4); 0/0 is set to 0 with a note."""
    tp, active, positives = confusion(ctx, chunk, pairing)
    return _divide(ctx, 2.0 * tp, active + positives, "F1 0/0 (no active input and no positive) is set to 0")


def iou(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """iou = TP / (TP + FP + FN) = B(a)·B(c) / (|B(a)| + |B(c)| − B(a)·B(c)) (000 Eq. 5, A.13); 0/0 is set to 0
    with a note."""
    tp, active, positives = confusion(ctx, chunk, pairing)
    return _divide(ctx, tp, active + positives - tp, "IoU 0/0 (no active input and no positive) is set to 0")


def accuracy(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """accuracy = (TP + TN) / n = (2TP + n − |B(a)| − |B(c)|) / n (000 Eq. A.3)."""
    tp, active, positives = confusion(ctx, chunk, pairing)
    return (2.0 * tp + ctx.n - active - positives) / ctx.n


def balanced_accuracy(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """balanced_accuracy = TP / (2|B(a)|) + TN / (2(n − |B(a)|)) (000 Eq. A.5), the neuron as label;
    each 0/0 term is set to 0 with a note."""
    tp, active, positives = confusion(ctx, chunk, pairing)
    tn = ctx.n - active - positives + tp
    return 0.5 * (_divide(ctx, tp, active, "units with no active input: recall 0/0 is set to 0")
                  + _divide(ctx, tn, ctx.n - active, ALL_ACTIVE))


def inverse_balanced_accuracy(ctx: Context, chunk: ConceptChunk, pairing: Pairing) -> Any:
    """inverse_balanced_accuracy = TP / (2|B(c)|) + TN / (2(n − |B(c)|)) (000 Eq. A.6), the concept
    as label; each 0/0 term is set to 0 with a note."""
    tp, active, positives = confusion(ctx, chunk, pairing)
    tn = ctx.n - active - positives + tp
    return 0.5 * (_divide(ctx, tp, positives, NO_POSITIVES) + _divide(ctx, tn, ctx.n - positives, ALL_POSITIVES))
