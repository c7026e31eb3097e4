"""The ``world:`` blocks parse into typed options that build exactly the world the keyword call builds."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import numpy as np
import pytest
import yaml

from neuroneval.options import OptionsError
from neuroneval.worlds.text import TextWorldOptions, build_text_world, build_text_world_split
from neuroneval.worlds.vision import VisionWorldOptions, build_vision_world, build_vision_world_split

PARAMS = yaml.safe_load((Path(__file__).resolve().parents[2] / "params.yaml").read_text())["world"]
#: Builder arguments that are no world knob: which split, which part of it, and how it is computed.
NOT_KNOBS = {"n_images", "n_documents", "split", "vocabulary", "start_index", "chunk_size", "progress"}


@pytest.mark.parametrize(("options_class", "builder"), [(VisionWorldOptions, build_vision_world),
                                                         (TextWorldOptions, build_text_world)])
def test_options_restate_the_builders_knobs_and_defaults(options_class, builder) -> None:
    parameters = {name: parameter for name, parameter in inspect.signature(builder).parameters.items()
                  if name not in NOT_KNOBS}
    fields = {field.name: field for field in dataclasses.fields(options_class) if field.name != "splits"}
    assert list(fields) == list(parameters)
    for name, parameter in parameters.items():
        if parameter.default is not inspect.Parameter.empty:  # the seed is required by the builder
            default = fields[name].default
            assert (list(default) if isinstance(default, tuple) else default) == \
                (list(parameter.default) if isinstance(parameter.default, tuple) else parameter.default), name


def test_the_vision_block_builds_the_keyword_world() -> None:
    block = dict(PARAMS["vision"])
    options = VisionWorldOptions.from_params(block)
    assert options.splits == block["splits"] and options.parent_groupings == tuple(block["parent_groupings"])
    ours = build_vision_world_split(options, "probe", 12)
    knobs = {key: value for key, value in block.items() if key != "splits"}
    theirs = build_vision_world(12, split="probe", **knobs)
    np.testing.assert_array_equal(ours.images, theirs.images)
    np.testing.assert_array_equal(ours.masks, theirs.masks)
    assert ours.labels.equals(theirs.labels) and ours.captions == theirs.captions and ours.params == theirs.params


def test_the_text_block_builds_the_keyword_world() -> None:
    block = dict(PARAMS["text"])
    options = TextWorldOptions.from_params(block)
    ours = build_text_world_split(options, "train", 6)
    knobs = {key: value for key, value in block.items() if key != "splits"}
    theirs = build_text_world(6, split="train", **knobs)
    np.testing.assert_array_equal(ours.token_ids, theirs.token_ids)
    assert ours.vocabulary == theirs.vocabulary and ours.params == theirs.params
    probe = build_text_world_split(options, "probe", 3, vocabulary=ours.vocabulary)
    assert probe.vocabulary == ours.vocabulary


@pytest.mark.parametrize(("build", "match"), [
    (lambda: VisionWorldOptions(seed=-1), r"VisionWorldOptions\.seed must lie in"),
    (lambda: VisionWorldOptions.from_params({"splits": {"train": 0}}), r"VisionWorldOptions\.splits must map"),
    (lambda: TextWorldOptions.from_params({"vocabsize": 10}), "unknown option 'vocabsize'"),
])
def test_bad_world_options_are_named(build, match) -> None:
    with pytest.raises(OptionsError, match=match):
        build()


def test_the_splits_are_read_only() -> None:
    options = VisionWorldOptions.from_params({"splits": {"train": 3}})
    with pytest.raises(TypeError):
        options.splits["train"] = 4  # type: ignore[index]
