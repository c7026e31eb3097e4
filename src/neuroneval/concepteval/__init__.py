"""Paper 004: concepts as virtual neurons, their faithfulness and readability, and the measurement-theory
meta-evaluation of those measures (docs/concepteval.md).

Modules: :mod:`.concepts` (the :class:`Concept` interface and the neuron / PCA / k-means / random families),
:mod:`.sae` and :mod:`.probes` (SAE features and TCAV-style probe directions), :mod:`.perturbation` (GRAD and
ABL, Eq. 2–5), :mod:`.faithfulness` (Eq. 1, 6–8), :mod:`.lm_split` (hidden states and head of GPT-2-style
LMs), :mod:`.patterns` (input/output patterns, Sec. 3.2), :mod:`.readability` (Eq. 9–12),
:mod:`.simulation` (explain-then-simulate readability, Sec. 3.2), :mod:`.measurement` (Sec. 4, Eq. 13–15);
options derive from :class:`neuroneval.options.Options`.
"""

from neuroneval.concepteval.concepts import (
    Concept,
    FunctionConcept,
    LinearConcept,
    ReluConcept,
    activate_all,
    kmeans_concepts,
    neuron_concepts,
    pca_concepts,
    random_concepts,
)
from neuroneval.concepteval.faithfulness import MEASURES, FaithfulnessOptions, faithfulness, position_differences
from neuroneval.concepteval.lm_split import LMSplit, concept_activation_function, site_activations, split_lm
from neuroneval.concepteval.measurement import (
    BootstrapOptions,
    MeasurementOptions,
    RaterOptions,
    concurrent_validity,
    inter_rater,
    kendall_tau,
    mean_with_interval,
    mtmm,
    retest_reliability,
    simulate_raters,
    subset_consistency,
)
from neuroneval.concepteval.patterns import PatternOptions, input_patterns, output_patterns
from neuroneval.concepteval.perturbation import AblationOptions, ablate, ascent_direction
from neuroneval.concepteval.probes import ProbeOptions, fit_probes
from neuroneval.concepteval.readability import CooccurrenceCorpus, ReadabilityOptions, readability
from neuroneval.concepteval.sae import SAEOptions, SparseAutoencoder, sae_concepts, train_sae
from neuroneval.concepteval.simulation import SIMULATION_MEASURE, SimulationOptions, simulation_readability

__all__ = [
    "MEASURES", "SIMULATION_MEASURE", "AblationOptions", "BootstrapOptions", "Concept", "CooccurrenceCorpus",
    "FaithfulnessOptions", "FunctionConcept", "LMSplit", "LinearConcept", "MeasurementOptions", "PatternOptions",
    "ProbeOptions", "RaterOptions", "ReadabilityOptions", "ReluConcept", "SAEOptions", "SimulationOptions",
    "SparseAutoencoder", "ablate", "activate_all", "ascent_direction", "concept_activation_function",
    "concurrent_validity", "faithfulness", "fit_probes", "input_patterns", "inter_rater", "kendall_tau",
    "kmeans_concepts", "mean_with_interval", "mtmm", "neuron_concepts", "output_patterns", "pca_concepts",
    "position_differences", "random_concepts", "readability", "retest_reliability", "sae_concepts", "simulate_raters",
    "simulation_readability", "site_activations", "split_lm", "subset_consistency", "train_sae",
]
