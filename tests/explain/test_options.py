"""Typed options and input checks: bad keys, bad values, NaN, wrong shapes and mismatched units are named."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.explain import (
    CaptionOptions,
    ClipDissectOptions,
    ClusteredOptions,
    CompositionalOptions,
    DissectionOptions,
    LinearOptions,
    LLMOptions,
    OptionsError,
    ProbingData,
    RandomOptions,
    explanation_frame,
    parse,
    score_explanations,
)

ALL = [CaptionOptions, ClipDissectOptions, ClusteredOptions, CompositionalOptions, DissectionOptions,
       LinearOptions, LLMOptions, RandomOptions]


@pytest.mark.parametrize("options", ALL)
def test_defaults_parse_and_unknown_keys_are_named(options) -> None:
    assert options.from_params({}) == options()
    with pytest.raises(OptionsError, match="'no_such_key'"):
        options.from_params({"no_such_key": 1})


@pytest.mark.parametrize("options, params, key", [
    (DissectionOptions, {"quantile": 0}, "quantile"),
    (CompositionalOptions, {"max_length": 0}, "max_length"),
    (CompositionalOptions, {"operators": ["XOR"]}, "operators"),
    (ClipDissectOptions, {"p_start": 0.9, "p_end": 0.95}, "p_end"),
    (LinearOptions, {"tolerance": float("nan")}, "tolerance"),
    (LinearOptions, {"width": 2.5}, "width"),
    (CaptionOptions, {"max_document_frequency": 2}, "max_document_frequency"),
    (LLMOptions, {"base_url": "127.0.0.1:8000"}, "base_url"),
    (RandomOptions, {"seed": -1}, "seed"),
])
def test_bad_values_name_their_key(options, params, key) -> None:
    with pytest.raises(OptionsError, match=key):
        options.from_params(params)


def test_probing_data_checks() -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ProbingData.build(np.array([[0.5, 1.5], [0, 0]]), ["a", "b"])
    with pytest.raises(ValueError, match="finite"):
        ProbingData.build(np.array([[0.5, np.nan], [0, 0]]), ["a", "b"])
    with pytest.raises(ValueError, match="masks must have shape"):
        ProbingData.build(np.zeros((2, 2)), ["a", "b"], masks=np.zeros((2, 3, 4, 4)))
    with pytest.raises(ValueError, match="captions has 1 entries for 2 inputs"):
        ProbingData.build(np.zeros((2, 2)), ["a", "b"], captions=["x"])
    with pytest.raises(ValueError, match="unique"):
        ProbingData.build(np.zeros((2, 2)), ["a", "a"])


def test_scoring_names_units_missing_from_the_activations() -> None:
    frame = explanation_frame(["u0", "u9"], [parse("a"), parse("b")])
    activations = pd.DataFrame({"u0": np.arange(4.0), "u1": np.ones(4)})
    with pytest.raises(ValueError, match="unit 'u9' is not a column"):
        score_explanations(frame, activations, np.zeros((4, 2)), ["a", "b"], source="e.csv")
    with pytest.raises(ValueError, match="one column per explained unit"):
        score_explanations(frame, np.zeros((4, 3)), np.zeros((4, 2)), ["a", "b"])
