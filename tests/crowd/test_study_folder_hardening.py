"""A study folder is trustworthy: ``samples.csv`` weights and priors are checked on read, and designing into a
folder replaces the whole study (no stale pages) or refuses a folder that is not a study (issue 34)."""

from __future__ import annotations

import re
import stat

import numpy as np
import pandas as pd
import pytest

from neuroneval.cli import main
from neuroneval.crowd import design_study, estimate_correlations, read_design, write_study
from neuroneval.io import current_umask
from tests.crowd.synthetic import planted_world
from tests.crowd.test_cli_crowd import design_args, files, world  # noqa: F401  (fixtures)
from tests.crowd.test_design_ingest import ratings_frame


@pytest.fixture(scope="module")
def small_design():
    small = planted_world(n=400, n_units=2, seed=3)
    activations = pd.DataFrame(small.activations, columns=small.unit_ids)
    activations.insert(0, "input_id", np.arange(400, dtype=np.int64) + 1000)
    pseudo = pd.DataFrame(small.pseudo_labels, columns=small.concept_names)
    pseudo.insert(0, "input_id", activations["input_id"])
    pairs = pd.DataFrame({"unit": small.unit_ids, "explanation": [small.concept_names[t] for t in small.planted]})
    return design_study(activations, pairs, pseudo_labels=pseudo, n_draws=30, seed=0)


@pytest.mark.parametrize(("column", "value", "problem"), [
    ("weight", "nan", "not a finite number > 0"),
    ("weight", "", "not a finite number > 0"),
    ("weight", "inf", "not a finite number > 0"),
    ("weight", "-0.5", "not a finite number > 0"),
    ("weight", "0", "not a finite number > 0"),
    ("q", "nan", "not a finite number > 0"),
    ("activation", "-inf", "not a finite number"),
    ("draws", "0", "not a whole number >= 1"),
    ("draws", "1.5", "not a whole number >= 1"),
    ("prior", "-0.1", "not empty or a number in \\[0, 1\\]"),
    ("prior", "inf", "not empty or a number in \\[0, 1\\]"),
    ("prior", "1.2", "not empty or a number in \\[0, 1\\]"),
    ("prior", "abc", "not empty or a number in \\[0, 1\\]"),
])
def test_bad_samples_values_name_file_line_and_column(small_design, tmp_path, column, value, problem) -> None:
    write_study(small_design, tmp_path / "study")
    path = tmp_path / "study" / "samples.csv"
    lines = path.read_text().splitlines()
    header = lines[0].split(",")
    cells = lines[4].split(",")
    cells[header.index(column)] = value
    lines[4] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"samples\.csv, line 5, column {column}: .*{problem}"):
        read_design(tmp_path / "study")


def test_a_study_without_priors_reads_back(small_design, tmp_path) -> None:
    write_study(small_design, tmp_path / "study")
    path = tmp_path / "study" / "samples.csv"
    pd.read_csv(path).assign(prior=np.nan).to_csv(path, index=False)
    assert read_design(tmp_path / "study").samples["prior"].isna().all()


def test_a_nan_weight_stops_crowd_ingest(world, files, tmp_path, capsys) -> None:  # noqa: F811
    study = tmp_path / "study"
    assert main(design_args(files, study, "--budget", "40")) == 0
    ratings_frame(world, read_design(study), n_raters=2, rater_error=0.1, seed=0).to_csv(tmp_path / "r.csv",
                                                                                          index=False)
    samples = pd.read_csv(study / "samples.csv")
    samples.loc[3, "weight"] = np.nan
    samples.to_csv(study / "samples.csv", index=False)
    code = main(["crowd", "ingest", "--study", str(study), "--ratings", str(tmp_path / "r.csv"),
                 "--out", str(tmp_path / "e.csv")])
    assert code == 2 and "samples.csv, line 5, column weight" in capsys.readouterr().err
    assert not (tmp_path / "e.csv").exists()


def pages(study) -> list[str]:
    return sorted(path.name for path in study.iterdir() if path.suffix == ".html")


def test_designing_again_replaces_the_whole_study(files, tmp_path, capsys) -> None:  # noqa: F811
    study = tmp_path / "study"
    assert main(design_args(files, study, "--budget", "200", "--tasks-per-batch", "1")) == 0
    many = pages(study)
    assert main(design_args(files, study, "--budget", "200", "--tasks-per-batch", "50")) == 0
    batches = sorted(read_design(study).tasks["batch"].unique())
    assert pages(study) == [f"batch_{int(b):03d}.html" for b in batches] and len(batches) < len(many)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["study"]
    umask = current_umask()
    assert {(p.is_dir(), stat.S_IMODE(p.stat().st_mode)) for p in [study, *study.iterdir()]} == {
        (True, 0o777 & ~umask), (False, 0o666 & ~umask)}


def test_designing_into_an_empty_folder_is_fine(files, tmp_path) -> None:  # noqa: F811
    (tmp_path / "study").mkdir()
    assert main(design_args(files, tmp_path / "study", "--budget", "40")) == 0
    assert (tmp_path / "study" / "design.json").is_file()


@pytest.mark.parametrize("extra", ["notes.txt", "ratings_alice.csv"])
def test_a_folder_that_is_not_only_a_study_is_refused(files, tmp_path, capsys, extra) -> None:  # noqa: F811
    study = tmp_path / "study"
    if extra.startswith("ratings"):
        assert main(design_args(files, study, "--budget", "40")) == 0
    else:
        study.mkdir()
    (study / extra).write_text("keep me")
    before = sorted(path.name for path in study.iterdir())
    assert main(design_args(files, study, "--budget", "40", "--seed", "1")) == 2
    error = capsys.readouterr().err
    assert re.search(rf"{re.escape(str(study))} is not a neuroneval crowd study folder.*{re.escape(extra)}", error)
    assert sorted(path.name for path in study.iterdir()) == before and (study / extra).read_text() == "keep me"


def test_a_file_in_place_of_the_study_is_refused(files, tmp_path, capsys) -> None:  # noqa: F811
    (tmp_path / "study").write_text("not a folder")
    assert main(design_args(files, tmp_path / "study", "--budget", "40")) == 2
    assert f"{tmp_path / 'study'} is not a folder" in capsys.readouterr().err


@pytest.mark.parametrize(("keyword", "value", "message"), [
    ("n_boot", 0, r"n_boot must be an integer >= 1, got 0"),
    ("n_boot", -5, r"n_boot must be an integer >= 1, got -5"),
    ("n_boot", 2.5, r"n_boot must be an integer >= 1, got 2.5"),
    ("ci_level", 1.5, r"ci_level must lie in \(0, 1\), got 1.5"),
    ("ci_level", 0.0, r"ci_level must lie in \(0, 1\), got 0.0"),
    ("ci_level", float("nan"), r"ci_level must lie in \(0, 1\), got nan"),
])
def test_the_estimator_names_a_bad_interval_setting(small_design, keyword, value, message) -> None:
    samples = small_design.samples
    ratings = pd.DataFrame({"task": samples["task"].astype(str), "input": samples["input_id"], "rater": "r0",
                            "label": (samples["activation"] > samples["activation"].median()).astype(int)})
    with pytest.raises(ValueError, match=message):
        estimate_correlations(small_design, ratings, method="majority", **{keyword: value})
