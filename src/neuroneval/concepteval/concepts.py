"""Concepts as virtual neurons (paper 004, Sec. 2 and Table 1).

Every concept-based explanation of a hidden layer is a *virtual neuron*: an activation function
a : R^m → R on a hidden representation h, positive when the concept is present. One interface,
:class:`Concept`, with ``activate(h)`` for hidden states of shape ``(..., m)`` → ``(...,)``, serves every
explanation method, so faithfulness (:mod:`~neuroneval.concepteval.faithfulness`) and readability
(:mod:`~neuroneval.concepteval.readability`) take any of them:

- :class:`LinearConcept`, a(h) = vᵀh + b (affine): neurons (v = o_i, a basis vector, b = 0), TCAV/probe
  directions (the classifier's decision function), PCA and k-means directions, random directions;
- :class:`ReluConcept`, a(h) = ReLU(vᵀh + b): sparse-autoencoder features (Table 1, SAE row);
- :class:`FunctionConcept`, any differentiable torch function of h (e.g. ProtoPNet-style similarities).

Linear and ReLU concepts carry ``v`` and ``b`` (also readable as ``direction`` and ``bias``). The constructors
below build each family from hidden states (rows of an ``(n, m)`` array); the SAE trainer (Cunningham et al.,
2023) lives in :mod:`~neuroneval.concepteval.sae`, the probes in :mod:`~neuroneval.concepteval.probes`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from neuroneval.concepteval.validation import as_float_array


class Concept(abc.ABC):
    """A virtual neuron a(h); ``name`` identifies it in result tables."""

    name: str

    @abc.abstractmethod
    def _activate_torch(self, h: torch.Tensor) -> torch.Tensor:
        """a(h) on a torch tensor ``(..., m)`` → ``(...,)``, differentiable in h."""

    def activate(self, h: np.ndarray | torch.Tensor) -> np.ndarray | torch.Tensor:
        """a(h) for hidden states ``h`` of shape ``(..., m)``: shape ``(...,)``, the same array type as ``h``."""
        if isinstance(h, torch.Tensor):
            return self._activate_torch(h)
        return self._activate_torch(torch.as_tensor(np.asarray(h, dtype=np.float64))).numpy()

    @property
    def is_affine(self) -> bool:
        """Whether a(h) = vᵀh + b exactly (then ablation, Eq. 5, has its closed form everywhere)."""
        return False

    @property
    def direction(self) -> np.ndarray | None:
        """v for linear and ReLU concepts, ``None`` otherwise."""
        return None

    @property
    def bias(self) -> float | None:
        """b for linear and ReLU concepts, ``None`` otherwise."""
        return None


@dataclass(frozen=True, eq=False)
class _DirectionConcept(Concept):
    v: np.ndarray
    b: float = 0.0
    name: str = "concept"

    def __post_init__(self) -> None:
        vector = as_float_array(f"concept {self.name!r} direction v", self.v, ndim=1)
        if not np.any(vector):
            raise ValueError(f"concept {self.name!r}: direction v is all zeros")
        if not np.isfinite(self.b):
            raise ValueError(f"concept {self.name!r}: bias b is not finite ({self.b})")
        object.__setattr__(self, "v", vector)
        object.__setattr__(self, "b", float(self.b))

    def _pre_activation(self, h: torch.Tensor) -> torch.Tensor:
        if h.shape[-1] != self.v.size:
            raise ValueError(f"concept {self.name!r}: hidden states have width {h.shape[-1]}, v has {self.v.size}")
        return h @ torch.as_tensor(self.v, dtype=h.dtype, device=h.device) + self.b

    @property
    def direction(self) -> np.ndarray:
        return self.v

    @property
    def bias(self) -> float:
        return self.b


@dataclass(frozen=True, eq=False)
class LinearConcept(_DirectionConcept):
    """a(h) = vᵀh + b (Table 1: TCAV, neurons o_iᵀh, and the unsupervised directions here)."""

    def _activate_torch(self, h: torch.Tensor) -> torch.Tensor:
        return self._pre_activation(h)

    @property
    def is_affine(self) -> bool:
        return True


@dataclass(frozen=True, eq=False)
class ReluConcept(_DirectionConcept):
    """a(h) = ReLU(vᵀh + b) (Table 1: sparse-autoencoder features)."""

    def _activate_torch(self, h: torch.Tensor) -> torch.Tensor:
        return torch.relu(self._pre_activation(h))


@dataclass(frozen=True, eq=False)
class FunctionConcept(Concept):
    """Any differentiable a(h) given as a torch function ``(..., m) → (...,)``; ablation then solves Eq. 3."""

    function: Callable[[torch.Tensor], torch.Tensor] = field(repr=False)
    name: str = "concept"

    def _activate_torch(self, h: torch.Tensor) -> torch.Tensor:
        return self.function(h)


def activate_all(h: np.ndarray | torch.Tensor, concepts: Sequence[Concept]) -> np.ndarray | torch.Tensor:
    """Activations of all ``concepts`` at once: ``(..., m)`` → ``(..., C)``.

    Linear and ReLU concepts share one matrix product (h V + b, then ReLU on the ReLU columns); other
    concepts are evaluated one by one.
    """
    if not concepts:
        raise ValueError("activate_all: no concepts")
    as_numpy = not isinstance(h, torch.Tensor)
    states = torch.as_tensor(np.asarray(h, dtype=np.float64)) if as_numpy else h
    with_direction = [i for i, concept in enumerate(concepts) if isinstance(concept, _DirectionConcept)]
    columns: list[torch.Tensor | None] = [None] * len(concepts)
    if with_direction:
        matrix = torch.as_tensor(np.stack([concepts[i].direction for i in with_direction], axis=1),
                                 dtype=states.dtype, device=states.device)
        if matrix.shape[0] != states.shape[-1]:
            raise ValueError(f"activate_all: hidden width {states.shape[-1]}, concept width {matrix.shape[0]}")
        biases = torch.as_tensor([concepts[i].bias for i in with_direction], dtype=states.dtype,
                                 device=states.device)
        pre = states @ matrix + biases
        relu = torch.as_tensor([isinstance(concepts[i], ReluConcept) for i in with_direction], device=pre.device)
        pre = torch.where(relu, torch.relu(pre), pre)
        for column, index in enumerate(with_direction):
            columns[index] = pre[..., column]
    for index, concept in enumerate(concepts):
        if columns[index] is None:
            columns[index] = concept.activate(states)
    result = torch.stack(columns, dim=-1)
    return result.numpy() if as_numpy else result


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _fix_sign(directions: np.ndarray) -> np.ndarray:
    """Flip each row so that its largest-magnitude entry is positive (PCA/SVD signs are arbitrary)."""
    largest = directions[np.arange(len(directions)), np.abs(directions).argmax(axis=1)]
    return directions * np.where(largest < 0, -1.0, 1.0)[:, None]


def neuron_concepts(width: int, units: Sequence[int] | None = None, *, prefix: str = "neuron") -> list[LinearConcept]:
    """Neurons as concepts: a(h) = o_iᵀh with o_i the i-th basis vector (Table 1, Neuron row)."""
    if width < 1:
        raise ValueError(f"neuron_concepts: width must be >= 1, got {width}")
    units = range(width) if units is None else units
    concepts = []
    for unit in units:
        if not 0 <= unit < width:
            raise ValueError(f"neuron_concepts: unit {unit} outside [0, {width})")
        basis = np.zeros(width)
        basis[unit] = 1.0
        concepts.append(LinearConcept(basis, 0.0, f"{prefix}:{unit}"))
    return concepts


def random_concepts(width: int, n_concepts: int, *, seed: int, center: np.ndarray | None = None,
                    prefix: str = "random") -> list[LinearConcept]:
    """The floor: ``n_concepts`` directions v drawn uniformly on the unit sphere.

    a(h) = vᵀh, or a(h) = vᵀ(h − μ) (b = −vᵀμ) with ``center`` μ (e.g. the mean hidden state), so that ablation
    removes the variation along v around the data rather than the data's mean offset — the fair floor for
    centred directions (probes, PCA, k-means).
    """
    if width < 1 or n_concepts < 1:
        raise ValueError(f"random_concepts: need width >= 1 and n_concepts >= 1, got {width}, {n_concepts}")
    mean = np.zeros(width) if center is None else as_float_array("random_concepts center", center, ndim=1)
    if mean.size != width:
        raise ValueError(f"random_concepts: center has {mean.size} entries, width is {width}")
    directions = _unit_rows(np.random.default_rng(seed).standard_normal((n_concepts, width)))
    return [LinearConcept(v, float(-v @ mean), f"{prefix}:{i}") for i, v in enumerate(directions)]


def pca_concepts(hidden: np.ndarray, n_components: int, *, prefix: str = "pca") -> list[LinearConcept]:
    """Principal directions of centred hidden states: a(h) = v_kᵀ(h − μ), i.e. b = −v_kᵀμ.

    v_k is the k-th right singular vector of H − μ (unit norm, sign fixed so that its largest entry is
    positive), so a(h) is the k-th principal-component score.
    """
    states = as_float_array("pca_concepts hidden", hidden, ndim=2, min_rows=2)
    if not 1 <= n_components <= min(states.shape):
        raise ValueError(f"pca_concepts: n_components must be in [1, {min(states.shape)}], got {n_components}")
    mean = states.mean(axis=0)
    _, _, right = np.linalg.svd(states - mean, full_matrices=False)
    directions = _fix_sign(right[:n_components])
    return [LinearConcept(v, float(-v @ mean), f"{prefix}:{k}") for k, v in enumerate(directions)]


def kmeans_concepts(hidden: np.ndarray, n_clusters: int, *, seed: int, prefix: str = "kmeans") -> list[LinearConcept]:
    """k-means centroid directions: a(h) = c̃_kᵀ(h − μ), c̃_k = (c_k − μ)/‖c_k − μ‖ (unsupervised baseline).

    Centroids ``c_k`` come from scikit-learn's ``KMeans`` (``random_state=seed``, 4 restarts); clusters are
    ordered by size, largest first.
    """
    from sklearn.cluster import KMeans

    states = as_float_array("kmeans_concepts hidden", hidden, ndim=2, min_rows=2)
    if not 1 <= n_clusters <= states.shape[0]:
        raise ValueError(f"kmeans_concepts: n_clusters must be in [1, {states.shape[0]}], got {n_clusters}")
    model = KMeans(n_clusters=n_clusters, random_state=seed, n_init=4).fit(states)
    order = np.argsort(-np.bincount(model.labels_, minlength=n_clusters), kind="stable")
    mean = states.mean(axis=0)
    offsets = model.cluster_centers_[order] - mean
    keep = np.linalg.norm(offsets, axis=1) > 0
    directions = _unit_rows(offsets[keep])
    return [LinearConcept(v, float(-v @ mean), f"{prefix}:{k}") for k, v in enumerate(directions)]
