"""Explanations of degenerate units and too-small top fractions, checked where a method is called (docs/explain.md).

A constant unit has no top inputs: every method that binarizes it at a top quantile marks all inputs active
and "explains" it by the most frequent concept with a confident score (IoU = the concept's positive rate).
:func:`flag_degenerate_explanations` keeps such rows (the contract has one row per unit) but adds a boolean
``degenerate`` column and blanks their score columns (NaN), so no table built from them can rank a constant or
near-dead unit as well explained; the definition is :func:`neuroneval.metrics.unit_checks.degenerate_units`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.explanation import CSV_COLUMNS
from neuroneval.metrics.unit_checks import DEGENERATE_COLUMN, DegenerateUnits, UnitCheckOptions, warn_small_probe_set

#: Option fields of the explanation methods that are a top fraction of the inputs (checked against n).
TOP_FRACTION_OPTIONS = ("quantile",)


def warn_small_quantile(method: str, options: Any, n_inputs: int, *,
                        check_options: UnitCheckOptions | None = None) -> list[float]:
    """:func:`~neuroneval.metrics.unit_checks.warn_small_probe_set` for the top-fraction option(s) of a method's
    options (``quantile``: 0.005 selects 3–4 of 719 inputs); returns the fractions that were too small."""
    small: list[float] = []
    for name in TOP_FRACTION_OPTIONS:
        value = getattr(options, name, None)
        if value is not None:
            small += warn_small_probe_set(n_inputs, name, value, where=f"explain {method}", options=check_options,
                                          stacklevel=2)
    return small


def flag_degenerate_explanations(frame: pd.DataFrame, units: DegenerateUnits) -> pd.DataFrame:
    """An explanations table (``unit, explanation, length, kind, <scores>``) with a boolean ``degenerate`` column
    and NaN in every score column of a degenerate unit's row, and a warning naming those units.

    The explanation text stays (it parses, so downstream readers keep working) but carries no confidence: a
    method's score of a unit that varies on fewer than ``min_varying_inputs`` inputs measures the concept's
    base rate, not the unit. Units of ``frame`` that ``units`` does not know raise ``KeyError`` naming them.
    """
    flags = units.by_name()
    unknown = sorted(set(frame["unit"].astype(str)) - set(flags))
    if unknown:
        raise KeyError(f"explanations name units the activation table lacks: {unknown[:5]}")
    flagged = frame.copy()
    degenerate = np.array([flags[unit] for unit in frame["unit"].astype(str)], dtype=bool)
    for column in frame.columns[len(CSV_COLUMNS):]:
        flagged[column] = flagged[column].astype(np.float64).where(~degenerate, np.nan)
    flagged[DEGENERATE_COLUMN] = degenerate
    units.warn("their explanations are kept but flagged (column 'degenerate') and their scores set to NaN",
               stacklevel=2)
    return flagged
