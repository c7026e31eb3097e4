"""Pseudo-labels ``c_t = P(t | x)`` from a contrastive image–text model (CLIP, SigLIP), calibrated on labels.

Paper 000 (App. F, "SigLIP c_t", following Oikarinen & Weng 2024) replaces dataset labels by a SigLIP model's
judgement whether concept ``t`` is in image ``x``. SigLIP is trained with a sigmoid on ``a·cos + bias``, so its
similarities map to probabilities through

    c_t(x) = σ(a · (cos(f(x), g(t)) − b)),

with ``f``/``g`` the image/text encoders. :func:`fit_calibration` picks the slope ``a`` and offset ``b`` that
minimise the binary cross-entropy against ground-truth labels (on a labelled calibration split), and
:func:`pseudo_labels` applies them to new images.

:func:`fit_calibrations` fits them either once for all concepts (``scope="shared"``, SigLIP's single sigmoid) or
once per concept (``scope="per_concept"``: Platt scaling of each concept on its own labels, ``a_t``, ``b_t``). A
weak embedder's cosines sit in different ranges for different kinds of concept: one shared sigmoid then gives
rare concepts almost no value above 0.5 and makes ``c_t`` mean different things for different ``t``; per-concept
calibration makes every column a probability of its own concept, comparable across concepts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, get_args

import numpy as np
import torch
from scipy.special import expit
from torch.nn import functional

from neuroneval.options import Options, OptionsError, check_choice, check_text

# Elements of the (a, b, entry) array evaluated at once by fit_calibration: 2**22 float64 = 32 MiB.
GRID_CHUNK_ELEMENTS = 2**22
# How many sigmoids calibrate a pseudo-label table: one for all concepts, or one per concept.
CalibrationScope = Literal["per_concept", "shared"]
CALIBRATION_SCOPES: tuple[CalibrationScope, ...] = get_args(CalibrationScope)


@dataclass(frozen=True)
class PseudoLabelOptions(Options):
    """The ``pseudo_labels:`` block of ``params.yaml``: where and how ``σ(a·(cos − b))`` is calibrated.

    ``calibration_split`` names the labelled split the fit uses (never the probed one), ``a_grid``/``b_grid``
    the slopes and offsets tried, ``scope`` one of :data:`CALIBRATION_SCOPES`.
    """

    calibration_split: str = "train"
    a_grid: tuple[float, ...] = (5.0, 10.0, 20.0, 50.0, 100.0)
    b_grid: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
    scope: CalibrationScope = "per_concept"

    def validate(self) -> None:
        check_text(self, "calibration_split")
        check_choice(self, "scope", CALIBRATION_SCOPES)
        for name, low in (("a_grid", 0.0), ("b_grid", -1.0)):
            grid = getattr(self, name)
            if not grid or not all(isinstance(value, int | float) and not isinstance(value, bool)
                                   and math.isfinite(value) and value > low for value in grid):
                raise OptionsError(f"PseudoLabelOptions.{name} must be a non-empty list of finite numbers above "
                                   f"{low:g}, got {list(grid)}")


class Calibration(NamedTuple):
    """The chosen ``a`` and ``b``, their mean BCE, and the BCE of every grid point (``len(a_grid), len(b_grid)``)."""

    a: float
    b: float
    bce: float
    bce_grid: np.ndarray


def cosine_similarities(image_embeddings: np.ndarray, text_embeddings: np.ndarray) -> np.ndarray:
    """(N, T) cosine similarities between N image and T text embeddings (rows are L2-normalised first)."""
    images = _matrix(image_embeddings, "image_embeddings")
    texts = _matrix(text_embeddings, "text_embeddings")
    if images.shape[1] != texts.shape[1]:
        raise ValueError(f"image embeddings have dimension {images.shape[1]}, text embeddings {texts.shape[1]}")
    return _unit_rows(images, "image_embeddings") @ _unit_rows(texts, "text_embeddings").T


class ConceptCalibrations(NamedTuple):
    """Per-concept slopes ``a``, offsets ``b`` and mean BCEs, each (T,); equal entries under ``scope="shared"``."""

    a: np.ndarray
    b: np.ndarray
    bce: np.ndarray


def pseudo_labels(image_embeddings: np.ndarray, text_embeddings: np.ndarray, a: float | np.ndarray,
                  b: float | np.ndarray) -> np.ndarray:
    """Concept probabilities ``σ(a_t·(cos − b_t))``, (N images, T concepts) float32 in [0, 1].

    Parameters
    ----------
    image_embeddings : (N, D) array
        Image embeddings; they need not be normalised.
    text_embeddings : (T, D) array
        Embeddings of one prompt per concept.
    a, b : float or (T,) arrays
        Slope and offset from :func:`fit_calibration` (one for all concepts) or :func:`fit_calibrations`
        (one per concept).

    Examples
    --------
    >>> pseudo_labels(np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), a=10.0, b=0.5).round(3)
    array([[0.993, 0.007]], dtype=float32)
    """
    return expit(a * (cosine_similarities(image_embeddings, text_embeddings) - b)).astype(np.float32)


def fit_calibration(cosines: np.ndarray, labels: np.ndarray, a_grid: Sequence[float],
                    b_grid: Sequence[float]) -> Calibration:
    """Slope and offset minimising the mean binary cross-entropy of ``σ(a·(cos − b))`` against ``labels``.

    For every grid point the loss is ``mean_i [softplus(z_i) − y_i z_i]`` with ``z_i = a·(cos_i − b)`` — the
    cross-entropy ``−[y log σ(z) + (1 − y) log(1 − σ(z))]`` in a form that cannot overflow. The linear part is
    summed in closed form and the softplus part in chunks over the entries, all grid points at once. Ties go
    to the first grid point in (a, b) order.

    Parameters
    ----------
    cosines : array of any shape
        Image–text cosine similarities (e.g. (N, T) from :func:`cosine_similarities`).
    labels : array of the same shape
        Ground truth in [0, 1] (binary labels, or soft labels).
    a_grid, b_grid : 1-D sequences of float
        Candidate slopes and offsets.

    Returns
    -------
    Calibration
        ``a``, ``b``, their BCE (nats per entry) and the whole (len(a_grid), len(b_grid)) BCE grid.

    Examples
    --------
    >>> fit = fit_calibration(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0, 0, 1, 1]), [1.0, 50.0], [0.0, 0.25])
    >>> fit.a, fit.b
    (50.0, 0.25)
    """
    cosine_values = np.asarray(cosines, dtype=np.float64)
    label_values = np.asarray(labels, dtype=np.float64)
    if cosine_values.shape != label_values.shape:
        raise ValueError(f"cosines {cosine_values.shape} and labels {label_values.shape} differ in shape")
    if cosine_values.size == 0:
        raise ValueError("cosines are empty")
    if not np.all(np.isfinite(cosine_values)):
        raise ValueError("cosines contain NaN or infinite values")
    if not np.all((label_values >= 0) & (label_values <= 1)):
        raise ValueError("labels must lie in [0, 1]")
    slopes, offsets = _grid(a_grid, "a_grid"), _grid(b_grid, "b_grid")
    cosine_values, label_values = cosine_values.ravel(), label_values.ravel()

    linear = slopes[:, None] * (label_values @ cosine_values - offsets[None, :] * label_values.sum())
    softplus = np.zeros((slopes.size, offsets.size))
    chunk = max(1, GRID_CHUNK_ELEMENTS // (slopes.size * offsets.size))
    for start in range(0, cosine_values.size, chunk):
        shifted = cosine_values[None, start : start + chunk] - offsets[:, None]
        logits = slopes[:, None, None] * shifted[None, :, :]
        softplus += np.logaddexp(0.0, logits).sum(axis=-1)
    bce_grid = (softplus - linear) / cosine_values.size
    best_a, best_b = np.unravel_index(np.argmin(bce_grid), bce_grid.shape)
    return Calibration(float(slopes[best_a]), float(offsets[best_b]), float(bce_grid[best_a, best_b]), bce_grid)


def fit_calibrations(cosines: np.ndarray, labels: np.ndarray, a_grid: Sequence[float], b_grid: Sequence[float],
                     *, scope: str = "per_concept") -> ConceptCalibrations:
    """Slopes and offsets of every concept column of ``cosines`` (N, T) against ``labels`` (N, T).

    ``scope="shared"``: one :func:`fit_calibration` over all entries, repeated T times. ``scope="per_concept"``:
    :func:`fit_calibration` on each column alone, i.e. ``(a_t, b_t) = argmin mean_i BCE(σ(a·(cos_it − b)), y_it)``
    over the grid (Platt scaling per concept). Raises ``ValueError`` for an unknown scope or a shape mismatch.
    """
    if scope not in CALIBRATION_SCOPES:
        raise ValueError(f"calibration scope must be one of {list(CALIBRATION_SCOPES)}, got {scope!r}")
    cosine_values, label_values = _matrix(cosines, "cosines"), np.asarray(labels, dtype=np.float64)
    if label_values.shape != cosine_values.shape:
        raise ValueError(f"cosines {cosine_values.shape} and labels {label_values.shape} differ in shape")
    if scope == "shared":
        fit = fit_calibration(cosine_values, label_values, a_grid, b_grid)
        width = cosine_values.shape[1]
        return ConceptCalibrations(np.full(width, fit.a), np.full(width, fit.b), np.full(width, fit.bce))
    fits = [fit_calibration(cosine_values[:, column], label_values[:, column], a_grid, b_grid)
            for column in range(cosine_values.shape[1])]
    return ConceptCalibrations(np.array([fit.a for fit in fits]), np.array([fit.b for fit in fits]),
                               np.array([fit.bce for fit in fits]))


def calibration_vectors(metadata: Mapping[str, Any], concept_names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The (T,) slopes and offsets of a pseudo-label table's metadata for ``concept_names``.

    ``metadata["a"]``/``["b"]`` are one number (shared calibration, external embedders) or a mapping concept →
    value (per-concept calibration). Raises ``ValueError`` when they are missing or lack a concept.
    """
    vectors = []
    for key in ("a", "b"):
        if key not in metadata:
            raise ValueError(f"the pseudo-label table's metadata has no calibration {key!r}")
        value = metadata[key]
        if isinstance(value, Mapping):
            missing = [name for name in concept_names if name not in value]
            if missing:
                raise ValueError(f"the pseudo-label calibration {key!r} lacks concepts {missing[:3]}")
            vectors.append(np.array([float(value[name]) for name in concept_names]))
        else:
            vectors.append(np.full(len(concept_names), float(value)))
    return vectors[0], vectors[1]


def pseudo_label_quality(labels: np.ndarray, pseudo: np.ndarray, concept_names: Sequence[str]) -> dict[str, Any]:
    """How well pseudo-labels rank each concept's true positives: per-concept ROC AUC of ``pseudo[:, t]``
    against ``B(labels[:, t]) = 1[labels ≥ 0.5]`` (concepts with no positive or no negative are left out), their
    mean (``None`` if no concept has both), and the mean per concept kind (the name's part before ``:``); and,
    per kind, the share of (input, concept) entries with ``B(·) = 1`` under the labels and under the
    pseudo-labels (``positive_rate_by_kind``: what the binarising metrics see of each).

    Returns ``{"mean_auc", "mean_auc_by_kind", "positive_rate_by_kind", "auc"}``, values rounded to 6
    decimals (the summary JSON).
    """
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    from neuroneval.concepts.threshold import concept_positive

    truth, predicted = concept_positive(labels), concept_positive(pseudo)
    auc = {name: float(roc_auc_score(truth[:, k], pseudo[:, k]))
           for k, name in enumerate(concept_names) if 0 < truth[:, k].sum() < len(truth)}
    by_kind = pd.Series(auc, dtype=float).groupby(lambda name: name.split(":", 1)[0]).mean()
    kinds = np.array([name.split(":", 1)[0] for name in concept_names])
    rates = {kind: {"labels": round(float(truth[:, kinds == kind].mean()), 6),
                    "pseudo": round(float(predicted[:, kinds == kind].mean()), 6)} for kind in sorted(set(kinds))}
    return {"mean_auc": round(float(np.mean(list(auc.values()))), 6) if auc else None,
            "mean_auc_by_kind": {kind: round(float(value), 6) for kind, value in by_kind.items()},
            "positive_rate_by_kind": rates,
            "auc": {name: round(value, 6) for name, value in auc.items()}}


@torch.no_grad()
def embed_images(model: torch.nn.Module, preprocess: Callable[[Any], torch.Tensor], images: Sequence[Any], *,
                 batch_size: int = 64) -> np.ndarray:
    """L2-normalised ``model.encode_image`` embeddings of ``images``, (N, D) float32.

    ``images`` holds PIL images, uint8 arrays or image file paths; ``preprocess`` (e.g.
    :attr:`~neuroneval.models.loaders.LoadedModel.preprocess`) turns one image into a (3, H, W) tensor.
    Batches go to the device of the model's parameters.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    model.eval()
    device = _device(model)
    parts = []
    for start in range(0, len(images), batch_size):
        batch = torch.stack([preprocess(_open_image(image)) for image in images[start : start + batch_size]])
        parts.append(functional.normalize(model.encode_image(batch.to(device)).float(), dim=-1).cpu())
    if not parts:
        raise ValueError("no images to embed")
    return torch.cat(parts).numpy().astype(np.float32)


@torch.no_grad()
def embed_texts(model: torch.nn.Module, tokenizer: Callable[[list[str]], torch.Tensor], prompts: Sequence[str], *,
                batch_size: int = 256) -> np.ndarray:
    """L2-normalised ``model.encode_text(tokenizer(prompts))`` embeddings, (len(prompts), D) float32."""
    if isinstance(prompts, str) or len(prompts) == 0:
        raise ValueError("prompts must be a non-empty list of strings")
    model.eval()
    device = _device(model)
    parts = [functional.normalize(model.encode_text(tokenizer(list(prompts[start : start + batch_size])).to(device))
                                  .float(), dim=-1).cpu()
             for start in range(0, len(prompts), batch_size)]
    return torch.cat(parts).numpy().astype(np.float32)


def _open_image(image: Any) -> Any:
    if isinstance(image, str | Path):
        from PIL import Image

        with Image.open(image) as opened:
            return opened.convert("RGB")
    return image


def _device(model: torch.nn.Module) -> torch.device:
    parameter = next(model.parameters(), None)
    return parameter.device if parameter is not None else torch.device("cpu")


def _matrix(values: np.ndarray, name: str) -> np.ndarray:
    matrix = np.asarray(values, dtype=np.float64)
    if matrix.ndim != 2 or 0 in matrix.shape:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"{name} contain NaN or infinite values")
    return matrix


def _unit_rows(matrix: np.ndarray, name: str) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if np.any(norms == 0):
        raise ValueError(f"{name} has all-zero rows {np.flatnonzero(norms[:, 0] == 0)[:5].tolist()}")
    return matrix / norms


def _grid(values: Sequence[float], name: str) -> np.ndarray:
    grid = np.asarray(values, dtype=np.float64)
    if grid.ndim != 1 or grid.size == 0 or not np.all(np.isfinite(grid)):
        raise ValueError(f"{name} must be a non-empty 1-D sequence of finite numbers, got {values!r}")
    return grid
