"""CLIP-Dissect (Oikarinen & Weng 2023): SoftWPMI between a unit's top-activating images and concept texts.

Input: a similarity matrix ``sim`` (N images × T concept texts), e.g. cosine similarities of image and text
embeddings from the embedded tiny CLIP (:mod:`neuroneval.models.clip`, :func:`neuroneval.concepts.pseudo.
cosine_similarities`) or any open_clip model. With the authors' defaults:

* ``P(t | x_i) = softmax_t(a·sim_i)`` over concepts (a = 10);
* the unit's top-k images ``x_(1..k)`` (k = 100) belong to its "concept set" with probabilities
  ``p_j = p_start − (j/k)(p_start − p_end)`` (0.998 → 0.97), j = 0..k−1;
* ``log P(t | q_k) = Σ_j log(1 − p_j + p_j·P(t | x_(j)) + 10⁻⁷)``, the log-probability that t describes the
  soft set;
* ``log P(t) = log mean_k exp(log P(t | q_k))``, the concept's prior over all units;
* ``SoftWPMI(k, t) = log P(t | q_k) − λ·log P(t)`` (λ = 1); the explanation is the argmax over t.

Vectorised: one gather of the top-k rows for a block of units and a sum of logs over k.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import logsumexp, softmax

from neuroneval.explain.base import as_activations
from neuroneval.explain.explanation import Concept, explanation_frame
from neuroneval.explain.options import ClipDissectOptions

#: Floor inside the logarithm of the soft set probability (the authors' min_prob).
MIN_PROB = 1e-7


def soft_wpmi(activations: Any, similarity: Any, options: ClipDissectOptions | None = None) -> np.ndarray:
    """The (K, T) SoftWPMI matrix of every unit and concept (module docstring)."""
    options = options or ClipDissectOptions()
    matrix, _ = as_activations(activations)
    sims = np.asarray(similarity, dtype=np.float64)
    if sims.ndim != 2 or sims.shape[0] != matrix.shape[0]:
        raise ValueError(f"similarity must be (N={matrix.shape[0]} images, T concepts), got shape {sims.shape}")
    if not np.all(np.isfinite(sims)):
        raise ValueError("similarity must be finite")
    n, n_units = matrix.shape
    top_k = min(options.top_k, n)
    probabilities = softmax(options.temperature * sims, axis=1)
    inclusion = options.p_start - np.arange(top_k) / top_k * (options.p_start - options.p_end)
    top = np.argsort(-matrix, axis=0, kind="stable")[:top_k].T  # (K, k), best first
    log_conditional = np.empty((n_units, sims.shape[1]))
    block = max(1, (1 << 24) // max(1, top_k * sims.shape[1]))
    for start in range(0, n_units, block):
        gathered = probabilities[top[start:start + block]]  # (b, k, T)
        log_conditional[start:start + block] = np.log(
            1.0 - inclusion[None, :, None] + inclusion[None, :, None] * gathered + MIN_PROB).sum(axis=1)
    log_prior = logsumexp(log_conditional, axis=0) - np.log(n_units)
    return log_conditional - options.lam * log_prior


def clip_dissect(activations: Any, similarity: Any, concept_names: Sequence[str],
                 options: ClipDissectOptions | None = None, *, unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Explain each unit by the concept text of highest SoftWPMI (column ``soft_wpmi``)."""
    matrix, names = as_activations(activations, unit_names)
    concept_names = [str(name) for name in concept_names]
    scores = soft_wpmi(matrix, similarity, options)
    if scores.shape[1] != len(concept_names):
        raise ValueError(f"{len(concept_names)} concept names for {scores.shape[1]} similarity columns")
    best = scores.argmax(axis=1)
    return explanation_frame(names, [Concept(concept_names[t]) for t in best],
                             {"soft_wpmi": scores[np.arange(len(names)), best]})
