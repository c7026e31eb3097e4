"""The catalogue of paper 001's explanation benchmark: one entry per method file, the one home of its facts.

Each :class:`MethodEntry` says what a method (or a reference row) is: its family (the grouping of paper 001's
claims), how the workflow fits it (``runner``), which files it reads beside the setting's activation and concept
tables (``inputs``), which of Tables 1 (simple explanations, l = 1) and 2 (l > 1) it belongs to, whether its
formula length is ``explain.max_length``, and the options class of :mod:`neuroneval.explain.options` that parses
``explain.methods.<name>``. Everything else reads these entries:

* the library's dispatch (:data:`neuroneval.explain.METHODS`, :func:`neuroneval.explain.benchmark.score_setting`),
* the workflow (``workflow/rules/common.smk``: the files a method reads, the method files of a setting, options),
* the schema (``explain.settings.<name>.methods`` and ``explain.simple`` enums are tested against
  :data:`EXPLAIN_METHODS`),
* the fidelity claims (:mod:`neuroneval.fidelity.claims.paper_001`: the LE and Broden families, the rows that are
  no method).

The module is standard library only, so the Snakefile reads it without loading the explain package (scipy,
scikit-learn); it lives beside that package, not in it, because importing ``neuroneval.explain.<module>`` runs the
package's ``__init__``.

Method file names: a method (``compexp``), its length-1 run (``compexp_l1``, for the methods of ``explain.simple``)
and the baselines ``random`` (l concepts, the floor of Table 2), ``random_l1`` (the floor of Table 1) and ``truth``
(the planted truth on the trained unit). The scores and tables add the ceiling rows ``ideal`` (the truth
explanations on the world's ideal units, :mod:`neuroneval.explain.ideal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

#: What a method file is: an explanation method, a baseline file, or the ceiling (a row of the scores, no file).
Role = Literal["method", "baseline", "ceiling"]
#: How ``explain_setting`` fits a method: the generic probing-data call of :func:`neuroneval.explain.explain`
#: (``probing``, ``captions`` with the world's captions), CLIP-Dissect on pseudo-label cosines, the top next
#: tokens, the chat server, or a baseline.
Runner = Literal["probing", "captions", "clip_dissect", "tokens", "llm", "random", "truth", "none"]
#: Files a method reads beside the setting's tables: the ground-truth labels, the pseudo-label table
#: (``explain.pseudo_source``), the vision world (captions), the text world (next tokens), the world the LLM
#: explainer shows (captions or token contexts), the setting's truth table.
Input = Literal["labels", "pseudo", "vision_world", "text_world", "llm_world", "truth"]

#: The suffix of a method's length-1 run (``compexp_l1``).
SIMPLE_SUFFIX = "_l1"


@dataclass(frozen=True)
class MethodEntry:
    """One row of the catalogue (see the module docstring).

    ``tables`` are the paper tables its rows belong to; a method of ``explain.simple`` also gets a length-1 run
    ``<name>_l1`` in Table 1. ``formula``: its ``max_length`` is ``explain.max_length`` (l of Table 2).
    ``spatial``: a setting may run it on a layer's activation maps against concept masks
    (``explain.settings.<name>.spatial``). ``text``: its explanations are free text (no concept simulator reads
    them; CoSy and the crowd skip them). ``probing``: the fields of :class:`~neuroneval.explain.base.ProbingData`
    its library function reads. ``options`` names the class of :mod:`neuroneval.explain.options` parsing
    ``explain.methods.<name>`` (empty: none)."""

    name: str
    role: Role
    family: str
    runner: Runner
    tables: tuple[int, ...]
    inputs: tuple[Input, ...] = ()
    probing: tuple[str, ...] = ("concepts",)
    formula: bool = False
    spatial: bool = False
    text: bool = False
    options: str = ""
    summary: str = ""


#: Every method file (and the ceiling row), by name, methods in the schema's order.
CATALOGUE: Mapping[str, MethodEntry] = {entry.name: entry for entry in (
    MethodEntry("netdissect", "method", "broden", "probing", (1,), spatial=True, options="DissectionOptions",
                summary="Network Dissection: concept of highest IoU with the top-quantile activations"),
    MethodEntry("clip_dissect", "method", "clip_dissect", "clip_dissect", (1,), ("pseudo",),
                options="ClipDissectOptions",
                summary="CLIP-Dissect: soft-WPMI of the unit's top inputs with the pseudo-label cosines"),
    MethodEntry("le_label", "method", "linear", "probing", (2,), ("labels",), options="LinearOptions",
                summary="Linear Explanations on ground-truth labels"),
    MethodEntry("le_pseudo", "method", "linear", "probing", (2,), ("pseudo",), options="LinearOptions",
                summary="Linear Explanations on pseudo-labels"),
    MethodEntry("compexp", "method", "broden", "probing", (2,), formula=True, spatial=True,
                options="CompositionalOptions",
                summary="Compositional Explanations: beam search over AND/OR/AND NOT formulas, IoU"),
    MethodEntry("invert", "method", "invert", "probing", (2,), formula=True, options="CompositionalOptions",
                summary="INVERT: beam search over formulas, AUC of the activation for the formula's label"),
    MethodEntry("cce", "method", "broden", "probing", (2,), formula=True, spatial=True, options="ClusteredOptions",
                summary="Clustered Compositional Explanations: one IoU formula per activation cluster"),
    MethodEntry("captions", "method", "captions", "captions", (1,), ("vision_world",), ("captions",), text=True,
                options="CaptionOptions",
                summary="caption words over-represented among the top-activating inputs"),
    MethodEntry("top_tokens", "method", "tokens", "tokens", (1,), ("text_world",), ("tokens",),
                options="CaptionOptions",
                summary="tokens over-represented at a text unit's top-activating positions"),
    MethodEntry("llm", "method", "llm", "llm", (1,), ("llm_world",), ("contexts",), text=True,
                options="LLMOptions",
                summary="an OpenAI-compatible chat server explains from the top-activating inputs (opt-in)"),
    MethodEntry("random", "baseline", "random", "random", (2,), options="RandomOptions",
                summary="explain.max_length random concepts per unit: the floor of Table 2"),
    MethodEntry("random_l1", "baseline", "random", "random", (1,), options="RandomOptions",
                summary="one random concept per unit: the floor of Table 1"),
    MethodEntry("truth", "baseline", "truth", "truth", (1, 2), ("truth",),
                summary="the planted truth on the trained unit (a reference row)"),
    MethodEntry("ideal", "ceiling", "truth", "none", (1, 2),
                summary="the truth explanations on the world's ideal units: the ceiling (no file)"),
)}

#: The methods a setting may list (``explain.settings.<name>.methods``; the schema's enum is tested against it).
EXPLAIN_METHODS = tuple(name for name, entry in CATALOGUE.items() if entry.role == "method")
#: The methods a setting may run on activation maps against concept masks (``explain.settings.<name>.spatial``).
SPATIAL_METHODS = tuple(name for name in EXPLAIN_METHODS if CATALOGUE[name].spatial)
#: The methods with a length-1 run ``<name>_l1`` in Table 1 when ``explain.simple`` lists them (those of Table 2).
SIMPLE_RUN_METHODS = tuple(name for name in EXPLAIN_METHODS if CATALOGUE[name].tables == (2,))
#: The Table 1 method files of concept explanations an ``explain.cosy`` or ``explain.crowd`` block may list: the
#: one-concept methods and the length-1 runs (the schema's ``$defs/explain_simple_files`` is tested against it).
SIMPLE_CONCEPT_FILES = (
    *(name for name in EXPLAIN_METHODS if CATALOGUE[name].tables == (1,) and not CATALOGUE[name].text),
    *(f"{name}{SIMPLE_SUFFIX}" for name in SIMPLE_RUN_METHODS),
)
#: The baseline files every explained setting gets.
BASELINES = tuple(name for name, entry in CATALOGUE.items() if entry.role == "baseline")
#: The ceiling rows (:data:`neuroneval.explain.ideal.IDEAL`; a test checks the two agree).
IDEAL = next(name for name, entry in CATALOGUE.items() if entry.role == "ceiling")
#: Rows of the scores and tables that are no method: the baselines and the ceiling (never ranked or claimed).
REFERENCE_ROWS = (*BASELINES, IDEAL)
#: The baselines every CoSy and crowd table scores beside the methods (the floor and ceiling of Table 1).
BENCHMARK_BASELINES = ("random_l1", "truth")


def methods_of_family(family: str) -> tuple[str, ...]:
    """The explanation methods of one family, in catalogue order (``"linear"`` → ``le_label``, ``le_pseudo``).

    >>> methods_of_family("broden")
    ('netdissect', 'compexp', 'cce')
    """
    return tuple(name for name in EXPLAIN_METHODS if CATALOGUE[name].family == family)


def base_method(name: str) -> tuple[str, bool]:
    """``("compexp", True)`` for ``compexp_l1``; ``(name, False)`` otherwise (baselines included).

    >>> base_method("compexp_l1"), base_method("random_l1")
    (('compexp', True), ('random_l1', False))
    """
    if name.endswith(SIMPLE_SUFFIX) and name != "random_l1":
        return name[: -len(SIMPLE_SUFFIX)], True
    return name, False


def method_entry(name: str) -> MethodEntry:
    """The catalogue entry of a method file name (an ``_l1`` run: its method's entry); unknown names are errors."""
    base, _ = base_method(name)
    if base not in CATALOGUE:
        raise ValueError(f"unknown explanation method file {name!r}; known methods: {list(CATALOGUE)} "
                         f"(and <method>{SIMPLE_SUFFIX} for the methods of explain.simple)")
    return CATALOGUE[base]


def method_tables(name: str) -> tuple[int, ...]:
    """Which of Tables 1 (simple, l = 1) and 2 (l > 1) a method file belongs to: its entry's tables; an ``_l1``
    run: Table 1."""
    _, simple = base_method(name)
    return (1,) if simple else method_entry(name).tables


def method_files(spec: Mapping[str, Any], simple: Sequence[str]) -> list[str]:
    """The method file names of one explained setting: its methods, their ``_l1`` runs and the baselines."""
    methods = list(spec["methods"])
    return [*methods, *(f"{name}{SIMPLE_SUFFIX}" for name in simple if name in methods), *BASELINES]


def method_options(explain: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The options a method file is made with: ``explain.methods.<method>``, with the formula length
    ``explain.max_length`` (or 1 for an ``_l1`` run); a random baseline's length and seed."""
    base, simple = base_method(name)
    entry = method_entry(name)
    if entry.runner == "random":
        return {"length": int(explain["max_length"]) if 2 in entry.tables else 1, "seed": int(explain["random_seed"])}
    if entry.runner == "truth":
        return {}
    options = dict((explain.get("methods") or {}).get(base) or {})
    if entry.formula:
        options["max_length"] = int(explain["max_length"])
    if simple:
        options["max_length"] = 1
    return options


def benchmark_methods(methods: Sequence[str]) -> list[str]:
    """The method files an ``explain.cosy`` or ``explain.crowd`` block scores: its methods, then the two
    baselines (once each)."""
    return list(dict.fromkeys([*methods, *BENCHMARK_BASELINES]))


def benchmark_files(settings: Sequence[str], methods: Sequence[str]) -> list[tuple[str, str]]:
    """(setting, method file) pairs of :func:`benchmark_methods`, settings outermost."""
    return [(setting, method) for setting in settings for method in benchmark_methods(methods)]
