"""Paper 004: concepts as virtual neurons, their faithfulness and readability, and the measurement-theory
meta-evaluation of those measures (docs/concepteval.md).

Modules: :mod:`.concepts` (the :class:`Concept` interface and the neuron / PCA / k-means / random families),
:mod:`.sae` and :mod:`.probes` (SAE features and TCAV-style probe directions), :mod:`.perturbation` (GRAD and
ABL, Eq. 2–5), :mod:`.faithfulness` (Eq. 1, 6–8), :mod:`.lm_split` (hidden states and head of GPT-2-style
LMs), :mod:`.patterns` (input/output patterns, Sec. 3.2), :mod:`.readability` (Eq. 9–12),
:mod:`.simulation` (explain-then-simulate readability, Sec. 3.2), :mod:`.measurement` (Sec. 4, Eq. 13–15);
:mod:`.protocol` (runs, families: the constants the rules read), :mod:`.benchmark` (windows,
planted truth, families, the measures of a run), :mod:`.tables` (the meta-evaluation tables), :mod:`.sources`
(the LM and token stream read, the benchmark's files); options derive from :class:`neuroneval.options.Options`.
Names load on first use (PEP 562), so importing a submodule for a constant (``protocol.RUNS``) imports no torch.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

#: Public name -> the module that defines it (loaded on first access).
LAZY_NAMES = {
    "FAMILIES": "neuroneval.concepteval.protocol",
    "RUNS": "neuroneval.concepteval.protocol",
    "MeasureOptions": "neuroneval.concepteval.benchmark",
    "WindowOptions": "neuroneval.concepteval.benchmark",
    "build_families": "neuroneval.concepteval.benchmark",
    "hidden_parts": "neuroneval.concepteval.benchmark",
    "measure_run": "neuroneval.concepteval.benchmark",
    "run_measures": "neuroneval.concepteval.benchmark",
    "Concept": "neuroneval.concepteval.concepts",
    "FunctionConcept": "neuroneval.concepteval.concepts",
    "LinearConcept": "neuroneval.concepteval.concepts",
    "ReluConcept": "neuroneval.concepteval.concepts",
    "activate_all": "neuroneval.concepteval.concepts",
    "kmeans_concepts": "neuroneval.concepteval.concepts",
    "neuron_concepts": "neuroneval.concepteval.concepts",
    "pca_concepts": "neuroneval.concepteval.concepts",
    "random_concepts": "neuroneval.concepteval.concepts",
    "FaithfulnessOptions": "neuroneval.concepteval.faithfulness",
    "MEASURES": "neuroneval.concepteval.faithfulness",
    "faithfulness": "neuroneval.concepteval.faithfulness",
    "position_differences": "neuroneval.concepteval.faithfulness",
    "LMSplit": "neuroneval.concepteval.lm_split",
    "concept_activation_function": "neuroneval.concepteval.lm_split",
    "site_activations": "neuroneval.concepteval.lm_split",
    "split_lm": "neuroneval.concepteval.lm_split",
    "BootstrapOptions": "neuroneval.concepteval.measurement",
    "MeasurementOptions": "neuroneval.concepteval.measurement",
    "RaterOptions": "neuroneval.concepteval.measurement",
    "concurrent_validity": "neuroneval.concepteval.measurement",
    "inter_rater": "neuroneval.concepteval.measurement",
    "kendall_tau": "neuroneval.concepteval.measurement",
    "mean_with_interval": "neuroneval.concepteval.measurement",
    "mtmm": "neuroneval.concepteval.measurement",
    "retest_reliability": "neuroneval.concepteval.measurement",
    "simulate_raters": "neuroneval.concepteval.measurement",
    "subset_consistency": "neuroneval.concepteval.measurement",
    "PatternOptions": "neuroneval.concepteval.patterns",
    "input_patterns": "neuroneval.concepteval.patterns",
    "output_patterns": "neuroneval.concepteval.patterns",
    "AblationOptions": "neuroneval.concepteval.perturbation",
    "ablate": "neuroneval.concepteval.perturbation",
    "ascent_direction": "neuroneval.concepteval.perturbation",
    "ProbeOptions": "neuroneval.concepteval.probes",
    "fit_probes": "neuroneval.concepteval.probes",
    "CooccurrenceCorpus": "neuroneval.concepteval.readability",
    "ReadabilityOptions": "neuroneval.concepteval.readability",
    "readability": "neuroneval.concepteval.readability",
    "SAEOptions": "neuroneval.concepteval.sae",
    "SparseAutoencoder": "neuroneval.concepteval.sae",
    "sae_concepts": "neuroneval.concepteval.sae",
    "train_sae": "neuroneval.concepteval.sae",
    "SIMULATION_MEASURE": "neuroneval.concepteval.simulation",
    "SimulationOptions": "neuroneval.concepteval.simulation",
    "simulation_readability": "neuroneval.concepteval.simulation",
    "TokenSource": "neuroneval.concepteval.sources",
    "load_token_source": "neuroneval.concepteval.sources",
    "BenchmarkTables": "neuroneval.concepteval.tables",
    "TableOptions": "neuroneval.concepteval.tables",
    "benchmark_tables": "neuroneval.concepteval.tables",
}

__all__ = sorted(LAZY_NAMES)
#: Functions named like the module that defines them (``readability.readability``): the package attribute is the
#: function, as an eager ``from .readability import readability`` would leave it.
FUNCTIONS_NAMED_LIKE_THEIR_MODULE = frozenset(name for name, module in LAZY_NAMES.items()
                                              if module.rpartition(".")[2] == name)


class _Package(types.ModuleType):
    """The package module: when the import system binds a loaded submodule as an attribute of the package, a
    function of the same name (:data:`FUNCTIONS_NAMED_LIKE_THEIR_MODULE`) takes its place."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in FUNCTIONS_NAMED_LIKE_THEIR_MODULE and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> Any:
    if name in LAZY_NAMES:
        return getattr(importlib.import_module(LAZY_NAMES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_NAMES})
