"""torchvision and timm checkpoints on image folders: activation tables equal a direct forward pass of the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import timm
import torch
from PIL import Image
from timm.data import create_transform, resolve_data_config
from torchvision import transforms

from neuroneval import io
from neuroneval.external.config import dataset_spec, model_spec
from neuroneval.external.image_datasets import image_paths
from neuroneval.pipeline.external_steps import external_image_dataset, external_vision_activations
from tests.external import fakes
from tests.external.conftest import run_step

IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def activations(params: dict, dataset: str, model: str, layer: str, root: Path) -> tuple[pd.DataFrame, dict, list]:
    """The dataset step (once per dataset) then the activation step; returns the table, metadata and image paths."""
    external = params["external"]
    tables = {"inputs": root / dataset / "inputs.csv", "concepts": root / dataset / "labels.parquet"}
    if not tables["inputs"].exists():
        run_step(external_image_dataset, output=tables, params={"dataset": dataset_spec(external, dataset)},
                 wildcards={"image_dataset": dataset})
    output = root / dataset / model / f"{layer}.parquet"
    runtime = {"device": "cpu", "batch_size": 3, "num_workers": 0}  # batches of 3: the last one is short
    run_step(external_vision_activations, input=tables, output={"table": output},
             params={"dataset": dataset_spec(external, dataset), "model": model_spec(external, model),
                     "runtime": runtime, "pooling": "mean"},
             wildcards={"image_dataset": dataset, "vision_model": model, "layer": layer})
    frame, metadata = io.read_activation_table(output)
    paths = image_paths(pd.read_csv(tables["inputs"]), dataset_spec(external, dataset))
    return frame, metadata, paths


def pixels(paths: list[Path], transform) -> torch.Tensor:
    tensors = []
    for path in paths:
        with Image.open(path) as image:
            tensors.append(transform(image.convert("RGB")))
    return torch.stack(tensors)


def small_torchvision_transform() -> transforms.Compose:
    """What ``image_transform: {resize_size: 40, crop_size: 32}`` means, written out independently."""
    return transforms.Compose([transforms.Resize(40), transforms.CenterCrop(32), transforms.ToTensor(),
                               transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


@pytest.fixture(scope="module")
def tables_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("vision_tables")


def test_torchvision_softmax_units_are_the_class_probabilities(params: dict, paper_tree: tuple[Path, dict],
                                                               tables_root: Path) -> None:
    frame, metadata, paths = activations(params, "places365_val", "resnet18_places", "softmax", tables_root)
    original = paper_tree[1]["resnet18_places"]
    with torch.no_grad():
        expected = torch.softmax(original(pixels(paths, small_torchvision_transform())).double(), dim=1)
    np.testing.assert_allclose(frame.drop(columns="input_id").to_numpy(), expected.numpy(), atol=1e-6)
    assert frame.columns.tolist() == ["input_id", "0", "1", "2", "3"]
    assert metadata["unit_concepts"] == {"0": ["class:airfield"], "1": ["class:bakery_shop"], "2": ["class:coast"],
                                         "3": ["class:desert_sand"]}
    assert (metadata["model"], metadata["layer"], metadata["dataset"], metadata["pooling"]) == (
        "resnet18_places", "softmax", "places365_val", "none")


def test_torchvision_layer4_units_are_spatial_means(params: dict, paper_tree: tuple[Path, dict],
                                                    tables_root: Path) -> None:
    frame, metadata, paths = activations(params, "imagenet_val", "resnet50", "layer4", tables_root)
    model = paper_tree[1]["resnet50"]
    with torch.no_grad():
        x = pixels(paths, small_torchvision_transform())
        x = model.maxpool(model.relu(model.bn1(model.conv1(x))))
        x = model.layer4(model.layer3(model.layer2(model.layer1(x))))
        expected = x.mean(dim=(2, 3))
    assert frame.shape == (len(paths), 1 + 512)
    np.testing.assert_allclose(frame.drop(columns="input_id").to_numpy(), expected.numpy(), atol=1e-5)
    assert metadata["pooling"] == "mean" and metadata["unit_concepts"] == {}


def timm_pixels(model: torch.nn.Module, paths: list[Path]) -> torch.Tensor:
    config = resolve_data_config({"input_size": (3, 32, 32)}, model=model)
    return pixels(paths, create_transform(**config, is_training=False))


def test_timm_vit_softmax_superclass_and_hidden_block(params: dict, paper_tree: tuple[Path, dict],
                                                      tables_root: Path) -> None:
    vit = paper_tree[1]["vit_b16"]
    assert isinstance(vit, timm.models.VisionTransformer)
    softmax, _, paths = activations(params, "imagenet_val", "vit_b16", "softmax", tables_root)
    superclass, super_metadata, _ = activations(params, "imagenet_val", "vit_b16", "superclass", tables_root)
    hidden, _, _ = activations(params, "imagenet_val", "vit_b16", "blocks.0", tables_root)
    with torch.no_grad():
        x = timm_pixels(vit, paths)
        probabilities = torch.softmax(vit(x).double(), dim=1).numpy()
        tokens = vit.norm_pre(vit.patch_drop(vit._pos_embed(vit.patch_embed(x))))
        block = vit.blocks[0](tokens).mean(dim=1).numpy()
    np.testing.assert_allclose(softmax.drop(columns="input_id").to_numpy(), probabilities, atol=1e-6)
    assert superclass.columns.tolist() == ["input_id", "parent:fish", "parent:shark"]
    np.testing.assert_allclose(superclass["parent:fish"], probabilities[:, :2].sum(axis=1), atol=1e-6)
    np.testing.assert_allclose(superclass["parent:shark"], probabilities[:, 2:].sum(axis=1), atol=1e-6)
    assert super_metadata["unit_concepts"] == {"parent:fish": ["parent:fish"], "parent:shark": ["parent:shark"]}
    assert hidden.shape == (len(paths), 1 + fakes.TINY_VIT["embed_dim"])
    np.testing.assert_allclose(hidden.drop(columns="input_id").to_numpy(), block, atol=1e-5)


def test_cbm_concept_units_are_sigmoids_named_by_the_attributes(params: dict, paper_tree: tuple[Path, dict],
                                                                tables_root: Path) -> None:
    frame, metadata, paths = activations(params, "cub_test", "cub_cbm", "concepts", tables_root)
    _, concept_metadata = io.read_concept_table(tables_root / "cub_test/labels.parquet")
    attributes = [name for name in concept_metadata["concepts"] if name.startswith("attr:")]
    with torch.no_grad():
        expected = torch.sigmoid(paper_tree[1]["cub_cbm"](pixels(paths, small_torchvision_transform()))).numpy()
    assert frame.columns.tolist() == ["input_id", *attributes]
    assert frame["input_id"].tolist() == [2, 4, 6, 8, 10, 12, 14, 16]
    np.testing.assert_allclose(frame[attributes].to_numpy(), expected, atol=1e-6)
    assert metadata["unit_concepts"][attributes[5]] == [attributes[5]]


def test_class_count_mismatch_is_an_error(params: dict, tables_root: Path) -> None:
    with pytest.raises(ValueError, match="the model has 4 outputs but the dataset has 5 classes"):
        activations({**params, "external": {**params["external"], "models": {
            **params["external"]["models"], "wrong": params["external"]["models"]["resnet18_places"]}}},
                    "imagenet_val", "wrong", "softmax", tables_root)
    with pytest.raises(ValueError, match="superclass layer needs superclasses"):
        activations(params, "places365_val", "resnet18_places", "superclass", tables_root)
