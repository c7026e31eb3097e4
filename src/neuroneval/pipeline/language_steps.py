"""Workflow steps of the text world and its language models (paper 000 settings 7–10 in miniature).

One function per Snakemake rule (same name), each taking a :class:`~neuroneval.pipeline.runner.StepIO`. The
science lives in :mod:`neuroneval.worlds.text`, :mod:`neuroneval.models.lm` and :mod:`neuroneval.activations.lm`.
"""

from __future__ import annotations

import json
from pathlib import Path

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

EVALUATION_TOKENS = 65_536  # probe tokens on which a trained LM's perplexity is reported (its card)


def text_world(job: StepIO) -> None:
    """Generate split ``{split}`` of the text world; splits other than ``train`` reuse the train vocabulary."""
    from neuroneval.worlds.text import build_text_world, load_text_world, save_text_world

    knobs = dict(job.params.world)
    knobs.pop("splits")
    split = job.wildcards.split
    vocabulary = None if split == "train" else load_text_world(Path(job.input.train)).vocabulary
    world = build_text_world(int(job.params.n_documents), split=split, vocabulary=vocabulary, progress=True, **knobs)
    with io.atomic_directory(job.output[0]) as staging:
        save_text_world(world, staging)
    print(json.dumps({"split": split, "documents": world.n_documents, "tokens": world.n_tokens,
                      "vocabulary": len(world.vocabulary)}))


def train_language_model(job: StepIO) -> None:
    """Train one GPT-2-style LM (``models.language.<name>``) on the train split; save it with its card.

    The card (``training_report.json``) adds the perplexity on the first probe tokens next to the unigram
    perplexity of the training counts: the baseline a next-token model must beat.
    """
    from neuroneval.models.lm import perplexity, save_lm, train_lm, unigram_perplexity
    from neuroneval.worlds.text import load_text_world

    train = load_text_world(Path(job.input.train))
    probe = load_text_world(Path(job.input.probe))
    spec = job.params.spec
    training = spec["training"]
    model, report = train_lm(train.token_ids, len(train.vocabulary), size=spec["size"],
                             context_length=spec["context_length"], batch_size=training["batch_size"],
                             epochs=training["epochs"], learning_rate=training["learning_rate"],
                             weight_decay=training["weight_decay"], seed=training["seed"],
                             desc=f"train {job.wildcards.lm}")
    evaluation = probe.token_ids[:EVALUATION_TOKENS]
    report["probe_perplexity"] = round(perplexity(model, evaluation, context_length=spec["context_length"]), 4)
    report["unigram_perplexity"] = round(unigram_perplexity(train.token_ids, evaluation, len(train.vocabulary)), 4)
    report["evaluation_tokens"] = int(evaluation.size)
    print(json.dumps(report, indent=2))
    save_lm(model, job.output[0], vocabulary=train.vocabulary, report=report)


def text_label_concepts(job: StepIO) -> None:
    """Next-token concepts of the probe split (``next:<word>`` one-hots of the most common next tokens)."""
    from neuroneval.activations.lm import next_token_concepts
    from neuroneval.worlds.text import load_text_world

    world = load_text_world(Path(job.input.world))
    extraction = job.params.extraction
    frame, metadata, _, _ = next_token_concepts(world.token_ids, world.vocabulary, n_units=extraction["n_units"],
                                                max_positions=extraction["max_positions"], seed=extraction["seed"],
                                                dataset=f"text_{job.wildcards.split}")
    io.write_concept_table(job.output[0], frame, metadata=metadata)


def lm_next_token_activations(job: StepIO) -> None:
    """Next-token units of one LM on a text split: P(next token = w) for the most common next tokens ``w``."""
    from neuroneval.activations.lm import next_token_tables
    from neuroneval.models.lm import load_lm
    from neuroneval.worlds.text import load_text_world

    world = load_text_world(Path(job.input.world))
    model = load_lm(Path(job.input.model))
    extraction = job.params.extraction
    tables = next_token_tables(model, world.token_ids, world.vocabulary, n_units=extraction["n_units"],
                               context_length=model.config.n_positions, max_positions=extraction["max_positions"],
                               seed=extraction["seed"], batch_size=extraction["batch_size"],
                               model_name=job.wildcards.lm, dataset=f"text_{job.wildcards.split}", progress=True)
    io.write_activation_table(job.output[0], tables.activations, metadata=tables.activation_metadata)


def lm_ideal_activations(job: StepIO) -> None:
    """The text world's ideal next-token units on split ``{split}`` (generator probabilities, model ``ideal``)."""
    from neuroneval.activations.lm import ideal_next_token_table
    from neuroneval.worlds.text import load_text_world

    world = load_text_world(Path(job.input.world))
    extraction = job.params.extraction
    frame, metadata = ideal_next_token_table(world, n_units=extraction["n_units"],
                                             max_positions=extraction["max_positions"], seed=extraction["seed"],
                                             dataset=f"text_{job.wildcards.split}")
    io.write_activation_table(job.output[0], frame, metadata=metadata)
