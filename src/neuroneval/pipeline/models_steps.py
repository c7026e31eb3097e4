"""Workflow steps of the models stage (``models.smk``): the tiny model zoo trained in the DAG.

One function per Snakemake rule (same name): the vision classifiers (CNN, ViT, CBM; also the digits CNN), the
GPT-2-style language models, the CLIP-style contrastive model and its linear probe. The science lives in
:mod:`neuroneval.models`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

EVALUATION_TOKENS = 65_536  # probe tokens on which a trained LM's perplexity is reported (its card)


def _model_name(path: str) -> str:
    """``data/models/vision_cnn.pt`` → ``data/models/vision_cnn``: how errors name a model."""
    return str(Path(path).with_suffix("")) if Path(path).suffix == ".pt" else str(path)


def train_vision_classifier(job: StepIO) -> None:
    """Train one of the world's image classifiers (``models.<name>`` in params); write checkpoint and card, unless
    its held-out accuracy does not beat chance (:func:`neuroneval.models.quality.check_beats_baseline`)."""
    from neuroneval.models.classifier import ClassifierTraining, save_checkpoint, train_classifier
    from neuroneval.models.quality import ACCURACY, check_beats_baseline
    from neuroneval.settings import select_concepts
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    config = {"n_classes": len(world.class_names), **spec["config"]}
    concept_names, concept_targets = [], None
    if spec["architecture"] == "tiny_cbm":
        prefixes = config.pop("concept_prefixes")
        concept_names = select_concepts([c for c in world.labels.columns if c != io.ID_COLUMN], prefixes)
        concept_targets = world.labels[concept_names].to_numpy(dtype=np.float32)
        config["n_concepts"] = len(concept_names)
    training = ClassifierTraining.from_params(spec["training"])
    source = _model_name(job.output.checkpoint)
    model, report = train_classifier(spec["architecture"], config, world.images, world.class_index, training,
                                     concept_targets=concept_targets, desc=f"train {source}")
    print(json.dumps(report, indent=2))
    check_beats_baseline(source, ACCURACY, report["holdout_accuracy"], report["chance_accuracy"],
                         loss=report["final_train_loss"])
    report = {**report, "concept_names": concept_names} if concept_names else report
    save_checkpoint(model, job.output.checkpoint, architecture=spec["architecture"], config=config, report=report,
                    class_names=world.class_names)


def train_language_model(job: StepIO) -> None:
    """Train one GPT-2-style LM (``models.language.<name>``) on the train split; save it with its card.

    The card (``training_report.json``) adds the perplexity on the first probe tokens next to the unigram
    perplexity of the training counts: the baseline a next-token model must beat, or the job fails
    (:func:`neuroneval.models.quality.check_beats_baseline`).
    """
    from neuroneval.models.lm import LMTraining, perplexity, save_lm, train_lm, unigram_perplexity
    from neuroneval.models.quality import PERPLEXITY, check_beats_baseline
    from neuroneval.worlds.text import load_text_world

    train = load_text_world(Path(job.input.train))
    probe = load_text_world(Path(job.input.probe))
    spec = job.params.spec
    model, report = train_lm(train.token_ids, len(train.vocabulary), size=spec["size"],
                             context_length=spec["context_length"], tie_embeddings=spec.get("tie_embeddings", True),
                             training=LMTraining.from_params(spec["training"]),
                             desc=f"train {_model_name(job.output[0])}")
    evaluation = probe.token_ids[:EVALUATION_TOKENS]
    report["probe_perplexity"] = round(perplexity(model, evaluation, context_length=spec["context_length"]), 4)
    report["unigram_perplexity"] = round(unigram_perplexity(train.token_ids, evaluation, len(train.vocabulary)), 4)
    report["evaluation_tokens"] = int(evaluation.size)
    print(json.dumps(report, indent=2))
    check_beats_baseline(_model_name(job.output[0]), PERPLEXITY, report["probe_perplexity"],
                         report["unigram_perplexity"], loss=report["final_loss"])
    save_lm(model, job.output[0], vocabulary=train.vocabulary, report=report)


def train_contrastive_model(job: StepIO) -> None:
    """Train the CLIP/SigLIP-style model ``models.contrastive.<name>`` on the train split's image–caption pairs."""
    from neuroneval.models.clip import save_clip, train_clip
    from neuroneval.models.training import TrainingOptions
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    model, tokenizer, report = train_clip(world.images, world.captions, spec["config"],
                                          TrainingOptions.from_params(spec["training"]),
                                          desc=f"train {_model_name(job.output.checkpoint)}")
    print(json.dumps(report, indent=2))
    save_clip(model, tokenizer, job.output.checkpoint, config=spec["config"], report=report)


def train_probe(job: StepIO) -> None:
    """Linear probe ``models.probes.<name>``: one logistic unit per attribute concept on frozen CLIP embeddings,
    trained and measured by :func:`neuroneval.models.probe.train_probe_with_holdout` (last 10 % held out); the job
    fails unless its held-out concept accuracy beats the majority value's."""
    from neuroneval.models.clip import embed_images, load_clip
    from neuroneval.models.probe import ProbeTraining, save_probe, train_probe_with_holdout
    from neuroneval.models.quality import CONCEPT_ACCURACY, check_beats_baseline
    from neuroneval.settings import select_concepts
    from neuroneval.worlds import load_vision_world

    clip, _, _ = load_clip(job.input.features)
    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    concept_names = select_concepts([c for c in world.labels.columns if c != io.ID_COLUMN], spec["concept_prefixes"])
    result = train_probe_with_holdout(embed_images(clip, world.images),
                                      world.labels[concept_names].to_numpy(dtype=np.float32),
                                      ProbeTraining.from_params(spec["training"]),
                                      source=_model_name(job.output.checkpoint))
    card = {"architecture": "linear_probe", "features": spec["features"], "concept_names": concept_names,
            **result.card()}
    print(json.dumps(card, indent=2))
    check_beats_baseline(_model_name(job.output.checkpoint), CONCEPT_ACCURACY, result.holdout_accuracy,
                         result.chance_accuracy)
    save_probe(job.output.checkpoint, result.probe, concept_names)
    io.write_json(job.output.card, card)
