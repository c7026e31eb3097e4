"""A real-data world: scikit-learn's bundled handwritten digits, split and labelled like a vision world split.

:func:`sklearn.datasets.load_digits` ships 1,797 8×8 greyscale images of the digits 0–9 (the UCI "Optical
Recognition of Handwritten Digits" test set, 16 grey levels), so nothing is downloaded and nobody here drew
them. :func:`build_digits_world` turns one split of it into a :class:`~neuroneval.worlds.vision.VisionWorld`,
which :func:`~neuroneval.worlds.vision.save_vision_world` writes in the vision world's on-disk format — the
classifier training, activation recording and label-concept steps of the vision world then run on it unchanged.

- Split: stratified by digit. The images of digit ``d`` are permuted by ``np.random.default_rng([seed, 1, d])``
  and the first ``round(probe_fraction · n_d)`` go to ``probe``, the rest to ``train``; each split is then
  stored in the order of ``np.random.default_rng([seed, 2, crc32(split)])`` (shuffled, so the classifier's
  held-out tail of the train split is an i.i.d. sample). Splits are disjoint, cover the dataset, and depend on
  ``seed`` and ``probe_fraction`` only.
- Images: 8×8, kept at their native size (the tiny CNN is fully convolutional with global average pooling, so it
  takes 8×8 inputs as they are; upscaling would only invent pixels and cost 16× the compute). Grey levels 0–16
  become ``round(v · 255 / 16)`` and the grey image is repeated in the three RGB channels (the vision world's
  format; the models' first convolution sees three equal channels).
- Masks: 1 on stroke pixels (grey level > 0), 0 on the background — the digit is the "main object".
- Concepts: ``class:<d>`` (one-hot digit, class index = the digit) and ``parent:<group>`` for the groups of
  ``hierarchy`` (group → digits, every digit in exactly one group); a parent's label is the OR of its children's;
  then the attribute concepts of how the digit is drawn (``ink:heavy``, ``symmetry:*``, ``mass:*``, ``centre:ink``,
  ``extent:wide``, ``loop:closed``), computed from the grey levels with thresholds from all bundled images
  (:mod:`neuroneval.worlds.digit_attributes`).
- Attributes: ``input_id``, ``class_index``, ``class``, ``digit``, ``group`` and ``source_index`` (the row of
  ``load_digits``), so any image can be traced back to the bundled data.

``input_id`` runs ``0 .. n − 1`` within each split, like the vision world's.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.worlds.vision import VisionWorld

SPLITS = ("train", "probe")
N_DIGITS = 10
IMAGE_SIZE = 8
MAX_GREY = 16
SOURCE = "sklearn.datasets.load_digits"
#: The default digit → shape-group hierarchy (params.yaml ``digits.hierarchy``): closed loops, straight strokes,
#: open curves. Each digit is in exactly one group.
DEFAULT_HIERARCHY = {"round": [0, 6, 8, 9], "straight": [1, 4, 7], "curvy": [2, 3, 5]}
GROUP_PATTERN = re.compile(r"[a-z][a-z0-9_]*")
_PERMUTE_STREAM = 1
_ORDER_STREAM = 2


def load_digits_data() -> tuple[np.ndarray, np.ndarray]:
    """The bundled dataset: (1797, 8, 8) float grey levels 0–16 and (1797,) int64 digits, in sklearn's order."""
    from sklearn.datasets import load_digits

    bunch = load_digits()
    return np.asarray(bunch.images, dtype=np.float64), np.asarray(bunch.target, dtype=np.int64)


def data_checksum(images: np.ndarray, targets: np.ndarray) -> str:
    """SHA-256 of the grey levels (as uint8) and targets (as int64): changes if the bundled data ever does."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(images, dtype=np.uint8).tobytes())
    digest.update(np.ascontiguousarray(targets, dtype=np.int64).tobytes())
    return digest.hexdigest()


def check_hierarchy(hierarchy: Mapping[str, Sequence[int]]) -> dict[str, list[int]]:
    """``hierarchy`` as ``{group: sorted digits}``, checked: names ``[a-z][a-z0-9_]*``, every digit 0–9 in one group.

    Raises ``ValueError`` naming the offending group or digits.
    """
    if not isinstance(hierarchy, Mapping) or not hierarchy:
        raise ValueError(f"hierarchy must map group names to lists of digits, got {hierarchy!r}")
    checked: dict[str, list[int]] = {}
    seen: dict[int, str] = {}
    for group, digits in hierarchy.items():
        if not isinstance(group, str) or not GROUP_PATTERN.fullmatch(group):
            raise ValueError(f"hierarchy: group name {group!r} must match [a-z][a-z0-9_]*")
        if isinstance(digits, str | bytes) or not isinstance(digits, Sequence) or not digits:
            raise ValueError(f"hierarchy.{group}: must be a non-empty list of digits, got {digits!r}")
        for digit in digits:
            if isinstance(digit, bool) or not isinstance(digit, int | np.integer) or not 0 <= digit < N_DIGITS:
                raise ValueError(f"hierarchy.{group}: {digit!r} is not a digit 0-9")
            if int(digit) in seen:
                raise ValueError(f"hierarchy: digit {digit} is in both {seen[int(digit)]!r} and {group!r}")
            seen[int(digit)] = group
        checked[group] = sorted(int(digit) for digit in digits)
    missing = sorted(set(range(N_DIGITS)) - set(seen))
    if missing:
        raise ValueError(f"hierarchy: digits {missing} are in no group (each digit must be in exactly one)")
    return checked


def _check_fraction(probe_fraction: Any) -> float:
    if (isinstance(probe_fraction, bool) or not isinstance(probe_fraction, int | float | np.floating)
            or not 0 < probe_fraction < 1):
        raise ValueError(f"probe_fraction must be a number in (0, 1), got {probe_fraction!r}")
    return float(probe_fraction)


def split_indices(targets: np.ndarray, *, seed: int, probe_fraction: float) -> dict[str, np.ndarray]:
    """Rows of the dataset in each split, in stored order: ``{"train": rows, "probe": rows}`` (see module doc)."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    probe_fraction = _check_fraction(probe_fraction)
    targets = np.asarray(targets)
    members: dict[str, list[np.ndarray]] = {split: [] for split in SPLITS}
    for digit in range(N_DIGITS):
        rows = np.flatnonzero(targets == digit)
        permuted = np.random.default_rng([seed, _PERMUTE_STREAM, digit]).permutation(rows)
        n_probe = round(probe_fraction * len(rows))
        if len(rows) and not 0 < n_probe < len(rows):
            raise ValueError(f"probe_fraction {probe_fraction} leaves digit {digit} ({len(rows)} images) "
                             f"with an empty split")
        members["probe"].append(permuted[:n_probe])
        members["train"].append(permuted[n_probe:])
    splits = {}
    for split in SPLITS:
        rows = np.sort(np.concatenate(members[split]))
        order = np.random.default_rng([seed, _ORDER_STREAM, zlib.crc32(split.encode())]).permutation(len(rows))
        splits[split] = rows[order].astype(np.int64)
    return splits


def build_digits_world(split: str, *, seed: int, probe_fraction: float,
                       hierarchy: Mapping[str, Sequence[int]] | None = None,
                       data: tuple[np.ndarray, np.ndarray] | None = None) -> VisionWorld:
    """One split (``train`` or ``probe``) of the digits world as a :class:`VisionWorld` (see the module doc).

    ``data`` replaces the bundled ``(images, targets)`` (tests); ``hierarchy`` defaults to
    :data:`DEFAULT_HIERARCHY`. ``params["dataset"]`` is ``digits_<split>``, the dataset name of the tables.
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    groups = check_hierarchy(DEFAULT_HIERARCHY if hierarchy is None else hierarchy)
    grey, targets = load_digits_data() if data is None else (np.asarray(data[0]), np.asarray(data[1], np.int64))
    if grey.shape[1:] != (IMAGE_SIZE, IMAGE_SIZE) or len(grey) != len(targets):
        raise ValueError(f"digits data must be (N, 8, 8) images with N targets, got {grey.shape} and {targets.shape}")
    rows = split_indices(targets, seed=seed, probe_fraction=probe_fraction)[split]
    digits = targets[rows]
    levels = grey[rows]
    pixels = np.round(levels * (255.0 / MAX_GREY)).clip(0, 255).astype(np.uint8)
    images = np.repeat(pixels[..., None], 3, axis=-1)
    masks = (levels > 0).astype(np.uint8)
    class_names = [f"class:{digit}" for digit in range(N_DIGITS)]
    hierarchy_columns = {f"parent:{group}": [f"class:{digit}" for digit in members]
                         for group, members in groups.items()}
    group_of = {digit: group for group, members in groups.items() for digit in members}
    input_ids = np.arange(len(rows), dtype=np.int64)
    labels = {io.ID_COLUMN: input_ids}
    for digit in range(N_DIGITS):
        labels[f"class:{digit}"] = (digits == digit).astype(np.float32)
    for group, members in groups.items():
        labels[f"parent:{group}"] = np.isin(digits, members).astype(np.float32)
    from neuroneval.worlds.digit_attributes import attribute_concepts

    for name, values in attribute_concepts(levels, grey).items():
        labels[name] = values.to_numpy()
    attributes = pd.DataFrame({
        io.ID_COLUMN: input_ids,
        "class_index": digits,
        "class": [f"class:{digit}" for digit in digits],
        "digit": digits,
        "group": [group_of[int(digit)] for digit in digits],
        "source_index": rows,
    })
    params = {"source": SOURCE, "source_sha256": data_checksum(grey, targets), "dataset": f"digits_{split}",
              "split": split, "seed": int(seed), "probe_fraction": float(probe_fraction), "hierarchy": groups,
              "n_images": len(rows), "image_size": IMAGE_SIZE, "start_index": 0}
    return VisionWorld(
        images=images,
        masks=masks,
        labels=pd.DataFrame(labels),
        class_index=digits.astype(np.int64),
        class_names=class_names,
        hierarchy=hierarchy_columns,
        captions=[f"a handwritten digit {digit}" for digit in digits],
        attributes=attributes,
        params=params,
    )
