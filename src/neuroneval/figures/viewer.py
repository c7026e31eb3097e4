"""The neuron viewer: one static, offline HTML page per setting (``results/viewer/<setting>/index.html``).

Each unit with a known concept gets a card (a row of one sortable table): its top-activating inputs (inline
base64 PNG thumbnails from the world's images, or the world's tokens with the activating one highlighted; with the
user's own media, :mod:`neuroneval.input_media`, their images, texts or tokens in context, found by input id), its
known concept(s), every explanation available for it (the explanation methods' outputs, when built), and its
scores for the known concept under the chosen metrics (by default those that pass both sanity tests, Table 3).
Clicking a column header sorts the cards; the page has no external asset, no server and no network access.

The data assembly (:func:`top_inputs`, :func:`unit_scores`, :func:`assemble_cards`) is separate from the HTML
(:func:`render_page`) so that it can be tested on small synthetic inputs.
"""

from __future__ import annotations

import base64
import html
import io as _io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from neuroneval.input_media import InputMedia
    from neuroneval.metrics import MetricOptions

#: ``render(row, activation)``: how an input row is shown, a thumbnail (``kind="image"``: base64 PNG), tokens
#: (``kind="tokens"``), a text (``kind="text"``: its pieces joined as they are) or its id.
Renderer = Callable[[int, float], "InputView"]


@dataclass(frozen=True)
class InputView:
    """One top-activating input as the page shows it."""

    input_id: int
    activation: float
    kind: str  # "image" | "tokens" | "text" | "id"
    image: str = ""  # base64 PNG
    width: int = 0  # display size in CSS pixels
    height: int = 0
    tokens: tuple[str, ...] = ()
    highlight: int = -1  # index in ``tokens`` of the activating token
    next_token: str = ""


@dataclass(frozen=True)
class Card:
    """One unit of the viewer."""

    unit: str
    concepts: tuple[str, ...]
    inputs: tuple[InputView, ...]
    explanations: tuple[tuple[str, str], ...] = ()  # (method, explanation)
    scores: Mapping[str, float] = field(default_factory=dict)  # metric -> score for the (first) known concept
    status: str = "ok"  # ok | near_dead | constant (neuroneval.metrics.unit_checks.UNIT_STATUSES)

    @property
    def degenerate(self) -> bool:
        """Whether the unit is constant or near-dead: its card gets a badge and sorts last."""
        return self.status != "ok"


def world_directory(dataset: str, root: Path = Path("data")) -> Path:
    """``vision_probe`` → ``data/worlds/vision/probe`` (likewise ``text_probe``, ``digits_probe``)."""
    world, _, split = dataset.partition("_")
    if not split:
        raise ValueError(f"dataset {dataset!r} is not <world>_<split>")
    return root / "worlds" / world / split


def passing_metrics(table3: pd.DataFrame) -> list[str]:
    """The metrics of Table 3 that pass both sanity tests (column ``pass``), in the table's order."""
    passed = table3["pass"].astype(str).str.lower() == "true"
    return table3.loc[passed, "metric"].tolist()


def top_inputs(activations: np.ndarray, k: int) -> np.ndarray:
    """Row positions of the ``k`` largest values of a unit's activations, largest first (ties: earlier row)."""
    values = np.asarray(activations, dtype=np.float64)
    order = np.lexsort((np.arange(values.size), -np.nan_to_num(values, nan=-np.inf)))
    return order[: max(int(k), 0)]


def unit_scores(activations: np.ndarray, concepts: np.ndarray, pairs: Sequence[tuple[int, int]],
                metrics: Sequence[str], options: MetricOptions | None = None) -> dict[str, np.ndarray]:
    """``{metric: score of each (unit column, concept column) pair}`` with the library's metrics; ``options`` are
    shared, each metric taking the fields it has (default: every metric's defaults)."""
    from neuroneval.metrics import FeatureCache, MetricOptions, get_spec, score_pairs

    if not len(pairs):
        return {metric: np.zeros(0) for metric in metrics}
    array = np.asarray(pairs, dtype=np.int64)
    # only the listed units are scored: slice them out so that features are prepared for them alone
    units, positions = np.unique(array[:, 0], return_inverse=True)
    selected = np.ascontiguousarray(np.asarray(activations)[:, units])
    listed = np.column_stack([positions.reshape(-1), array[:, 1]])
    cache = FeatureCache()
    shared = MetricOptions() if options is None else options
    return {metric: np.asarray(score_pairs(metric, selected, concepts, listed, cache=cache,
                                           options=get_spec(metric).options_from(shared)), dtype=float)
            for metric in metrics}


def truth_by_unit(truth: pd.DataFrame) -> dict[str, list[str]]:
    """``data/truth/<setting>.csv`` (columns ``unit,concept``, one row per known pair) as unit → concepts."""
    grouped: dict[str, list[str]] = {}
    for unit, concept in zip(truth["unit"].astype(str), truth["concept"].astype(str), strict=True):
        grouped.setdefault(unit, []).append(concept)
    return grouped


def explanations_by_unit(explanations: Mapping[str, pd.DataFrame]) -> dict[str, list[tuple[str, str]]]:
    """Method tables (``explanations/<setting>/<method>.csv``: ``unit,explanation,…``) as unit → (method, text)."""
    grouped: dict[str, list[tuple[str, str]]] = {}
    for method, frame in explanations.items():
        for unit, text in zip(frame["unit"].astype(str), frame["explanation"].astype(str), strict=True):
            grouped.setdefault(unit, []).append((method, text))
    return grouped


def assemble_cards(activations: np.ndarray, unit_names: Sequence[str], concepts: np.ndarray,
                   concept_names: Sequence[str], truth: pd.DataFrame, *, render: Renderer, metrics: Sequence[str],
                   top_k: int, max_units: int | None = None,
                   explanations: Mapping[str, pd.DataFrame] | None = None,
                   options: MetricOptions | None = None) -> list[Card]:
    """One :class:`Card` per unit of ``truth`` that the setting has (truth order, at most ``max_units``).

    ``activations`` is (inputs × units) with columns ``unit_names``; ``concepts`` (inputs × concepts) with columns
    ``concept_names``; ``render(row, activation)`` turns an input row into an :class:`InputView`. Scores are
    those of each unit's first known concept that the concept table has (NaN when it has none). Degenerate units
    (constant or near-dead, :func:`neuroneval.metrics.unit_checks.degenerate_units`) get their ``status`` and
    come last, so the page never shows one first as if it were well explained.
    """
    from neuroneval.metrics.unit_checks import degenerate_units

    known = truth_by_unit(truth)
    column = {name: position for position, name in enumerate(unit_names)}
    concept_column = {name: position for position, name in enumerate(concept_names)}
    units = [unit for unit in known if unit in column]
    if max_units is not None:
        units = units[: int(max_units)]
    pairs, scored = [], []
    for unit in units:
        first = next((concept for concept in known[unit] if concept in concept_column), None)
        if first is not None:
            pairs.append((column[unit], concept_column[first]))
            scored.append(unit)
    values = unit_scores(activations, concepts, pairs, metrics, options=options)
    scores = {unit: {metric: float(values[metric][index]) for metric in metrics}
              for index, unit in enumerate(scored)}
    texts = explanations_by_unit(explanations or {})
    status = dict(zip(unit_names, degenerate_units(activations, unit_names).status, strict=True))
    cards = []
    for unit in units:
        rows = top_inputs(activations[:, column[unit]], top_k)
        views = tuple(render(int(row), float(activations[row, column[unit]])) for row in rows)
        cards.append(Card(unit=unit, concepts=tuple(known[unit]), inputs=views,
                          explanations=tuple(texts.get(unit, [])),
                          scores=scores.get(unit, {metric: float("nan") for metric in metrics}),
                          status=status[unit]))
    return sorted(cards, key=lambda card: card.degenerate)


def png_base64(image: np.ndarray, *, scale: int = 1) -> str:
    """A uint8 (H, W, 3) or (H, W) image as a base64 PNG, enlarged ``scale`` times (nearest neighbour; the page
    enlarges native-size thumbnails with CSS instead); the bytes carry no metadata, so the same image always
    gives the same string."""
    from PIL import Image

    array = np.asarray(image)
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if scale > 1:
        array = np.repeat(np.repeat(array, scale, axis=0), scale, axis=1)
    buffer = _io.BytesIO()
    Image.fromarray(array).save(buffer, format="PNG", optimize=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def image_renderer(images: np.ndarray, input_ids: np.ndarray, *, scale: int = 2) -> Renderer:
    """Render row ``r`` as the thumbnail of ``images[input_ids[r]]``."""

    def render(row: int, activation: float) -> InputView:
        identifier = int(input_ids[row])
        image = np.asarray(images[identifier])
        return InputView(input_id=identifier, activation=activation, kind="image", image=png_base64(image),
                         width=image.shape[1] * scale, height=image.shape[0] * scale)

    return render


def token_renderer(token_ids: np.ndarray, doc_offsets: np.ndarray, vocabulary: Sequence[str],
                   input_ids: np.ndarray, *, context: int = 12) -> Renderer:
    """Render row ``r`` as up to ``context`` tokens of its document ending at position ``input_ids[r]`` (the
    activating token, highlighted) and the token that follows it."""

    def render(row: int, activation: float) -> InputView:
        position = int(input_ids[row])
        document = int(np.searchsorted(doc_offsets, position, side="right") - 1)
        start = max(int(doc_offsets[max(document, 0)]), position - int(context) + 1)
        window = [vocabulary[int(token)] for token in token_ids[start:position + 1]]
        following = vocabulary[int(token_ids[position + 1])] if position + 1 < len(token_ids) else ""
        return InputView(input_id=position, activation=activation, kind="tokens", tokens=tuple(window),
                         highlight=len(window) - 1, next_token=following)

    return render


def upscale_factor(height: int, width: int, min_size: int) -> int:
    """The whole factor ``f = ceil(min_size / max(H, W))`` (at least 1) that enlarges an image to ``min_size`` pixels.

    >>> upscale_factor(8, 8, 64), upscale_factor(224, 224, 64)
    (8, 1)
    """
    return max(1, -(-int(min_size) // max(int(height), int(width), 1)))


def media_renderer(media: InputMedia, input_ids: np.ndarray, *, scale: int = 2, min_size: int = 0) -> Renderer:
    """Render row ``r`` as the user's media of input ``input_ids[r]``, looked up by id (never by row): an image
    thumbnail, a text, or a token highlighted after its left context. An id the media lacks raises ``ValueError``
    naming the media and the id (:meth:`~neuroneval.input_media.InputMedia.lookup`).

    An image smaller than ``min_size`` pixels on its longer side is enlarged in the PNG itself by
    :func:`upscale_factor` (nearest neighbour: pixel ``(i, j)`` of the thumbnail is pixel ``(i // f, j // f)`` of
    the image), so an 8×8 digit stays sharp and visible; the page shows it at that size."""
    from neuroneval.input_media import TokenInContext

    def render(row: int, activation: float) -> InputView:
        identifier = int(input_ids[row])
        item = media.lookup([identifier])[identifier]
        if isinstance(item, TokenInContext):
            return InputView(input_id=identifier, activation=activation, kind="text",
                             tokens=(item.context, item.token), highlight=1)
        if isinstance(item, str):
            return InputView(input_id=identifier, activation=activation, kind="text", tokens=(item,))
        image = np.asarray(item)
        if min_size and max(image.shape[:2]) < min_size:
            factor = upscale_factor(image.shape[0], image.shape[1], min_size)
            return InputView(input_id=identifier, activation=activation, kind="image",
                             image=png_base64(image, scale=factor), width=image.shape[1] * factor,
                             height=image.shape[0] * factor)
        return InputView(input_id=identifier, activation=activation, kind="image", image=png_base64(image),
                         width=image.shape[1] * scale, height=image.shape[0] * scale)

    return render


def id_renderer(input_ids: np.ndarray) -> Renderer:
    """Render row ``r`` by its input id only (a world the viewer cannot show)."""

    def render(row: int, activation: float) -> InputView:
        return InputView(input_id=int(input_ids[row]), activation=activation, kind="id")

    return render


# ----------------------------------------------------------------------------------------------------- HTML

_CSS = """
:root { --ink: #1b1b1b; --muted: #5f5f5f; --line: #dcdcdc; --accent: #0072B2; --hi: #E69F00; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 16px 20px 40px; max-width: 1600px; background: #fafafa; }
h1 { font-size: 22px; margin: 4px 0 2px; }
p.lead { color: var(--muted); margin: 0 0 12px; }
table { border-collapse: separate; border-spacing: 0 8px; width: 100%; }
thead th { position: sticky; top: 0; background: #fafafa; text-align: left; font-size: 13px; padding: 6px 8px;
           border-bottom: 2px solid var(--line); cursor: pointer; user-select: none; white-space: nowrap; }
thead th[data-type="none"] { cursor: default; }
thead th .arrow { color: var(--accent); font-size: 11px; }
tr.card { background: white; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
tr.card td { padding: 8px; vertical-align: top; border-top: 1px solid var(--line);
             border-bottom: 1px solid var(--line); }
tr.card td:first-child { border-left: 4px solid var(--accent); border-radius: 6px 0 0 6px; font-weight: 600; }
tr.card td:last-child { border-right: 1px solid var(--line); border-radius: 0 6px 6px 0; }
.concept { display: inline-block; background: #e8f3fa; border-radius: 4px; padding: 1px 6px; margin: 1px 0;
           font-family: ui-monospace, monospace; font-size: 13px; }
.inputs { display: flex; flex-wrap: wrap; gap: 6px; min-width: 290px; max-width: 620px; }
figure { margin: 0; text-align: center; font-size: 11px; color: var(--muted); }
figure img { display: block; image-rendering: pixelated; border: 1px solid var(--line); }
.tokens { font-family: ui-monospace, monospace; font-size: 12.5px; background: #f4f4f4; border-radius: 4px;
          padding: 2px 6px; margin: 2px 0; width: 100%; }
.tokens mark { background: var(--hi); color: black; border-radius: 3px; padding: 0 2px; font-weight: 700; }
.tokens .next { color: var(--muted); font-style: italic; }
.tokens .act { float: right; color: var(--muted); }
ul.expl { margin: 0; padding-left: 16px; font-size: 13px; }
ul.expl b { color: var(--muted); font-weight: 600; }
td.num { font-variant-numeric: tabular-nums; text-align: right; white-space: nowrap; }
.none { color: var(--muted); font-style: italic; }
.badge { display: inline-block; background: #D55E00; color: white; border-radius: 4px; padding: 0 5px;
         margin-left: 6px; font-size: 11px; font-weight: 600; }
tr.card.degenerate { opacity: .7; }
"""

_SCRIPT = """
(function () {
  var table = document.getElementById('units');
  var headers = table.tHead.rows[0].cells;
  function key(row, index, type) {
    var text = row.cells[index].getAttribute('data-sort');
    if (text === null) { text = row.cells[index].textContent; }
    if (type === 'number') { var value = parseFloat(text); return isNaN(value) ? -Infinity : value; }
    return text.toLowerCase();
  }
  Array.prototype.forEach.call(headers, function (header, index) {
    var type = header.getAttribute('data-type');
    if (type === 'none') { return; }
    header.addEventListener('click', function () {
      var descending = header.getAttribute('aria-sort') !== 'descending';
      if (type === 'text' && header.getAttribute('aria-sort') === null) { descending = false; }
      Array.prototype.forEach.call(headers, function (other) {
        other.removeAttribute('aria-sort');
        var arrow = other.querySelector('.arrow'); if (arrow) { arrow.textContent = ''; }
      });
      header.setAttribute('aria-sort', descending ? 'descending' : 'ascending');
      header.querySelector('.arrow').textContent = descending ? ' \\u25bc' : ' \\u25b2';
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var dead = a.classList.contains('degenerate') - b.classList.contains('degenerate');
        if (dead !== 0) { return dead; }
        var x = key(a, index, type), y = key(b, index, type);
        var order = x < y ? -1 : (x > y ? 1 : 0);
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
})();
"""


def _escape(text: object) -> str:
    return html.escape(str(text), quote=True)


def _input_html(view: InputView) -> str:
    title = f"input {view.input_id}, activation {view.activation:.4g}"
    if view.kind == "image":
        size = f' width="{view.width}" height="{view.height}"' if view.width else ""
        return (f'<figure title="{_escape(title)}" data-input="{view.input_id}"><img alt="input {view.input_id}"{size} '
                f'src="data:image/png;base64,{view.image}"><figcaption>{view.activation:.3g}</figcaption></figure>')
    if view.kind in ("tokens", "text"):
        words = [f"<mark>{_escape(token)}</mark>" if index == view.highlight else _escape(token)
                 for index, token in enumerate(view.tokens)]
        following = f' <span class="next">→ {_escape(view.next_token)}</span>' if view.next_token else ""
        joined = (" " if view.kind == "tokens" else "").join(words)
        return (f'<div class="tokens" data-input="{view.input_id}" title="{_escape(title)}">{joined}{following}'
                f'<span class="act">{view.activation:.3g}</span></div>')
    return f'<figure title="{_escape(title)}">#{view.input_id}<br>{view.activation:.3g}</figure>'


#: Tooltip of a degenerate unit's badge.
_STATUS_TITLE = {"constant": "the unit takes one value on every input: nothing to explain",
                 "near_dead": "the unit varies on too few inputs to be explained"}


def _unit_key(unit: str) -> str:
    """Sort key of a unit name: numbers by value (zero-padded), other names as they are."""
    return f"{int(unit):012d}" if unit.isdigit() else unit


def render_page(setting: str, cards: Sequence[Card], *, metrics: Sequence[str], description: str = "",
                notes: Sequence[str] = ()) -> str:
    """The viewer page of one setting (a self-contained HTML document)."""
    methods = sorted({method for card in cards for method, _ in card.explanations})
    head = ['<th data-type="text">unit<span class="arrow"></span></th>',
            '<th data-type="text">known concept<span class="arrow"></span></th>',
            '<th data-type="number" title="activation of the top input">top-activating inputs'
            '<span class="arrow"></span></th>',
            '<th data-type="number" title="number of explanations">explanations<span class="arrow"></span></th>']
    head += [f'<th data-type="number" title="score of the unit for its known concept">{_escape(metric)}'
             '<span class="arrow"></span></th>' for metric in metrics]
    rows = []
    for card in cards:
        concepts = " ".join(f'<span class="concept">{_escape(concept)}</span>' for concept in card.concepts)
        inputs = "".join(_input_html(view) for view in card.inputs) or '<span class="none">no inputs</span>'
        top = card.inputs[0].activation if card.inputs else float("nan")
        if card.explanations:
            explanations = "<ul class=\"expl\">" + "".join(
                f"<li><b>{_escape(method)}</b>: {_escape(text)}</li>" for method, text in card.explanations) + "</ul>"
        else:
            explanations = '<span class="none">none built</span>'
        badge = (f'<span class="badge" title="{_STATUS_TITLE[card.status]}">{card.status.replace("_", "-")}</span>'
                 if card.degenerate else "")
        cells = [f'<td data-sort="{_escape(_unit_key(card.unit))}">{_escape(card.unit)}{badge}</td>',
                 f"<td>{concepts}</td>",
                 f'<td data-sort="{top:.9g}"><div class="inputs">{inputs}</div></td>',
                 f'<td data-sort="{len(card.explanations)}">{explanations}</td>']
        for metric in metrics:
            value = card.scores.get(metric, float("nan"))
            shown = "–" if not np.isfinite(value) else f"{value:.3f}"
            cells.append(f'<td class="num" data-sort="{value:.9g}">{shown}</td>')
        kind = "card degenerate" if card.degenerate else "card"
        rows.append(f'<tr class="{kind}" data-unit="{_escape(card.unit)}">{"".join(cells)}</tr>')
    degenerate = sum(card.degenerate for card in cards)
    lead = [f"{len(cards)} units with a known concept", f"metrics: {', '.join(metrics) or 'none'}",
            f"explanation methods: {', '.join(methods) or 'none built'}", *notes]
    if degenerate:
        lead.append(f"{degenerate} constant or near-dead unit(s) badged and sorted last: their scores measure "
                    "concept base rates, not the unit")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>Neuron viewer: {_escape(setting)}</title><style>{_CSS}</style></head><body>"
        f"<h1>Neuron viewer: {_escape(setting)}</h1>"
        + (f"<p class=\"lead\">{_escape(description)}</p>" if description else "")
        + f"<p class=\"lead\">{_escape(' · '.join(lead))}. Click a column header to sort.</p>"
        f"<table id=\"units\"><thead><tr>{''.join(head)}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


# ----------------------------------------------------------------------------------------------- building


def load_renderer(dataset: str, input_ids: np.ndarray, *, root: Path | None = Path("data"), scale: int = 2,
                  context: int = 12) -> Renderer:
    """The renderer of a dataset's world: thumbnails (vision, digits; by the ids of ``labels.parquet`` when the
    world has it, :func:`~neuroneval.input_media.read_vision_world_media`), tokens (text) or ids (also when ``root``
    is None: a user's own dataset, which has no embedded world)."""
    if root is None:
        return id_renderer(input_ids)
    directory = world_directory(dataset, root)
    if (directory / "images.npy").exists() and (directory / "labels.parquet").exists():
        from neuroneval.input_media import read_vision_world_media

        return media_renderer(read_vision_world_media(directory), input_ids, scale=scale)
    if (directory / "images.npy").exists():
        return image_renderer(np.load(directory / "images.npy", mmap_mode="r"), input_ids, scale=scale)
    if (directory / "token_ids.npy").exists():
        from neuroneval.worlds.text import load_text_world

        world = load_text_world(directory)
        return token_renderer(world.token_ids, world.doc_offsets, world.vocabulary, input_ids, context=context)
    return id_renderer(input_ids)


def build_viewer(setting: str, setting_config: Mapping[str, Any], *, activation_files: Sequence[Path],
                 concept_file: Path, truth_file: Path, metrics: Sequence[str], top_k: int,
                 max_units: int | None, explanation_files: Sequence[Path] = (), data_root: Path | None = Path("data"),
                 scale: int = 2, context: int = 12, description: str = "", notes: Sequence[str] = (),
                 media: InputMedia | None = None, min_size: int = 0) -> str:
    """Read one setting's tables and world (none when ``data_root`` is None) and return its viewer page; ``media``
    (the user's images or texts, :func:`neuroneval.input_media.read_input_media`) replaces the embedded world
    (:func:`load_renderer`), its images enlarged to ``min_size`` pixels (:func:`media_renderer`)."""
    from neuroneval.settings import load_setting, read_activation_table

    data = load_setting(list(activation_files), concept_file,
                        concept_prefixes=setting_config["concepts"].get("prefixes", []))
    frame, _ = read_activation_table(activation_files[0])
    input_ids = frame["input_id"].to_numpy(dtype=np.int64)
    if media is not None:
        render = media_renderer(media, input_ids, scale=scale, min_size=min_size)
    else:
        render = load_renderer(setting_config["dataset"], input_ids, root=data_root, scale=scale, context=context)
    truth = pd.read_csv(truth_file, dtype=str)
    explanations = {Path(path).stem: pd.read_csv(path, dtype={"unit": str}, keep_default_na=False)
                    for path in explanation_files}
    cards = assemble_cards(data.activations, data.unit_names, data.concepts, data.concept_names, truth,
                           render=render, metrics=metrics, top_k=top_k, max_units=max_units,
                           explanations=explanations)
    notes = [*notes, "scores: the unit against its known concept, metric defaults (neuroneval.metrics)"]
    return render_page(setting, cards, metrics=metrics, description=description, notes=notes)


def write_viewer(path: str | Path, page: str) -> Path:
    """Write a viewer page atomically."""
    from neuroneval.io import atomic_path

    target = Path(path)
    with atomic_path(target) as tmp_path:
        tmp_path.write_text(page, encoding="utf-8")
    return target
