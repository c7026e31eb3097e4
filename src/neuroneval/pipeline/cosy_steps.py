"""Workflow steps of CoSy (paper 002) on the embedded settings, one function per rule of ``cosy.smk``.

The rules read the ``cosy:`` block of params.yaml::

    cosy_explanations      truth tables of cosy.settings        -> data/cosy/explanations.csv (true + random)
    cosy_train_embedded    vision train world + tiny CLIP       -> data/cosy_models/diffusion/ (embedded generator)
    cosy_generate          explanations (+ world / checkpoint)  -> data/cosy/<generator>/manifest.parquet + PNGs
    cosy_evaluate          images + unit models + probing set   -> results/cosy/generators/<generator>/*.csv
    cosy_tables            every generator's tables             -> results/cosy/{scores,table2,table8,...}.csv/.png

Science lives in :mod:`neuroneval.cosy`; these functions only move data between files and library calls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

#: Per-generator tables written by :func:`cosy_evaluate` and merged by :func:`cosy_tables`.
GENERATOR_TABLES = ("scores", "natural", "templates", "seeds", "generative", "samples")
#: Where the embedded generator's checkpoint lives (outside data/models, which the DVC ``models`` stage owns).
EMBEDDED_CHECKPOINT = "data/cosy_models/diffusion"
WORLD_CLASSIFIER_LAYERS = ("softmax", "logits", "superclass", "concepts")


def cosy_setting_units(settings: Mapping[str, Any], names: Sequence[str],
                       external_models: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """The files of each CoSy setting: ``model``, ``layer``, ``dataset``, ``activations``, ``concepts``, ``truth``,
    ``kind`` and ``checkpoint``.

    A CoSy setting probes one activation table. ``kind`` is ``world`` for a classifier trained in the DAG on the
    vision world (``checkpoint`` = ``data/models/<model>.pt``, dataset ``vision_*``) and ``external`` for a model
    of ``external.models`` (the paper profile; ``checkpoint`` is None, the model is loaded from its spec). The
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
            "kind": "external" if external else "world",
            "checkpoint": None if external else f"data/models/{units['model']}.pt",
        }
    return files


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

    knobs = job.params.cosy
    tables = []
    concept_files = list(getattr(job.input, "concepts", [])) or [None] * len(knobs["settings"])
    for name, truth_file, concept_file in zip(knobs["settings"], job.input.truth, concept_files, strict=True):
        truth = pd.read_csv(truth_file, dtype={"unit": str, "concept": str})
        metadata = io.read_concept_table(concept_file)[1] if concept_file else {}
        tables.append(explanation_table(truth, setting=name, candidates=sorted(set(truth["concept"])),
                                        max_units=knobs["max_units"], seed=int(knobs["seed"]),
                                        display_names=metadata.get("display_names")))
    explanations = pd.concat(tables, ignore_index=True)
    print(f"{len(explanations)} explanations, {explanations['explanation'].nunique()} distinct explanation texts")
    io.write_csv(job.output[0], explanations)


def cosy_train_embedded(job: StepIO) -> None:
    """Train the embedded text-conditional diffusion model on the vision world's captions."""
    from neuroneval.cosy.embedded_diffusion import train_embedded_diffusion

    report = train_embedded_diffusion(Path(job.input.world), Path(job.input.clip), Path(job.output[0]),
                                      dict(job.params.training))
    print(json.dumps(report, indent=1, default=str))


def read_explanations(path: str | Path) -> pd.DataFrame:
    """Read ``data/cosy/explanations.csv``; raises ``ValueError`` naming the file and missing columns."""
    from neuroneval.cosy.evaluation import EXPLANATION_COLUMNS

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in EXPLANATION_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected {EXPLANATION_COLUMNS}")
    empty = frame.index[frame["explanation"].str.strip() == ""]
    if len(empty):
        raise ValueError(f"{path}, row {int(empty[0]) + 2}: empty explanation")
    return frame


def resolve_model_path(model: str, data_root: str | Path) -> str:
    """A diffusers model: a folder under ``data_root`` when one exists there, else the path or hub id as given.

    >>> resolve_model_path("/abs/sdxl", "data/paper_inputs")
    '/abs/sdxl'
    """
    if not model:
        return model
    candidate = Path(data_root).expanduser() / Path(model).expanduser()
    return str(candidate) if not Path(model).is_absolute() and candidate.exists() else model


def _world_params(world_dir: str | Path) -> dict[str, Any]:
    return dict(json.loads((Path(world_dir) / "classes.json").read_text())["params"])


def cosy_generate(job: StepIO) -> None:
    """Generate (or resume) every image the CoSy tables need with one generator; write its manifest."""
    from neuroneval.cosy.evaluation import image_plan
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.synthesis import synthesize, throughput, write_manifest

    knobs = job.params.cosy
    name = job.wildcards.generator
    explanations = read_explanations(job.input.explanations)
    spec = dict(knobs.get(name, {}))
    if name == "diffusers":
        spec["model"] = resolve_model_path(spec.get("model", ""), getattr(job.params, "data_root", "."))
    world_dir = getattr(job.input, "world", None)
    generator = build_generator(name, spec, world_params=_world_params(world_dir) if world_dir else None,
                                checkpoint=getattr(job.input, "checkpoint", None))
    plan = image_plan(explanations, knobs)
    root = Path(job.output.manifest).parent
    print(f"{name}: {len(plan)} images planned ({plan['prompt'].nunique()} prompts)")
    manifest, report = synthesize(generator, plan, root, batch_size=int(knobs["batch_size"]))
    print(f"{name}: generated {report['generated']} images in {report['seconds']:.1f} s, "
          f"reused {report['reused']}")
    write_manifest(job.output.manifest, manifest)
    overall = throughput(root)
    print(f"{name}: {overall['images_per_second']} images/s over all runs of this config")
    io.write_json(job.output.report, {"generator": name, "config_hash": manifest["config_hash"].iloc[0],
                                      "images": len(manifest), "config": generator.config(),
                                      "this_run": report, **overall})


def _probe_embeddings(clip_file: str | Path, images: np.ndarray) -> np.ndarray:
    from neuroneval.models.clip import embed_images, load_clip

    model, _, _ = load_clip(clip_file)
    return embed_images(model, images)


def _synthetic_units(paths: Mapping[str, Any], image_root: Path, image_paths: Sequence[str], *,
                     world_images: np.ndarray | None, hierarchy: Mapping[str, Sequence[str]],
                     external: Mapping[str, Any], extraction: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """A setting's units on the synthetic images: world classifiers see them resized to the world's size,
    external classifiers through their own preprocessing."""
    from neuroneval.cosy.activations import classifier_units, external_units
    from neuroneval.cosy.synthesis import load_images

    if paths["kind"] == "world":
        return classifier_units(paths["checkpoint"], world_images, layer=paths["layer"], hierarchy=hierarchy,
                                batch_size=int(extraction["batch_size"]), pooling=extraction["pooling"])
    from neuroneval.external.config import model_spec

    _, concept_metadata = io.read_concept_table(paths["concepts"])
    return external_units(model_spec(external, paths["model"]), load_images(image_root, image_paths),
                          layer=paths["layer"], concept_metadata=concept_metadata,
                          batch_size=int(external.get("batch_size", 64)), pooling=extraction["pooling"],
                          device=str(external.get("device", "auto")))


def cosy_evaluate(job: StepIO) -> None:
    """Score every explanation of every CoSy setting on one generator's images; all per-generator tables.

    The template study (Fig. 2) and the intraclass similarity of Table 8 embed images with the tiny CLIP and
    compare with the vision world's natural images, so they run for vision-world settings only.
    """
    from neuroneval.cosy.evaluation import (
        generative_table,
        natural_table,
        score_table,
        seed_table,
        template_table,
    )
    from neuroneval.cosy.synthesis import load_images, read_manifest, resize_images
    from neuroneval.worlds import load_vision_world

    knobs = job.params.cosy
    generator = job.wildcards.generator
    external = getattr(job.params, "external", None) or {}
    explanations = read_explanations(job.input.explanations)
    manifest = read_manifest(job.input.manifest)
    image_root = Path(job.input.manifest).parent
    files = cosy_setting_units(job.params.settings, knobs["settings"], list(external.get("models") or {}))
    template = knobs["template"]
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in GENERATOR_TABLES}

    world_dir = getattr(job.input, "world", None)
    world = load_vision_world(world_dir) if world_dir else None
    world_images = embeddings = None
    if world is not None:
        world_images = resize_images(load_images(image_root, manifest["path"].tolist()), world.images.shape[1])
        embeddings = _probe_embeddings(job.input.clip, world_images)
    templates_done = world is None

    for name, paths in files.items():
        subset = explanations[explanations["setting"] == name]
        if subset.empty:
            continue
        frame, _ = io.read_activation_table(paths["activations"])
        labels, _ = io.read_concept_table(paths["concepts"])
        io.check_matching_ids(frame, labels, first_source=paths["activations"], second_source=paths["concepts"])
        if knobs["n_control"] is not None:
            frame, labels = frame.iloc[: int(knobs["n_control"])], labels.iloc[: int(knobs["n_control"])]
        unit_names = [column for column in frame.columns if column != io.ID_COLUMN]
        control = io.value_matrix(frame).astype(np.float64)
        synthetic, synthetic_names = _synthetic_units(
            paths, image_root, manifest["path"].tolist(), world_images=world_images,
            hierarchy=world.hierarchy if world is not None else {}, external=external,
            extraction=job.params.activations)
        if list(synthetic_names) != unit_names:
            raise ValueError(f"{paths['activations']}: units {unit_names[:3]}... differ from the model's "
                             f"{list(synthetic_names)[:3]}...")
        synthetic = synthetic.astype(np.float64)
        true_concepts = subset[subset["method"] == "true"].set_index("unit")["concept"]
        target = {unit: labels[true_concepts[unit]].to_numpy() > 0.5 for unit in true_concepts.index}
        shared = {"unit_names": unit_names, "control": control, "target_labels": target, "synthetic": synthetic,
                  "manifest": manifest, "generator": generator}
        tables["scores"].append(score_table(subset, template=template, **shared))
        tables["natural"].append(natural_table(subset, template=template, **shared))
        tables["seeds"].append(seed_table(subset, knobs=knobs, synthetic_embeddings=embeddings, **shared))
        generative = knobs["generative"]
        if name in generative["settings"]:
            tables["generative"].append(generative_table(
                subset, template=template, metrics=generative["metrics"],
                params={"alpha": float(generative["alpha"]), "lam": float(generative["lam"])}, **shared))
        if not templates_done and paths["kind"] == "world":
            tables["templates"].append(template_table(
                subset, knobs=knobs, manifest=manifest, synthetic_embeddings=embeddings,
                natural_embeddings=_natural_embeddings(job.input.clip, world, subset, knobs),
                generator=generator))
            templates_done = True
        tables["samples"].append(_samples(subset, knobs, unit_names, control, synthetic, manifest, generator))

    for table in GENERATOR_TABLES:
        parts = [part for part in tables[table] if not part.empty]
        io.write_csv(getattr(job.output, table), pd.concat(parts, ignore_index=True) if parts else pd.DataFrame())


def _natural_embeddings(clip_file: str | Path, world: Any, explanations: pd.DataFrame,
                        knobs: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Tiny-CLIP embeddings of the first ``templates.n_natural`` world images of each explained concept."""
    embeddings = {}
    for concept in sorted(set(explanations["concept"])):
        positive = np.flatnonzero(world.labels[concept].to_numpy() > 0.5)[: int(knobs["templates"]["n_natural"])]
        if len(positive):
            embeddings[concept] = _probe_embeddings(clip_file, world.images[positive])
    return embeddings


def _samples(subset: pd.DataFrame, knobs: Mapping[str, Any], unit_names: Sequence[str], control: np.ndarray,
             synthetic: np.ndarray, manifest: pd.DataFrame, generator: str) -> pd.DataFrame:
    """Activation values of a few units for the distribution figure: control sample, true and random images."""
    from neuroneval.cosy.evaluation import image_rows
    from neuroneval.cosy.generators import fill_template

    column = {name: position for position, name in enumerate(unit_names)}
    units = list(dict.fromkeys(subset["unit"]))[: int(knobs["distributions"]["n_units"])]
    n_control = int(knobs["distributions"]["n_control"])
    setting = subset["setting"].iloc[0]
    frames = []
    for unit in units:
        k = column[unit]
        frames.append(pd.DataFrame({"generator": generator, "setting": setting, "unit": unit, "group": "control",
                                    "concept": "", "activation": control[:n_control, k]}))
        for record in subset[subset["unit"] == unit].itertuples(index=False):
            rows = image_rows(manifest, fill_template(knobs["template"], record.explanation))
            frames.append(pd.DataFrame({"generator": generator, "setting": setting, "unit": unit,
                                        "group": record.method, "concept": record.concept,
                                        "activation": synthetic[rows, k]}))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


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
    from neuroneval.cosy.plots import plot_distributions, plot_natural, plot_templates

    knobs = job.params.cosy
    merged = {table: _read_tables(getattr(job.input, table)) for table in GENERATOR_TABLES}
    scores = merged["scores"]
    io.write_csv(job.output.scores, scores)
    io.write_csv(job.output.table2, table2(scores))
    io.write_csv(job.output.table8, merged["seeds"])
    templates = merged["templates"]
    summary = (templates.groupby(["generator", "template", "prompt_pattern"], sort=False)
               .agg(cosine_to_natural_mean=("cosine_to_natural", "mean"),
                    cosine_to_natural_std=("cosine_to_natural", "std"),
                    intraclass_cosine_mean=("intraclass_cosine", "mean"), n_concepts=("concept", "nunique"))
               .reset_index()) if not templates.empty else templates
    io.write_csv(job.output.templates, summary)
    plot_templates(templates, job.output.templates_figure)
    io.write_csv(job.output.natural, merged["natural"])
    plot_natural(merged["natural"], job.output.natural_figure)
    plot_distributions(merged["samples"], job.output.distributions)
    generative = merged["generative"]
    io.write_csv(job.output.generative, generative_summary(generative, tolerance=float(
        knobs["generative"]["tolerance"])) if not generative.empty else generative)
    reports = [json.loads(Path(path).read_text()) for path in job.input.reports]
    io.write_json(job.output.throughput, {report["generator"]: report for report in reports})
