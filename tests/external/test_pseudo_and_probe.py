"""open_clip checkpoints: image embeddings, SigLIP-style pseudo-labels and linear-probe units, against direct passes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import open_clip
import pandas as pd
import pytest
import torch
from PIL import Image
from scipy.special import expit

from neuroneval import io
from neuroneval.external.config import dataset_spec, model_spec
from neuroneval.external.image_datasets import image_paths
from neuroneval.external.pseudo import calibration_method, concept_prompts, model_calibration
from neuroneval.pipeline.external_steps import (
    external_image_dataset,
    external_image_embeddings,
    external_probe_activations,
    external_pseudo_concepts,
    external_train_probe,
)
from tests.external.conftest import run_step
from tests.workflow.conftest import deep_update

RUNTIME = {"device": "cpu", "batch_size": 3, "num_workers": 0}
A_GRID, B_GRID = [1.0, 10.0, 50.0], [-0.1, 0.0, 0.1, 0.2]


@pytest.fixture(scope="module")
def tables_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embedding_tables")


def dataset_tables(params: dict, dataset: str, root: Path) -> dict[str, Path]:
    tables = {"inputs": root / dataset / "inputs.csv", "concepts": root / dataset / "labels.parquet"}
    if not tables["inputs"].exists():
        run_step(external_image_dataset, output=tables, params={"dataset": dataset_spec(params["external"], dataset)},
                 wildcards={"image_dataset": dataset})
    return tables


def embeddings(params: dict, dataset: str, embedder: str, root: Path) -> Path:
    tables = dataset_tables(params, dataset, root)
    output = root / dataset / "embeddings" / f"{embedder}.npz"
    if not output.exists():
        run_step(external_image_embeddings, input={"inputs": tables["inputs"]}, output={"embeddings": output},
                 params={"dataset": dataset_spec(params["external"], dataset),
                         "model": model_spec(params["external"], embedder), "runtime": RUNTIME},
                 wildcards={"image_dataset": dataset, "embedder": embedder})
    return output


def clip_pixels(model: torch.nn.Module, paths: list[Path]) -> torch.Tensor:
    """open_clip's evaluation transform at the model's image size (OpenAI mean/std: the configs set none)."""
    transform = open_clip.image_transform(model.visual.image_size[0], is_train=False)
    tensors = []
    for path in paths:
        with Image.open(path) as image:
            tensors.append(transform(image.convert("RGB")))
    return torch.stack(tensors)


def test_image_embeddings_are_normalised_encoder_outputs(params: dict, paper_tree: tuple[Path, dict],
                                                         tables_root: Path) -> None:
    path = embeddings(params, "cub_test", "clip_b32", tables_root)
    with np.load(path) as payload:
        input_ids, values = payload["input_id"], payload["embeddings"]
    inputs = pd.read_csv(tables_root / "cub_test/inputs.csv")
    assert input_ids.tolist() == inputs["input_id"].tolist()
    original = paper_tree[1]["clip_b32"]
    with torch.no_grad():
        expected = original.encode_image(clip_pixels(original, image_paths(inputs, dataset_spec(
            params["external"], "cub_test")))).numpy()
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert values.dtype == np.float32 and values.shape == (8, 16)
    np.testing.assert_allclose(values, expected, atol=1e-5)


def pseudo(params: dict, calibration: dict, root: Path, tag: str) -> tuple[pd.DataFrame, dict, dict]:
    tables = dataset_tables(params, "imagenet_val", root)
    inputs = {"embeddings": embeddings(params, "imagenet_val", "siglip", root), "concepts": tables["concepts"]}
    if calibration["method"] == "fit":
        inputs |= {"calibration_embeddings": embeddings(params, calibration["dataset"], "siglip", root),
                   "calibration_concepts": dataset_tables(params, calibration["dataset"], root)["concepts"]}
    outputs = {"concepts": root / tag / "pseudo-siglip.parquet", "summary": root / tag / "pseudo-siglip.summary.json"}
    spec = {"templates": {"default": "{}", "parent:": "a photo of a {}"}, "calibration": calibration}
    run_step(external_pseudo_concepts, input=inputs, output=outputs,
             params={"model": model_spec(params["external"], "siglip"), "pseudo": spec,
                     "grids": {"a_grid": A_GRID, "b_grid": B_GRID}, "runtime": RUNTIME},
             wildcards={"image_dataset": "imagenet_val", "embedder": "siglip"})
    frame, metadata = io.read_concept_table(outputs["concepts"])
    return frame, metadata, json.loads(outputs["summary"].read_text())


def cosines(frame: pd.DataFrame, a: float, b: float) -> np.ndarray:
    """Invert c = σ(a (cos − b)) back to the cosines."""
    values = frame.drop(columns="input_id").to_numpy(np.float64)
    return np.log(values / (1 - values)) / a + b


def test_model_calibration_reproduces_the_siglip_sigmoid(params: dict, paper_tree: tuple[Path, dict],
                                                         tables_root: Path) -> None:
    frame, metadata, summary = pseudo(params, {"method": "model"}, tables_root, "model")
    siglip = paper_tree[1]["siglip"]
    inputs = pd.read_csv(tables_root / "imagenet_val/inputs.csv")
    paths = image_paths(inputs, dataset_spec(params["external"], "imagenet_val"))
    names = ["tench", "goldfish", "great white shark", "tiger shark", "hammerhead", "a photo of a fish",
             "a photo of a shark"]
    assert list(metadata["prompts"].values()) == names
    tokenizer = open_clip.get_tokenizer("ViT-B-32", context_length=12)
    with torch.no_grad():
        logits, _ = siglip.get_logits(clip_pixels(siglip, paths), tokenizer(names))
    concepts = [c for c in frame.columns if c != "input_id"]
    np.testing.assert_allclose(frame[concepts].to_numpy(), torch.sigmoid(logits).numpy(), atol=1e-5)
    a, b = model_calibration(siglip)
    assert (metadata["a"], metadata["b"]) == pytest.approx((a, b)) and a == pytest.approx(np.exp(np.log(1 / 0.07)))
    assert metadata["source"] == "pseudo:siglip" and metadata["hierarchy"]["parent:fish"]
    assert set(summary["auc"]) == set(concepts) and summary["calibration"] == "model"


def test_fixed_and_fitted_calibrations(params: dict, tables_root: Path) -> None:
    model_frame, model_metadata, _ = pseudo(params, {"method": "model"}, tables_root, "model")
    cosine = cosines(model_frame, model_metadata["a"], model_metadata["b"])
    fixed, _, _ = pseudo(params, {"method": "fixed", "a": 58.0, "b": 0.13}, tables_root, "fixed")
    np.testing.assert_allclose(fixed.drop(columns="input_id").to_numpy(), expit(58.0 * (cosine - 0.13)), atol=1e-4)

    # Fit on a labelled calibration set: every other ImageNet image, declared as its own dataset.
    imagenet = params["external"]["datasets"]["imagenet_val"]
    with_calibration = deep_update(params, {"external": {"datasets": {"imagenet_cal": {**imagenet, "limit": 10}}}})
    fitted, metadata, summary = pseudo(with_calibration, {"method": "fit", "dataset": "imagenet_cal"}, tables_root,
                                       "fit")
    calibration_inputs = pd.read_csv(tables_root / "imagenet_cal/inputs.csv")
    rows = pd.read_csv(tables_root / "imagenet_val/inputs.csv").reset_index().set_index("path").loc[
        calibration_inputs["path"], "index"].to_numpy()
    labels, _ = io.read_concept_table(tables_root / "imagenet_cal/labels.parquet")
    truth = labels.drop(columns="input_id").to_numpy(np.float64)
    bce = {(a, b): np.mean(np.logaddexp(0, a * (cosine[rows] - b)) - truth * a * (cosine[rows] - b))
           for a in A_GRID for b in B_GRID}
    assert (metadata["a"], metadata["b"]) == min(bce, key=bce.get)
    assert metadata["calibration_bce"] == pytest.approx(min(bce.values()), abs=1e-5)
    np.testing.assert_allclose(fitted.drop(columns="input_id").to_numpy(),
                               expit(metadata["a"] * (cosine - metadata["b"])), atol=1e-4)
    assert summary["calibration"] == "fit"


def test_prompt_templates_and_calibration_checks() -> None:
    display = {"class:n1": "tench", "parent:fish": "fish"}
    assert concept_prompts(["class:n1", "parent:fish", "attr:x::y"], display,
                           {"class:": "a photo of a {}", "parent:": "a {} of some kind"}) == [
        "a photo of a tench", "a fish of some kind", "x::y"]
    with pytest.raises(ValueError, match=r"has no '\{\}'"):
        concept_prompts(["class:n1"], display, {"class:": "a photo"})
    with pytest.raises(ValueError, match=r"pseudo_labels\.clip\.calibration: method 'fixed' needs \['b'\]"):
        calibration_method({"calibration": {"method": "fixed", "a": 1.0}}, key="pseudo_labels.clip.calibration")
    assert calibration_method({}, key="k") == {"method": "model"}
    with pytest.raises(ValueError, match="no logit_bias"):
        model_calibration(open_clip.CLIP(embed_dim=8, vision_cfg={"image_size": 16, "layers": 1, "width": 16,
                                                                    "patch_size": 8, "head_width": 8},
                                         text_cfg={"context_length": 4, "vocab_size": 10, "width": 8, "heads": 1,
                                                   "layers": 1}))


def test_probe_units_are_sigmoids_of_the_trained_probe(params: dict, tables_root: Path) -> None:
    external = params["external"]
    probe_spec = external["probes"]["cub_probe"]
    train_tables = dataset_tables(params, "cub_train", tables_root)
    checkpoint, card = tables_root / "probe/cub_probe.pt", tables_root / "probe/cub_probe.json"
    run_step(external_train_probe, input={"embeddings": embeddings(params, "cub_train", "clip_b32", tables_root),
                                          "concepts": train_tables["concepts"]},
             output={"checkpoint": checkpoint, "card": card}, params={"probe": probe_spec},
             wildcards={"external_probe": "cub_probe"})
    output = tables_root / "cub_test/cub_probe/concepts.parquet"
    test_embeddings = embeddings(params, "cub_test", "clip_b32", tables_root)
    run_step(external_probe_activations, input={"embeddings": test_embeddings, "checkpoint": checkpoint},
             output={"table": output}, wildcards={"image_dataset": "cub_test", "external_probe": "cub_probe"})
    frame, metadata = io.read_activation_table(output)
    payload = torch.load(checkpoint, weights_only=True)
    with np.load(test_embeddings) as stored:
        features = torch.from_numpy(stored["embeddings"])
    expected = torch.sigmoid(features @ payload["state_dict"]["weight"].T + payload["state_dict"]["bias"]).numpy()
    attributes = payload["concept_names"]
    assert len(attributes) == 112 and all(name.startswith("attr:") for name in attributes)
    assert frame.columns.tolist() == ["input_id", *attributes]
    np.testing.assert_allclose(frame[attributes].to_numpy(), expected, atol=1e-6)
    assert metadata["unit_concepts"][attributes[0]] == [attributes[0]] and metadata["layer"] == "concepts"
    card_values = json.loads(card.read_text())
    assert card_values["train_inputs"] == 7 and card_values["holdout_inputs"] == 1
    assert 0 <= card_values["holdout_accuracy"] <= 1
