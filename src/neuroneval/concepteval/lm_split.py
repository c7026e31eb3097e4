"""Split a GPT-2-style language model at a hidden layer into hidden states h and the rest of the model head(h).

Faithfulness (:mod:`~neuroneval.concepteval.faithfulness`) perturbs h and watches head(h); readability
(:mod:`~neuroneval.concepteval.readability`) needs concept activations of token windows. This module gives both
for ``transformers`` ``GPT2LMHeadModel`` s (the repository's tiny LMs of :mod:`neuroneval.models.lm` and real
GPT-2 checkpoints alike) and ``GPTNeoXForCausalLM`` s (Pythia, the paper's backbone). Two sites of block ``layer``
are supported:

- ``"resid"``: the residual stream after the block (the block's output, m = n_embd);
- ``"mlp"``: the MLP neurons GeLU(h_in W_1) of the block (m = 4·n_embd; the output of ``block.mlp.act`` in both
  architectures), where paper 004 (App. F) reads its neurons and trains its SAEs.

``head(h')`` reruns the model on the same token windows with a forward hook that replaces the site's output by
``h'`` (any batch that is a whole multiple of the windows' batch, so several perturbations run in one pass), and
returns the next-token logits. Gradients flow into ``h'`` only, so GRAD's directional derivatives come from
autograd. The prefix is recomputed on each call: simple and exact, and cheap for the tiny models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np
import torch

from neuroneval.concepteval.concepts import Concept, activate_all

Site = Literal["resid", "mlp"]
SITES: tuple[Site, ...] = get_args(Site)


@dataclass(frozen=True)
class LMSplit:
    """``hidden`` (B, L, m) at the site, ``head`` mapping (k·B, L, m) → (k·B, L, V) logits, ``targets`` (B, L) the
    next token of each position (−1 for the last position of a window, which has none)."""

    hidden: torch.Tensor
    head: Callable[[torch.Tensor], torch.Tensor]
    targets: torch.Tensor


def transformer_blocks(model: torch.nn.Module) -> torch.nn.ModuleList:
    """The blocks of a causal LM: ``transformer.h`` (GPT-2) or ``gpt_neox.layers`` (GPT-NeoX: Pythia)."""
    base = model.base_model
    for name in ("h", "layers"):
        blocks = getattr(base, name, None)
        if isinstance(blocks, torch.nn.ModuleList):
            return blocks
    raise ValueError(f"{type(model).__name__}: no transformer blocks found (expected GPT-2's transformer.h or "
                     "GPT-NeoX's gpt_neox.layers)")


def _site_module(model: torch.nn.Module, layer: int, site: str) -> torch.nn.Module:
    if site not in SITES:
        raise ValueError(f"site must be one of {list(SITES)}, got {site!r}")
    blocks = transformer_blocks(model)
    if not -len(blocks) <= layer < len(blocks):
        raise ValueError(f"layer {layer} out of range for a model with {len(blocks)} blocks")
    return blocks[layer] if site == "resid" else blocks[layer].mlp.act


def _windows_tensor(token_windows: np.ndarray | torch.Tensor) -> torch.Tensor:
    windows = torch.as_tensor(np.asarray(token_windows), dtype=torch.long)
    if windows.ndim != 2 or windows.shape[1] < 2 or windows.shape[0] < 1:
        raise ValueError(f"token windows must have shape (B, L) with B >= 1, L >= 2, got {tuple(windows.shape)}")
    return windows


@torch.no_grad()
def site_activations(model: torch.nn.Module, token_windows: np.ndarray | torch.Tensor, *, layer: int,
                     site: str = "resid") -> torch.Tensor:
    """Hidden states (B, L, m) of the site for token windows (B, L) (the model's dtype, no gradient)."""
    windows = _windows_tensor(token_windows)
    captured: list[torch.Tensor] = []
    handle = _site_module(model, layer, site).register_forward_hook(
        lambda module, inputs, output: captured.append(output[0] if isinstance(output, tuple) else output))
    try:
        model.eval()
        model.base_model(input_ids=windows.to(next(model.parameters()).device))
    finally:
        handle.remove()
    return captured[0].detach()


def split_lm(model: torch.nn.Module, token_windows: np.ndarray | torch.Tensor, *, layer: int,
             site: str = "resid") -> LMSplit:
    """h, head(h) and the next-token targets of token windows (B, L) at block ``layer``'s ``site``.

    Example: ``split = split_lm(model, windows, layer=0)``; ``split.head(split.hidden)`` equals the model's
    logits on ``windows``.
    """
    windows = _windows_tensor(token_windows)
    module = _site_module(model, layer, site)
    hidden = site_activations(model, windows, layer=layer, site=site)
    device = next(model.parameters()).device
    targets = torch.cat([windows[:, 1:], torch.full((windows.shape[0], 1), -1, dtype=torch.long)], dim=1)

    def head(replacement: torch.Tensor) -> torch.Tensor:
        if replacement.ndim != 3 or replacement.shape[1:] != hidden.shape[1:] or replacement.shape[0] % len(windows):
            raise ValueError(f"head: expected (k·{len(windows)}, {hidden.shape[1]}, {hidden.shape[2]}), "
                             f"got {tuple(replacement.shape)}")
        repeats = replacement.shape[0] // len(windows)

        def replace(module: torch.nn.Module, inputs: tuple, output: object) -> object:
            new = replacement.to(device=device, dtype=(output[0] if isinstance(output, tuple) else output).dtype)
            return (new, *output[1:]) if isinstance(output, tuple) else new

        handle = module.register_forward_hook(replace)
        try:
            model.eval()
            return model(input_ids=windows.repeat(repeats, 1).to(device)).logits.double()
        finally:
            handle.remove()

    return LMSplit(hidden=hidden.double(), head=head, targets=targets)


def concept_activation_function(model: torch.nn.Module, concepts: Sequence[Concept], *, layer: int,
                                site: str = "resid") -> Callable[[np.ndarray | torch.Tensor], np.ndarray]:
    """A function token windows (n, L) → concept activations (n, L, C) at block ``layer``'s ``site``."""
    concepts = list(concepts)
    if not concepts:
        raise ValueError("concept_activation_function: no concepts")

    def activations(token_windows: np.ndarray | torch.Tensor) -> np.ndarray:
        hidden = site_activations(model, token_windows, layer=layer, site=site).double()
        return activate_all(hidden, concepts).numpy()

    return activations
