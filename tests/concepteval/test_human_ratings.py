"""Paper 004's Tables 3 and 4 from a human-ratings file: a fixture with known agreement, checked against scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from neuroneval.concepteval import BootstrapOptions, MeasurementOptions, RaterOptions
from neuroneval.concepteval.human_ratings import (
    read_human_ratings,
    simulated_human_ratings,
    table3_inter_rater,
    table4_validity,
)

OPTIONS = MeasurementOptions(bootstrap=BootstrapOptions(n_boot=200, seed=1))
CONCEPTS = [f"c{i}" for i in range(12)]


def _fixture(tmp_path):
    """Three raters × 12 concepts × two aspects on 1–5: rater2 copies rater1 on input (τ = 1) and reverses it on
    output (τ = −1); rater3 is random."""
    rng = np.random.default_rng(0)
    first = {"input": rng.integers(1, 6, 12), "output": rng.integers(1, 6, 12)}
    second = {"input": first["input"], "output": 6 - first["output"]}
    third = {aspect: rng.integers(1, 6, 12) for aspect in ("input", "output")}
    rows = [(rater, concept, aspect, int(scores[aspect][i]))
            for rater, scores in (("ann", first), ("bob", second), ("cy", third))
            for aspect in ("input", "output") for i, concept in enumerate(CONCEPTS)]
    path = tmp_path / "human.csv"
    pd.DataFrame(rows, columns=["rater", "concept", "aspect", "rating"]).to_csv(path, index=False)
    return path, first, second, third


def test_table3_equals_scipy_kendall(tmp_path):
    path, first, second, third = _fixture(tmp_path)
    table = table3_inter_rater(read_human_ratings(path), OPTIONS).set_index(["aspect", "rater_a", "rater_b"])
    assert table.loc[("input", "ann", "bob"), "value"] == pytest.approx(1.0)
    assert table.loc[("output", "ann", "bob"), "value"] == pytest.approx(-1.0)
    for aspect in ("input", "output"):
        for (a, x), (b, y) in (((("ann", first), ("cy", third))), ((("bob", second), ("cy", third)))):
            expected = stats.kendalltau(x[aspect], y[aspect]).statistic
            assert table.loc[(aspect, a, b), "value"] == pytest.approx(expected)
            assert table.loc[(aspect, a, b), "ci_low"] <= expected <= table.loc[(aspect, a, b), "ci_high"]
    average = table.loc[("average", "ann", "cy"), "value"]
    assert average == pytest.approx(np.mean([stats.kendalltau(first[a], third[a]).statistic
                                             for a in ("input", "output")]))


def test_table4_equals_scipy_against_the_human_mean(tmp_path):
    path, first, second, third = _fixture(tmp_path)
    ratings = read_human_ratings(path)
    rng = np.random.default_rng(5)
    measures = {"IN-EmbCos": rng.normal(size=12), "OUT-EmbCos": rng.normal(size=12), "flat": np.ones(12)}
    measures["IN-EmbCos"][3] = np.nan  # a concept the measure could not score is left out
    scores = pd.DataFrame([(c, m, v[i]) for m, v in measures.items() for i, c in enumerate(CONCEPTS)],
                          columns=["concept", "measure", "value"])
    table = table4_validity(scores, ratings, OPTIONS).set_index(["aspect", "measure", "statistic"])
    for aspect in ("input", "output"):
        criterion = (first[aspect] + second[aspect] + third[aspect]) / 3
        for measure in ("IN-EmbCos", "OUT-EmbCos"):
            values = measures[measure]
            keep = np.isfinite(values)
            expected = {"kendall_tau_b": stats.kendalltau(values[keep], criterion[keep]).statistic,
                        "pearson": stats.pearsonr(values[keep], criterion[keep]).statistic,
                        "spearman": stats.spearmanr(values[keep], criterion[keep]).statistic}
            for statistic, value in expected.items():
                assert table.loc[(aspect, measure, statistic), "value"] == pytest.approx(value)
                assert table.loc[(aspect, measure, statistic), "n_concepts"] == keep.sum()
        assert np.isnan(table.loc[(aspect, "flat", "undefined"), "value"])


def test_simulated_default_goes_through_the_same_tables():
    truth = {"input": np.linspace(0, 1, 10), "output": np.linspace(1, 0, 10)}
    concepts = [f"k{i}" for i in range(10)]
    ratings = simulated_human_ratings(truth, concepts, RaterOptions(n_raters=3, noise_scale=0.0))
    assert set(ratings["rating"]) <= set(range(1, 6))
    table = table3_inter_rater(ratings, OPTIONS)
    assert np.allclose(table["value"], 1.0)  # noise-free raters agree perfectly
    scores = pd.DataFrame({"concept": concepts, "measure": "truth", "value": truth["input"]})
    validity = table4_validity(scores, ratings, OPTIONS).set_index(["aspect", "statistic"])
    for aspect, sign in (("input", 1), ("output", -1)):
        mean = ratings[ratings["aspect"] == aspect].groupby("concept", sort=False)["rating"].mean()
        expected = stats.spearmanr(truth["input"], mean.loc[concepts]).statistic
        assert validity.loc[(aspect, "spearman"), "value"] == pytest.approx(expected)
        assert np.sign(expected) == sign  # the mean rating follows each aspect's truth, rank ties aside


@pytest.mark.parametrize(("text", "message"), [
    ("rater,concept,rating\nann,c0,6\n", r"line 2, column rating: '6' is not an integer in 1 … 5"),
    ("rater,concept,rating\nann,c0,3\nann,c0,4\n", r"line 3: rater 'ann' rated concept 'c0' \(readability\) twice"),
    ("rater,concept\nann,c0\n", r"line 1: missing column\(s\) rating"),
    ("rater,concept,rating\nann,c0,3\n,c1,2\n", r"line 3, column rater: empty value"),
    ("rater,concept,rating\nann,c0,3\nann,c1,3\nann,c2,1\nbob,c0,3\nbob,c1,2\n",
     r"rater 'bob' did not rate concept 'c2' \(readability\)"),
])
def test_bad_ratings_are_named(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_human_ratings(path)
