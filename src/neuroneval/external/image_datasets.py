"""User-supplied image datasets → the input table and the label concept table (docs/design.md §2.1).

:func:`build_image_dataset` reads a dataset spec of the ``external.datasets`` params block (paths already
resolved, see :mod:`neuroneval.external.config`) and returns an :class:`ImageDataset`:

* ``inputs``: one row per image, ``input_id`` (int64, sorted), ``path`` (relative to the spec's ``root``) and
  ``label`` (0-based class index, the output index of a classifier trained on the dataset);
* ``concepts``: ``input_id`` then one float32 0/1 column per concept: ``class:<id>`` (one-hot of the label),
  ``parent:<superclass>`` (1 when the label is one of its children) and, for CUB, ``attr:<attribute>``;
* ``metadata``: the concept table's metadata: ``source`` (``labels``), ``dataset``, ``concepts``, ``classes``
  (class concepts in label order), ``hierarchy`` (``parent:…`` → its ``class:…`` children) and
  ``display_names`` (concept → readable text, used for pseudo-label prompts).

Kinds
-----
``image_folder``
    Listed by :func:`neuroneval.models.loaders_images.load_image_folder` (``root/<class>/<image>`` or a split
    file). Class ids are the first token of each line of ``class_names_file`` (else the sorted sub-folders);
    the rest of the line, up to its first comma, is the readable name (ImageNet's ``LOC_synset_mapping.txt``:
    ``n01440764 tench, Tinca tinca`` → "tench"), unless it is a bare integer (Places365's
    ``categories_places365.txt``: ``/a/airfield 0``), when the id itself is made readable ("airfield"). A
    Places-style id loses its ``/<letter>/`` prefix and keeps ``/`` as ``_`` in its concept name
    (``class:airfield``, ``class:bakery_shop``). input ids are positions in the sorted listing.
``cub``
    CUB-200-2011: ``images.txt``, ``image_class_labels.txt``, ``classes.txt``, ``train_test_split.txt`` and
    ``attributes/image_attribute_labels.txt`` under ``root``. input ids are CUB image ids; classes
    ``class:Black_footed_Albatross``; attributes ``attr:has_bill_shape::curved_(up_or_down)`` over the 112
    concept-bottleneck attributes (``attributes: cbm``) or all 312 (``all``). ``majority_vote: true`` gives
    every image its class's majority attributes on the *train* split (Koh et al. 2020's de-noising).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.io import ID_COLUMN

CLASS_PREFIX = "class:"
PARENT_PREFIX = "parent:"
ATTRIBUTE_PREFIX = "attr:"
CUB_SPLITS = ("train", "test", "all")


@dataclass(frozen=True)
class ImageDataset:
    """The input table (``input_id, path, label``), the label concept table and its metadata."""

    inputs: pd.DataFrame
    concepts: pd.DataFrame
    metadata: dict[str, Any]


def build_image_dataset(spec: Mapping[str, Any], *, name: str) -> ImageDataset:
    """Read the dataset ``spec`` (kind ``image_folder`` or ``cub``, paths resolved) named ``name``."""
    kind = spec.get("kind")
    if kind == "image_folder":
        return _image_folder(spec, name)
    if kind == "cub":
        return _cub(spec, name)
    raise ValueError(f"external.datasets.{name}.kind: {kind!r} is not an image dataset kind (image_folder | cub)")


def image_paths(inputs: pd.DataFrame, spec: Mapping[str, Any]) -> list[Path]:
    """Absolute image paths of an input table, in row order (``path`` is relative to the spec's ``root``)."""
    root = Path(spec["root"])
    return [root / relative for relative in inputs["path"]]


def class_concept_name(class_id: str) -> str:
    """``class:<id>`` with a Places-style ``/a/airfield`` id shortened to ``airfield`` (``/`` → ``_``)."""
    short = re.sub(r"^/[a-z]/", "", class_id).strip("/").replace("/", "_")
    return f"{CLASS_PREFIX}{short}"


def readable(text: str) -> str:
    """Underscores and slashes as spaces (``bakery/shop`` → "bakery shop")."""
    return re.sub(r"\s+", " ", text.replace("_", " ").replace("/", " ")).strip()


def _image_folder(spec: Mapping[str, Any], name: str) -> ImageDataset:
    from neuroneval.external.hierarchy import read_hierarchy
    from neuroneval.models.loaders_images import load_image_folder

    root = Path(spec["root"])
    paths, labels, class_ids = load_image_folder(root, split_file=spec.get("split_file"),
                                                 class_names_file=spec.get("class_names_file"),
                                                 limit=spec.get("limit"))
    readable_names = _readable_class_names(spec.get("class_names_file"), class_ids)
    class_concepts = [class_concept_name(class_id) for class_id in class_ids]
    if len(set(class_concepts)) != len(class_concepts):
        raise ValueError(f"external.datasets.{name}: class ids {class_ids[:5]}… give duplicate concept names")
    hierarchy: dict[str, list[str]] = {}
    if spec.get("hierarchy_file"):
        concept_of = dict(zip(class_ids, class_concepts, strict=True))
        hierarchy = {f"{PARENT_PREFIX}{parent}": [concept_of[child] for child in children]
                     for parent, children in read_hierarchy(spec["hierarchy_file"], class_ids).items()}
    input_ids = np.arange(len(paths), dtype=np.int64)
    inputs = pd.DataFrame({ID_COLUMN: input_ids, "path": [path.relative_to(root).as_posix() for path in paths],
                           "label": labels})
    display = dict(zip(class_concepts, readable_names, strict=True))
    display |= {parent: readable(parent.removeprefix(PARENT_PREFIX)) for parent in hierarchy}
    concepts = _label_frame(input_ids, labels, class_concepts, hierarchy)
    return ImageDataset(inputs, concepts, _metadata(name, concepts, class_concepts, hierarchy, display))


def _readable_class_names(class_names_file: str | None, class_ids: Sequence[str]) -> list[str]:
    described: dict[str, str] = {}
    if class_names_file:
        for line in Path(class_names_file).read_text().splitlines():
            fields = line.split(maxsplit=1)
            if len(fields) == 2 and not fields[1].strip().isdigit():
                described[fields[0]] = fields[1].split(",")[0].strip()
    return [described.get(class_id) or readable(re.sub(r"^/[a-z]/", "", class_id)) for class_id in class_ids]


def _cub(spec: Mapping[str, Any], name: str) -> ImageDataset:
    from neuroneval.models.loaders_images import CUB_CBM_ATTRIBUTE_IDS, load_cub_concepts

    root = Path(spec["root"])
    split = spec.get("split", "test")
    if split not in CUB_SPLITS:
        raise ValueError(f"external.datasets.{name}.split: expected one of {CUB_SPLITS}, got {split!r}")
    attribute_choice = spec.get("attributes", "cbm")
    if attribute_choice not in ("cbm", "all"):
        raise ValueError(f"external.datasets.{name}.attributes: expected 'cbm' or 'all', got {attribute_choice!r}")
    image_files = _id_table(root / "images.txt")
    image_labels = {image_id: int(value) - 1 for image_id, value in _id_table(root / "image_class_labels.txt").items()}
    class_names = _id_table(root / "classes.txt")
    is_train = {image_id: value == "1" for image_id, value in _id_table(root / "train_test_split.txt").items()}
    attribute_image_ids, attributes, attribute_names = load_cub_concepts(
        root, attribute_ids=CUB_CBM_ATTRIBUTE_IDS if attribute_choice == "cbm" else None)
    image_ids = np.array(sorted(image_files), dtype=np.int64)
    for table, source in ((image_labels, "image_class_labels.txt"), (is_train, "train_test_split.txt")):
        missing = [int(image_id) for image_id in image_ids if image_id not in table]
        if missing:
            raise ValueError(f"{root / source} has no line for image ids {missing[:5]}")
    if not np.array_equal(attribute_image_ids, image_ids):
        raise ValueError(f"{root / 'attributes/image_attribute_labels.txt'} covers other images than "
                         f"{root / 'images.txt'}")
    labels = np.array([image_labels[image_id] for image_id in image_ids], dtype=np.int64)
    train = np.array([is_train[image_id] for image_id in image_ids])
    if spec.get("majority_vote", False):
        attributes = _train_majority(attributes, labels, train, n_classes=len(class_names))
    keep = np.ones(image_ids.size, dtype=bool) if split == "all" else (train if split == "train" else ~train)
    rows = np.flatnonzero(keep)
    if spec.get("limit") is not None:
        count = min(int(spec["limit"]), rows.size)
        rows = rows[np.arange(count) * rows.size // count]
    if rows.size == 0:
        raise ValueError(f"external.datasets.{name}: the {split!r} split of {root} holds no images")
    class_ids = [class_names[key] for key in sorted(class_names, key=int)]
    class_concepts = [f"{CLASS_PREFIX}{re.sub(r'^[0-9]+[.]', '', class_id)}" for class_id in class_ids]
    attribute_concepts = [f"{ATTRIBUTE_PREFIX}{attribute}" for attribute in attribute_names]
    if labels.max() >= len(class_concepts) or labels.min() < 0:
        raise ValueError(f"{root / 'image_class_labels.txt'} has class ids outside 1..{len(class_concepts)}")
    inputs = pd.DataFrame({ID_COLUMN: image_ids[rows], "path": [f"images/{image_files[i]}" for i in image_ids[rows]],
                           "label": labels[rows]})
    concepts = _label_frame(image_ids[rows], labels[rows], class_concepts, {})
    attribute_frame = pd.DataFrame(attributes[rows].astype(np.float32), columns=attribute_concepts)
    concepts = pd.concat([concepts, attribute_frame], axis=1)
    display = {concept: readable(concept.removeprefix(CLASS_PREFIX)) for concept in class_concepts}
    display |= {concept: _attribute_text(concept.removeprefix(ATTRIBUTE_PREFIX)) for concept in attribute_concepts}
    metadata = _metadata(name, concepts, class_concepts, {}, display)
    metadata["split"] = split
    return ImageDataset(inputs, concepts, metadata)


def _attribute_text(attribute: str) -> str:
    """``has_bill_shape::curved_(up_or_down)`` → "bill shape: curved (up or down)"."""
    part, _, value = attribute.partition("::")
    return f"{readable(part.removeprefix('has_'))}: {readable(value)}" if value else readable(attribute)


def _train_majority(attributes: np.ndarray, labels: np.ndarray, train: np.ndarray, *, n_classes: int) -> np.ndarray:
    """Each image's attributes replaced by its class's majority (≥ 50 %) over the class's train images."""
    sums = np.zeros((n_classes, attributes.shape[1]))
    np.add.at(sums, labels[train], attributes[train])
    counts = np.bincount(labels[train], minlength=n_classes)
    if np.any(counts == 0):
        raise ValueError(f"majority_vote needs train images of every class; classes {np.flatnonzero(counts == 0)[:5]} "
                         "have none")
    return (sums / counts[:, None] >= 0.5).astype(np.float32)[labels]


def _id_table(path: Path) -> dict[int, str]:
    """``<integer id> <value>`` lines of a CUB index file as ``{id: value}``."""
    if not path.is_file():
        raise FileNotFoundError(f"CUB file {path} does not exist")
    table = {}
    for line_number, line in enumerate(path.read_text().splitlines(), start=1):
        fields = line.split(maxsplit=1)
        if not fields:
            continue
        if len(fields) != 2 or not fields[0].isdigit():
            raise ValueError(f"{path} line {line_number}: expected '<id> <value>', got {line.strip()!r}")
        table[int(fields[0])] = fields[1].strip()
    if not table:
        raise ValueError(f"{path} is empty")
    return table


def _label_frame(input_ids: np.ndarray, labels: np.ndarray, class_concepts: Sequence[str],
                 hierarchy: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    one_hot = np.zeros((len(input_ids), len(class_concepts)), dtype=np.float32)
    one_hot[np.arange(len(input_ids)), labels] = 1.0
    columns = {concept: one_hot[:, column] for column, concept in enumerate(class_concepts)}
    position = {concept: column for column, concept in enumerate(class_concepts)}
    for parent, children in hierarchy.items():
        columns[parent] = one_hot[:, [position[child] for child in children]].max(axis=1)
    return pd.DataFrame({ID_COLUMN: np.asarray(input_ids, dtype=np.int64), **columns})


def _metadata(name: str, concepts: pd.DataFrame, class_concepts: Sequence[str],
              hierarchy: Mapping[str, Sequence[str]], display: Mapping[str, str]) -> dict[str, Any]:
    return {"source": "labels", "dataset": name, "concepts": [c for c in concepts.columns if c != ID_COLUMN],
            "classes": list(class_concepts), "hierarchy": {k: list(v) for k, v in hierarchy.items()},
            "display_names": dict(display)}
