"""Pseudo-labels of a real image–text model (SigLIP ViT-SO400M-14-SigLIP-384 in the paper): prompts and calibration.

Concept ``t`` of image ``x`` gets ``c_t(x) = σ(a·(cos(f(x), g(prompt_t)) − b))``
(:func:`neuroneval.concepts.pseudo.pseudo_labels`). ``external.pseudo_labels.<model>`` says how:

``templates``
    ``{concept prefix: template}``; the prompt of ``class:n01440764`` is the template of the longest matching
    prefix (else ``default``, else ``"{}"``) filled with the concept's readable name from the label table's
    ``display_names`` ("tench"). Oikarinen & Weng's code, whose pseudo-labels paper 000 uses, scores the bare
    class and superclass names, which is the default ``"{}"``.
``calibration``
    ``{method: fixed, a, b}``: given constants. The paper profile uses a = 58, b = 0.13 for
    ViT-SO400M-14-SigLIP-384: their code's σ(58·(cos − 0.13)) (it writes σ(a·(cos + b)) with b = −0.13).
    ``{method: model}``: the model's own sigmoid, a = exp(logit_scale), b = −logit_bias / a (SigLIP models only).
    ``{method: fit, dataset}``: a and b minimising the binary cross-entropy against the labels of another
    labelled image dataset, over ``pseudo_labels.a_grid`` × ``pseudo_labels.b_grid``
    (:func:`neuroneval.concepts.pseudo.fit_calibration`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

DEFAULT_TEMPLATE = "{}"
CALIBRATION_METHODS = ("fixed", "model", "fit")


def concept_prompts(concept_names: Sequence[str], display_names: Mapping[str, str],
                    templates: Mapping[str, str] | None = None) -> list[str]:
    """One prompt per concept: its template (longest matching prefix, ``default``, ``"{}"``) with its readable name.

    Examples
    --------
    >>> concept_prompts(["class:n01440764", "attr:has_wing_color::red"],
    ...                 {"class:n01440764": "tench", "attr:has_wing_color::red": "wing color: red"},
    ...                 {"class:": "a photo of a {}", "default": "{}"})
    ['a photo of a tench', 'wing color: red']
    """
    templates = dict(templates or {})
    fallback = templates.pop("default", DEFAULT_TEMPLATE)
    for prefix, template in [*templates.items(), ("default", fallback)]:
        if "{}" not in template:
            raise ValueError(f"prompt template {template!r} (for {prefix!r}) has no '{{}}' for the concept name")
    prompts = []
    for concept in concept_names:
        matching = [prefix for prefix in templates if concept.startswith(prefix)]
        template = templates[max(matching, key=len)] if matching else fallback
        name = display_names.get(concept) or concept.partition(":")[2] or concept
        prompts.append(template.replace("{}", name))
    return prompts


def model_calibration(model: torch.nn.Module) -> tuple[float, float]:
    """``(a, b)`` of a SigLIP-style model's own sigmoid: σ(exp(s)·cos + β) = σ(a·(cos − b)), a = exp(s), b = −β/a."""
    logit_scale = getattr(model, "logit_scale", None)
    logit_bias = getattr(model, "logit_bias", None)
    if logit_scale is None or logit_bias is None:
        raise ValueError("calibration method 'model' needs a model with logit_scale and logit_bias (SigLIP); "
                         "this one has no logit_bias: use method 'fixed' or 'fit'")
    a = float(torch.as_tensor(logit_scale).detach().float().exp().reshape(-1)[0])
    bias = float(torch.as_tensor(logit_bias).detach().float().reshape(-1)[0])
    return a, -bias / a


def calibration_method(spec: Mapping[str, Any], *, key: str) -> dict[str, Any]:
    """The ``calibration`` block of ``spec`` (default ``{method: model}``), checked; ``key`` names it in errors."""
    calibration = dict(spec.get("calibration") or {"method": "model"})
    method = calibration.get("method")
    if method not in CALIBRATION_METHODS:
        raise ValueError(f"{key}.method: expected one of {CALIBRATION_METHODS}, got {method!r}")
    needed = {"fixed": ("a", "b"), "fit": ("dataset",), "model": ()}[method]
    missing = [name for name in needed if name not in calibration]
    if missing:
        raise ValueError(f"{key}: method {method!r} needs {missing}")
    return calibration
