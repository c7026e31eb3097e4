"""Files of the simulated crowd study: its input tables, checked, and its per-unit error tables.

:func:`read_study_units` reads activations, binary ground-truth labels and pseudo-label scores and explains
each unit (Eq. 9–10); :func:`write_unit_errors` and :func:`read_unit_errors` store the per-unit errors of
:mod:`neuroneval.crowd.curves` at full float precision, so the cost-reduction factors are computed from exactly
the numbers the curves were computed from. Errors name the file, the column and, where one is at fault, the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.crowd.cost_reduction import UNIT_ERROR_COLUMNS
from neuroneval.crowd.study_units import StudyUnits, select_explanations

#: Float format of the per-unit error tables: 17 significant digits round-trip float64 exactly.
EXACT_FLOAT_FORMAT = "%.17g"


def read_study_units(
    activation_file: str | Path,
    concept_file: str | Path,
    pseudo_file: str | Path,
    *,
    concept_prefixes: Sequence[str],
    min_true_correlation: float,
    max_units: int | None,
) -> StudyUnits:
    """Read the study's tables and explain each unit by its best-correlated concept (Eq. 9–10).

    The ground-truth concepts are the columns of ``concept_file`` that start with ``concept_prefixes``; they
    must be binary. ``pseudo_file`` must have the same input ids and every one of those concept columns.

    Returns
    -------
    StudyUnits
        :func:`~neuroneval.crowd.study_units.select_explanations` of the tables.

    Raises
    ------
    ValueError
        Naming the file and the column (non-binary label, missing pseudo-label column) or the input ids.
    """
    from neuroneval.settings import load_setting

    data = load_setting([Path(activation_file)], Path(concept_file), concept_prefixes=list(concept_prefixes))
    non_binary = [
        name
        for index, name in enumerate(data.concept_names)
        if not np.all((data.concepts[:, index] == 0) | (data.concepts[:, index] == 1))
    ]
    if non_binary:
        raise ValueError(
            f"{concept_file}: ground-truth concept column(s) {non_binary[:5]} are not binary (0/1); "
            "the simulated study needs labels, not scores"
        )
    pseudo_frame, _ = io.read_concept_table(pseudo_file)
    concept_frame, _ = io.read_concept_table(concept_file)
    io.check_matching_ids(concept_frame, pseudo_frame, first_source=str(concept_file), second_source=str(pseudo_file))
    missing = [name for name in data.concept_names if name not in pseudo_frame.columns]
    if missing:
        raise ValueError(f"{pseudo_file}: pseudo-label table lacks concept column(s) {missing[:5]} of {concept_file}")
    return select_explanations(
        data.activations,
        data.concepts,
        pseudo_frame[data.concept_names].to_numpy(dtype=np.float64),
        unit_ids=data.unit_names,
        concept_names=data.concept_names,
        min_true_correlation=min_true_correlation,
        max_units=max_units,
    )


def write_unit_errors(path: str | Path, unit_errors: pd.DataFrame) -> Path:
    """Write a per-unit error table with :data:`EXACT_FLOAT_FORMAT` (float64 round-trips exactly)."""
    return io.write_csv(path, unit_errors, float_format=EXACT_FLOAT_FORMAT)


def read_unit_errors(path: str | Path, experiment: str) -> pd.DataFrame:
    """Read a per-unit error table of the ``"sampling"`` or ``"aggregation"`` curve (:func:`write_unit_errors`).

    Raises ``ValueError`` naming the file and the missing columns, or the first row with an unreadable error.
    """
    frame = pd.read_csv(path, dtype={"unit": str, "concept": str, "method": str})
    missing = [column for column in UNIT_ERROR_COLUMNS[experiment] if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected a per-unit {experiment} error table")
    errors = pd.to_numeric(frame["relative_error"], errors="coerce")
    bad = errors.isna() & frame["relative_error"].notna()
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(
            f"{path}, row {row + 2}, column relative_error: {frame['relative_error'].iloc[row]!r} is not a number"
        )
    return frame.assign(relative_error=errors)
