"""Gold items of a real crowd study and the rater error rate they measure (paper 001, Sec. 4 Setting 2).

A **gold item** is an input whose answer for an explanation is known (the user's ``explanation,input_id,answer``
table, :func:`read_gold_answers`). :func:`insert_gold_items` mixes ``per_task`` of them into every task of their
explanation at random positions, so raters cannot tell them apart; the study folder keeps them in ``gold.csv``
(task, input_id, answer) and the estimator ignores them (they are not draws of the importance sample).

From the ratings of gold items, :func:`rater_error_from_gold` estimates the paper's rater error rate
η = P(r ≠ c_gt) (Sec. 4, 13 % on MTurk) as η̂ = k / n, k wrong ratings of n gold ratings, with the exact
Clopper–Pearson interval, the quantiles of Beta(k, n − k + 1) and Beta(k + 1, n − k) at (1 ∓ level)/2. The
interval assumes independent ratings (every rater errs at the same rate, as the Bayes model of Eq. 8 does); a
per-rater table shows whether some raters err more.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from neuroneval.crowd.design import StudyDesign

#: Columns of a user's gold-answer table and of a study's ``gold.csv``.
GOLD_ANSWER_COLUMNS = ("explanation", "input_id", "answer")
STUDY_GOLD_COLUMNS = ("task", "input_id", "answer")


def _checked_table(frame: pd.DataFrame, columns: tuple[str, ...], source: str) -> pd.DataFrame:
    """``frame`` with ``columns`` present, input_id an integer and answer 0/1; errors name source, line, column."""
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(f"{source}, line 1: missing column(s) {', '.join(missing)}; expected {','.join(columns)}")
    if frame.empty:
        raise ValueError(f"{source}: no rows (only a header)")
    checked = frame[list(columns)].copy()
    for column, allowed in (("input_id", None), ("answer", {"0", "1"})):
        text = checked[column].astype(str).str.strip()
        bad = ~text.str.fullmatch(r"-?\d+") if allowed is None else ~text.isin(allowed)
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            expected = "an integer input id" if allowed is None else "0 or 1"
            value = checked[column].iloc[row]
            raise ValueError(f"{source}, line {row + 2}, column {column}: {value!r} is not {expected}")
        checked[column] = text.astype(np.int64)
    return checked


def read_gold_answers(path: str | Path, *, input_ids: object | None = None) -> pd.DataFrame:
    """Read a gold-answer CSV ``explanation,input_id,answer`` (answer 1 = the concept is present, 0 = absent).

    ``input_ids`` (e.g. the activation table's ids) restricts input_id to known inputs. Raises ``ValueError``
    naming the file, the line and the column: missing column, non-integer id, unknown id, answer other than 0/1,
    an (explanation, input_id) listed twice.
    """
    source = str(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    answers = _checked_table(frame, GOLD_ANSWER_COLUMNS, source)
    if input_ids is not None:
        known = set(np.asarray(input_ids, dtype=np.int64).tolist())
        unknown = ~answers["input_id"].isin(known)
        if unknown.any():
            row = int(np.flatnonzero(unknown.to_numpy())[0])
            raise ValueError(f"{source}, line {row + 2}, column input_id: unknown input {answers['input_id'].iloc[row]}"
                             " (not in the activation table)")
    duplicated = answers.duplicated(["explanation", "input_id"])
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        raise ValueError(f"{source}, line {row + 2}: gold item ({answers['explanation'].iloc[row]}, "
                         f"{answers['input_id'].iloc[row]}) is listed twice")
    return answers


def read_study_gold(path: str | Path) -> pd.DataFrame:
    """Read a study's ``gold.csv`` (task, input_id, answer), checked like :func:`read_gold_answers`."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return _checked_table(frame, STUDY_GOLD_COLUMNS, str(path))


def insert_gold_items(design: StudyDesign, answers: pd.DataFrame, *, per_task: int = 1, seed: int = 0,
                      source: str = "gold answers") -> StudyDesign:
    """The design with ``per_task`` gold items of each task's explanation mixed in at random positions.

    Each task gets ``per_task`` distinct gold inputs of its explanation that the task does not already show,
    drawn without replacement from ``answers`` (:func:`read_gold_answers`) with a generator seeded by (seed,
    task number); the task's inputs are then shuffled and ``samples.position`` follows them. Raises
    ``ValueError`` naming ``source`` and the explanation when it has fewer usable gold items than ``per_task``.
    """
    if isinstance(per_task, bool) or not isinstance(per_task, int | np.integer) or per_task < 1:
        raise ValueError(f"per_task must be an integer >= 1, got {per_task!r}")
    by_explanation = {str(name): rows for name, rows in answers.groupby("explanation", sort=False)}
    input_columns = [column for column in design.tasks.columns if column.startswith("input_")]
    samples = design.samples.copy()
    position_of = {(str(t), int(i)): k for k, (t, i) in enumerate(zip(samples["task"], samples["input_id"],
                                                                      strict=True))}
    task_rows, gold_rows = [], []
    for number, record in enumerate(design.tasks.to_dict("records")):
        task, explanation = str(record["task"]), str(record["explanation"])
        shown = [int(record[column]) for column in input_columns if pd.notna(record[column])]
        pool = by_explanation.get(explanation)
        usable = pool[~pool["input_id"].isin(shown)] if pool is not None else pd.DataFrame(columns=["input_id"])
        if len(usable) < per_task:
            raise ValueError(f"{source}: explanation {explanation!r} has {len(usable)} gold item(s) usable in task "
                             f"{task!r}, need {per_task} (gold_per_task)")
        rng = np.random.default_rng([seed, 101, number])
        chosen = usable.iloc[rng.choice(len(usable), per_task, replace=False)]
        order = rng.permutation(len(shown) + per_task)
        inputs = np.asarray([*shown, *chosen["input_id"].tolist()], dtype=np.int64)[order]
        for slot, input_id in enumerate(inputs):
            if (task, int(input_id)) in position_of:
                samples.iloc[position_of[task, int(input_id)], samples.columns.get_loc("position")] = slot
        gold_rows.extend({"task": task, "input_id": int(i), "answer": int(a)}
                         for i, a in zip(chosen["input_id"], chosen["answer"], strict=True))
        cells = {f"input_{k + 1}": int(inputs[k]) for k in range(inputs.size)}
        task_rows.append({"task": task, "batch": record["batch"], "explanation": explanation,
                          "n_inputs": int(inputs.size), **cells})
    tasks = pd.DataFrame(task_rows)
    for column in tasks.columns:
        if column.startswith("input_"):
            tasks[column] = tasks[column].astype("Int64")
    gold = pd.DataFrame(gold_rows, columns=list(STUDY_GOLD_COLUMNS))
    return StudyDesign(pairs=design.pairs, samples=samples, tasks=tasks, gold=gold)


def rater_error_from_gold(design: StudyDesign, ratings: pd.DataFrame, *, ci_level: float = 0.95,
                          by_rater: bool = False) -> pd.DataFrame:
    """η̂ = k / n from the ratings of gold items with its Clopper–Pearson interval (module docstring).

    Parameters
    ----------
    design
        A study with gold items (``design.gold``).
    ratings
        Validated ratings (:func:`neuroneval.crowd.ingest.read_ratings`); those of non-gold inputs are ignored.
    ci_level
        Coverage of the interval, in (0, 1).
    by_rater
        Add one row per rater after the row of all raters (``rater`` = ``"all"``).

    Returns
    -------
    pandas.DataFrame
        ``rater``, ``rater_error`` (η̂), ``ci_low``, ``ci_high``, ``wrong`` (k), ``gold_ratings`` (n),
        ``ci_level``.

    Examples
    --------
    The interval is scipy's exact binomial interval:

    >>> from scipy import stats
    >>> [round(v, 4) for v in stats.binomtest(13, 100).proportion_ci(0.95, method="exact")]
    [0.071, 0.2124]
    """
    if design.gold is None or design.gold.empty:
        raise ValueError("the study has no gold items (gold.csv); design it with gold answers to estimate η")
    if not 0 < ci_level < 1:
        raise ValueError(f"ci_level must lie in (0, 1), got {ci_level!r}")
    gold = design.gold.rename(columns={"input_id": "input"})
    rated = ratings.merge(gold, on=["task", "input"], how="inner")
    if rated.empty:
        raise ValueError("no rating of a gold item: the ratings cannot estimate η")
    groups = [("all", rated)] + (list(rated.groupby("rater", sort=True)) if by_rater else [])
    rows = []
    for rater, part in groups:
        wrong, total = int((part["label"] != part["answer"]).sum()), len(part)
        interval = stats.binomtest(wrong, total).proportion_ci(ci_level, method="exact")
        rows.append({"rater": str(rater), "rater_error": wrong / total, "ci_low": float(interval.low),
                     "ci_high": float(interval.high), "wrong": wrong, "gold_ratings": total, "ci_level": ci_level})
    return pd.DataFrame(rows)


def truth_as_gold(design: StudyDesign, truth: pd.DataFrame, *, source: str = "truth table") -> StudyDesign:
    """The design with every sampled input as a gold item whose answer is its ground-truth label (``truth``: a
    concept table with one binary column per explanation): :func:`rater_error_from_gold` of it is the paper's
    η = P(r ≠ c_gt) over all ratings (Sec. 4, Setting 2)."""
    missing = sorted(set(design.samples["explanation"].astype(str)) - set(map(str, truth.columns)))
    if missing:
        raise ValueError(f"{source}: no ground-truth column for explanation(s) {missing[:5]}")
    labels = truth.set_index("input_id")
    answers = [labels.at[int(i), str(e)] if int(i) in labels.index else np.nan
               for i, e in zip(design.samples["input_id"], design.samples["explanation"], strict=True)]
    answers = np.asarray(answers, dtype=np.float64)
    if not np.isin(answers, (0.0, 1.0)).all():
        row = int(np.flatnonzero(~np.isin(answers, (0.0, 1.0)))[0])
        raise ValueError(f"{source}, column {design.samples['explanation'].iloc[row]!r}: input "
                         f"{int(design.samples['input_id'].iloc[row])} has no binary label")
    gold = pd.DataFrame({"task": design.samples["task"].astype(str), "input_id": design.samples["input_id"],
                         "answer": answers.astype(np.int64)})
    return dataclasses.replace(design, gold=gold)
