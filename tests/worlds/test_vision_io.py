"""Saving, loading and previewing vision worlds."""

import json

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.figures.world_preview import contact_sheet
from neuroneval.worlds import build_vision_world, load_vision_world, save_vision_world


def test_save_load_round_trip(tmp_path):
    world = build_vision_world(120, seed=2, split="probe")
    save_vision_world(world, tmp_path / "world")
    loaded = load_vision_world(tmp_path / "world")
    assert loaded.images.tobytes() == world.images.tobytes()
    assert loaded.masks.tobytes() == world.masks.tobytes()
    assert np.array_equal(loaded.class_index, world.class_index)
    pd.testing.assert_frame_equal(loaded.labels, world.labels)
    pd.testing.assert_frame_equal(loaded.attributes, world.attributes)
    assert loaded.captions == world.captions
    assert loaded.class_names == world.class_names
    assert loaded.hierarchy == world.hierarchy
    assert loaded.params == json.loads(json.dumps(world.params))
    assert not [path.name for path in (tmp_path / "world").iterdir() if path.name.startswith(".")]


def test_saved_labels_are_a_concept_table_with_hierarchy(tmp_path):
    world = build_vision_world(30, seed=0, split="train")
    save_vision_world(world, tmp_path)
    frame, metadata = io.read_concept_table(tmp_path / "labels.parquet")
    assert metadata["source"] == "labels"
    assert metadata["concepts"] == [column for column in world.labels.columns if column != "input_id"]
    assert metadata["hierarchy"] == world.hierarchy
    assert list(frame.columns) == list(world.labels.columns)


def test_load_names_a_missing_file(tmp_path):
    world = build_vision_world(5, seed=0, split="train")
    save_vision_world(world, tmp_path)
    (tmp_path / "captions.csv").unlink()
    try:
        load_vision_world(tmp_path)
    except FileNotFoundError as error:
        assert "captions.csv" in str(error)
    else:
        raise AssertionError("missing captions.csv was not reported")


def test_contact_sheet_writes_a_png(tmp_path):
    world = build_vision_world(10, seed=0, split="probe")
    path = contact_sheet(world, tmp_path / "sheet.png", n=10, columns=5, show_masks=True)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
