"""Spearman of every (unit, concept) pair of a call in one pass over the inputs (000 Eq. A.9).

ρ(a, c) = Σ_i R'(a)_i·R'(c)_i / (‖R'(a)‖·‖R'(c)‖), with R' the centred average ranks (ranks minus (n + 1)/2).

Centred average ranks are half-integers of magnitude below n/2, which float32 holds exactly (n < 2**24). So the
concepts are sorted once and their ranks kept as float32 — 4 bytes per value, the size of a float32 concept
table — the units' ranks likewise in blocks of units, and the products Σ_i are accumulated over blocks of inputs
by float64 GEMMs of (K', b) × (b, C): every concept in each GEMM, so the GEMMs are as wide as the call and no
concept's ranks are decoded or sorted twice. (The block-by-chunk engine holds float64 ranks of a few dozen
concepts at a time and recovers each chunk's ranks once per unit block: at n = 50,000, K = C = 1,400 that was
2.9 s of decoding and 4.0 s of narrow GEMMs, where this pass spends ≈ 2.2 s on both.) Products of half-integers
are multiples of 1/4 and their sums stay below n³/4, so the sums are exact in float64 for n < 2**17, and rounded
as by any float64 GEMM beyond.

:func:`spearman_all_pairs` applies on the numpy backend with average ties (no noise), no ``chunk_size``, values
that are exactly float32 (the compiled sort of :mod:`neuroneval.metrics.rank_kernels`), some concept that is not
0/1 (0/1 concepts have the closed form of :func:`neuroneval.metrics.correlation.spearman`, no sort at all), and
a memory budget that holds the kept ranks; otherwise it returns ``None`` and the engine cuts unit blocks and
concept chunks as for every metric, with the same scores up to float rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from neuroneval.metrics.backend import NumpyBackend
from neuroneval.metrics.budget import budget_bytes
from neuroneval.metrics.context import Params, rows_of
from neuroneval.metrics.edgecases import Notes
from neuroneval.metrics.features import ZERO_VARIANCE
from neuroneval.metrics.ranks import average_ranks
from neuroneval.metrics.ties import tie_rule

NUMPY = NumpyBackend()

#: Inputs per float64 GEMM of the accumulation.
INPUT_BLOCK = 2048
#: Most rows ranked at a time.
RANK_ROWS = 64
#: Bytes per (row, input) of ranking a block of rows: its float64 values and ranks (16) for the compiled sort of
#: exactly-float32 values, numpy's sort, order, run bounds and scatter (about 64) for any other float64 values.
RANK_BYTES = 64
#: Fewest units per block the budget must allow; below that the engine's blocks and chunks are used.
MIN_UNIT_BLOCK = 16
#: Inputs per block of the 0/1 test of the concepts (it stops at the first value that is neither).
BINARY_TEST_ROWS = 4096


@dataclass(frozen=True)
class PassPlan:
    """How one pass is cut: ``unit_block`` units ranked and multiplied at a time, ``rank_rows`` rows per call of the
    compiled sort, ``input_block`` inputs per float64 GEMM."""

    unit_block: int
    rank_rows: int
    input_block: int


def pass_plan(budget: int | None, n: int, n_units: int, n_concepts: int) -> PassPlan | None:
    """The cut of a pass for a budget in bytes (``None``: unbounded), or ``None`` when the budget does not hold the
    concepts' float32 ranks and a block of :data:`MIN_UNIT_BLOCK` units (or all units, if fewer).

    Held at once: the concepts' ranks (4·n·C bytes), a unit block's ranks (4·n per unit), the float64 input block
    of both sides (8·b per unit and concept), the block's products and one GEMM's result (16·C per unit), and the
    ranking of ``rank_rows`` rows at a time (:data:`RANK_BYTES`·n per row), which gets at most an eighth of the
    budget."""
    width = min(n, INPUT_BLOCK)
    if budget is None:
        return PassPlan(n_units, RANK_ROWS, width)
    rank_rows = int(max(1, min(RANK_ROWS, budget // 8 // (RANK_BYTES * n))))
    fixed = 4 * n * n_concepts + 8 * width * n_concepts + RANK_BYTES * rank_rows * n
    per_unit = 4 * n + 8 * width + 16 * n_concepts
    block = (budget - fixed) // per_unit
    if block < min(n_units, MIN_UNIT_BLOCK):
        return None
    return PassPlan(int(min(n_units, block)), rank_rows, width)


def _all_binary(concepts: np.ndarray) -> bool:
    """Whether every value of ``concepts`` is exactly 0 or 1 (read in input blocks; stops at the first that is not)."""
    for start in range(0, concepts.shape[0], BINARY_TEST_ROWS):
        block = concepts[start:start + BINARY_TEST_ROWS]
        if not np.all((block == 0) | (block == 1)):
            return False
    return True


def _centred_ranks(rows: np.ndarray) -> np.ndarray:
    """Average ranks minus (n + 1)/2 of each row (float64 half-integers): the compiled sort for exactly-float32
    values, numpy's sort for any others."""
    from neuroneval.metrics.rank_kernels import centred_average_ranks  # numba: imported where it is used

    centred = centred_average_ranks(rows)
    if centred is None:
        centred = average_ranks(NUMPY, rows) - (rows.shape[1] + 1) / 2.0
    return centred


def _ranks_and_inverse_norms(matrix: np.ndarray, columns: np.ndarray, out: np.ndarray, notes: Notes,
                             rank_rows: int) -> np.ndarray:
    """Centred average ranks of ``matrix[:, columns]`` (each column over the inputs, ``rank_rows`` columns at a time)
    into the float32 rows of ``out`` (exact: half-integers below 2**23), and 1/‖R'‖ of each (0 with a
    :data:`ZERO_VARIANCE` note for a constant column)."""
    inverse = np.empty(columns.size, dtype=np.float64)
    for start in range(0, columns.size, rank_rows):
        block = slice(start, min(columns.size, start + rank_rows))
        ranks = _centred_ranks(rows_of(matrix, columns[block]))
        out[block] = ranks
        norms = np.sqrt(np.einsum("ij,ij->i", ranks, ranks))  # half-integers: squares and sums exact in float64
        inverse[block] = np.where(norms == 0, 0.0, 1.0 / np.where(norms == 0, 1.0, norms))
    if np.any(inverse == 0):
        notes.add(ZERO_VARIANCE)
    return inverse


def _products(unit_ranks: np.ndarray, concept_ranks: np.ndarray, width: int) -> np.ndarray:
    """``unit_ranks @ concept_ranks.T`` in float64 (K', C), summed over blocks of ``width`` inputs, each side cast to
    float64 once per block into a reused buffer."""
    n = unit_ranks.shape[1]
    units = np.empty((unit_ranks.shape[0], width), dtype=np.float64)
    concepts = np.empty((concept_ranks.shape[0], width), dtype=np.float64)
    total = np.zeros((unit_ranks.shape[0], concept_ranks.shape[0]), dtype=np.float64)
    part = np.empty_like(total)
    for start in range(0, n, width):
        stop = min(n, start + width)
        unit_block, concept_block = units[:, :stop - start], concepts[:, :stop - start]
        np.copyto(unit_block, unit_ranks[:, start:stop])
        np.copyto(concept_block, concept_ranks[:, start:stop])
        np.matmul(unit_block, concept_block.T, out=part)
        total += part
    return total


def spearman_all_pairs(activations: np.ndarray, concepts: np.ndarray, unit_rows: np.ndarray, params: Params,
                       backend_name: str, notes: Notes, update: Callable[[int], Any]) -> np.ndarray | None:
    """Spearman (average ties) of every unit of ``unit_rows`` against every concept: (K', C) float64, or ``None``
    where the pass does not apply (see the module docstring). ``update(pairs)`` reports progress per unit block.

    The result is clipped to [−1, 1]; a constant unit or concept scores 0, with a :data:`ZERO_VARIANCE` note."""
    rule = tie_rule(params.ties)
    n, n_concepts = concepts.shape
    if backend_name != "numpy" or rule.noised or params.chunk_size is not None or n >= 2**24:
        return None
    budget = budget_bytes(params.memory_budget, n, activations.shape[1], n_concepts)
    cut = pass_plan(budget, n, unit_rows.size, n_concepts)
    if cut is None or _all_binary(concepts):
        return None
    concept_ranks = np.empty((n_concepts, n), dtype=np.float32)
    concept_scale = _ranks_and_inverse_norms(concepts, np.arange(n_concepts), concept_ranks, notes, cut.rank_rows)
    out = np.empty((unit_rows.size, n_concepts), dtype=np.float64)
    unit_ranks = np.empty((cut.unit_block, n), dtype=np.float32)
    for start in range(0, unit_rows.size, cut.unit_block):
        rows = unit_rows[start:start + cut.unit_block]
        ranks = unit_ranks[:rows.size]
        unit_scale = _ranks_and_inverse_norms(activations, rows, ranks, notes, cut.rank_rows)
        scores = (_products(ranks, concept_ranks, cut.input_block) * unit_scale[:, None]
                  * concept_scale[None, :])
        out[start:start + rows.size] = np.clip(scores, -1.0, 1.0) * rule.pearson_factor(n)
        update(rows.size * n_concepts)
    return out
