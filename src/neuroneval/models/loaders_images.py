"""Image datasets of the paper profile read from local folders: ImageNet/Places365 trees and CUB-200 attributes.

* :func:`load_image_folder` lists ``root/<class>/<image>`` trees (ImageNet ``train``/``val`` after the usual
  re-foldering, Places365 ``train_256``…) or a split file of relative paths with optional integer labels
  (Places365's ``places365_val.txt``), the way ``torchvision.datasets.ImageFolder`` does: classes are the sorted
  folder names unless a class-names file gives them.
* :func:`load_cub_concepts` reads CUB-200-2011's ``attributes/image_attribute_labels.txt`` into an (images ×
  attributes) 0/1 matrix, by default over the 112 attributes of the concept bottleneck models (Koh et al. 2020),
  which paper 000 uses for its CUB settings (App. F, settings 5–6).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".gif", ".tif", ".tiff")

# CUB attribute ids (1-based, as in attributes.txt) of the 112 concepts kept by Koh et al. (2020): the mask in
# their CUB/generate_new_data.py lists 0-based indices 1, 4, 6, …, 311, i.e. ids 2, 5, 7, …, 312.
CUB_CBM_ATTRIBUTE_IDS: tuple[int, ...] = tuple(index + 1 for index in (
    1, 4, 6, 7, 10, 14, 15, 20, 21, 23, 25, 29, 30, 35, 36, 38, 40, 44, 45, 50, 51, 53, 54, 56, 57, 59, 63, 64, 69,
    70, 72, 75, 80, 84, 90, 91, 93, 99, 101, 106, 110, 111, 116, 117, 119, 125, 126, 131, 132, 134, 145, 149, 151,
    152, 153, 157, 158, 163, 164, 168, 172, 178, 179, 181, 183, 187, 188, 193, 194, 196, 198, 202, 203, 208, 209,
    211, 212, 213, 218, 220, 221, 225, 235, 236, 238, 239, 240, 242, 243, 244, 249, 253, 254, 259, 260, 262, 268,
    274, 277, 283, 289, 292, 293, 294, 298, 299, 304, 305, 308, 309, 310, 311))


def load_image_folder(root: str | Path, *, split_file: str | Path | None = None,
                      class_names_file: str | Path | None = None,
                      limit: int | None = None) -> tuple[list[Path], np.ndarray, list[str]]:
    """Image paths, integer labels and class names of an image folder dataset.

    Parameters
    ----------
    root : path
        Dataset folder. Without ``split_file``, every image in ``root/<class>/`` (recursively) is listed and the
        class is the sorted index of its folder.
    split_file : path, optional
        Text file with one image per line: ``<path relative to root> [<label>]``. Lines with a label use it
        (0-based); the others take the class of their first folder. Empty lines and ``#`` comments are skipped.
    class_names_file : path, optional
        One class per line in label order; the first token of each line is the name (Places365's
        ``categories_places365.txt`` ``/a/airfield 0``, ImageNet's ``LOC_synset_mapping.txt`` ``n01440764
        tench…``). Without it, classes are the sorted sub-folders of ``root``.
    limit : int, optional
        Keep ``limit`` images spread evenly over the sorted list (every class in proportion), for quick runs.

    Returns
    -------
    paths : list of Path
        Sorted by relative path (split-file order with a split file).
    labels : (N,) int64 array
    class_names : list of str
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist")
    class_names = _class_names(root, class_names_file)
    index = {name: position for position, name in enumerate(class_names)}
    if split_file is None:
        paths = sorted((path for path in root.rglob("*") if path.suffix.lower() in IMAGE_SUFFIXES and path.is_file()
                        and len(path.relative_to(root).parts) > 1), key=lambda path: path.relative_to(root).as_posix())
        if not paths:
            raise FileNotFoundError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in class folders under {root}")
        labels = [_folder_label(path.relative_to(root), index, root) for path in paths]
    else:
        paths, labels = _read_split(root, Path(split_file).expanduser(), index)
    label_array = np.asarray(labels, dtype=np.int64)
    if np.any((label_array < 0) | (label_array >= len(class_names))):
        raise ValueError(f"labels of {split_file or root} fall outside the {len(class_names)} classes")
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be positive, got {limit}")
        count = min(limit, len(paths))
        keep = np.arange(count) * len(paths) // count
        paths, label_array = [paths[position] for position in keep], label_array[keep]
    return paths, label_array, class_names


def load_cub_concepts(root: str | Path, *, attribute_ids: Sequence[int] | None = CUB_CBM_ATTRIBUTE_IDS,
                      ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """CUB-200-2011 per-image attribute labels as an (images × attributes) 0/1 matrix.

    Reads ``root/attributes/image_attribute_labels.txt`` (lines ``image_id attribute_id is_present certainty_id
    time``; a few lines of the released file carry an extra field, which is ignored) and, when present,
    ``attributes.txt`` for the names (in ``root``, ``root/attributes`` or the folder above ``root``, where the
    release puts it).

    Parameters
    ----------
    root : path
        The ``CUB_200_2011`` folder.
    attribute_ids : sequence of int or None
        1-based attribute ids to keep, in this order; default the 112 concept-bottleneck concepts
        (:data:`CUB_CBM_ATTRIBUTE_IDS`); ``None`` keeps every attribute in the file.

    Returns
    -------
    image_ids : (N,) int64 array
        Sorted CUB image ids (as in ``images.txt``).
    concepts : (N, len(attribute_ids)) float32 array of 0/1
    concept_names : list of str
        From ``attributes.txt`` (``has_bill_shape::curved_(up_or_down)``), else ``attribute_<id>``.
    """
    root = Path(root).expanduser()
    labels_path = root / "attributes" / "image_attribute_labels.txt"
    if not labels_path.is_file():
        raise FileNotFoundError(f"CUB attribute labels {labels_path} do not exist")
    rows = []
    with labels_path.open() as lines:
        for line_number, line in enumerate(lines, start=1):
            fields = line.split()
            if not fields:
                continue
            try:
                image_id, attribute_id, is_present = (int(field) for field in fields[:3])
            except ValueError as error:
                raise ValueError(f"{labels_path} line {line_number}: expected 'image_id attribute_id is_present "
                                 f"…', got {line.strip()!r}") from error
            if is_present not in (0, 1):
                raise ValueError(f"{labels_path} line {line_number}: is_present must be 0 or 1, got {is_present}")
            rows.append((image_id, attribute_id, is_present))
    if not rows:
        raise ValueError(f"{labels_path} holds no attribute labels")
    table = np.array(rows, dtype=np.int64)
    image_ids = np.unique(table[:, 0])
    present_ids = np.unique(table[:, 1])
    kept_ids = present_ids if attribute_ids is None else np.asarray(attribute_ids, dtype=np.int64)
    unknown = np.setdiff1d(kept_ids, present_ids)
    if unknown.size:
        raise ValueError(f"attribute ids {unknown[:10].tolist()} do not occur in {labels_path}")
    column = np.full(int(present_ids.max()) + 1, -1)
    column[kept_ids] = np.arange(kept_ids.size)
    rows_kept = table[column[table[:, 1]] >= 0]
    concepts = np.zeros((image_ids.size, kept_ids.size), dtype=np.float32)
    concepts[np.searchsorted(image_ids, rows_kept[:, 0]), column[rows_kept[:, 1]]] = rows_kept[:, 2]
    names = _cub_attribute_names(root)
    return image_ids, concepts, [names.get(int(attribute_id), f"attribute_{attribute_id}") for attribute_id in kept_ids]


def class_majority_vote(concepts: np.ndarray, class_labels: np.ndarray) -> np.ndarray:
    """Replace each image's concepts by its class's majority (present in ≥ 50 % of the class's images).

    Koh et al. (2020) de-noise CUB's crowd-sourced attributes this way before training concept bottlenecks.
    """
    concept_values = np.asarray(concepts, dtype=np.float64)
    labels = np.asarray(class_labels)
    if concept_values.ndim != 2 or labels.shape != (concept_values.shape[0],):
        raise ValueError(f"concepts {concept_values.shape} need one class label per row, got {labels.shape}")
    classes, inverse = np.unique(labels, return_inverse=True)
    sums = np.zeros((classes.size, concept_values.shape[1]))
    np.add.at(sums, inverse, concept_values)
    counts = np.bincount(inverse, minlength=classes.size)[:, None]
    return (sums / counts >= 0.5).astype(np.float32)[inverse]


def _class_names(root: Path, class_names_file: str | Path | None) -> list[str]:
    if class_names_file is None:
        names = sorted(child.name for child in root.iterdir() if child.is_dir() and not child.name.startswith("."))
        source = f"sub-folders of {root}"
    else:
        path = Path(class_names_file).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"class names file {path} does not exist")
        names = [line.split()[0] for line in path.read_text().splitlines() if line.strip()]
        source = str(path)
    if not names:
        raise ValueError(f"no classes found in {source}")
    if len(set(names)) != len(names):
        raise ValueError(f"class names in {source} are not unique")
    return names


def _folder_label(relative: Path, index: dict[str, int], source: Path) -> int:
    folder = relative.parts[0] if len(relative.parts) > 1 else None
    if folder is None or folder not in index:
        raise ValueError(f"{relative} (in {source}) is not inside a class folder; known classes start "
                         f"{list(index)[:5]}")
    return index[folder]


def _read_split(root: Path, split_file: Path, index: dict[str, int]) -> tuple[list[Path], list[int]]:
    if not split_file.is_file():
        raise FileNotFoundError(f"split file {split_file} does not exist")
    paths, labels = [], []
    for line_number, line in enumerate(split_file.read_text().splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        relative = Path(fields[0].lstrip("/"))
        path = root / relative
        if not path.is_file():
            raise FileNotFoundError(f"{split_file} line {line_number}: image {path} does not exist")
        if len(fields) > 1:
            try:
                labels.append(int(fields[1]))
            except ValueError as error:
                raise ValueError(f"{split_file} line {line_number}: label {fields[1]!r} is not an integer") from error
        else:
            labels.append(_folder_label(relative, index, split_file))
        paths.append(path)
    if not paths:
        raise ValueError(f"split file {split_file} lists no images")
    return paths, labels


def _cub_attribute_names(root: Path) -> dict[int, str]:
    for candidate in (root / "attributes.txt", root / "attributes" / "attributes.txt", root.parent / "attributes.txt"):
        if candidate.is_file():
            pairs = (line.split(maxsplit=1) for line in candidate.read_text().splitlines() if line.strip())
            return {int(number): name.strip() for number, name in pairs}
    return {}
