"""``neuroneval crowd design | ingest``: the CLI round trip recovers ρ, pages show world images, bad files exit 2."""

from __future__ import annotations

import base64
import io as bytes_io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from neuroneval import io
from neuroneval.cli import main
from neuroneval.crowd import estimate_correlations, read_design, read_ratings
from tests.crowd.synthetic import planted_world
from tests.crowd.test_design_ingest import ratings_frame

N_INPUTS = 3000


@pytest.fixture(scope="module")
def world():
    return planted_world(n=N_INPUTS, n_units=10, seed=5)


@pytest.fixture(scope="module")
def files(world, tmp_path_factory) -> dict[str, Path]:
    """Activation table, pseudo-label table and pairs CSV on disk (input ids 1000…, as ``ratings_frame`` expects)."""
    root = tmp_path_factory.mktemp("crowd_cli")
    ids = np.arange(N_INPUTS, dtype=np.int64) + 1000
    activations = pd.DataFrame(world.activations.astype(np.float32), columns=world.unit_ids)
    activations.insert(0, "input_id", ids)
    pseudo = pd.DataFrame(world.pseudo_labels.astype(np.float32), columns=world.concept_names)
    pseudo.insert(0, "input_id", ids)
    pairs = pd.DataFrame({"unit": world.unit_ids, "explanation": [world.concept_names[t] for t in world.planted]})
    pairs.to_csv(root / "pairs.csv", index=False)
    return {
        "activations": io.write_activation_table(root / "acts.parquet", activations, metadata={"model": "m"}),
        "concepts": io.write_concept_table(root / "pseudo.parquet", pseudo, metadata={"source": "pseudo:test"}),
        "pairs": root / "pairs.csv",
    }


def design_args(files: dict[str, Path | None], out: Path, *extra: str) -> list[str]:
    concepts = [] if files["concepts"] is None else ["--concepts", str(files["concepts"])]
    return ["crowd", "design", "--activations", str(files["activations"]), *concepts,
            "--pairs", str(files["pairs"]), "--out", str(out), *extra]


def test_round_trip_recovers_rho_within_its_interval(world, files, tmp_path, capsys) -> None:
    study = tmp_path / "study"
    assert main(design_args(files, study, "--budget", "800", "--raters", "2", "--seed", "3")) == 0
    assert "designed 10 pair(s): 400 draws each (pseudo sampling)" in capsys.readouterr().out
    design = read_design(study)
    assert design.samples.groupby("pair")["draws"].sum().eq(400).all()
    assert design.tasks["n_inputs"].max() == 15 and design.samples.groupby("task").size().le(15).all()
    info = json.loads((study / "design.json").read_text())
    assert (info["budget"], info["raters_per_input"], info["sampling"]) == (800, 2, "pseudo")
    assert sorted(p.name for p in study.glob("batch_*.html")) == [
        f"batch_{b:03d}.html" for b in range(int(design.tasks["batch"].max()) + 1)
    ]

    ratings = ratings_frame(world, design, n_raters=2, rater_error=0.13, seed=1)
    ratings.iloc[: len(ratings) // 2].to_csv(tmp_path / "rater_a.csv", index=False)
    ratings.iloc[len(ratings) // 2 :].to_csv(tmp_path / "rater_b.csv", index=False)
    out = tmp_path / "estimates.csv"
    code = main(["crowd", "ingest", "--study", str(study), "--ratings", str(tmp_path / "rater_a.csv"),
                 str(tmp_path / "rater_b.csv"), "--out", str(out), "--n-boot", "400"])
    assert code == 0
    assert "estimated 10 pair(s)" in capsys.readouterr().out
    estimates = pd.read_csv(out)
    assert estimates["unit"].tolist() == world.unit_ids and set(estimates["aggregation"]) == {"bayes_pseudo"}

    truth = np.array([np.corrcoef(world.activations[:, k], world.labels[:, world.planted[k]])[0, 1]
                      for k in range(len(world.unit_ids))])
    covered = (estimates["ci_low"] <= truth) & (truth <= estimates["ci_high"])
    assert covered.mean() >= 0.7
    assert np.median(np.abs(estimates["rho"] - truth) / truth) < 0.2
    library = estimate_correlations(design, read_ratings([tmp_path / "rater_a.csv", tmp_path / "rater_b.csv"], design),
                                    n_boot=400)
    np.testing.assert_allclose(estimates[["rho", "ci_low", "ci_high"]], library[["rho", "ci_low", "ci_high"]],
                               rtol=1e-5, atol=1e-7)


def test_pages_show_world_images_or_input_ids(tmp_path, capsys) -> None:
    from neuroneval.worlds import build_vision_world, save_vision_world

    vision = build_vision_world(40, seed=0, split="probe", n_classes=6)
    save_vision_world(vision, tmp_path / "world")
    ids = vision.labels["input_id"].to_numpy()
    rng = np.random.default_rng(0)
    activations = pd.DataFrame({"input_id": ids, "u0": rng.random(ids.size).astype(np.float32)})
    io.write_activation_table(tmp_path / "acts.parquet", activations, metadata={"model": "m"})
    io.write_concept_table(tmp_path / "labels.parquet", vision.labels, metadata={"source": "labels"})
    pd.DataFrame({"unit": ["u0"], "explanation": [vision.class_names[0]]}).to_csv(tmp_path / "pairs.csv", index=False)
    paths = {"activations": tmp_path / "acts.parquet", "concepts": tmp_path / "labels.parquet",
             "pairs": tmp_path / "pairs.csv"}

    assert main(design_args(paths, tmp_path / "with_world", "--budget", "20", "--raters", "1",
                            "--world", str(tmp_path / "world"))) == 0
    page = (tmp_path / "with_world/batch_000.html").read_text()
    shown = read_design(tmp_path / "with_world").samples["input_id"].tolist()
    images = dict(re.findall(r'<img alt="input (\d+)" src="data:image/png;base64,([^"]+)"', page))
    assert sorted(map(int, images)) == sorted(shown)
    row = {int(i): r for r, i in enumerate(ids)}
    for input_id, encoded in images.items():
        decoded = np.asarray(Image.open(bytes_io.BytesIO(base64.b64decode(encoded))).convert("RGB"))
        np.testing.assert_array_equal(decoded, vision.images[row[int(input_id)]])

    assert main(design_args(paths, tmp_path / "without", "--budget", "20", "--raters", "1")) == 0
    page = (tmp_path / "without/batch_000.html").read_text()
    assert "<img" not in page
    assert sorted(map(int, re.findall(r'<span class="snippet">input (\d+)</span>', page))) == sorted(
        read_design(tmp_path / "without").samples["input_id"].tolist())

    shifted = activations.assign(input_id=ids + 10_000)
    io.write_activation_table(tmp_path / "acts.parquet", shifted, metadata={"model": "m"})
    capsys.readouterr()
    assert main(design_args({**paths, "concepts": None}, tmp_path / "elsewhere", "--budget", "20",
                            "--world", str(tmp_path / "world"))) == 2
    assert "images.npy: no image for 9 of the 9 requested input id(s)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("{task},{other},r1,1\n", r"ratings\.csv, line 2, column input: unknown input {other}"),
        ("{task},{input},r1,1\n{task},{input},r1,0\n", r"ratings\.csv, line 3: duplicate rating .*line 2\)"),
        ("{task},{input},r1,yes\n", r"ratings\.csv, line 2, column label: non-binary label 'yes'"),
    ],
)
def test_bad_ratings_files_exit_2_naming_file_row_and_column(files, tmp_path, capsys, rows, message) -> None:
    study = tmp_path / "study"
    assert main(design_args(files, study, "--budget", "40")) == 0
    design = read_design(study)
    first = design.samples.iloc[0]
    shown = set(design.samples.loc[design.samples["task"] == first["task"], "input_id"])
    other = next(i for i in range(1000, 1000 + N_INPUTS) if i not in shown)
    values = {"task": first["task"], "input": int(first["input_id"]), "other": other}
    (tmp_path / "ratings.csv").write_text("task,input,rater,label\n" + rows.format(**values))
    capsys.readouterr()
    out = tmp_path / "estimates.csv"
    ratings = str(tmp_path / "ratings.csv")
    code = main(["crowd", "ingest", "--study", str(study), "--ratings", ratings, "--out", str(out)])
    error = capsys.readouterr().err
    assert code == 2 and error.startswith("neuroneval: error: ")
    assert re.search(message.format(**values), error), error
    assert not out.exists()


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ("unit,explanation\nu0,class:0\nnope,class:1\n", r"pairs\.csv, line 3, column unit: unknown unit 'nope'"),
        ("unit,explanation\nu0,a dog\n", r"pairs\.csv, line 2, column explanation: unknown explanation 'a dog'"),
        ("unit,concept\nu0,class:0\n", r"pairs\.csv, line 1: missing column\(s\) explanation"),
        ("unit,explanation\nu0,class:0\nu0,class:0\n", r"pairs\.csv, line 3: pair \(u0, class:0\) is listed twice"),
    ],
)
def test_bad_pairs_files_exit_2_before_writing(files, tmp_path, capsys, pairs, message) -> None:
    (tmp_path / "pairs.csv").write_text(pairs)
    study = tmp_path / "study"
    code = main(design_args({**files, "pairs": tmp_path / "pairs.csv"}, study, "--budget", "40"))
    error = capsys.readouterr().err
    assert code == 2 and re.search(message, error), error
    assert not study.exists()


def test_a_budget_below_two_inputs_per_pair_is_refused(files, tmp_path, capsys) -> None:
    assert main(design_args(files, tmp_path / "study", "--budget", "3", "--raters", "2")) == 2
    assert "--budget 3 with 2 rater(s) per input leaves 1 input(s) per pair" in capsys.readouterr().err
