r"""Coverage of the meta-AUPRC bootstrap interval (:func:`neuroneval.meta.auprc.bootstrap_meta_auprc`), simulated.

Model: K units drawn from a population; each unit scores C concepts, exactly one of them its own (prevalence
π = 1/C), with scores ``N(μ, 1)`` for the own concept and ``N(0, 1)`` for the others. The estimand is the
population meta-AUPRC, the K → ∞ limit of average precision, an integral over the recall r = S₁(t):

.. math:: \mathrm{AP}_\infty = \int_0^1 \frac{\pi r}{\pi r + (1 - \pi) S_0(S_1^{-1}(r))}\,dr,
   \quad S_1(t) = \Phi(\mu - t),\ S_0(t) = \Phi(-t),

computed here with scipy's quadrature (an oracle that shares no code with the bootstrap).

Power: R independent data sets give R Bernoulli "covered" outcomes; the empirical coverage p̂ has standard error
sqrt(p(1 − p)/R). With R = 400, SE = 0.011 at p = 0.95 and 0.020 at p = 0.80. The acceptance band for a nominal
95 % interval is [0.89, 0.99]: a true 95 % interval falls below 0.89 with probability Φ(−5.5) ≈ 2e−8 and above
0.99 with Φ(−3.7) ≈ 1e−4; an interval that really covers 80 % lands in the band with probability Φ(−4.5) ≈ 3e−6.
The nominal 80 % interval of the same data must land in [0.72, 0.88] (SE 0.020: ±4 SE), so a level that is
ignored or swapped fails too. The band's lower edge leaves 0.06 (5 SE) for the percentile bootstrap's own
finite-K shortfall: at K = 200 units (250 replicates) the measured coverage is 0.93 (95 %) and 0.77 (80 %); at
K = 80 (400 replicates) it was 0.905 and 0.74 (the percentile bootstrap under-covers with few units). Seeded:
the same outcome on every run.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, stats

from neuroneval.meta.auprc import bootstrap_meta_auprc, meta_auprc

REPETITIONS = 400
UNITS = 200
CONCEPTS = 8
SEPARATION = 1.5
N_BOOT = 250


def population_meta_auprc(separation: float, concepts: int) -> float:
    """AP_∞ of the module docstring's binormal model, by quadrature over recall."""
    prevalence = 1.0 / concepts

    def precision(recall: float) -> float:
        threshold = separation - stats.norm.ppf(recall)  # S₁(t) = r
        false_rate = stats.norm.sf(threshold)
        return prevalence * recall / (prevalence * recall + (1.0 - prevalence) * false_rate)

    value, _ = integrate.quad(precision, 1e-12, 1.0, limit=200)
    return value


def simulated_data_set(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    own = rng.integers(0, CONCEPTS, UNITS)
    truth = np.zeros((UNITS, CONCEPTS), dtype=bool)
    truth[np.arange(UNITS), own] = True
    scores = rng.normal(size=(UNITS, CONCEPTS)) + SEPARATION * truth
    return scores, truth


def test_the_oracle_matches_a_very_large_sample() -> None:
    scores, truth = (np.random.default_rng(1).normal(size=(40_000, CONCEPTS)), np.zeros((40_000, CONCEPTS), bool))
    truth[np.arange(40_000), np.random.default_rng(2).integers(0, CONCEPTS, 40_000)] = True
    scores += SEPARATION * truth
    assert abs(meta_auprc(scores, truth) - population_meta_auprc(SEPARATION, CONCEPTS)) < 0.01


def test_bootstrap_interval_covers_the_population_meta_auprc_at_its_nominal_level() -> None:
    truth_value = population_meta_auprc(SEPARATION, CONCEPTS)
    rng = np.random.default_rng(37)
    covered = {0.95: 0, 0.80: 0}
    for repetition in range(REPETITIONS):
        scores, truth = simulated_data_set(rng)
        for level in covered:
            low, high = bootstrap_meta_auprc(scores, truth, n_boot=N_BOOT, seed=repetition, level=level)
            covered[level] += low <= truth_value <= high
    coverage = {level: count / REPETITIONS for level, count in covered.items()}
    assert 0.89 <= coverage[0.95] <= 0.99, coverage
    assert 0.72 <= coverage[0.80] <= 0.88, coverage
