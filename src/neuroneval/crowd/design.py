"""Design of a crowd study: pick inputs by importance sampling and write task batches (paper 001, Sec. 5.2).

For each (unit, explanation) pair, ``n_draws`` inputs are drawn with replacement from a sampling
distribution q (Eq. 4 by default); each distinct input is shown once, in tasks of 15 inputs that show the
explanation and ask the rater to tick the inputs where the concept is present (the interface of Fig. 8).

A study directory (:func:`write_study`) holds:

- ``pairs.csv``: pair, unit, explanation (plus any extra columns of the requested pairs);
- ``samples.csv``: one row per (pair, distinct input): pair, unit, explanation, input_id, draws (how often
  it was drawn), q, weight = p/q = 1/(n q), activation, prior (the pseudo-label score, NaN without one),
  task, batch, position. Everything the estimator needs later, so ingestion needs no other table;
- ``tasks.csv``: one row per task for a crowdsourcing platform: task, batch, explanation, n_inputs,
  input_1 … input_15 (input ids; empty cells in a short last task);
- ``batch_<b>.html``: one self-contained page per batch (no external resources; images embedded as
  ``data:`` URIs) where a rater enters a rater id, ticks inputs and presses "Download answers", which saves
  ``ratings.csv`` with columns task,input,rater,label (label 1 = ticked, 0 = not ticked).

Seeds derive from the pair's identity (CRC32 of unit and explanation), not from its position in the list.
"""

from __future__ import annotations

import base64
import html
import json
import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.crowd.estimator import importance_weights
from neuroneval.crowd.sampling import DEFAULT_EPSILON, draw_indices, sampling_distribution

#: Inputs shown per task (Sec. 5.2: 15 inputs per task, $0.06 per task).
INPUTS_PER_TASK = 15
#: Inputs drawn per pair (Sec. 4.2: 90 inputs per neuron with 2 raters).
DEFAULT_DRAWS = 90
#: Tasks per HTML page.
TASKS_PER_BATCH = 20
#: Allowed characters of a rater id (so that it needs no CSV quoting).
RATER_PATTERN = "[A-Za-z0-9_.\\-]+"
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
    """A designed study: the pairs, the sampled inputs (one row per distinct input) and the tasks."""

    pairs: pd.DataFrame
    samples: pd.DataFrame
    tasks: pd.DataFrame


def _pair_seed(seed: int, unit: str, explanation: str) -> list[int]:
    return [seed, zlib.crc32(unit.encode()), zlib.crc32(explanation.encode())]


def design_study(
    activations: pd.DataFrame,
    pairs: pd.DataFrame,
    *,
    pseudo_labels: pd.DataFrame | None = None,
    n_draws: int = DEFAULT_DRAWS,
    sampling: str = "pseudo",
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


def encode_png(image: np.ndarray) -> bytes:
    """Encode a uint8 image, (H, W) grey, (H, W, 3) RGB or (H, W, 4) RGBA, as PNG (stdlib zlib only).

    Examples
    --------
    >>> encode_png(np.zeros((2, 2, 3), dtype=np.uint8))[:8]
    b'\\x89PNG\\r\\n\\x1a\\n'
    """
    pixels = np.asarray(image)
    if pixels.dtype != np.uint8:
        raise ValueError(f"images must be uint8 arrays, got {pixels.dtype}")
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.ndim != 3 or pixels.shape[2] not in (1, 3, 4) or 0 in pixels.shape[:2]:
        raise ValueError(f"images must be (H, W), (H, W, 3) or (H, W, 4), got shape {pixels.shape}")
    height, width, channels = pixels.shape
    colour_type = {1: 0, 3: 2, 4: 6}[channels]
    rows = np.concatenate([np.zeros((height, 1), dtype=np.uint8), pixels.reshape(height, -1)], axis=1)

    def chunk(kind: bytes, payload: bytes) -> bytes:
        body = kind + payload
        return struct.pack(">I", len(payload)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows.tobytes(), 9))
        + chunk(b"IEND", b"")
    )


def image_data_uri(image: np.ndarray) -> str:
    """A ``data:image/png;base64,…`` URI of a uint8 image (see :func:`encode_png`)."""
    return "data:image/png;base64," + base64.b64encode(encode_png(image)).decode("ascii")


def _media_html(input_id: int, media: Mapping[int, object] | None) -> str:
    item = None if media is None else media.get(int(input_id))
    if item is None:
        return f'<span class="snippet">input {int(input_id)}</span>'
    if isinstance(item, str):
        return f'<span class="snippet">{html.escape(item)}</span>'
    return f'<img alt="input {int(input_id)}" src="{image_data_uri(np.asarray(item))}">'


_PAGE_STYLE = """
body { font-family: sans-serif; margin: 1.5em; max-width: 70em; }
.task { border: 1px solid #bbb; border-radius: 6px; padding: 0.8em; margin: 1em 0; }
.grid { display: flex; flex-wrap: wrap; gap: 0.6em; }
.item { display: flex; flex-direction: column; align-items: center; border: 2px solid #ddd;
        border-radius: 4px; padding: 0.3em; cursor: pointer; min-width: 6em; }
.item:has(input:checked) { border-color: #2a7; background: #efe; }
.item img { width: 112px; height: 112px; image-rendering: pixelated; }
.snippet { max-width: 16em; font-size: 0.9em; white-space: pre-wrap; }
#status { font-weight: bold; }
"""

_PAGE_SCRIPT = """
"use strict";
function answerRows(rater) {
  const rows = ["task,input,rater,label"];
  document.querySelectorAll("input.answer").forEach(function (box) {
    rows.push([box.dataset.task, box.dataset.input, rater, box.checked ? "1" : "0"].join(","));
  });
  return rows.join("\\n") + "\\n";
}
function downloadAnswers() {
  const field = document.getElementById("rater");
  const rater = field.value.trim();
  const status = document.getElementById("status");
  if (!new RegExp("^" + field.getAttribute("pattern") + "$").test(rater)) {
    status.textContent = "Please enter your rater ID (letters, digits, _ . -) first.";
    return;
  }
  const blob = new Blob([answerRows(rater)], {type: "text/csv"});
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = "ratings.csv";
  document.body.appendChild(link);
  link.click();
  link.remove();
  status.textContent = "Saved ratings.csv - thank you!";
}
document.getElementById("download").addEventListener("click", downloadAnswers);
"""


def render_batch_html(
    tasks: pd.DataFrame, *, media: Mapping[int, object] | None = None, title: str = "Concept rating"
) -> str:
    """A self-contained HTML page for the tasks of one batch.

    Parameters
    ----------
    tasks
        Rows of :attr:`StudyDesign.tasks` (task, explanation, input_1 …).
    media
        Maps input id to a uint8 image array (embedded as a PNG ``data:`` URI) or a text snippet; inputs
        without media show their id.
    title
        Page title.

    Returns
    -------
    str
        The page: plain HTML and JavaScript without external resources. Each checkbox has class
        ``answer`` and ``data-task``/``data-input`` attributes; the button ``#download`` saves
        ``ratings.csv`` (task,input,rater,label) for every shown input once a rater id is entered.
    """
    sections = []
    for row in tasks.itertuples(index=False):
        record = row._asdict()
        inputs = [record[c] for c in tasks.columns if c.startswith("input_") and pd.notna(record[c])]
        items = "\n".join(
            f'<label class="item"><input type="checkbox" class="answer" data-task="{html.escape(str(record["task"]))}" '
            f'data-input="{int(i)}">{_media_html(int(i), media)}</label>'
            for i in inputs
        )
        sections.append(
            f'<section class="task" data-task="{html.escape(str(record["task"]))}">\n'
            f"<h2>Tick every input that shows: <q>{html.escape(str(record['explanation']))}</q></h2>\n"
            f'<div class="grid">\n{items}\n</div>\n</section>'
        )
    body = "\n".join(sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{_PAGE_STYLE}</style>
</head>
<body>
<h1>{html.escape(title)}</h1>
<p>For each task, tick the inputs in which the concept is present. Leave the others unticked.
When you are done, press <b>Download answers</b> and hand in the file <code>ratings.csv</code>.</p>
<p><label>Your rater ID: <input id="rater" type="text" pattern="{RATER_PATTERN}" autocomplete="off"></label></p>
{body}
<p><button id="download" type="button">Download answers</button> <span id="status"></span></p>
<script>{_PAGE_SCRIPT}</script>
</body>
</html>
"""


def write_study(
    design: StudyDesign,
    directory: str | Path,
    *,
    media: Mapping[int, object] | None = None,
    title: str = "Concept rating",
    info: Mapping[str, object] | None = None,
) -> list[Path]:
    """Write ``pairs.csv``, ``samples.csv``, ``tasks.csv``, ``design.json`` and ``batch_<b>.html`` files.

    Parameters
    ----------
    design
        Output of :func:`design_study`.
    directory
        Target directory (created).
    media
        Input id → uint8 image or text snippet, embedded in the pages (see :func:`render_batch_html`).
    title
        Page title.
    info
        Extra entries for ``design.json`` (e.g. the budget and raters per input the study was planned for).

    Returns
    -------
    list of pathlib.Path
        The written files.
    """
    from neuroneval.io import atomic_path, write_csv

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = [
        write_csv(target / "pairs.csv", design.pairs),
        write_csv(target / "samples.csv", design.samples, float_format="%.17g"),
        write_csv(target / "tasks.csv", design.tasks),
    ]
    for batch, batch_tasks in design.tasks.groupby("batch", sort=True):
        path = target / f"batch_{int(batch):03d}.html"
        with atomic_path(path) as tmp_path:
            tmp_path.write_text(render_batch_html(batch_tasks, media=media, title=title), encoding="utf-8")
        written.append(path)
    summary = {
        "pairs": len(design.pairs),
        "tasks": len(design.tasks),
        "distinct_inputs": len(design.samples),
        "draws": int(design.samples["draws"].sum()),
        **(info or {}),
    }
    meta_path = target / "design.json"
    with atomic_path(meta_path) as tmp_path:
        tmp_path.write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    written.append(meta_path)
    return written


def read_design(directory: str | Path) -> StudyDesign:
    """Read a study directory written by :func:`write_study`."""
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
    return StudyDesign(pairs=pairs, samples=samples, tasks=tasks)


def read_media(path: str | Path, input_ids: np.ndarray) -> dict[int, object]:
    """Media for the study pages from a file.

    ``.npy``: a uint8 array (n, H, W[, C]) whose rows follow ``input_ids`` (the activation table's order);
    ``.csv``: columns ``input_id,text`` of text snippets.
    """
    source = Path(path)
    if source.suffix == ".npy":
        images = np.load(source)
        if images.dtype != np.uint8 or images.shape[0] != len(input_ids):
            raise ValueError(
                f"{source}: expected a uint8 array with one image per input ({len(input_ids)}), "
                f"got {images.dtype} of shape {images.shape}"
            )
        return {int(i): images[row] for row, i in enumerate(input_ids)}
    if source.suffix == ".csv":
        snippets = pd.read_csv(source, dtype={"text": str})
        if not {"input_id", "text"} <= set(snippets.columns):
            raise ValueError(f"{source}: expected columns input_id,text")
        return {int(i): str(t) for i, t in zip(snippets["input_id"], snippets["text"], strict=True)}
    raise ValueError(f"{source}: media must be a .npy image array or a .csv of input_id,text")


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
        Concept columns of the pseudo-label table; when given, every ``explanation`` must be one of them.
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
        if concepts is not None and explanation not in concepts:
            raise ValueError(
                f"{where}, column explanation: unknown explanation {explanation!r} (not a concept column of "
                f"{concept_source})"
            )
        if (unit, explanation) in seen:
            first = seen[unit, explanation]
            raise ValueError(f"{where}: pair ({unit}, {explanation}) is listed twice (first at line {first})")
        seen[unit, explanation] = row + 2
    return pairs


def vision_world_media(directory: str | Path, input_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """The images of a vision world (:func:`neuroneval.worlds.load_vision_world`) for the given input ids.

    Raises ``ValueError`` naming the world and the first ids it does not hold.
    """
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(directory))
    rows = {int(i): row for row, i in enumerate(world.labels["input_id"].to_numpy(dtype=np.int64))}
    wanted = [int(i) for i in input_ids]
    missing = [i for i in wanted if i not in rows]
    if missing:
        raise ValueError(f"{directory}: the world has no image for input id(s) {missing[:5]} of the study")
    return {i: world.images[rows[i]] for i in wanted}


def design_study_files(
    activations_path: str | Path,
    pairs_path: str | Path,
    directory: str | Path,
    *,
    pseudo_labels_path: str | Path | None = None,
    media_path: str | Path | None = None,
    world_path: str | Path | None = None,
    title: str = "Concept rating",
    info: Mapping[str, object] | None = None,
    **options: object,
) -> list[Path]:
    """File-level :func:`design_study` + :func:`write_study` (what ``neuroneval crowd design`` calls).

    Parameters
    ----------
    activations_path
        Activation table (Parquet, contract of docs/design.md §2.1).
    pairs_path
        CSV with columns unit,explanation (e.g. an explanations file), checked by :func:`read_pairs`; with a
        pseudo-label table every explanation must be one of its concept columns.
    directory
        Output study directory.
    pseudo_labels_path
        Concept table of pseudo-label scores whose columns are the explanation texts.
    media_path
        Optional media for the pages (:func:`read_media`).
    world_path
        Optional vision world directory whose images the pages show (:func:`vision_world_media`); pages show
        input ids when neither media nor a world is given.
    title
        Page title.
    info
        Extra entries for ``design.json``.
    options
        Passed to :func:`design_study` (n_draws, sampling, epsilon, inputs_per_task, tasks_per_batch, seed).

    Returns
    -------
    list of pathlib.Path
        The written files.
    """
    from neuroneval.io import check_matching_ids, read_activation_table, read_concept_table

    if media_path is not None and world_path is not None:
        raise ValueError("give media or a world directory for the pages, not both")
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
    design = design_study(activations, pairs, pseudo_labels=pseudo, **options)
    media = None
    if media_path is not None:
        media = read_media(media_path, activations["input_id"].to_numpy())
    elif world_path is not None:
        media = vision_world_media(world_path, design.samples["input_id"].unique())
    return write_study(design, directory, media=media, title=title, info=info)
