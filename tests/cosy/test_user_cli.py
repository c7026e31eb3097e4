"""``neuroneval cosy`` on a user's explanation file: true vs random explanations (paper 002 Table 2's pattern),
U and p against scipy on the same activations, and errors that name the row and unit."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import mannwhitneyu

from neuroneval.cli import main
from neuroneval.explain.explanation import Concept, explanation_frame, write_explanations

N_CLASSES = 8


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """A tiny CNN: one thread is faster than two on a shared CPU (as tests/cosy/test_embedded_diffusion.py)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An 8-class vision world: a tiny CNN trained on 600 images (~80 % held-out accuracy), 300 probe images as
    control, and the file of true explanations of its softmax units (unit k = class k)."""
    from neuroneval.models.classifier import ClassifierTraining, save_checkpoint, train_classifier
    from neuroneval.worlds import build_vision_world, save_vision_world

    root = tmp_path_factory.mktemp("cosy_user")
    knobs = {"n_classes": N_CLASSES, "class_prior_ratio": 1.0, "progress": False}
    train = build_vision_world(600, seed=0, split="train", **knobs)
    save_vision_world(build_vision_world(300, seed=0, split="probe", **knobs), root / "probe")
    config = {"n_classes": N_CLASSES, "width": 8}
    model, report = train_classifier("tiny_cnn", config, train.images, train.class_index,
                                     ClassifierTraining(epochs=5, batch_size=32, learning_rate=0.01))
    save_checkpoint(model, root / "cnn.pt", architecture="tiny_cnn", config=config, report=report,
                    class_names=train.class_names)
    units = [str(k) for k in range(N_CLASSES)]
    write_explanations(root / "true.csv", explanation_frame(units, [Concept(name) for name in train.class_names]))
    return {"root": root, "world": root / "probe", "model": root / "cnn.pt", "explanations": root / "true.csv"}


def _arguments(run: dict[str, Path], out: Path, explanations: Path | None = None, *extra: str) -> list[str]:
    return ["cosy", "--explanations", str(explanations or run["explanations"]), "--model", str(run["model"]),
            "--layer", "softmax", "--control", str(run["world"]), "--generator", "oracle", "--n-images", "8",
            "--seed", "0", "--out", str(out), "--no-progress", *extra]


def test_true_explanations_beat_random_ones_with_scipy_p_values(small_run, tmp_path: Path) -> None:
    from neuroneval.cosy.activations import classifier_units
    from neuroneval.cosy.synthesis import load_images, plan_images, resize_images
    from neuroneval.worlds import load_vision_world

    out = tmp_path / "scores.csv"
    assert main(_arguments(small_run, out)) == 0
    scores = pd.read_csv(out, dtype={"unit": str})
    assert list(scores.columns) == ["unit", "method", "explanation", "kind", "prompt", "auc", "mad", "u", "p_value",
                                    "n_synthetic", "n_control"]
    assert len(scores) == 2 * N_CLASSES and set(scores["method"]) == {"true", "random"}
    mean_auc = scores.groupby("method")["auc"].mean()
    assert mean_auc["true"] >= 0.85
    assert abs(mean_auc["random"] - 0.5) <= 0.1
    random = scores[scores["method"] == "random"].set_index("unit")
    true = scores[scores["method"] == "true"].set_index("unit")
    assert (random["explanation"] != true.loc[random.index, "explanation"]).all()

    # the same activation arrays, recorded here: control = the probe world, synthetic = the written oracle images
    world = load_vision_world(small_run["world"])
    control, names = classifier_units(small_run["model"], world.images, layer="softmax", hierarchy={})
    plan = plan_images(scores["prompt"].str.removeprefix("realistic photo of a close up of ").tolist(),
                       templates=["closeup"], n_images=8)
    image_root = tmp_path / "scores.images" / "oracle"
    synthetic, _ = classifier_units(small_run["model"], resize_images(load_images(image_root, plan["path"].tolist()),
                                                                      32), layer="softmax", hierarchy={})
    for row in scores.itertuples(index=False):
        k = names.index(row.unit)
        images = synthetic[(plan["prompt"] == row.prompt).to_numpy(), k].astype(np.float64)
        reference = mannwhitneyu(images, control[:, k].astype(np.float64), alternative="two-sided", method="auto")
        assert row.n_synthetic == len(images) == 8 and row.n_control == len(control) == 300
        assert row.u == pytest.approx(reference.statistic, abs=1e-9)
        assert row.p_value == pytest.approx(reference.pvalue, rel=1e-8)
        assert row.auc == pytest.approx(reference.statistic / (8 * 300), abs=1e-9)


def test_no_random_and_resumed_images(small_run, tmp_path: Path) -> None:
    out = tmp_path / "true_only.csv"
    assert main(_arguments(small_run, out, None, "--no-random")) == 0
    first = pd.read_csv(out, dtype={"method": str})
    assert set(first["method"]) == {"true"} and len(first) == N_CLASSES
    assert main(_arguments(small_run, out, None, "--no-random")) == 0  # images reused: same bytes
    assert pd.read_csv(out, dtype={"method": str}).equals(first)


def _write_rows(path: Path, rows: list[tuple[str, str, int, str]]) -> Path:
    pd.DataFrame(rows, columns=["unit", "explanation", "length", "kind"]).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("rows", "message"), [
    ([("0", "class:blue_checked_circle", 1, "concept"), ("99", "class:purple_checked_square", 1, "concept")],
     r"bad\.csv, row 1: unit '99' is not a unit of the model's layer"),
    ([("0", "class:blue_checked_circle", 1, "concept"), ("1", "class:a AND (", 1, "formula")],
     r"bad\.csv, row 1: "),
    ([("0", "class:blue_checked_circle", 1, "concept"), ("1", "[0, 1] class:a; [2, 3] class:b", 2, "clustered")],
     r"bad\.csv, row 1 \(unit '1'\): a clustered explanation has no picture"),
    ([("0", "class:blue_checked_circle", 1, "concept"), ("1", "a pink plaid blob", 0, "text")],
     r"bad\.csv, row 1 \(unit '1', true explanation 'a pink plaid blob'\): the oracle generator cannot draw it"),
    ([("0", "class:blue_checked_circle", 1, "concept"), ("1", "class:blue_checked_circle", 1, "concept")],
     r"a random explanation needs at least two distinct ones"),
])
def test_bad_input_names_the_row_and_unit(small_run, tmp_path: Path, capsys, rows, message: str) -> None:
    bad = _write_rows(tmp_path / "bad.csv", rows)
    assert main(_arguments(small_run, tmp_path / "out.csv", bad)) == 2
    error = capsys.readouterr().err
    assert error.startswith("neuroneval: error: ")
    assert re.search(message, error), error
    assert not (tmp_path / "out.csv").exists()


def test_bad_options(small_run, tmp_path: Path, capsys) -> None:
    arguments = _arguments(small_run, tmp_path / "out.csv", None, "--world", str(small_run["world"]))
    assert main([*arguments, "--generator", "midjourney"]) == 2
    assert "--generator 'midjourney': use oracle" in capsys.readouterr().err
    images = tmp_path / "images.npy"
    np.save(images, np.zeros((3, 32, 32), dtype=np.uint8))
    arguments[arguments.index("--control") + 1] = str(images)
    assert main(arguments) == 2
    assert "expected an (n, H, W, 3) uint8 array" in capsys.readouterr().err


def test_control_from_an_image_folder_or_array(small_run, tmp_path: Path) -> None:
    """The same control images as PNG files or a .npy array give the same scores as the world folder."""
    from PIL import Image

    from neuroneval.worlds import load_vision_world

    images = load_vision_world(small_run["world"]).images
    folder = tmp_path / "control"
    folder.mkdir()
    for index, image in enumerate(images):
        Image.fromarray(image).save(folder / f"{index:04d}.png")
    np.save(tmp_path / "control.npy", images)
    tables = []
    for control in (small_run["world"], folder, tmp_path / "control.npy"):
        out = tmp_path / f"{Path(control).stem}.csv"
        arguments = _arguments(small_run, out, None, "--world", str(small_run["world"]), "--images",
                               str(tmp_path / "images"))
        arguments[arguments.index("--control") + 1] = str(control)
        assert main(arguments) == 0
        tables.append(pd.read_csv(out))
    assert tables[0].equals(tables[1]) and tables[0].equals(tables[2])
    assert json.loads((tmp_path / "images" / "generator.json").read_text())["config"]["name"] == "oracle"
