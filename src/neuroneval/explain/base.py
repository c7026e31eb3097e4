"""The ``Explainer`` interface and the checked inputs every method shares.

An explainer takes the activations of K units on N probing inputs and the probing data (a concept matrix,
optionally spatial activation maps and concept masks, captions, tokens, an image–text similarity matrix) and
returns one explanation per unit as an explanations table (:func:`neuroneval.explain.explanation.explanation_frame`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd


def as_activations(activations: Any, unit_names: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """A finite float64 (N, K) matrix and its unit names (a DataFrame's columns, ``unit_names`` or ``"0".."K-1"``).

    An ``input_id`` column of a DataFrame is dropped (activation tables keep it first, docs/design.md §2.1).
    """
    names: list[str] | None = None
    if isinstance(activations, pd.DataFrame):
        frame = activations.drop(columns=["input_id"], errors="ignore")
        names = [str(column) for column in frame.columns]
        activations = frame.to_numpy()
    matrix = np.asarray(activations)
    if matrix.ndim != 2:
        raise ValueError(f"activations must be a 2-D (N inputs, K units) array, got shape {matrix.shape}")
    if not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool):
        raise ValueError(f"activations must be numeric, got dtype {matrix.dtype}")
    matrix = matrix.astype(np.float64, copy=False)
    _check_finite(matrix, "activations")
    if unit_names is not None:
        names = [str(name) for name in unit_names]
    if names is None:
        names = [str(k) for k in range(matrix.shape[1])]
    if len(names) != matrix.shape[1]:
        raise ValueError(f"{len(names)} unit names for {matrix.shape[1]} activation columns")
    if len(set(names)) != len(names):
        raise ValueError("unit names must be unique")
    if matrix.shape[0] < 2:
        raise ValueError(f"at least 2 inputs are needed, got {matrix.shape[0]}")
    return matrix, names


def _check_finite(matrix: np.ndarray, name: str) -> None:
    if not np.all(np.isfinite(matrix)):
        index = np.argwhere(~np.isfinite(matrix))[0]
        raise ValueError(f"{name} must be finite; found NaN/inf at index {tuple(int(i) for i in index)}")


def as_concepts(concepts: Any, concept_names: Sequence[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """A (N, T) float64 concept matrix with values in [0, 1] and its concept names (DataFrame columns or given)."""
    names: list[str] | None = None
    if isinstance(concepts, pd.DataFrame):
        frame = concepts.drop(columns=["input_id"], errors="ignore")
        names = [str(column) for column in frame.columns]
        concepts = frame.to_numpy()
    matrix = np.asarray(concepts)
    if matrix.ndim != 2 or not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool):
        raise ValueError(f"concepts must be a numeric 2-D (N inputs, T concepts) array, got shape {matrix.shape} "
                         f"and dtype {matrix.dtype}")
    matrix = matrix.astype(np.float64, copy=False)
    _check_finite(matrix, "concepts")
    if matrix.size and (matrix.min() < 0 or matrix.max() > 1):
        row, column = np.argwhere((matrix < 0) | (matrix > 1))[0]
        raise ValueError(f"concepts must lie in [0, 1] (P(t | x)); found {matrix[row, column]!r} at row {row}, "
                         f"column {column}")
    if concept_names is not None:
        names = [str(name) for name in concept_names]
    if names is None:
        raise ValueError("concept names are needed: pass a DataFrame or concept_names")
    if len(names) != matrix.shape[1]:
        raise ValueError(f"{len(names)} concept names for {matrix.shape[1]} concept columns")
    if len(set(names)) != len(names):
        raise ValueError("concept names must be unique")
    return matrix, names


@dataclass(frozen=True)
class ProbingData:
    """What a method may look at besides the activations, all aligned with the N activation rows.

    Attributes
    ----------
    concepts : (N, T) float array in [0, 1]
        ``c_t(x)``: labels (0/1) or pseudo-labels.
    concept_names : list of str
        Column names of ``concepts`` (the names explanations use).
    masks : (N, T, H, W) bool array, optional
        Per-pixel concept masks (Network Dissection, Compositional Explanations, CCE).
    captions : list of str, optional
        One caption per input (caption-based explanations).
    tokens : list of str, optional
        The token at each position, for text units whose rows are token positions.
    contexts : list of str, optional
        A text rendering of each input (LLM explainer/simulator).
    """

    concepts: np.ndarray
    concept_names: list[str]
    masks: np.ndarray | None = None
    captions: list[str] | None = None
    tokens: list[str] | None = None
    contexts: list[str] | None = None

    @classmethod
    def build(cls, concepts: Any, concept_names: Sequence[str] | None = None, *, masks: Any = None,
              captions: Sequence[str] | None = None, tokens: Sequence[str] | None = None,
              contexts: Sequence[str] | None = None) -> ProbingData:
        """Checked probing data: shapes agree with the concept matrix, masks are boolean, texts are strings."""
        matrix, names = as_concepts(concepts, concept_names)
        n, t = matrix.shape
        mask_array = None
        if masks is not None:
            mask_array = np.asarray(masks)
            if mask_array.ndim != 4 or mask_array.shape[:2] != (n, t):
                raise ValueError(f"masks must have shape (N={n}, T={t}, H, W), got {mask_array.shape}")
            mask_array = mask_array.astype(bool, copy=False)
        texts = {}
        for field_name, values in (("captions", captions), ("tokens", tokens), ("contexts", contexts)):
            if values is None:
                texts[field_name] = None
                continue
            values = [str(value) for value in values]
            if len(values) != n:
                raise ValueError(f"{field_name} has {len(values)} entries for {n} inputs")
            texts[field_name] = values
        return cls(matrix, names, mask_array, **texts)

    @property
    def n_inputs(self) -> int:
        return int(self.concepts.shape[0])

    def require(self, field_name: str, method: str) -> Any:
        value = getattr(self, field_name)
        if value is None:
            raise ValueError(f"{method} needs probing data {field_name!r}, which was not given")
        return value


def check_rows(activations: np.ndarray, probing: ProbingData) -> None:
    """Activations and probing data describe the same N inputs."""
    if activations.shape[0] != probing.n_inputs:
        raise ValueError(f"activations have {activations.shape[0]} rows (inputs) but the probing data has "
                         f"{probing.n_inputs}")


@runtime_checkable
class Explainer(Protocol):
    """Activations + probing data → one explanation per unit, as an explanations table.

    ``explain(activations, probing, unit_names=None)`` returns a DataFrame with the columns
    ``unit, explanation, length, kind`` and the method's score columns; ``name`` is the method's file name
    (``explanations/<setting>/<name>.csv``).
    """

    name: str

    def explain(self, activations: Any, probing: ProbingData, *,
                unit_names: Sequence[str] | None = None) -> pd.DataFrame: ...


@runtime_checkable
class Simulator(Protocol):
    """Explanation + probing inputs → predicted activations, one per input (paper 001 App. B.2).

    ``inputs`` selects rows of the probing data (all rows when ``None``). :class:`neuroneval.explain.simulate.
    ConceptSimulator` computes Eq. 14–19 from concept vectors; :class:`neuroneval.explain.llm_backend.
    LLMSimulator` asks a chat model.
    """

    def simulate(self, explanation: Any, probing: ProbingData,
                 inputs: Sequence[int] | None = None) -> np.ndarray: ...
