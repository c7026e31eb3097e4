"""Activations of a setting's units on any images (synthetic sets), exactly as its activation tables record them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np


def classifier_units(checkpoint: str | Path, images: np.ndarray, *, layer: str, hierarchy: Mapping[str, Sequence[str]],
                     batch_size: int = 512, pooling: str = "mean") -> tuple[np.ndarray, list[str]]:
    """(N, K) float32 activations of ``layer`` of the classifier at ``checkpoint`` and the unit names.

    Unit names and values follow ``vision_classifier_activations`` (the workflow's activation tables):
    ``softmax``/``logits`` units ``"0".."C-1"``, ``superclass`` units named by parent (sum of member
    probabilities), ``concepts`` units named by bottleneck concept, any other module pooled per channel.
    """
    from neuroneval.activations import record_activations, superclass_units
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor

    model, card = load_checkpoint(checkpoint)
    batches = [images_to_tensor(images[start : start + batch_size]) for start in range(0, len(images), batch_size)]
    recorded = {"superclass": "softmax", "concepts": "concept_probabilities"}.get(layer, layer)
    values = record_activations(model, batches, [recorded], pooling=pooling, desc=f"cosy {layer}")[recorded]
    if layer == "superclass":
        return superclass_units(values, card["class_names"], hierarchy)
    if layer == "concepts":
        return values, list(card["concept_names"])
    return values, [str(k) for k in range(values.shape[1])]


def external_units(spec: Mapping[str, Any], images: np.ndarray, *, layer: str, concept_metadata: Mapping[str, Any],
                   batch_size: int = 64, pooling: str = "mean", device: str = "auto") -> tuple[np.ndarray, list[str]]:
    """(N, K) float32 activations of ``layer`` of a user-supplied torchvision/timm classifier and the unit names.

    ``spec`` is the resolved ``external.models.<name>`` entry; images go through the model's own preprocessing
    (resize, crop, normalisation), so synthetic images of any resolution fit. Unit names and values follow the
    paper profile's activation tables (``neuroneval.external.vision_units``), so they line up with the control
    activations of the same setting.
    """
    import torch

    from neuroneval.external.config import loader_spec
    from neuroneval.external.images import resolve_device
    from neuroneval.external.vision_units import classifier_units as layer_units
    from neuroneval.models.loaders import load_model

    target = resolve_device(device)
    loaded = load_model(loader_spec(spec))
    loaded.module.to(target)
    batches = [torch.stack([loaded.preprocess(image) for image in images[start : start + batch_size]])
               for start in range(0, len(images), batch_size)]
    units = layer_units(loaded.module, batches, layer, concept_metadata=concept_metadata,
                        concept_prefixes=spec.get("concept_prefixes", ["attr:"]), pooling=pooling, device=target,
                        desc=f"cosy {layer}")
    return units.values, list(units.unit_names)


def custom_units(record_spec: Mapping[str, Any], images: np.ndarray, *, layer: str, preprocessing: Any,
                 input_shape: Sequence[int] | None = None, key: str = "the preprocessing", batch_size: int = 64,
                 pooling: str = "mean", device: str = "cpu") -> tuple[np.ndarray, list[str]]:
    """(N, K) float32 activations of ``layer`` of your own model (``family: custom``) on ``uint8`` images, and the
    unit names ``<layer>.<i>``.

    The images become model inputs by the model's declared preprocessing
    (:func:`neuroneval.external.preprocess.preprocess_images`), are written as one array and recorded by
    :func:`~neuroneval.external.own.record_custom_layer`, the path that recorded the setting's own inputs, so
    synthetic and control activations come from the same forward pass, hooks and pooling. ``input_shape``: the
    shape of one input the model was recorded on (a row of the setting's array dataset, of ``neuroneval cosy
    --control-inputs``); preprocessed inputs of another shape raise ``ValueError`` naming ``key`` (where the
    preprocessing is declared).
    """
    import tempfile

    from neuroneval.external.own import record_custom_layer
    from neuroneval.external.preprocess import preprocess_images

    inputs = preprocess_images(images, preprocessing)
    if input_shape is not None and tuple(inputs.shape[1:]) != tuple(input_shape):
        raise ValueError(f"{key} turns images into inputs of shape {tuple(inputs.shape[1:])}, but the inputs the "
                         f"model was recorded on have shape {tuple(input_shape)}: declare image_size, channels, "
                         "layout and flatten so they match (docs/your_model.md)")
    with tempfile.TemporaryDirectory(prefix="neuroneval-cosy-") as scratch:
        array = Path(scratch) / "images.npy"
        np.save(array, inputs)
        frame, _ = record_custom_layer(record_spec, array, layer, Path(scratch) / "recorded", class_names=[],
                                       options={"batch_size": int(batch_size), "pooling": pooling,
                                                "device": device})
    unit_names = [column for column in frame.columns if column != "input_id"]
    return frame[unit_names].to_numpy(dtype=np.float32), unit_names


def custom_model_on_images(images: Any, run: Mapping[str, Any], *, layer: str, pooling: str,
                           runtime: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """Your own model on generated ``uint8`` images, through its declared ``preprocess``
    (:func:`neuroneval.cosy.activations.custom_units`): the (N, K) activations of ``layer`` and the unit names.

    ``run`` holds ``model_name``, ``model`` (the record spec), ``preprocess`` (the model's block) and
    ``array_images`` (the images file of the setting's array dataset, or None); ``runtime`` the ``external:``
    ``batch_size`` and ``device``. Rules ``cosy_custom_units`` and ``explain_cosy_score`` both run it.
    """
    from neuroneval.external.images import resolve_device
    from neuroneval.external.own import array_row_shape
    from neuroneval.external.preprocess import ImagePreprocessing

    key = f"external.models.{run['model_name']}"
    return custom_units(
        run["model"], images, layer=layer,
        preprocessing=ImagePreprocessing.of_model({"preprocess": run["preprocess"]}, key=key),
        input_shape=array_row_shape(run["array_images"]) if run["array_images"] else None, key=f"{key}.preprocess",
        batch_size=int(runtime["batch_size"]), pooling=pooling, device=str(resolve_device(runtime["device"])))
