"""Image folders, Places-style split files and CUB → an input table and a label concept table meeting the contract."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.external.config import dataset_spec
from neuroneval.external.hierarchy import read_hierarchy
from neuroneval.external.image_datasets import build_image_dataset, class_concept_name
from neuroneval.models.loaders_images import CUB_CBM_ATTRIBUTE_IDS
from neuroneval.pipeline.external_steps import external_image_dataset
from tests.external import fakes
from tests.external.conftest import run_step


def build(params: dict, name: str, tmp_path: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Run the workflow step and read its two outputs back through the validating readers."""
    outputs = {"inputs": tmp_path / name / "inputs.csv", "concepts": tmp_path / name / "labels.parquet"}
    run_step(external_image_dataset, output=outputs, params={"dataset": dataset_spec(params["external"], name)},
             wildcards={"image_dataset": name})
    concepts, metadata = io.read_concept_table(outputs["concepts"])
    return pd.read_csv(outputs["inputs"]), concepts, metadata


def test_imagenet_folder_with_names_and_superclasses(params: dict, tmp_path: Path) -> None:
    inputs, concepts, metadata = build(params, "imagenet_val", tmp_path)
    n_images = fakes.IMAGES_PER_CLASS * len(fakes.IMAGENET_CLASSES)
    assert inputs.columns.tolist() == ["input_id", "path", "label"]
    assert inputs["input_id"].tolist() == list(range(n_images))
    assert inputs["path"].iloc[0] == f"{fakes.IMAGENET_CLASSES[0]}/{fakes.IMAGENET_CLASSES[0]}_0.png"
    assert concepts["input_id"].tolist() == inputs["input_id"].tolist()
    classes = [f"class:{wnid}" for wnid in fakes.IMAGENET_CLASSES]
    assert metadata["classes"] == classes
    assert metadata["concepts"] == [*classes, "parent:fish", "parent:shark"]
    assert metadata["hierarchy"] == {"parent:fish": classes[:2], "parent:shark": classes[2:]}
    assert metadata["display_names"]["class:n00000001"] == "tench"
    assert metadata["display_names"]["parent:shark"] == "shark"
    one_hot = concepts[classes].to_numpy()
    np.testing.assert_array_equal(one_hot.argmax(axis=1), inputs["label"])
    np.testing.assert_array_equal(one_hot.sum(axis=1), 1)
    np.testing.assert_array_equal(concepts["parent:fish"], (inputs["label"] < 2).astype(np.float32))


def test_places_split_file_and_category_ids(params: dict, tmp_path: Path) -> None:
    inputs, concepts, metadata = build(params, "places365_val", tmp_path)
    assert metadata["classes"] == ["class:airfield", "class:bakery_shop", "class:coast", "class:desert_sand"]
    assert metadata["display_names"]["class:bakery_shop"] == "bakery shop"
    assert inputs["label"].tolist() == [index % 4 for index in range(len(inputs))]
    assert inputs["path"].iloc[1] == "Places365_val_00000002.png"
    assert metadata["hierarchy"] == {}
    np.testing.assert_array_equal(concepts[metadata["classes"]].to_numpy().argmax(axis=1), inputs["label"])


def test_cub_split_attributes_and_majority_vote(params: dict, paper_tree: tuple[Path, dict], tmp_path: Path) -> None:
    test_inputs, test_concepts, metadata = build(params, "cub_test", tmp_path)
    train_inputs, train_concepts, _ = build(params, "cub_train", tmp_path)
    assert test_inputs["input_id"].tolist() == [2, 4, 6, 8, 10, 12, 14, 16]  # odd positions are train
    assert train_inputs["input_id"].tolist() == [1, 3, 5, 7, 9, 11, 13, 15]
    assert test_inputs["path"].iloc[0].startswith("images/001.Black_footed_Albatross/")
    attributes = [name for name in metadata["concepts"] if name.startswith("attr:")]
    assert len(attributes) == len(CUB_CBM_ATTRIBUTE_IDS) == 112
    assert attributes[0] == f"attr:has_wing_color::value_{CUB_CBM_ATTRIBUTE_IDS[0]}"
    assert metadata["classes"][0] == "class:Black_footed_Albatross" and metadata["split"] == "test"
    assert metadata["display_names"][attributes[0]] == f"wing color: value {CUB_CBM_ATTRIBUTE_IDS[0]}"
    # Oracle: each image's attributes = majority over its class's train images of the raw labels.
    raw = pd.read_csv(paper_tree[0] / "CUB_200_2011/attributes/image_attribute_labels.txt", sep=" ",
                      names=["image", "attribute", "present", "certainty", "time"])
    raw = raw[raw["attribute"].isin(CUB_CBM_ATTRIBUTE_IDS)].pivot(index="image", columns="attribute",
                                                                   values="present")[list(CUB_CBM_ATTRIBUTE_IDS)]
    train_mean = raw.loc[train_inputs["input_id"]].groupby(train_inputs["label"].to_numpy()).mean()
    expected = (train_mean.loc[test_inputs["label"]].to_numpy() >= 0.5).astype(np.float32)
    np.testing.assert_array_equal(test_concepts[attributes].to_numpy(), expected)
    np.testing.assert_array_equal(train_concepts[attributes].to_numpy(),
                                  (train_mean.loc[train_inputs["label"]].to_numpy() >= 0.5))


def test_cub_without_majority_vote_keeps_raw_labels_and_all_attributes(paper_tree: tuple[Path, dict]) -> None:
    spec = {"kind": "cub", "root": str(paper_tree[0] / "CUB_200_2011"), "split": "all", "attributes": "all"}
    dataset = build_image_dataset(spec, name="cub_all")
    assert len(dataset.inputs) == 16
    assert sum(name.startswith("attr:") for name in dataset.metadata["concepts"]) == fakes.CUB_ATTRIBUTES
    first = Path(spec["root"], "attributes/image_attribute_labels.txt").read_text().splitlines()[0].split()
    assert dataset.concepts.loc[0, "attr:has_bill_shape::value_1"] == float(first[2])


def test_limit_keeps_images_spread_over_the_classes(paper_tree: tuple[Path, dict]) -> None:
    spec = {"kind": "image_folder", "root": str(paper_tree[0] / "imagenet/val"), "limit": 5}
    dataset = build_image_dataset(spec, name="imagenet_small")
    assert dataset.inputs["label"].tolist() == [0, 1, 2, 3, 4]
    assert dataset.metadata["display_names"]["class:n00000001"] == "n00000001"


def test_hierarchy_text_format_and_errors(tmp_path: Path) -> None:
    classes = ["n1", "n2", "n3"]
    text = tmp_path / "hierarchy.csv"
    text.write_text("parent,child\n# comment\nbig cats,n3\nbig cats,n1\nall\tn2\n")
    assert read_hierarchy(text, classes) == {"big_cats": ["n1", "n3"], "all": ["n2"]}
    (tmp_path / "bad.json").write_text(json.dumps({"x": [7]}))
    with pytest.raises(ValueError, match=r"bad\.json: superclass 'x' lists class index 7, outside 0\.\.2"):
        read_hierarchy(tmp_path / "bad.json", classes)
    (tmp_path / "unknown.txt").write_text("x,n9\n")
    with pytest.raises(ValueError, match=r"unknown\.txt: superclass 'x' lists 'n9', which is not a class"):
        read_hierarchy(tmp_path / "unknown.txt", classes)
    with pytest.raises(FileNotFoundError, match=r"hierarchy file .*missing\.json does not exist"):
        read_hierarchy(tmp_path / "missing.json", classes)


def test_bad_specs_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"image folder .*nowhere does not exist"):
        build_image_dataset({"kind": "image_folder", "root": str(tmp_path / "nowhere")}, name="x")
    with pytest.raises(ValueError, match=r"external\.datasets\.x\.split: expected one of"):
        build_image_dataset({"kind": "cub", "root": str(tmp_path), "split": "val"}, name="x")
    with pytest.raises(FileNotFoundError, match=r"CUB file .*images\.txt does not exist"):
        build_image_dataset({"kind": "cub", "root": str(tmp_path)}, name="x")
    assert class_concept_name("/a/airfield") == "class:airfield"
    assert class_concept_name("n01440764") == "class:n01440764"
