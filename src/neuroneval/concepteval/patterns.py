"""Patterns that maximally activate a concept (paper 004, Sec. 3.2; App. F; App. G), the token lists that
readability scores.

Input side (context ablation, Sec. 3.2): run the windows through the model and take each concept's
``n_high`` most activated positions with a(h) > 0 (the "high-activation tokens"). For every context position
p of a window, replace its token by ``replacement_id`` and recompute the activations; the drop
a(h_q) − a(h_q^{(p ablated)}) at a high-activation position q > p is the contribution of the token at p to
that high activation. A token type's score is the larger of its activation where it is itself a
high-activation token and its largest contribution to a high-activation token; the ``top_k`` token types with
a positive score are the concept's input pattern ("the top 10 tokens with the largest activation or
contribution to high-activation tokens", App. F). The L ablated copies of the windows run in batches of
``position_batch`` positions; all concepts share each forward pass.

Output side (Sec. 3.2, App. G): set the hidden state of every position to the concept direction, scaled to
the mean norm of the observed hidden states ("highly active on the concept and not on others"), run the rest of
the model, average the logits over positions and take the ``top_k`` tokens. Concepts need a direction v.

Where the authors' public code differs: it scores tokens by their own activation drop plus their best
contribution, keeps only tokens within 75 % of the best score, works on lower-cased strings (merging token
ids that print alike) and reads the output side from one position of one window. Ours keeps token ids and
the description of the paper.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neuroneval.concepteval.concepts import Concept
from neuroneval.options import Options, check_range


@dataclass(frozen=True)
class PatternOptions(Options):
    """``top_k`` tokens per pattern (10 in App. F, 20 in the user study), ``n_high`` high-activation positions
    per concept, ``replacement_id`` put in place of an ablated context token (the tokenizer's unknown token,
    as the authors), ``exclude_ids`` never reported (e.g. end-of-text), ``position_batch`` ablated positions
    per forward pass."""

    top_k: int = 10
    n_high: int = 32
    replacement_id: int = 1
    exclude_ids: tuple[int, ...] = ()
    position_batch: int = 8

    def validate(self) -> None:
        check_range(self, "top_k", 1, integer=True)
        check_range(self, "n_high", 1, integer=True)
        check_range(self, "replacement_id", 0, integer=True)
        check_range(self, "position_batch", 1, integer=True)


def _top_tokens(scores: np.ndarray, top_k: int, exclude_ids: Sequence[int]) -> np.ndarray:
    """(C, top_k) token ids with the largest positive scores per row, −1 where fewer exist."""
    scores = scores.copy()
    excluded = [i for i in exclude_ids if 0 <= i < scores.shape[1]]
    scores[:, excluded] = -np.inf
    order = np.argsort(-scores, axis=1, kind="stable")[:, :top_k]
    chosen = np.take_along_axis(scores, order, axis=1)
    return np.where(chosen > 0, order, -1)


def input_patterns(token_windows: np.ndarray, activations: Callable[[np.ndarray], np.ndarray], vocab_size: int,
                   options: PatternOptions = PatternOptions()) -> tuple[np.ndarray, np.ndarray]:
    """Input-side patterns by context ablation (module docstring).

    ``token_windows`` (B, L) int, ``activations`` maps windows (n, L) to concept activations (n, L, C)
    (:func:`~neuroneval.concepteval.lm_split.concept_activation_function`). Returns token ids (C, top_k), −1 for
    missing, and the (C, vocab_size) token scores.
    """
    windows = np.asarray(token_windows, dtype=np.int64)
    if windows.ndim != 2 or 0 in windows.shape:
        raise ValueError(f"token windows must have shape (B, L), got {windows.shape}")
    if windows.min() < 0 or windows.max() >= vocab_size or options.replacement_id >= vocab_size:
        raise ValueError(f"token ids and replacement_id must lie in [0, {vocab_size})")
    batch, length = windows.shape
    base = np.asarray(activations(windows), dtype=np.float64)
    if base.ndim != 3 or base.shape[:2] != windows.shape:
        raise ValueError(f"activations must return shape ({batch}, {length}, C), got {base.shape}")
    if not np.isfinite(base).all():
        raise ValueError("activations returned NaN or infinite values")
    n_concepts = base.shape[2]
    flat = base.reshape(batch * length, n_concepts).T  # (C, B·L)
    n_high = min(options.n_high, flat.shape[1])
    high = np.argpartition(-flat, n_high - 1, axis=1)[:, :n_high]  # (C, n_high) flat positions
    high_values = np.take_along_axis(flat, high, axis=1)
    is_high = high_values > 0
    high_window, high_position = np.divmod(high, length)
    concept_index = np.broadcast_to(np.arange(n_concepts)[:, None], high.shape)
    scores = np.full((n_concepts, vocab_size), -np.inf)
    np.maximum.at(scores, (concept_index[is_high], windows[high_window, high_position][is_high]), high_values[is_high])
    for first in range(0, length, options.position_batch):
        positions = np.arange(first, min(first + options.position_batch, length))
        ablated = np.repeat(windows[None], positions.size, axis=0)
        ablated[np.arange(positions.size), :, positions] = options.replacement_id
        perturbed = np.asarray(activations(ablated.reshape(-1, length)), dtype=np.float64)
        perturbed = perturbed.reshape(positions.size, batch, length, n_concepts)
        for offset, position in enumerate(positions):
            drop = high_values - perturbed[offset][high_window, high_position, concept_index]
            use = is_high & (position < high_position)
            np.maximum.at(scores, (concept_index[use], windows[high_window, position][use]), drop[use])
    return _top_tokens(scores, options.top_k, options.exclude_ids), scores


def output_patterns(concepts: Sequence[Concept], hidden: torch.Tensor, head: Callable[[torch.Tensor], torch.Tensor],
                    options: PatternOptions = PatternOptions()) -> tuple[np.ndarray, np.ndarray]:
    """Output-side patterns (module docstring): token ids (C, top_k) and the mean logits (C, V).

    ``hidden`` (B, L, m) fixes the scale (mean ‖h‖) and the shape ``head`` expects.
    """
    if not concepts:
        raise ValueError("output_patterns: no concepts")
    missing = [concept.name for concept in concepts if concept.direction is None]
    if missing:
        raise ValueError(f"output_patterns: concepts without a direction v: {missing[:3]}")
    states = torch.as_tensor(hidden).double()
    scale = states.norm(dim=-1).mean()
    mean_logits = []
    with torch.no_grad():
        for concept in concepts:
            direction = torch.as_tensor(concept.direction, dtype=states.dtype)
            replaced = (scale * direction / direction.norm()).expand_as(states).contiguous()
            mean_logits.append(head(replaced).double().mean(dim=(0, 1)).numpy())
    logits = np.stack(mean_logits)
    shifted = logits - logits.min(axis=1, keepdims=True) + 1.0  # positive, same order: _top_tokens keeps > 0
    return _top_tokens(shifted, options.top_k, options.exclude_ids), logits
