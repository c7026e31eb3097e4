"""Input checks at the boundary of the metric engine; messages say what was expected and what arrived."""

from __future__ import annotations

from typing import Any

import numpy as np


def _column_label(names: list[Any] | None, column: int) -> str:
    """``column 3`` or, for a DataFrame, ``column 3 ('dog')``."""
    return f"column {column}" + (f" ({names[column]!r})" if names is not None and column < len(names) else "")


def as_matrix(values: Any, name: str) -> np.ndarray:
    """A finite float32/float64 (n, columns) matrix from a numpy array or pandas DataFrame (no copy if possible).

    float32 stays float32 (every kernel casts the rows it uses to float64 on the way, exactly); other numeric
    and bool inputs become float64.
    """
    names = list(values.columns) if hasattr(values, "to_numpy") and hasattr(values, "columns") else None
    if names is not None:
        values = values.to_numpy()
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n inputs, columns) array or DataFrame, got {array.ndim}-D "
                         f"with shape {array.shape}")
    if array.dtype == object or not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise ValueError(f"{name} must hold numbers (float, int or bool), got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.complexfloating):
        raise ValueError(f"{name} must be real, got dtype {array.dtype}")
    if array.dtype != np.float32:
        array = np.asarray(array, dtype=np.float64)
    if not np.isfinite(array.sum(dtype=np.float64)) and not np.all(np.isfinite(array)):
        rows, columns = np.nonzero(~np.isfinite(array))
        raise ValueError(f"{name} must be finite; found {rows.size} NaN/inf value(s), first at row {rows[0]}, "
                         f"{_column_label(names, int(columns[0]))}")
    return array


def check_concept_range(concepts: np.ndarray, names: list[Any] | None = None) -> None:
    """Concept values are probabilities ``P(t | x)``: every one must lie in [0, 1].

    Two passes (min, max) when they do; otherwise ``ValueError`` naming how many values are outside, the first
    one (row-major) with its row and column (and the column's name for a DataFrame).
    """
    if concepts.size == 0 or (concepts.min() >= 0.0 and concepts.max() <= 1.0):
        return
    rows, columns = np.nonzero((concepts < 0.0) | (concepts > 1.0))
    row, column = int(rows[0]), int(columns[0])
    raise ValueError(f"concepts must lie in [0, 1] (probabilities P(t | x)); found {rows.size} value(s) outside, "
                     f"first {float(concepts[row, column])!r} at row {row}, {_column_label(names, column)}")


def check_inputs(activations: Any, concepts: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both matrices checked (:func:`as_matrix`, concepts in [0, 1]) and their rows matched."""
    activation_matrix = as_matrix(activations, "activations")
    concept_names = list(concepts.columns) if hasattr(concepts, "to_numpy") and hasattr(concepts, "columns") else None
    concept_matrix = as_matrix(concepts, "concepts")
    check_concept_range(concept_matrix, concept_names)
    if activation_matrix.shape[0] != concept_matrix.shape[0]:
        raise ValueError(f"activations and concepts must have the same number of rows (inputs); got "
                         f"{activation_matrix.shape[0]} and {concept_matrix.shape[0]}")
    if activation_matrix.shape[0] < 2:
        raise ValueError(f"at least 2 inputs (rows) are needed, got {activation_matrix.shape[0]}")
    return activation_matrix, concept_matrix


def check_pairs(pairs: Any, n_units: int, n_concepts: int) -> np.ndarray:
    array = np.asarray(pairs)
    if array.size == 0:
        return np.empty((0, 2), dtype=np.int64)
    if array.ndim != 2 or array.shape[1] != 2 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"pairs must be an integer (m, 2) array of (unit, concept) positions, got dtype "
                         f"{array.dtype} and shape {array.shape}")
    array = array.astype(np.int64)
    bad_units = (array[:, 0] < 0) | (array[:, 0] >= n_units)
    bad_concepts = (array[:, 1] < 0) | (array[:, 1] >= n_concepts)
    if bad_units.any() or bad_concepts.any():
        row = int(np.nonzero(bad_units | bad_concepts)[0][0])
        raise ValueError(f"pair {row} = {tuple(array[row])} is out of range: units 0…{n_units - 1}, "
                         f"concepts 0…{n_concepts - 1}")
    return array


def check_units(units: Any, n_units: int) -> np.ndarray:
    """``units`` as int64 column positions of ``activations``; names the first one out of range."""
    array = np.asarray(units)
    if array.size == 0:
        return np.empty(0, dtype=np.int64)
    if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"units must be a 1-D integer array of unit positions, got dtype {array.dtype} and shape "
                         f"{array.shape}")
    array = array.astype(np.int64)
    bad = (array < 0) | (array >= n_units)
    if bad.any():
        position = int(np.nonzero(bad)[0][0])
        raise ValueError(f"units[{position}] = {array[position]} is out of range: units 0…{n_units - 1}")
    if np.unique(array).size != array.size:
        raise ValueError("units must not repeat a unit position")
    return array
