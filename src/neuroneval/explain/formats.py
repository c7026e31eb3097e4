"""Reading explanation files into the project's explanation frame (stand-in: the project CSV only).

:func:`read_explanation_file` reads format ``"neuroneval"`` (the CSV of ``explanations/<setting>/<method>.csv``,
docs/design.md §2.5); ``"auto"`` means that format. Rows whose explanation cannot be read are returned in
``unscorable`` (``row, unit, text, reason``) instead of failing the file.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

#: Formats this reader knows (``auto`` picks one).
FORMATS = ("auto", "neuroneval")


@dataclass(frozen=True)
class ImportedExplanations:
    """An explanation file read into the project's frame, and the rows that could not be read."""

    explanations: pd.DataFrame  # unit, explanation, length, kind, … + source_text, mapped_by
    unscorable: pd.DataFrame  # row, unit, text, reason
    format: str


def read_explanation_file(path: str | os.PathLike, *, format: str = "auto", concept_names: Sequence[str],
                          mapping: Any = None, unit_names: Sequence[str] | None = None,
                          source: str | None = None) -> ImportedExplanations:
    """Read an explanation file; rows that do not parse, or that name a concept outside ``concept_names``, go to
    ``unscorable`` with the reason (the file's row, 0-based). ``unit_names`` keeps only those units."""
    from neuroneval.explain.explanation import CSV_COLUMNS, length, parse

    if format not in FORMATS:
        raise ValueError(f"{path}: unknown explanation format {format!r}; known: {list(FORMATS)}")
    if mapping is not None:
        raise ValueError(f"{path}: a text mapping needs the full formats module; format 'neuroneval' takes none")
    name = source or str(path)
    frame = pd.read_csv(path, dtype={"unit": str, "explanation": str, "kind": str}, keep_default_na=False)
    missing = [column for column in CSV_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{name}: missing column(s) {missing}; an explanations table has {list(CSV_COLUMNS)}")
    known, wanted = set(map(str, concept_names)), None if unit_names is None else set(map(str, unit_names))
    kept, problems = [], []
    for row, (unit, text, kind) in enumerate(zip(frame["unit"], frame["explanation"], frame["kind"], strict=True)):
        if wanted is not None and unit not in wanted:
            continue
        try:
            parsed = parse(text, kind)
        except ValueError as error:
            problems.append({"row": row, "unit": unit, "text": text, "reason": str(error)})
            continue
        unknown = [concept for concept in parsed.concepts() if kind != "text" and concept not in known]
        if unknown:
            problems.append({"row": row, "unit": unit, "text": text,
                             "reason": f"concept {unknown[0]!r} is not a column of the concept table"})
            continue
        kept.append(row)
    explanations = frame.iloc[kept].reset_index(drop=True)
    explanations["length"] = [length(parse(text, kind)) for text, kind in
                              zip(explanations["explanation"], explanations["kind"], strict=True)]
    explanations["source_text"] = explanations["explanation"]
    explanations["mapped_by"] = "neuroneval"
    duplicated = explanations["unit"][explanations["unit"].duplicated()]
    if not duplicated.empty:
        raise ValueError(f"{name}: unit {duplicated.iloc[0]!r} appears more than once")
    unscorable = pd.DataFrame(problems, columns=["row", "unit", "text", "reason"])
    return ImportedExplanations(explanations=explanations, unscorable=unscorable, format="neuroneval")
