"""Next-token units of a language model and their ground-truth concepts (paper 000 settings 7–10, App. F).

A final-layer "neuron" of a language model predicts one token: its activation at a position is the softmax
probability that the next token is that token, and its explanation is the token itself, so its concept is the
one-hot of the actual next token. As in the paper, the units are the ``n_units`` (500) most common tokens of
the probing text, counted on the probe split's next tokens.

Positions: the probe stream is read in consecutive windows of ``context_length`` tokens
(:func:`neuroneval.models.lm.window_logits`); position ``i`` is an input whose context is its window up to
``i`` and whose label is token ``i + 1``; its ``input_id`` is ``i``. When there are more positions than
``max_positions``, a seeded uniform subsample (sorted) is kept, so the tables depend on the seed only.

Table columns: unit ``tok:<word>`` = P(next token = ``<word>``); concept ``next:<word>`` = 1 if the next token
is ``<word>``. The activation metadata maps each unit to its concept (``unit_concepts``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from neuroneval import io
from neuroneval.models.lm import window_logits
from neuroneval.progress import progress_bar

UNIT_PREFIX = "tok:"
CONCEPT_PREFIX = "next:"
LAYER = "next_token"
UNK_ID = 1  # neuroneval.worlds.text.UNK_ID: not a token of the language, never a unit by default


def most_common_tokens(token_ids: np.ndarray, n_units: int = 500, *, exclude: Sequence[int] = (UNK_ID,)) -> np.ndarray:
    """Ids of the ``n_units`` most frequent next tokens (``token_ids[1:]``), most frequent first, ties by id.

    ``exclude`` ids are never chosen (default: ``<unk>``). Raises ``ValueError`` when fewer than ``n_units``
    distinct tokens occur.
    """
    counts = np.bincount(np.asarray(token_ids, dtype=np.int64)[1:])
    counts[[index for index in exclude if index < counts.size]] = 0
    order = np.lexsort((np.arange(counts.size), -counts))
    chosen = order[counts[order] > 0][:n_units]
    if chosen.size < n_units:
        raise ValueError(f"n_units={n_units} but only {chosen.size} distinct tokens occur as next tokens")
    return chosen.astype(np.int64)


def select_positions(n_tokens: int, max_positions: int | None, *, seed: int = 0) -> np.ndarray:
    """Sorted positions ``0 .. n_tokens - 2`` (all, or a seeded uniform subsample of ``max_positions``)."""
    n_available = n_tokens - 1
    if n_available < 1:
        raise ValueError(f"need at least 2 tokens, got {n_tokens}")
    if max_positions is None or max_positions >= n_available:
        return np.arange(n_available, dtype=np.int64)
    if max_positions < 1:
        raise ValueError(f"max_positions must be >= 1 or None, got {max_positions}")
    chosen = np.random.default_rng(seed).choice(n_available, size=max_positions, replace=False)
    return np.sort(chosen).astype(np.int64)


def next_token_probabilities(
    model: torch.nn.Module,
    token_ids: np.ndarray,
    positions: np.ndarray,
    *,
    context_length: int,
    columns: np.ndarray | None = None,
    batch_size: int = 64,
    progress: bool = False,
) -> np.ndarray:
    """(len(positions), n_columns) float32 softmax probabilities of the next token at ``positions``.

    ``positions`` must be sorted and unique; only the windows holding them are run. ``columns`` (token ids)
    selects vocabulary entries (default: the full softmax, whose rows sum to 1).
    """
    selected = np.asarray(positions, dtype=np.int64)
    if selected.ndim != 1 or selected.size == 0 or np.any(np.diff(selected) <= 0):
        raise ValueError("positions must be a non-empty, sorted 1-D array of distinct positions")
    if selected[0] < 0 or selected[-1] >= len(token_ids) - 1:
        raise ValueError(f"positions must lie in [0, {len(token_ids) - 1}) (the last token has no next token)")
    n_columns = model.config.vocab_size if columns is None else len(columns)
    column_index = None if columns is None else torch.from_numpy(np.asarray(columns, dtype=np.int64))
    probabilities = np.empty((selected.size, n_columns), dtype=np.float32)
    windows = np.unique(selected // context_length)
    batches = window_logits(model, token_ids, context_length=context_length, batch_size=batch_size, windows=windows)
    with progress_bar(total=selected.size, enabled=progress, desc="next-token units", unit="pos") as bar:
        for batch_positions, logits in batches:
            flat_positions = batch_positions.ravel()
            rows = np.minimum(np.searchsorted(selected, flat_positions), selected.size - 1)
            hit = selected[rows] == flat_positions
            flat_logits = logits.reshape(-1, logits.shape[-1])
            values = torch.softmax(flat_logits[torch.from_numpy(np.flatnonzero(hit)).to(flat_logits.device)], dim=-1)
            if column_index is not None:
                values = values[:, column_index.to(values.device)]
            probabilities[rows[hit]] = values.cpu().numpy()
            bar.update(int(hit.sum()))
    return probabilities


@dataclass(frozen=True)
class NextTokenTables:
    """Activation and concept frames of one language model on one token stream, with their metadata.

    ``unit_token_ids`` are the units' token ids in column order; ``positions`` the ``input_id`` s (stream
    positions) of the rows.
    """

    activations: pd.DataFrame
    concepts: pd.DataFrame
    activation_metadata: dict[str, Any]
    concept_metadata: dict[str, Any]
    unit_token_ids: np.ndarray
    positions: np.ndarray


def next_token_tables(
    model: torch.nn.Module,
    token_ids: np.ndarray,
    vocabulary: Sequence[str],
    *,
    n_units: int = 500,
    context_length: int = 64,
    max_positions: int | None = 204_800,
    seed: int = 0,
    batch_size: int = 64,
    model_name: str = "lm",
    dataset: str = "text_probe",
    progress: bool = False,
    exclude: Sequence[int] = (UNK_ID,),
) -> NextTokenTables:
    """Next-token units (softmax probabilities of the ``n_units`` most common tokens) and their concepts.

    Parameters
    ----------
    model
        A causal language model whose forward returns ``.logits`` (``GPT2LMHeadModel``).
    token_ids
        The probe stream (``TextWorld.token_ids``), ids of ``vocabulary``.
    vocabulary
        Token strings by id; they name the columns (``tok:<word>``, ``next:<word>``).
    n_units
        How many of the most common next tokens become units (default 500, as in paper 000).
    context_length
        Window length (default 64; at most the model's ``n_positions``).
    max_positions
        Keep at most this many positions, a seeded uniform subsample (default 204,800 = the paper's token
        count; ``None`` keeps all).
    seed
        Seed of the subsample.
    batch_size
        Windows per forward pass (memory only).
    model_name, dataset
        Recorded in the metadata (``model``, ``dataset``).
    exclude
        Token ids never chosen as units (default: the text world's ``<unk>``; a real tokenizer's special ids).

    Returns
    -------
    NextTokenTables
        ``activations``: ``input_id`` + one float32 column per unit; ``concepts``: ``input_id`` + one float32 0/1
        column per unit's token; metadata ready for :func:`write_next_token_tables`.
    """
    if len(vocabulary) != model.config.vocab_size:
        raise ValueError(f"vocabulary has {len(vocabulary)} entries, the model {model.config.vocab_size}")
    tokens = np.asarray(token_ids, dtype=np.int64)
    concepts, concept_metadata, unit_token_ids, positions = next_token_concepts(
        tokens, vocabulary, n_units=n_units, max_positions=max_positions, seed=seed, dataset=dataset, exclude=exclude)
    probabilities = next_token_probabilities(model, tokens, positions, context_length=context_length,
                                             columns=unit_token_ids, batch_size=batch_size, progress=progress)
    words = [vocabulary[index] for index in unit_token_ids.tolist()]
    unit_names = [f"{UNIT_PREFIX}{word}" for word in words]
    concept_names = [f"{CONCEPT_PREFIX}{word}" for word in words]
    activations = _frame(positions, unit_names, probabilities)
    activation_metadata = {
        "model": model_name, "layer": LAYER, "dataset": dataset, "pooling": "none", "dtype": "float32",
        "unit_concepts": {unit: [concept] for unit, concept in zip(unit_names, concept_names, strict=True)},
        "unit_token_ids": unit_token_ids.tolist(), "context_length": context_length,
        "n_available_positions": int(tokens.size - 1), "max_positions": max_positions, "seed": seed,
    }
    return NextTokenTables(activations, concepts, activation_metadata, concept_metadata, unit_token_ids, positions)


def next_token_concepts(
    token_ids: np.ndarray,
    vocabulary: Sequence[str],
    *,
    n_units: int = 500,
    max_positions: int | None = 204_800,
    seed: int = 0,
    dataset: str = "text_probe",
    exclude: Sequence[int] = (UNK_ID,),
) -> tuple[pd.DataFrame, dict[str, Any], np.ndarray, np.ndarray]:
    """The concept table of next-token units, which depends on the text only (never on a model).

    Returns ``(concepts, metadata, unit_token_ids, positions)``: ``next:<word>`` = 1 where the token after
    position ``i`` is ``<word>``, for the ``n_units`` most common next tokens, on the positions
    :func:`select_positions` keeps. :func:`next_token_tables` uses the same units and positions, so the
    activation tables of every model align with this one table. ``exclude`` ids are never units (see
    :func:`most_common_tokens`).
    """
    tokens = np.asarray(token_ids, dtype=np.int64)
    unit_token_ids, positions = units_and_positions(tokens, n_units=n_units, max_positions=max_positions, seed=seed,
                                                    exclude=exclude)
    one_hot = (tokens[positions + 1][:, None] == unit_token_ids[None, :]).astype(np.float32)
    concept_names = [f"{CONCEPT_PREFIX}{vocabulary[index]}" for index in unit_token_ids.tolist()]
    metadata = {"source": "labels", "dataset": dataset, "concepts": concept_names,
                "positives": {name: int(count) for name, count in
                              zip(concept_names, one_hot.sum(axis=0).astype(np.int64), strict=True)}}
    return _frame(positions, concept_names, one_hot), metadata, unit_token_ids, positions


def units_and_positions(tokens: np.ndarray, *, n_units: int, max_positions: int | None, seed: int,
                        exclude: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The unit token ids (:func:`most_common_tokens`) and probe positions (:func:`select_positions`) that every
    next-token table of one text — concepts, each model's units, the world's ideal units — shares."""
    return most_common_tokens(tokens, n_units, exclude=exclude), select_positions(tokens.size, max_positions,
                                                                                   seed=seed)


def _frame(positions: np.ndarray, names: Sequence[str], values: np.ndarray) -> pd.DataFrame:
    columns = {name: values[:, column] for column, name in enumerate(names)}
    return pd.DataFrame({io.ID_COLUMN: positions.astype(np.int64), **columns})


def write_next_token_tables(tables: NextTokenTables, activation_path: str | os.PathLike,
                            concept_path: str | os.PathLike) -> tuple[Path, Path]:
    """Write both tables through :mod:`neuroneval.io` (validated, atomic)."""
    return (io.write_activation_table(activation_path, tables.activations, metadata=tables.activation_metadata),
            io.write_concept_table(concept_path, tables.concepts, metadata=tables.concept_metadata))


def ideal_next_token_table(world: Any, *, n_units: int = 500, max_positions: int | None = 204_800, seed: int = 0,
                           dataset: str = "text_probe", exclude: Sequence[int] = (UNK_ID,)
                           ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The text world's ideal next-token units on the same units and positions as :func:`next_token_tables`.

    Unit ``tok:<w>`` = the generator's ``P(next token = w | latent state)``
    (:func:`neuroneval.worlds.text.ideal_next_token_probabilities`): what a model that knew the world's
    grammar and hidden state would output. Returns ``(activations frame, metadata)`` with ``model: ideal``.
    """
    from neuroneval.worlds.text import ideal_next_token_probabilities

    tokens = np.asarray(world.token_ids, dtype=np.int64)
    unit_token_ids, positions = units_and_positions(tokens, n_units=n_units, max_positions=max_positions, seed=seed,
                                                    exclude=exclude)
    probabilities = ideal_next_token_probabilities(world, positions, unit_token_ids)
    words = [world.vocabulary[index] for index in unit_token_ids.tolist()]
    unit_names = [f"{UNIT_PREFIX}{word}" for word in words]
    metadata = {
        "model": "ideal", "layer": LAYER, "dataset": dataset, "pooling": "none", "dtype": "float32",
        "unit_concepts": {unit: [f"{CONCEPT_PREFIX}{word}"] for unit, word in zip(unit_names, words, strict=True)},
        "unit_token_ids": unit_token_ids.tolist(), "ideal_source": "generative_probability",
        "n_available_positions": int(tokens.size - 1), "max_positions": max_positions, "seed": seed,
    }
    return _frame(positions, unit_names, probabilities), metadata
