"""The paired bootstrap rule of every method-comparison claim (neuroneval.fidelity.claims.paired).

Oracles: a brute-force loop over resamples with the same draws (the vectorised interval is that loop), the exact
bootstrap distribution of a small sample enumerated over all n^n resamples (the Monte Carlo interval converges to
its percentiles), and constructed cases on each side of the rule.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.fidelity.claims import paper_001
from neuroneval.fidelity.claims.paired import (
    PairedBootstrapOptions,
    combined_verdict,
    paired_bootstrap_comparison,
)
from neuroneval.options import OptionsError

ROOT = Path(__file__).resolve().parents[2]


def _loop_interval(first: np.ndarray, second: np.ndarray, n_boot: int, level: float, seed: int
                   ) -> tuple[float, float]:
    """One resample at a time: the same units for both methods, the mean difference, then the percentiles."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(first), size=(n_boot, len(first)))
    means = []
    for draw in rows:
        means.append(sum(first[i] - second[i] for i in draw) / len(draw))
    tail = 50.0 * (1.0 - level)
    return float(np.percentile(means, tail)), float(np.percentile(means, 100.0 - tail))


def test_the_interval_is_the_brute_force_loop_over_resamples() -> None:
    rng = np.random.default_rng(7)
    first, second = rng.normal(0.3, 0.2, 40), rng.normal(0.25, 0.2, 40)
    options = PairedBootstrapOptions(n_boot=500, ci_level=0.9, seed=3)
    result = paired_bootstrap_comparison(first, second, options=options)
    low, high = _loop_interval(first, second, 500, 0.9, 3)
    assert result.ci_low == pytest.approx(low, abs=1e-12) and result.ci_high == pytest.approx(high, abs=1e-12)
    assert result.difference == pytest.approx(np.mean(first - second)) and result.n_units == 40


def test_the_interval_converges_to_the_exact_bootstrap_distribution() -> None:
    """n = 5 units: all 5^5 = 3125 equally likely resamples give the exact bootstrap distribution of the mean
    difference; 40,000 Monte Carlo resamples must reach its 2.5 % and 97.5 % points within 0.01."""
    delta = np.array([0.31, -0.12, 0.05, 0.22, -0.04])
    exact = np.array([delta[list(draw)].mean() for draw in itertools.product(range(5), repeat=5)])
    result = paired_bootstrap_comparison(delta, np.zeros(5), options=PairedBootstrapOptions(n_boot=40_000, seed=1))
    assert result.ci_low == pytest.approx(np.percentile(exact, 2.5), abs=0.01)
    assert result.ci_high == pytest.approx(np.percentile(exact, 97.5), abs=0.01)


def test_pairing_cancels_the_spread_the_methods_share() -> None:
    """Units differ a lot (shared spread), A is B + 0.02 on every unit: paired, the difference is exact (holds),
    while unpaired intervals of the two means would overlap widely."""
    base = np.linspace(-0.8, 0.8, 50)
    result = paired_bootstrap_comparison(base + 0.02, base, better="LE", worse="INVERT")
    assert result.verdict == "holds" and result.ci_low == pytest.approx(0.02) and result.ci_high == pytest.approx(0.02)


@pytest.mark.parametrize(("shift", "expected"), [(0.05, "holds"), (0.0, "within_noise"), (-0.05, "differs")])
def test_constructed_cases_on_each_side_of_the_rule(shift: float, expected: str) -> None:
    rng = np.random.default_rng(0)
    second = rng.uniform(0, 1, 200)
    noise = rng.normal(0, 0.05, 200)
    noise -= noise.mean()  # the mean difference is exactly `shift`; the interval's half-width is ~0.007
    result = paired_bootstrap_comparison(second + shift + noise, second)
    assert result.verdict == expected
    assert result.difference == pytest.approx(shift, abs=1e-12)
    assert (result.ci_low > 0) == (expected == "holds") and (result.ci_high < 0) == (expected == "differs")


def test_a_difference_just_inside_the_noise_is_within_noise() -> None:
    """The interval of a small positive mean difference contains 0: within noise, not holds."""
    delta = np.array([0.3, -0.25, 0.2, -0.2, 0.01])
    result = paired_bootstrap_comparison(delta, np.zeros(5))
    assert result.difference > 0 and result.ci_low < 0 < result.ci_high and result.verdict == "within_noise"


def test_units_missing_on_either_side_are_dropped_and_too_few_are_not_testable() -> None:
    first, second = np.array([0.5, np.nan, 0.7, 0.9]), np.array([0.4, 0.3, np.nan, 0.8])
    assert paired_bootstrap_comparison(first, second).n_units == 2
    assert paired_bootstrap_comparison(first[:2], second[:2]).verdict == "not_testable"
    with pytest.raises(ValueError, match="same units"):
        paired_bootstrap_comparison(first, second[:3])
    with pytest.raises(OptionsError, match="n_boot"):
        PairedBootstrapOptions(n_boot=0)


@pytest.mark.parametrize(("field", "value"), [("ci_level", 1.0), ("ci_level", 0.0), ("seed", -1), ("n_boot", 0)])
def test_options_refuse_a_100_or_0_percent_interval_a_negative_seed_and_no_resample(field: str, value: float) -> None:
    """A 100 % percentile interval is [min, max] of the resamples, not a confidence interval: refused like 0 %."""
    with pytest.raises(OptionsError, match=field):
        PairedBootstrapOptions(**{field: value})


def test_the_default_draws_are_those_of_seed_0() -> None:
    """The documented default (``explain.random_seed: 0`` in params.yaml): same interval as seed 0, not seed 1."""
    rng = np.random.default_rng(5)
    first, second = rng.normal(0.1, 0.3, 30), rng.normal(0.0, 0.3, 30)
    by_default = paired_bootstrap_comparison(first, second)
    seeded = {seed: paired_bootstrap_comparison(first, second, options=PairedBootstrapOptions(seed=seed))
              for seed in (0, 1)}
    assert (by_default.ci_low, by_default.ci_high) == (seeded[0].ci_low, seeded[0].ci_high)
    assert (by_default.ci_low, by_default.ci_high) != (seeded[1].ci_low, seeded[1].ci_high)


@pytest.mark.parametrize(("verdicts", "expected"), [
    (["holds", "holds"], "holds"), (["holds", "within_noise"], "within_noise"),
    (["within_noise", "differs", "holds"], "differs"), (["not_testable"], "not_testable"),
    (["holds", "not_testable"], "holds")])
def test_combined_verdict(verdicts: list[str], expected: str) -> None:
    assert combined_verdict(verdicts) == expected


def test_every_method_comparison_claim_uses_the_rule() -> None:
    """LE-best (Table 2), Broden (Tables 1-2) and the crowd (Table 3) claims judge the same constructed per-unit
    scores alike: LE = other + 0.05 holds, LE = other within noise, LE = other - 0.05 differs."""
    rng = np.random.default_rng(1)
    other = rng.uniform(0, 1, 60)
    noise = rng.normal(0, 0.05, 60)
    noise -= noise.mean()

    def units(le: np.ndarray, method_a: str, method_b: str, **keys: object) -> pd.DataFrame:
        return pd.concat([pd.DataFrame({"unit": np.arange(60).astype(str), "method": method, **keys, "score": values})
                          for method, values in ((method_a, le), (method_b, other))], ignore_index=True)

    for shift, expected in ((0.05, "holds"), (0.0, "within_noise"), (-0.05, "differs")):
        le = other + shift + noise

        scores = units(le, "le_pseudo", "compexp", setting="h", group="block3", table=2).rename(
            columns={"score": "simulation_correlation"})
        protocols = {"h": {"scored_on": "setting", "concepts": "pseudo:clip",
                           "method_concepts": {"methods": ["compexp"], "prefixes": ["colour:"]}}}
        primary, _ = paper_001.le_best_claims(scores, protocols)
        broden, _ = paper_001.broden_claims(scores, protocols)
        crowd = units(le, "le_pseudo_l1", "invert_l1", setting="h", aggregation="bayes_pseudo").rename(
            columns={"score": "crowd_correlation"})
        (crowd_claim,) = paper_001.crowd_le_claims(crowd)
        assert primary.verdict == expected and crowd_claim.verdict == expected
        assert broden.verdict == expected  # here the best other method is LE and it must beat compexp


@pytest.mark.parametrize("level", [0.4, 0.9])
def test_any_coverage_level_is_the_brute_force_percentile_interval(level: float) -> None:
    """Below and above 50 %: the tails are (1 − L)/2 each (for L ≤ 0.5, ``1 % L`` is not ``1 − L``)."""
    rng = np.random.default_rng(11)
    first, second = rng.normal(0.2, 0.3, 25), rng.normal(0.1, 0.3, 25)
    result = paired_bootstrap_comparison(first, second, options=PairedBootstrapOptions(n_boot=300, ci_level=level,
                                                                                       seed=2))
    low, high = _loop_interval(first, second, 300, level, 2)
    assert (result.ci_low, result.ci_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_one_resample_is_allowed_and_gives_its_mean_at_both_ends() -> None:
    first, second = np.array([0.4, 0.1, 0.9, 0.3]), np.array([0.2, 0.2, 0.5, 0.1])
    result = paired_bootstrap_comparison(first, second, options=PairedBootstrapOptions(n_boot=1, seed=4))
    low, high = _loop_interval(first, second, 1, 0.95, 4)
    assert result.ci_low == pytest.approx(low, abs=1e-12) == pytest.approx(high, abs=1e-12) == result.ci_high


def test_equal_scores_are_within_noise_whatever_the_interval_touches() -> None:
    """A tie on every unit: the interval is [0, 0], which neither lies above nor below 0."""
    scores = np.linspace(0.1, 0.9, 12)
    result = paired_bootstrap_comparison(scores, scores.copy())
    assert (result.ci_low, result.ci_high, result.verdict) == (0.0, 0.0, "within_noise")


def test_two_common_units_are_enough_and_one_is_reported_without_an_interval() -> None:
    first, second = np.array([0.9, 0.8, np.nan]), np.array([0.1, 0.2, 0.3])
    two = paired_bootstrap_comparison(first, second)
    assert two.n_units == 2 and two.verdict == "holds" and two.ci_low == pytest.approx(0.6)
    one = paired_bootstrap_comparison(first[1:], second[1:])
    assert (one.n_units, one.verdict, one.difference) == (1, "not_testable", pytest.approx(0.6))
    assert np.isnan(one.ci_low) and np.isnan(one.ci_high)
    none = paired_bootstrap_comparison(first[2:], second[2:])
    assert none.n_units == 0 and np.isnan(none.difference)


@pytest.mark.parametrize(("first", "second"), [
    (np.zeros(3), np.zeros(4)), (np.zeros(4), np.zeros(3)), (np.float64(0.5), np.float64(0.4)),
    (np.zeros((2, 3)), np.zeros((2, 3)))])
def test_scores_must_be_two_1d_arrays_of_one_length(first, second) -> None:
    with pytest.raises(ValueError, match="two 1-D arrays over the same units"):
        paired_bootstrap_comparison(first, second)


def test_options_are_keyword_only_and_a_comparison_is_a_frozen_keyword_record() -> None:
    scores = np.array([0.3, 0.5, 0.7])
    with pytest.raises(TypeError):
        paired_bootstrap_comparison(scores, scores, PairedBootstrapOptions())  # type: ignore[misc]
    result = paired_bootstrap_comparison(scores, scores - 0.1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.verdict = "holds"  # type: ignore[misc]
    with pytest.raises(TypeError):
        type(result)("A", "B", 0.1, 0.0, 0.2, 3, "holds")  # type: ignore[misc]


@pytest.mark.parametrize(("field", "value"), [("n_boot", 10.5), ("seed", 1.5)])
def test_resamples_and_seed_must_be_integers(field: str, value: float) -> None:
    with pytest.raises(OptionsError, match=field):
        PairedBootstrapOptions(**{field: value})


def test_the_library_defaults_are_the_workflows_defaults() -> None:
    """``PairedBootstrapOptions()`` equals what the fidelity rule passes from params.yaml's ``explain`` section
    (``n_boot``, ``ci_level``, ``random_seed``), so a comparison run from Python matches the report's."""
    explain = yaml.safe_load((ROOT / "params.yaml").read_text())["explain"]
    from_params = PairedBootstrapOptions.from_params({"n_boot": explain["n_boot"], "ci_level": explain["ci_level"],
                                                      "seed": explain["random_seed"]})
    assert PairedBootstrapOptions() == from_params


def test_a_verdict_read_from_a_file_counts_as_not_testable() -> None:
    """Not only the interned literal: a string built at run time (as a CSV reader returns it) is left out too."""
    read = "".join(["not_", "testable"])
    assert combined_verdict([read]) == "not_testable" and combined_verdict(["holds", read]) == "holds"
