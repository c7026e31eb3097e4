"""Sparse-autoencoder (SAE) features from an encoder saved on disk in SAELens' layout, without SAELens.

A SAELens SAE folder holds ``cfg.json`` (the config's ``to_dict``: ``d_in``, ``d_sae``, ``architecture``,
``apply_b_dec_to_input``, ``normalize_activations``, ``dtype``, ``metadata`` with ``hook_name``…, and ``k`` for
TopK) and ``sae_weights.safetensors`` (``W_enc`` of shape (d_in, d_sae), ``b_enc`` (d_sae), ``W_dec``
(d_sae, d_in), ``b_dec`` (d_in) and, for JumpReLU, ``threshold`` (d_sae)). The encoder, as SAELens computes it
(facts read from jbloomAus/SAELens ``sae_lens/saes/sae.py`` and ``sae_lens/saes/jumprelu_sae.py`` at commit
62dca289e660beae58db01c9ee6edd0d4c58b2e2, ``sae_lens/saes/topk_sae.py`` at d4bed00c7dd9948c51ac89835aa5f57053dc48e9):

.. math::

    h = (x - b_{dec} \\cdot [\\text{apply\\_b\\_dec\\_to\\_input}])\\, W_{enc} + b_{enc}

and the features ``f`` are

- ``standard`` (ReLU): ``f = max(h, 0)``;
- ``jumprelu``: ``f = max(h, 0) · [h > threshold]`` (per feature);
- ``topk``: the ``k`` largest entries of ``h`` per row pass through a ReLU, all others are 0.

Older configs without ``architecture`` name ``activation_fn`` (``relu`` or ``topk``, with ``k`` in
``activation_fn_kwargs``); they are read the same way. Only ``normalize_activations: none`` is supported (a
run-time normalisation needs statistics SAELens keeps outside these two files), and ``reshape_activations:
hook_z`` is refused too. Nothing is downloaded and SAELens is not imported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

SAE_CONFIG_FILE = "cfg.json"
SAE_WEIGHTS_FILE = "sae_weights.safetensors"
SAE_ARCHITECTURES = ("standard", "jumprelu", "topk")

SaeArchitecture = Literal["standard", "jumprelu", "topk"]


@dataclass(frozen=True)
class SparseAutoencoder:
    """The encoder half of an SAE: ``encode(x)`` gives the features (module docstring for the formula)."""

    w_enc: torch.Tensor
    b_enc: torch.Tensor
    b_dec: torch.Tensor
    architecture: SaeArchitecture
    apply_b_dec_to_input: bool
    threshold: torch.Tensor | None
    k: int | None
    config: dict[str, Any]
    source: Path

    @property
    def d_in(self) -> int:
        return int(self.w_enc.shape[0])

    @property
    def d_sae(self) -> int:
        return int(self.w_enc.shape[1])

    def to(self, device: str | torch.device) -> SparseAutoencoder:
        """The same encoder with its tensors on ``device``."""
        threshold = None if self.threshold is None else self.threshold.to(device)
        return SparseAutoencoder(self.w_enc.to(device), self.b_enc.to(device), self.b_dec.to(device),
                                 self.architecture, self.apply_b_dec_to_input, threshold, self.k, self.config,
                                 self.source)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Features (..., d_sae) of activations ``x`` (..., d_in), computed in float32."""
        if x.shape[-1] != self.d_in:
            raise ValueError(f"the SAE in {self.source} reads {self.d_in}-dimensional activations, the recorded "
                             f"layer gives {x.shape[-1]}")
        x = x.float()
        if self.apply_b_dec_to_input:
            x = x - self.b_dec
        hidden = x @ self.w_enc + self.b_enc
        if self.architecture == "standard":
            return torch.relu(hidden)
        if self.architecture == "jumprelu":
            return torch.relu(hidden) * (hidden > self.threshold).to(hidden.dtype)
        top = torch.topk(hidden, k=self.k, dim=-1)
        return torch.zeros_like(hidden).scatter_(-1, top.indices, torch.relu(top.values))


def load_sae(folder: str | Path) -> SparseAutoencoder:
    """Read an SAE folder in SAELens' layout (``cfg.json`` + ``sae_weights.safetensors``).

    Raises ``FileNotFoundError`` naming a missing file and ``ValueError`` naming the file and key of an
    unsupported architecture, a missing weight or a shape that does not fit ``d_in``/``d_sae``.
    """
    from safetensors.torch import load_file

    root = Path(folder).expanduser()
    config_path, weights_path = root / SAE_CONFIG_FILE, root / SAE_WEIGHTS_FILE
    for path in (config_path, weights_path):
        if not path.is_file():
            raise FileNotFoundError(f"{path} does not exist (an SAELens SAE folder holds {SAE_CONFIG_FILE} and "
                                    f"{SAE_WEIGHTS_FILE})")
    try:
        config = json.loads(config_path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{config_path}: not JSON ({error})") from error
    architecture, k = _architecture(config, config_path)
    for key, allowed in (("normalize_activations", "none"), ("reshape_activations", "none")):
        if config.get(key, "none") not in (allowed, None):
            raise ValueError(f"{config_path}: {key}={config[key]!r} is not supported (only {allowed!r})")
    weights = load_file(str(weights_path), device="cpu")
    needed = ["W_enc", "b_enc", "b_dec"] + (["threshold"] if architecture == "jumprelu" else [])
    missing = [name for name in needed if name not in weights]
    if missing:
        raise ValueError(f"{weights_path}: missing {missing} for a {architecture!r} SAE (has {sorted(weights)})")
    w_enc = weights["W_enc"].float()
    d_in, d_sae = int(config.get("d_in", w_enc.shape[0])), int(config.get("d_sae", w_enc.shape[1]))
    expected = {"W_enc": (d_in, d_sae), "b_enc": (d_sae,), "b_dec": (d_in,), "threshold": (d_sae,)}
    for name in needed:
        if tuple(weights[name].shape) != expected[name]:
            raise ValueError(f"{weights_path}: {name} has shape {tuple(weights[name].shape)}, expected "
                             f"{expected[name]} for d_in={d_in}, d_sae={d_sae} of {config_path}")
    if k is not None and not 1 <= k <= d_sae:
        raise ValueError(f"{config_path}: k={k} must lie in [1, d_sae={d_sae}]")
    threshold = weights["threshold"].float() if architecture == "jumprelu" else None
    return SparseAutoencoder(w_enc, weights["b_enc"].float(), weights["b_dec"].float(), architecture,
                             bool(config.get("apply_b_dec_to_input", True)), threshold, k, config, root)


def _architecture(config: dict[str, Any], source: Path) -> tuple[SaeArchitecture, int | None]:
    """The architecture and TopK's ``k`` of a config: ``architecture`` (new configs) or ``activation_fn``."""
    architecture = config.get("architecture")
    if architecture is None:
        activation = config.get("activation_fn", config.get("activation_fn_str", "relu"))
        architecture = {"relu": "standard", "topk": "topk"}.get(activation, activation)
    if architecture not in SAE_ARCHITECTURES:
        raise ValueError(f"{source}: architecture {architecture!r} is not supported; expected one of "
                         f"{list(SAE_ARCHITECTURES)}")
    if architecture != "topk":
        return architecture, None
    k = config.get("k", (config.get("activation_fn_kwargs") or {}).get("k"))
    if k is None:
        raise ValueError(f"{source}: a topk SAE needs 'k' (or activation_fn_kwargs.k)")
    return architecture, int(k)
