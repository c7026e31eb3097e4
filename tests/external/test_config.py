"""The paper profile parses against the schema, and every missing or mis-declared input names its params key."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from neuroneval.external.checks import check_external
from neuroneval.external.config import (
    ExternalConfigError,
    dataset_files,
    dataset_spec,
    embedders,
    image_datasets,
    language_models,
    model_files,
    model_spec,
    resolve_path,
    text_datasets,
    vision_models,
)
from tests.external.conftest import ROOT, paper_params
from tests.workflow.conftest import deep_update

SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())
DEFAULT = yaml.safe_load((ROOT / "params.yaml").read_text())
PROFILE = yaml.safe_load((ROOT / "profiles/paper.yaml").read_text())


def test_the_paper_profile_is_valid_and_declares_the_ten_table4_settings() -> None:
    merged = deep_update(DEFAULT, PROFILE)
    jsonschema.validate(merged, SCHEMA)
    assert len(merged["meta"]["settings"]) == 10
    assert {merged["settings"][name]["dataset"] for name in merged["meta"]["settings"]} == {
        "imagenet_val", "places365_val", "cub_test", "openwebtext"}
    external = merged["external"]
    assert image_datasets(external) == ["imagenet_val", "places365_val", "cub_train", "cub_test"]
    assert text_datasets(external) == ["openwebtext", "pile_pythia"]
    assert vision_models(external) == ["vit_b16", "resnet50", "resnet18_places", "cub_cbm"]
    assert embedders(external) == ["clip_b32", "siglip"]
    assert language_models(external) == ["gpt2_small", "pythia_70m", "gpt2_xl"]
    assert merged["concepteval"]["corpus"] == {"pythia_70m": "pile_pythia"}  # paper 004 on Pythia-70M


def test_every_key_of_the_profile_has_a_comment() -> None:
    uncommented = [line for line in (ROOT / "profiles/paper.yaml").read_text().splitlines()
                   if re.match(r"^\s*[A-Za-z_][\w]*:", line) and "#" not in line]
    assert uncommented == []


def test_the_embedded_default_needs_nothing_external() -> None:
    check_external(DEFAULT)
    assert DEFAULT["external"]["datasets"] == {} and DEFAULT["external"]["models"] == {}


def test_the_profile_on_a_complete_tree_passes(paper_tree: tuple[Path, dict]) -> None:
    check_external(paper_params(paper_tree[0]))


def test_paths_resolve_against_data_root(tmp_path: Path) -> None:
    external = {"data_root": str(tmp_path), "datasets": {"imagenet_val": {"kind": "image_folder", "root": "a/val",
                                                                         "hierarchy_file": "/abs/h.json"}},
                "models": {"vit": {"family": "timm", "arch": "x", "weights_path": "~/w.pth", "config": "ViT-B-32"}}}
    assert resolve_path(external, "a/val") == tmp_path / "a/val"
    assert dataset_spec(external, "imagenet_val")["root"] == str(tmp_path / "a/val")
    assert dataset_files(external, "imagenet_val") == [str(tmp_path / "a/val"), "/abs/h.json"]
    assert model_spec(external, "vit")["weights_path"] == str(Path("~/w.pth").expanduser())
    assert model_spec(external, "vit")["config"] == "ViT-B-32"  # a model name, not a path
    assert model_files(external, "vit") == [str(Path("~/w.pth").expanduser())]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"external": {"datasets": {"imagenet_val": {"root": "nowhere/val"}}}},
         r"external\.datasets\.imagenet_val\.root: folder .*nowhere/val does not exist \(relative to "
         r"external\.data_root = "),
        ({"external": {"datasets": {"places365_val": {"split_file": "places365/missing.txt"}}}},
         r"external\.datasets\.places365_val\.split_file: file .*places365/missing\.txt does not exist"),
        ({"external": {"models": {"vit_b16": {"weights_path": "checkpoints/vit_missing.pth"}}}},
         r"external\.models\.vit_b16\.weights_path: .*checkpoints/vit_missing\.pth does not exist"),
        ({"external": {"models": {"gpt2_xl": {"model_dir": "/no/such/gpt2-xl"}}}},
         r"(?m)external\.models\.gpt2_xl\.model_dir: folder /no/such/gpt2-xl does not exist "
         r"\(needed by owt_gpt2_xl\)$"),
        ({"external": {"models": {"siglip": {"pretrained": "checkpoints/none"}}}},
         r"external\.models\.siglip\.pretrained: .*checkpoints/none does not exist"),
        ({"external": {"datasets": {"openwebtext": {"tokenizer_model": "siglip"}}}},
         r"external\.datasets\.openwebtext\.tokenizer_model: external\.models\.siglip has family 'open_clip'"),
        ({"external": {"probes": {"cub_probe": {"features": "vit_b16"}}}},
         r"external\.probes\.cub_probe\.features: external\.models\.vit_b16 has family 'timm'"),
        ({"settings": {"imagenet_vit_gt": {"units": [{"model": "vit_b17", "layer": "softmax"}]}}},
         r"settings\.imagenet_vit_gt\.units\[0\]\.model: 'vit_b17' is not declared in external\.models"),
        ({"settings": {"imagenet_vit_siglip": {"concepts": {"source": "pseudo:vit_b16"}}}},
         r"settings\.imagenet_vit_siglip\.concepts\.source: external\.models\.vit_b16 has family 'timm'"),
        ({"settings": {"owt_gpt2_small": {"units": [{"model": "gpt2_small", "layer": "lm_head"}]}}},
         r"settings\.owt_gpt2_small\.units\[0\]\.layer: language models have the layer 'next_token'"),
        ({"settings": {"cub_cbm_gt": {"dataset": "cub_tset"}}},
         r"settings\.cub_cbm_gt\.dataset: 'cub_tset' is neither an embedded world"),
    ],
)
def test_a_missing_or_misdeclared_input_names_its_key(paper_tree: tuple[Path, dict], change: dict,
                                                      message: str) -> None:
    broken = deep_update(copy.deepcopy(paper_params(paper_tree[0])), change)
    with pytest.raises(ExternalConfigError, match=message):
        check_external(broken)


def test_only_inputs_of_the_table4_settings_are_required(paper_tree: tuple[Path, dict]) -> None:
    """A user without CUB lists fewer settings in meta.settings; the CUB entries may then point nowhere."""
    params = deep_update(copy.deepcopy(paper_params(paper_tree[0])),
                         {"external": {"datasets": {"cub_test": {"root": "no_cub"}, "cub_train": {"root": "no_cub"}}}})
    with pytest.raises(ExternalConfigError, match="cub_t"):
        check_external(params)
    params["meta"]["settings"] = [name for name in params["meta"]["settings"] if not name.startswith("cub_")]
    check_external(params)


def test_every_missing_path_is_named_at_once_with_the_settings_to_trim(paper_tree: tuple[Path, dict]) -> None:
    """Two missing checkpoints and two CUB folders: one error names all four and the settings needing them."""
    params = deep_update(copy.deepcopy(paper_params(paper_tree[0])),
                         {"external": {"datasets": {"cub_test": {"root": "no_cub"}, "cub_train": {"root": "no_cub"}},
                                       "models": {"vit_b16": {"weights_path": "gone/vit.pth"},
                                                  "resnet18_places": {"weights_path": "gone/r18.pth"}}}})
    with pytest.raises(ExternalConfigError) as raised:
        check_external(params)
    lines = str(raised.value).splitlines()
    missing = [line for line in lines if "does not exist" in line]
    assert len(missing) == 4
    assert sum(".root: folder" in line and "no_cub" in line for line in missing) == 2
    assert any("external.models.vit_b16.weights_path" in line and "gone/vit.pth" in line for line in missing)
    assert any("external.models.resnet18_places.weights_path" in line for line in missing)
    needing = sorted({name for line in missing for name in line.rsplit("(needed by ", 1)[1].rstrip(")").split(", ")})
    assert lines[-1] == f"Fix these, or remove settings {', '.join(needing)} from meta.settings."
    assert all(name in params["meta"]["settings"] for name in needing)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"external": {"datasets": {"vision_val": {"kind": "image_folder", "root": "x"}}}}, "vision_val"),
        ({"external": {"datasets": {"imagenet_val": {"kind": "imagefolder"}}}}, "'imagefolder' is not one of"),
        ({"external": {"datasets": {"imagenet_val": {"hierarchy": "x.json"}}}}, "'hierarchy' was unexpected"),
        ({"external": {"models": {"vit_b16": {"family": "keras"}}}}, "'keras' is not one of"),
        ({"external": {"models": {"resnet50": {"weigths_path": "x"}}}}, "'weigths_path' was unexpected"),
        ({"external": {"device": "gpu"}}, "'gpu' does not match"),
        ({"external": {"pseudo_labels": {"siglip": {"calibration": {"method": "fit"}}}}},
         "'dataset' is a required property"),
        ({"external": {"pseudo_labels": {"siglip": {"templates": {"class:": "a photo"}}}}}, "'a photo' does not match"),
    ],
)
def test_schema_rejects_bad_external_params(change: dict, message: str) -> None:
    with pytest.raises(jsonschema.ValidationError, match=re.escape(message)):
        jsonschema.validate(deep_update(deep_update(DEFAULT, PROFILE), change), SCHEMA)
