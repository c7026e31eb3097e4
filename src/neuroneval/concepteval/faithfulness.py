"""Faithfulness of concepts by perturbation (paper 004, Sec. 3.1, Eq. 1 and 6–8; perturbations in
:mod:`~neuroneval.concepteval.perturbation`).

γ(a, ξ, δ) = (1/|x|) Σ_t δ(y_t, y'_t)   (Eq. 1), with y_t = g(h)_t and y'_t = g(ξ(h, a))_t the next-token
logits at position t before and after perturbing the hidden states of every position of the window.

Output differences (y, y' logits, y* the true next token, L the cross-entropy):

- Loss  δ_l = L(y, y*) − L(y', y*)                       (Eq. 6)
- Div   δ_h = KL(softmax y ‖ softmax y')                  (Eq. 7, H = KL divergence as in the paper)
- Class δ_c^j = −(y^j − y'^j), logits of class j         (Eq. 8): PClass with j = argmax y (the prediction),
  TClass with j = y*.

Perturbations: ABL (ablation, Eq. 3/5) gives δ directly. GRAD (ε-addition, Eq. 2/4) is the limit ε → 0, so
its measures are the first-order rates d δ(y, y'(ε))/dε at ε = 0 along u = ∇a/‖∇a‖:
GRAD-Loss = ẏ_{y*} − softmax(y)·ẏ, GRAD-PClass = ẏ_{argmax y}, GRAD-TClass = ẏ_{y*}, with ẏ = J_g u the
directional derivative of the logits (one Jacobian-vector product by double back-propagation, so any
differentiable head works). GRAD-Div is identically 0 to first order (KL has a minimum at y' = y), which is why
the paper's 2 × 4 grid leaves it out: the seven measures are :data:`MEASURES`.

Positions without a next token (target −1) are left out of every measure. All positions of a window are
perturbed at once, so later positions also see the perturbed earlier ones through attention — as a hook on
the layer (the authors' setup) does.

Where the authors' public code differs (docs/concepteval.md lists each with a test): it aggregates the
per-position differences as mean(a⁺·δ) (and several thresholded means) instead of the plain mean of Eq. 1; its
ABL-Loss and ABL-Class have the opposite signs of Eq. 6/8; its GRAD uses the unnormalised concept vector and the
gradient of the batch's mean loss (a factor ‖v‖/(B·(L−1)) on GRAD-Loss); its Div is a KL over the top 1000 logits
at every position, the last one included. ``weighting="activation"`` gives an activation-weighted mean
Σ_t a⁺_t δ_t / Σ_t a⁺_t (a⁺ = max(a, 0)) for comparison; the default ``"uniform"`` is Eq. 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from neuroneval.concepteval.concepts import Concept, activate_all
from neuroneval.concepteval.perturbation import AblationOptions, ablate_many, ascent_directions, check_hidden
from neuroneval.options import Options, check_choice, check_range
from neuroneval.progress import progress_bar

MEASURES = ("GRAD-Loss", "GRAD-PClass", "GRAD-TClass", "ABL-Loss", "ABL-Div", "ABL-PClass", "ABL-TClass")
Weighting = Literal["uniform", "activation"]
WEIGHTINGS: tuple[Weighting, ...] = get_args(Weighting)


@dataclass(frozen=True)
class FaithfulnessOptions(Options):
    """``measures`` to compute (a subset of :data:`MEASURES`), ``weighting`` of positions (``uniform`` = Eq. 1,
    ``activation`` = the authors' activation weights), ``concept_batch`` concepts per forward pass of the head,
    ``ablation`` options for concepts without a closed-form ablation."""

    measures: tuple[str, ...] = MEASURES
    weighting: Weighting = "uniform"
    concept_batch: int = 8
    ablation: AblationOptions = field(default_factory=AblationOptions)

    def validate(self) -> None:
        unknown = [m for m in self.measures if m not in MEASURES]
        if unknown or not self.measures:
            raise ValueError(f"FaithfulnessOptions.measures must be a non-empty subset of {list(MEASURES)}, "
                             f"got {list(self.measures)}")
        check_choice(self, "weighting", WEIGHTINGS)
        check_range(self, "concept_batch", 1, integer=True)


def kl_divergence(logits_p: torch.Tensor, logits_q: torch.Tensor) -> torch.Tensor:
    """KL(softmax p ‖ softmax q) = Σ_j p_j (log p_j − log q_j) over the last axis."""
    log_p, log_q = F.log_softmax(logits_p, dim=-1), F.log_softmax(logits_q, dim=-1)
    return (log_p.exp() * (log_p - log_q)).sum(dim=-1)


def output_differences(logits: torch.Tensor, perturbed: torch.Tensor, targets: torch.Tensor) -> dict[str, torch.Tensor]:
    """δ_l, δ_h, δ_c (PClass, TClass) per position (Eq. 6–8); logits (..., V), targets (...) ≥ 0."""
    predicted = logits.argmax(dim=-1, keepdim=True)
    true = targets.unsqueeze(-1)
    cross_entropy = -F.log_softmax(logits, dim=-1).gather(-1, true).squeeze(-1)
    cross_entropy_perturbed = -F.log_softmax(perturbed, dim=-1).gather(-1, true).squeeze(-1)
    return {
        "Loss": cross_entropy - cross_entropy_perturbed,
        "Div": kl_divergence(logits, perturbed),
        "PClass": -(logits.gather(-1, predicted) - perturbed.gather(-1, predicted)).squeeze(-1),
        "TClass": -(logits.gather(-1, true) - perturbed.gather(-1, true)).squeeze(-1),
    }


def gradient_rates(logits: torch.Tensor, directional: torch.Tensor, targets: torch.Tensor) -> dict[str, torch.Tensor]:
    """d δ/dε at ε = 0 given ẏ = dy'/dε (module docstring): Loss, PClass, TClass (Div's rate is 0)."""
    predicted = logits.argmax(dim=-1, keepdim=True)
    true = targets.unsqueeze(-1)
    rate_true = directional.gather(-1, true).squeeze(-1)
    return {"Loss": rate_true - (F.softmax(logits, dim=-1) * directional).sum(dim=-1),
            "PClass": directional.gather(-1, predicted).squeeze(-1), "TClass": rate_true}


def directional_derivative(head: Callable[[torch.Tensor], torch.Tensor], h: torch.Tensor,
                           direction: torch.Tensor) -> torch.Tensor:
    """J_head(h) · direction by double back-propagation (works for any twice-differentiable head)."""
    with torch.enable_grad():
        states = h.detach().clone().requires_grad_(True)
        output = head(states)
        dummy = torch.zeros_like(output, requires_grad=True)
        (vjp,) = torch.autograd.grad(output, states, grad_outputs=dummy, create_graph=True)
        (jvp,) = torch.autograd.grad(vjp, dummy, grad_outputs=direction.to(vjp.dtype))
    return jvp.detach()


def position_differences(hidden: np.ndarray | torch.Tensor, head: Callable[[torch.Tensor], torch.Tensor],
                         targets: np.ndarray | torch.Tensor, concepts: Sequence[Concept],
                         options: FaithfulnessOptions = FaithfulnessOptions()) -> np.ndarray:
    """Per-position differences, shape (C, M, B, L) for the C concepts and the M ``options.measures``.

    ``hidden`` (B, L, m) are the states g reads, ``head(h)`` maps (k·B, L, m) to logits (k·B, L, V),
    ``targets`` (B, L) the true next tokens (−1: none; those positions are NaN).
    """
    states = check_hidden(hidden)
    target = torch.as_tensor(np.asarray(targets) if not isinstance(targets, torch.Tensor) else targets).long()
    if target.shape != states.shape[:2]:
        raise ValueError(f"targets must have shape {tuple(states.shape[:2])}, got {tuple(target.shape)}")
    if not concepts:
        raise ValueError("position_differences: no concepts")
    valid = target >= 0
    safe_target = target.clamp_min(0)
    with torch.no_grad():
        logits = head(states).double()
    if logits.shape[:2] != states.shape[:2]:
        raise ValueError(f"head returned shape {tuple(logits.shape)} for hidden states {tuple(states.shape)}")
    if (target >= logits.shape[-1]).any():
        raise ValueError(f"targets must be < the head's vocabulary size {logits.shape[-1]}")
    batch = states.shape[0]
    result = np.full((len(concepts), len(options.measures), *states.shape[:2]), np.nan)
    wanted_ablation = any(m.startswith("ABL-") for m in options.measures)
    wanted_gradient = any(m.startswith("GRAD-") for m in options.measures)
    for first in progress_bar(range(0, len(concepts), options.concept_batch), desc="faithfulness", unit="batch"):
        chunk = list(concepts[first : first + options.concept_batch])
        repeat = len(chunk)
        logits_repeated = logits.repeat(repeat, 1, 1)
        target_repeated = safe_target.repeat(repeat, 1)
        values: dict[str, torch.Tensor] = {}
        if wanted_ablation:
            with torch.no_grad():
                perturbed = head(ablate_many(states, chunk, options.ablation)).double()
            values.update({f"ABL-{k}": v for k, v in
                           output_differences(logits_repeated, perturbed, target_repeated).items()})
        if wanted_gradient:
            directional = directional_derivative(head, states.repeat(repeat, 1, 1), ascent_directions(states, chunk))
            values.update({f"GRAD-{k}": v for k, v in
                           gradient_rates(logits_repeated, directional.double(), target_repeated).items()})
        for column, measure in enumerate(options.measures):
            per_position = values[measure].reshape(repeat, batch, -1)
            per_position = torch.where(valid, per_position, torch.full_like(per_position, float("nan")))
            result[first : first + repeat, column] = per_position.numpy()
    return result


def aggregate(differences: np.ndarray, activations: np.ndarray | None = None, *,
              weighting: Weighting = "uniform") -> np.ndarray:
    """γ per (concept, measure) from per-position differences (C, M, B, L): the mean over positions with a value
    (Eq. 1), or with ``weighting="activation"`` the mean weighted by max(a, 0) from ``activations`` (B, L, C)."""
    values = np.asarray(differences, dtype=np.float64)
    defined = ~np.isnan(values)
    if weighting == "uniform":
        counts = defined.sum(axis=(2, 3))
        return np.where(counts > 0, np.nansum(values, axis=(2, 3)) / np.maximum(counts, 1), np.nan)
    if weighting != "activation":
        raise ValueError(f"weighting must be one of {list(WEIGHTINGS)}, got {weighting!r}")
    if activations is None:
        raise ValueError("weighting='activation' needs the concept activations")
    weights = np.maximum(np.moveaxis(np.asarray(activations, dtype=np.float64), -1, 0), 0.0)[:, None] * defined
    total = weights.sum(axis=(2, 3))
    weighted = (np.where(defined, values, 0.0) * weights).sum(axis=(2, 3))
    return np.where(total > 0, weighted / np.where(total > 0, total, 1.0), np.nan)


def faithfulness(hidden: np.ndarray | torch.Tensor, head: Callable[[torch.Tensor], torch.Tensor],
                 targets: np.ndarray | torch.Tensor, concepts: Sequence[Concept],
                 options: FaithfulnessOptions = FaithfulnessOptions()) -> pd.DataFrame:
    """Faithfulness of every concept under every measure: a tidy table ``concept, measure, value, n_positions,
    weighting`` (Eq. 1 with the differences of :func:`position_differences`)."""
    differences = position_differences(hidden, head, targets, concepts, options)
    activations = None
    if options.weighting == "activation":
        with torch.no_grad():
            activations = activate_all(check_hidden(hidden), concepts).numpy()
    values = aggregate(differences, activations, weighting=options.weighting)
    n_positions = (~np.isnan(differences)).sum(axis=(2, 3))
    return pd.DataFrame({
        "concept": np.repeat([concept.name for concept in concepts], len(options.measures)),
        "measure": np.tile(options.measures, len(concepts)),
        "value": values.ravel(),
        "n_positions": n_positions.ravel(),
        "weighting": options.weighting,
    })
