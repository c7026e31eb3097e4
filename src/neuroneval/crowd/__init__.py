"""Crowd-sourced evaluation of neuron explanations (paper 001).

- :mod:`~neuroneval.crowd.sampling`: sampling distributions q (uniform, activation-only, Eq. 4) and draws.
- :mod:`~neuroneval.crowd.estimator`: importance-sampling correlation estimate (Eq. 5–6), full-data ρ (Eq. 1).
- :mod:`~neuroneval.crowd.aggregation`: average, majority vote, Bayes posterior (Eq. 7–8).
- :mod:`~neuroneval.crowd.raters`: simulated raters and the Relative Correlation Error (Eq. 13).
- Simulated study (Setting 1, Eq. 9–13): :mod:`~neuroneval.crowd.study_units` (units and their explanations,
  Eq. 9–10), :mod:`~neuroneval.crowd.study_options` (its typed options), :mod:`~neuroneval.crowd.simulation`
  (per-unit relative errors of simulated studies), :mod:`~neuroneval.crowd.curves` (the curve and per-unit
  tables), :mod:`~neuroneval.crowd.cost_reduction` (cost-reduction factors at equal RCE),
  :mod:`~neuroneval.crowd.study_files` (its input tables and per-unit error files).
- Real studies, from task pages to estimates: :mod:`~neuroneval.crowd.design` (importance-sampled inputs grouped
  into tasks), :mod:`~neuroneval.crowd.task_pages` (the HTML pages, showing the user's media by input id,
  :mod:`neuroneval.input_media`), :mod:`~neuroneval.crowd.prompts` (rater-facing wording, formula priors),
  :mod:`~neuroneval.crowd.study_folder` (the study folder and its file-level entry point),
  :mod:`~neuroneval.crowd.ingest` (ratings to estimates), :mod:`~neuroneval.crowd.gold` (gold items and the rater
  error rate η), :mod:`~neuroneval.crowd.real_study` (Setting 2: RCE against cost from collected ratings),
  :mod:`~neuroneval.crowd.cost_model` (dollars and expected RCE of a design), :mod:`~neuroneval.crowd.setting2_files`
  (their file-level entry points; imported on use, not re-exported here).
- :mod:`~neuroneval.figures.crowd`: figures of the two curves (re-exported here).
"""

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    aggregate,
    average_rating,
    bayes_posterior,
    majority_vote,
    pseudo_label_prior,
)
from neuroneval.crowd.cost_reduction import cost_at_rce, cost_reduction_factor, cost_reduction_table
from neuroneval.crowd.curves import aggregation_study, sampling_study
from neuroneval.crowd.design import StudyDesign, design_study
from neuroneval.crowd.estimator import (
    correlation_matrix,
    importance_weights,
    is_correlation,
    weighted_mean,
    weighted_std,
)
from neuroneval.crowd.ingest import (
    CrowdWarning,
    RatingsError,
    estimate_correlations,
    ingest_study,
    rating_counts,
    read_ratings,
)
from neuroneval.crowd.raters import relative_correlation_error, relative_errors, simulate_ratings
from neuroneval.crowd.sampling import SAMPLING_METHODS, draw_indices, sampling_distribution, standardize
from neuroneval.crowd.simulation import aggregation_errors, sampling_errors
from neuroneval.crowd.study_files import read_study_units, read_unit_errors, write_unit_errors
from neuroneval.crowd.study_folder import (
    design_study_files,
    read_design,
    read_pairs,
    write_study,
)
from neuroneval.crowd.study_options import (
    AggregationOptions,
    CostReductionOptions,
    SamplingOptions,
    SimulationOptions,
)
from neuroneval.crowd.study_units import StudyUnits, select_explanations
from neuroneval.crowd.task_pages import encode_png, render_batch_html
from neuroneval.figures.crowd import plot_aggregation_curves, plot_sampling_curves

__all__ = [
    "AGGREGATION_METHODS",
    "SAMPLING_METHODS",
    "AggregationOptions",
    "CostReductionOptions",
    "CrowdWarning",
    "RatingsError",
    "SamplingOptions",
    "SimulationOptions",
    "StudyDesign",
    "StudyUnits",
    "aggregate",
    "aggregation_errors",
    "aggregation_study",
    "average_rating",
    "bayes_posterior",
    "correlation_matrix",
    "cost_at_rce",
    "cost_reduction_factor",
    "cost_reduction_table",
    "design_study",
    "design_study_files",
    "draw_indices",
    "encode_png",
    "estimate_correlations",
    "importance_weights",
    "ingest_study",
    "is_correlation",
    "majority_vote",
    "plot_aggregation_curves",
    "plot_sampling_curves",
    "pseudo_label_prior",
    "rating_counts",
    "read_design",
    "read_pairs",
    "read_ratings",
    "read_study_units",
    "read_unit_errors",
    "relative_correlation_error",
    "relative_errors",
    "render_batch_html",
    "sampling_distribution",
    "sampling_errors",
    "sampling_study",
    "select_explanations",
    "simulate_ratings",
    "standardize",
    "weighted_mean",
    "weighted_std",
    "write_study",
    "write_unit_errors",
]
