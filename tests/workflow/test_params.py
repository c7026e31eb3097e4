"""params.yaml: commented, valid against the schema, and a bad value stops the workflow before any job."""

from __future__ import annotations

import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from tests.workflow.conftest import make_workspace, run_tool, tiny_params

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = yaml.safe_load((ROOT / "workflow/schemas/params.schema.yaml").read_text())


def test_every_key_of_params_yaml_has_a_comment() -> None:
    uncommented = [line for line in (ROOT / "params.yaml").read_text().splitlines()
                   if re.match(r"^\s*[A-Za-z_][\w]*:", line) and "#" not in line]
    assert uncommented == []


def test_params_yaml_is_valid() -> None:
    jsonschema.validate(yaml.safe_load((ROOT / "params.yaml").read_text()), SCHEMA)


@pytest.mark.parametrize(
    ("mutation", "message"),
    [
        ({"meta": {"ties": "random"}}, "'random' is not one of"),
        ({"meta": {"val_fraction": 1.5}}, "1.5"),
        ({"models": {"vision": {"vision_cnn": {"training": {"epochs": "three"}}}}}, "'three' is not of type 'integer'"),
        ({"models": {"vision": {"vision_vit": {"config": {"patch": 4}}}}}, "'patch' was unexpected"),
        ({"world": {"vision": {"n_clases": 12}}}, "'n_clases' was unexpected"),
        ({"digits": {"probe_fraction": 1.5}}, "1.5"),
        ({"digits": {"hierarchy": {"round": [0, 10]}}}, "10 is greater than the maximum of 9"),
        ({"digits": {"models": {"digits_cnn": {"training": {"epoch": 3}}}}}, "'epoch' was unexpected"),
        # a ResNet image tower (four stage sizes) takes no patch size; a ViT tower (an integer) needs one
        ({"models": {"contrastive": {"clip": {"config": {"vision": {"patch_size": 8}}}}}}, "should not be valid"),
        ({"models": {"contrastive": {"clip": {"config": {"vision": {"layers": 2}}}}}}, "'patch_size' is a required"),
        ({"models": {"contrastive": {"clip": {"config": {"vision": {"layers": [1, 1]}}}}}}, "[1, 1] is too short"),
    ],
)
def test_schema_rejects_bad_values_naming_them(mutation: dict, message: str) -> None:
    with pytest.raises(jsonschema.ValidationError, match=re.escape(message)):
        jsonschema.validate(tiny_params(**mutation), SCHEMA)


def test_snakemake_stops_before_any_job_on_an_unknown_key(tmp_path: Path) -> None:
    params = tiny_params()
    params["meta"]["alpah_grid"] = [0.01]
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "--cores", "1", "results/table4.csv"], workspace, check=False)
    assert result.returncode != 0
    assert "alpah_grid" in result.stdout + result.stderr
    assert not (workspace / "data").exists()


def test_a_setting_list_naming_an_undefined_setting_stops_snakemake(tmp_path: Path) -> None:
    params = tiny_params()
    params["meta"]["settings"] = [*params["meta"]["settings"], "vit_fianl_gt"]
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv"], workspace, check=False)
    assert result.returncode != 0
    assert "meta.settings names undefined settings ['vit_fianl_gt']" in result.stdout + result.stderr


def test_schedule_naming_an_unknown_model_stops_snakemake(tmp_path: Path) -> None:
    params = tiny_params(schedule={"train_first": ["lm_large", "lm_lagre"]})
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv"], workspace, check=False)
    assert result.returncode != 0
    assert "schedule.train_first names ['lm_lagre'], which are not models" in result.stdout + result.stderr
