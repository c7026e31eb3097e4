"""Workflow steps of the tables stage (``probing_tables.smk``): the activation and concept tables of the probing
sets, and each setting's ground truth — the inputs every evaluation reads (docs/design.md §2).

One function per Snakemake rule (same name): units of the vision classifiers, next-token units of the LMs and
their ideal units, probe units; label, next-token and pseudo-label concepts; ``setting_truth``. The science
lives in :mod:`neuroneval.activations`, :mod:`neuroneval.concepts` and :mod:`neuroneval.settings`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def vision_classifier_activations(job: StepIO) -> None:
    """Activation table of one layer of a world classifier (``{model}``) on a world split.

    ``softmax``/``logits``: one unit per class, known concept = its class. ``concepts`` (CBMs): one sigmoid unit per
    bottleneck concept, known concept = that concept. ``superclass``: one unit per parent
    concept, the sum of its member classes' probabilities (000 App. F), known concept = the parent. Any other
    layer name is a module of the model (``block3``, ``blocks.2``), pooled over space or tokens, no known concepts.
    """
    from neuroneval.activations import activation_frame, record_activations, superclass_units
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor
    from neuroneval.worlds import load_vision_world

    model, card = load_checkpoint(job.input.checkpoint)
    world = load_vision_world(Path(job.input.world))
    layer = job.wildcards.layer
    extraction = job.params.extraction
    batch_size = int(extraction["batch_size"])
    batches = [images_to_tensor(world.images[start : start + batch_size])
               for start in range(0, len(world.images), batch_size)]
    recorded_layer = {"superclass": "softmax", "concepts": "concept_probabilities"}.get(layer, layer)
    values = record_activations(model, batches, [recorded_layer], pooling=extraction["pooling"])[recorded_layer]
    class_names = card["class_names"]
    if layer in ("softmax", "logits"):
        unit_names = [str(k) for k in range(values.shape[1])]
        unit_concepts = {str(k): [name] for k, name in enumerate(class_names)}
    elif layer == "concepts":
        unit_names = list(card["concept_names"])
        unit_concepts = {name: [name] for name in unit_names}
    elif layer == "superclass":
        values, unit_names = superclass_units(values, class_names, world.hierarchy)
        unit_concepts = {name: [name] for name in unit_names}
    else:
        unit_names = [str(k) for k in range(values.shape[1])]
        unit_concepts = {}
    input_ids = world.labels[io.ID_COLUMN].to_numpy()
    frame = activation_frame(values, unit_names, input_ids)
    metadata = {
        "model": job.wildcards.model,
        "layer": layer,
        "dataset": _dataset(job),
        "pooling": "none" if layer in ("softmax", "logits", "superclass", "concepts") else extraction["pooling"],
        "dtype": "float32",
        "unit_concepts": unit_concepts,
    }
    io.write_activation_table(job.output[0], frame, metadata=metadata)


def vision_label_concepts(job: StepIO) -> None:
    """The world's ground-truth labels as a concept table (``source = labels``, with the hierarchy)."""
    from neuroneval.worlds import load_vision_world

    world = load_vision_world(Path(job.input.world))
    concept_names = [column for column in world.labels.columns if column != io.ID_COLUMN]
    metadata = {"source": "labels", "dataset": _dataset(job), "concepts": concept_names,
                "hierarchy": world.hierarchy}
    io.write_concept_table(job.output[0], world.labels, metadata=metadata)


def _dataset(job: StepIO) -> str:
    """The dataset name of a world split's tables: ``params.dataset`` where the rule sets it (``digits_probe``),
    else ``vision_<split>``."""
    return getattr(job.params, "dataset", None) or f"vision_{job.wildcards.split}"


def vision_pseudo_concepts(job: StepIO) -> None:
    """Pseudo-label concept table ``pseudo:<clip>``: c_t(x) = σ(a_t·(cos(f(x), g(prompt_t)) − b_t)).

    Every label concept gets the prompt :func:`~neuroneval.worlds.vision_concepts.concept_prompt`; ``a_t`` and
    ``b_t`` minimise the BCE against the labels of the calibration split (``pseudo_labels.calibration_split``,
    never the probed split), per concept or shared (``pseudo_labels.scope``). The summary JSON records them, the
    BCE, and each concept's ROC AUC against the probed split's labels, with the share of inputs whose
    pseudo-label is ≥ 0.5 beside the labels' share (how good the pseudo-labels are; the paper's SigLIP labels
    are judged the same way).
    """
    from neuroneval.concepts.pseudo import (
        PseudoLabelOptions,
        cosine_similarities,
        fit_calibrations,
        pseudo_label_quality,
        pseudo_labels,
    )
    from neuroneval.models.clip import embed_images, embed_texts, load_clip
    from neuroneval.worlds import load_vision_world
    from neuroneval.worlds.vision_concepts import concept_prompt

    model, tokenizer, _ = load_clip(job.input.checkpoint)
    world = load_vision_world(Path(job.input.world))
    calibration = load_vision_world(Path(job.input.calibration))
    options = PseudoLabelOptions.from_params(job.params.pseudo)
    concept_names = [name for name in world.labels.columns if name != io.ID_COLUMN]
    text_embeddings = embed_texts(model, tokenizer, [concept_prompt(name) for name in concept_names])
    calibration_cosines = cosine_similarities(embed_images(model, calibration.images), text_embeddings)
    fit = fit_calibrations(calibration_cosines, calibration.labels[concept_names].to_numpy(dtype=np.float32),
                           options.a_grid, options.b_grid, scope=options.scope)
    values = pseudo_labels(embed_images(model, world.images), text_embeddings, fit.a, fit.b)
    frame = pd.DataFrame({io.ID_COLUMN: world.labels[io.ID_COLUMN].to_numpy(),
                          **{name: values[:, column] for column, name in enumerate(concept_names)}})
    source = f"pseudo:{job.wildcards.clip}"
    slopes = dict(zip(concept_names, fit.a.tolist(), strict=True))
    offsets = dict(zip(concept_names, fit.b.tolist(), strict=True))
    metadata = {"source": source, "dataset": f"vision_{job.wildcards.split}", "concepts": concept_names,
                "hierarchy": world.hierarchy, "a": slopes, "b": offsets, "calibration_scope": options.scope,
                "calibration_bce": float(fit.bce.mean()), "calibration_split": options.calibration_split,
                "prompts": {name: concept_prompt(name) for name in concept_names}}
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    quality = pseudo_label_quality(world.labels[concept_names].to_numpy(dtype=np.float32), values, concept_names)
    io.write_json(job.output.summary, {"source": source, "calibration_scope": options.scope, "a": slopes,
                                       "b": offsets, "calibration_bce": round(float(fit.bce.mean()), 6),
                                       **quality})


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


def setting_truth(job: StepIO) -> None:
    """Ground truth ``unit,concept`` of a setting, and a JSON summary of its size and concept balance."""
    from neuroneval.concepts.threshold import concept_positive
    from neuroneval.settings import load_setting, setting_truth_pairs, truth_frame, truth_method

    setting = job.params.setting
    data = load_setting(
        [Path(path) for path in job.input.activations],
        Path(job.input.concepts),
        concept_prefixes=setting["concepts"].get("prefixes", []),
    )
    known = setting_truth_pairs(setting, data)
    truth = truth_frame(known)
    io.write_csv(job.output.truth, truth)
    positive_rates = concept_positive(data.concepts).mean(axis=0)
    summary = {
        "setting": job.wildcards.setting,
        "inputs": int(data.activations.shape[0]),
        "units": len(data.unit_names),
        "known_units": len(known),
        "truth_method": truth_method(setting)["method"],
        "concepts": len(data.concept_names),
        "concept_source": setting["concepts"]["source"],
        "model": "+".join(sorted({unit["model"] for unit in setting["units"]})),
        "positive_rate_min": float(positive_rates.min()),
        "positive_rate_median": float(np.median(positive_rates)),
        "positive_rate_max": float(positive_rates.max()),
    }
    io.write_json(job.output.summary, summary)
