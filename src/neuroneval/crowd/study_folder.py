"""The folder of a real crowd study: what ``neuroneval crowd design`` writes and ``crowd ingest`` reads.

A study directory (:func:`write_study`) holds:

- ``pairs.csv``: pair, unit, explanation (plus any extra columns of the requested pairs);
- ``samples.csv``: one row per (pair, distinct input): pair, unit, explanation, input_id, draws (how often
  it was drawn), q, weight = p/q = 1/(n q), activation, prior (the pseudo-label score, NaN without one),
  task, batch, position. Everything the estimator needs later, so ingestion needs no other table;
- ``tasks.csv``: one row per task for a crowdsourcing platform: task, batch, explanation, n_inputs,
  input_1 … input_15 (input ids; empty cells in a short last task);
- ``gold.csv`` (only with gold items, :mod:`neuroneval.crowd.gold`): task, input_id, answer of the known-answer
  inputs mixed into the tasks;
- ``batch_<b>.html``: one self-contained page per batch (no external resources; images embedded as
  ``data:`` URIs) where a rater enters a rater id, ticks inputs and presses "Download answers", which saves
  ``ratings.csv`` with columns task,input,rater,label (label 1 = ticked, 0 = not ticked).

:func:`design_study_files` is the file-level entry point: it reads and checks the activation table, the pairs
(:func:`read_pairs`), the optional pseudo-label table (a formula explanation gets a simulated prior column,
:func:`~neuroneval.crowd.prompts.formula_priors`) and prompts, designs the study
(:func:`~neuroneval.crowd.design.design_study`) and writes its folder (:func:`write_study`) with the
user's media by input id (:mod:`neuroneval.input_media`).

:func:`write_study` replaces a previous study in the same folder whole (nothing of the old design, such as its
extra pages, survives) and refuses a folder holding anything else (:func:`check_study_folder`);
:func:`read_design` checks the numbers of ``samples.csv`` (:func:`check_samples`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.crowd.design import SAMPLE_COLUMNS, DesignOptions, StudyDesign, design_study
from neuroneval.crowd.task_pages import render_batch_html
from neuroneval.input_media import InputMedia


def check_study_folder(directory: str | Path) -> None:
    """Raise ``ValueError`` unless :func:`write_study` may replace ``directory``: it does not exist, is an empty
    folder, or holds a study and nothing else (``design.json`` and only the files and pages a study has).

    The message names the folder and the files that are not a study's (e.g. ratings saved into it), so a study
    write never deletes anything a person put there.
    """
    import re

    study_files = ("pairs.csv", "samples.csv", "tasks.csv", "gold.csv", "design.json")  # and batch_<b>.html pages
    target = Path(directory)
    if not target.exists() and not target.is_symlink():
        return
    if not target.is_dir():
        raise ValueError(f"{target} is not a folder; choose another study directory")
    names = sorted(path.name for path in target.iterdir())
    foreign = [name for name in names if name not in study_files and not re.fullmatch(r"batch_\d+\.html", name)]
    if names and (foreign or "design.json" not in names):
        held = foreign or ["no design.json"]
        raise ValueError(f"{target} is not a neuroneval crowd study folder (it holds {held[:5]}); a new design "
                         "replaces the whole folder, so choose another directory or move those files away")


def write_study(
    design: StudyDesign,
    directory: str | Path,
    *,
    media: InputMedia | Mapping[int, object] | None = None,
    title: str = "Concept rating",
    info: Mapping[str, object] | None = None,
    prompts: Mapping[str, str] | None = None,
) -> list[Path]:
    """Write ``pairs.csv``, ``samples.csv``, ``tasks.csv``, ``design.json`` and ``batch_<b>.html`` files.

    The files are written into a staging folder that then replaces ``directory`` whole
    (:func:`neuroneval.io.swap_directory`): a previous study there disappears with all its pages, and a failed
    write leaves it untouched. A folder that holds anything but a study is refused (:func:`check_study_folder`).

    Parameters
    ----------
    design
        Output of :func:`~neuroneval.crowd.design.design_study`.
    directory
        Target directory (created, or replaced when it holds a study).
    media
        The user's media (:class:`~neuroneval.input_media.InputMedia`: every sampled input must be in it, else
        ``ValueError`` naming the missing ids), or a mapping input id → uint8 image, text snippet or
        :class:`~neuroneval.input_media.TokenInContext` (inputs it lacks show their id); embedded in the pages
        (see :func:`~neuroneval.crowd.task_pages.render_batch_html`).
    title
        Page title.
    info
        Extra entries for ``design.json`` (e.g. the budget and raters per input the study was planned for).
    prompts
        Rater-facing wording of concepts or explanations (:func:`~neuroneval.crowd.prompts.rater_wording`).

    Returns
    -------
    list of pathlib.Path
        The written files (in ``directory``).
    """
    import shutil

    from neuroneval.io import staging_directory, swap_directory, write_csv

    target = Path(directory)
    check_study_folder(target)
    if isinstance(media, InputMedia):
        shown = design.samples["input_id"] if design.gold is None else pd.concat(
            [design.samples["input_id"], design.gold["input_id"]], ignore_index=True).drop_duplicates()
        media = media.lookup(shown)
    staging = staging_directory(target)
    try:
        names = ["pairs.csv", "samples.csv", "tasks.csv"]
        write_csv(staging / "pairs.csv", design.pairs)
        write_csv(staging / "samples.csv", design.samples, float_format="%.17g")
        write_csv(staging / "tasks.csv", design.tasks)
        if design.gold is not None:
            write_csv(staging / "gold.csv", design.gold)
            names.append("gold.csv")
        for batch, batch_tasks in design.tasks.groupby("batch", sort=True):
            name = f"batch_{int(batch):03d}.html"
            page = render_batch_html(batch_tasks, media=media, title=title, prompts=prompts)
            (staging / name).write_text(page, encoding="utf-8")
            names.append(name)
        summary = {
            "pairs": len(design.pairs),
            "tasks": len(design.tasks),
            "distinct_inputs": len(design.samples),
            "draws": int(design.samples["draws"].sum()),
            **(info or {}),
        }
        (staging / "design.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        names.append("design.json")
        swap_directory(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [target / name for name in names]


def check_samples(samples: pd.DataFrame, source: str | Path) -> pd.DataFrame:
    """``samples`` (read from ``source``, a study's ``samples.csv``) with its numbers checked and typed.

    draws must be whole numbers ≥ 1, q and weight = 1/(n q) finite and > 0, activation finite, prior empty (no
    pseudo-label) or in [0, 1]: a NaN weight would otherwise silently turn an estimate into 0.

    Raises
    ------
    ValueError
        Naming ``source``, the line (header = line 1), the column and the value of the first bad cell.
    """
    expectations = {
        "draws": "a whole number >= 1",
        "q": "a finite number > 0",
        "weight": "a finite number > 0",
        "activation": "a finite number",
        "prior": "empty or a number in [0, 1]",
    }
    checked = samples.copy()
    for column, expected in expectations.items():
        raw = samples[column]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore"):
            if column == "prior":
                good = np.isnan(values) | ((values >= 0) & (values <= 1))
            elif column == "draws":
                good = np.isfinite(values) & (values >= 1) & (values == np.round(values))
            else:
                good = np.isfinite(values) & (values > 0 if column in ("q", "weight") else True)
        good &= ~(np.isnan(values) & raw.notna().to_numpy())
        if not good.all():
            row = int(np.flatnonzero(~good)[0])
            raise ValueError(f"{source}, line {row + 2}, column {column}: {raw.iloc[row]!r} is not {expected}")
        checked[column] = values.astype(np.int64) if column == "draws" else values
    return checked


def read_design(directory: str | Path) -> StudyDesign:
    """Read a study directory written by :func:`write_study`; ``samples.csv`` is checked by :func:`check_samples`."""
    source = Path(directory)
    try:
        pairs = pd.read_csv(source / "pairs.csv", dtype={"unit": str, "explanation": str})
        samples = pd.read_csv(source / "samples.csv", dtype={"unit": str, "explanation": str, "task": str})
        tasks = pd.read_csv(source / "tasks.csv", dtype={"task": str, "explanation": str})
    except FileNotFoundError as error:
        raise ValueError(f"{source} is not a complete study directory: {error}") from error
    missing = set(SAMPLE_COLUMNS) - set(samples.columns)
    if missing:
        raise ValueError(f"{source / 'samples.csv'} is missing column(s) {sorted(missing)}")
    gold = None
    if (source / "gold.csv").exists():
        from neuroneval.crowd.gold import read_study_gold

        gold = read_study_gold(source / "gold.csv")
    return StudyDesign(pairs=pairs, samples=check_samples(samples, source / "samples.csv"), tasks=tasks, gold=gold)


def _is_formula_over(explanation: str, concepts: set[str]) -> bool:
    """Whether ``explanation`` parses as an AND/OR/NOT formula whose concepts are all in ``concepts``."""
    from neuroneval.explain.explanation import And, ExplanationSyntaxError, Not, Or, parse

    try:
        node = parse(explanation)
    except (ExplanationSyntaxError, ValueError):
        return False
    return isinstance(node, And | Or | Not) and set(node.concepts()) <= concepts


def read_pairs(
    path: str | Path,
    *,
    unit_names: Sequence[str],
    concept_names: Sequence[str] | None = None,
    unit_source: str = "the activation table",
    concept_source: str = "the concept table",
) -> pd.DataFrame:
    """Read and check a pairs CSV (``unit,explanation``, extra columns kept) against the tables it refers to.

    Parameters
    ----------
    path
        CSV with columns ``unit`` and ``explanation`` (the explanations contract, docs/design.md §2.5).
    unit_names
        Unit columns of the activation table; every ``unit`` must be one of them.
    concept_names
        Concept columns of the pseudo-label table; when given, every ``explanation`` must be one of them or a
        formula (AND/OR/NOT) over them (its prior is simulated, :func:`~neuroneval.crowd.prompts.formula_priors`).
    unit_source, concept_source
        How the error messages name the two tables (their file paths).

    Raises
    ------
    ValueError
        Naming the file, line (header = line 1) and column: missing columns, empty cells, unknown unit,
        unknown explanation, a (unit, explanation) pair listed twice, or no pair at all.
    """
    source = Path(path)
    try:
        pairs = pd.read_csv(source, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError as error:
        raise ValueError(f"{source}: empty file; expected header unit,explanation") from error
    missing = [column for column in ("unit", "explanation") if column not in pairs.columns]
    if missing:
        raise ValueError(f"{source}, line 1: missing column(s) {', '.join(missing)}; expected header unit,explanation")
    if pairs.empty:
        raise ValueError(f"{source}: no pairs (only a header)")
    units, concepts = set(map(str, unit_names)), None if concept_names is None else set(map(str, concept_names))
    seen: dict[tuple[str, str], int] = {}
    for row, (unit, explanation) in enumerate(zip(pairs["unit"], pairs["explanation"], strict=True)):
        where = f"{source}, line {row + 2}"
        for column, value in (("unit", unit), ("explanation", explanation)):
            if not value.strip():
                raise ValueError(f"{where}, column {column}: empty value")
        if unit not in units:
            raise ValueError(f"{where}, column unit: unknown unit {unit!r} (not a column of {unit_source})")
        if concepts is not None and explanation not in concepts and not _is_formula_over(explanation, concepts):
            raise ValueError(
                f"{where}, column explanation: unknown explanation {explanation!r} (not a concept column of "
                f"{concept_source}, nor a formula AND/OR/NOT over its columns)"
            )
        if (unit, explanation) in seen:
            first = seen[unit, explanation]
            raise ValueError(f"{where}: pair ({unit}, {explanation}) is listed twice (first at line {first})")
        seen[unit, explanation] = row + 2
    return pairs


def design_study_files(
    activations_path: str | Path,
    pairs_path: str | Path,
    directory: str | Path,
    *,
    pseudo_labels_path: str | Path | None = None,
    media: InputMedia | None = None,
    prompts_path: str | Path | None = None,
    title: str = "Concept rating",
    info: Mapping[str, object] | None = None,
    options: DesignOptions | None = None,
    gold_path: str | Path | None = None,
    gold_per_task: int = 1,
) -> list[Path]:
    """File-level :func:`~neuroneval.crowd.design.design_study` + :func:`write_study` (``neuroneval crowd design``).

    Parameters
    ----------
    activations_path
        Activation table (Parquet, contract of docs/design.md §2.1).
    pairs_path
        CSV with columns unit,explanation (e.g. an explanations file), checked by :func:`read_pairs`; with a
        pseudo-label table every explanation must be one of its concept columns or a formula over them.
    directory
        Output study directory.
    pseudo_labels_path
        Concept table of pseudo-label scores whose columns are the explanation texts; a formula explanation's
        scores are simulated from its concepts' columns (:func:`~neuroneval.crowd.prompts.formula_priors`).
    media
        The inputs' images or texts (:func:`neuroneval.input_media.read_input_media`); every sampled input must be
        in it (``ValueError`` naming the missing ids). Without it the pages show input ids.
    prompts_path
        CSV ``concept,text``: the wording raters read (:func:`~neuroneval.crowd.prompts.read_prompts`); default:
        the readable form of the names (:func:`~neuroneval.crowd.prompts.rater_wording`).
    title
        Page title.
    info
        Extra entries for ``design.json``.
    options
        How :func:`~neuroneval.crowd.design.design_study` draws and lays out the study (n_draws, sampling,
        epsilon, inputs_per_task, tasks_per_batch, seed); default: its defaults.
    gold_path, gold_per_task
        CSV ``explanation,input_id,answer`` of known-answer inputs (:func:`~neuroneval.crowd.gold.read_gold_answers`);
        ``gold_per_task`` of them are mixed into each task of their explanation
        (:func:`~neuroneval.crowd.gold.insert_gold_items`), so ratings estimate η.

    Returns
    -------
    list of pathlib.Path
        The written files.
    """
    from neuroneval.crowd.prompts import formula_priors, read_prompts
    from neuroneval.io import check_matching_ids, read_activation_table, read_concept_table

    check_study_folder(directory)
    prompts = None if prompts_path is None else read_prompts(prompts_path)
    activations, _ = read_activation_table(activations_path)
    pseudo = None
    if pseudo_labels_path is not None:
        pseudo, _ = read_concept_table(pseudo_labels_path)
        check_matching_ids(
            activations, pseudo, first_source=str(activations_path), second_source=str(pseudo_labels_path)
        )
    pairs = read_pairs(
        pairs_path,
        unit_names=[c for c in activations.columns if c != "input_id"],
        concept_names=None if pseudo is None else [c for c in pseudo.columns if c != "input_id"],
        unit_source=str(activations_path),
        concept_source=str(pseudo_labels_path),
    )
    if pseudo is not None:
        pseudo = formula_priors(pairs["explanation"].tolist(), pseudo, source=str(pseudo_labels_path),
                                pairs_source=str(pairs_path))
    options = DesignOptions() if options is None else options
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=options.n_draws,
                          sampling=options.sampling, epsilon=options.epsilon, inputs_per_task=options.inputs_per_task,
                          tasks_per_batch=options.tasks_per_batch, seed=options.seed)
    if gold_path is not None:
        from neuroneval.crowd.gold import insert_gold_items, read_gold_answers

        answers = read_gold_answers(gold_path, input_ids=activations["input_id"])
        design = insert_gold_items(design, answers, per_task=gold_per_task, seed=options.seed, source=str(gold_path))
    return write_study(design, directory, media=media, title=title, info=info, prompts=prompts)
