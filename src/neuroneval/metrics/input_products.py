"""Pearson correlation and cosine of every (unit, concept) pair of a call by passes over blocks of inputs
(000 Eq. 6, A.10).

correlation(a, c) = Σ_i (a_i − ā)·c_i / (‖a − ā‖·‖c − c̄‖) (the unit's centring makes the concept's unnecessary:
Σ (a_i − ā) = 0), cosine(a, c) = Σ_i a_i·c_i / (‖a‖·‖c‖).

The tables are input-major (n, K) and (n, C), so a block of inputs is a block of rows of each: cast to float64 (the
unit side centred on its way) and multiplied by one float64 GEMM of (K', b) × (b, C) into the (K', C) sums. No
table is transposed or read more than twice (once for the means, once for the products and the sums of squares),
and every GEMM is as wide as the call, where the block-by-chunk engine transposed each concept chunk once per
unit block and multiplied blocks a few dozen concepts wide: at n = 50,000, K = C = 1,400 with probability
concepts, 2.0 s of transposes and 3.6 s of GEMMs for correlation.

Constant (correlation) and all-zero (cosine) vectors score 0 with a note, as in
:func:`neuroneval.metrics.features.inverse_norms`: a vector is constant when every value equals its first
(exactly), or when its centred norm is 0.

:func:`correlation_all_pairs` and :func:`cosine_all_pairs` apply on the numpy backend without ``chunk_size``, to
dense concepts (sparse ones — at most :data:`~neuroneval.metrics.context.SPARSE_CONCEPTS` nonzero — keep the sparse
product), when the budget holds the (K', C) sums; otherwise they return ``None`` and the engine cuts unit blocks
and concept chunks, with the same scores up to float rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuroneval.metrics.budget import budget_bytes
from neuroneval.metrics.context import SPARSE_CONCEPTS, Params
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.features import ZERO_NORM, ZERO_VARIANCE
from neuroneval.metrics.ties import tie_rule

#: Most inputs per block (one float64 GEMM each).
INPUT_BLOCK = 2048
#: Fewest inputs per block a budget may leave (below that the engine's blocks are used).
MIN_INPUT_BLOCK = 128


@dataclass(frozen=True)
class BlockStats:
    """Per-column statistics of one side from a pass over the input blocks: sums (float64) and whether each column
    equals its first value everywhere."""

    sums: np.ndarray
    constant: np.ndarray


def input_block_size(budget: int | None, n: int, n_units: int, n_concepts: int) -> int | None:
    """Inputs per block for a budget in bytes (``None``: unbounded), or ``None`` when the budget does not hold the
    pass.

    Held at once: the (K', C) sums, one GEMM's result and the call's scores (24·K'·C bytes), and per input of a
    block the float64 unit row (8·K'), the float64 concept row and its centred copy (16·C) and a comparison's
    booleans (max(K', C)); the blocks get what the rest leaves, up to :data:`INPUT_BLOCK` inputs."""
    if budget is None:
        return min(n, INPUT_BLOCK)
    per_input = 8 * n_units + 16 * n_concepts + max(n_units, n_concepts)
    width = (budget - 24 * n_units * n_concepts) // per_input
    if width < min(n, MIN_INPUT_BLOCK):
        return None
    return int(min(n, INPUT_BLOCK, width))


def _cast(source: np.ndarray, start: int, stop: int, columns: np.ndarray | None, out: np.ndarray) -> np.ndarray:
    """Rows ``start:stop`` of ``source`` (only ``columns``, when given) as float64 in ``out``'s first rows."""
    block = out[:stop - start]
    np.copyto(block, source[start:stop] if columns is None else source[start:stop, columns])
    return block


def _stats(source: np.ndarray, columns: np.ndarray | None, width: int, buffer: np.ndarray) -> BlockStats:
    """Column sums and constancy of ``source`` (only ``columns``) over its input blocks."""
    n = source.shape[0]
    first = np.asarray(source[0] if columns is None else source[0, columns], dtype=np.float64)
    sums = np.zeros(first.size, dtype=np.float64)
    constant = np.ones(first.size, dtype=bool)
    for start in range(0, n, width):
        block = _cast(source, start, min(n, start + width), columns, buffer)
        sums += block.sum(axis=0)
        constant &= np.all(block == first, axis=0)
    return BlockStats(sums, constant)


def _inverse(squares: np.ndarray, degenerate: np.ndarray) -> np.ndarray:
    """1/√squares, 0 where ``degenerate`` or the sum of squares is 0."""
    zero = degenerate | (squares == 0)
    return np.where(zero, 0.0, 1.0 / np.sqrt(np.where(zero, 1.0, squares)))


def _pass(activations: np.ndarray, concepts: np.ndarray, unit_rows: np.ndarray, width: int, centre: bool,
          notes: Notes) -> np.ndarray:
    """Σ_i (a_i − ā)·c_i / (‖a − ā‖·‖c − c̄‖) (``centre``) or Σ_i a_i·c_i / (‖a‖·‖c‖) of every pair, (K', C)."""
    n, n_concepts = concepts.shape
    every_unit = unit_rows.size == activations.shape[1] and np.array_equal(unit_rows, np.arange(unit_rows.size))
    columns = None if every_unit else unit_rows
    unit_buffer = np.empty((width, unit_rows.size), dtype=np.float64)
    concept_buffer = np.empty((width, n_concepts), dtype=np.float64)
    centred_buffer = np.empty((width, n_concepts), dtype=np.float64)
    if centre:
        unit_stats = _stats(activations, columns, width, unit_buffer)
        concept_stats = _stats(concepts, None, width, concept_buffer)
        unit_means, concept_means = unit_stats.sums / n, concept_stats.sums / n
        unit_degenerate, concept_degenerate = unit_stats.constant, concept_stats.constant
    else:
        unit_means, concept_means = np.zeros(unit_rows.size), np.zeros(n_concepts)
        unit_degenerate, concept_degenerate = np.zeros(unit_rows.size, bool), np.zeros(n_concepts, bool)
    products = np.zeros((unit_rows.size, n_concepts), dtype=np.float64)
    part = np.empty_like(products)
    unit_squares, concept_squares = np.zeros(unit_rows.size), np.zeros(n_concepts)
    for start in range(0, n, width):
        stop = min(n, start + width)
        unit_block = _cast(activations, start, stop, columns, unit_buffer)
        unit_block -= unit_means
        concept_block = _cast(concepts, start, stop, None, concept_buffer)
        centred = (np.subtract(concept_block, concept_means, out=centred_buffer[:stop - start]) if centre
                   else concept_block)
        unit_squares += np.einsum("ij,ij->j", unit_block, unit_block)
        concept_squares += np.einsum("ij,ij->j", centred, centred)
        np.matmul(unit_block.T, concept_block, out=part)
        products += part
    unit_scale, concept_scale = _inverse(unit_squares, unit_degenerate), _inverse(concept_squares, concept_degenerate)
    if not (unit_scale.all() and concept_scale.all()):
        notes.add(ZERO_VARIANCE if centre else ZERO_NORM)
    products *= unit_scale[:, None]
    products *= concept_scale[None, :]
    return np.clip(products, -1.0, 1.0, out=products)


def _applies(concepts: np.ndarray, params: Params, backend_name: str) -> bool:
    """numpy backend, no chunk size, dense concepts (more than :data:`SPARSE_CONCEPTS` of them nonzero)."""
    return (backend_name == "numpy" and params.chunk_size is None
            and np.count_nonzero(concepts) > SPARSE_CONCEPTS * concepts.size)


def _scores(activations: np.ndarray, concepts: np.ndarray, unit_rows: np.ndarray, params: Params,
            backend_name: str, notes: Notes, centre: bool) -> np.ndarray | None:
    """The pass of every pair (:func:`_pass`), or ``None`` where it does not apply."""
    if not _applies(concepts, params, backend_name):
        return None
    n, n_concepts = concepts.shape
    budget = budget_bytes(params.memory_budget, n, activations.shape[1], n_concepts)
    width = input_block_size(budget, n, unit_rows.size, n_concepts)
    return None if width is None else _pass(activations, concepts, unit_rows, width, centre, notes)


def correlation_all_pairs(activations: np.ndarray, concepts: np.ndarray, unit_rows: np.ndarray, params: Params,
                          backend_name: str, notes: Notes, update: Callable[[int], Any]) -> np.ndarray | None:
    """Pearson correlation of every unit of ``unit_rows`` against every concept, clipped to [−1, 1], times
    ``(n − 1)/n`` where the tie rule's ``covariance_factor`` (the authors' code); ``None`` where the pass does not
    apply (see the module docstring)."""
    scores = _scores(activations, concepts, unit_rows, params, backend_name, notes, centre=True)
    if scores is not None:
        scores *= tie_rule(params.ties).pearson_factor(concepts.shape[0])
        update(scores.size)
    return scores


def cosine_all_pairs(activations: np.ndarray, concepts: np.ndarray, unit_rows: np.ndarray, params: Params,
                     backend_name: str, notes: Notes, update: Callable[[int], Any]) -> np.ndarray | None:
    """Cosine similarity of every unit of ``unit_rows`` against every concept, clipped to [−1, 1]; ``None`` where
    the pass does not apply (see the module docstring)."""
    scores = _scores(activations, concepts, unit_rows, params, backend_name, notes, centre=False)
    if scores is not None:
        update(scores.size)
    return scores
