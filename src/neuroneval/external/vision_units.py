"""Units of a real image classifier on a user-supplied dataset: final-layer, superclass, bottleneck, hidden.

:func:`classifier_units` runs a loaded torchvision/timm model over ordered image batches and returns one layer's
units with their known concepts (paper 000 App. F):

``softmax`` / ``logits``
    One unit per output; unit ``k`` is the dataset's class ``k`` (``class:<id>``), so the model's output order
    must be the dataset's label order and their counts must agree.
``superclass``
    One unit per superclass ``parent:<name>`` of the dataset's hierarchy: the sum of its member classes' softmax
    probabilities (:func:`neuroneval.activations.superclass_units`).
``concepts``
    Concept-bottleneck units: σ(output ``k``), unit ``k`` = the ``k``-th of the dataset's concepts starting with
    one of ``concept_prefixes`` (CUB: the 112 ``attr:`` concepts in the order of the concept table).
any module name (``layer4``, ``blocks.11``)
    The module's output through a forward hook, pooled over space (N, C, H, W) or tokens (N, T, D); one unit per
    channel, named ``"0"``, ``"1"``…; no known concepts (a setting chooses them by IoU).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy.special import expit

from neuroneval.activations import record_activations, superclass_units

FINAL_LAYERS = ("softmax", "logits", "superclass", "concepts")


@dataclass(frozen=True)
class LayerUnits:
    """One layer's ``values`` (n, K) float32, ``unit_names``, known ``unit_concepts`` and the ``pooling`` used."""

    values: np.ndarray
    unit_names: list[str]
    unit_concepts: dict[str, list[str]]
    pooling: str


def classifier_units(model: torch.nn.Module, batches: Iterable[torch.Tensor], layer: str, *,
                     concept_metadata: Mapping[str, Any], concept_prefixes: Sequence[str] = ("attr:",),
                     pooling: str = "mean", device: torch.device | str | None = None,
                     desc: str = "activations") -> LayerUnits:
    """The units of ``layer`` (see the module docstring) on every batch, in batch order.

    ``concept_metadata`` is the metadata of the dataset's label concept table
    (:mod:`neuroneval.external.image_datasets`): its ``classes``, ``hierarchy`` and ``concepts`` name the units.
    """
    recorded = {"superclass": "softmax", "concepts": "logits"}.get(layer, layer)
    values = record_activations(model, batches, [recorded], pooling=pooling, device=device, desc=desc)[recorded]
    if layer not in FINAL_LAYERS:
        return LayerUnits(values, [str(k) for k in range(values.shape[1])], {}, pooling)
    if layer == "concepts":
        names = [name for name in concept_metadata["concepts"] if name.startswith(tuple(concept_prefixes))]
        _check_width(values, names, f"concepts starting with {list(concept_prefixes)}")
        return LayerUnits(expit(values.astype(np.float64)).astype(np.float32), names,
                          {name: [name] for name in names}, "none")
    classes = list(concept_metadata["classes"])
    _check_width(values, classes, "classes")
    if layer == "superclass":
        hierarchy = concept_metadata.get("hierarchy") or {}
        if not hierarchy:
            raise ValueError("the superclass layer needs superclasses: give the dataset a hierarchy_file")
        sums, parents = superclass_units(values, classes, hierarchy)
        return LayerUnits(sums, parents, {parent: [parent] for parent in parents}, "none")
    names = [str(k) for k in range(values.shape[1])]
    return LayerUnits(values, names, {str(k): [name] for k, name in enumerate(classes)}, "none")


def _check_width(values: np.ndarray, names: Sequence[str], what: str) -> None:
    if values.shape[1] != len(names):
        raise ValueError(f"the model has {values.shape[1]} outputs but the dataset has {len(names)} {what}; "
                         "output k must be the dataset's k-th entry")
