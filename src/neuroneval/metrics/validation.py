"""Input checks at the boundary of the metric engine; messages say what was expected and what arrived."""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from typing import Any

import numpy as np

from neuroneval.metrics.binarize import TOP_ALPHA_RULES
from neuroneval.metrics.budget import check_setting
from neuroneval.metrics.context import Params
from neuroneval.metrics.registry import COMMON_PARAMS, DEFAULTS, MetricSpec

TIES = ("average", "reference")


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


def _number(name: str, value: Any, low: float, high: float, *, low_open: bool, integer: bool = False) -> Any:
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value):
        raise ValueError(f"{name} must be {'an integer' if integer else 'a finite real number'}, got {value!r}")
    above = value > low if low_open else value >= low
    if not (above and value <= high):
        bracket = "(" if low_open else "["
        raise ValueError(f"{name} must lie in {bracket}{low}, {high}], got {value!r}")
    return int(value) if integer else float(value)


def resolve_params(spec: MetricSpec, given: Mapping[str, Any]) -> tuple[Params, Any]:
    """Defaults filled in, names and values checked; returns (Params, device)."""
    allowed = set(spec.params) | set(COMMON_PARAMS)
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise TypeError(f"unknown parameter(s) {unknown} for metric {spec.name!r}; parameters are "
                        f"{', '.join(DEFAULTS)}")
    unused = sorted(set(given) - allowed)
    if unused:
        raise ValueError(f"metric {spec.name!r} takes no parameter(s) {unused}; it accepts "
                         f"{', '.join(sorted(allowed))}")
    merged = {**DEFAULTS, **given}
    ties = merged["ties"]
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    top_alpha = merged["top_alpha"]
    if top_alpha not in TOP_ALPHA_RULES:
        raise ValueError(f"top_alpha must be one of {TOP_ALPHA_RULES}, got {top_alpha!r}")
    chunk_size = merged["chunk_size"]
    if chunk_size is not None:
        chunk_size = _number("chunk_size", chunk_size, 1, np.inf, low_open=False, integer=True)
    params = Params(
        alpha=_number("alpha", merged["alpha"], 0.0, 1.0, low_open=True),
        lam=_number("lam", merged["lam"], -np.inf, np.inf, low_open=True),
        tr_top_fraction=_number("tr_top_fraction", merged["tr_top_fraction"], 0.0, 1.0, low_open=True),
        tr_n_top=_number("tr_n_top", merged["tr_n_top"], 0, np.inf, low_open=False, integer=True),
        tr_n_random=_number("tr_n_random", merged["tr_n_random"], 0, np.inf, low_open=False, integer=True),
        ties=ties,
        seed=_number("seed", merged["seed"], 0, np.inf, low_open=False, integer=True),
        chunk_size=chunk_size,
        top_alpha=top_alpha,
        memory_budget=check_setting(merged["memory_budget"]),
    )
    if params.tr_n_top + params.tr_n_random < 2:
        raise ValueError(f"a top-and-random sample needs at least 2 inputs, got tr_n_top={params.tr_n_top} and "
                         f"tr_n_random={params.tr_n_random}")
    return params, merged["device"]
