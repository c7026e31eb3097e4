"""Simulation scoring (paper 001, App. B.2): predict a unit's activations from its explanation, then score.

Predicted activation ``s(x_i, E)`` from concept vectors ``c_t`` (ground truth or pseudo-labels):

* simple concept (Eq. 14): ``s(x_i, t) = c_t(x_i)``;
* linear (Eq. 15): ``s(x_i, E) = Σ_j w_j c_{t_j}(x_i)`` (+ bias, which no correlation sees);
* formulas, fuzzy logic (Eq. 16–18): ``AND`` → ``s₁·s₂``; ``OR`` → ``1 − (1 − s₁)(1 − s₂)``; ``NOT`` → ``1 − s``,
  applied recursively;
* clustered, CCE (Eq. 19): ``s(x_i, E) = Σ_j (l_j + u_j)/2 · s(x_i, F_j)``.

The score of paper 001 is Pearson's correlation ρ between ``s`` and the unit's activations on held-out inputs
(:func:`simulation_correlation`). :func:`simulation_metrics` also scores the simulation with the metric engine
(:mod:`neuroneval.metrics`), for the metrics that pass paper 000's sanity tests.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData, as_activations, as_concepts
from neuroneval.explain.explanation import (
    And,
    Clustered,
    Concept,
    Explanation,
    Linear,
    Not,
    Or,
    Text,
    parse,
    parse_frame,
)
from neuroneval.metrics import MetricOptions, get_spec, score_pairs
from neuroneval.published import TABLE3_PASSING

#: Metrics that pass both sanity tests in paper 000 (Table 3's pass mark): F1, IoU, correlation, cosine, AUPRC.
SANITY_PASSING_METRICS: tuple[str, ...] = TABLE3_PASSING


class UnknownConceptError(KeyError):
    """An explanation names a concept that is not a column of the concept table."""

    def __str__(self) -> str:
        return str(self.args[0])


def _column(name: str, index: Mapping[str, int], where: str) -> int:
    if name not in index:
        raise UnknownConceptError(f"{where}concept {name!r} is not a column of the concept table")
    return index[name]


def _formula_values(node: Explanation, concepts: np.ndarray, index: Mapping[str, int], where: str) -> np.ndarray:
    if isinstance(node, Concept):
        return concepts[:, _column(node.name, index, where)]
    if isinstance(node, Not):
        return 1.0 - _formula_values(node.operand, concepts, index, where)
    if isinstance(node, And):
        return _formula_values(node.left, concepts, index, where) * _formula_values(node.right, concepts, index, where)
    if isinstance(node, Or):
        left = _formula_values(node.left, concepts, index, where)
        return 1.0 - (1.0 - left) * (1.0 - _formula_values(node.right, concepts, index, where))
    raise TypeError(f"{where}not a formula: {node!r}")


def simulate(explanation: Explanation | str, concepts: Any, concept_names: Sequence[str] | None = None, *,
             kind: str | None = None, where: str = "") -> np.ndarray:
    """The predicted activation ``s(x_i, E)`` of one explanation on every input (Eq. 14–19), float64 (N,).

    ``explanation`` is an object or a string (parsed with ``kind``; guessed when ``None``). A concept that is not a
    column raises :class:`UnknownConceptError`; ``where`` prefixes the message (e.g. ``"file.csv, row 3: "``).

    >>> import numpy as np
    >>> c = np.array([[1.0, 0.5], [0.2, 0.5]])
    >>> simulate("a OR b", c, ["a", "b"]).tolist()
    [1.0, 0.6]
    """
    matrix, names = as_concepts(concepts, concept_names)
    node = parse(explanation, kind) if isinstance(explanation, str) else explanation
    index = {name: column for column, name in enumerate(names)}
    return _simulate_node(node, matrix, index, where)


def _simulate_node(node: Explanation, matrix: np.ndarray, index: Mapping[str, int], where: str) -> np.ndarray:
    if isinstance(node, Linear):
        values = np.full(matrix.shape[0], node.bias, dtype=np.float64)
        for name, weight in node.weights:
            values += weight * matrix[:, _column(name, index, where)]
        return values
    if isinstance(node, Clustered):
        values = np.zeros(matrix.shape[0], dtype=np.float64)
        for low, high, formula in node.clusters:
            values += 0.5 * (low + high) * _formula_values(formula, matrix, index, where)
        return values
    if isinstance(node, Text):
        raise ValueError(f"{where}a text explanation cannot be simulated from concept vectors; use an LLM simulator "
                         "(neuroneval.explain.llm_backend.LLMSimulator)")
    return np.array(_formula_values(node, matrix, index, where), dtype=np.float64)


def simulate_table(explanations: pd.DataFrame, concepts: Any, concept_names: Sequence[str] | None = None, *,
                   source: str = "<explanations>") -> np.ndarray:
    """Simulate every row of an explanations table: (N, K) float64, column k for row k.

    Linear explanations (the common case of long tables) are simulated together as one product ``C · W`` with a
    sparse (T, K) weight matrix; formulas are evaluated per row with vector operations over the inputs. Errors
    name ``source``, the row and the unknown concept.
    """
    matrix, names = as_concepts(concepts, concept_names)
    parsed = parse_frame(explanations, source=source)
    index = {name: column for column, name in enumerate(names)}
    simulated = np.zeros((matrix.shape[0], len(parsed)), dtype=np.float64)
    linear_rows = [row for row, node in enumerate(parsed) if isinstance(node, Linear)]
    if linear_rows:
        weights = np.zeros((matrix.shape[1], len(linear_rows)), dtype=np.float64)
        bias = np.zeros(len(linear_rows), dtype=np.float64)
        for position, row in enumerate(linear_rows):
            node = parsed[row]
            bias[position] = node.bias
            for name, weight in node.weights:
                weights[_column(name, index, f"{source}, row {row}: "), position] = weight
        used = np.flatnonzero(weights.any(axis=1))
        simulated[:, linear_rows] = matrix[:, used] @ weights[used] + bias
    for row, node in enumerate(parsed):
        if not isinstance(node, Linear):
            simulated[:, row] = _simulate_node(node, matrix, index, f"{source}, row {row}: ")
    return simulated


def simulation_correlation(activations: Any, simulated: Any) -> np.ndarray:
    """Pearson ρ between each unit's activations and its simulation, column by column: (K,) in [−1, 1].

    ``ρ_k = Σ_i (a_ik − ā_k)(s_ik − s̄_k) / sqrt(Σ_i (a_ik − ā_k)² · Σ_i (s_ik − s̄_k)²)``; a constant column
    (zero variance on either side) scores 0, as in the metric engine (docs/design.md §3.5).
    """
    actual, _ = as_activations(activations)
    predicted, _ = as_activations(simulated)
    if actual.shape != predicted.shape:
        raise ValueError(f"activations {actual.shape} and simulations {predicted.shape} must have the same shape")
    actual = actual - actual.mean(axis=0)
    predicted = predicted - predicted.mean(axis=0)
    numerator = np.einsum("ik,ik->k", actual, predicted)
    denominator = np.sqrt(np.einsum("ik,ik->k", actual, actual) * np.einsum("ik,ik->k", predicted, predicted))
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), 0.0)
    return np.clip(rho, -1.0, 1.0)


def to_unit_interval(simulated: np.ndarray) -> np.ndarray:
    """Columns rescaled into [0, 1] where they leave it: ``(s − min)/(max − min)`` (constant columns → 0).

    The metric engine reads its second argument as concept probabilities; fuzzy-logic simulations already are,
    linear and clustered ones may not be. The map is increasing and affine, so correlation, Spearman and AUC are
    unchanged; the binarized ``B(s) = 1[s ≥ 0.5]`` then means "above mid-range".
    """
    values = np.asarray(simulated, dtype=np.float64)
    low, high = values.min(axis=0), values.max(axis=0)
    outside = (low < 0.0) | (high > 1.0)
    span = np.where(high > low, high - low, 1.0)
    rescaled = np.where(high > low, (values - low) / span, 0.0)
    return np.where(outside, rescaled, values)


def simulation_metrics(activations: Any, simulated: Any, *, metrics: Sequence[str] = SANITY_PASSING_METRICS,
                       unit_names: Sequence[str] | None = None,
                       options: MetricOptions | None = None) -> pd.DataFrame:
    """Score each unit's simulation with the metric engine: one row per unit, one column per metric.

    Column k of ``simulated`` plays the concept of unit k (:func:`to_unit_interval` first), and the engine's
    :func:`neuroneval.metrics.score_pairs` scores the pairs (k, k) with its own definitions. ``options`` are shared
    by the metrics, each taking the fields it has (:meth:`~neuroneval.metrics.MetricSpec.options_from`: ``alpha``
    goes to those that binarize; default: every metric's defaults). Also reports ``simulation_correlation``, paper
    001's score.
    """
    actual, names = as_activations(activations, unit_names)
    predicted, _ = as_activations(simulated)
    if actual.shape != predicted.shape:
        raise ValueError(f"activations {actual.shape} and simulations {predicted.shape} must have the same shape")
    concepts = to_unit_interval(predicted)
    pairs = np.repeat(np.arange(actual.shape[1])[:, None], 2, axis=1)
    frame = pd.DataFrame({"unit": names, "simulation_correlation": simulation_correlation(actual, predicted)})
    shared = MetricOptions() if options is None else options
    for metric in metrics:
        frame[metric] = score_pairs(metric, actual, concepts, pairs, options=get_spec(metric).options_from(shared))
    return frame


class ConceptSimulator:
    """The :class:`neuroneval.explain.base.Simulator` of Eq. 14–19: predictions from the probing concept vectors."""

    def simulate(self, explanation: Explanation | str, probing: ProbingData,
                 inputs: Sequence[int] | None = None) -> np.ndarray:
        values = simulate(explanation, probing.concepts, probing.concept_names)
        return values if inputs is None else values[np.asarray(inputs, dtype=np.int64)]


def score_explanations(explanations: pd.DataFrame, activations: Any, concepts: Any,
                       concept_names: Sequence[str] | None = None, *, metrics: Sequence[str] = SANITY_PASSING_METRICS,
                       source: str = "<explanations>", options: MetricOptions | None = None) -> pd.DataFrame:
    """Simulate an explanations table on (held-out) inputs and score it: one row per explained unit.

    ``activations`` is a DataFrame (columns = unit names) or an array whose columns follow the table's rows.
    Returns ``unit, kind, length, simulation_correlation`` and one column per metric (scored with ``options``, as in
    :func:`simulation_metrics`).
    """
    if isinstance(activations, pd.DataFrame):
        frame = activations.drop(columns=["input_id"], errors="ignore")
        missing = [unit for unit in explanations["unit"].astype(str) if unit not in frame.columns.astype(str)]
        if missing:
            raise ValueError(f"{source}: unit {missing[0]!r} is not a column of the activation table")
        frame.columns = frame.columns.astype(str)
        actual = frame[list(explanations["unit"].astype(str))].to_numpy()
    else:
        actual = np.asarray(activations)
        if actual.ndim != 2 or actual.shape[1] != len(explanations):
            raise ValueError(f"{source}: activations must have one column per explained unit "
                             f"({len(explanations)}), got shape {actual.shape}")
    simulated = simulate_table(explanations, concepts, concept_names, source=source)
    if simulated.shape[0] != actual.shape[0]:
        raise ValueError(f"{source}: activations have {actual.shape[0]} inputs but concepts {simulated.shape[0]}")
    scores = simulation_metrics(actual, simulated, metrics=metrics, unit_names=list(explanations["unit"]),
                                options=options)
    scores.insert(1, "kind", list(explanations["kind"]))
    scores.insert(2, "length", list(explanations["length"]))
    return scores
