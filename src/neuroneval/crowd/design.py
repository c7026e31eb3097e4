"""Design of a crowd study: pick inputs by importance sampling and group them into tasks (paper 001, Sec. 5.2).

For each (unit, explanation) pair, ``n_draws`` inputs are drawn with replacement from a sampling
distribution q (Eq. 4 by default); each distinct input is shown once, in tasks of 15 inputs that show the
explanation and ask the rater to tick the inputs where the concept is present (the interface of Fig. 8).
The task pages are rendered by :mod:`neuroneval.crowd.task_pages`; a design is stored in a study folder by
:mod:`neuroneval.crowd.study_folder`.

Seeds derive from the pair's identity (CRC32 of unit and explanation), not from its position in the list.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.crowd.estimator import importance_weights
from neuroneval.crowd.sampling import (
    DEFAULT_EPSILON,
    SAMPLING_METHODS,
    SamplingMethod,
    draw_indices,
    sampling_distribution,
)
from neuroneval.options import Options, check_choice

#: Inputs shown per task (Sec. 5.2: 15 inputs per task, $0.06 per task).
INPUTS_PER_TASK = 15
#: Inputs drawn per pair (Sec. 4.2: 90 inputs per neuron with 2 raters).
DEFAULT_DRAWS = 90
#: Tasks per HTML page.
TASKS_PER_BATCH = 20
SAMPLE_COLUMNS = (
    "pair",
    "unit",
    "explanation",
    "input_id",
    "draws",
    "q",
    "weight",
    "activation",
    "prior",
    "task",
    "batch",
    "position",
)


@dataclass(frozen=True)
class StudyDesign:
    """A designed study: the pairs, the sampled inputs (one row per distinct input) and the tasks; ``gold`` (task,
    input_id, answer) lists the known-answer inputs mixed into the tasks (:mod:`neuroneval.crowd.gold`), if any."""

    pairs: pd.DataFrame
    samples: pd.DataFrame
    tasks: pd.DataFrame
    gold: pd.DataFrame | None = None


def _pair_seed(seed: int, unit: str, explanation: str) -> list[int]:
    return [seed, zlib.crc32(unit.encode()), zlib.crc32(explanation.encode())]


@dataclass(frozen=True)
class DesignOptions(Options):
    """How :func:`design_study` draws and lays out a study: its keyword parameters (same names and defaults; the
    designer checks the values and names a bad one, these options check the sampling choice)."""

    n_draws: int = DEFAULT_DRAWS
    sampling: SamplingMethod = "pseudo"
    epsilon: float = DEFAULT_EPSILON
    inputs_per_task: int = INPUTS_PER_TASK
    tasks_per_batch: int = TASKS_PER_BATCH
    seed: int = 0

    def validate(self) -> None:
        check_choice(self, "sampling", SAMPLING_METHODS)


def design_study(
    activations: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    pseudo_labels: pd.DataFrame | None = None,
    n_draws: int = DEFAULT_DRAWS,
    sampling: SamplingMethod = "pseudo",
    epsilon: float = DEFAULT_EPSILON,
    inputs_per_task: int = INPUTS_PER_TASK,
    tasks_per_batch: int = TASKS_PER_BATCH,
    seed: int = 0,
) -> StudyDesign:
    """Draw the inputs of each (unit, explanation) pair and lay them out as tasks and batches.

    Parameters
    ----------
    activations
        Activation table: ``input_id`` plus one column per unit (the activation-table contract).
    pairs
        Table with columns ``unit`` and ``explanation`` (the explanations contract); extra columns (e.g.
        ``method``) are kept in :attr:`StudyDesign.pairs`. Each (unit, explanation) must be unique.
    pseudo_labels
        Concept table: ``input_id`` plus one column per explanation text with pseudo-label scores in
        [0, 1]; needed for ``sampling="pseudo"`` and stored as the prior of Bayes aggregation (Method 3b).
    n_draws
        Draws with replacement per pair (default 90); the distinct inputs shown are at most this many.
    sampling
        ``"pseudo"`` (Eq. 4, default), ``"activation"`` or ``"uniform"``.
    epsilon
        ε of the sampling distribution (default 0.001).
    inputs_per_task
        Inputs per task (default 15).
    tasks_per_batch
        Tasks per HTML page (default 20).
    seed
        Master seed; each pair's draws and order derive from (seed, unit, explanation).

    Returns
    -------
    StudyDesign
    """
    if "input_id" not in activations.columns:
        raise ValueError("activations needs an input_id column (activation-table contract)")
    missing = {"unit", "explanation"} - set(pairs.columns)
    if missing:
        raise ValueError(f"pairs is missing column(s) {sorted(missing)}; expected unit,explanation")
    if n_draws < 2 or inputs_per_task < 1 or tasks_per_batch < 1:
        raise ValueError("need n_draws >= 2, inputs_per_task >= 1 and tasks_per_batch >= 1")
    pair_table = pairs.reset_index(drop=True).copy()
    pair_table["unit"] = pair_table["unit"].astype(str)
    pair_table["explanation"] = pair_table["explanation"].astype(str)
    duplicated = pair_table.duplicated(["unit", "explanation"])
    if duplicated.any():
        first = pair_table[duplicated].iloc[0]
        raise ValueError(f"pair (unit={first['unit']!r}, explanation={first['explanation']!r}) is listed twice")
    pair_table.insert(0, "pair", np.arange(len(pair_table)))
    input_ids = activations["input_id"].to_numpy(dtype=np.int64)
    unit_columns = {str(column): column for column in activations.columns if column != "input_id"}
    pseudo = None
    if pseudo_labels is not None:
        if "input_id" not in pseudo_labels.columns:
            raise ValueError("pseudo_labels needs an input_id column (concept-table contract)")
        if not np.array_equal(pseudo_labels["input_id"].to_numpy(dtype=np.int64), input_ids):
            raise ValueError("pseudo_labels input_id column does not match the activation table's")
        pseudo = {str(column): column for column in pseudo_labels.columns if column != "input_id"}

    sample_frames, task_rows = [], []
    task_counter = 0
    for row in pair_table.itertuples(index=False):
        unit, explanation = row.unit, row.explanation
        if unit not in unit_columns:
            raise ValueError(f"unit {unit!r} of pair {row.pair} is not a column of the activation table")
        a = activations[unit_columns[unit]].to_numpy(dtype=np.float64)
        scores = None
        if pseudo is not None and explanation in pseudo:
            scores = pseudo_labels[pseudo[explanation]].to_numpy(dtype=np.float64)
        if sampling == "pseudo" and scores is None:
            raise ValueError(
                f"sampling 'pseudo' needs pseudo-label scores for explanation {explanation!r} (pair {row.pair}); "
                "add it as a column of pseudo_labels or use sampling='activation'"
            )
        q = sampling_distribution(sampling, a, scores, epsilon=epsilon)
        rng = np.random.default_rng(_pair_seed(seed, unit, explanation))
        drawn = draw_indices(q, n_draws, rng)
        distinct, counts = np.unique(drawn, return_counts=True)
        order = rng.permutation(distinct.size)
        distinct, counts = distinct[order], counts[order]
        n_tasks = -(-distinct.size // inputs_per_task)
        tasks = [f"p{row.pair}-t{j}" for j in range(n_tasks)]
        positions = np.arange(distinct.size)
        sample_frames.append(
            pd.DataFrame(
                {
                    "pair": row.pair,
                    "unit": unit,
                    "explanation": explanation,
                    "input_id": input_ids[distinct],
                    "draws": counts,
                    "q": q[distinct],
                    "weight": importance_weights(q)[distinct],
                    "activation": a[distinct],
                    "prior": np.nan if scores is None else scores[distinct],
                    "task": [tasks[p // inputs_per_task] for p in positions],
                    "batch": [(task_counter + p // inputs_per_task) // tasks_per_batch for p in positions],
                    "position": positions % inputs_per_task,
                }
            )
        )
        for j, task in enumerate(tasks):
            shown = input_ids[distinct[j * inputs_per_task : (j + 1) * inputs_per_task]]
            cells = {f"input_{i + 1}": (int(shown[i]) if i < shown.size else None) for i in range(inputs_per_task)}
            task_rows.append(
                {
                    "task": task,
                    "batch": (task_counter + j) // tasks_per_batch,
                    "explanation": explanation,
                    "n_inputs": int(shown.size),
                    **cells,
                }
            )
        task_counter += n_tasks
    samples = pd.concat(sample_frames, ignore_index=True)[list(SAMPLE_COLUMNS)]
    tasks_table = pd.DataFrame(task_rows)
    for column in tasks_table.columns:
        if column.startswith("input_"):
            tasks_table[column] = tasks_table[column].astype("Int64")
    return StudyDesign(pairs=pair_table, samples=samples, tasks=tasks_table)


