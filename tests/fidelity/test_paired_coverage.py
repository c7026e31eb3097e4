r"""Coverage of the method-comparison intervals, simulated: the paired bootstrap of paper 001's claims
(:func:`neuroneval.fidelity.claims.paired.paired_bootstrap_comparison`) and the paired differences of
``neuroneval.explain.evaluate`` (``differences.csv``: every two sources, per metric).

Model: n units; method B scores unit u with ``s_B(u) = m_u + e_u`` and method A with ``s_A(u) = m_u + μ + f_u``,
where ``m_u ~ N(0.5, 0.2²)`` is the unit's difficulty that both share (the pairing cancels it), and the method
noises are ``e_u ~ N(0, 0.05²)`` and ``f_u`` a centred exponential of scale 0.05 (skewed, so that the interval is
not checked on normal data alone). The estimand is the population mean difference μ, set by construction: an
oracle that shares no code with the bootstrap.

Power: R data sets give R Bernoulli "covered" outcomes with standard error sqrt(p(1 − p)/R): 0.011 at p = 0.95
and 0.020 at p = 0.80 for R = 400. A nominal 95 % interval must cover in [0.89, 0.99] (a true 95 % one falls below
0.89 with probability Φ(−5.5) ≈ 2e−8; one that covers 80 % lands in the band with Φ(−4.5) ≈ 3e−6), the nominal 80 %
interval of the same data in [0.72, 0.88] (±4 SE), so an ignored or swapped level fails. The lower edge leaves
room for the percentile bootstrap's small-n shortfall; measured at n = 60 units (400 resamples): 0.953 and 0.803
for the claims' rule, 0.950 and 0.805 for ``evaluate``'s differences. Seeded: the same outcome on every run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.explain.evaluate import DEGENERATE_COLUMN, EvaluateOptions, _differences
from neuroneval.fidelity.claims.paired import PairedBootstrapOptions, paired_bootstrap_comparison

REPETITIONS = 400
UNITS = 60
SHIFT = 0.03
N_BOOT = 400
BANDS = {0.95: (0.89, 0.99), 0.80: (0.72, 0.88)}


def simulated_scores(repetition: int) -> tuple[np.ndarray, np.ndarray]:
    """(s_A, s_B) over UNITS units of the module docstring's model, data set number ``repetition``."""
    rng = np.random.default_rng([2026, repetition])
    difficulty = rng.normal(0.5, 0.2, UNITS)
    worse = difficulty + rng.normal(0.0, 0.05, UNITS)
    better = difficulty + SHIFT + (rng.exponential(0.05, UNITS) - 0.05)
    return better, worse


def paired_interval(better: np.ndarray, worse: np.ndarray, level: float, seed: int) -> tuple[float, float]:
    comparison = paired_bootstrap_comparison(better, worse, options=PairedBootstrapOptions(n_boot=N_BOOT,
                                                                                          ci_level=level, seed=seed))
    return comparison.ci_low, comparison.ci_high


def evaluate_interval(better: np.ndarray, worse: np.ndarray, level: float, seed: int) -> tuple[float, float]:
    units = pd.DataFrame({"source": ["A"] * UNITS + ["B"] * UNITS, "metric": "correlation",
                          "unit": [f"u{i}" for i in range(UNITS)] * 2, "value": np.concatenate([better, worse]),
                          DEGENERATE_COLUMN: False})
    row = _differences(units, EvaluateOptions(n_boot=N_BOOT, ci_level=level, seed=seed)).iloc[0]
    assert (row["source_a"], row["source_b"], row["n_units"]) == ("A", "B", UNITS)
    return row["ci_low"], row["ci_high"]


@pytest.mark.parametrize("interval", [paired_interval, evaluate_interval], ids=["claims", "evaluate"])
def test_nominal_95_and_80_percent_intervals_cover_the_true_difference(interval) -> None:
    covered = {level: 0 for level in BANDS}
    for repetition in range(REPETITIONS):
        better, worse = simulated_scores(repetition)
        for level in BANDS:
            low, high = interval(better, worse, level, repetition)
            covered[level] += low <= SHIFT <= high
    coverage = {level: count / REPETITIONS for level, count in covered.items()}
    for level, (low, high) in BANDS.items():
        assert low <= coverage[level] <= high, f"nominal {level:.0%}: coverage {coverage[level]:.3f}"


def test_the_model_has_the_stated_mean_difference() -> None:
    """The estimand: the mean of the simulated differences over many data sets is μ (the exponential is centred)."""
    differences = np.concatenate([np.subtract(*simulated_scores(repetition)) for repetition in range(2000)])
    assert abs(differences.mean() - SHIFT) < 4 * differences.std() / np.sqrt(differences.size)
