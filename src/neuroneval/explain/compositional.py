"""Compositional explanations by beam search: Mu & Andreas 2020 (IoU), INVERT (Bykov et al. 2023, AUC) and
Clustered Compositional Explanations (La Rosa et al. 2023), the complex methods of paper 001 Table 2.

A formula F over binarized concepts ``M_t`` (pixels or inputs) grows one concept at a time:
``F AND t``, ``F OR t``, ``F AND NOT t``, up to ``max_length`` distinct concepts; each step keeps the
``beam_size`` best distinct formulas of each unit (shorter ones stay when they score best). A unit enters
through a weight per position, ``w_k``, and a formula through two numbers, its weighted count
``S = Σ_p w_k(p)·F(p)`` and size ``|F|``:

* IoU (Compositional Explanations): ``w_k = B_k`` (top-quantile indicator), ``IoU = S / (|B_k| + |F| − S)``;
* AUC (INVERT): ``w_k`` = rank of the activation among the N inputs (average ties), and the Mann–Whitney form
  ``AUC = (S − |F|(|F| + 1)/2) / (|F|·(N − |F|))`` of the activation as a score for the label F (0.5 when F is
  empty or everything).

For all extensions of every beam formula by every concept, only two products are needed:
``F·M`` and ``(w_k∘F)·M`` give, with ``|M_t ∧ F|`` and ``S(F ∧ M_t)``,

* AND: ``S(F ∧ t)``, ``|F ∧ t|``;  OR: ``S(F) + S(t) − S(F ∧ t)``, ``|F| + |t| − |F ∧ t|``;
* AND NOT: ``S(F) − S(F ∧ t)``, ``|F| − |F ∧ t|``;

so one step is two (B × P)·(P × T) products for the B beam formulas of all units together.
Simulation of the result uses the fuzzy logic of paper 001 Eq. 16–18 (:mod:`neuroneval.explain.simulate`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData
from neuroneval.explain.dissection import CHUNK_VALUES, Positions, positions, top_quantile
from neuroneval.explain.explanation import And, Clustered, Concept, Formula, Not, Or, explanation_frame
from neuroneval.explain.options import ClusteredOptions, CompositionalOptions
from neuroneval.progress import progress_bar

Objective = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass
class _Entry:
    formula: Formula
    mask: np.ndarray
    score: float
    names: frozenset[int]


def iou_objective(totals: np.ndarray, n_positions: int) -> Objective:
    """IoU from (weighted count S, size |F|) for rows whose unit has ``totals[row] = |B_k|``."""
    del n_positions

    def objective(weighted: np.ndarray, size: np.ndarray, rows: np.ndarray) -> np.ndarray:
        union = totals[rows].reshape((-1,) + (1,) * (weighted.ndim - 1)) + size - weighted
        return np.divide(weighted, union, out=np.zeros_like(weighted, dtype=np.float64), where=union > 0)

    return objective


def auc_objective(n_positions: int) -> Objective:
    """Mann–Whitney AUC from (rank sum S over the label F, size |F|); 0.5 for an empty or full label."""

    def objective(weighted: np.ndarray, size: np.ndarray, rows: np.ndarray) -> np.ndarray:
        del rows
        size = np.broadcast_to(size, weighted.shape)
        denominator = size * (n_positions - size)
        auc = np.divide(weighted - size * (size + 1) / 2.0, denominator, out=np.full(weighted.shape, 0.5),
                        where=denominator > 0)
        return auc

    return objective


def _extend(formula: Formula, op: str, name: str) -> Formula:
    concept = Concept(name)
    if op == "AND":
        return And(formula, concept)
    if op == "OR":
        return Or(formula, concept)
    return And(formula, Not(concept))


def _apply(mask: np.ndarray, op: str, column: np.ndarray) -> np.ndarray:
    if op == "AND":
        return mask & column
    if op == "OR":
        return mask | column
    return mask & ~column


def beam_search(weights: np.ndarray, concepts: np.ndarray, concept_names: Sequence[str], objective: Objective,
                options: CompositionalOptions) -> tuple[list[Formula], np.ndarray]:
    """Best formula of each row of ``weights`` (R, P) over 0/1 ``concepts`` (P, T): (formulas, scores).

    See the module docstring for the recurrences; rows are units (or unit clusters for CCE).
    """
    n_rows, n_positions = weights.shape
    n_concepts = concepts.shape[1]
    concept_bool = concepts.astype(bool)
    concept_sizes = concepts.sum(axis=0, dtype=np.float64)
    row_concept = weights @ concepts.astype(np.float64)  # S(t) for every (row, t)
    single = objective(row_concept, concept_sizes[None, :], np.arange(n_rows))
    beams: list[list[_Entry]] = []
    for row in range(n_rows):
        order = np.argsort(-single[row], kind="stable")
        beams.append(_select(row, [(single[row, t], None, "", int(t)) for t in order], [], concept_bool,
                             concept_names, options.beam_size))
    for _ in progress_bar(range(options.max_length - 1), desc="beam search", unit="length"):
        owners = np.array([row for row, beam in enumerate(beams) for _ in beam], dtype=np.int64)
        masks = np.array([entry.mask for beam in beams for entry in beam], dtype=bool)
        weighted_masks_sum = np.zeros((len(owners), n_concepts), dtype=np.float64)
        size_with = np.zeros((len(owners), n_concepts), dtype=np.float64)
        formula_weight = np.zeros(len(owners), dtype=np.float64)
        step = max(1, CHUNK_VALUES // max(1, n_positions))
        for start in range(0, len(owners), step):
            block = masks[start:start + step].astype(np.float32)
            size_with[start:start + step] = block @ concepts
            weighted = block * weights[owners[start:start + step]]
            weighted_masks_sum[start:start + step] = weighted @ concepts
            formula_weight[start:start + step] = weighted.sum(axis=1)
        formula_size = masks.sum(axis=1, dtype=np.float64)
        scores = {}
        for op in options.operators:
            if op == "AND":
                weighted_total, size = weighted_masks_sum, size_with
            elif op == "OR":
                weighted_total = formula_weight[:, None] + row_concept[owners] - weighted_masks_sum
                size = formula_size[:, None] + concept_sizes[None, :] - size_with
            else:
                weighted_total = formula_weight[:, None] - weighted_masks_sum
                size = formula_size[:, None] - size_with
            scores[op] = objective(weighted_total, size, owners)
        position = 0
        new_beams = []
        for row, beam in enumerate(beams):
            candidates = [(entry.score, entry, "", -1) for entry in beam]
            for entry in beam:
                for op in options.operators:
                    values = scores[op][position]
                    for t in np.argsort(-values, kind="stable")[:options.beam_size + len(entry.names)]:
                        if int(t) not in entry.names:
                            candidates.append((float(values[t]), entry, op, int(t)))
                position += 1
            candidates.sort(key=lambda item: -item[0])
            new_beams.append(_select(row, candidates, [], concept_bool, concept_names, options.beam_size))
        beams = new_beams
    best = [beam[0] for beam in beams]
    return [entry.formula for entry in best], np.array([entry.score for entry in best], dtype=np.float64)


def _select(row: int, candidates: list[tuple[float, _Entry | None, str, int]], kept: list[_Entry],
            concept_bool: np.ndarray, concept_names: Sequence[str], beam_size: int) -> list[_Entry]:
    """The first ``beam_size`` candidates (already sorted best first) with distinct masks."""
    del row
    seen = {np.packbits(entry.mask).tobytes() for entry in kept}
    for score_value, parent, op, t in candidates:
        if len(kept) >= beam_size:
            break
        if parent is None:
            entry = _Entry(Concept(concept_names[t]), concept_bool[:, t].copy(), float(score_value), frozenset({t}))
        elif t < 0:
            entry = parent
        else:
            entry = _Entry(_extend(parent.formula, op, concept_names[t]), _apply(parent.mask, op, concept_bool[:, t]),
                           float(score_value), parent.names | {t})
        key = np.packbits(entry.mask).tobytes()
        if key in seen:
            continue
        seen.add(key)
        kept.append(entry)
    return kept


def compositional_explanations(activations: Any, probing: ProbingData, options: CompositionalOptions | None = None,
                               *, unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Mu & Andreas's Compositional Explanations: the formula of length ≤ l with the highest IoU against the
    unit's top-quantile mask (pixels for (N, K, h, w) maps with ``probing.masks``, else inputs). Column ``iou``."""
    options = options or CompositionalOptions()
    located, names = positions(activations, probing, unit_names, "compositional_explanations")
    units = top_quantile(located.values, options.quantile).astype(np.float64)
    objective = iou_objective(units.sum(axis=1), located.n_positions)
    formulas, scores = beam_search(units, located.concepts, probing.concept_names, objective, options)
    return explanation_frame(names, formulas, {"iou": scores})


def invert_explanations(activations: Any, probing: ProbingData, options: CompositionalOptions | None = None, *,
                        unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """INVERT: the formula of length ≤ l over binarized input labels whose indicator the unit's activation
    separates best, by AUC (activation = score, formula = label). Column ``auc``. Needs (N, K) activations."""
    options = options or CompositionalOptions()
    if np.asarray(activations).ndim == 4:
        raise ValueError("INVERT explains scalar activations (N, K); pool spatial maps first")
    from scipy.stats import rankdata  # here, not at import: scipy.stats costs a second a job that needs no INVERT

    located, names = positions(activations, probing, unit_names, "invert_explanations")
    ranks = rankdata(located.values, axis=1)
    formulas, scores = beam_search(ranks, located.concepts, probing.concept_names,
                                   auc_objective(located.n_positions), options)
    return explanation_frame(names, formulas, {"auc": scores})


def activation_clusters(values: np.ndarray, n_clusters: int, iterations: int) -> np.ndarray:
    """1-D k-means of each unit's positive activations: (K, r, 2) cluster bounds [l_j, u_j], sorted by l_j.

    Initial centres at the quantiles (j + ½)/r; Lloyd steps assign by the midpoints between sorted centres.
    Units with fewer distinct positive values than r get fewer clusters (bounds NaN for the missing ones).
    """
    bounds = np.full((values.shape[0], n_clusters, 2), np.nan)
    for row, unit_values in enumerate(values):
        positive = unit_values[unit_values > 0]
        if positive.size == 0:
            continue
        centres = np.unique(np.quantile(positive, (np.arange(n_clusters) + 0.5) / n_clusters))
        for _ in range(iterations):
            labels = np.searchsorted((centres[1:] + centres[:-1]) / 2.0, positive)
            counts = np.bincount(labels, minlength=centres.size)
            updated = np.where(counts > 0, np.bincount(labels, positive, minlength=centres.size)
                               / np.maximum(counts, 1), centres)
            if np.allclose(updated, centres):
                break
            centres = np.unique(updated)
        labels = np.searchsorted((centres[1:] + centres[:-1]) / 2.0, positive)
        for cluster in range(centres.size):
            members = positive[labels == cluster]
            if members.size:
                bounds[row, cluster] = members.min(), members.max()
    return bounds


def clustered_explanations(activations: Any, probing: ProbingData, options: ClusteredOptions | None = None, *,
                           unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Clustered Compositional Explanations: the positive activations of each unit fall into r clusters
    (1-D k-means); cluster j's positions form a mask explained by an IoU beam search; the explanation is
    ``[l_1, u_1] F_1; …`` (simulated with paper 001 Eq. 19). Column ``iou``: mean IoU over the clusters."""
    options = options or ClusteredOptions()
    located, names = positions(activations, probing, unit_names, "clustered_explanations")
    bounds = activation_clusters(located.values, options.n_clusters, options.kmeans_iterations)
    rows, clusters = np.nonzero(~np.isnan(bounds[:, :, 0]))
    low, high = bounds[rows, clusters, 0], bounds[rows, clusters, 1]
    unit_values = located.values[rows]
    members = ((unit_values >= low[:, None]) & (unit_values <= high[:, None])).astype(np.float64)
    search = CompositionalOptions(max_length=options.max_length, beam_size=options.beam_size, quantile=0.5)
    formulas, scores = beam_search(members, located.concepts, probing.concept_names,
                                   iou_objective(members.sum(axis=1), located.n_positions), search)
    explanations, mean_iou = [], np.zeros(len(names))
    for unit in range(len(names)):
        picked = np.flatnonzero(rows == unit)
        if picked.size == 0:
            explanations.append(Clustered(((0.0, 0.0, Concept(probing.concept_names[0])),)))
            continue
        explanations.append(Clustered(tuple((float(low[i]), float(high[i]), formulas[i]) for i in picked)))
        mean_iou[unit] = scores[picked].mean()
    return explanation_frame(names, explanations, {"iou": mean_iou})


__all__ = ["Positions", "activation_clusters", "auc_objective", "beam_search", "clustered_explanations",
           "compositional_explanations", "invert_explanations", "iou_objective"]
