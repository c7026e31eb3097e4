"""params.yaml: commented, valid against the schema, and a bad value stops the workflow before any job."""

from __future__ import annotations

import re
import subprocess
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
    typo_index = len(params["meta"]["settings"])
    params["meta"]["settings"] = [*params["meta"]["settings"], "vit_fianl_gt"]
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv"], workspace, check=False)
    assert result.returncode != 0
    assert (f"meta.settings[{typo_index}]: 'vit_fianl_gt' is not a setting of settings"
            in result.stdout + result.stderr)


def test_schedule_naming_an_unknown_model_stops_snakemake(tmp_path: Path) -> None:
    params = tiny_params(schedule={"train_first": ["lm_large", "lm_lagre"]})
    workspace = make_workspace(tmp_path, params)
    result = run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv"], workspace, check=False)
    assert result.returncode != 0
    assert "schedule.train_first[1]: 'lm_lagre' is not a model of this profile" in result.stdout + result.stderr


def dry_run_output(workspace: Path, *extra: str) -> subprocess.CompletedProcess:
    return run_tool(["snakemake", "-n", "--cores", "1", "results/table4.csv", *extra], workspace, check=False)


def test_a_typo_in_a_setting_reference_stops_the_plan_naming_every_key(tmp_path: Path) -> None:
    """Issue 34: a unit's model that names nothing used to plan 'Nothing to be done' over an existing Table 4."""
    params = tiny_params()
    params["settings"]["cnn_final_gt"]["units"][0]["model"] = "vision_cnnn"
    params["settings"]["vit_final_pseudo"]["concepts"]["source"] = "pseudo:clipp"
    params["meta"]["alpha_grid"] = [float("nan")]
    result = dry_run_output(make_workspace(tmp_path, params))
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "3 problems in the params" in output
    assert ("settings.cnn_final_gt.units[0].model: 'vision_cnnn' is not a model of models.vision or models.probes "
            "(known: clip_probe, vision_cbm, vision_cnn, vision_vit); did you mean 'vision_cnn'?") in output
    assert "settings.vit_final_pseudo.concepts.source: 'pseudo:clipp' is not pseudo:<a model" in output
    assert "meta.alpha_grid[0]: nan is not a finite number" in output


def test_a_duplicate_key_in_an_overlay_stops_the_plan_naming_both_lines(tmp_path: Path) -> None:
    """Snakemake's YAML loader keeps the last of two equal keys, DVC refuses the file: both now refuse it."""
    workspace = make_workspace(tmp_path, tiny_params())
    (workspace / "overlay.yaml").write_text("meta:\n  seed: 1\n  n_boot: 10\n  seed: 2\n")
    result = dry_run_output(workspace, "--configfile", "overlay.yaml")
    assert result.returncode != 0
    assert "overlay.yaml:4: duplicate key meta.seed (first at line 2)" in result.stdout + result.stderr


def reversed_keys(value: object) -> object:
    """Every mapping's keys in reverse order, lists untouched: the same params, written differently."""
    if isinstance(value, dict):
        return {key: reversed_keys(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reversed_keys(item) for item in value]
    return value


@pytest.mark.slow
def test_reordering_keys_plans_nothing(tmp_path: Path) -> None:
    """Slow (marker ``slow``): Snakemake builds the digits world, then plans twice.

    Snakemake's params trigger compares repr(params): the config's keys are sorted before rules read it."""
    params = tiny_params()
    workspace = make_workspace(tmp_path, params)
    run_tool(["snakemake", "--cores", "1", "data/worlds/digits/probe"], workspace)
    (workspace / "params.yaml").write_text(yaml.safe_dump(reversed_keys(params), sort_keys=False))
    unchanged = run_tool(["snakemake", "-n", "data/worlds/digits/probe"], workspace)
    assert "Nothing to be done" in unchanged.stdout + unchanged.stderr
    params["digits"]["probe_fraction"] = 0.4
    (workspace / "params.yaml").write_text(yaml.safe_dump(reversed_keys(params), sort_keys=False))
    changed = run_tool(["snakemake", "-n", "data/worlds/digits/probe"], workspace)
    assert "digits_world" in changed.stdout and "Nothing to be done" not in changed.stdout + changed.stderr
