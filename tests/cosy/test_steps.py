"""Workflow-step helpers of CoSy: setting checks, explanation files, model paths."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from neuroneval.cosy.model_path import resolve_model_path
from neuroneval.cosy.study import read_explanation_table
from neuroneval.pipeline.cosy_steps import cosy_setting_units

SETTINGS = {
    "final": {"dataset": "vision_probe", "units": [{"model": "vision_vit", "layer": "softmax"}],
              "concepts": {"source": "labels", "prefixes": ["class:"]}},
    "two_tables": {"dataset": "vision_probe", "units": [{"model": "m", "layer": "softmax"},
                                                         {"model": "m", "layer": "superclass"}],
                   "concepts": {"source": "labels"}},
    "text": {"dataset": "text_probe", "units": [{"model": "lm", "layer": "next_token"}],
             "concepts": {"source": "labels"}},
}


def test_setting_files() -> None:
    files = cosy_setting_units(SETTINGS, ["final"])["final"]
    assert files["activations"] == "data/activations/vision_probe/vision_vit/softmax.parquet"
    assert files["concepts"] == "data/concepts/vision_probe/labels.parquet"
    assert files["truth"] == "data/truth/final.csv" and files["checkpoint"] == "data/models/vision_vit.pt"
    for name in ("two_tables", "text"):
        with pytest.raises(ValueError, match=f"cosy setting {name}"):
            cosy_setting_units(SETTINGS, [name])
    with pytest.raises(ValueError, match="undefined setting 'nope'"):
        cosy_setting_units(SETTINGS, ["nope"])


def test_read_explanations(tmp_path: Path) -> None:
    good = pd.DataFrame({"setting": ["s"], "unit": ["0"], "method": ["true"], "concept": ["class:a_b_c"],
                         "explanation": ["an a b c"]})
    good.to_csv(tmp_path / "good.csv", index=False)
    assert read_explanation_table(tmp_path / "good.csv")["unit"].tolist() == ["0"]
    good.drop(columns="method").to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match=r"bad\.csv: missing column\(s\) \['method'\]"):
        read_explanation_table(tmp_path / "bad.csv")
    good.assign(explanation=[""]).to_csv(tmp_path / "empty.csv", index=False)
    with pytest.raises(ValueError, match="row 2: empty explanation"):
        read_explanation_table(tmp_path / "empty.csv")


def test_resolve_model_path(tmp_path: Path) -> None:
    (tmp_path / "checkpoints" / "sdxl").mkdir(parents=True)
    assert resolve_model_path("checkpoints/sdxl", tmp_path) == str(tmp_path / "checkpoints" / "sdxl")
    assert resolve_model_path("stabilityai/stable-diffusion-xl-base-1.0", tmp_path) == \
        "stabilityai/stable-diffusion-xl-base-1.0"
    assert resolve_model_path("", tmp_path) == ""


def test_world_dir() -> None:
    from neuroneval.pipeline.cosy_steps import cosy_world_dir

    assert cosy_world_dir(cosy_setting_units(SETTINGS, ["final"])) == "data/worlds/vision/probe"
    other = {**SETTINGS, "other": {**SETTINGS["final"], "dataset": "vision_train"}}
    with pytest.raises(ValueError, match="one dataset"):
        cosy_world_dir(cosy_setting_units(other, ["final", "other"]))


@pytest.mark.parametrize("overlay", ["profiles/cosy_sdxl.yaml"])
def test_cosy_overlays_are_valid(overlay: str) -> None:
    import jsonschema
    import yaml

    from tests.workflow.conftest import ROOT, deep_update

    schema = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    merged = deep_update(params, yaml.safe_load((ROOT / overlay).read_text()))
    jsonschema.validate(merged, schema)
    assert merged["cosy"]["diffusers"]["local_files_only"] is True
    with pytest.raises(jsonschema.ValidationError, match="'midjourney' is not one of"):
        jsonschema.validate(deep_update(params, {"cosy": {"generators": ["midjourney"]}}), schema)
    with pytest.raises(jsonschema.ValidationError, match="'step' was unexpected"):
        jsonschema.validate(deep_update(params, {"cosy": {"diffusers": {"step": 3}}}), schema)
