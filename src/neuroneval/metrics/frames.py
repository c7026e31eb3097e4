"""DataFrame inputs of the public scoring functions: rows aligned by ``input_id``, results labelled.

The data contract (docs/design.md §2.1) gives every table an ``input_id`` column (:data:`neuroneval.io.ID_COLUMN`)
and one value column per unit or concept. :func:`align` turns the two inputs of a scoring call into value
matrices whose rows are the same inputs:

* two arrays, or frames without ``input_id``: rows are matched by position, as given (nothing is reordered);
* two frames with ``input_id``: both must hold the same set of ids (``ValueError`` names the ids only in one of
  them, the first few and their count); rows are put in ascending ``input_id`` order, so a call on shuffled
  frames equals the call on sorted ones exactly (also for the metrics whose random samples and tie-breaking noise
  follow input positions) and the ``input_id`` column is never scored;
* a frame with ``input_id`` beside an array or a frame without it: ``ValueError`` (its rows cannot be matched).

Labels (:func:`label`): when either input is a DataFrame, a (units × concepts) result becomes a DataFrame whose
index holds the activations' column names (``unit``) and whose columns hold the concepts' (``concept``); the side
given as an array is labelled by column position. Arrays in, arrays out.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Ids of each side listed in a mismatch message.
SHOWN_IDS = 5


def is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (without importing pandas: none exists before it is imported)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


@dataclass(frozen=True)
class AlignedInputs:
    """Value matrices (or value-only frames) with matching rows, their column labels, and the object a
    :class:`~neuroneval.metrics.context.FeatureCache` is bound to.

    ``unit_names``/``concept_names`` are ``None`` for an array; ``labelled`` says whether results become frames;
    ``cache_source`` is the activations object the caller passed (the same object on every call, whatever copy
    alignment made).
    """

    activations: Any
    concepts: Any
    unit_names: list[Any] | None
    concept_names: list[Any] | None
    cache_source: Any

    @property
    def labelled(self) -> bool:
        return self.unit_names is not None or self.concept_names is not None


def _id_column() -> str:
    from neuroneval.io import ID_COLUMN

    return ID_COLUMN


def _ids(frame: Any, name: str, id_column: str) -> np.ndarray:
    """The frame's ids as an array; ``ValueError`` names a repeated id."""
    ids = frame[id_column].to_numpy()
    if ids.dtype == object or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(f"{name}: column {id_column!r} must hold integer ids, got dtype {ids.dtype}")
    ordered = np.sort(ids, kind="stable")
    repeated = np.flatnonzero(ordered[1:] == ordered[:-1])
    if repeated.size:
        bad = ordered[repeated[0]]
        rows = np.flatnonzero(ids == bad)[:2].tolist()
        raise ValueError(f"{name}: {id_column} {int(bad)} is repeated (rows {rows})")
    return ids


def _shown(ids: np.ndarray) -> str:
    if ids.size == 0:
        return "none"
    listed = ", ".join(str(int(value)) for value in ids[:SHOWN_IDS])
    return f"{ids.size} ({listed}{', …' if ids.size > SHOWN_IDS else ''})"


def check_same_ids(activation_ids: np.ndarray, concept_ids: np.ndarray, id_column: str) -> None:
    """``ValueError`` unless both sides hold the same set of ids; it names the ids only in each side (first
    :data:`SHOWN_IDS`, ascending) and how many there are."""
    only_activations = np.setdiff1d(activation_ids, concept_ids)
    only_concepts = np.setdiff1d(concept_ids, activation_ids)
    if only_activations.size or only_concepts.size:
        raise ValueError(f"activations and concepts must hold the same {id_column}s; only in activations: "
                         f"{_shown(only_activations)}; only in concepts: {_shown(only_concepts)}")


def _values(frame: Any, id_column: str, order: np.ndarray | None) -> Any:
    """The frame without its id column, rows in ``order`` (``None``: as they are), as a value-only frame that
    wraps one 2-D array (the engine reads its column names for error messages)."""
    values = frame.drop(columns=[id_column])
    if order is None:
        return values
    return values.iloc[order].reset_index(drop=True)


def align(activations: Any, concepts: Any) -> AlignedInputs:
    """The two inputs of a scoring call with rows matched by ``input_id`` (module docstring)."""
    original = activations
    activation_frame, concept_frame = is_frame(activations), is_frame(concepts)
    if not activation_frame and not concept_frame:
        return AlignedInputs(activations, concepts, None, None, activations)
    id_column = _id_column()
    activation_ids = activation_frame and id_column in activations.columns
    concept_ids = concept_frame and id_column in concepts.columns
    if activation_ids != concept_ids:
        with_ids, without = ("activations", "concepts") if activation_ids else ("concepts", "activations")
        kind = "a DataFrame without it" if (concept_frame if activation_ids else activation_frame) else "an array"
        raise ValueError(f"{with_ids} has an {id_column!r} column but {without} is {kind}: rows cannot be "
                         f"matched; pass both as DataFrames with {id_column!r} (or both without it)")
    if activation_ids:
        first = _ids(activations, "activations", id_column)
        second = _ids(concepts, "concepts", id_column)
        check_same_ids(first, second, id_column)
        first_sorted = bool(np.all(first[1:] > first[:-1]))
        second_sorted = bool(np.all(second[1:] > second[:-1]))
        activations = _values(activations, id_column, None if first_sorted else np.argsort(first, kind="stable"))
        concepts = _values(concepts, id_column, None if second_sorted else np.argsort(second, kind="stable"))
    unit_names = list(activations.columns) if activation_frame else None
    concept_names = list(concepts.columns) if concept_frame else None
    return AlignedInputs(activations, concepts, unit_names, concept_names, original)


def label(scores: np.ndarray, inputs: AlignedInputs, units: np.ndarray | None = None) -> Any:
    """``scores`` (len(units) or K, C) as a DataFrame labelled by unit and concept names when ``inputs`` are
    labelled (module docstring), else unchanged. ``units``: the column positions of the rows (``score_units``)."""
    if not inputs.labelled:
        return scores
    import pandas as pd

    positions = range(scores.shape[0]) if units is None else np.asarray(units).tolist()
    rows = list(positions) if inputs.unit_names is None else [inputs.unit_names[k] for k in positions]
    concept_names = inputs.concept_names if inputs.concept_names is not None else list(range(scores.shape[1]))
    return pd.DataFrame(scores, index=pd.Index(rows, name="unit"), columns=pd.Index(concept_names, name="concept"),
                        copy=False)
