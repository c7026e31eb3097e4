"""Integration on a tiny embedded text world: probe directions of planted concepts (the word class of the
current token) are more faithful and more readable than random directions, with bootstrap intervals over
concepts that do not overlap."""

import numpy as np
import pytest

from neuroneval.concepteval import (
    BootstrapOptions,
    CooccurrenceCorpus,
    FaithfulnessOptions,
    PatternOptions,
    ProbeOptions,
    concept_activation_function,
    faithfulness,
    fit_probes,
    input_patterns,
    mean_with_interval,
    random_concepts,
    readability,
    site_activations,
    split_lm,
)
from neuroneval.models.lm import LMTraining, train_lm
from neuroneval.worlds.text import build_text_world
from neuroneval.worlds.text_grammar import SLOT_INDEX

WORLD = {"vocab_size": 300, "n_topics": 4, "doc_length": 64, "collocation_strength": 0.8, "n_successors": 1}
CONTEXT = 16


@pytest.fixture(scope="module")
def setting():
    train = build_text_world(300, seed=1, split="train", **WORLD)
    probe = build_text_world(60, seed=1, split="probe", vocabulary=train.vocabulary, **WORLD)
    model, _ = train_lm(train.token_ids, len(train.vocabulary), size="tiny", context_length=CONTEXT,
                        training=LMTraining(batch_size=16, epochs=2, learning_rate=1e-2, seed=0))
    n_windows = probe.n_tokens // CONTEXT
    windows = probe.token_ids[: n_windows * CONTEXT].reshape(n_windows, CONTEXT).astype(np.int64)
    slots = probe.slot_of_token[: n_windows * CONTEXT].reshape(n_windows, CONTEXT)
    half = n_windows // 2
    hidden = site_activations(model, windows[:half], layer=0).double().numpy().reshape(-1, 16)
    names = sorted(SLOT_INDEX, key=SLOT_INDEX.get)
    labels = np.stack([slots[:half].ravel() == SLOT_INDEX[name] for name in names], axis=1).astype(int)
    probes, report = fit_probes(hidden, labels, names, ProbeOptions(c=1e-2))
    randoms = random_concepts(16, 12, seed=0, center=hidden.mean(axis=0))
    return model, probe, windows[half:][:64], probes, randoms, report


def test_probes_are_more_faithful_than_random_directions(setting):
    model, _, evaluation, probes, randoms, report = setting
    assert (report["holdout_balanced_accuracy"] > 0.55).all()
    split = split_lm(model, evaluation, layer=0)
    table = faithfulness(split.hidden, split.head, split.targets, probes + randoms,
                         FaithfulnessOptions(measures=("ABL-Div",)))
    values = table.set_index("concept")["value"]
    options = BootstrapOptions(n_boot=500, seed=0)
    planted = mean_with_interval(values[[c.name for c in probes]].to_numpy(), options)
    floor = mean_with_interval(values[[c.name for c in randoms]].to_numpy(), options)
    assert planted["ci_low"] > floor["ci_high"], (planted, floor)


def test_probe_patterns_are_more_readable_than_random_ones(setting):
    model, world, evaluation, probes, randoms, _ = setting
    concepts = probes + randoms
    activations = concept_activation_function(model, concepts, layer=0)
    patterns, _ = input_patterns(evaluation[:24], activations, len(world.vocabulary),
                                 PatternOptions(top_k=10, n_high=32, exclude_ids=(0, 1)))
    embeddings = model.transformer.wte.weight.detach().double().numpy()
    corpus = CooccurrenceCorpus.from_tokens(world.token_ids, len(world.vocabulary), doc_offsets=world.doc_offsets)
    table = readability([c.name for c in concepts], input_patterns=patterns, corpus=corpus, embeddings=embeddings)
    cosines = table[table["measure"] == "IN-EmbCos"].set_index("concept")["value"]
    assert cosines.notna().all()
    assert cosines[[c.name for c in probes]].mean() > cosines[[c.name for c in randoms]].mean()
