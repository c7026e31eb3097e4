"""Workflow steps of the paper profile: user-supplied datasets and checkpoints → activation and concept tables.

One function per rule of ``workflow/rules/external.smk`` (same name), each taking a
:class:`~neuroneval.pipeline.runner.StepIO`. The tables land at the paths of docs/design.md §2.1, exactly where the
embedded rules put theirs, so ``meta.smk`` reads them unchanged. Params arrive resolved
(:mod:`neuroneval.external.config`): ``dataset`` and ``model`` specs with absolute paths, and ``runtime``
(``device``, ``batch_size``, ``num_workers``). The science lives in :mod:`neuroneval.external`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def external_image_dataset(job: StepIO) -> None:
    """The input table (``input_id, path, label``) and label concept table of an image dataset."""
    from neuroneval.external.image_datasets import build_image_dataset

    dataset = build_image_dataset(job.params.dataset, name=job.wildcards.image_dataset)
    io.write_csv(job.output.inputs, dataset.inputs)
    io.write_concept_table(job.output.concepts, dataset.concepts, metadata=dataset.metadata)
    positives = dataset.concepts.drop(columns=io.ID_COLUMN).sum(axis=0)
    print(json.dumps({"dataset": job.wildcards.image_dataset, "images": len(dataset.inputs),
                      "concepts": len(positives), "fewest_positives": int(positives.min())}))


def external_vision_activations(job: StepIO) -> None:
    """One layer of a torchvision/timm classifier on an image dataset (see :mod:`neuroneval.external.vision_units`)."""
    from neuroneval.activations import activation_frame
    from neuroneval.external.config import loader_spec
    from neuroneval.external.image_datasets import image_paths
    from neuroneval.external.images import image_batches, resolve_device
    from neuroneval.external.vision_units import classifier_units
    from neuroneval.models.loaders import load_model

    inputs = pd.read_csv(job.input.inputs)
    _, concept_metadata = io.read_concept_table(job.input.concepts)
    spec, runtime = job.params.model, job.params.runtime
    device = resolve_device(runtime["device"])
    loaded = load_model(loader_spec(spec))
    loaded.module.to(device)
    batches = image_batches(image_paths(inputs, job.params.dataset), loaded.preprocess,
                            batch_size=int(runtime["batch_size"]), num_workers=int(runtime["num_workers"]))
    layer = job.wildcards.layer
    units = classifier_units(loaded.module, batches, layer, concept_metadata=concept_metadata,
                             concept_prefixes=spec.get("concept_prefixes", ["attr:"]), pooling=job.params.pooling,
                             device=device, desc=f"{job.wildcards.vision_model} {layer}")
    frame = activation_frame(units.values, units.unit_names, inputs[io.ID_COLUMN].to_numpy())
    metadata = {"model": job.wildcards.vision_model, "layer": layer, "dataset": job.wildcards.image_dataset,
                "pooling": units.pooling, "dtype": "float32", "unit_concepts": units.unit_concepts,
                "family": spec["family"], "checkpoint": str(loaded.source)}
    io.write_activation_table(job.output[0], frame, metadata=metadata)


def external_image_embeddings(job: StepIO) -> None:
    """L2-normalised image embeddings of an open_clip model on an image dataset (``input_id``, ``embeddings``)."""
    from neuroneval.external.config import loader_spec
    from neuroneval.external.image_datasets import image_paths
    from neuroneval.external.images import image_batches, image_embeddings, resolve_device
    from neuroneval.models.loaders import load_model

    inputs = pd.read_csv(job.input.inputs)
    runtime = job.params.runtime
    device = resolve_device(runtime["device"])
    loaded = load_model(loader_spec(job.params.model))
    loaded.module.to(device)
    batches = image_batches(image_paths(inputs, job.params.dataset), loaded.preprocess,
                            batch_size=int(runtime["batch_size"]), num_workers=int(runtime["num_workers"]))
    embeddings = image_embeddings(loaded.module, batches, device=device, desc=f"{job.wildcards.embedder} images")
    _write_embeddings(job.output[0], inputs[io.ID_COLUMN].to_numpy(), embeddings)


def external_pseudo_concepts(job: StepIO) -> None:
    """Concept table ``pseudo:<embedder>``: σ(a·(cos − b)) for every label concept (see ``external.pseudo``)."""
    from neuroneval.concepts.pseudo import (
        cosine_similarities,
        embed_texts,
        fit_calibration,
        pseudo_label_quality,
        pseudo_labels,
    )
    from neuroneval.external.config import loader_spec
    from neuroneval.external.images import resolve_device
    from neuroneval.external.pseudo import calibration_method, concept_prompts, model_calibration
    from neuroneval.models.loaders import load_model

    embedder = job.wildcards.embedder
    labels, label_metadata = io.read_concept_table(job.input.concepts)
    input_ids, image_embeddings = _read_embeddings(job.input.embeddings)
    io.check_matching_ids(labels, pd.DataFrame({io.ID_COLUMN: input_ids}), first_source=str(job.input.concepts),
                          second_source=str(job.input.embeddings))
    spec = job.params.pseudo
    calibration = calibration_method(spec, key=f"external.pseudo_labels.{embedder}.calibration")
    concept_names = list(label_metadata["concepts"])
    prompts = concept_prompts(concept_names, label_metadata.get("display_names", {}), spec.get("templates"))
    loaded = load_model(loader_spec(job.params.model))
    loaded.module.to(resolve_device(job.params.runtime["device"]))
    text_embeddings = embed_texts(loaded.module, loaded.tokenizer, prompts,
                                  batch_size=int(job.params.runtime["batch_size"]))
    fit_bce = None
    if calibration["method"] == "fixed":
        a, b = float(calibration["a"]), float(calibration["b"])
    elif calibration["method"] == "model":
        a, b = model_calibration(loaded.module)
    else:
        calibration_labels, _ = io.read_concept_table(job.input.calibration_concepts)
        _, calibration_embeddings = _read_embeddings(job.input.calibration_embeddings)
        missing = [name for name in concept_names if name not in calibration_labels.columns]
        if missing:
            raise ValueError(f"the calibration dataset {calibration['dataset']!r} lacks concepts {missing[:5]}")
        fit = fit_calibration(cosine_similarities(calibration_embeddings, text_embeddings),
                              calibration_labels[concept_names].to_numpy(dtype=np.float32),
                              job.params.grids["a_grid"], job.params.grids["b_grid"])
        a, b, fit_bce = fit.a, fit.b, fit.bce
    values = pseudo_labels(image_embeddings, text_embeddings, a, b)
    frame = pd.DataFrame({io.ID_COLUMN: input_ids, **{name: values[:, k] for k, name in enumerate(concept_names)}})
    source = f"pseudo:{embedder}"
    metadata = {"source": source, "dataset": job.wildcards.image_dataset, "concepts": concept_names,
                "hierarchy": label_metadata.get("hierarchy", {}), "classes": label_metadata.get("classes", []),
                "a": a, "b": b, "calibration": calibration, "calibration_bce": fit_bce,
                "prompts": dict(zip(concept_names, prompts, strict=True))}
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    quality = pseudo_label_quality(labels[concept_names].to_numpy(dtype=np.float32), values, concept_names)
    io.write_json(job.output.summary, {"source": source, "a": a, "b": b, "calibration": calibration["method"],
                                       **quality})


def external_train_probe(job: StepIO) -> None:
    """A linear probe (one logistic unit per concept) on an open_clip model's embeddings of its train dataset."""
    from neuroneval.models.probe import HOLDOUT_FRACTION, ProbeTraining, save_probe, train_probe_with_holdout
    from neuroneval.settings import select_concepts

    spec = job.params.probe
    labels, _ = io.read_concept_table(job.input.concepts)
    input_ids, features = _read_embeddings(job.input.embeddings)
    io.check_matching_ids(labels, pd.DataFrame({io.ID_COLUMN: input_ids}), first_source=str(job.input.concepts),
                          second_source=str(job.input.embeddings))
    concept_names = select_concepts([c for c in labels.columns if c != io.ID_COLUMN], spec["concept_prefixes"])
    result = train_probe_with_holdout(features, labels[concept_names].to_numpy(dtype=np.float32),
                                      ProbeTraining.from_params(spec["training"]),
                                      holdout_fraction=float(spec.get("holdout_fraction", HOLDOUT_FRACTION)),
                                      source=f"external.probes.{job.wildcards.external_probe}")
    card = {"architecture": "linear_probe", "features": spec["features"], "train_dataset": spec["train_dataset"],
            "concept_names": concept_names, **result.card()}
    print(json.dumps({key: value for key, value in card.items() if key != "concept_names"}, indent=2))
    save_probe(job.output.checkpoint, result.probe, concept_names)
    io.write_json(job.output.card, card)


def external_probe_activations(job: StepIO) -> None:
    """Probe units σ(w_t·f(x) + b_t) on an image dataset; unit ``t``'s known concept is ``t``."""
    from neuroneval.activations import activation_frame
    from neuroneval.models.probe import load_probe, probe_probabilities

    probe, concept_names = load_probe(job.input.checkpoint)
    input_ids, features = _read_embeddings(job.input.embeddings)
    frame = activation_frame(probe_probabilities(probe, features), concept_names, input_ids)
    metadata = {"model": job.wildcards.external_probe, "layer": "concepts", "dataset": job.wildcards.image_dataset,
                "pooling": "none", "dtype": "float32", "unit_concepts": {name: [name] for name in concept_names}}
    io.write_activation_table(job.output[0], frame, metadata=metadata)


def external_text_dataset(job: StepIO) -> None:
    """Token stream of a text corpus (the tokenizer of ``tokenizer_model``) and its next-token concept table."""
    from neuroneval.activations.lm import next_token_concepts
    from neuroneval.external.config import loader_spec
    from neuroneval.external.text_datasets import read_documents, special_token_ids, token_stream, tokenizer_vocabulary
    from neuroneval.models.loaders import load_model

    dataset, extraction = job.params.dataset, job.params.extraction
    loaded = load_model(loader_spec(job.params.tokenizer_model))
    tokenizer = loaded.tokenizer
    vocabulary = tokenizer_vocabulary(tokenizer, loaded.module.config.vocab_size)
    exclude = special_token_ids(tokenizer)
    tokens = token_stream(read_documents(dataset["path"]), tokenizer, max_tokens=int(dataset["max_tokens"]))
    frame, metadata, _, _ = next_token_concepts(tokens, vocabulary, n_units=extraction["n_units"],
                                                max_positions=extraction["max_positions"], seed=extraction["seed"],
                                                dataset=job.wildcards.text_dataset, exclude=exclude)
    with io.atomic_path(Path(job.output.tokens)) as temporary, open(temporary, "wb") as handle:
        np.save(handle, tokens)
    io.write_json(job.output.vocabulary, {"tokenizer_model": dataset["tokenizer_model"], "exclude": exclude,
                                          "vocabulary": vocabulary})
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    print(json.dumps({"dataset": job.wildcards.text_dataset, "tokens": int(tokens.size),
                      "positions": len(frame), "units": len(metadata["concepts"])}))


def external_lm_activations(job: StepIO) -> None:
    """Next-token units P(next token = w) of a transformers LM on a text dataset's token stream."""
    from neuroneval.activations.lm import next_token_tables
    from neuroneval.external.config import loader_spec
    from neuroneval.external.images import resolve_device
    from neuroneval.external.text_datasets import tokenizer_vocabulary
    from neuroneval.models.loaders import load_model

    spec, extraction = job.params.model, job.params.extraction
    stream = json.loads(Path(job.input.vocabulary).read_text())
    tokens = np.load(job.input.tokens)
    loaded = load_model(loader_spec(spec))
    vocabulary = tokenizer_vocabulary(loaded.tokenizer, loaded.module.config.vocab_size)
    if vocabulary != stream["vocabulary"]:
        raise ValueError(f"the tokenizer of external.models.{job.wildcards.external_lm} differs from the one that cut "
                         f"{job.wildcards.text_dataset} (external.models.{stream['tokenizer_model']}): next-token "
                         "units need the same vocabulary")
    device = resolve_device(job.params.runtime["device"])
    loaded.module.to(device)
    context_length = int(spec.get("context_length", loaded.module.config.n_positions))
    tables = next_token_tables(loaded.module, tokens, vocabulary, n_units=extraction["n_units"],
                               context_length=context_length, max_positions=extraction["max_positions"],
                               seed=extraction["seed"], batch_size=extraction["batch_size"],
                               model_name=job.wildcards.external_lm, dataset=job.wildcards.text_dataset,
                               progress=True, exclude=stream["exclude"])
    io.write_activation_table(job.output[0], tables.activations, metadata=tables.activation_metadata)


def _write_embeddings(path: str, input_ids: np.ndarray, embeddings: np.ndarray) -> None:
    with io.atomic_path(Path(path)) as temporary, open(temporary, "wb") as handle:
        np.savez(handle, input_id=np.asarray(input_ids, dtype=np.int64), embeddings=embeddings.astype(np.float32))


def _read_embeddings(path: str) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path) as payload:
        return payload["input_id"], payload["embeddings"]
