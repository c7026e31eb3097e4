"""A small sparse autoencoder on hidden states, whose features are concepts (Cunningham et al., 2023; paper
004 Table 1 and App. F).

Model (one hidden layer, dictionary of F features, tied pre-decoder bias b_d):

    f(h) = ReLU(W_e (h − b_d) + b_e),     ĥ = W_d f(h) + b_d,
    loss = mean_n ‖h − ĥ‖² / m + λ · mean_n ‖f(h)‖₁,

with the columns of W_d renormalised to unit norm after every step (so the L1 penalty cannot be dodged by
shrinking f and growing W_d). Feature i is the virtual neuron a_i(h) = ReLU(v_iᵀh + b_i) with v_i the i-th row
of W_e and b_i = b_e,i − v_iᵀb_d, a :class:`~neuroneval.concepteval.concepts.ReluConcept`.

Training is seeded (initialisation and batch order), runs on the CPU in float32 with Adam, and is meant to be
quick (seconds on tiny layers); the paper trains with Adam at lr 1e-3, F = 8m, λ = 0.5 on Pythia-70M.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from neuroneval.concepteval.concepts import ReluConcept
from neuroneval.concepteval.validation import as_float_array
from neuroneval.options import Options, check_range
from neuroneval.progress import progress_bar


@dataclass(frozen=True)
class SAEOptions(Options):
    """Sparse-autoencoder training: ``expansion`` (F = expansion · m), ``l1`` (λ), Adam ``learning_rate``,
    ``epochs`` over the rows, ``batch_size``, ``seed``."""

    expansion: float = 2.0
    l1: float = 1e-3
    learning_rate: float = 1e-2
    epochs: int = 20
    batch_size: int = 256
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "expansion", 0, low_open=True)
        check_range(self, "l1", 0)
        check_range(self, "learning_rate", 0, low_open=True)
        check_range(self, "epochs", 1, integer=True)
        check_range(self, "batch_size", 1, integer=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class SparseAutoencoder:
    """Trained weights (float64 numpy): ``encoder`` W_e (F, m), ``encoder_bias`` b_e (F,), ``decoder`` W_d (m, F)
    with unit-norm columns, ``decoder_bias`` b_d (m,); ``report`` holds the final loss terms."""

    encoder: np.ndarray
    encoder_bias: np.ndarray
    decoder: np.ndarray
    decoder_bias: np.ndarray
    report: dict

    def encode(self, hidden: np.ndarray) -> np.ndarray:
        """f(h) = ReLU(W_e (h − b_d) + b_e) for rows ``(n, m)`` → ``(n, F)``."""
        return np.maximum((np.asarray(hidden) - self.decoder_bias) @ self.encoder.T + self.encoder_bias, 0.0)

    def decode(self, features: np.ndarray) -> np.ndarray:
        """ĥ = W_d f + b_d for rows ``(n, F)`` → ``(n, m)``."""
        return np.asarray(features) @ self.decoder.T + self.decoder_bias


def train_sae(hidden: np.ndarray, options: SAEOptions = SAEOptions()) -> SparseAutoencoder:
    """Fit a sparse autoencoder to hidden states ``(n, m)`` (module docstring for the model and loss)."""
    states = as_float_array("train_sae hidden", hidden, ndim=2, min_rows=2)
    n_rows, width = states.shape
    n_features = max(1, round(options.expansion * width))
    generator = torch.Generator().manual_seed(options.seed)
    data = torch.as_tensor(states, dtype=torch.float32)
    decoder = torch.randn(width, n_features, generator=generator)
    decoder /= decoder.norm(dim=0, keepdim=True)
    parameters = {
        "encoder": torch.nn.Parameter(decoder.T.clone()),
        "encoder_bias": torch.nn.Parameter(torch.zeros(n_features)),
        "decoder": torch.nn.Parameter(decoder),
        "decoder_bias": torch.nn.Parameter(data.mean(dim=0).clone()),
    }
    optimizer = torch.optim.Adam(parameters.values(), lr=options.learning_rate)

    def losses(batch: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = torch.relu((batch - parameters["decoder_bias"]) @ parameters["encoder"].T
                              + parameters["encoder_bias"])
        reconstruction = features @ parameters["decoder"].T + parameters["decoder_bias"]
        return ((batch - reconstruction) ** 2).sum(dim=1).mean() / width, features.abs().sum(dim=1).mean()

    for _ in progress_bar(range(options.epochs), desc="sparse autoencoder", unit="epoch"):
        order = torch.randperm(n_rows, generator=generator)
        for first in range(0, n_rows, options.batch_size):
            mse, sparsity = losses(data[order[first : first + options.batch_size]])
            optimizer.zero_grad()
            (mse + options.l1 * sparsity).backward()
            optimizer.step()
            with torch.no_grad():
                parameters["decoder"] /= parameters["decoder"].norm(dim=0, keepdim=True).clamp_min(1e-12)
    with torch.no_grad():
        mse, sparsity = losses(data)
        alive = (torch.relu((data - parameters["decoder_bias"]) @ parameters["encoder"].T
                            + parameters["encoder_bias"]) > 0).any(dim=0)
    report = {"n_features": n_features, "width": width, "n_rows": n_rows, "mse_per_dim": float(mse),
              "mean_l1": float(sparsity), "alive_features": int(alive.sum()), **vars(options)}
    weights = {name: parameter.detach().double().numpy() for name, parameter in parameters.items()}
    return SparseAutoencoder(report=report, **weights)


def sae_concepts(sae: SparseAutoencoder, *, features: np.ndarray | None = None,
                 prefix: str = "sae") -> list[ReluConcept]:
    """Features as concepts: a_i(h) = ReLU(v_iᵀh + b_i), v_i = W_e[i], b_i = b_e,i − v_iᵀb_d.

    ``features`` selects feature indices (default: all features whose encoder row is not zero).
    """
    indices = np.flatnonzero(np.abs(sae.encoder).sum(axis=1) > 0) if features is None else np.asarray(features)
    return [ReluConcept(sae.encoder[i], float(sae.encoder_bias[i] - sae.encoder[i] @ sae.decoder_bias),
                        f"{prefix}:{int(i)}") for i in indices]
