"""The units of a simulated crowd study and their explanations (paper 001, Setting 1, Eq. 9–10).

Each unit k is explained by the concept that maximises its correlation on the full probing set,
t_k = argmax_t ρ(a_k, c_t^gt) (Eq. 9), and ρ_gt = ρ(a_k, c_{t_k}^gt) is the ground truth the simulated
studies try to recover (Eq. 10).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neuroneval.crowd.estimator import correlation_matrix

#: Units whose best concept correlates less than this are left out (RCE divides by ρ_gt).
DEFAULT_MIN_TRUE_CORRELATION = 0.1


@dataclass(frozen=True)
class StudyUnits:
    """The units of a simulated study with their explanation (Eq. 9) and true correlation (Eq. 10).

    Attributes
    ----------
    unit_ids, concept_names
        Unit id and chosen concept name per kept unit.
    activations, labels
        (n, K) activations and the binary ground-truth labels of each unit's concept.
    pseudo_labels
        (n, K) pseudo-label scores of each unit's concept, or None.
    rho_true
        (K,) ground-truth correlations ρ_gt.
    unit_keys
        (K,) integer keys (CRC32 of the unit id) that seed each unit's randomness.
    """

    unit_ids: tuple[str, ...]
    concept_names: tuple[str, ...]
    activations: np.ndarray
    labels: np.ndarray
    pseudo_labels: np.ndarray | None
    rho_true: np.ndarray
    unit_keys: np.ndarray


def select_explanations(
    activations: np.ndarray,
    labels: np.ndarray,
    pseudo_labels: np.ndarray | None = None,
    *,
    unit_ids: Sequence[str] | None = None,
    concept_names: Sequence[str] | None = None,
    min_true_correlation: float = DEFAULT_MIN_TRUE_CORRELATION,
    max_units: int | None = None,
) -> StudyUnits:
    """Explain each unit by its best-correlated concept (Eq. 9) and record ρ_gt (Eq. 10).

    Parameters
    ----------
    activations
        (n, K) unit activations on the probing set.
    labels
        (n, C) binary ground-truth concept labels (class and superclass labels in the paper).
    pseudo_labels
        Optional (n, C) pseudo-label scores of the same concepts, in [0, 1].
    unit_ids, concept_names
        Names of the K columns of ``activations`` and C columns of ``labels`` (default ``"0"``, ``"1"``…).
    min_true_correlation
        Keep only units with ρ_gt >= this value (default 0.1): Eq. 13 divides by ρ_gt, so units that no
        concept explains would dominate the RCE with noise.
    max_units
        Keep at most this many units (those with the smallest unit keys, a seed-free deterministic subset
        that does not depend on the column order); None keeps all.

    Returns
    -------
    StudyUnits
    """
    a = np.asarray(activations, dtype=np.float64)
    c = np.asarray(labels, dtype=np.float64)
    if a.ndim != 2 or c.ndim != 2 or a.shape[0] != c.shape[0]:
        raise ValueError(f"need (n, K) activations and (n, C) labels with equal n, got {a.shape} and {c.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("activations contain NaN or infinite values")
    if not np.all((c == 0) | (c == 1)):
        raise ValueError("labels must be binary (0/1) ground-truth concept labels")
    p = None
    if pseudo_labels is not None:
        p = np.asarray(pseudo_labels, dtype=np.float64)
        if p.shape != c.shape:
            raise ValueError(f"pseudo_labels shape {p.shape} does not match labels shape {c.shape}")
        if not np.all(np.isfinite(p)):
            raise ValueError("pseudo_labels contain NaN or infinite values")
    units = [str(u) for u in (range(a.shape[1]) if unit_ids is None else unit_ids)]
    concepts = [str(t) for t in (range(c.shape[1]) if concept_names is None else concept_names)]
    if len(units) != a.shape[1] or len(concepts) != c.shape[1]:
        raise ValueError(f"got {len(units)} unit ids for {a.shape[1]} units and {len(concepts)} names for {c.shape[1]}")
    rho = correlation_matrix(a, c)
    best = np.argmax(rho, axis=1)
    rho_best = rho[np.arange(a.shape[1]), best]
    keys = np.array([zlib.crc32(u.encode()) for u in units], dtype=np.int64)
    keep = np.flatnonzero(rho_best >= min_true_correlation)
    if max_units is not None and keep.size > max_units:
        keep = np.sort(keep[np.argsort(keys[keep], kind="stable")[:max_units]])
    if keep.size == 0:
        raise ValueError(f"no unit reaches a best-concept correlation of {min_true_correlation}")
    chosen = best[keep]
    return StudyUnits(
        unit_ids=tuple(units[k] for k in keep),
        concept_names=tuple(concepts[t] for t in chosen),
        activations=a[:, keep],
        labels=c[:, chosen],
        pseudo_labels=None if p is None else p[:, chosen],
        rho_true=rho_best[keep],
        unit_keys=keys[keep],
    )
