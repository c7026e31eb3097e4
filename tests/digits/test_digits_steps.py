"""The digits world through the vision world's own steps: world -> classifier -> activations and labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.models_steps import train_vision_classifier
from neuroneval.pipeline.probing_tables_steps import setting_truth, vision_classifier_activations, vision_label_concepts
from neuroneval.pipeline.worlds_steps import digits_world
from neuroneval.worlds import load_vision_world
from neuroneval.worlds.digits import DEFAULT_HIERARCHY
from tests.external.conftest import run_step

KNOBS = {"seed": 0, "probe_fraction": 0.5, "hierarchy": DEFAULT_HIERARCHY}
SPEC = {"architecture": "tiny_cnn", "config": {"width": 8},
        "training": {"epochs": 8, "batch_size": 64, "learning_rate": 0.01, "weight_decay": 0.0,
                     "holdout_fraction": 0.2, "seed": 0}}


def test_digits_tables_through_the_vision_steps(tmp_path: Path) -> None:
    worlds = {split: tmp_path / "worlds" / split for split in ("train", "probe")}
    for split, path in worlds.items():
        run_step(digits_world, output={"world": path}, params={"digits": KNOBS}, wildcards={"split": split})
    model = tmp_path / "digits_cnn.pt"
    run_step(train_vision_classifier, input={"world": worlds["train"]},
             output={"checkpoint": model, "card": model.with_suffix(".json")}, params={"spec": SPEC})
    card = json.loads(model.with_suffix(".json").read_text())
    assert card["holdout_accuracy"] > 0.8 > card["chance_accuracy"]
    extraction = {"batch_size": 256, "pooling": "mean"}
    tables = {}
    for layer in ("softmax", "superclass", "block3"):
        tables[layer] = tmp_path / f"{layer}.parquet"
        run_step(vision_classifier_activations, input={"world": worlds["probe"], "checkpoint": model},
                 output={"table": tables[layer]}, params={"extraction": extraction, "dataset": "digits_probe"},
                 wildcards={"split": "probe", "model": "digits_cnn", "layer": layer})
    concepts = tmp_path / "labels.parquet"
    run_step(vision_label_concepts, input={"world": worlds["probe"]}, output={"table": concepts},
             params={"dataset": "digits_probe"}, wildcards={"split": "probe"})

    softmax, metadata = io.read_activation_table(tables["softmax"])
    superclass, super_metadata = io.read_activation_table(tables["superclass"])
    labels, label_metadata = io.read_concept_table(concepts)
    assert metadata["dataset"] == label_metadata["dataset"] == "digits_probe"
    assert metadata["unit_concepts"] == {str(d): [f"class:{d}"] for d in range(10)}
    assert super_metadata["unit_concepts"] == {f"parent:{g}": [f"parent:{g}"] for g in DEFAULT_HIERARCHY}
    world = load_vision_world(worlds["probe"])
    assert softmax["input_id"].tolist() == labels["input_id"].tolist() == world.labels["input_id"].tolist()
    probabilities = softmax.drop(columns="input_id").to_numpy(np.float64)
    for group, digits in DEFAULT_HIERARCHY.items():
        np.testing.assert_allclose(superclass[f"parent:{group}"], probabilities[:, digits].sum(axis=1), atol=1e-6)
    accuracy = np.mean(probabilities.argmax(axis=1) == world.class_index)
    assert accuracy > 0.8

    truth = tmp_path / "truth.csv"
    setting = {"dataset": "digits_probe", "units": [{"model": "digits_cnn", "layer": "softmax"},
                                                    {"model": "digits_cnn", "layer": "superclass"}],
               "concepts": {"source": "labels", "prefixes": ["class:", "parent:"]}}
    run_step(setting_truth, input={"activations": [tables["softmax"], tables["superclass"]], "concepts": concepts},
             output={"truth": truth, "summary": tmp_path / "summary.json"}, params={"setting": setting},
             wildcards={"setting": "digits_cnn_final_super_gt"})
    pairs = pd.read_csv(truth, dtype=str)
    assert len(pairs) == 13 and set(pairs["concept"]) == {*(f"class:{d}" for d in range(10)),
                                                          *(f"parent:{g}" for g in DEFAULT_HIERARCHY)}
