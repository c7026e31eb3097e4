"""What the inputs of your own setting look like: the media of an own dataset, read and checked against its
activation table, for the neuron viewer and the crowd task pages.

Which media an own dataset (``external.datasets.<name>``, docs/your_model.md) has is resolved by
:func:`neuroneval.external.own.media_spec` (a params-level fact, so the params check can read it):

- ``kind: array``: the ``images`` array itself, row *i* = input *i*; ``image_shape: [H, W]`` (or ``[H, W, C]``)
  shows flat rows (an MLP's 64 pixels) as images;
- ``kind: images``: the image folder itself (the workflow's ``data/external/<name>/inputs.csv``,
  :mod:`neuroneval.external.own_images`);
- ``kind: tables``: an optional ``media: {path: …, ids: …, image_shape: …}``: ``path`` is an image array
  ``.npy``/``.npz`` (its ``ids``: a ``.npy`` of integers, a CSV with an ``input_id`` column, or ``rows``: row *i* =
  input *i*), an image folder (``inputs.csv`` ``input_id,file``, or files named by id), or a CSV table
  ``input_id,text``, or the ``tokens.csv`` that ``neuroneval record`` writes beside an LM's tables (``input_id,
  document, position, token_id, token, context``: the token is shown after its left context).

:func:`read_media` reads such a spec (:mod:`neuroneval.input_media`); :func:`check_media_ids` then requires the
media to hold exactly the activation table's inputs: an id of the table that the media lacks, or an input of the
media that the table lacks (a length mismatch), is an error naming both files and the first bad id, so a page never
shows one input's picture for another.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neuroneval.external.own import ROW_IDS

if TYPE_CHECKING:
    from neuroneval.input_media import InputMedia

#: Longer side, in pixels, to which the viewer and the task pages enlarge smaller images (nearest neighbour).
THUMBNAIL_MIN_SIZE = 64


def read_media(spec: Mapping[str, Any]) -> InputMedia:
    """The :class:`~neuroneval.input_media.InputMedia` of a resolved :func:`neuroneval.external.own.media_spec`."""
    from neuroneval.input_media import read_image_array, read_image_table, read_input_media

    path = Path(spec["path"])
    if spec.get("root"):
        return read_image_table(path, root=spec["root"])
    if path.suffix in (".npy", ".npz"):
        ids = spec.get("ids")
        shape = spec.get("image_shape")
        return read_image_array(path, ids=None if ids in (None, ROW_IDS) else ids, row_is_id=ids == ROW_IDS,
                                image_shape=None if shape is None else tuple(int(size) for size in shape))
    if spec.get("ids") is not None or spec.get("image_shape") is not None:
        raise ValueError(f"{path}: ids and image_shape are given for image arrays (.npy/.npz) only")
    return read_input_media(path)


def check_media_ids(media: InputMedia, input_ids: np.ndarray, *, table: str | Path) -> None:
    """Raise ``ValueError`` unless ``media`` holds exactly the inputs ``input_ids`` of the activation ``table``.

    The message names the media, the table, the first id that one has and the other lacks, and both counts.
    """
    wanted = np.asarray(input_ids, dtype=np.int64)
    held = np.asarray(media.ids, dtype=np.int64)
    lacking = wanted[~np.isin(wanted, held)]
    if lacking.size:
        raise ValueError(f"{media.source}: no {media.kind} for input id {int(lacking[0])} of {table} "
                         f"({lacking.size} of its {wanted.size} input ids missing; the media holds {held.size} "
                         "inputs)")
    extra = held[~np.isin(held, wanted)]
    if extra.size:
        raise ValueError(f"{media.source} holds {held.size} inputs but {table} has {wanted.size}: input id "
                         f"{int(extra[0])} of the media is not in the table ({extra.size} such ids); are they the "
                         "same inputs?")


def setting_media(spec: Mapping[str, Any], activation_table: str | Path) -> InputMedia:
    """The media of a setting's dataset (:func:`read_media`), checked against its activation table
    (:func:`check_media_ids`, which reads the table's ``input_id`` column only)."""
    import pandas as pd

    media = read_media(spec)
    ids = pd.read_parquet(activation_table, columns=["input_id"])["input_id"].to_numpy(dtype=np.int64)
    check_media_ids(media, ids, table=activation_table)
    return media


def _array_rank(path: Path) -> int:
    """Axes of the images of a ``.npy`` (memory-mapped) or ``.npz`` (``images``, else its only array other than
    ``input_id``; 0 when that is ambiguous, left to :func:`~neuroneval.input_media.read_image_array` to report)."""
    if path.suffix == ".npy":
        return int(np.load(path, mmap_mode="r").ndim)
    with np.load(path, allow_pickle=False) as archive:
        names = [name for name in archive.files if name != "input_id"]
        chosen = "images" if "images" in names else (names[0] if len(names) == 1 else None)
        return 0 if chosen is None else int(archive[chosen].ndim)


def viewer_media(spec: Mapping[str, Any], activation_table: str | Path) -> tuple[InputMedia | None, str]:
    """The media the viewer shows (:func:`setting_media`) and a note for the page.

    An image array of flat rows ``(n, D)`` without ``image_shape`` has no picture to draw (a table of features, or
    images whose shape is not declared), so the cards show input ids and the note says to declare ``image_shape``.
    """
    path = Path(spec["path"])
    flat = (not spec.get("root") and spec.get("image_shape") is None and path.suffix in (".npy", ".npz")
            and _array_rank(path) == 2)
    if flat:
        return None, (f"{path.name} holds flat rows: declare image_shape: [H, W] on the dataset to see them as "
                      "images (cards show input ids)")
    return setting_media(spec, activation_table), ""
