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

PROBE_HOLDOUT_FRACTION = 0.1  # last part of the training split held out to report the probe's concept accuracy


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
    from sklearn.metrics import roc_auc_score

    from neuroneval.concepts.pseudo import cosine_similarities, fit_calibration, pseudo_labels
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
    labels = world.labels[concept_names].to_numpy(dtype=np.float32)
    auc = {name: float(roc_auc_score(labels[:, column], values[:, column]))
           for column, name in enumerate(concept_names) if 0 < labels[:, column].sum() < len(labels)}
    by_kind = pd.Series(auc).groupby(lambda name: name.split(":", 1)[0]).mean()
    io.write_json(job.output.summary, {
        "source": source, "a": fit.a, "b": fit.b, "calibration_bce": round(fit.bce, 6),
        "mean_auc": round(float(np.mean(list(auc.values()))), 6),
        "mean_auc_by_kind": {kind: round(float(value), 6) for kind, value in by_kind.items()},
        "auc": {name: round(value, 6) for name, value in auc.items()},
    })


def train_probe(job: StepIO) -> None:
    """Linear probe ``models.probes.<name>``: one logistic unit per attribute concept on frozen CLIP embeddings.

    Trained on the first 90 % of the train split, with the concept accuracy (threshold 0.5) on the last 10 %
    recorded in the card next to the accuracy of always predicting each concept's majority value.
    """
    import torch

    from neuroneval.models.clip import embed_images, load_clip
    from neuroneval.models.probe import probe_probabilities, train_linear_probe
    from neuroneval.settings import select_concepts
    from neuroneval.worlds import load_vision_world

    clip, _, _ = load_clip(job.input.features)
    world = load_vision_world(Path(job.input.world))
    spec = job.params.spec
    training = spec["training"]
    concept_names = select_concepts([c for c in world.labels.columns if c != io.ID_COLUMN], spec["concept_prefixes"])
    features = embed_images(clip, world.images)
    targets = world.labels[concept_names].to_numpy(dtype=np.float32)
    n_train = len(features) - max(1, round(PROBE_HOLDOUT_FRACTION * len(features)))
    probe = train_linear_probe(features[:n_train], targets[:n_train], epochs=training["epochs"],
                               batch_size=training["batch_size"], learning_rate=training["learning_rate"],
                               weight_decay=training["weight_decay"], seed=training["seed"])
    held_out = targets[n_train:]
    predicted = probe_probabilities(probe, features[n_train:]) >= 0.5
    majority = targets[:n_train].mean(axis=0) >= 0.5
    card = {"architecture": "linear_probe", "features": spec["features"], "concept_names": concept_names,
            "holdout_accuracy": round(float(np.mean(predicted == (held_out >= 0.5))), 6),
            "chance_accuracy": round(float(np.mean(majority[None, :] == (held_out >= 0.5))), 6),
            "holdout_inputs": len(held_out), "train_inputs": n_train}
    print(json.dumps(card, indent=2))
    with io.atomic_path(Path(job.output.checkpoint)) as temporary:
        torch.save({"state_dict": probe.state_dict(), "concept_names": concept_names,
                    "in_features": probe.in_features}, temporary)
    io.write_json(job.output.card, card)


def probe_activations(job: StepIO) -> None:
    """Probe units on a world split: σ(w_t·f(x) + b_t) per concept ``t``, whose known concept is ``t``."""
    import torch

    from neuroneval.activations import activation_frame
    from neuroneval.models.clip import embed_images, load_clip
    from neuroneval.models.probe import probe_probabilities
    from neuroneval.worlds import load_vision_world

    clip, _, _ = load_clip(job.input.features)
    payload = torch.load(job.input.checkpoint, map_location="cpu", weights_only=True)
    concept_names = list(payload["concept_names"])
    probe = torch.nn.Linear(payload["in_features"], len(concept_names))
    probe.load_state_dict(payload["state_dict"])
    world = load_vision_world(Path(job.input.world))
    values = probe_probabilities(probe, embed_images(clip, world.images))
    frame = activation_frame(values, concept_names, world.labels[io.ID_COLUMN].to_numpy())
    metadata = {"model": job.wildcards.probe, "layer": "concepts", "dataset": f"vision_{job.wildcards.split}",
                "pooling": "none", "dtype": "float32", "unit_concepts": {name: [name] for name in concept_names}}
    io.write_activation_table(job.output[0], frame, metadata=metadata)
