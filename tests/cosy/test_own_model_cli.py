"""``neuroneval cosy`` on your own model (``--factory``/``--torchscript`` + ``--preprocess``): the scores equal
CoSy's scoring called directly on the model's activations computed here by hand (the generated PNGs shrunk, grey,
flattened, run), the AUC equals sklearn's ``roc_auc_score`` on those activations, U and p scipy's; errors name
the flag, file or row."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image
from scipy.stats import mannwhitneyu
from sklearn.metrics import roc_auc_score

from neuroneval.cli import main
from neuroneval.cosy.scoring import cosy_scores
from neuroneval.cosy.synthesis import plan_images
from neuroneval.explain.explanation import Concept, explanation_frame, write_explanations
from tests.external import own_model

N_IMAGES = 4
UNITS = [f"logits.{k}" for k in range(4)]
PREPROCESS = {"image_size": 8, "channels": 1, "invert": True, "flatten": True}


@pytest.fixture(scope="module")
def own_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The digits MLP (state dict and TorchScript), its 240 held-out digits as control inputs, a 4-class vision
    world whose renderer is the oracle generator, and an explanation file: logits unit k = world class k."""
    from neuroneval.worlds import build_vision_world, save_vision_world

    root = tmp_path_factory.mktemp("cosy_own_model")
    own_model.write_user_files(root)
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(root / "mlp.pt"))
    torch.jit.save(torch.jit.script(model.eval()), root / "mlp.torchscript.pt")
    world = build_vision_world(8, seed=0, split="probe", n_classes=4, class_prior_ratio=1.0, progress=False)
    save_vision_world(world, root / "world")
    write_explanations(root / "units.csv", explanation_frame(UNITS, [Concept(name) for name in world.class_names]))
    return {"root": root, "weights": root / "mlp.pt", "torchscript": root / "mlp.torchscript.pt",
            "control": root / "images.npy", "world": root / "world",
            "explanations": root / "units.csv"}


def _arguments(run: dict[str, Path], out: Path, *extra: str, model: tuple[str, ...] | None = None) -> list[str]:
    model = model or ("--factory", "tests.external.own_model:digits_mlp", "--weights", str(run["weights"]))
    return ["cosy", *model, "--preprocess", json.dumps(PREPROCESS), "--layer", "logits",
            "--explanations", str(run["explanations"]), "--generator", "oracle", "--world", str(run["world"]),
            "--n-images", str(N_IMAGES), "--out", str(out), "--no-progress", *extra]


def by_hand(png_files: list[Path], weights: Path) -> np.ndarray:
    """The digits MLP on PNGs: grey (PIL ``L``), 8x8 bilinear, inverted, scaled to [0, 1], flattened."""
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(weights))
    rows = [1.0 - np.asarray(Image.open(path).convert("L").resize((8, 8), Image.Resampling.BILINEAR),
                             dtype=np.float32).reshape(-1) / 255.0 for path in png_files]
    with torch.no_grad():
        return model.eval()(torch.from_numpy(np.stack(rows).astype(np.float32))).numpy()


def test_own_model_scores_are_cosy_of_its_activations_by_hand(own_run, tmp_path: Path) -> None:
    out = tmp_path / "scores.csv"
    assert main([*_arguments(own_run, out), "--control-inputs", str(own_run["control"])]) == 0
    scores = pd.read_csv(out, dtype={"unit": str})
    assert len(scores) == 2 * len(UNITS) and set(scores["method"]) == {"true", "random"}
    assert (tmp_path / "scores.png").stat().st_size > 0

    control_inputs = np.load(own_run["control"])
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(own_run["weights"]))
    with torch.no_grad():
        control = model.eval()(torch.from_numpy(control_inputs)).numpy().astype(np.float64)
    words = scores["prompt"].str.removeprefix("realistic photo of a close up of ").drop_duplicates().tolist()
    plan = plan_images(words, templates=["closeup"], n_images=N_IMAGES)
    image_root = tmp_path / "scores.images" / "oracle"
    synthetic = by_hand([image_root / path for path in plan["path"]], own_run["weights"]).astype(np.float64)
    for row in scores.itertuples(index=False):
        k = UNITS.index(row.unit)
        drawn = synthetic[(plan["prompt"] == row.prompt).to_numpy(), k]
        expected = cosy_scores(control[:, k], drawn)
        assert row.n_synthetic == len(drawn) == N_IMAGES and row.n_control == len(control)
        assert row.auc == pytest.approx(float(expected["auc"][0]), abs=1e-6)
        assert row.mad == pytest.approx(float(expected["mad"][0]), rel=1e-5, abs=1e-6)
        labels = np.r_[np.zeros(len(control)), np.ones(len(drawn))]
        assert row.auc == pytest.approx(roc_auc_score(labels, np.r_[control[:, k], drawn]), abs=1e-6)
        reference = mannwhitneyu(drawn, control[:, k], alternative="two-sided", method="auto")
        assert row.u == pytest.approx(reference.statistic, abs=1e-6)
        assert row.p_value == pytest.approx(reference.pvalue, rel=1e-6)


def test_torchscript_and_control_images_run_the_same_model(own_run, tmp_path: Path) -> None:
    """A TorchScript file gives the factory's scores; ``--control`` images go through ``--preprocess``: digits
    written as grey PNG-like arrays that it maps back to the control rows give the same scores."""
    first, second, third = tmp_path / "factory.csv", tmp_path / "script.csv", tmp_path / "images.csv"
    shared = ("--images", str(tmp_path / "images"), "--n-control", "50")
    assert main([*_arguments(own_run, first, *shared), "--control-inputs", str(own_run["control"])]) == 0
    assert main([*_arguments(own_run, second, *shared, model=("--torchscript", str(own_run["torchscript"]))),
                 "--control-inputs", str(own_run["control"])]) == 0
    factory = pd.read_csv(first)
    pd.testing.assert_frame_equal(factory, pd.read_csv(second), rtol=1e-6)
    pixels = np.load(own_run["control"])[:50]
    grey = np.round(255.0 * (1.0 - pixels.reshape(-1, 8, 8))).astype(np.uint8)
    np.save(tmp_path / "control.npy", np.repeat(grey[..., None], 3, axis=-1))
    assert main([*_arguments(own_run, third, *shared), "--control", str(tmp_path / "control.npy")]) == 0
    from_images = pd.read_csv(third)
    assert (from_images["n_control"] == 50).all()
    np.testing.assert_allclose(from_images["auc"], factory["auc"], atol=0.02)  # pixels rounded to 1/255


@pytest.mark.parametrize(("change", "message"), [
    (lambda a: a[: a.index("--preprocess")] + a[a.index("--preprocess") + 2:], r"your model needs --preprocess"),
    (lambda a: [*a, "--model", "cnn.pt"], r"give one model: --model .* got \['--model', '--factory'\]"),
    (lambda a: [*a[: a.index("--preprocess") + 1], '{"image_size": 8, "chanels": 1}',
                *a[a.index("--preprocess") + 2:]], r"--preprocess: ImagePreprocessing: unknown option 'chanels'"),
    (lambda a: [*a[: a.index("--preprocess") + 1], '{"image_size": 8, "channels": 1}',
                *a[a.index("--preprocess") + 2:]],
     r"--preprocess turns images into inputs of shape \(1, 8, 8\), but the inputs the model was recorded on have "
     r"shape \(64,\)"),
    (lambda a: [*a, "--control", "x.npy"], r"give one control set: --control \(images\) or --control-inputs"),
])
def test_bad_flags_are_named(own_run, tmp_path: Path, capsys, change, message: str) -> None:
    arguments = change([*_arguments(own_run, tmp_path / "out.csv"), "--control-inputs", str(own_run["control"])])
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert re.search(message, error), error
    assert not (tmp_path / "out.csv").exists()


def test_a_unit_that_is_not_recorded_names_the_row(own_run, tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.csv"
    pd.DataFrame([("logits.0", "class:a", 1, "concept"), ("1.3", "class:b", 1, "concept")],
                 columns=["unit", "explanation", "length", "kind"]).to_csv(bad, index=False)
    arguments = _arguments(own_run, tmp_path / "out.csv", "--control-inputs", str(own_run["control"]))
    arguments[arguments.index("--explanations") + 1] = str(bad)
    assert main(arguments) == 2
    assert re.search(r"bad\.csv, row 1: unit '1\.3' is not a unit of the model's layer", capsys.readouterr().err)
