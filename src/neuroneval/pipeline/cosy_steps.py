"""Workflow steps of CoSy (paper 002) on the embedded settings, one function per rule of ``cosy.smk``.

The rules read the ``cosy:`` block of params.yaml::

    cosy_explanations      truth tables of cosy.settings        -> data/cosy/explanations.csv (true + random)
    cosy_train_embedded    vision train world + tiny CLIP       -> data/cosy_models/diffusion/ (embedded generator)
    cosy_generate          explanations (+ world / checkpoint)  -> data/cosy/<generator>/manifest.parquet + PNGs
    cosy_evaluate          images + unit models + probing set   -> results/cosy/generators/<generator>/*.csv
    cosy_tables            every generator's tables             -> results/cosy/{scores,table2,table8,...}.csv/.png
    cosy_user              a user's explanation file (cosy.user_explanations.<name>) -> results/cosy/user/<name>.csv

Science lives in :mod:`neuroneval.cosy`; these functions only move data between files and library calls. Each
parses its params once into typed options (:mod:`neuroneval.cosy.options`) and hands those to the library.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

#: Where the embedded generator's checkpoint lives (outside data/models, which the DVC ``models`` stage owns).
EMBEDDED_CHECKPOINT = "data/cosy_models/diffusion"
WORLD_CLASSIFIER_LAYERS = ("softmax", "logits", "superclass", "concepts")


def cosy_setting_units(settings: Mapping[str, Any], names: Sequence[str], external_models: Sequence[str] = (),
                       custom_models: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The files of each CoSy setting: ``model``, ``layer``, ``dataset``, ``activations``, ``concepts``, ``truth``,
    ``kind`` and ``checkpoint``.

    A CoSy setting probes one activation table. ``kind`` is ``world`` for a classifier trained in the DAG on the
    vision world (``checkpoint`` = ``data/models/<model>.pt``, dataset ``vision_*``), ``external`` for a model
    of ``external.models`` (the paper profile; ``checkpoint`` is None, the model is loaded from its spec), and
    ``custom`` for one of them that is your own (``family: custom``, run through its declared ``preprocess``). The
    control images are always the setting's dataset. Raises ``ValueError`` naming the setting otherwise.
    """
    from neuroneval.settings import activation_path, concept_path, truth_path

    files = {}
    for name in names:
        if name not in settings:
            raise ValueError(f"cosy.settings names undefined setting {name!r}; defined: {sorted(settings)}")
        setting = settings[name]
        units = setting["units"][0]
        external = units["model"] in external_models
        if len(setting["units"]) != 1 or not (external or str(setting["dataset"]).startswith("vision_")):
            raise ValueError(f"cosy setting {name}: needs exactly one units entry of a vision-world classifier or "
                             f"an external.models classifier, got {setting['units']} on {setting['dataset']}")
        files[name] = {
            "model": units["model"], "layer": units["layer"], "dataset": setting["dataset"],
            "activations": str(activation_path(setting["dataset"], units["model"], units["layer"])),
            "concepts": str(concept_path(setting["dataset"], "labels")),
            "truth": str(truth_path(name)),
            "kind": ("custom" if units["model"] in custom_models else "external") if external else "world",
            "checkpoint": None if external else f"data/models/{units['model']}.pt",
        }
    return files


def custom_units_path(generator: str, setting: str) -> str:
    """Where rule ``cosy_custom_units`` records a custom CoSy setting's model on one generator's images."""
    return f"data/cosy/{generator}/units/{setting}.parquet"


def cosy_world_dir(files: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The vision world split the world settings probe (``vision_probe`` -> ``data/worlds/vision/probe``).

    ``None`` when every CoSy setting is external. The world settings must share one split: it is their control
    set and the source of the natural images of the template study.
    """
    datasets = sorted({paths["dataset"] for paths in files.values() if paths["kind"] == "world"})
    if not datasets:
        return None
    if len(datasets) != 1:
        raise ValueError(f"the vision-world cosy.settings must probe one dataset (the control images), got {datasets}")
    return "data/worlds/vision/" + datasets[0].removeprefix("vision_")


def cosy_explanations(job: StepIO) -> None:
    """True and random explanations of each CoSy setting's units (random = another class of the setting).

    Texts come from each setting's label table's ``display_names`` where it has them (real datasets), else from
    the vision world's caption words.
    """
    from neuroneval.cosy.evaluation import explanation_table
    from neuroneval.cosy.options import CosyOptions

    options = CosyOptions.from_params(job.params.cosy)
    tables = []
    concept_files = list(getattr(job.input, "concepts", [])) or [None] * len(options.settings)
    for name, truth_file, concept_file in zip(options.settings, job.input.truth, concept_files, strict=True):
        truth = pd.read_csv(truth_file, dtype={"unit": str, "concept": str})
        metadata = io.read_concept_table(concept_file)[1] if concept_file else {}
        tables.append(explanation_table(truth, setting=name, candidates=sorted(set(truth["concept"])),
                                        max_units=options.max_units, seed=int(options.seed),
                                        display_names=metadata.get("display_names")))
    explanations = pd.concat(tables, ignore_index=True)
    print(f"{len(explanations)} explanations, {explanations['explanation'].nunique()} distinct explanation texts")
    io.write_csv(job.output[0], explanations)


def cosy_train_embedded(job: StepIO) -> None:
    """Train the embedded text-conditional diffusion model on the vision world's captions."""
    from neuroneval.cosy.embedded_diffusion import train_embedded_diffusion
    from neuroneval.cosy.options import EmbeddedTrainingOptions

    report = train_embedded_diffusion(Path(job.input.world), Path(job.input.clip), Path(job.output[0]),
                                      EmbeddedTrainingOptions.from_params(job.params.training))
    print(json.dumps(report, indent=1, default=str))


def cosy_generate(job: StepIO) -> None:
    """Generate (or resume) every image the CoSy tables need with one generator; write its manifest."""
    from neuroneval.cosy.evaluation import image_plan
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.model_path import with_model_path
    from neuroneval.cosy.options import CosyOptions
    from neuroneval.cosy.study import read_explanation_table
    from neuroneval.cosy.synthesis import synthesize, throughput, write_manifest
    from neuroneval.worlds.vision import saved_world_params

    options = CosyOptions.from_params(job.params.cosy)
    name = job.wildcards.generator
    explanations = read_explanation_table(job.input.explanations)
    generator_options = with_model_path(options.generator_options(name), getattr(job.params, "data_root", "."))
    world_dir = getattr(job.input, "world", None)
    generator = build_generator(name, generator_options,
                                world_params=saved_world_params(world_dir) if world_dir else None,
                                checkpoint=getattr(job.input, "checkpoint", None))
    plan = image_plan(explanations, options)
    root = Path(job.output.manifest).parent
    print(f"{name}: {len(plan)} images planned ({plan['prompt'].nunique()} prompts)")
    manifest, report = synthesize(generator, plan, root, batch_size=int(options.batch_size))
    print(f"{name}: generated {report['generated']} images in {report['seconds']:.1f} s, "
          f"reused {report['reused']}")
    write_manifest(job.output.manifest, manifest)
    overall = throughput(root)
    print(f"{name}: {overall['images_per_second']} images/s over all runs of this config")
    io.write_json(job.output.report, {"generator": name, "config_hash": manifest["config_hash"].iloc[0],
                                      "images": len(manifest), "config": generator.config(),
                                      "this_run": report, **overall})


def cosy_evaluate(job: StepIO) -> None:
    """Score every explanation of every CoSy setting on one generator's images: the per-generator tables of
    :func:`neuroneval.cosy.study.evaluate_generator`, each setting's files (:func:`cosy_setting_units`, a custom
    setting's table on the images from rule ``cosy_custom_units``) handed over as a typed
    :class:`~neuroneval.cosy.study.SettingUnits`."""
    from neuroneval.cosy.options import CosyOptions
    from neuroneval.cosy.study import GENERATOR_TABLES, SettingUnits, evaluate_generator, read_explanation_table
    from neuroneval.cosy.synthesis import read_manifest
    from neuroneval.external.own import custom_models
    from neuroneval.worlds import load_vision_world

    options = CosyOptions.from_params(job.params.cosy)
    external = getattr(job.params, "external", None) or {}
    files = cosy_setting_units(job.params.settings, options.settings, list(external.get("models") or {}),
                               custom_models(external))
    custom = [name for name, paths in files.items() if paths["kind"] == "custom"]
    synthetic = dict(zip(custom, getattr(job.input, "custom_units", []), strict=True))
    settings = {name: SettingUnits(kind=paths["kind"], model=paths["model"], layer=paths["layer"],
                                   activations=Path(paths["activations"]), concepts=Path(paths["concepts"]),
                                   checkpoint=Path(paths["checkpoint"]) if paths["checkpoint"] else None,
                                   synthetic=Path(synthetic[name]) if name in synthetic else None)
                for name, paths in files.items()}
    world_dir = getattr(job.input, "world", None)
    tables = evaluate_generator(
        read_explanation_table(job.input.explanations), read_manifest(job.input.manifest),
        Path(job.input.manifest).parent, settings, options, generator=job.wildcards.generator,
        extraction=job.params.activations,
        world=load_vision_world(world_dir) if world_dir else None, clip_file=getattr(job.input, "clip", None),
        external=external)
    for table in GENERATOR_TABLES:
        io.write_csv(getattr(job.output, table), tables[table])


def _read_tables(paths: Sequence[str]) -> pd.DataFrame:
    frames = []
    for path in paths:
        if Path(path).stat().st_size <= 1:
            continue
        frames.append(pd.read_csv(path, dtype={"unit": str}, keep_default_na=False, na_values=[""]))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def cosy_tables(job: StepIO) -> None:
    """Merge the generators' tables into results/cosy: scores, Tables 2/6 and 8, templates, natural, generative."""
    from neuroneval.cosy.evaluation import generative_summary, table2
    from neuroneval.cosy.options import CosyOptions
    from neuroneval.cosy.study import GENERATOR_TABLES, template_summary
    from neuroneval.figures.cosy import plot_distributions, plot_natural, plot_templates

    options = CosyOptions.from_params(job.params.cosy)
    merged = {table: _read_tables(getattr(job.input, table)) for table in GENERATOR_TABLES}
    scores = merged["scores"]
    io.write_csv(job.output.scores, scores)
    io.write_csv(job.output.table2, table2(scores))
    io.write_csv(job.output.table8, merged["seeds"])
    templates = merged["templates"]
    io.write_csv(job.output.templates, template_summary(templates))
    plot_templates(templates, job.output.templates_figure)
    io.write_csv(job.output.natural, merged["natural"])
    plot_natural(merged["natural"], job.output.natural_figure)
    plot_distributions(merged["samples"], job.output.distributions)
    generative = merged["generative"]
    io.write_csv(job.output.generative, generative_summary(generative, tolerance=float(
        options.generative.tolerance)) if not generative.empty else generative)
    reports = [json.loads(Path(path).read_text()) for path in job.input.reports]
    io.write_json(job.output.throughput, {report["generator"]: report for report in reports})


def cosy_user(job: StepIO) -> None:
    """CoSy on a user's explanation file (``cosy.user_explanations.<name>``): true and random explanations of the
    setting's units against its probing split (:func:`neuroneval.cosy.user.score_user_explanations`)."""
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.model_path import with_model_path
    from neuroneval.cosy.options import generator_options
    from neuroneval.cosy.user import CosyUserEntry, score_user_explanations
    from neuroneval.explain import read_explanations
    from neuroneval.worlds import load_vision_world

    entry = CosyUserEntry.from_params(job.params.entry)
    entry = dataclasses.replace(entry, batch_size=int(job.params.activations["batch_size"]),
                                pooling=job.params.activations["pooling"])
    world = load_vision_world(job.input.world)
    options = with_model_path(generator_options(entry.generator, job.params.generator or None),
                              getattr(job.params, "data_root", "."))
    generator = build_generator(entry.generator, options, world_params=world.params,
                                checkpoint=getattr(job.input, "embedded", None))
    scores = score_user_explanations(
        read_explanations(job.input.explanations), source=str(job.input.explanations), control_images=world.images,
        checkpoint=job.input.checkpoint, layer=job.params.layer, hierarchy=world.hierarchy, generator=generator,
        image_root=Path(job.output.images), options=entry)
    io.write_csv(job.output.scores, scores, float_format="%.10g")
