"""Cost-reduction factors of a crowd study as a function of concept rarity (paper 001, Sec. 4.1–4.2).

Paper 001 reports ≈ 30× fewer labels with importance sampling (Eq. 4) than with uniform sampling, and a
further ≈ 5× from Bayesian aggregation with a pseudo-label prior (Eq. 7–8), on ImageNet units whose concepts
are rare: one class is ≈ 0.1 % of the probing set. Both gains come from rarity — uniform sampling rarely
draws a positive input, and a flipped negative rating swamps the few positives — so a factor measured on a
world whose concepts are common says little about the paper's claim. This module plants units whose
concept has a chosen rarity γ and everything else fixed, and reads the factors off at each γ.

Planted world at rarity γ (n inputs, K units; every unit has its own concept):

- concept c ∈ {0, 1}ⁿ with exactly max(1, round(γ n)) positives at random positions;
- activation a = s·c + z, z of mean 0 and variance 1 (standardised log-normal by default: a heavy right
  tail, as units that also fire on inputs without the concept; or N(0, 1)), with s = ρ / (σ_c √(1 − ρ²))
  and σ_c = √(γ(1 − γ)), so that the
  population correlation of a and c is the chosen ρ_gt whatever γ;
- pseudo-label score x = d′·c + z′, z′ ~ N(0, 1), d′ = √2 Φ⁻¹(AUC), turned into the calibrated posterior
  p = γ φ(x − d′) / (γ φ(x − d′) + (1 − γ) φ(x)): a pseudo-labeller of the chosen AUC that knows the
  concept's base rate, as CLIP/SigLIP scores calibrated on the probing set would.

The study itself is :mod:`neuroneval.crowd.simulation` unchanged: sampling curves (noise-free ratings),
aggregation curves (raters with error η) and :func:`~neuroneval.crowd.cost_reduction.cost_reduction_factor`.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import norm

from neuroneval.crowd.cost_reduction import cost_reduction_factor
from neuroneval.crowd.estimator import correlation_matrix
from neuroneval.crowd.simulation import aggregation_errors, sampling_errors
from neuroneval.crowd.study_options import (
    DEFAULT_COMPARISONS,
    AggregationOptions,
    SamplingOptions,
    SimulatedRatersOptions,
    SimulationOptions,
)
from neuroneval.crowd.study_units import StudyUnits
from neuroneval.options import OptionsError, check_choice, check_range
from neuroneval.progress import progress_bar

#: One ImageNet class among 1,000 roughly balanced ones: 0.1 % of the inputs (paper 000, App. F.1). Paper 001
#: prints no rarity; its concepts are class and superclass labels, so none is rarer than this.
PAPER_RARITY = 0.001


@dataclass(frozen=True)
class RarityStudyOptions(SimulatedRatersOptions):
    """Knobs of the planted rarity study (``crowd.rarity`` in params.yaml): the simulated raters'
    (:class:`~neuroneval.crowd.study_options.SimulatedRatersOptions`: ``rater_error``, ``uniform_prior``,
    ``prior_clip``, ``n_trials``, ``epsilon``, ``ddof``, ``seed``) and these.

    Attributes
    ----------
    rarities
        Concept frequencies γ studied, each in (0, 0.5].
    n_inputs
        Probing-set size n; γ·n must round to at least one positive.
    n_units
        Planted units per rarity.
    true_correlation
        ρ_gt of every planted unit with its concept, in (0, 1).
    pseudo_auc
        AUC of the pseudo-label score against the concept, in (0.5, 1).
    activation_noise
        Distribution of the activation noise z (mean 0, variance 1): ``lognormal`` (default; a heavy right
        tail, as post-ReLU units that also fire on other inputs) or ``gaussian``.
    sample_sizes, costs, rater_counts
        Grids of the sampling and aggregation curves (as in ``crowd.sampling`` / ``crowd.aggregation``).
    n_boot, ci_level
        Bootstrap of units for each factor's interval.
    """

    rarities: tuple[float, ...] = (0.1, 0.01, PAPER_RARITY)
    n_inputs: int = 20_000
    n_units: int = 24
    true_correlation: float = 0.5
    pseudo_auc: float = 0.95
    activation_noise: str = "lognormal"
    sample_sizes: tuple[int, ...] = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000)
    costs: tuple[int, ...] = (20, 50, 100, 200, 500, 1000, 2000, 5000)
    rater_counts: tuple[int, ...] = (1, 2, 3, 5, 9)
    n_boot: int = 1000
    ci_level: float = 0.95

    def validate(self) -> None:
        super().validate()
        for rarity in self.rarities:
            if not 0 < rarity <= 0.5:
                raise OptionsError(f"RarityStudyOptions.rarities: {rarity} is not in (0, 0.5]")
            if round(rarity * self.n_inputs) < 1:
                raise OptionsError(
                    f"RarityStudyOptions: rarity {rarity} x n_inputs {self.n_inputs} rounds to no positive input"
                )
        check_range(self, "true_correlation", 0.0, 1.0, low_open=True, high_open=True)
        check_range(self, "pseudo_auc", 0.5, 1.0, low_open=True, high_open=True)
        check_choice(self, "activation_noise", ("gaussian", "lognormal"))
        check_range(self, "n_units", 2, integer=True)


def _standard_noise(rng: np.random.Generator, shape: tuple[int, int], kind: str) -> np.ndarray:
    """Noise of mean 0 and variance 1: ``gaussian``, or ``lognormal`` (exp of N(0, 1), standardised)."""
    z = rng.standard_normal(shape)
    if kind == "gaussian":
        return z
    mean, variance = np.exp(0.5), (np.e - 1) * np.e
    return (np.exp(z) - mean) / np.sqrt(variance)


def planted_units(rarity: float, options: RarityStudyOptions) -> StudyUnits:
    """K planted units whose concepts have frequency ``rarity`` (module docstring for the model).

    Randomness derives from (``options.seed``, round(rarity · 10⁹)), so each rarity's world is the same
    whichever other rarities are studied.
    """
    n, k = options.n_inputs, options.n_units
    rng = np.random.default_rng([options.seed, round(rarity * 1e9)])
    positives = max(1, round(rarity * n))
    labels = np.zeros((n, k))
    for unit in range(k):
        labels[rng.choice(n, size=positives, replace=False), unit] = 1.0
    frequency = positives / n
    rho = options.true_correlation
    scale = rho / (np.sqrt(frequency * (1 - frequency)) * np.sqrt(1 - rho**2))
    activations = scale * labels + _standard_noise(rng, (n, k), options.activation_noise)
    separation = np.sqrt(2.0) * norm.ppf(options.pseudo_auc)
    score = separation * labels + rng.standard_normal((n, k))
    present = frequency * norm.pdf(score - separation)
    pseudo = present / (present + (1 - frequency) * norm.pdf(score))
    unit_ids = [f"gamma{rarity:g}/unit{unit}" for unit in range(k)]
    return StudyUnits(
        unit_ids=tuple(unit_ids),
        concept_names=tuple(f"planted{unit}" for unit in range(k)),
        activations=activations,
        labels=labels,
        pseudo_labels=pseudo,
        rho_true=np.diag(correlation_matrix(activations, labels)).copy(),
        unit_keys=np.array([zlib.crc32(unit.encode()) for unit in unit_ids], dtype=np.int64),
    )


def rarity_factors(options: RarityStudyOptions, *, progress: bool = False) -> pd.DataFrame:
    """Cost-reduction factors at each rarity, for every comparison of :data:`DEFAULT_COMPARISONS`.

    At each γ: the sampling curve of uniform, activation-only and pseudo-label importance sampling
    (noise-free ratings, Fig. 2a), the aggregation curve of majority vote and the two Bayes methods
    (pseudo-label sampling, raters with error η, Fig. 3a), and factor = baseline cost / method cost at equal
    RCE with a bootstrap interval over the planted units.

    Returns
    -------
    pandas.DataFrame
        One row per (rarity, comparison): ``rarity``, ``positives`` (γ·n), ``experiment``, ``baseline``,
        ``method``, ``target_rce``, ``baseline_cost``, ``method_cost``, ``factor``, ``ci_low``, ``ci_high``,
        ``valid_boot_fraction``, ``median_rho_true``, and the knobs (n_inputs, n_units, true_correlation,
        pseudo_auc, rater_error, n_trials, seed).
    """
    simulation = SimulationOptions(n_trials=options.n_trials, epsilon=options.epsilon, ddof=options.ddof,
                                   seed=options.seed)
    sampling_methods = ("uniform", "activation", "pseudo")
    aggregation_methods = ("majority", "bayes_uniform", "bayes_pseudo")
    sampling = SamplingOptions(sample_sizes=options.sample_sizes, methods=sampling_methods, simulation=simulation)
    aggregation = AggregationOptions(
        costs=options.costs,
        rater_counts=options.rater_counts,
        methods=aggregation_methods,
        sampling="pseudo",
        rater_error=options.rater_error,
        uniform_prior=options.uniform_prior,
        prior_clip=options.prior_clip,
        simulation=simulation,
    )
    rows = []
    for rarity in progress_bar(options.rarities, desc="crowd rarity study", unit="rarity", enabled=progress):
        units = planted_units(rarity, options)
        sampled = sampling_errors(units, sampling)
        aggregated = aggregation_errors(units, aggregation)
        curves = {
            "sampling": (options.sample_sizes, dict(zip(sampling_methods, sampled["errors"], strict=True))),
            "aggregation": (options.costs, dict(zip(aggregation_methods, aggregated["errors"], strict=True))),
        }
        for experiment, baseline, method in DEFAULT_COMPARISONS:
            grid, errors = curves[experiment]
            factor = cost_reduction_factor(
                grid,
                errors[baseline],
                errors[method],
                n_boot=options.n_boot,
                ci_level=options.ci_level,
                seed=options.seed,
            )
            rows.append(
                {
                    "rarity": rarity,
                    "positives": max(1, round(rarity * options.n_inputs)),
                    "experiment": experiment,
                    "baseline": baseline,
                    "method": method,
                    **factor,
                    "median_rho_true": float(np.median(units.rho_true)),
                    "n_inputs": options.n_inputs,
                    "n_units": options.n_units,
                    "true_correlation": options.true_correlation,
                    "pseudo_auc": options.pseudo_auc,
                    "rater_error": options.rater_error,
                    "n_trials": options.n_trials,
                    "seed": options.seed,
                }
            )
    return pd.DataFrame(rows)
