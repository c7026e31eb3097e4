"""A folder of your own images as a dataset that a ``family: custom`` model is recorded on (``kind: images``).

``external.datasets.<name>: {kind: images, folder: dir, labels: labels.csv, preprocess: {…}}`` (docs/your_model.md):

- the inputs (:func:`image_listing`): with ``labels``, the rows of a CSV ``file,label`` (``file`` relative to
  ``folder``), in the file's order; without it, the class subfolders of ``folder`` (the subfolder's name is the
  class), in sorted order of class, then of file name. Input *i* is the *i*-th listed file;
- the classes: the distinct labels, sorted (by value when every label is an integer, else as text); the concept
  table ``labels`` has one column ``class:<name>`` each (:func:`neuroneval.external.own.class_concept_frame`);
- what the model reads (:class:`ImagePreprocessing`, :func:`preprocess_image`): each image resized to ``size``,
  made grey (``grayscale``) or RGB, scaled to [0, 1] and standardised per channel, ``x = (p / 255 − mean_c) /
  std_c``, as a channel-first array ``(C, H, W)`` or, with ``flatten``, a row of ``C·H·W`` values (an MLP's input).

:func:`build_images_dataset` writes the array the model reads (``data/external/<name>/images.npy``) and the table
``input_id,file`` that the viewer and the crowd task pages show the images from
(``data/external/<name>/inputs.csv``, :mod:`neuroneval.external.own_media`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.options import Options, OptionsError

#: The columns of a ``labels`` CSV of an images dataset.
LABEL_COLUMNS = ("file", "label")


@dataclass(frozen=True)
class ImagePreprocessing(Options):
    """How a ``kind: images`` dataset's images become the model's input (params ``preprocess``).

    Parameters
    ----------
    size
        ``(H, W)`` to resize every image to (bilinear); None keeps each image's size (they must then agree).
    grayscale
        One grey channel (PIL's ``L``: ``0.299 R + 0.587 G + 0.114 B``) instead of three RGB channels.
    mean, std
        Per-channel standardisation of ``p / 255``: one value for every channel, or one per channel.
    flatten
        A row of ``C·H·W`` values (channel, then row, then column) instead of ``(C, H, W)``.
    """

    size: tuple[int, int] | None = None
    grayscale: bool = False
    mean: tuple[float, ...] = (0.0,)
    std: tuple[float, ...] = (1.0,)
    flatten: bool = False

    def validate(self) -> None:
        if self.size is not None and (len(self.size) != 2 or any(not isinstance(side, int) or isinstance(side, bool)
                                                                 or side < 1 for side in self.size)):
            raise OptionsError(f"ImagePreprocessing.size must be two positive integers [H, W], got {self.size!r}")
        channels = 1 if self.grayscale else 3
        for name in ("mean", "std"):
            values = getattr(self, name)
            if len(values) not in (1, channels) or not all(np.isfinite(float(value)) for value in values):
                raise OptionsError(f"ImagePreprocessing.{name} must be 1 or {channels} finite numbers "
                                   f"(grayscale={self.grayscale}), got {values!r}")
        if any(float(value) <= 0 for value in self.std):
            raise OptionsError(f"ImagePreprocessing.std must be positive, got {self.std!r}")

    @property
    def channels(self) -> int:
        """1 (grey) or 3 (RGB)."""
        return 1 if self.grayscale else 3


def preprocess_image(path: str | Path, options: ImagePreprocessing) -> np.ndarray:
    """One image file as the model reads it: ``(C, H, W)`` float32, or ``(C·H·W,)`` with ``flatten``.

    >>> from PIL import Image; import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "a.png"; Image.fromarray(np.full((2, 2), 255, np.uint8)).save(file)
    >>> preprocess_image(file, ImagePreprocessing(grayscale=True, mean=(0.5,), std=(0.5,), flatten=True)).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    from PIL import Image

    with Image.open(path) as image:
        converted = image.convert("L" if options.grayscale else "RGB")
        if options.size is not None:
            height, width = options.size
            converted = converted.resize((width, height), Image.Resampling.BILINEAR)
        pixels = np.asarray(converted, dtype=np.float32) / np.float32(255.0)
    pixels = pixels[None] if pixels.ndim == 2 else np.moveaxis(pixels, -1, 0)
    mean = np.asarray(options.mean, dtype=np.float32).reshape(-1, 1, 1)
    std = np.asarray(options.std, dtype=np.float32).reshape(-1, 1, 1)
    standardised = ((pixels - mean) / std).astype(np.float32)
    return standardised.reshape(-1) if options.flatten else standardised


def _class_order(labels: list[str]) -> list[str]:
    distinct = sorted(set(labels))
    if all(label.lstrip("-").isdigit() for label in distinct):
        return sorted(distinct, key=int)
    return distinct


def image_listing(folder: str | Path, labels_file: str | Path | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The inputs of an images dataset, ``input_id, file, label`` (``label``: the class index), and the class names.

    Raises ``ValueError`` naming the labels CSV and its line for a missing column, an empty cell, a file listed
    twice or one that is not in ``folder``; or naming ``folder`` when it has no class subfolder with images.
    """
    from neuroneval.input_media import IMAGE_SUFFIXES

    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"{root}: not a folder of images")
    if labels_file is not None:
        table = pd.read_csv(labels_file, dtype=str, keep_default_na=False)
        missing = [column for column in LABEL_COLUMNS if column not in table.columns]
        if missing:
            raise ValueError(f"{labels_file}, line 1: missing column(s) {missing}; expected header file,label")
        seen: set[str] = set()
        for line, (name, label) in enumerate(zip(table["file"], table["label"], strict=True), start=2):
            for column, value in (("file", name), ("label", label)):
                if not value.strip():
                    raise ValueError(f"{labels_file}, line {line}, column {column}: empty value")
            if name in seen:
                raise ValueError(f"{labels_file}, line {line}, column file: {name!r} is listed twice")
            if not (root / name).is_file():
                raise ValueError(f"{labels_file}, line {line}, column file: {name!r} is not a file in {root}")
            seen.add(name)
        files, labels = table["file"].tolist(), [label.strip() for label in table["label"]]
    else:
        files, labels = [], []
        for subfolder in sorted(path for path in root.iterdir() if path.is_dir()):
            for path in sorted(subfolder.iterdir()):
                if path.suffix.lower() in IMAGE_SUFFIXES:
                    files.append(f"{subfolder.name}/{path.name}")
                    labels.append(subfolder.name)
        if not files:
            raise ValueError(f"{root}: no class subfolders with images ({', '.join(IMAGE_SUFFIXES)}); give "
                             "labels: a CSV file,label instead")
    classes = _class_order(labels)
    index = {name: position for position, name in enumerate(classes)}
    listing = pd.DataFrame({"input_id": np.arange(len(files), dtype=np.int64), "file": files,
                            "label": np.array([index[label] for label in labels], dtype=np.int64)})
    return listing, classes


def build_images_dataset(folder: str | Path, labels_file: str | Path | None, preprocess: dict[str, Any] | None,
                         ) -> tuple[np.ndarray, pd.DataFrame, list[str]]:
    """The preprocessed inputs (n, C, H, W) or (n, C·H·W), the listing (:func:`image_listing`) and class names.

    Raises ``ValueError`` naming the first file whose preprocessed shape differs from the first one's (images of
    different sizes without ``size``).
    """
    options = ImagePreprocessing.from_params(preprocess)
    listing, classes = image_listing(folder, labels_file)
    rows = []
    for name in listing["file"]:
        row = preprocess_image(Path(folder) / name, options)
        if rows and row.shape != rows[0].shape:
            raise ValueError(f"{Path(folder) / name}: preprocessed to shape {list(row.shape)}, but the first image "
                             f"to {list(rows[0].shape)}; give preprocess.size [H, W] to resize them alike")
        rows.append(row)
    return np.stack(rows).astype(np.float32), listing, classes


def resolved_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """An images dataset's spec with ``folder`` and ``labels`` resolved (from ``external.data_root``)."""
    from neuroneval.external.config import resolve_path

    spec = dict(external["datasets"][dataset])
    for key in ("folder", "labels"):
        if spec.get(key):
            spec[key] = str(resolve_path(external, spec[key]))
    return spec


def dataset_files(external: Mapping[str, Any], dataset: str) -> list[str]:
    """The files an images dataset reads (Snakemake inputs): its labels CSV and every listed image."""
    spec = resolved_spec(external, dataset)
    listing, _ = image_listing(spec["folder"], spec.get("labels"))
    return [*([spec["labels"]] if spec.get("labels") else []),
            *(str(Path(spec["folder"]) / name) for name in listing["file"])]
