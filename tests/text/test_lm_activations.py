"""Next-token units: softmax probabilities of the most common tokens, and the one-hot of the actual next token."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from neuroneval import io
from neuroneval.activations.lm import (
    CONCEPT_PREFIX,
    UNIT_PREFIX,
    most_common_tokens,
    next_token_probabilities,
    next_token_tables,
    select_positions,
    write_next_token_tables,
)
from neuroneval.worlds.text import UNK_ID, TextWorld

from .conftest import CONTEXT

N_UNITS = 40


@pytest.fixture(scope="module")
def full_softmax(tiny_lm, probe_world: TextWorld) -> np.ndarray:
    model, _, _ = tiny_lm
    positions = np.arange(probe_world.n_tokens - 1)
    return next_token_probabilities(model, probe_world.token_ids, positions, context_length=CONTEXT)


@pytest.fixture(scope="module")
def tables(tiny_lm, probe_world: TextWorld):
    model, _, _ = tiny_lm
    return next_token_tables(model, probe_world.token_ids, probe_world.vocabulary, n_units=N_UNITS,
                             context_length=CONTEXT, max_positions=None, model_name="tiny_lm")


def test_full_softmax_rows_sum_to_one_and_match_a_prefix_forward(tiny_lm, probe_world, full_softmax) -> None:
    model, _, _ = tiny_lm
    assert full_softmax.shape == (probe_world.n_tokens - 1, len(probe_world.vocabulary))
    assert full_softmax.dtype == np.float32 and full_softmax.min() >= 0
    np.testing.assert_allclose(full_softmax.sum(axis=1), 1.0, atol=1e-5)
    tokens = torch.from_numpy(probe_world.token_ids.astype(np.int64))
    for position in (0, 5, CONTEXT - 1, CONTEXT, 3 * CONTEXT + 7, probe_world.n_tokens - 2):
        start = position // CONTEXT * CONTEXT  # the window the position belongs to, cut right after it
        with torch.no_grad():
            logits = model(input_ids=tokens[start : position + 1][None]).logits[0, -1]
        np.testing.assert_allclose(full_softmax[position], torch.softmax(logits.double(), 0).numpy(), atol=2e-6)


def test_units_are_the_softmax_entries_of_the_most_common_tokens(tables, probe_world, full_softmax) -> None:
    activations = tables.activations
    assert list(activations.columns[:3]) == [io.ID_COLUMN, f"{UNIT_PREFIX}the", f"{UNIT_PREFIX}."]
    assert activations[io.ID_COLUMN].dtype == np.int64 and len(activations.columns) == N_UNITS + 1
    np.testing.assert_array_equal(activations[io.ID_COLUMN].to_numpy(), np.arange(probe_world.n_tokens - 1))
    values = io.value_matrix(activations)
    assert values.dtype == np.float32
    np.testing.assert_array_equal(values, full_softmax[:, tables.unit_token_ids])
    counts = np.bincount(probe_world.token_ids[1:], minlength=len(probe_world.vocabulary))
    assert np.all(np.diff(counts[tables.unit_token_ids]) <= 0)
    assert counts[tables.unit_token_ids].min() >= np.delete(counts, np.r_[tables.unit_token_ids, UNK_ID]).max()


def test_concepts_are_the_one_hot_of_the_next_token(tables, probe_world) -> None:
    concepts = io.value_matrix(tables.concepts)
    next_tokens = probe_world.token_ids[1:]
    assert set(np.unique(concepts).tolist()) <= {0.0, 1.0}
    in_units = np.isin(next_tokens, tables.unit_token_ids)
    np.testing.assert_array_equal(concepts.sum(axis=1), in_units.astype(np.float32))
    rows = np.flatnonzero(in_units)
    np.testing.assert_array_equal(tables.unit_token_ids[concepts[rows].argmax(axis=1)], next_tokens[rows])
    words = [probe_world.vocabulary[token] for token in tables.unit_token_ids]
    assert list(tables.concepts.columns[1:]) == [f"{CONCEPT_PREFIX}{word}" for word in words]
    assert tables.activation_metadata["unit_concepts"] == {
        f"{UNIT_PREFIX}{word}": [f"{CONCEPT_PREFIX}{word}"] for word in words}


def test_tables_written_and_read_back_through_io(tables, tmp_path: Path) -> None:
    activation_path = tmp_path / "activations" / "text_probe" / "tiny_lm" / "next_token.parquet"
    concept_path = tmp_path / "concepts" / "text_probe" / "labels.parquet"
    write_next_token_tables(tables, activation_path, concept_path)
    activations, activation_metadata = io.read_activation_table(activation_path)
    concepts, concept_metadata = io.read_concept_table(concept_path)
    io.check_matching_ids(activations, concepts, first_source="activations", second_source="concepts")
    np.testing.assert_array_equal(io.value_matrix(activations), io.value_matrix(tables.activations))
    np.testing.assert_array_equal(io.value_matrix(concepts), io.value_matrix(tables.concepts))
    assert activation_metadata["layer"] == "next_token" and activation_metadata["model"] == "tiny_lm"
    assert activation_metadata["unit_concepts"] == tables.activation_metadata["unit_concepts"]
    assert concept_metadata["source"] == "labels" and len(concept_metadata["concepts"]) == N_UNITS


def test_subsampled_positions_are_seeded_and_keep_the_values(tiny_lm, probe_world, tables) -> None:
    model, _, _ = tiny_lm
    kwargs = {"n_units": N_UNITS, "context_length": CONTEXT, "max_positions": 500, "seed": 3}
    subsample = next_token_tables(model, probe_world.token_ids, probe_world.vocabulary, **kwargs)
    again = select_positions(probe_world.n_tokens, 500, seed=3)
    np.testing.assert_array_equal(subsample.positions, again)
    assert subsample.positions.size == 500 and np.all(np.diff(subsample.positions) > 0)
    assert not np.array_equal(again, select_positions(probe_world.n_tokens, 500, seed=4))
    np.testing.assert_array_equal(io.value_matrix(subsample.activations),
                                  io.value_matrix(tables.activations)[subsample.positions])
    np.testing.assert_array_equal(io.value_matrix(subsample.concepts),
                                  io.value_matrix(tables.concepts)[subsample.positions])
    np.testing.assert_array_equal(subsample.unit_token_ids, tables.unit_token_ids)


def test_most_common_tokens_and_argument_checks(tiny_lm, probe_world) -> None:
    tokens = np.array([0, 5, 5, 1, 1, 1, 3, 3, 4, 4])
    assert most_common_tokens(tokens, 3).tolist() == [3, 4, 5]
    assert most_common_tokens(tokens, 3, exclude=()).tolist() == [1, 3, 4]
    with pytest.raises(ValueError, match="only 3 distinct tokens"):
        most_common_tokens(tokens, 4)
    model, _, _ = tiny_lm
    with pytest.raises(ValueError, match="sorted"):
        next_token_probabilities(model, probe_world.token_ids, np.array([4, 2]), context_length=CONTEXT)
    with pytest.raises(ValueError, match="the last token has no next token"):
        next_token_probabilities(model, probe_world.token_ids, np.array([probe_world.n_tokens - 1]),
                                 context_length=CONTEXT)
    with pytest.raises(ValueError, match="exceeds the model's n_positions"):
        next_token_probabilities(model, probe_world.token_ids, np.array([0]), context_length=CONTEXT + 1)


def test_concept_table_alone_equals_the_one_built_with_a_model(tiny_lm, probe_world) -> None:
    from neuroneval.activations.lm import next_token_concepts, next_token_tables

    model, _, _ = tiny_lm
    tables = next_token_tables(model, probe_world.token_ids, probe_world.vocabulary, n_units=20, context_length=16,
                               max_positions=500, seed=3)
    concepts, metadata, unit_ids, positions = next_token_concepts(probe_world.token_ids, probe_world.vocabulary,
                                                                  n_units=20, max_positions=500, seed=3)
    pd.testing.assert_frame_equal(concepts, tables.concepts)
    assert metadata == tables.concept_metadata
    np.testing.assert_array_equal(unit_ids, tables.unit_token_ids)
    np.testing.assert_array_equal(positions, tables.positions)
