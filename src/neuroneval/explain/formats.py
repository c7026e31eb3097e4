"""Explanation files of other tools → the project's explanation table, with every unscorable row listed.

:func:`read_explanation_file` reads one file (or one tool's output folder) in a format of :data:`FORMATS`,
names each unit as the activation table does, maps each text to the concept vocabulary
(:class:`neuroneval.explain.text_mapping.ConceptMatcher`: exact name, formula, synonym, embedding) and returns
:class:`ImportedExplanations`: the scorable rows as an explanation table plus ``source_text`` and ``mapped_by``,
and every other row with its reason. docs/explain.md §6 shows each format with an example record.

Units. Each format names a unit by its own fields; a unit template (``str.format`` over those fields) gives the
activation-table column. The defaults: ``neuroneval`` ``{unit}``; ``unit_description`` ``{unit}``, or
``{layer}/{unit}`` when the file has a ``layer`` column; ``delphi`` ``{module}/{index}``; ``neuronpedia``
``{layer}/{index}`` (``model`` is also a field); ``openai_autointerp`` ``{layer}/{index}``. ``unit_template``
replaces the default; ``unit_map`` (a mapping or a CSV ``source_unit,unit``) then renames the templated names
it lists. With ``unit_names`` (the activation table's columns), a unit outside it is unscorable with the reason
``unit not in the activation table``.

Rows. A record that breaks its format (missing field, wrong type, unreadable JSON) raises ``ValueError`` naming
the file, the row (0-based record position: CSV data row, JSON array item, JSONL line without blank lines, or
the file of a folder) and the field. A readable record that cannot be scored (empty text, unit not in the table,
a unit explained earlier in the file, text that maps to no concept) is a row of ``unscorable``.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.explanation import CSV_COLUMNS, explanation_frame, read_explanations
from neuroneval.explain.text_mapping import ConceptMatcher, Match, TextMapping

UNSCORABLE_COLUMNS = ("row", "unit", "text", "reason")
#: Columns the imported table carries after the explanation-table contract (``similarity`` is numeric: the
#: cosine of an ``embedding`` match, NaN otherwise).
IMPORT_COLUMNS = ("similarity", "source_text", "mapped_by")
UNIT_NOT_IN_TABLE = "unit not in the activation table"

#: Column aliases of the ``unit_description`` format, case-insensitive, first present alias wins.
UNIT_ALIASES = ("unit", "neuron", "feature", "unit_id", "neuron_id", "feature_id", "latent", "index")
TEXT_ALIASES = ("description", "explanation", "label", "concept", "text")

_DELPHI_NAME = re.compile(r"(?P<module>.+)_latent(?P<index>\d+)\.txt")


@dataclass(frozen=True)
class SourceRecord:
    """One explanation as a tool wrote it: its position, unit fields, text and (project CSV only) kind."""

    row: int
    fields: Mapping[str, str]
    text: str
    kind: str | None = None
    where: str = ""


@dataclass(frozen=True)
class FormatSpec:
    """One explanation file format: its reader, unit fields and default unit template, and the source it follows.

    ``read(path, source)`` returns the records and the default unit template for that file.
    """

    name: str
    read: Callable[[Path, str], tuple[list[SourceRecord], str]]
    unit_fields: tuple[str, ...]
    unit_template: str
    follows: str
    summary: str


@dataclass(frozen=True)
class ImportedExplanations:
    """What :func:`read_explanation_file` returns.

    explanations: the explanation table (``unit, explanation, length, kind``) of the scorable rows, then
    ``similarity``, ``source_text`` (the text as the tool wrote it) and ``mapped_by`` (one of ``exact``,
    ``formula``, ``synonym``, ``embedding``). unscorable: ``row, unit, text, reason`` for every other record.
    format: the format read.
    """

    explanations: pd.DataFrame
    unscorable: pd.DataFrame
    format: str

    def scorable_table(self) -> pd.DataFrame:
        """The explanation table alone (contract columns and ``similarity``), as ``simulate_table`` reads it."""
        return self.explanations[[*CSV_COLUMNS, "similarity"]]


# ------------------------------------------------------------------------------------------------------- readers
def _read_neuroneval(path: Path, source: str) -> tuple[list[SourceRecord], str]:
    """The project's own ``explanations/<setting>/<method>.csv`` (:func:`neuroneval.explain.read_explanations`)."""
    frame = read_explanations(path)
    records = [SourceRecord(row, {"unit": unit}, text, kind)
               for row, (unit, text, kind) in enumerate(zip(frame["unit"], frame["explanation"], frame["kind"],
                                                            strict=True))]
    return records, "{unit}"


def _read_unit_description(path: Path, source: str) -> tuple[list[SourceRecord], str]:
    """CSV ``unit,description`` (CLIP-Dissect and MILAN results as published with CLIP-Dissect).

    Follows ``data/CLIP_Dissect_results/*.csv`` (``layer,unit,description,similarity``) and
    ``data/MILAN_results/*.csv`` (``layer,unit,description``) of Trustworthy-ML-Lab/CLIP-dissect at commit
    c1565e179fd68b3d5c03c61e827e836e14a6cab7. The unit column is the first of :data:`UNIT_ALIASES` present, the
    text column the first of :data:`TEXT_ALIASES` (header case-insensitive); every column is a template field.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [name.strip().lower() for name in next(reader, [])]
        unit_column = next((alias for alias in UNIT_ALIASES if alias in header), None)
        text_column = next((alias for alias in TEXT_ALIASES if alias in header), None)
        if unit_column is None or text_column is None:
            wanted = "unit" if unit_column is None else "text"
            aliases = UNIT_ALIASES if unit_column is None else TEXT_ALIASES
            raise ValueError(f"{source}: no {wanted} column; expected one of {list(aliases)}, got {header}")
        records = []
        for row, values in enumerate(reader):
            if len(values) != len(header):
                raise ValueError(f"{source}, row {row}: {len(values)} fields but the header has {len(header)}")
            fields = dict(zip(header, (value.strip() for value in values), strict=True))
            if not fields[unit_column]:
                raise ValueError(f"{source}, row {row}: column {unit_column!r} is empty")
            fields["unit"] = fields[unit_column]
            records.append(SourceRecord(row, fields, fields[text_column]))
    return records, "{layer}/{unit}" if "layer" in header else "{unit}"


def _read_delphi(path: Path, source: str) -> tuple[list[SourceRecord], str]:
    """EleutherAI/delphi's saved explanations: ``<explanations dir>/<module>_latent<index>.txt``.

    Follows ``delphi/__main__.py`` (``explainer_postprocess`` writes ``orjson.dumps(result.explanation)`` to
    ``explanations_path / f"{result.record.latent}.txt"``) and ``delphi/latents/latents.py``
    (``Latent.__repr__``: ``f"{module_name}_latent{latent_index}"``) of EleutherAI/delphi at commit
    078745ec6d92314f68ba4c32d80e4eac1847f178. A file holds a JSON string; a JSON object with an
    ``explanation`` string (as some delphi scripts write) and plain, non-JSON text are read too. ``path`` is the
    explanations folder or one such file.
    """
    files = sorted(path.glob("*.txt")) if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{source}: no <module>_latent<index>.txt files in this folder")
    records = []
    for row, file in enumerate(files):
        match = _DELPHI_NAME.fullmatch(file.name)
        if match is None:
            raise ValueError(f"{source}, row {row} ({file.name}): the file name is not <module>_latent<index>.txt")
        raw = file.read_text(encoding="utf-8")
        try:
            content = json.loads(raw)
        except json.JSONDecodeError:
            content = raw.strip()
        if isinstance(content, dict):
            content = content.get("explanation")
        if not isinstance(content, str):
            raise ValueError(f"{source}, row {row} ({file.name}): field 'explanation' must be a string, "
                             f"got {content!r}")
        records.append(SourceRecord(row, {"module": match["module"], "index": match["index"]}, content,
                                    where=file.name))
    return records, "{module}/{index}"


def _json_records(path: Path, source: str) -> list[tuple[int, Any]]:
    """The records of a JSON array (or one object), a JSONL file or a gzipped JSONL file, with their positions."""
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig") as handle:
        text = handle.read()
    if not path.name.endswith((".jsonl", ".jsonl.gz")):
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}: not valid JSON ({error})") from error
        items = payload if isinstance(payload, list) else [payload]
        return list(enumerate(items))
    records = []
    for row, line in enumerate(line for line in text.splitlines() if line.strip()):
        try:
            records.append((row, json.loads(line)))
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}, row {row}: not valid JSON ({error})") from error
    return records


def _field(record: Any, name: str, kinds: tuple[type, ...], source: str, row: int) -> Any:
    """``record[name]``, checked to be of one of ``kinds`` (never a bool), or a ValueError naming the field."""
    if not isinstance(record, dict):
        raise ValueError(f"{source}, row {row}: expected a JSON object, got {type(record).__name__}")
    if name not in record:
        raise ValueError(f"{source}, row {row}: field {name!r} is missing")
    value = record[name]
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise ValueError(f"{source}, row {row}: field {name!r} must be {' or '.join(k.__name__ for k in kinds)}, "
                         f"got {value!r}")
    return value


def _index_text(value: Any, name: str, source: str, row: int) -> str:
    text = str(value).strip()
    if not text.isdigit():
        raise ValueError(f"{source}, row {row}: field {name!r} must be a non-negative integer, got {value!r}")
    return str(int(text))


def _read_neuronpedia(path: Path, source: str) -> tuple[list[SourceRecord], str]:
    """Neuronpedia explanation exports: records ``{modelId, layer, index, description, …}``.

    Follows the ``Explanation`` model of ``apps/webapp/prisma/schema.prisma`` in hijohnnylin/neuronpedia at
    commit 008d5040ab97abd5c44d92d190b30034ad7a6e97 (``modelId``, ``layer`` — the source id such as
    ``6-res-jb`` —, ``index`` as strings, ``description``; ``typeName``, ``explanationModelName`` optional).
    Read from a JSON array (the former ``/api/explanation/export``), a JSONL file or a gzipped JSONL batch (the
    ``neuronpedia-datasets`` exports), or a feature object with an ``explanations`` list.
    """
    records = []
    items = _json_records(path, source)
    if len(items) == 1 and isinstance(items[0][1], dict) and isinstance(items[0][1].get("explanations"), list):
        items = list(enumerate(items[0][1]["explanations"]))
    for row, record in items:
        model = _field(record, "modelId", (str,), source, row)
        layer = _field(record, "layer", (str, int), source, row)
        index = _index_text(_field(record, "index", (str, int), source, row), "index", source, row)
        text = _field(record, "description", (str,), source, row)
        records.append(SourceRecord(row, {"model": model, "layer": str(layer), "index": index}, text))
    return records, "{layer}/{index}"


def _read_openai_autointerp(path: Path, source: str) -> tuple[list[SourceRecord], str]:
    """openai/automated-interpretability's explanation records (``NeuronSimulationResults`` JSON lines).

    Follows ``neuron-explainer/neuron_explainer/explanations/explanations.py`` (``NeuronSimulationResults``:
    ``neuron_id`` and ``scored_explanations``, each a ``ScoredExplanation`` with ``explanation`` and
    ``scored_simulation.ev_correlation_score``; files ``<explanations>/<layer_index>/<neuron_index>.jsonl``)
    at commit 12fc736aeb9c757a2f287c45df3a9c56981cb853, and ``NeuronId`` (``layer_index``, ``neuron_index``) of
    ``neuron_explainer/activations/activations.py``. ``path`` is one ``.jsonl`` file (one record per line) or
    the explanations folder. Of several scored explanations the one of highest ``ev_correlation_score`` is
    taken (a missing or null score counts lowest; ties keep the first).
    """
    files = sorted(path.glob("*/*.jsonl"), key=lambda file: (_numeric(file.parent.name), _numeric(file.stem))) \
        if path.is_dir() else [path]
    if not files:
        raise ValueError(f"{source}: no <layer>/<neuron>.jsonl files in this folder")
    records = []
    for file in files:
        file_source = source if file == path else f"{source}/{file.relative_to(path)}"
        for _, record in _json_records(file, file_source):
            row = len(records)
            neuron = _field(record, "neuron_id", (dict,), file_source, row)
            layer = _index_text(_field(neuron, "layer_index", (int, str), file_source, row), "neuron_id.layer_index",
                                file_source, row)
            index = _index_text(_field(neuron, "neuron_index", (int, str), file_source, row),
                                "neuron_id.neuron_index", file_source, row)
            scored = _field(record, "scored_explanations", (list,), file_source, row)
            text = _best_explanation(scored, file_source, row)
            records.append(SourceRecord(row, {"layer": layer, "index": index}, text,
                                        where="" if file == path else str(file.relative_to(path))))
    return records, "{layer}/{index}"


def _numeric(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (-1, name)


def _best_explanation(scored: list[Any], source: str, row: int) -> str:
    best_text, best_score = "", -np.inf
    for position, item in enumerate(scored):
        text = _field(item, "explanation", (str,), source, row)
        simulation = item.get("scored_simulation") or {}
        score = simulation.get("ev_correlation_score") if isinstance(simulation, dict) else None
        value = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else -np.inf
        if position == 0 or value > best_score:
            best_text, best_score = text, value
    return best_text


FORMATS: Mapping[str, FormatSpec] = {spec.name: spec for spec in (
    FormatSpec("neuroneval", _read_neuroneval, ("unit",), "{unit}",
               "src/neuroneval/explain/explanation.py (this project)",
               "explanations/<setting>/<method>.csv: unit, explanation, length, kind, scores"),
    FormatSpec("unit_description", _read_unit_description, ("unit", "<every column>"), "{unit} or {layer}/{unit}",
               "Trustworthy-ML-Lab/CLIP-dissect data/*_results/*.csv @ c1565e17",
               "CSV unit,description (CLIP-Dissect, MILAN; aliases neuron/feature, explanation/label)"),
    FormatSpec("delphi", _read_delphi, ("module", "index"), "{module}/{index}",
               "EleutherAI/delphi delphi/__main__.py @ 078745ec",
               "a folder of <module>_latent<index>.txt files, each a JSON string"),
    FormatSpec("neuronpedia", _read_neuronpedia, ("model", "layer", "index"), "{layer}/{index}",
               "hijohnnylin/neuronpedia apps/webapp/prisma/schema.prisma (Explanation) @ 008d5040",
               "JSON / JSONL(.gz) records modelId, layer, index, description"),
    FormatSpec("openai_autointerp", _read_openai_autointerp, ("layer", "index"), "{layer}/{index}",
               "openai/automated-interpretability neuron_explainer/explanations/explanations.py @ 12fc736a",
               "NeuronSimulationResults JSON lines, <layer>/<neuron>.jsonl"),
)}


# ---------------------------------------------------------------------------------------------------- detection
def detect_format(path: str | os.PathLike) -> str:
    """The format of ``path``, from its name, layout and first record; a ValueError says what was seen.

    A folder of ``*_latent<i>.txt`` files → ``delphi``; a folder of ``<layer>/<neuron>.jsonl`` →
    ``openai_autointerp``; a CSV with ``explanation``, ``length`` and ``kind`` → ``neuroneval``, another CSV
    with a unit and a text column → ``unit_description``; JSON/JSONL whose first record has ``neuron_id`` or
    ``scored_explanations`` → ``openai_autointerp``, ``modelId`` and ``description`` (or a feature object with
    ``explanations``) → ``neuronpedia``.
    """
    path = Path(path)
    if path.is_dir():
        if any(_DELPHI_NAME.fullmatch(file.name) for file in path.glob("*.txt")):
            return "delphi"
        if any(path.glob("*/*.jsonl")):
            return "openai_autointerp"
        raise ValueError(f"{path}: cannot tell the format of this folder (no <module>_latent<index>.txt, no "
                         f"<layer>/<neuron>.jsonl); pass format= one of {sorted(FORMATS)}")
    name = path.name.lower()
    if _DELPHI_NAME.fullmatch(path.name):
        return "delphi"
    if name.endswith(".csv"):
        with open(path, newline="", encoding="utf-8-sig") as handle:
            header = {column.strip().lower() for column in next(csv.reader(handle), [])}
        if {"unit", "explanation", "length", "kind"} <= header:
            return "neuroneval"
        if header & set(UNIT_ALIASES) and header & set(TEXT_ALIASES):
            return "unit_description"
        raise ValueError(f"{path}: a CSV without a unit and a text column ({sorted(header)}); expected the "
                         f"neuroneval columns {list(CSV_COLUMNS)} or one of {list(UNIT_ALIASES)} with one of "
                         f"{list(TEXT_ALIASES)}")
    if name.endswith((".json", ".jsonl", ".jsonl.gz")):
        items = _json_records(path, str(path))
        first = items[0][1] if items else None
        if isinstance(first, dict) and ("neuron_id" in first or "scored_explanations" in first):
            return "openai_autointerp"
        if isinstance(first, dict) and (("modelId" in first and "description" in first)
                                        or isinstance(first.get("explanations"), list)):
            return "neuronpedia"
        keys = sorted(first) if isinstance(first, dict) else type(first).__name__
        raise ValueError(f"{path}: cannot tell the format of a JSON record with keys {keys}; pass format= one "
                         f"of {sorted(FORMATS)}")
    raise ValueError(f"{path}: cannot tell the format from the name {path.name!r}; pass format= one of "
                     f"{sorted(FORMATS)}")


# ------------------------------------------------------------------------------------------------------- import
def read_unit_map(path: str | os.PathLike) -> dict[str, str]:
    """A unit renaming from a CSV ``source_unit,unit`` (the templated name → the activation-table column)."""
    source = str(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in ("source_unit", "unit") if column not in frame.columns]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; a unit map has the columns source_unit,unit")
    for column in ("source_unit", "unit"):
        empty = frame.index[frame[column].str.strip() == ""]
        if len(empty):
            raise ValueError(f"{source}, row {empty[0]}: column {column!r} is empty")
    duplicated = frame.index[frame["source_unit"].duplicated()]
    if len(duplicated):
        raise ValueError(f"{source}, row {duplicated[0]}: source_unit {frame['source_unit'][duplicated[0]]!r} "
                         f"appears more than once")
    return dict(zip(frame["source_unit"], frame["unit"], strict=True))


def _unit_name(record: SourceRecord, template: str, source: str) -> str:
    try:
        return template.format(**record.fields)
    except (KeyError, IndexError, ValueError) as error:
        where = f" ({record.where})" if record.where else ""
        raise ValueError(f"{source}, row {record.row}{where}: unit template {template!r} needs a field this format "
                         f"does not have ({error}); fields: {sorted(record.fields)}") from error


def read_explanation_file(path: str | os.PathLike, *, format: str = "auto", concept_names: Sequence[str],
                          mapping: TextMapping | None = None, unit_names: Sequence[str] | None = None,
                          source: str | None = None, unit_template: str | None = None,
                          unit_map: Mapping[str, str] | str | os.PathLike | None = None) -> ImportedExplanations:
    """Read an explanation file of any format of :data:`FORMATS` and map it to ``concept_names``.

    Parameters
    ----------
    path: the file (or, for ``delphi`` and ``openai_autointerp``, the folder) the tool wrote.
    format: a name of :data:`FORMATS` or ``"auto"`` (:func:`detect_format`).
    concept_names: the concept table's columns; every scorable explanation names only these.
    mapping: how free text maps to concepts (synonyms, embedding model, threshold); defaults to exact names and
        formulas only.
    unit_names: the activation table's columns; units outside it are unscorable (``None``: not checked).
    source: the name errors use for the file (default: ``path``).
    unit_template, unit_map: the unit naming (module docstring).

    The first record of a unit wins; a later record of the same unit is unscorable (``unit already explained
    at row r``).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "clip.csv").write_text("unit,description\\n0,Red.\\n1,stripes\\n")
    >>> result = read_explanation_file(folder / "clip.csv", concept_names=["colour:red", "texture:dotted"])
    >>> result.format, result.explanations["explanation"].tolist(), result.unscorable["unit"].tolist()
    ('unit_description', ['colour:red'], ['1'])
    """
    path = Path(path)
    source = source or str(path)
    if not path.exists():
        raise FileNotFoundError(f"{source}: no such file or folder")
    name = detect_format(path) if format == "auto" else format
    if name not in FORMATS:
        raise ValueError(f"unknown explanation format {format!r}; known: {['auto', *sorted(FORMATS)]}")
    if path.is_dir() and name not in ("delphi", "openai_autointerp"):
        raise ValueError(f"{source}: a folder, but the {name!r} format is one file")
    records, default_template = FORMATS[name].read(path, source)
    template = unit_template or default_template
    renames = read_unit_map(unit_map) if isinstance(unit_map, str | os.PathLike) else dict(unit_map or {})
    table_units = None if unit_names is None else {str(unit) for unit in unit_names}
    matcher = ConceptMatcher(concept_names, mapping)

    unscorable: list[dict[str, Any]] = []
    candidates: list[tuple[SourceRecord, str]] = []
    first_row: dict[str, int] = {}
    for record in records:
        unit = _unit_name(record, template, source)
        unit = renames.get(unit, unit)
        reason = None
        if not record.text.strip():
            reason = "empty explanation"
        elif table_units is not None and unit not in table_units:
            reason = UNIT_NOT_IN_TABLE
        elif unit in first_row:
            reason = f"unit already explained at row {first_row[unit]}"
        if reason is not None:
            unscorable.append({"row": record.row, "unit": unit, "text": record.text, "reason": reason})
            continue
        first_row[unit] = record.row
        candidates.append((record, unit))

    matches = matcher.match_all([record.text for record, _ in candidates], [record.kind for record, _ in candidates])
    kept: list[tuple[str, Match, str]] = []
    for (record, unit), result in zip(candidates, matches, strict=True):
        if isinstance(result, str):
            unscorable.append({"row": record.row, "unit": unit, "text": record.text, "reason": result})
        else:
            kept.append((unit, result, record.text))
    frame = explanation_frame([unit for unit, _, _ in kept], [match.explanation for _, match, _ in kept],
                              {"similarity": [match.similarity for _, match, _ in kept]})
    frame["source_text"] = [text for _, _, text in kept]
    frame["mapped_by"] = pd.Series([match.mapped_by for _, match, _ in kept], index=frame.index, dtype=object)
    unscorable_frame = pd.DataFrame(unscorable, columns=list(UNSCORABLE_COLUMNS)).sort_values("row", kind="stable")
    return ImportedExplanations(frame, unscorable_frame.reset_index(drop=True).astype({"row": np.int64}), name)


__all__ = ["FORMATS", "IMPORT_COLUMNS", "TEXT_ALIASES", "UNIT_ALIASES", "UNIT_NOT_IN_TABLE", "UNSCORABLE_COLUMNS",
           "FormatSpec", "ImportedExplanations", "SourceRecord", "TextMapping", "detect_format",
           "read_explanation_file", "read_unit_map"]
