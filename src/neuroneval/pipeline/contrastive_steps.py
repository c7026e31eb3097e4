"""Workflow steps of the contrastive image–text model: training, pseudo-labels, linear probe (000 App. F).

One function per Snakemake rule (same name), each taking a :class:`~neuroneval.pipeline.runner.StepIO`. The
science lives in :mod:`neuroneval.models.clip`, :mod:`neuroneval.concepts.pseudo` and
:mod:`neuroneval.models.probe`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def train_contrastive_model(job: StepIO) -> None:
    """Train the CLIP/SigLIP-style model ``models.contrastive.<name>`` on the train split's image–caption pairs."""
    from neuroneval.models.clip import save_clip, train_clip
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    training = spec["training"]
    model, tokenizer, report = train_clip(world.images, world.captions, spec["config"], epochs=training["epochs"],
                                          batch_size=training["batch_size"], learning_rate=training["learning_rate"],
                                          weight_decay=training["weight_decay"], seed=training["seed"])
    print(json.dumps(report, indent=2))
    save_clip(model, tokenizer, job.output.checkpoint, config=spec["config"], report=report)


def vision_pseudo_concepts(job: StepIO) -> None:
    """Pseudo-label concept table ``pseudo:<clip>``: c_t(x) = σ(a·(cos(f(x), g(prompt_t)) − b)).

    Every label concept gets the prompt :func:`~neuroneval.worlds.vision_concepts.concept_prompt`; ``a`` and ``b``
    minimise the BCE against the labels of the calibration split (``pseudo_labels.calibration_split``, never the
    probed split). The summary JSON records a, b, the BCE and each concept's ROC AUC against the probed split's
    labels (how good the pseudo-labels are; the paper's SigLIP labels are judged the same way).
    """
    from neuroneval.concepts.pseudo import cosine_similarities, fit_calibration, pseudo_label_quality, pseudo_labels
    from neuroneval.models.clip import embed_images, embed_texts, load_clip
    from neuroneval.worlds import load_vision_world
    from neuroneval.worlds.vision_concepts import concept_prompt

    model, tokenizer, _ = load_clip(job.input.checkpoint)
    world = load_vision_world(Path(job.input.world))
    calibration = load_vision_world(Path(job.input.calibration))
    knobs = job.params.pseudo
    concept_names = [name for name in world.labels.columns if name != io.ID_COLUMN]
    text_embeddings = embed_texts(model, tokenizer, [concept_prompt(name) for name in concept_names])
    calibration_cosines = cosine_similarities(embed_images(model, calibration.images), text_embeddings)
    fit = fit_calibration(calibration_cosines, calibration.labels[concept_names].to_numpy(dtype=np.float32),
                          knobs["a_grid"], knobs["b_grid"])
    values = pseudo_labels(embed_images(model, world.images), text_embeddings, fit.a, fit.b)
    frame = pd.DataFrame({io.ID_COLUMN: world.labels[io.ID_COLUMN].to_numpy(),
                          **{name: values[:, column] for column, name in enumerate(concept_names)}})
    source = f"pseudo:{job.wildcards.clip}"
    metadata = {"source": source, "dataset": f"vision_{job.wildcards.split}", "concepts": concept_names,
                "hierarchy": world.hierarchy, "a": fit.a, "b": fit.b, "calibration_bce": fit.bce,
                "calibration_split": knobs["calibration_split"],
                "prompts": {name: concept_prompt(name) for name in concept_names}}
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    quality = pseudo_label_quality(world.labels[concept_names].to_numpy(dtype=np.float32), values, concept_names)
    io.write_json(job.output.summary, {"source": source, "a": fit.a, "b": fit.b,
                                       "calibration_bce": round(fit.bce, 6), **quality})


def train_probe(job: StepIO) -> None:
    """Linear probe ``models.probes.<name>``: one logistic unit per attribute concept on frozen CLIP embeddings,
    trained and measured by :func:`neuroneval.models.probe.train_probe_with_holdout` (last 10 % held out)."""
    from neuroneval.models.clip import embed_images, load_clip
    from neuroneval.models.probe import ProbeTraining, save_probe, train_probe_with_holdout
    from neuroneval.settings import select_concepts
    from neuroneval.worlds import load_vision_world

    clip, _, _ = load_clip(job.input.features)
    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    concept_names = select_concepts([c for c in world.labels.columns if c != io.ID_COLUMN], spec["concept_prefixes"])
    result = train_probe_with_holdout(embed_images(clip, world.images),
                                      world.labels[concept_names].to_numpy(dtype=np.float32),
                                      ProbeTraining.from_params(spec["training"]),
                                      source=f"models.probes.{job.wildcards.probe}")
    card = {"architecture": "linear_probe", "features": spec["features"], "concept_names": concept_names,
            **result.card()}
    print(json.dumps(card, indent=2))
    save_probe(job.output.checkpoint, result.probe, concept_names)
    io.write_json(job.output.card, card)


def probe_activations(job: StepIO) -> None:
    """Probe units on a world split: σ(w_t·f(x) + b_t) per concept ``t``, whose known concept is ``t``."""
    from neuroneval.activations import activation_frame
    from neuroneval.models.clip import embed_images, load_clip
    from neuroneval.models.probe import load_probe, probe_probabilities
    from neuroneval.worlds import load_vision_world

    clip, _, _ = load_clip(job.input.features)
    probe, concept_names = load_probe(job.input.checkpoint)
    world = load_vision_world(Path(job.input.world))
    values = probe_probabilities(probe, embed_images(clip, world.images))
    frame = activation_frame(values, concept_names, world.labels[io.ID_COLUMN].to_numpy())
    metadata = {"model": job.wildcards.probe, "layer": "concepts", "dataset": f"vision_{job.wildcards.split}",
                "pooling": "none", "dtype": "float32", "unit_concepts": {name: [name] for name in concept_names}}
    io.write_activation_table(job.output[0], frame, metadata=metadata)
