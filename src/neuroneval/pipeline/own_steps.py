"""Workflow steps of your own setting (``workflow/rules/own.smk``): a user's tables imported, a user's model recorded.

One function per rule, each taking a :class:`~neuroneval.pipeline.runner.StepIO`; the library code is
:mod:`neuroneval.external.own`. Params arrive resolved (:mod:`neuroneval.external.config`): absolute paths.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def external_array_dataset(job: StepIO) -> None:
    """The label concept table (``class:<name>``, one row per array row) of a ``kind: array`` dataset."""
    from neuroneval.external.own import array_concept_table

    dataset = job.params.dataset
    frame, metadata = array_concept_table(dataset["images"], dataset["labels"], dataset.get("class_names_file"),
                                          dataset=job.wildcards.array_dataset)
    io.write_concept_table(job.output.concepts, frame, metadata=metadata)
    print(json.dumps({"dataset": job.wildcards.array_dataset, "inputs": len(frame),
                      "classes": len(metadata["classes"])}))


def external_images_dataset(job: StepIO) -> None:
    """A ``kind: images`` dataset: the preprocessed array the model reads, the ``input_id,file`` table its images
    are shown from, and the label concept table (:func:`neuroneval.external.own_images.build_images_dataset`)."""
    import numpy as np

    from neuroneval.external.own import class_concept_frame
    from neuroneval.external.own_images import build_images_dataset

    dataset = job.params.dataset
    images, listing, classes = build_images_dataset(dataset["folder"], dataset.get("labels"),
                                                    dataset.get("preprocess"))
    frame = class_concept_frame(listing["label"].to_numpy(), classes)
    concepts = [column for column in frame.columns if column != "input_id"]
    with io.atomic_path(Path(job.output.images)) as temporary, open(temporary, "wb") as handle:
        np.save(handle, images)
    io.write_csv(job.output.inputs, listing[["input_id", "file"]])
    io.write_concept_table(job.output.concepts, frame, metadata={
        "source": "labels", "dataset": job.wildcards.images_dataset, "concepts": concepts, "classes": classes,
        "folder": dataset["folder"]})
    print(json.dumps({"dataset": job.wildcards.images_dataset, "inputs": len(listing), "classes": len(classes),
                      "input_shape": list(images.shape[1:])}))


def external_custom_activations(job: StepIO) -> None:
    """One layer of a ``family: custom`` model on an array or images dataset, recorded by ``record_files``."""
    from neuroneval.external.images import resolve_device
    from neuroneval.external.own import record_custom_layer

    _, concept_metadata = io.read_concept_table(job.input.concepts)
    options = {**job.params.record, "device": str(resolve_device(job.params.runtime["device"])),
               "batch_size": int(job.params.runtime["batch_size"])}
    output = Path(job.output[0])
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent, prefix=".record-") as scratch:
        frame, metadata = record_custom_layer(job.params.model, job.params.dataset["images"], job.wildcards.layer,
                                              scratch, class_names=list(concept_metadata["classes"]),
                                              options=options)
    metadata.update({"model": job.wildcards.custom_model, "dataset": job.wildcards.recorded_dataset,
                     "layer": job.wildcards.layer, "recorded": {"model": metadata.get("model"),
                                                                "dataset": metadata.get("dataset")}})
    io.write_activation_table(output, frame, metadata=metadata)


def external_tables_activations(job: StepIO) -> None:
    """A user's activation table, validated, with the dataset's ``known_concepts`` in its ``unit_concepts``."""
    from neuroneval.external.own import import_activation_table

    frame, metadata = import_activation_table(job.input.table, job.params.known_concepts)
    metadata.update({"model": job.wildcards.tables_model, "layer": job.wildcards.layer,
                     "dataset": job.wildcards.tables_dataset, "imported_from": str(job.input.table)})
    metadata.setdefault("pooling", "user")
    metadata.setdefault("dtype", "float32")
    io.write_activation_table(job.output[0], frame, metadata=metadata)
    print(json.dumps({"table": str(job.input.table), "units": frame.shape[1] - 1, "inputs": len(frame),
                      "units_with_known_concepts": len(metadata["unit_concepts"])}))


def external_tables_concepts(job: StepIO) -> None:
    """A user's concept table, validated, at the workflow's path."""
    frame, metadata = io.read_concept_table(job.input.table)
    concepts = [column for column in frame.columns if column != io.ID_COLUMN]
    metadata.update({"dataset": job.wildcards.tables_dataset, "imported_from": str(job.input.table)})
    metadata.setdefault("source", job.wildcards.tables_source.replace("-", ":", 1))
    metadata.setdefault("concepts", concepts)
    io.write_concept_table(job.output[0], frame, metadata=metadata)


def cosy_custom_units(job: StepIO) -> None:
    """Your own model (a CoSy setting's ``family: custom`` model) on one generator's images, through its declared
    ``preprocess`` (:func:`neuroneval.cosy.activations.custom_model_on_images`): one row per manifest row,
    ``input_id`` its position, for ``cosy_evaluate``."""
    import pandas as pd

    from neuroneval.cosy.activations import custom_model_on_images
    from neuroneval.cosy.synthesis import load_images, read_manifest

    setting = job.wildcards.cosy_custom_setting
    manifest = read_manifest(job.input.manifest)
    images = load_images(Path(job.input.manifest).parent, manifest["path"].tolist())
    run = {"model_name": job.params.model_name, "model": job.params.model, "preprocess": job.params.preprocess,
           "array_images": job.params.array_images}
    values, unit_names = custom_model_on_images(images, run, layer=job.params.layer, pooling=job.params.pooling,
                                                runtime=job.params.runtime)
    frame = pd.DataFrame({io.ID_COLUMN: range(len(images)), **dict(zip(unit_names, values.T, strict=True))})
    io.write_activation_table(job.output[0], frame, metadata={
        "model": job.params.model_name, "layer": job.params.layer, "dataset": f"cosy/{job.wildcards.generator}",
        "pooling": job.params.pooling, "dtype": "float32", "unit_concepts": {}, "setting": setting,
        "manifest": str(job.input.manifest)})
    print(json.dumps({"setting": setting, "generator": job.wildcards.generator,
                      "images": len(images), "units": len(unit_names)}))
