"""neuroneval.params.check: every problem of the params found before a job runs, in one message by key
path (issue 34: a typo used to keep a stale Table 4), duplicate keys, and key order that reruns nothing."""

from __future__ import annotations

import copy
import math
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from neuroneval.models.layer_names import classifier_layer_names
from neuroneval.params.check import (
    ParamsError,
    canonical_config,
    check_params,
    duplicate_key_problems,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "workflow/schemas/params.schema.yaml"
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())


def overlay(base: dict, overrides: dict) -> dict:
    """Snakemake's --configfile merge: mappings merge key by key, everything else replaces."""
    merged = dict(base)
    for key, value in overrides.items():
        merged[key] = overlay(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) \
            else value
    return merged


def problems_of(config: dict) -> str:
    with pytest.raises(ParamsError) as caught:
        check_params(config, schema_path=SCHEMA)
    return str(caught.value)


def mutated(**changes) -> dict:
    config = copy.deepcopy(PARAMS)
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = config
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[last] = value
    return config


@pytest.mark.parametrize("profile", [None, "paper.yaml", "cosy_sdxl.yaml"])
def test_the_repository_params_and_every_profile_overlay_pass(profile: str | None) -> None:
    config = PARAMS if profile is None else overlay(PARAMS, yaml.safe_load((ROOT / "profiles" / profile).read_text()))
    files = [ROOT / "params.yaml", *([ROOT / "profiles" / profile] if profile else [])]
    check_params(config, schema_path=SCHEMA, config_files=files)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"settings__cnn_final_gt__units__0__model": "vision_cnnn"},
         "settings.cnn_final_gt.units[0].model: 'vision_cnnn' is not a model of models.vision"),
        ({"settings__cnn_final_gt__concepts__source": "labelz"},
         "settings.cnn_final_gt.concepts.source: 'labelz' is not a concept source of dataset 'vision_probe'"),
        ({"settings__vit_final_pseudo__concepts__source": "pseudo:clipp"},
         "settings.vit_final_pseudo.concepts.source: 'pseudo:clipp' is not pseudo:<a model of models.contrastive>"),
        ({"settings__lm_small_next_token__concepts__source": "pseudo:clip"},
         "settings.lm_small_next_token.concepts.source: 'pseudo:clip' is not a concept source of dataset "
         "'text_probe'"),
        ({"settings__cnn_final_gt__dataset": "vision_probes"},
         "settings.cnn_final_gt.dataset: 'vision_probes' is not a dataset"),
        ({"settings__lm_small_next_token__units__0__model": "lm_smal"},
         "settings.lm_small_next_token.units[0].model: 'lm_smal' is not a model of models.language"),
        ({"settings__digits_cnn_final_gt__units__0__model": "vision_cnn"},
         "settings.digits_cnn_final_gt.units[0].model: 'vision_cnn' is not a model of digits.models"),
        ({"settings__probe_concepts_gt__units__0__layer": "softmax"},
         "settings.probe_concepts_gt.units[0].layer: 'softmax' is not a layer of probe 'clip_probe'"),
        ({"settings__cnn_hidden_gt__units__0__layer": "block4"},
         "settings.cnn_hidden_gt.units[0].layer: 'block4' is not a layer of 'vision_cnn'"),
        ({"settings__cnn_final_gt__units__0__layer": "concepts"},
         "settings.cnn_final_gt.units[0].layer: 'concepts' is not a layer of 'vision_cnn'"),
        ({"schedule__train_first": ["lm_large", "lm_lagre"]},
         "schedule.train_first[1]: 'lm_lagre' is not a model of this profile"),
        ({"cosy__clip": "clipp"}, "cosy.clip: 'clipp' is not a model of models.contrastive"),
        ({"crowd__units": {"model": "vision_cnnn", "layer": "block3"}},
         "crowd.units.model: 'vision_cnnn' is not a model of models.vision"),
        ({"crowd__pseudo_source": "pseudo:clipp"}, "crowd.pseudo_source: 'pseudo:clipp' is not pseudo:<a model"),
        ({"explain__pseudo_source": "pseudo:clipp"}, "explain.pseudo_source: 'pseudo:clipp' is not pseudo:<a model"),
        ({"explain__run_settings": ["cnn_final_gt", "cnn_fianl_gt"]},
         "explain.run_settings[1]: 'cnn_fianl_gt' is not a setting of settings"),
        ({"explain__crowd__settings": ["vit_final_gtt"]},
         "explain.crowd.settings[0]: 'vit_final_gtt' is not a setting"),
        ({"viewer__settings": ["vit_final_gtt"]}, "viewer.settings[0]: 'vit_final_gtt' is not a setting"),
        ({"meta__settings": ["vit_final_gt", "vit_fianl_gt"]}, "meta.settings[1]: 'vit_fianl_gt' is not a setting"),
        ({"concepteval__models": ["lm_small", "lm_medium"]},
         "concepteval.models[1]: 'lm_medium' is not a model of models.language"),
        ({"models__probes__clip_probe__features": "clipp"},
         "models.probes.clip_probe.features: 'clipp' is not a model of models.contrastive"),
    ],
)
def test_a_reference_that_names_nothing_is_named_by_its_key_path(changes: dict, message: str) -> None:
    assert message in problems_of(mutated(**changes))


def test_deleting_a_model_that_a_setting_uses_names_every_unit_that_used_it() -> None:
    config = copy.deepcopy(PARAMS)
    del config["models"]["vision"]["vision_cbm"]
    text = problems_of(config)
    assert "settings.cbm_concepts_gt.units[0].model: 'vision_cbm' is not a model of models.vision" in text
    assert "(known: clip_probe, vision_cnn, vision_vit)" in text


def test_a_typo_gets_the_close_name_as_a_suggestion() -> None:
    text = problems_of(mutated(settings__cnn_final_gt__units__0__model="vision_cnnn"))
    assert "did you mean 'vision_cnn'?" in text


def test_every_problem_is_reported_in_one_error_with_the_count_first() -> None:
    config = mutated(settings__cnn_final_gt__units__0__model="vision_cnnn",
                     settings__vit_final_pseudo__concepts__source="pseudo:clipp")
    config["meta"]["alpha_grid"] = [math.nan]
    config["models"]["vision"]["vision_cnn"]["training"]["epochs"] = 3.0
    config["metta"] = {"settings": []}
    text = problems_of(config)
    first, *rest = text.splitlines()
    assert first.startswith("5 problems in the params")
    assert "unknown top-level key 'metta'" in first
    assert len(rest) == 5
    for key in ("settings.cnn_final_gt.units[0].model", "settings.vit_final_pseudo.concepts.source",
                "meta.alpha_grid[0]", "models.vision.vision_cnn.training.epochs", "metta: unknown key"):
        assert sum(key in line for line in rest) == 1, key


def _configs_the_params_allow() -> list[tuple[str, dict]]:
    """(architecture, params config) of every classifier of params.yaml (models.vision, digits.models), and each
    architecture with the schema's config keys left out and set to small values other than the defaults."""
    specs = [*PARAMS["models"]["vision"].values(), *PARAMS["digits"]["models"].values()]
    cases = [(spec["architecture"], spec["config"]) for spec in specs]
    cases += [("tiny_cnn", {}), ("tiny_cnn", {"width": 3}),
              ("tiny_vit", {}), ("tiny_vit", {"depth": 1, "embed_dim": 8, "num_heads": 2, "patch_size": 16,
                                              "mlp_ratio": 1.5}), ("tiny_vit", {"depth": 5}),
              ("tiny_cbm", {"concept_prefixes": ["a"]}), ("tiny_cbm", {"concept_prefixes": ["a", "b"], "width": 3})]
    return cases


@pytest.mark.parametrize(("architecture", "config"), _configs_the_params_allow())
def test_layer_names_without_torch_are_the_real_modules_names(architecture: str, config: dict) -> None:
    """classifier_layer_names (no torch) equals named_modules() of the model build_classifier really builds, for
    every architecture and the configs the params allow (the oracle keeps the torch-free names from drifting)."""
    from neuroneval.models.classifier import ARCHITECTURES, build_classifier

    assert {architecture for architecture, _ in _configs_the_params_allow()} == set(ARCHITECTURES)
    jsonschema.validate({"architecture": architecture, "config": config},
                        {**yaml.safe_load(SCHEMA.read_text())["$defs"]["vision_classifier"], "required": []},
                        cls=jsonschema.Draft202012Validator)
    built = {"n_classes": 5, **config}
    if architecture == "tiny_cbm":
        built.pop("concept_prefixes")
        built["n_concepts"] = 3
    real = [module for module, _ in build_classifier(architecture, built).named_modules() if module]
    assert list(classifier_layer_names(architecture, config)) == real


def test_a_wrong_layer_names_the_setting_the_model_and_the_valid_layers() -> None:
    depth = PARAMS["models"]["vision"]["vision_vit"]["config"]["depth"]
    ok = mutated(settings__vit_hidden_gt__units__0__layer=f"blocks.{depth - 1}")
    check_params(ok, schema_path=SCHEMA)
    text = problems_of(mutated(settings__vit_hidden_gt__units__0__layer=f"blocks.{depth}"))
    assert (f"settings.vit_hidden_gt.units[0].layer: 'blocks.{depth}' is not a layer of 'vision_vit' (tiny_vit; "
            f"known: logits, softmax, superclass and its modules patch_embed, patch_embed.proj") in text
    assert f"blocks.{depth - 1}, norm, fc_norm, head_drop, head, ..." in text


def test_checking_the_params_imports_no_torch() -> None:
    """Snakemake checks the params on every invocation: importing torch/timm/torchvision there cost seconds."""
    code = ("import sys, yaml\n"
            "from neuroneval.params.check import check_params\n"
            f"check_params(yaml.safe_load(open({str(ROOT / 'params.yaml')!r})), schema_path={str(SCHEMA)!r})\n"
            "print(sorted(name for name in ('torch', 'timm', 'torchvision') if name in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("meta", "alpha_grid"), [math.nan]),
        (("meta", "lam_grid"), [0.0, math.inf]),
        (("world", "vision", "noise_std"), math.nan),
        (("meta", "val_fraction"), math.nan),
        (("meta", "ci_level"), -math.inf),
        (("crowd", "aggregation", "rater_error"), math.nan),
    ],
)
def test_a_non_finite_number_is_named_wherever_it_is(path: tuple, value: object) -> None:
    config = copy.deepcopy(PARAMS)
    target = config
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    key = ".".join(path) + ("" if not isinstance(value, list) else f"[{len(value) - 1}]")
    assert re.search(rf"^  {re.escape(key)}: -?(nan|inf) is not a finite number$", problems_of(config), re.M)


def test_an_integer_param_rejects_an_integral_float() -> None:
    """JSON Schema counts 3.0 as an integer; the workflow's int() would then have to guess."""
    config = mutated(models__vision__vision_cnn__training__epochs=3.0)
    jsonschema.validate(config, yaml.safe_load(SCHEMA.read_text()))  # the plain schema lets it through
    assert "models.vision.vision_cnn.training.epochs: 3.0 is not of type 'integer'" in problems_of(config)


@pytest.mark.parametrize("value", [1e300, "1e300"])
def test_an_absurd_learning_rate_is_named(value: object) -> None:
    """YAML 1.1 reads ``1e300`` as a string, ``1.0e300`` as a float: both are named."""
    text = problems_of(mutated(models__vision__vision_cnn__training__learning_rate=value))
    assert "models.vision.vision_cnn.training.learning_rate: " in text


def test_a_bad_enum_deep_inside_is_named_by_its_key_path() -> None:
    text = problems_of(mutated(meta__ties="random"))
    assert "meta.ties: 'random' is not one of ['average', 'reference']" in text


def test_duplicate_keys_are_named_with_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("meta:\n  seed: 0\n  ties: average\n  seed: 1\nworld:\n  a: 1\nmeta: {}\n")
    problems = duplicate_key_problems(path)
    assert problems == [
        f"{path}:4: duplicate key meta.seed (first at line 2); YAML loaders disagree on which one counts",
        f"{path}:7: duplicate key meta (first at line 1); YAML loaders disagree on which one counts",
    ]


def test_a_params_file_that_is_not_yaml_is_named_with_the_offending_line(tmp_path: Path) -> None:
    path = tmp_path / "overlay.yaml"
    path.write_text("meta:\n  alpha_grid: [1, 2\n  seed: 3\n")
    (problem,) = duplicate_key_problems(path)
    assert problem.startswith(f"{path}: not valid YAML: ") and "line 2, column" in problem
    assert "  alpha_grid: [1, 2\n" in problem  # quoted, as PyYAML's pure-Python loader does


def test_the_schema_and_params_read_with_libyaml_are_what_the_python_loader_reads() -> None:
    """The checks read YAML with libyaml where PyYAML has it (faster); the pure-Python loader is the oracle."""
    for path in [SCHEMA, ROOT / "params.yaml", *sorted((ROOT / "profiles").glob("*.yaml"))]:
        text = path.read_text()
        assert yaml.load(text, Loader=yaml.CSafeLoader) == yaml.load(text, Loader=yaml.SafeLoader), path


def test_merge_keys_that_are_overridden_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("a: &base\n  x: 1\n  y: 2\nb:\n  <<: *base\n  x: 3\n")
    assert duplicate_key_problems(path) == []
    assert yaml.safe_load(path.read_text())["b"] == {"x": 3, "y": 2}


def test_the_repository_params_files_have_no_duplicate_keys() -> None:
    for path in [ROOT / "params.yaml", *sorted((ROOT / "profiles").glob("*.yaml"))]:
        assert duplicate_key_problems(path) == [], path


def test_duplicate_keys_stop_check_params(tmp_path: Path) -> None:
    path = tmp_path / "overlay.yaml"
    path.write_text("meta:\n  seed: 0\n  seed: 1\n")
    with pytest.raises(ParamsError, match=re.escape(f"{path}:3: duplicate key meta.seed (first at line 2)")):
        check_params(PARAMS, schema_path=SCHEMA, config_files=[path])


def reorder(value: object) -> object:
    """Every mapping's keys in reverse order (lists untouched)."""
    if isinstance(value, dict):
        return {key: reorder(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reorder(item) for item in value]
    return value


def test_canonical_config_makes_key_order_invisible_to_repr() -> None:
    """Snakemake's params trigger compares repr(param): the canonical forms of reordered configs repr the same."""
    reordered = reorder(PARAMS)
    assert repr(reordered) != repr(PARAMS)
    assert reordered == PARAMS
    assert repr(canonical_config(reordered)) == repr(canonical_config(PARAMS))
    assert canonical_config(PARAMS) == PARAMS


def test_canonical_config_keeps_list_order() -> None:
    assert canonical_config({"b": [3, 1, {"z": 1, "a": 2}], "a": 0}) == {"a": 0, "b": [3, 1, {"a": 2, "z": 1}]}
    assert list(canonical_config({"b": [3, 1, {"z": 1, "a": 2}], "a": 0})["b"][2]) == ["a", "z"]


@pytest.mark.parametrize("path", [("meta", "settings"), ("sanity", "settings"), ("sanity", "shift", "setting"),
                                  ("sanity", "mean_settings"),
                                  ("sanity", "ablations", "setting"), ("sanity", "combinations", "meta_settings"),
                                  ("sanity", "combinations", "settings"), ("explain", "run_settings")])
def test_every_key_that_names_a_setting_is_checked(path: tuple[str, ...]) -> None:
    """Each key listing settings (a list, or one name for shift/ablations) names a defined setting: an undefined
    name is reported by its key path and index."""
    single = path[-1] == "setting"
    override: dict = {path[-1]: "cnn_final_gtt" if single else ["cnn_final_gtt"]}
    for key in reversed(path[:-1]):
        override = {key: override}
    key = ".".join(path) + ("" if single else "[0]")
    assert f"{key}: 'cnn_final_gtt' is not a setting of settings" in problems_of(overlay(PARAMS, override))


def test_the_paper_family_set_needs_its_families() -> None:
    """``concepteval.family_set: paper`` builds neurons and SAE features: the schema asks for both blocks."""
    config = copy.deepcopy(PARAMS)
    del config["concepteval"]["families"]["sae"]
    assert "'sae' is a required property" in problems_of(config)
    config["concepteval"]["family_set"] = "all"
    check_params(config, schema_path=SCHEMA)  # `all` builds whichever families are set
