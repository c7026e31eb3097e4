"""The parse-time params check knows your own datasets and models (kind: tables/array, family: custom): a valid
overlay passes, a typo in one is named by its key path, CoSy on your tables is refused."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from neuroneval.params.check import ParamsError, check_params

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow/schemas/params.schema.yaml"
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
CLASS_UNITS = {"source": "labels", "prefixes": ["class:"]}


def own_params() -> dict:
    config = copy.deepcopy(PARAMS)
    config["external"] = {
        "datasets": {"mine_rows": {"kind": "array", "images": "images.npy", "labels": "labels.npy"},
                     "mine_tables": {"kind": "tables", "activations": {"my_mlp": {"softmax": "softmax.parquet"}},
                                     "concepts": {"labels": "labels.parquet"}, "known_concepts": "known.csv"}},
        "models": {"digits_mlp": {"family": "custom", "factory": "own_model:digits_mlp", "weights_path": "mlp.pt"}}}
    config["settings"]["mine_custom"] = {"dataset": "mine_rows", "units": [{"model": "digits_mlp", "layer": "logits"}],
                                         "concepts": dict(CLASS_UNITS)}
    config["settings"]["mine_tables"] = {"dataset": "mine_tables", "units": [{"model": "my_mlp", "layer": "softmax"}],
                                         "concepts": dict(CLASS_UNITS)}
    return config


def problems_of(config: dict) -> str:
    with pytest.raises(ParamsError) as caught:
        check_params(config, schema_path=SCHEMA)
    return str(caught.value)


def test_an_overlay_with_your_own_settings_passes() -> None:
    check_params(own_params(), schema_path=SCHEMA)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["settings"]["mine_tables"]["units"][0].update(layer="softmx"),
         "settings.mine_tables.units[0].layer: 'softmx' is not a layer of external.datasets.mine_tables.activations"
         ".my_mlp (['softmax'])"),
        (lambda c: c["settings"]["mine_tables"]["units"][0].update(model="my_mpl"),
         "settings.mine_tables.units[0].model: 'my_mpl' has no tables in external.datasets.mine_tables.activations"),
        (lambda c: c["settings"]["mine_tables"]["concepts"].update(source="pseudo:clip"),
         "settings.mine_tables.concepts.source: 'pseudo:clip' is not a concept table of "
         "external.datasets.mine_tables.concepts (['labels'])"),
        (lambda c: c["settings"]["mine_custom"]["units"][0].update(model="digits_mpl"),
         "settings.mine_custom.units[0].model: 'digits_mpl' is not a custom model of external.models"),
        (lambda c: c["settings"]["mine_custom"]["concepts"].update(source="pseudo:clip"),
         "settings.mine_custom.concepts.source: an array dataset has the one concept source 'labels'"),
        (lambda c: c["external"]["datasets"]["mine_rows"].update(image="x.npy"),
         "external.datasets.mine_rows"),
        (lambda c: c["external"]["models"]["digits_mlp"].update(torchscript="m.pt"),
         "external.models.digits_mlp"),
        (lambda c: c["external"]["models"]["digits_mlp"].update(factory="own_model.digits_mlp"),
         "external.models.digits_mlp.factory"),
        (lambda c: c["cosy"].update(settings=["mine_tables"]),
         "cosy.settings: 'mine_tables' is a setting of your own (dataset 'mine_tables'); CoSy runs the setting's "
         "model on generated images"),
    ],
)
def test_a_mistake_in_your_own_setting_is_named_by_its_key(change, message: str) -> None:
    config = own_params()
    change(config)
    assert message in problems_of(config)
