"""Network Dissection (Bau et al. 2017): each unit's concept of highest IoU with its top-quantile activations.

``B_k`` = 1[a_k ≥ the ⌈q·P⌉-th largest of a_k over all P positions] (q = 0.005, the 99.5th percentile), with
positions being pixels of the spatial activation maps (upsampled bilinearly to the mask size) or, for scalar
activations, inputs. The concept is ``M_t`` = its per-pixel mask or ``B(c_t) = 1[c_t ≥ 0.5]``. Then

    IoU(k, t) = |B_k ∧ M_t| / |B_k ∨ M_t|,    explanation(k) = argmax_t IoU(k, t),

summed over the whole probing set. All K×T intersections are one product ``Bᵀ M`` (in input chunks). For scalar
activations this is exactly the metric engine's ``iou`` at ``alpha = q`` — the hidden-layer truth of paper 000
App. F.1 (``truth: {method: iou}`` of a setting) — so that path calls :func:`neuroneval.metrics.score`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData, as_activations, check_rows
from neuroneval.explain.explanation import Concept, explanation_frame
from neuroneval.explain.options import DissectionOptions
from neuroneval.metrics import score
from neuroneval.metrics.binarize import CONCEPT_THRESHOLD, top_count

#: Largest number of float32 values one chunk of positions may hold (bounds memory of the products).
CHUNK_VALUES = 1 << 24


@dataclass(frozen=True)
class Positions:
    """Units and concepts over P positions (inputs, or input pixels).

    values: (K, P) float64 unit activations; concepts: (P, T) float32 0/1 concept indicators.
    """

    values: np.ndarray
    concepts: np.ndarray

    @property
    def n_positions(self) -> int:
        return int(self.concepts.shape[0])


def spatial_maps(activations: Any, unit_names: Sequence[str] | None) -> tuple[np.ndarray, list[str]] | None:
    """A checked (N, K, h, w) activation array and unit names, or ``None`` for 2-D (scalar) activations."""
    array = np.asarray(activations)
    if isinstance(activations, pd.DataFrame) or array.ndim == 2:
        return None
    if array.ndim != 4:
        raise ValueError(f"activations must be 2-D (N, K) or 4-D spatial (N, K, h, w), got shape {array.shape}")
    array = array.astype(np.float64, copy=False)
    if not np.all(np.isfinite(array)):
        raise ValueError("activations must be finite; found NaN/inf in the spatial maps")
    names = [str(k) for k in range(array.shape[1])] if unit_names is None else [str(u) for u in unit_names]
    if len(names) != array.shape[1]:
        raise ValueError(f"{len(names)} unit names for {array.shape[1]} units")
    return array, names


def upsample(maps: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """(N, K, h, w) maps at (H, W): broadcast when h = w = 1 (a scalar per image, as paper 001 B.1.1 does for ViT
    units), else bilinear interpolation (order-1 spline) of every map in one call; H, W must be multiples of
    h, w."""
    n, k, h, w = maps.shape
    if (h, w) == size:
        return maps
    if (h, w) == (1, 1):
        return np.broadcast_to(maps, (n, k, *size))
    if size[0] % h or size[1] % w:
        raise ValueError(f"activation maps of size {h}x{w} cannot be upsampled to masks of size "
                         f"{size[0]}x{size[1]}: the mask size must be a multiple of the map size")
    from scipy import ndimage

    return ndimage.zoom(maps, (1, 1, size[0] // h, size[1] // w), order=1, grid_mode=True, mode="nearest")


def positions(activations: Any, probing: ProbingData, unit_names: Sequence[str] | None,
              method: str) -> tuple[Positions, list[str]]:
    """Units and binarized concepts over positions: pixels for 4-D activations (needs masks), else inputs."""
    spatial = spatial_maps(activations, unit_names)
    if spatial is None:
        matrix, names = as_activations(activations, unit_names)
        check_rows(matrix, probing)
        return Positions(matrix.T.copy(), (probing.concepts >= CONCEPT_THRESHOLD).astype(np.float32)), names
    maps, names = spatial
    check_rows(maps, probing)
    masks = probing.require("masks", method)
    n, t, height, width = masks.shape
    values = upsample(maps, (height, width)).transpose(1, 0, 2, 3).reshape(len(names), -1)
    concepts = masks.transpose(0, 2, 3, 1).reshape(n * height * width, t).astype(np.float32)
    return Positions(np.ascontiguousarray(values), concepts), names


def top_quantile(values: np.ndarray, quantile: float) -> np.ndarray:
    """``B_k`` for each row of (K, P) ``values``: 1[a ≥ k-th largest], k = ⌈q·P⌉ (the engine's top-α rule)."""
    k = top_count(quantile, values.shape[1])
    cutoff = -np.partition(-values, k - 1, axis=1)[:, k - 1]
    return (values >= cutoff[:, None]).astype(np.float32)


def iou_matrix(units: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """IoU of every (unit, concept): (K, P) and (P, T) 0/1 float32 → (K, T); 0 where the union is empty."""
    intersection = np.zeros((units.shape[0], concepts.shape[1]), dtype=np.float64)
    step = max(1, CHUNK_VALUES // max(1, units.shape[0] + concepts.shape[1]))
    for start in range(0, concepts.shape[0], step):
        intersection += units[:, start:start + step] @ concepts[start:start + step]
    union = units.sum(axis=1, dtype=np.float64)[:, None] + concepts.sum(axis=0, dtype=np.float64) - intersection
    return np.divide(intersection, union, out=np.zeros_like(intersection), where=union > 0)


def network_dissection(activations: Any, probing: ProbingData, options: DissectionOptions | None = None, *,
                       unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Explain each unit by its concept of highest IoU (columns ``unit, explanation, length, kind, iou``).

    ``activations``: (N, K) scalar activations or (N, K, h, w) spatial maps (then ``probing.masks`` is needed).
    """
    options = options or DissectionOptions()
    if spatial_maps(activations, unit_names) is None:
        matrix, names = as_activations(activations, unit_names)
        check_rows(matrix, probing)
        ious = score("iou", matrix, probing.concepts, alpha=options.quantile)
    else:
        located, names = positions(activations, probing, unit_names, "network_dissection")
        ious = iou_matrix(top_quantile(located.values, options.quantile), located.concepts)
    best = ious.argmax(axis=1)
    explanations = [Concept(probing.concept_names[t]) for t in best]
    return explanation_frame(names, explanations, {"iou": ious[np.arange(len(names)), best]})
