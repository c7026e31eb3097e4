"""A folder of your own images as a dataset that a ``family: custom`` model is recorded on (``kind: images``).

``external.datasets.<name>: {kind: images, folder: dir, labels: labels.csv, preprocess: {…}}`` (docs/your_model.md):

- the inputs (:func:`image_listing`): with ``labels``, the rows of a CSV ``file,label`` (``file`` relative to
  ``folder``), in the file's order; without it, the class subfolders of ``folder`` (the subfolder's name is the
  class), in sorted order of class, then of file name. Input *i* is the *i*-th listed file;
- the classes: the distinct labels, sorted (by value when every label is an integer, else as text); the concept
  table ``labels`` has one column ``class:<name>`` each (:func:`neuroneval.external.own.class_concept_frame`);
- what the model reads (:meth:`neuroneval.external.preprocess.ImagePreprocessing.of_dataset`, the one
  preprocessing of your images and models): each image resized to ``size``, made grey (``grayscale``) or RGB,
  scaled to [0, 1] and standardised per channel, ``x = (p / 255 − mean_c) / std_c``, as a channel-first array
  ``(C, H, W)`` or, with ``flatten``, a row of ``C·H·W`` values (an MLP's input).

:func:`build_images_dataset` writes the array the model reads (``data/external/<name>/images.npy``) and the table
``input_id,file`` that the viewer and the crowd task pages show the images from
(``data/external/<name>/inputs.csv``, :mod:`neuroneval.external.own_media`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The columns of a ``labels`` CSV of an images dataset.
LABEL_COLUMNS = ("file", "label")


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
    from neuroneval.external.preprocess import ImagePreprocessing, preprocess_file

    options = ImagePreprocessing.of_dataset(preprocess)
    listing, classes = image_listing(folder, labels_file)
    rows = []
    for name in listing["file"]:
        row = preprocess_file(Path(folder) / name, options)
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
