"""The ``training:`` blocks of ``models:`` parse into typed, frozen options; every block of params.yaml does."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from neuroneval.models.classifier import ClassifierTraining
from neuroneval.models.lm import LMTraining
from neuroneval.models.training import TrainingOptions
from neuroneval.options import OptionsError

PARAMS = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text())


def test_every_training_block_of_params_parses_to_the_values_written() -> None:
    models = PARAMS["models"]
    blocks = [(ClassifierTraining, spec["training"]) for spec in models["vision"].values()]
    blocks += [(LMTraining, spec["training"]) for spec in models["language"].values()]
    blocks += [(TrainingOptions, spec["training"]) for spec in models["contrastive"].values()]
    for options_class, block in blocks:
        options = options_class.from_params(block)
        assert {name: getattr(options, name) for name in block} == block
        assert all(type(getattr(options, name)) is type(value) for name, value in block.items())


def test_the_concept_weight_of_a_bottleneck_and_its_default() -> None:
    assert ClassifierTraining.from_params(PARAMS["models"]["vision"]["vision_cbm"]["training"]).concept_weight == 10.0
    assert ClassifierTraining.from_params(PARAMS["models"]["vision"]["vision_cnn"]["training"]).concept_weight == 1.0


@pytest.mark.parametrize(("build", "match"), [
    (lambda: TrainingOptions.from_params({"epochs": 2, "learningrate": 0.1}), "unknown option 'learningrate'"),
    (lambda: TrainingOptions(epochs=0), r"TrainingOptions\.epochs must lie in"),
    (lambda: LMTraining(learning_rate=0.0), r"LMTraining\.learning_rate must lie in"),
    (lambda: ClassifierTraining(holdout_fraction=1.0), r"ClassifierTraining\.holdout_fraction must lie in"),
    (lambda: ClassifierTraining(concept_weight=-1.0), r"ClassifierTraining\.concept_weight must lie in"),
    (lambda: LMTraining.from_params({"holdout_fraction": 0.1}), "unknown option 'holdout_fraction'"),
])
def test_bad_training_options_are_named(build, match) -> None:
    with pytest.raises(OptionsError, match=match):
        build()
