r"""Coverage of the crowd intervals of :func:`neuroneval.crowd.estimate_correlations`, simulated.

Each repetition is one (unit, explanation) pair of one study design: R units with the *same* activations (unit 0
of the planted world of tests/crowd/synthetic.py, 3000 inputs) and the same explanation, so every pair is an
independent draw of |S| = 400 inputs (pseudo-label sampling, Eq. 4) rated independently, and one call of
``estimate_correlations`` gives R intervals at once (vectorised over the bootstrap replicates inside). The
estimand is the full-data correlation ρ (Eq. 1) of the activations with the *true* labels (``numpy.corrcoef``,
sharing no code with the estimator).

Power: R = 300 Bernoulli "covered" outcomes give the empirical coverage p̂ a standard error sqrt(p(1 − p)/R):
0.013 at p = 0.95, 0.023 at p = 0.80. A nominal 95 % interval must cover in [0.89, 0.99]: a true 95 % interval
falls below 0.89 with probability Φ(−4.8) ≈ 1e−6, one that really covers 80 % reaches 0.89 with Φ(−3.9) ≈ 5e−5.
The nominal 80 % interval must cover in [0.70, 0.88] (±3.5 SE), so an ignored or swapped ``ci_level`` fails.
The lower edge leaves 0.06 for what the Bayes aggregation's shrinkage costs with noisy raters (measured:
0.93 for the bootstrap, 0.92 for "both" at η = 0.13, 3 raters; 0.95 with exact raters). Seeded throughout.

"both" and "bootstrap" cover alike here (sampling uncertainty dominates at |S| = 400), so the test that "both"
adds the label uncertainty compares interval widths: with noisy raters it must be wider on average, and the
"posterior" interval (labels only) must have positive width.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import design_study, estimate_correlations, simulate_ratings
from tests.crowd.synthetic import planted_world

N_INPUTS = 3000
REPETITIONS = 300
DRAWS = 400
N_BOOT = 400
UNIT = 0


@pytest.fixture(scope="module")
def study():
    """The design of R identical pairs, the true ρ, and the true label of every shown input."""
    world = planted_world(n=N_INPUTS, n_units=10, seed=5)
    activation, concept = world.activations[:, UNIT], world.labels[:, world.planted[UNIT]]
    name = world.concept_names[world.planted[UNIT]]
    units = [f"copy{i}" for i in range(REPETITIONS)]
    activations = pd.DataFrame(np.repeat(activation[:, None], REPETITIONS, axis=1), columns=units)
    activations.insert(0, "input_id", np.arange(N_INPUTS, dtype=np.int64) + 1000)
    pseudo = pd.DataFrame({"input_id": activations["input_id"], name: world.pseudo_labels[:, world.planted[UNIT]]})
    pairs = pd.DataFrame({"unit": units, "explanation": name, "method": "planted"})
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=DRAWS, seed=2)
    shown_labels = concept[design.samples["input_id"].to_numpy() - 1000].astype(int)
    return design, float(np.corrcoef(activation, concept)[0, 1]), shown_labels


def rated(design, labels: np.ndarray, n_raters: int, rater_error: float) -> pd.DataFrame:
    votes = simulate_ratings(labels, n_raters, np.random.default_rng(1), rater_error=rater_error)
    return pd.concat([pd.DataFrame({"task": design.samples["task"], "input": design.samples["input_id"],
                                    "rater": f"r{j}", "label": votes[:, j]}) for j in range(n_raters)],
                     ignore_index=True)


def coverage(estimates: pd.DataFrame, truth: float) -> float:
    return float(((estimates["ci_low"] <= truth) & (truth <= estimates["ci_high"])).mean())


def estimates_at(design, ratings, ci_level: float, **options) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant resample warns; it is one of R
        return estimate_correlations(design, ratings, n_boot=N_BOOT, ci_level=ci_level, **options)


@pytest.mark.parametrize(("method", "interval", "n_raters", "rater_error"), [
    ("majority", "bootstrap", 1, 0.0),
    ("bayes_pseudo", "bootstrap", 3, 0.13),
    ("bayes_pseudo", "both", 3, 0.13),
])
def test_interval_covers_the_full_data_rho_at_its_nominal_level(study, method, interval, n_raters,
                                                                 rater_error) -> None:
    design, truth, labels = study
    ratings = rated(design, labels, n_raters, rater_error)
    options = {"method": method, "interval": interval, "rater_error": max(rater_error, 0.13)}
    nominal_95 = coverage(estimates_at(design, ratings, 0.95, **options), truth)
    nominal_80 = coverage(estimates_at(design, ratings, 0.80, **options), truth)
    assert 0.89 <= nominal_95 <= 0.99, (nominal_95, nominal_80)
    assert 0.70 <= nominal_80 <= 0.88, (nominal_95, nominal_80)


def test_both_adds_the_label_uncertainty_to_the_bootstrap(study) -> None:
    design, _, labels = study
    ratings = rated(design, labels, 3, 0.13)
    width = {interval: estimates_at(design, ratings, 0.95, interval=interval).eval("ci_high - ci_low")
             for interval in ("bootstrap", "posterior", "both")}
    assert (width["posterior"] > 0).all()
    assert width["both"].mean() > width["bootstrap"].mean()
