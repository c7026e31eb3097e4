"""Determinism of the vision world: a pure function of parameters and seed, independent of chunking."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neuroneval.worlds import build_vision_world


def assert_same_world(first, second):
    assert first.images.tobytes() == second.images.tobytes()
    assert first.masks.tobytes() == second.masks.tobytes()
    assert np.array_equal(first.class_index, second.class_index)
    pd.testing.assert_frame_equal(first.labels, second.labels)
    pd.testing.assert_frame_equal(first.attributes, second.attributes)
    assert first.captions == second.captions
    assert first.class_names == second.class_names
    assert first.hierarchy == second.hierarchy


def concatenate(parts):
    return {
        "images": np.concatenate([part.images for part in parts]),
        "masks": np.concatenate([part.masks for part in parts]),
        "labels": pd.concat([part.labels for part in parts], ignore_index=True),
        "attributes": pd.concat([part.attributes for part in parts], ignore_index=True),
        "captions": [caption for part in parts for caption in part.captions],
    }


def test_same_seed_gives_identical_bytes():
    assert_same_world(build_vision_world(150, seed=11, split="probe"),
                      build_vision_world(150, seed=11, split="probe"))


def test_chunk_size_does_not_change_the_output():
    assert_same_world(build_vision_world(150, seed=11, split="probe", chunk_size=7),
                      build_vision_world(150, seed=11, split="probe", chunk_size=1024))


@settings(max_examples=8, deadline=None)
@given(cut=st.integers(1, 59), start=st.integers(0, 10_000))
def test_ranges_rendered_separately_equal_one_build(cut, start):
    whole = build_vision_world(60, seed=5, split="train", start_index=start)
    parts = concatenate([build_vision_world(cut, seed=5, split="train", start_index=start),
                         build_vision_world(60 - cut, seed=5, split="train", start_index=start + cut)])
    assert whole.images.tobytes() == parts["images"].tobytes()
    assert whole.masks.tobytes() == parts["masks"].tobytes()
    pd.testing.assert_frame_equal(whole.labels, parts["labels"])
    pd.testing.assert_frame_equal(whole.attributes, parts["attributes"])
    assert whole.captions == parts["captions"]
    assert whole.labels["input_id"].tolist() == list(range(start, start + 60))


def test_different_seed_or_split_differs():
    base = build_vision_world(100, seed=1, split="probe")
    other_seed = build_vision_world(100, seed=2, split="probe")
    other_split = build_vision_world(100, seed=1, split="train")
    assert base.images.tobytes() != other_seed.images.tobytes()
    assert base.images.tobytes() != other_split.images.tobytes()
    assert not np.array_equal(base.class_index, other_split.class_index)


def test_splits_share_the_class_catalogue():
    train = build_vision_world(20, seed=4, split="train")
    probe = build_vision_world(20, seed=4, split="probe")
    custom = build_vision_world(20, seed=4, split="holdout-2")
    assert train.class_names == probe.class_names == custom.class_names
    assert train.hierarchy == probe.hierarchy
    assert build_vision_world(20, seed=5, split="train").class_names != train.class_names


def test_knobs_do_not_shift_other_attributes():
    noisy = build_vision_world(80, seed=0, split="probe", noise_std=0.0)
    clean = build_vision_world(80, seed=0, split="probe", noise_std=20.0)
    assert np.array_equal(noisy.class_index, clean.class_index)
    assert np.array_equal(noisy.masks, clean.masks)
    assert noisy.captions == clean.captions


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"n_images": 0}, "n_images"),
        ({"n_images": -5}, "n_images"),
        ({"n_images": 2.5}, "n_images"),
        ({"split": 3}, "split"),
        ({"split": ""}, "split"),
        ({"split": "a/b"}, "split"),
        ({"image_size": 8}, "image_size"),
        ({"seed": -1}, "seed"),
        ({"n_classes": 1}, "n_classes"),
        ({"n_classes": 10_000}, "n_classes"),
        ({"n_shapes": 20}, "n_shapes"),
        ({"p_large": 1.5}, "p_large"),
        ({"distractor_prob": -0.1}, "distractor_prob"),
        ({"max_distractors": 3}, "max_distractors"),
        ({"noise_std": float("nan")}, "noise_std"),
        ({"parent_groupings": ("shape", "size")}, "parent_groupings"),
        ({"parent_groupings": "shape"}, "parent_groupings"),
        ({"parent_groupings": None}, "parent_groupings"),
        ({"scene_weights": (1.0, 2.0)}, "scene_weights"),
        ({"chunk_size": 0}, "chunk_size"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(kwargs, parameter):
    arguments = {"n_images": 10, "seed": 0, "split": "probe", **kwargs}
    with pytest.raises(ValueError, match=parameter):
        build_vision_world(**arguments)
