"""Concept perturbations ξ(h, a) of paper 004, Sec. 3.1 (Eq. 2–5) and App. B (Eq. 16–35).

ε-addition (GRAD) — Eq. 2: ξ_e(h, a) = argmax_{h'} a(h') s.t. ‖h' − h‖ = ε. As ε → 0 the maximiser moves
along the unit gradient, h' = h + ε u with u = ∇a(h)/‖∇a(h)‖; for a(h) = vᵀh (+ b) this is Eq. 4 / Eq. 35,
h' = h + ε v/‖v‖. :func:`ascent_direction` returns u (0 where ∇a(h) = 0, e.g. an inactive ReLU feature:
there no direction raises a to first order). The measures then take the derivative in ε (see
:mod:`~neuroneval.concepteval.faithfulness`).

Ablation (ABL) — Eq. 3: ξ_a(h, a) = argmin_{h'} ‖h' − h‖² s.t. a(h') = 0 (the paper prints the constraint as
a(h) = 0; h' is meant). Closed forms (App. B):

- affine a(h) = vᵀh + b: h' = h − (vᵀh + b)/(vᵀv) · v (Eq. 5 for b = 0, Eq. 33 with the bias);
- ReLU a(h) = ReLU(vᵀh + b): h' = h where vᵀh + b ≤ 0 (Eq. 24–26), else the affine projection (Eq. 33);
- any other differentiable a: Eq. 3 solved numerically by sequential linearisation — at iterate h_k, project
  h onto the tangent hyperplane {x : a(h_k) + ∇a(h_k)ᵀ(x − h_k) = 0}:
  h_{k+1} = h − [a(h_k) + ∇a(h_k)ᵀ(h − h_k)] / ‖∇a(h_k)‖² · ∇a(h_k).
  Its fixed points satisfy the Lagrange conditions of Eq. 17–19 (h' − h ∥ ∇a(h'), a(h') = 0), and for an
  affine a it lands on Eq. 33 in one step.

The authors' public code differs: its ablation hook ignores the bias and works with the unit-normalised
concept vector v̂ (in the version we read: h − h ⊙ v̂, an element-wise product rather than the projection
(v̂ᵀh) v̂, then rescaled to the original norm ‖h‖), so it can agree with Eq. 5 at most for unit-norm,
bias-free directions. Ours follows the equations.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from neuroneval.concepteval.concepts import Concept, LinearConcept, ReluConcept
from neuroneval.options import Options, check_range


@dataclass(frozen=True)
class AblationOptions(Options):
    """Numerical ablation (Eq. 3) of concepts without a closed form: at most ``max_iter`` linearisation steps,
    stopping when every |a(h')| ≤ ``tol``."""

    max_iter: int = 50
    tol: float = 1e-6

    def validate(self) -> None:
        check_range(self, "max_iter", 1, integer=True)
        check_range(self, "tol", 0, low_open=True)


def _gradient(concept: Concept, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(a(h), ∇a(h)) per position; h (..., m)."""
    with torch.enable_grad():
        states = h.detach().clone().requires_grad_(True)
        activation = concept.activate(states)
        (gradient,) = torch.autograd.grad(activation.sum(), states, allow_unused=True)
    if gradient is None:
        gradient = torch.zeros_like(states)
    return activation.detach(), gradient.detach()


def ascent_direction(h: torch.Tensor, concept: Concept) -> torch.Tensor:
    """u = ∇a(h)/‖∇a(h)‖ per position (Eq. 2 as ε → 0; Eq. 4/35: v/‖v‖ for linear a); 0 where ∇a(h) = 0."""
    _, gradient = _gradient(concept, h)
    norm = gradient.norm(dim=-1, keepdim=True)
    return torch.where(norm > 0, gradient / norm.clamp_min(torch.finfo(h.dtype).tiny), torch.zeros_like(gradient))


def ablate(h: torch.Tensor, concept: Concept, options: AblationOptions = AblationOptions()) -> torch.Tensor:
    """ξ_a(h, a): the closest h' to h with a(h') = 0, per position (module docstring for the three cases)."""
    if isinstance(concept, LinearConcept | ReluConcept):
        v = torch.as_tensor(concept.v, dtype=h.dtype, device=h.device)
        pre = h @ v + concept.b
        step = (pre / (v @ v)).unsqueeze(-1) * v
        if isinstance(concept, ReluConcept):
            step = torch.where((pre > 0).unsqueeze(-1), step, torch.zeros_like(step))
        return h - step
    return _ablate_numerically(h, concept, options)


def _ablate_numerically(h: torch.Tensor, concept: Concept, options: AblationOptions) -> torch.Tensor:
    current = h.detach().clone()
    for _ in range(options.max_iter):
        activation, gradient = _gradient(concept, current)
        if activation.abs().max() <= options.tol:
            return current
        squared = (gradient * gradient).sum(dim=-1)
        movable = squared > 0
        numerator = activation + (gradient * (h - current)).sum(dim=-1)
        proposal = h - (numerator / squared.clamp_min(torch.finfo(h.dtype).tiny)).unsqueeze(-1) * gradient
        current = torch.where(movable.unsqueeze(-1), proposal, current)
    residual = concept.activate(current).detach().abs()
    if residual.max() > options.tol:
        warnings.warn(f"ablation of concept {concept.name!r}: {int((residual > options.tol).sum())} position(s) "
                      f"still have |a(h')| > {options.tol} after {options.max_iter} steps (max "
                      f"{float(residual.max()):.3g})", RuntimeWarning, stacklevel=3)
    return current


def ablate_many(h: torch.Tensor, concepts: Sequence[Concept],
                options: AblationOptions = AblationOptions()) -> torch.Tensor:
    """ξ_a for several concepts at once: (B, L, m) → (C·B, L, m), concept-major (rows c·B … c·B + B − 1)."""
    return torch.cat([ablate(h, concept, options) for concept in concepts], dim=0)


def ascent_directions(h: torch.Tensor, concepts: Sequence[Concept]) -> torch.Tensor:
    """u for several concepts at once: (B, L, m) → (C·B, L, m), concept-major."""
    return torch.cat([ascent_direction(h, concept) for concept in concepts], dim=0)


def check_hidden(h: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Hidden states as a float64 tensor of shape (B, L, m), finite and non-empty."""
    states = torch.as_tensor(np.asarray(h) if not isinstance(h, torch.Tensor) else h).detach().double()
    if states.ndim != 3 or 0 in states.shape:
        raise ValueError(f"hidden states must have shape (B, L, m) with no empty axis, got {tuple(states.shape)}")
    if not torch.isfinite(states).all():
        raise ValueError("hidden states hold NaN or infinite values")
    return states
