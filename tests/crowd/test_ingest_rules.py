"""The rules of ratings ingestion one at a time: the percentile interval at any level against a brute-force
bootstrap, the argument checks at their bounds, which prior each interval uses, the constant-label warning, and
how a ratings file's blank lines and extra columns are read."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import CrowdWarning, RatingsError, design_study, estimate_correlations, read_ratings
from neuroneval.crowd.ingest import rating_counts
from tests.crowd.synthetic import planted_world

N_INPUTS = 800


@pytest.fixture(scope="module")
def study():
    """Three planted units, 40 draws each, and one exact rater (the true labels) per shown input."""
    world = planted_world(n=N_INPUTS, n_units=3, seed=7)
    activations = pd.DataFrame(world.activations, columns=world.unit_ids)
    activations.insert(0, "input_id", np.arange(N_INPUTS, dtype=np.int64))
    pseudo = pd.DataFrame(world.pseudo_labels, columns=world.concept_names)
    pseudo.insert(0, "input_id", activations["input_id"])
    pairs = pd.DataFrame({"unit": world.unit_ids, "explanation": [world.concept_names[t] for t in world.planted]})
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=40, seed=3)
    truth = world.labels[design.samples["input_id"].to_numpy(), world.planted[design.samples["pair"].to_numpy()]]
    ratings = pd.DataFrame({"task": design.samples["task"].astype(str), "input": design.samples["input_id"],
                            "rater": "r0", "label": truth.astype(np.int8)})
    return design, ratings


def _eq6(a: np.ndarray, c: np.ndarray, w: np.ndarray) -> float:
    """Eq. 5–6 written out (ddof 1), 0 where either side is constant."""
    size = len(a)
    mean_a, mean_c = (w * a).sum() / size, (w * c).sum() / size
    std_a = np.sqrt((w * (a - mean_a) ** 2).sum() / (size - 1))
    std_c = np.sqrt((w * (c - mean_c) ** 2).sum() / (size - 1))
    if std_a < 1e-12 * (abs(mean_a) + 1) or std_c < 1e-12 * (abs(mean_c) + 1):
        return 0.0
    return float((w * (a - mean_a) * (c - mean_c)).sum() / (std_a * std_c) / (size - 1))


@pytest.mark.parametrize("level", [0.5, 0.9])
def test_the_bootstrap_interval_is_the_percentile_interval_of_resampled_draws(study, level: float) -> None:
    """Resample the pair's draws with replacement (generator seeded by (seed, pair)), score each resample with
    Eq. 6 written out, and take the (1 − L)/2 and (1 + L)/2 quantiles."""
    design, ratings = study
    estimates = estimate_correlations(design, ratings, method="majority", n_boot=60, ci_level=level, seed=4)
    for row in estimates.itertuples():
        samples = design.samples[design.samples["pair"] == row.pair]
        labels = ratings.set_index(["task", "input"]).loc[list(zip(samples["task"], samples["input_id"], strict=True)),
                                                          "label"].to_numpy(dtype=float)
        expand = np.repeat(np.arange(len(samples)), samples["draws"].to_numpy())
        a, c, w = (samples["activation"].to_numpy()[expand], labels[expand], samples["weight"].to_numpy()[expand])
        picks = np.random.default_rng([4, int(row.pair)]).integers(0, expand.size, (60, expand.size))
        replicates = [_eq6(a[p], c[p], w[p]) for p in picks]
        tail = (1 - level) / 2
        assert (row.ci_low, row.ci_high) == (pytest.approx(np.quantile(replicates, tail), abs=1e-12),
                                             pytest.approx(np.quantile(replicates, 1 - tail), abs=1e-12))
        assert row.rho == pytest.approx(_eq6(a, c, w), abs=1e-12)


@pytest.mark.parametrize(("options", "message"), [
    ({"ci_level": 1.0}, "ci_level"), ({"ci_level": 0.0}, "ci_level"), ({"ci_level": -0.5}, "ci_level"),
    ({"ci_level": 1.5}, "ci_level"), ({"n_boot": 0}, "n_boot"), ({"n_boot": 2.0}, "n_boot"),
    ({"n_boot": True}, "n_boot"), ({"interval": "posterior", "method": "majority"}, "needs a Bayes"),
    ({"interval": "both", "method": "average"}, "needs a Bayes")])
def test_estimation_arguments_are_checked_at_their_bounds(study, options: dict, message: str) -> None:
    design, ratings = study
    with pytest.raises(ValueError, match=message):
        estimate_correlations(design, ratings, **options)


def test_one_replicate_is_enough(study) -> None:
    design, ratings = study
    estimates = estimate_correlations(design, ratings, method="majority", n_boot=1)
    assert (estimates["ci_low"] == estimates["ci_high"]).all()


def test_only_the_pseudo_label_method_needs_pseudo_label_priors(study) -> None:
    design, ratings = study
    without = type(design)(pairs=design.pairs, samples=design.samples.assign(prior=np.nan), tasks=design.tasks)
    for method in ("majority", "average", "bayes_uniform"):
        assert len(estimate_correlations(without, ratings, method=method, n_boot=5)) == 3
    for method in ("bayes_pseudo", "".join(["bayes_", "pseudo"])):  # also a name read from a file
        with pytest.raises(ValueError, match="needs pseudo-label priors"):
            estimate_correlations(without, ratings, method=method, n_boot=5)


def test_the_uniform_prior_posterior_interval_ignores_the_pseudo_labels(study) -> None:
    """Method 3a's label uncertainty comes from β alone: other pseudo-labels leave its posterior interval as it is."""
    design, ratings = study
    other = type(design)(pairs=design.pairs, samples=design.samples.assign(prior=0.5), tasks=design.tasks)
    first, second = (estimate_correlations(d, ratings, method="bayes_uniform", interval="posterior", n_boot=40)
                     for d in (design, other))
    pd.testing.assert_frame_equal(first, second)


@pytest.mark.parametrize(("method", "interval"), [("majority", "bootstrap"), ("bayes_pseudo", "bootstrap"),
                                                  ("bayes_uniform", "posterior")])
def test_names_read_from_a_file_work_as_the_literals(study, method: str, interval: str) -> None:
    """Strings built at run time (as a params or CSV reader returns them) are not the interned literals."""
    design, ratings = study
    read_method, read_interval = "".join([method[:3], method[3:]]), "".join([interval[:4], interval[4:]])
    pd.testing.assert_frame_equal(
        estimate_correlations(design, ratings, method=read_method, interval=read_interval, n_boot=20),
        estimate_correlations(design, ratings, method=method, interval=interval, n_boot=20))


def test_constant_labels_warn_at_the_callers_line_and_real_correlations_of_either_sign_do_not(study) -> None:
    design, ratings = study
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a positive (true labels) and a negative (inverted labels) ρ: no warning
        for labels in (ratings["label"], 1 - ratings["label"]):
            rho = estimate_correlations(design, ratings.assign(label=labels), method="majority", n_boot=5)["rho"]
            assert (rho != 0).all()
    with pytest.warns(CrowdWarning, match="constant") as record:
        estimate_correlations(design, ratings.assign(label=0), method="majority", n_boot=5)
    assert len(record) == 3 and {warning.filename for warning in record} == {__file__}


def test_rating_counts_refuse_unrated_inputs_unless_allowed(study) -> None:
    design, ratings = study
    partial = ratings.drop(index=[3, 5])
    first = design.samples.iloc[3]
    with pytest.raises(RatingsError, match=rf"2 shown input\(s\) have no rating, e\.g\. input {first.input_id} of "
                                           rf"task '{first.task}'"):
        rating_counts(design, partial)
    with pytest.raises(TypeError):
        rating_counts(design, partial, True)  # type: ignore[misc]
    counted = rating_counts(design, partial, allow_missing=True)
    assert list(counted.columns) == [*design.samples.columns, "positives", "n_ratings"]
    assert counted["input_id"].tolist() == design.samples["input_id"].drop(index=[3, 5]).tolist()
    assert counted.index.tolist() == list(range(len(design.samples) - 2))


@pytest.mark.parametrize("cells", ["{task},{input},r0,1,extra", "{task},{input},r0"])
def test_a_line_with_more_or_fewer_cells_than_the_header_is_refused(study, tmp_path, cells: str) -> None:
    design, ratings = study
    first = ratings.iloc[0]
    path = tmp_path / "ratings.csv"
    path.write_text("task,input,rater,label\n" + cells.format(task=first.task, input=first.input) + "\n")
    with pytest.raises(RatingsError, match=r"ratings\.csv, line 2: \d cells but the header has 4"):
        read_ratings(path, design)


def test_blank_lines_are_skipped_and_the_ratings_after_them_read(study, tmp_path) -> None:
    design, ratings = study
    first, second = ratings.iloc[0], ratings.iloc[1]
    path = tmp_path / "ratings.csv"
    path.write_text(f"task,input,rater,label\n{first.task},{first.input},r0,1\n\n,,,\n  , ,,\n"
                    f"{second.task},{second.input},r0,0\n")
    read = read_ratings(path, design)
    assert read[["input", "label", "line"]].to_numpy().tolist() == [[first.input, 1, 2], [second.input, 0, 6]]


def test_a_ratings_file_may_carry_hundreds_of_extra_columns(study, tmp_path) -> None:
    """300 cells per line (a survey export): the count is compared by value."""
    design, ratings = study
    first = ratings.iloc[0]
    extra = [f"q{k}" for k in range(296)]
    path = tmp_path / "ratings.csv"
    path.write_text(",".join(["task", "input", "rater", "label", *extra]) + "\n"
                    + ",".join([str(first.task), str(first.input), "r0", "1", *["x"] * 296]) + "\n")
    assert read_ratings(path, design)["input"].tolist() == [first.input]
