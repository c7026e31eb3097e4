"""Attribute concepts of handwritten digits, computed from the 8×8 grey images themselves (the digits world's labels).

The digit and its shape group are one concept per image; hidden units of a digit classifier also respond to how a
digit is drawn. Each attribute is a measure of the grey levels ``g`` (0–16) of one image, made binary at a fixed
threshold, so the concepts are facts of the bundled data that anyone can recompute:

- ``ink:heavy``: total ink :math:`\\sum g` above the median over the reference images;
- ``symmetry:left_right`` / ``symmetry:top_bottom``: mirror symmetry
  :math:`1 - \\sum |g - \\mathrm{flip}(g)| / (2 \\sum g)` (1 for a symmetric image) above its reference median;
- ``mass:top`` / ``mass:left``: more than half of the ink in the top (left) four rows (columns);
- ``centre:ink``: share of the ink in the central 4×4 pixels above its reference median;
- ``extent:wide``: width of the bounding box of the stroke pixels (:math:`g \\ge 8`) above its reference median;
- ``loop:closed``: some background pixel (:math:`g < 8`) is enclosed by stroke, i.e. not 4-connected to the
  image border (a closed loop, as in most 0, 6, 8 and 9).

Median thresholds come from ``reference`` images (the digits world passes all 1,797 bundled images, so both splits
share them and neither split's statistics leak into the other's labels).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Grey level at and above which a pixel counts as stroke (half of the 0–16 range).
STROKE_LEVEL = 8
#: Attribute concepts in column order; those thresholded at a reference median are :data:`MEDIAN_ATTRIBUTES`.
ATTRIBUTE_CONCEPTS = ("ink:heavy", "symmetry:left_right", "symmetry:top_bottom", "mass:top", "mass:left",
                      "centre:ink", "extent:wide", "loop:closed")
MEDIAN_ATTRIBUTES = ("ink:heavy", "symmetry:left_right", "symmetry:top_bottom", "centre:ink", "extent:wide")


def _symmetry(grey: np.ndarray, axis: int) -> np.ndarray:
    ink = grey.sum(axis=(1, 2))
    difference = np.abs(grey - np.flip(grey, axis=axis)).sum(axis=(1, 2))
    return 1.0 - difference / np.maximum(2.0 * ink, 1e-12)


def _width(grey: np.ndarray) -> np.ndarray:
    columns = (grey >= STROKE_LEVEL).any(axis=1)  # (n, 8): columns holding stroke
    first = np.argmax(columns, axis=1)
    last = columns.shape[1] - 1 - np.argmax(columns[:, ::-1], axis=1)
    return np.where(columns.any(axis=1), last - first + 1, 0).astype(np.float64)


def _closed_loop(grey: np.ndarray) -> np.ndarray:
    from scipy import ndimage

    closed = np.zeros(len(grey), dtype=bool)
    for index, image in enumerate(grey):
        background = np.pad(image < STROKE_LEVEL, 1, constant_values=True)  # a border of background around it
        _, count = ndimage.label(background)  # 4-connectivity
        closed[index] = count > 1  # a background region not joined to the padded border
    return closed


def attribute_measures(grey: np.ndarray) -> pd.DataFrame:
    """The continuous measures behind :data:`ATTRIBUTE_CONCEPTS` (one column each; ``loop:closed`` as 0/1)
    of ``grey`` (n, 8, 8) grey levels 0–16 (module doc)."""
    grey = np.asarray(grey, dtype=np.float64)
    if grey.ndim != 3 or grey.shape[1:] != (8, 8):
        raise ValueError(f"digit images must be (n, 8, 8) grey levels, got shape {grey.shape}")
    ink = grey.sum(axis=(1, 2))
    share = np.maximum(ink, 1e-12)
    return pd.DataFrame({
        "ink:heavy": ink,
        "symmetry:left_right": _symmetry(grey, axis=2),
        "symmetry:top_bottom": _symmetry(grey, axis=1),
        "mass:top": grey[:, :4].sum(axis=(1, 2)) / share,
        "mass:left": grey[:, :, :4].sum(axis=(1, 2)) / share,
        "centre:ink": grey[:, 2:6, 2:6].sum(axis=(1, 2)) / share,
        "extent:wide": _width(grey),
        "loop:closed": _closed_loop(grey).astype(np.float64),
    })


def attribute_concepts(grey: np.ndarray, reference: np.ndarray) -> pd.DataFrame:
    """Binary attribute concepts (float32 0/1, columns :data:`ATTRIBUTE_CONCEPTS`) of ``grey`` (n, 8, 8): a measure
    of :data:`MEDIAN_ATTRIBUTES` is 1 above its median over ``reference`` (m, 8, 8); ``mass:*`` above 0.5;
    ``loop:closed`` as measured.

    >>> one = np.zeros((1, 8, 8)); one[0, 1:7, 3:5] = 16  # a vertical bar
    >>> concepts = attribute_concepts(one, one)
    >>> int(concepts.loc[0, "loop:closed"]), int(concepts.loc[0, "mass:left"])
    (0, 0)
    """
    measures, reference_measures = attribute_measures(grey), attribute_measures(reference)
    concepts = pd.DataFrame(index=measures.index)
    for name in ATTRIBUTE_CONCEPTS:
        if name in MEDIAN_ATTRIBUTES:
            threshold = float(np.median(reference_measures[name]))
        else:
            threshold = 0.5
        concepts[name] = (measures[name] > threshold).astype(np.float32)
    return concepts
