"""Task pages of a real crowd study: self-contained HTML with the study's inputs (paper 001, Sec. 5.2, Fig. 8).

Each page shows the tasks of one batch: the explanation, and its inputs as checkboxes a rater ticks where the
concept is present. Images are embedded as PNG ``data:`` URIs (:func:`encode_png`, stdlib zlib only), so a
page needs no external resources; its script saves ``ratings.csv`` (task,input,rater,label) once a rater id
matching :data:`RATER_PATTERN` is entered.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from collections.abc import Mapping

import numpy as np
import pandas as pd

from neuroneval.crowd.prompts import rater_wording
from neuroneval.input_media import TokenInContext

#: Allowed characters of a rater id (so that it needs no CSV quoting).
RATER_PATTERN = "[A-Za-z0-9_.\\-]+"


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
    if isinstance(item, TokenInContext):
        return f'<span class="snippet">{html.escape(item.context)}<mark>{html.escape(item.token)}</mark></span>'
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
.snippet mark { background: #fc6; font-weight: bold; }
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
    tasks: pd.DataFrame,
    *,
    media: Mapping[int, object] | None = None,
    title: str = "Concept rating",
    prompts: Mapping[str, str] | None = None,
) -> str:
    """A self-contained HTML page for the tasks of one batch.

    Parameters
    ----------
    tasks
        Rows of :attr:`~neuroneval.crowd.design.StudyDesign.tasks` (task, explanation, input_1 …).
    media
        Maps input id to a uint8 image array (embedded as a PNG ``data:`` URI), a text snippet or a
        :class:`~neuroneval.input_media.TokenInContext` (the token highlighted after its left context); inputs
        without media show their id.
    title
        Page title.
    prompts
        Rater-facing wording of concepts (or whole explanations); each explanation is shown as
        :func:`~neuroneval.crowd.prompts.rater_wording` (default: the readable form of its names).

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
            f'<section class="task" data-task="{html.escape(str(record["task"]))}" '
            f'data-explanation="{html.escape(str(record["explanation"]))}">\n'
            f"<h2>Tick every input that shows: <q>{html.escape(rater_wording(str(record['explanation']), prompts))}"
            "</q></h2>\n"
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
