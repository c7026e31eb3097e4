"""CoSy on your own model (``family: custom`` with a declared ``preprocess``): synthetic images from a tiny local
diffusers pipeline → the digits MLP's activations on them vs on the setting's own inputs → AUC/MAD, checked against
the model run by hand, sklearn's ``roc_auc_score`` and MAD by its formula; the params check lifts its refusal for a
runnable model and keeps it, naming the key, for tables without one."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from PIL import Image
from sklearn.metrics import roc_auc_score

from neuroneval.cosy.activations import custom_units
from neuroneval.cosy.prompts import fill_template
from neuroneval.external.preprocess import ImagePreprocessing
from neuroneval.params.check import check_params
from tests.external import own_model
from tests.external.test_own_params import SCHEMA, own_params, problems_of
from tests.external.test_own_setting import own_workspace
from tests.workflow.conftest import run_tool

#: sklearn's digits: 8x8 grey levels scaled to [0, 1] (own_model's pixels / 16), one row of 64 values.
DIGITS_PREPROCESS = {"image_size": 8, "channels": 1, "value_range": [0.0, 1.0], "flatten": True}
CLASS_NAMES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
N_IMAGES = 3
N_CONTROL = 120


def by_hand(model: torch.nn.Module, png_files: list[Path], *, invert: bool = False) -> np.ndarray:
    """The oracle's forward pass: each PNG grey (PIL ``L``), shrunk to 8x8, scaled to [0, 1] (``invert``: 1 − that),
    flattened, run."""
    rows = [np.asarray(Image.open(path).convert("L").resize((8, 8), Image.Resampling.BILINEAR), dtype=np.float32)
            .reshape(-1) / 255.0 for path in png_files]
    rows = [1.0 - row if invert else row for row in rows]
    with torch.no_grad():
        return model(torch.from_numpy(np.stack(rows))).numpy()


def trained_model(state: Path) -> torch.nn.Module:
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(state))
    return model.eval()


@pytest.fixture(scope="module")
def user_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("own_cosy_inputs")
    own_model.write_user_files(root)
    (root / "names.txt").write_text("\n".join(CLASS_NAMES) + "\n")
    return root


def test_custom_units_are_the_model_on_its_preprocessed_images(user_files: Path, tmp_path: Path) -> None:
    images = np.random.default_rng(1).integers(0, 256, size=(7, 24, 24, 3), dtype=np.uint8)
    files = []
    for index, image in enumerate(images):
        files.append(tmp_path / f"{index}.png")
        Image.fromarray(image).save(files[-1])
    spec = {"family": "module", "factory": "tests.external.own_model:digits_mlp",
            "weights_path": str(user_files / "mlp.pt")}
    values, names = custom_units(spec, images, layer="logits", preprocessing=ImagePreprocessing.from_params(
        DIGITS_PREPROCESS), input_shape=(64,), batch_size=3)
    assert names == [f"logits.{k}" for k in range(10)]
    np.testing.assert_allclose(values, by_hand(trained_model(user_files / "mlp.pt"), files), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"external.models.digits_mlp.preprocess turns images into inputs of shape "
                                         r"\(1, 8, 8\), but the inputs the model was recorded on have shape \(64,\)"):
        custom_units(spec, images, layer="logits", preprocessing=ImagePreprocessing(image_size=8, channels=1),
                     input_shape=(64,), key="external.models.digits_mlp.preprocess")


def cosy_params(settings: list[str], generators: list[str]) -> dict:
    config = own_params()
    config["cosy"]["settings"] = settings
    config["cosy"]["generators"] = generators
    config["cosy"]["generative"]["settings"] = settings
    return config


def test_cosy_on_a_custom_model_with_a_generator_passes_the_params_check() -> None:
    check_params(cosy_params(["mine_custom"], ["diffusers"]), schema_path=SCHEMA)
    check_params(cosy_params(["mine_custom", "vit_final_gt"], ["oracle", "embedded"]), schema_path=SCHEMA)


@pytest.mark.parametrize(("settings", "generators", "message"), [
    (["mine_tables"], ["diffusers"],
     "cosy.settings: 'mine_tables' is a setting of your own (dataset 'mine_tables'); CoSy runs the setting's model "
     "on generated images, and its model 'my_mlp' is not a family: custom model of external.models (['digits_mlp']) "
     "that the workflow can run: a table cannot be run on new images"),
    (["mine_tables"], ["diffusers"], "cosy.generative.settings: 'mine_tables' is a setting of your own"),
    (["mine_custom"], ["oracle"],
     "cosy.settings: 'mine_custom' is a setting of your own (dataset 'mine_rows'); its model runs on generated "
     "images, but cosy.generators ['oracle'] names no generator of new images"),
])
def test_cosy_without_a_runnable_model_or_generator_is_refused_by_key(settings: list[str], generators: list[str],
                                                                        message: str) -> None:
    assert message in problems_of(cosy_params(settings, generators))


def explain_cosy_params(settings: list[str], generators: list[str]) -> dict:
    config = copy.deepcopy(own_params())
    config["explain"]["settings"].update({name: {"methods": ["netdissect"]} for name in settings})
    config["explain"]["cosy"]["settings"] = settings
    config["explain"]["cosy"]["generators"] = generators
    return config


def test_explain_cosy_on_a_custom_model_with_a_generator_passes_the_params_check() -> None:
    check_params(explain_cosy_params(["mine_custom"], ["diffusers"]), schema_path=SCHEMA)


@pytest.mark.parametrize(("settings", "generators", "message"), [
    (["mine_tables"], ["diffusers"],
     "explain.cosy.settings: 'mine_tables' is a setting of your own (dataset 'mine_tables'); CoSy runs the "
     "setting's model on generated images, and its model 'my_mlp' is not a family: custom model of external.models "
     "(['digits_mlp']) that the workflow can run: a table cannot be run on new images"),
    (["mine_custom"], ["oracle"],
     "explain.cosy.settings: 'mine_custom' is a setting of your own (dataset 'mine_rows'); its model runs on "
     "generated images, but explain.cosy.generators ['oracle'] names no generator of new images"),
    (["mine_custom"], ["oracle", "embedded"],
     "explain.cosy.settings: 'mine_custom' is a setting of your own (dataset 'mine_rows'); explain.cosy.generators "
     "['oracle', 'embedded'] names the oracle, which renders the vision world's concepts only"),
])
def test_explain_cosy_without_a_runnable_model_or_generator_is_refused_by_key(settings: list[str],
                                                                                generators: list[str],
                                                                                message: str) -> None:
    assert message in problems_of(explain_cosy_params(settings, generators))


def test_a_preprocess_block_is_checked_before_any_job() -> None:
    config = own_params()
    config["external"]["models"]["digits_mlp"]["preprocess"] = {**DIGITS_PREPROCESS, "channels": 2}
    config["external"]["models"]["clip_b"] = {"family": "open_clip", "pretrained": "clip.bin",
                                              "preprocess": DIGITS_PREPROCESS}
    config["external"]["models"]["digits_mlp"]["preprocess"]["chanels"] = 1
    message = problems_of(config)
    assert "external.models.digits_mlp.preprocess.channels: 2 is not one of [1, 3]" in message
    assert "external.models.digits_mlp.preprocess.chanels: unknown key; did you mean 'channels'?" in message
    assert "external.models.clip_b: False schema does not allow" in message  # a custom model's block only


def cosy_overlay(data_root: Path) -> dict:
    """The user's overlay: the digits MLP with its preprocessing, CoSy on its logits with the tiny pipeline."""
    return {
        "external": {
            "data_root": str(data_root), "device": "cpu", "batch_size": 64,
            "datasets": {"mine_rows": {"kind": "array", "images": "images.npy", "labels": "labels.npy",
                                       "class_names_file": "names.txt"}},
            "models": {"digits_mlp": {"family": "custom", "factory": "own_model:digits_mlp", "weights_path": "mlp.pt",
                                      "preprocess": DIGITS_PREPROCESS}},
        },
        "settings": {"mine_custom": {"dataset": "mine_rows", "units": [{"model": "digits_mlp", "layer": "logits"}],
                                     "concepts": {"source": "labels", "prefixes": ["class:"]}}},
        "meta": {"settings": ["mine_custom"]},
        "cosy": {"settings": ["mine_custom"], "generators": ["diffusers"], "max_units": 3, "n_images": N_IMAGES,
                 "n_control": N_CONTROL, "templates": {"n_concepts": 1},
                 "seeds": {"generation_seeds": [0, 1], "n_units": 1}, "distributions": {"n_units": 1, "n_control": 20},
                 "generative": {"settings": ["mine_custom"]},
                 "diffusers": {"model": "tiny-sd", "steps": 2, "height": 16, "width": 16, "dtype": "float32",
                               "batch_size": 8, "device": "cpu"}},
        "explain": {"cosy": {"settings": []}, "crowd": {"settings": []}},
    }


@pytest.mark.slow
def test_snakemake_builds_cosy_on_the_custom_model_as_the_library_computes_it(user_files: Path,
                                                                             tmp_path: Path) -> None:
    """Slow (marker ``slow``): Snakemake generates CoSy's images with a tiny diffusers pipeline and scores them."""
    pytest.importorskip("diffusers")
    from tests.cosy.test_diffusers_backend import tiny_pipeline_folder

    tiny_pipeline_folder(user_files / "tiny-sd")
    workspace = own_workspace(tmp_path, user_files, cosy_overlay(user_files))
    dry = run_tool(["snakemake", "-n", "--cores", "1", "results/cosy/scores.csv", "--configfile", "mine.yaml"],
                   workspace)
    assert "vision_world" not in dry.stdout and "cosy_train_embedded" not in dry.stdout
    run_tool(["snakemake", "--cores", "2", "results/cosy/scores.csv", "--configfile", "mine.yaml"], workspace)

    scores = pd.read_csv(workspace / "results/cosy/scores.csv", dtype={"unit": str})
    assert set(scores["setting"]) == {"mine_custom"} and set(scores["generator"]) == {"diffusers"}
    assert scores["unit"].nunique() == 3 and set(scores["method"]) == {"true", "random"}
    assert set(scores.loc[scores["method"] == "true", "explanation"]) <= set(CLASS_NAMES)
    manifest = pd.read_parquet(workspace / "data/cosy/diffusers/manifest.parquet")
    model = trained_model(user_files / "mlp.pt")
    with torch.no_grad():
        control = model(torch.from_numpy(np.load(user_files / "images.npy")[:N_CONTROL])).numpy().astype(np.float64)
    labels = np.load(user_files / "labels.npy")[:N_CONTROL]
    for row in scores.itertuples(index=False):
        prompt = fill_template("closeup", row.explanation)
        images = manifest[(manifest["prompt"] == prompt) & (manifest["generation_seed"] == 0)].sort_values(
            "image_index")
        assert len(images) == N_IMAGES == row.n_synthetic
        k = int(row.unit.removeprefix("logits."))
        synthetic = by_hand(model, [workspace / "data/cosy/diffusers" / path for path in images["path"]])[:, k]
        keep = labels != k if row.control == "without_target" else np.ones(N_CONTROL, dtype=bool)
        reference = control[keep, k]
        assert row.n_control == keep.sum()
        auc = roc_auc_score(np.r_[np.zeros(len(reference)), np.ones(len(synthetic))], np.r_[reference, synthetic])
        mad = (synthetic.mean() - reference.mean()) / reference.std(ddof=1)
        assert row.auc == pytest.approx(auc, abs=1e-6)  # the CSV keeps 6 significant digits
        assert row.mad == pytest.approx(mad, rel=1e-4, abs=1e-5)
    table2 = pd.read_csv(workspace / "results/cosy/table2.csv")
    assert set(table2["setting"]) == {"mine_custom"}
    generative = pd.read_csv(workspace / "results/cosy/generative.csv")
    assert not generative.empty


def test_a_cosy_setting_of_a_custom_model_is_of_kind_custom() -> None:
    from neuroneval.pipeline.cosy_steps import cosy_setting_units, custom_units_path

    config = own_params()
    files = cosy_setting_units(config["settings"], ["mine_custom", "vit_final_gt"], ["digits_mlp"], ["digits_mlp"])
    assert files["mine_custom"]["kind"] == "custom" and files["mine_custom"]["checkpoint"] is None
    assert files["mine_custom"]["activations"] == "data/activations/mine_rows/digits_mlp/logits.parquet"
    assert files["vit_final_gt"]["kind"] == "world"
    assert custom_units_path("diffusers", "mine_custom") == "data/cosy/diffusers/units/mine_custom.parquet"


def test_a_synthetic_table_of_other_images_is_refused_by_file(tmp_path: Path) -> None:
    from neuroneval import io
    from neuroneval.cosy.study import _custom_synthetic_units

    table = tmp_path / "units.parquet"
    io.write_activation_table(table, pd.DataFrame({"input_id": np.arange(4), "logits.0": np.zeros(4, np.float32)}),
                              metadata={"model": "m", "layer": "logits", "dataset": "d", "pooling": "mean"})
    values, names = _custom_synthetic_units(table, 4)
    assert names == ["logits.0"] and values.shape == (4, 1)
    with pytest.raises(ValueError, match=rf"{table}: expected the 5 images of the manifest as input_id 0..4"):
        _custom_synthetic_units(table, 5)


@pytest.mark.slow
def test_snakemake_builds_explain_cosy_on_the_custom_model_as_the_library_computes_it(user_files: Path,
                                                                                     tmp_path: Path) -> None:
    """Slow (marker ``slow``): it builds a workflow copy with the setting's explanation methods and the
    embedded generator (~6 min on a loaded 2-core machine).

    ``explain.cosy`` on your setting: each explanation file's unit scored on the images of its text, the model
    run by hand on them and on the held-out inputs, AUC by sklearn and MAD by Eq. 4."""
    pytest.importorskip("diffusers")
    from neuroneval.cosy.evaluation import concept_text
    from neuroneval.explain.benchmark import holdout_mask
    from tests.cosy.test_diffusers_backend import tiny_pipeline_folder

    tiny_pipeline_folder(user_files / "tiny-sd")
    overlay = cosy_overlay(user_files)
    overlay["cosy"] = {"diffusers": overlay["cosy"]["diffusers"]}
    overlay["explain"] = {
        "settings": {"mine_custom": {"methods": ["netdissect"]}}, "run_settings": ["mine_custom"],
        "cosy": {"settings": ["mine_custom"], "methods": ["netdissect"], "generators": ["diffusers"],
                 "max_units": 2, "n_images": 2, "n_control": 40},
        "crowd": {"settings": []}}
    workspace = own_workspace(tmp_path, user_files, overlay)
    run_tool(["snakemake", "--cores", "2", "results/explain/cosy/diffusers.csv", "--configfile", "mine.yaml"],
             workspace)

    scores = pd.read_csv(workspace / "results/explain/cosy/diffusers.csv", dtype={"unit": str}, keep_default_na=False,
                         na_values=[""])
    scored = scores[scores["method"] != "ideal"]
    assert set(scored["setting"]) == {"mine_custom"} and set(scored["method"]) == {"netdissect", "random_l1", "truth"}
    assert scored["unit"].nunique() == 2 and scored["auc"].notna().all()
    params = yaml.safe_load((workspace / "params.yaml").read_text())["explain"]
    inputs = np.load(user_files / "images.npy")
    held = holdout_mask(len(inputs), float(params["holdout_fraction"]), int(params["random_seed"]))
    model = trained_model(user_files / "mlp.pt")
    with torch.no_grad():
        control = model(torch.from_numpy(inputs[held][:40])).numpy().astype(np.float64)
    manifest = pd.read_parquet(workspace / "data/explain_cosy/diffusers/manifest.parquet")
    for row in scored.itertuples(index=False):
        assert row.explanation == concept_text(row.concept) and row.n_control == 40
        images = manifest[manifest["prompt"] == fill_template("closeup", row.explanation)].sort_values("image_index")
        assert len(images) == 2 == row.n_synthetic
        k = int(row.unit.removeprefix("logits."))
        synthetic = by_hand(model, [workspace / "data/explain_cosy/diffusers" / path for path in images["path"]])[:, k]
        reference = control[:, k]
        auc = roc_auc_score(np.r_[np.zeros(len(reference)), np.ones(len(synthetic))], np.r_[reference, synthetic])
        mad = (synthetic.mean() - reference.mean()) / reference.std(ddof=1)
        assert row.auc == pytest.approx(auc, abs=1e-6)
        assert row.mad == pytest.approx(mad, rel=1e-4, abs=1e-5)
