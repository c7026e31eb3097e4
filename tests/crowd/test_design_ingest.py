"""Study design → ratings → ingestion: layout, PNG embedding, validation errors and the ρ round trip."""

from __future__ import annotations

import dataclasses
import inspect
import re

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import (
    RatingsError,
    design_study,
    design_study_files,
    estimate_correlations,
    importance_weights,
    ingest_study,
    is_correlation,
    read_design,
    read_ratings,
    sampling_distribution,
    simulate_ratings,
    write_study,
)
from neuroneval.crowd.design import DesignOptions
from neuroneval.crowd.ingest import EstimationOptions
from neuroneval.options import OptionsError
from tests.crowd.synthetic import planted_world

N_INPUTS = 3000


@pytest.fixture(scope="module")
def world():
    return planted_world(n=N_INPUTS, n_units=10, seed=5)


@pytest.fixture(scope="module")
def tables(world):
    activations = pd.DataFrame(world.activations, columns=world.unit_ids)
    activations.insert(0, "input_id", np.arange(N_INPUTS, dtype=np.int64) + 1000)
    pseudo = pd.DataFrame(world.pseudo_labels, columns=world.concept_names)
    pseudo.insert(0, "input_id", activations["input_id"])
    pairs = pd.DataFrame(
        {
            "unit": world.unit_ids,
            "explanation": [world.concept_names[t] for t in world.planted],
            "method": "planted",
        }
    )
    return activations, pseudo, pairs


def true_labels(world, design):
    """Ground-truth label of every shown (pair, input)."""
    rows = design.samples["input_id"].to_numpy() - 1000
    concepts = world.planted[design.samples["pair"].to_numpy()]
    return world.labels[rows, concepts].astype(int)


def ratings_frame(world, design, n_raters, rater_error, seed):
    labels = true_labels(world, design)
    ratings = simulate_ratings(labels, n_raters, np.random.default_rng(seed), rater_error=rater_error)
    frames = [
        pd.DataFrame(
            {
                "task": design.samples["task"],
                "input": design.samples["input_id"],
                "rater": f"r{j}",
                "label": ratings[:, j],
            }
        )
        for j in range(n_raters)
    ]
    return pd.concat(frames, ignore_index=True)


def test_design_layout(world, tables):
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=90, tasks_per_batch=4, seed=3)
    samples = design.samples
    assert samples.groupby("pair")["draws"].sum().eq(90).all()
    assert not samples.duplicated(["pair", "input_id"]).any()
    assert design.tasks["n_inputs"].max() == 15
    assert samples.groupby("task").size().le(15).all()
    assert design.tasks["batch"].max() == (len(design.tasks) - 1) // 4
    first = samples[samples["pair"] == 0]
    a = activations["u0"].to_numpy(dtype=np.float64)
    q = sampling_distribution("pseudo", a, pseudo[pairs.loc[0, "explanation"]].to_numpy())
    rows = first["input_id"].to_numpy() - 1000
    np.testing.assert_allclose(first["q"], q[rows])
    np.testing.assert_allclose(first["weight"], importance_weights(q)[rows])
    np.testing.assert_allclose(first["activation"], a[rows])
    again = design_study(activations, pairs.iloc[::-1], pseudo_labels=pseudo, n_draws=90, seed=3)
    by_pair = again.samples.merge(again.pairs[["pair", "unit"]], on=["pair", "unit"])
    assert sorted(by_pair[by_pair["unit"] == "u0"]["input_id"]) == sorted(first["input_id"])
    with pytest.raises(ValueError, match="needs pseudo-label scores"):
        design_study(activations, pairs.assign(explanation="a free-text explanation"), pseudo_labels=pseudo)
    with pytest.raises(ValueError, match="not a column"):
        design_study(activations, pairs.iloc[:1].assign(unit="nope"), sampling="activation")


def test_pages_are_self_contained(world, tables, tmp_path):
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs.iloc[:2], pseudo_labels=pseudo, n_draws=20)
    ids = design.samples["input_id"].tolist()
    media = {ids[0]: np.zeros((4, 4, 3), dtype=np.uint8), ids[1]: "a <b>bold</b> & snippet"}
    written = write_study(design, tmp_path, media=media)
    pages = [p for p in written if p.suffix == ".html"]
    text = pages[0].read_text()
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:)""", text)
    assert "http://" not in text and "https://" not in text
    assert "data:image/png;base64," in text
    assert "a &lt;b&gt;bold&lt;/b&gt; &amp; snippet" in text
    assert text.count('class="answer"') == len(design.samples)


def test_round_trip_noiseless_matches_direct_estimate(world, tables, tmp_path):
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=60, seed=1)
    write_study(design, tmp_path)
    ratings = ratings_frame(world, design, n_raters=2, rater_error=0.0, seed=0)
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    estimates = ingest_study(tmp_path, tmp_path / "ratings.csv", EstimationOptions(method="majority", n_boot=200))
    stored = read_design(tmp_path)
    labels = true_labels(world, stored)
    for row in estimates.itertuples():
        rows = stored.samples[stored.samples["pair"] == row.pair]
        expand = np.repeat(rows.index.to_numpy(), rows["draws"].to_numpy())
        direct = is_correlation(
            stored.samples.loc[expand, "activation"].to_numpy(),
            labels[expand].astype(float),
            stored.samples.loc[expand, "weight"].to_numpy(),
        )
        assert row.rho == pytest.approx(float(direct), abs=1e-12)
        assert row.ci_low <= row.rho <= row.ci_high
        assert row.n_draws == 60 and row.raters == 2
    assert list(estimates["aggregation"].unique()) == ["majority"]
    assert list(estimates["method"].unique()) == ["planted"]
    assert (estimates["explanation"] == pairs["explanation"]).all()


def test_round_trip_recovers_rho(world, tables):
    """Noisy simulated raters (η = 0.13, 2 per input), Bayes with pseudo-label prior, 400 draws per pair."""
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=400, seed=2)
    ratings = ratings_frame(world, design, n_raters=2, rater_error=0.13, seed=1)
    for interval in ("bootstrap", "both"):
        estimates = estimate_correlations(design, ratings, interval=interval, n_boot=400)
        truth = np.array(
            [np.corrcoef(world.activations[:, k], world.labels[:, world.planted[k]])[0, 1] for k in range(10)]
        )
        errors = np.abs(estimates["rho"].to_numpy() - truth) / truth
        covered = (estimates["ci_low"] <= truth) & (truth <= estimates["ci_high"])
        assert np.median(errors) < 0.2
        assert covered.mean() >= 0.7
    posterior = estimate_correlations(design, ratings, interval="posterior", n_boot=200)
    assert (posterior["ci_low"] <= posterior["ci_high"]).all()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("task,input,rater,label\n{task},{other},r1,1\n", r"ratings\.csv, line 2, column input: unknown input"),
        ("task,input,rater,label\n{task},{input},r1,1\n{task},{input},r1,0\n", r"line 3: duplicate rating.*line 2"),
        ("task,input,rater,label\n{task},{input},r1,yes\n", r"line 2, column label: non-binary label 'yes'"),
        ("task,input,rater,label\n{task},{input},r1,0.5\n", r"column label: non-binary label '0.5'"),
        ("task,input,rater,label\nnope,{input},r1,1\n", r"column task: unknown task 'nope'"),
        ("task,input,rater,label\n{task},abc,r1,1\n", r"column input: 'abc' is not an integer"),
        ("task,input,rater,label\n{task},{input},,1\n", r"line 2, column rater: empty value"),
        ("task,input,label\n{task},{input},1\n", r"line 1: missing column\(s\) rater"),
        ("", r"empty file"),
        ("task,input,rater,label\n", r"no ratings"),
    ],
)
def test_bad_ratings_files(tables, tmp_path, content, message):
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs.iloc[:2], pseudo_labels=pseudo, n_draws=20)
    first = design.samples.iloc[0]
    shown = set(design.samples.loc[design.samples["task"] == first["task"], "input_id"])
    other = next(i for i in range(1000, 1000 + N_INPUTS) if i not in shown)
    path = tmp_path / "ratings.csv"
    path.write_text(content.format(task=first["task"], input=int(first["input_id"]), other=other))
    with pytest.raises(RatingsError, match=message):
        read_ratings(path, design)


def test_duplicates_across_files_and_missing_ratings(world, tables, tmp_path):
    activations, pseudo, pairs = tables
    design = design_study(activations, pairs.iloc[:2], pseudo_labels=pseudo, n_draws=20)
    ratings = ratings_frame(world, design, n_raters=1, rater_error=0.0, seed=0)
    ratings.to_csv(tmp_path / "a.csv", index=False)
    ratings.iloc[:1].to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(RatingsError, match=r"b\.csv, line 2: duplicate rating.*a\.csv, line 2"):
        read_ratings([tmp_path / "a.csv", tmp_path / "b.csv"], design)
    partial = read_ratings(tmp_path / "b.csv", design)
    with pytest.raises(RatingsError, match="have no rating"):
        estimate_correlations(design, partial)
    with pytest.raises(RatingsError, match="cannot read"):
        read_ratings(tmp_path / "missing.csv", design)


def test_file_level_design_and_ingest(world, tables, tmp_path):
    from neuroneval import io
    from neuroneval.input_media import read_text_table

    activations, pseudo, pairs = tables
    io.write_activation_table(
        tmp_path / "acts.parquet",
        activations.astype({u: np.float32 for u in world.unit_ids}),
        metadata={"model": "m", "layer": "l", "dataset": "d", "pooling": "none"},
    )
    io.write_concept_table(
        tmp_path / "pseudo.parquet",
        pseudo.astype({c: np.float32 for c in world.concept_names}),
        metadata={"source": "pseudo:test", "concepts": world.concept_names},
    )
    pairs.to_csv(tmp_path / "pairs.csv", index=False)
    pd.DataFrame({"input_id": activations["input_id"], "text": "snippet"}).to_csv(tmp_path / "media.csv", index=False)
    study = tmp_path / "study"
    written = design_study_files(
        tmp_path / "acts.parquet",
        tmp_path / "pairs.csv",
        study,
        pseudo_labels_path=tmp_path / "pseudo.parquet",
        media=read_text_table(tmp_path / "media.csv"),
        options=DesignOptions(n_draws=30),
    )
    assert {p.name for p in written} >= {"pairs.csv", "samples.csv", "tasks.csv", "design.json", "batch_000.html"}
    assert "snippet" in (study / "batch_000.html").read_text()
    design = read_design(study)
    ratings_frame(world, design, n_raters=1, rater_error=0.0, seed=0).to_csv(tmp_path / "r.csv", index=False)
    estimates = ingest_study(study, [tmp_path / "r.csv"],
                             EstimationOptions(method="bayes_uniform", interval="posterior", n_boot=50))
    assert len(estimates) == len(pairs)


@pytest.mark.parametrize(("options_class", "function"), [(DesignOptions, design_study),
                                                         (EstimationOptions, estimate_correlations)])
def test_file_level_options_restate_the_library_keywords(options_class, function) -> None:
    """The typed options of the file-level helpers have the library function's keyword names and defaults."""
    keywords = {name: parameter.default for name, parameter in inspect.signature(function).parameters.items()
                if parameter.kind is inspect.Parameter.KEYWORD_ONLY and name != "pseudo_labels"}
    assert {field.name: field.default for field in dataclasses.fields(options_class)} == keywords


def test_file_level_options_name_a_bad_choice() -> None:
    with pytest.raises(OptionsError, match=r"DesignOptions\.sampling must be one of"):
        DesignOptions(sampling="nope")
    with pytest.raises(OptionsError, match=r"EstimationOptions\.interval must be one of"):
        EstimationOptions(interval="nope")
