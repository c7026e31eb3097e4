"""CoSy's typed options: params.yaml's defaults, the nested blocks, the generators' options, named errors."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from neuroneval.cosy.embedded_diffusion import DEFAULT_CONFIG
from neuroneval.cosy.options import (
    CosyOptions,
    DiffusersOptions,
    EmbeddedDiffusionOptions,
    EmbeddedTrainingOptions,
    generator_options,
)
from neuroneval.cosy.user import USER_BLOCK
from neuroneval.options import OptionsError

ROOT = Path(__file__).resolve().parents[2]


def _plain(value: object) -> object:
    """Options as params.yaml writes them: mappings and lists."""
    if dataclasses.is_dataclass(value):
        return {field.name: _plain(getattr(value, field.name)) for field in dataclasses.fields(value)}
    return [_plain(item) for item in value] if isinstance(value, tuple) else value


def test_defaults_are_params_yaml() -> None:
    params = yaml.safe_load((ROOT / "params.yaml").read_text())["cosy"]
    assert params.pop(USER_BLOCK) == {}  # rule cosy_user's entries (cosy.user.CosyUserEntry), none by default
    plain = _plain(CosyOptions())
    assert plain["embedded"]["sampling"].pop("device") == "cpu"  # optional in params.yaml (the schema allows it)
    assert plain == params
    assert CosyOptions.from_params(params) == CosyOptions()
    assert DEFAULT_CONFIG == params["embedded"]["training"] == EmbeddedTrainingOptions().to_config()


def test_nested_blocks_parse_and_lists_become_tuples() -> None:
    options = CosyOptions.from_params({"templates": {"names": ["a"], "n_concepts": 1},
                                       "embedded": {"sampling": {"steps": 3}}, "diffusers": {"model": "m"}})
    assert options.templates.names == ("a",) and options.templates.n_natural == 50
    assert options.embedded.sampling.steps == 3 and options.embedded.training == EmbeddedTrainingOptions()
    assert options.generator_options("embedded") is options.embedded
    assert options.generator_options("diffusers").model == "m"
    assert options.generator_options("oracle") is None
    assert generator_options("embedded", {"sampling": {"guidance_scale": 1.0}}) == EmbeddedDiffusionOptions.from_params(
        {"sampling": {"guidance_scale": 1.0}})


@pytest.mark.parametrize(("build", "match"), [
    (lambda: CosyOptions.from_params({"n_image": 3}), "CosyOptions: unknown option 'n_image'"),
    (lambda: CosyOptions.from_params({"templates": {"n_concept": 3}}), "unknown option 'n_concept'"),
    (lambda: CosyOptions(generators=("midjourney",)), r"CosyOptions\.generators must be among"),
    (lambda: CosyOptions(max_units=0), r"CosyOptions\.max_units must lie in"),
    (lambda: CosyOptions.from_params({"seeds": {"generation_seeds": []}}), r"CosySeedsOptions\.generation_seeds"),
    (lambda: CosyOptions.from_params({"generative": {"alpha": 1.5}}), r"CosyGenerativeOptions\.alpha must lie in"),
    (lambda: EmbeddedTrainingOptions(cond_dropout=1.2), r"EmbeddedTrainingOptions\.cond_dropout must lie in"),
    (lambda: EmbeddedTrainingOptions(attention_levels=(True,)), "differ in length"),
    (lambda: DiffusersOptions(dtype="float8"), r"DiffusersOptions\.dtype must be one of"),
    (lambda: DiffusersOptions(height=4), r"DiffusersOptions\.height must lie in"),
    (lambda: generator_options("oracle", {"steps": 3}), "the oracle generator takes no options"),
    (lambda: generator_options("midjourney"), "unknown generator 'midjourney'"),
])
def test_bad_options_are_named(build, match) -> None:
    with pytest.raises(OptionsError, match=match):
        build()
