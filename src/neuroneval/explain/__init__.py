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
from neuroneval.explain_catalogue import CATALOGUE


@dataclass(frozen=True)
class MethodSpec:
    """One explanation method: ``function(activations, probing, options, unit_names=...)`` and its options."""

    name: str
    function: Callable[..., pd.DataFrame]
    options: type
    needs: tuple[str, ...]
    summary: str


#: The library function of each offline method (CLIP-Dissect, the LLM explainer and the baselines take other inputs).
_FITTERS: Mapping[str, Callable[..., pd.DataFrame]] = {
    "netdissect": network_dissection, "compexp": compositional_explanations, "invert": invert_explanations,
    "cce": clustered_explanations, "le_label": linear_explanations, "le_pseudo": linear_explanations,
    "captions": caption_explanations, "top_tokens": top_token_explanations,
}
_OPTIONS: Mapping[str, type] = {options.__name__: options for options in (
    CaptionOptions, ClusteredOptions, CompositionalOptions, DissectionOptions, LinearOptions)}

#: The offline methods by their file name in ``explanations/<setting>/<method>.csv``: the function above with the
#: options class, probing data and summary of the method's :data:`~neuroneval.explain_catalogue.CATALOGUE` entry.
#: ``le_label`` and ``le_pseudo`` are one method on two concept sources: the caller passes labels or pseudo-labels.
METHODS: Mapping[str, MethodSpec] = {
    name: MethodSpec(name, function, _OPTIONS[CATALOGUE[name].options], CATALOGUE[name].probing,
                     CATALOGUE[name].summary)
    for name, function in _FITTERS.items()
}


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
