"""What an input looks like, by ``input_id``: the user's images or texts for crowd task pages and the neuron viewer.

Every table of the data contract (docs/design.md §2) names its inputs by ``input_id``; this module finds the
picture or text of an id in the user's own media, so a page never pairs an id with another input's picture:

- an **image folder** (:func:`read_image_folder`): ``inputs.csv`` with columns ``input_id,file`` (paths relative
  to the folder), or, without it, image files named by their id (``17.png``, ``00017.jpg``); any such table with
  a root folder (:func:`read_image_table`, e.g. an external image dataset's ``inputs.csv``, ``input_id,path``);
- a **NumPy array** (:func:`read_image_array`): a ``.npy`` (or one array of a ``.npz``) of images, one per row,
  with a matching ids array (a ``.npy`` of integers or a CSV with an ``input_id`` column; in a ``.npz`` the array
  ``input_id``). Row *i* is input *i* only when the caller says so (``row_is_id=True``); an ids array whose
  length differs from the image rows is an error naming both lengths;
- a **text table** (:func:`read_text_table`): CSV (or Parquet) with ``input_id,text``, or the token table that
  ``neuroneval record`` writes for language models (``input_id, document, position, token, context…``): the
  token is shown highlighted after its left ``context``;
- an embedded **vision world** (:func:`read_vision_world_media`): its ``images.npy`` with the ids of its
  ``labels.parquet``.

:meth:`InputMedia.lookup` returns the media of the requested ids and raises ``ValueError`` naming the source, the
first missing ids and how many are missing. Images are uint8 (H, W), (H, W, 3) or (H, W, 4); other numeric arrays
are mapped linearly from the whole array's [min, max] onto [0, 255] (one scale for all images, so their relative
brightness is kept); channel-first arrays (n, C, H, W) with C ∈ {1, 3} are moved to channel-last.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

#: File name endings read as images in an image folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
#: Index of an image folder: ``input_id,file``.
FOLDER_INDEX = "inputs.csv"
#: Missing ids named in an error message.
SHOWN_MISSING = 5


@dataclass(frozen=True)
class TokenInContext:
    """One token of a language-model input: the text before it (``context``) and the ``token`` itself."""

    context: str
    token: str


#: What one input looks like: a uint8 image, a text snippet or a token in its left context.
MediaItem = np.ndarray | str | TokenInContext


@dataclass(frozen=True)
class InputMedia:
    """The media of a set of input ids, read on demand.

    ``source`` names the files (for messages), ``kind`` is ``"image"``, ``"text"`` or ``"tokens"``, ``ids`` the input
    ids it holds (in its own order) and ``load(position)`` the media at a position of ``ids``.
    """

    source: str
    kind: str
    ids: np.ndarray
    load: Callable[[int], MediaItem]

    @cached_property
    def _position(self) -> dict[int, int]:
        return {int(identifier): row for row, identifier in enumerate(self.ids)}

    def lookup(self, input_ids: Iterable[int]) -> dict[int, MediaItem]:
        """``{input_id: media}`` for every requested id (each read once).

        Raises
        ------
        ValueError
            Naming :attr:`source`, the first :data:`SHOWN_MISSING` ids it lacks and how many it lacks.
        """
        position = self._position
        wanted = list(dict.fromkeys(int(identifier) for identifier in input_ids))
        missing = [identifier for identifier in wanted if identifier not in position]
        if missing:
            raise ValueError(f"{self.source}: no {self.kind} for {len(missing)} of the {len(wanted)} requested input "
                             f"id(s), e.g. {missing[:SHOWN_MISSING]}")
        return {identifier: self.load(position[identifier]) for identifier in wanted}


def _checked_ids(values: object, source: str) -> np.ndarray:
    ids = np.asarray(values)
    if ids.ndim != 1:
        raise ValueError(f"{source}: input ids must be a 1-D array, got shape {ids.shape}")
    if ids.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            whole = np.isfinite(ids) & (ids == np.round(ids))
        if not whole.all():
            raise ValueError(f"{source}: input id number {int(np.flatnonzero(~whole)[0]) + 1} is not a whole number")
        ids = ids.astype(np.int64)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"{source}: input ids must be integers, got {ids.dtype}")
    ids = ids.astype(np.int64)
    unique, counts = np.unique(ids, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"{source}: input id(s) {unique[counts > 1][:SHOWN_MISSING].tolist()} are listed twice")
    return ids


def display_rows(images: np.ndarray, source: str) -> Callable[[int], np.ndarray]:
    """``row → uint8 image`` of ``images`` (n, H, W[, C]) or channel-first (n, C, H, W), C ∈ {1, 3, 4}.

    uint8 stays as it is; any other numeric array is mapped as ``round(255 (x − min) / (max − min))`` with the whole
    array's min and max (a constant array becomes 0). Rows are converted when asked for, so a memory-mapped array
    is never copied whole.

    Raises ``ValueError`` naming ``source`` for another shape, a non-numeric array or NaN/infinite values.
    """
    array = images
    channel_first = array.ndim == 4 and array.shape[1] in (1, 3) and array.shape[3] not in (1, 3, 4)
    shape = (array.shape[0], *array.shape[2:], array.shape[1]) if channel_first else array.shape
    if len(shape) not in (3, 4) or (len(shape) == 4 and shape[3] not in (1, 3, 4)):
        raise ValueError(f"{source}: images must be an array (n, H, W), (n, H, W, 1|3|4) or (n, 1|3, H, W), "
                         f"got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{source}: images must be numeric, got {array.dtype}")
    low = high = 0.0
    if array.dtype != np.uint8 and array.shape[0]:
        low, high = float(np.min(array)), float(np.max(array))
        if not (np.isfinite(low) and np.isfinite(high)):
            raise ValueError(f"{source}: images contain NaN or infinite values")

    def row(index: int) -> np.ndarray:
        pixels = np.asarray(array[index])
        if channel_first:
            pixels = np.moveaxis(pixels, 0, -1)
        if pixels.ndim == 3 and pixels.shape[2] == 1:
            pixels = pixels[..., 0]
        if array.dtype == np.uint8:
            return pixels
        if high <= low:
            return np.zeros(pixels.shape, dtype=np.uint8)
        return np.rint((pixels.astype(np.float64) - low) / (high - low) * 255.0).astype(np.uint8)

    return row


def as_display_images(images: np.ndarray, source: str) -> np.ndarray:
    """All of ``images`` as uint8 (n, H, W[, C]) (:func:`display_rows`, one row after the other).

    >>> as_display_images(np.array([[[0.0, 16.0]]]), "a").tolist()
    [[[0, 255]]]
    """
    row = display_rows(np.asarray(images), source)
    return np.stack([row(index) for index in range(len(images))])


def _read_ids_file(path: Path) -> np.ndarray:
    if path.suffix == ".npy":
        return _checked_ids(np.load(path, allow_pickle=False), str(path))
    if path.suffix in (".csv", ".txt"):
        frame = pd.read_csv(path)
        if "input_id" not in frame.columns:
            raise ValueError(f"{path}: an ids table needs an input_id column, got columns {list(frame.columns)}")
        return _checked_ids(frame["input_id"].to_numpy(), f"{path}, column input_id")
    raise ValueError(f"{path}: input ids must be a .npy array or a .csv with an input_id column")


def read_image_array(path: str | Path, *, ids: str | Path | np.ndarray | None = None, row_is_id: bool = False,
                     array_name: str | None = None, image_shape: tuple[int, ...] | None = None) -> InputMedia:
    """Images of a ``.npy`` array (or one array of a ``.npz``) with their input ids.

    Parameters
    ----------
    path
        ``.npy`` of images (n, …), or ``.npz`` holding the images (``array_name``, else ``images``, else its only
        array other than ``input_id``) and, optionally, the ids as ``input_id``.
    ids
        The ids of the rows: an array, a ``.npy`` of integers or a CSV with an ``input_id`` column.
    row_is_id
        Declare that row *i* is input *i* (no ids array).
    image_shape
        The shape of one image, ``(H, W)`` or ``(H, W, C)``, when the rows are flat (e.g. the 64 pixels of an
        8×8 digit that an MLP reads): each row is reshaped to it (row-major).

    Raises
    ------
    ValueError
        No ids given (nor ``row_is_id``), both given, ids whose length differs from the image rows (naming both
        lengths and both files), or an ``image_shape`` whose size differs from a row's (naming both).
    """
    source = Path(path)
    ids_source = "row numbers"
    stored_ids = None
    if source.suffix == ".npz":
        with np.load(source, allow_pickle=False) as archive:
            names = list(archive.files)
            image_names = [name for name in names if name != "input_id"]
            chosen = array_name or ("images" if "images" in names else (image_names[0] if len(image_names) == 1
                                                                        else None))
            if chosen not in names:
                raise ValueError(f"{source}: cannot tell which array holds the images among {names}; name it "
                                 "'images' (and the ids 'input_id')")
            images = archive[chosen]
            if "input_id" in names:
                stored_ids = _checked_ids(archive["input_id"], f"{source}, array input_id")
                ids_source = f"{source}, array input_id"
    elif source.suffix == ".npy":
        images = np.load(source, mmap_mode="r", allow_pickle=False)
    else:
        raise ValueError(f"{source}: an image array must be a .npy or .npz file")
    if image_shape is not None:
        row_size = int(np.prod(images.shape[1:]))
        if int(np.prod(image_shape)) != row_size:
            raise ValueError(f"{source}: image_shape {list(image_shape)} holds {int(np.prod(image_shape))} values, but "
                             f"a row of shape {list(images.shape[1:])} holds {row_size}")
        images = images.reshape(images.shape[0], *image_shape)
    given = [name for name, value in (("ids", ids), ("row_is_id", row_is_id or None)) if value is not None]
    if stored_ids is not None and given:
        raise ValueError(f"{source}: holds its own input_id array; do not also give {given[0]}")
    if ids is not None and row_is_id:
        raise ValueError(f"{source}: give the ids of its rows or declare row i = input id i, not both")
    if ids is not None:
        if isinstance(ids, np.ndarray):
            stored_ids, ids_source = _checked_ids(ids, "ids"), "the given ids"
        else:
            stored_ids, ids_source = _read_ids_file(Path(ids)), str(ids)
    elif row_is_id:
        stored_ids = np.arange(images.shape[0], dtype=np.int64)
    if stored_ids is None:
        raise ValueError(f"{source}: which input does each row show? give its input ids (a .npy or an input_id "
                         "CSV; '--image-ids FILE') or declare row i = input id i ('--image-ids rows')")
    if stored_ids.shape[0] != images.shape[0]:
        raise ValueError(f"{source} has {images.shape[0]} image(s) but {ids_source} lists {stored_ids.shape[0]} "
                         "input id(s); they must have the same length (one id per image row)")
    return InputMedia(str(source), "image", stored_ids, display_rows(images, str(source)))


def _load_image_file(path: Path) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        if image.mode not in ("L", "RGB", "RGBA"):
            image = image.convert("RGBA" if "A" in image.getbands() else "RGB")
        return np.asarray(image, dtype=np.uint8)


def read_image_table(index: str | Path, *, root: str | Path | None = None) -> InputMedia:
    """Images listed in a table ``input_id,file`` (or ``input_id,path``, as the workflow's external image datasets
    write), paths relative to ``root`` (default: the table's folder).

    Raises ``ValueError`` naming the table, and the line and column of the first listed file that does not exist
    (with how many are missing).
    """
    table_path = Path(index)
    folder = table_path.parent if root is None else Path(root)
    table = pd.read_csv(table_path, dtype={"file": str, "path": str}, keep_default_na=False)
    file_column = "file" if "file" in table.columns else "path"
    missing = [column for column in ("input_id", file_column) if column not in table.columns]
    if missing:
        raise ValueError(f"{table_path}: missing column(s) {missing}; expected input_id,file")
    ids = _checked_ids(pd.to_numeric(table["input_id"], errors="coerce").to_numpy(), f"{table_path}, column input_id")
    files = [folder / name for name in table[file_column]]
    absent = [(line + 2, name) for line, (name, path) in enumerate(zip(table[file_column], files, strict=True))
              if not path.is_file()]
    if absent:
        raise ValueError(f"{table_path}, line {absent[0][0]}, column {file_column}: {absent[0][1]!r} is not a file in "
                         f"{folder} ({len(absent)} listed file(s) missing)")
    return InputMedia(str(table_path), "image", ids, lambda row: _load_image_file(files[row]))


def read_image_folder(directory: str | Path) -> InputMedia:
    """Images of a folder: listed in its ``inputs.csv`` (``input_id,file``, :func:`read_image_table`) or named by
    their id (``17.png``).

    Raises ``ValueError`` naming the folder, ``inputs.csv`` and its line for a missing column or file, or listing
    files whose names are not ids when there is no ``inputs.csv``.
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder of images")
    if (folder / FOLDER_INDEX).exists():
        return read_image_table(folder / FOLDER_INDEX)
    files = sorted(path for path in folder.iterdir() if path.suffix.lower() in IMAGE_SUFFIXES)
    unnamed = [path.name for path in files if not re.fullmatch(r"\d+", path.stem)]
    if unnamed or not files:
        raise ValueError(f"{folder}: without {FOLDER_INDEX} (input_id,file) the images must be named by their "
                         f"input id (e.g. 17.png); found {unnamed[:SHOWN_MISSING] or 'no image files'}")
    ids = _checked_ids(np.array([int(path.stem) for path in files], dtype=np.int64), str(folder))
    return InputMedia(str(folder), "image", ids, lambda row: _load_image_file(files[row]))


def read_text_table(path: str | Path) -> InputMedia:
    """Texts by input id: ``input_id,text``, or the token table ``input_id, …, token, context`` of an LM recording.

    A token table's inputs are :class:`TokenInContext` (shown as the highlighted token after its left context).
    """
    source = Path(path)
    frame = pd.read_parquet(source) if source.suffix == ".parquet" else pd.read_csv(
        source, dtype={"text": str, "token": str, "context": str}, keep_default_na=False)
    if "input_id" not in frame.columns:
        raise ValueError(f"{source}: a text table needs an input_id column, got columns {list(frame.columns)}")
    ids = _checked_ids(pd.to_numeric(frame["input_id"], errors="coerce").to_numpy(), f"{source}, column input_id")
    if {"token", "context"} <= set(frame.columns):
        tokens, contexts = frame["token"].astype(str).tolist(), frame["context"].astype(str).tolist()
        return InputMedia(str(source), "tokens", ids, lambda row: TokenInContext(contexts[row], tokens[row]))
    if "text" in frame.columns:
        texts = frame["text"].astype(str).tolist()
        return InputMedia(str(source), "text", ids, lambda row: texts[row])
    raise ValueError(f"{source}: expected columns input_id,text or a token table (input_id, …, token, context); got "
                     f"{list(frame.columns)}")


def read_vision_world_media(directory: str | Path) -> InputMedia:
    """The images of an embedded vision world: ``images.npy`` rows with the ids of ``labels.parquet``.

    Only those two files are read; their lengths must agree (error naming both).
    """
    from neuroneval.io import read_concept_table

    folder = Path(directory)
    for name in ("images.npy", "labels.parquet"):
        if not (folder / name).exists():
            raise ValueError(f"{folder}: vision world file {name} is missing")
    labels, _ = read_concept_table(folder / "labels.parquet")
    return read_image_array(folder / "images.npy", ids=labels["input_id"].to_numpy(dtype=np.int64))


def read_input_media(path: str | Path, *, ids: str | Path | None = None, row_is_id: bool = False) -> InputMedia:
    """The media at ``path``, by its form: a folder (image folder, or a vision world with ``images.npy`` and
    ``labels.parquet``), a ``.npy``/``.npz`` image array (with ``ids`` or ``row_is_id``), or a ``.csv``/``.parquet``
    text table."""
    source = Path(path)
    if not source.exists():
        raise ValueError(f"{source}: no such file or folder")
    if (ids is not None or row_is_id) and source.suffix not in (".npy", ".npz"):
        raise ValueError(f"{source}: input ids are given for image arrays (.npy/.npz) only")
    if source.is_dir():
        if (source / "images.npy").exists() and (source / "labels.parquet").exists():
            return read_vision_world_media(source)
        return read_image_folder(source)
    if source.suffix in (".npy", ".npz"):
        return read_image_array(source, ids=ids, row_is_id=row_is_id)
    if source.suffix in (".csv", ".parquet"):
        return read_text_table(source)
    raise ValueError(f"{source}: media must be an image folder, a .npy/.npz image array or a .csv/.parquet text table")

