"""The digits world (scikit-learn's bundled handwritten digits): split, labels, hierarchy, images, on-disk format.

Oracle: ``sklearn.datasets.load_digits`` read here directly, and the shape groups spelled out below — never the
module's own tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.datasets import load_digits

from neuroneval import io
from neuroneval.worlds import load_vision_world, save_vision_world
from neuroneval.worlds.digits import DEFAULT_HIERARCHY, build_digits_world, check_hierarchy, split_indices

ROOT = Path(__file__).resolve().parents[2]
#: The documented default groups (params.yaml digits.hierarchy), written out independently of the module.
GROUP_OF = {0: "round", 6: "round", 8: "round", 9: "round", 1: "straight", 4: "straight", 7: "straight",
            2: "curvy", 3: "curvy", 5: "curvy"}


@pytest.fixture(scope="module")
def sklearn_digits():
    bunch = load_digits()
    return bunch.images, bunch.target


@pytest.fixture(scope="module")
def splits():
    return {split: build_digits_world(split, seed=0, probe_fraction=0.5) for split in ("train", "probe")}


def test_params_hierarchy_is_the_documented_one() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["digits"]
    assert check_hierarchy(params["hierarchy"]) == check_hierarchy(DEFAULT_HIERARCHY)
    assert {digit: group for group, digits in params["hierarchy"].items() for digit in digits} == GROUP_OF


def test_splits_are_disjoint_cover_the_dataset_and_are_stratified(splits, sklearn_digits) -> None:
    _, targets = sklearn_digits
    train = splits["train"].attributes["source_index"].to_numpy()
    probe = splits["probe"].attributes["source_index"].to_numpy()
    assert len(set(train)) == len(train) and len(set(probe)) == len(probe)
    assert not set(train) & set(probe)
    assert sorted([*train, *probe]) == list(range(len(targets)))
    for digit in range(10):
        n_digit = int((targets == digit).sum())
        assert int((targets[probe] == digit).sum()) == round(0.5 * n_digit)
    for world in splits.values():
        assert world.labels["input_id"].tolist() == list(range(len(world.images)))
        # stored in a shuffled order, so the classifier's held-out tail is not one writer block of sklearn's order
        assert not np.all(np.diff(world.attributes["source_index"].to_numpy()) > 0)


def test_split_is_deterministic_and_depends_on_the_seed(sklearn_digits) -> None:
    _, targets = sklearn_digits
    first = split_indices(targets, seed=0, probe_fraction=0.5)
    again = split_indices(targets, seed=0, probe_fraction=0.5)
    other = split_indices(targets, seed=1, probe_fraction=0.5)
    for split in ("train", "probe"):
        assert np.array_equal(first[split], again[split])
    assert set(first["probe"]) != set(other["probe"])
    world, rebuilt = (build_digits_world("probe", seed=3, probe_fraction=0.3) for _ in range(2))
    assert world.images.tobytes() == rebuilt.images.tobytes()
    assert world.labels.equals(rebuilt.labels) and world.attributes.equals(rebuilt.attributes)
    fractions = {split: len(rows) for split, rows in split_indices(targets, seed=0, probe_fraction=0.3).items()}
    assert fractions["probe"] == sum(round(0.3 * (targets == d).sum()) for d in range(10))


def test_labels_and_hierarchy_match_sklearns_targets(splits, sklearn_digits) -> None:
    _, targets = sklearn_digits
    for world in splits.values():
        truth = targets[world.attributes["source_index"].to_numpy()]
        assert np.array_equal(world.class_index, truth)
        assert world.class_names == [f"class:{d}" for d in range(10)]
        for digit in range(10):
            assert np.array_equal(world.labels[f"class:{digit}"].to_numpy(), (truth == digit).astype(np.float32))
        for group in ("round", "straight", "curvy"):
            expected = np.array([GROUP_OF[int(d)] == group for d in truth], dtype=np.float32)
            assert np.array_equal(world.labels[f"parent:{group}"].to_numpy(), expected)
        assert world.hierarchy == {f"parent:{group}": [f"class:{d}" for d in sorted(GROUP_OF) if GROUP_OF[d] == group]
                                   for group in ("round", "straight", "curvy")}
        assert [c for c in world.labels.columns if c != "input_id"] == [
            *world.class_names, "parent:round", "parent:straight", "parent:curvy", "ink:heavy", "symmetry:left_right",
            "symmetry:top_bottom", "mass:top", "mass:left", "centre:ink", "extent:wide", "loop:closed"]
        assert world.attributes["group"].tolist() == [GROUP_OF[int(d)] for d in truth]
        # every input is exactly one digit and in exactly one group
        labels = world.labels.drop(columns="input_id")
        assert (labels.filter(like="class:").sum(axis=1) == 1).all()
        assert (labels.filter(like="parent:").sum(axis=1) == 1).all()


def test_images_are_sklearns_pixels(splits, sklearn_digits) -> None:
    images, _ = sklearn_digits
    for world in splits.values():
        source = images[world.attributes["source_index"].to_numpy()]
        assert world.images.shape == (len(source), 8, 8, 3) and world.images.dtype == np.uint8
        assert (world.images == world.images[..., :1]).all()  # grey in all three channels
        np.testing.assert_array_equal(world.images[..., 0], np.round(source * 255 / 16).astype(np.uint8))
        assert np.array_equal(world.masks, (source > 0).astype(np.uint8))


def test_saved_split_is_a_vision_world_with_its_own_dataset_name(tmp_path, splits) -> None:
    world = splits["probe"]
    save_vision_world(world, tmp_path / "probe")
    loaded = load_vision_world(tmp_path / "probe")
    assert loaded.images.tobytes() == world.images.tobytes()
    assert loaded.labels.equals(world.labels) and loaded.hierarchy == world.hierarchy
    assert loaded.params == json.loads(json.dumps(world.params))
    _, metadata = io.read_concept_table(tmp_path / "probe" / "labels.parquet")
    assert metadata["dataset"] == "digits_probe" and metadata["hierarchy"] == world.hierarchy


@pytest.mark.parametrize(("hierarchy", "message"), [
    ({"round": [0, 6, 8, 9], "straight": [1, 4, 7, 0], "curvy": [2, 3, 5]}, "digit 0 is in both"),
    ({"round": [0, 6, 8, 9], "straight": [1, 4, 7]}, r"digits \[2, 3, 5\] are in no group"),
    ({"Round": list(range(10))}, "group name"),
    ({"all": [*range(9), 10]}, "not a digit"),
    ({}, "must map group names"),
])
def test_bad_hierarchies_are_refused(hierarchy, message) -> None:
    with pytest.raises(ValueError, match=message):
        check_hierarchy(hierarchy)


def test_bad_splits_and_fractions_are_refused() -> None:
    with pytest.raises(ValueError, match="split must be one of"):
        build_digits_world("val", seed=0, probe_fraction=0.5)
    with pytest.raises(ValueError, match="probe_fraction"):
        build_digits_world("probe", seed=0, probe_fraction=1.0)
    with pytest.raises(ValueError, match="empty split"):
        split_indices(np.array([0, 0, 1, 1]), seed=0, probe_fraction=0.1)
