"""CoSy on a user-supplied classifier (paper profile): explanation texts and units on synthetic images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from neuroneval.cosy.activations import external_units
from neuroneval.cosy.evaluation import concept_text, explanation_table
from neuroneval.pipeline.cosy_steps import cosy_setting_units, cosy_world_dir
from tests.external.fakes import TINY_VIT, save_timm_vit

CLASSES = ["class:n01", "class:n02", "class:n03"]
DISPLAY = {"class:n01": "tench", "class:n02": "goldfish", "class:n03": "great white shark"}


def test_explanations_use_display_names() -> None:
    truth = pd.DataFrame({"unit": ["0", "1", "2"], "concept": CLASSES})
    table = explanation_table(truth, setting="imagenet", candidates=CLASSES, max_units=None, seed=0,
                              display_names=DISPLAY)
    assert table.loc[table["method"] == "true", "explanation"].tolist() == ["tench", "goldfish", "great white shark"]
    assert set(table["explanation"]) <= set(DISPLAY.values())
    assert concept_text("class:coffee_mug") == "coffee mug"
    assert concept_text("parent:circle") == "a circle"


def test_external_settings_need_no_world() -> None:
    settings = {"imagenet_vit_gt": {"dataset": "imagenet_val", "units": [{"model": "vit_b16", "layer": "softmax"}],
                                    "concepts": {"source": "labels"}}}
    files = cosy_setting_units(settings, ["imagenet_vit_gt"], ["vit_b16"])
    assert files["imagenet_vit_gt"]["kind"] == "external" and files["imagenet_vit_gt"]["checkpoint"] is None
    assert cosy_world_dir(files) is None
    with pytest.raises(ValueError, match="cosy setting imagenet_vit_gt"):
        cosy_setting_units(settings, ["imagenet_vit_gt"], [])


def test_external_units_match_a_direct_forward_pass(tmp_path: Path) -> None:
    model = save_timm_vit(tmp_path / "vit", len(CLASSES), seed=0)
    spec = {"family": "timm", "arch": "vit_base_patch16_224", "weights_path": str(tmp_path / "vit"),
            "num_classes": len(CLASSES), "model_kwargs": dict(TINY_VIT),
            "image_transform": {"resize_size": 32, "crop_size": 32}}
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (5, 64, 64, 3), dtype=np.uint8)  # synthetic images larger than the input
    metadata = {"classes": CLASSES, "concepts": CLASSES, "hierarchy": {}}
    values, names = external_units(spec, images, layer="softmax", concept_metadata=metadata, batch_size=2,
                                   device="cpu")
    assert names == ["0", "1", "2"] and values.shape == (5, 3) and values.dtype == np.float32
    from neuroneval.models.loaders import load_model

    loaded = load_model(spec)
    with torch.no_grad():
        expected = torch.softmax(loaded.module(torch.stack([loaded.preprocess(image) for image in images])).double(),
                                 dim=1).numpy()
    np.testing.assert_allclose(values, expected, atol=1e-5)
    assert model is not None
