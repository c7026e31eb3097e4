"""Explanation methods and simulation scoring (papers 001 Sec. 5 / App. B.2 and 002 Sec. 5; docs/explain.md).

Public API::

    parse(text, kind=None) -> Explanation          # concept | formula | linear | clustered | text
    to_text(explanation) -> str
    explanation_frame(units, explanations, scores) -> DataFrame   # unit, explanation, length, kind, scores…
    read_explanations(path) / write_explanations(path, frame)     # explanations/<setting>/<method>.csv
    ProbingData.build(concepts, concept_names, masks=, captions=, tokens=, contexts=)
    explain(method, activations, probing, params=None, unit_names=None) -> DataFrame
    METHODS: name -> MethodSpec (function, options class, what it needs)
    simulate(explanation, concepts, names) / simulate_table(frame, concepts, names) -> predicted activations
    simulation_correlation(activations, simulated) -> (K,)
    score_explanations(frame, activations, concepts, names) -> per-unit scores (ρ + sanity-passing metrics)
    OpenAICompatibleChat, LLMExplainer, LLMSimulator                 # any OpenAI-compatible chat server
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from neuroneval.explain.base import Explainer, ProbingData, Simulator
from neuroneval.explain.baselines import random_explanations, truth_explanations
from neuroneval.explain.captions import caption_explanations, top_token_explanations
from neuroneval.explain.clip_dissect import clip_dissect, soft_wpmi
from neuroneval.explain.compositional import clustered_explanations, compositional_explanations, invert_explanations
from neuroneval.explain.dissection import network_dissection
from neuroneval.explain.explanation import (
    KINDS,
    And,
    Clustered,
    Concept,
    Explanation,
    ExplanationSyntaxError,
    Linear,
    Not,
    Or,
    Text,
    explanation_frame,
    length,
    parse,
    read_explanations,
    to_text,
    validate_explanations,
    write_explanations,
)
from neuroneval.explain.linear import linear_explanations
from neuroneval.explain.llm_backend import LLMExplainer, LLMSimulator, OpenAICompatibleChat
from neuroneval.explain.options import (
    CaptionOptions,
    ClipDissectOptions,
    ClusteredOptions,
    CompositionalOptions,
    DissectionOptions,
    LinearOptions,
    LLMOptions,
    OptionsError,
    RandomOptions,
)
from neuroneval.explain.simulate import (
    SANITY_PASSING_METRICS,
    ConceptSimulator,
    UnknownConceptError,
    score_explanations,
    simulate,
    simulate_table,
    simulation_correlation,
    simulation_metrics,
)


@dataclass(frozen=True)
class MethodSpec:
    """One explanation method: ``function(activations, probing, options, unit_names=...)`` and its options."""

    name: str
    function: Callable[..., pd.DataFrame]
    options: type
    needs: tuple[str, ...]
    summary: str


#: The offline methods by their file name in ``explanations/<setting>/<method>.csv``. ``le_label`` and
#: ``le_pseudo`` are one method on two concept sources: the caller passes labels or pseudo-labels.
METHODS: Mapping[str, MethodSpec] = {spec.name: spec for spec in (
    MethodSpec("netdissect", network_dissection, DissectionOptions, ("concepts",),
               "Network Dissection: concept of highest IoU with the top-quantile activations"),
    MethodSpec("compexp", compositional_explanations, CompositionalOptions, ("concepts",),
               "Compositional Explanations: beam search over AND/OR/AND NOT formulas, IoU"),
    MethodSpec("invert", invert_explanations, CompositionalOptions, ("concepts",),
               "INVERT: beam search over formulas, AUC of the activation for the formula's label"),
    MethodSpec("cce", clustered_explanations, ClusteredOptions, ("concepts",),
               "Clustered Compositional Explanations: one IoU formula per activation cluster"),
    MethodSpec("le_label", linear_explanations, LinearOptions, ("concepts",),
               "Linear Explanations on ground-truth labels"),
    MethodSpec("le_pseudo", linear_explanations, LinearOptions, ("concepts",),
               "Linear Explanations on pseudo-labels"),
    MethodSpec("captions", caption_explanations, CaptionOptions, ("captions",),
               "caption words over-represented among the top-activating inputs"),
    MethodSpec("top_tokens", top_token_explanations, CaptionOptions, ("tokens",),
               "tokens over-represented at a text unit's top-activating positions"),
)}


def explain(method: str, activations: Any, probing: ProbingData, params: Mapping[str, Any] | None = None, *,
            unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """Run one offline method of :data:`METHODS` with options parsed from ``params`` (unknown keys are errors).

    CLIP-Dissect (:func:`clip_dissect`, needs a similarity matrix), the baselines (:func:`random_explanations`,
    :func:`truth_explanations`) and the LLM explainer take other inputs and are called directly.
    """
    if method not in METHODS:
        raise ValueError(f"unknown explanation method {method!r}; known: {sorted(METHODS)}")
    spec = METHODS[method]
    options = spec.options.from_params(params)
    return spec.function(activations, probing, options, unit_names=unit_names)


@dataclass(frozen=True)
class MethodExplainer:
    """An :class:`Explainer` for a method of :data:`METHODS` with fixed params."""

    name: str
    params: Mapping[str, Any] | None = None

    def explain(self, activations: Any, probing: ProbingData, *,
                unit_names: Sequence[str] | None = None) -> pd.DataFrame:
        return explain(self.name, activations, probing, self.params, unit_names=unit_names)


__all__ = [
    "KINDS", "METHODS", "SANITY_PASSING_METRICS", "And", "CaptionOptions", "ClipDissectOptions", "Clustered",
    "ClusteredOptions", "CompositionalOptions", "Concept", "ConceptSimulator", "DissectionOptions", "Explainer",
    "Explanation", "ExplanationSyntaxError", "LLMExplainer", "LLMOptions", "LLMSimulator", "Linear",
    "LinearOptions", "MethodExplainer", "MethodSpec", "Not", "OpenAICompatibleChat", "OptionsError", "Or",
    "ProbingData", "RandomOptions", "Simulator", "Text", "UnknownConceptError", "caption_explanations",
    "clip_dissect", "clustered_explanations", "compositional_explanations", "explain", "explanation_frame",
    "invert_explanations", "length", "linear_explanations", "network_dissection", "parse", "random_explanations",
    "read_explanations", "score_explanations", "simulate", "simulate_table", "simulation_correlation",
    "simulation_metrics", "soft_wpmi", "to_text", "top_token_explanations", "truth_explanations",
    "validate_explanations", "write_explanations",
]
