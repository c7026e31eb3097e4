"""Steps of the explanation-method benchmark's other scorers (issue 15): CoSy, the simulated crowd, agreement.

The rules of ``explain.smk`` read ``explain.cosy`` and ``explain.crowd`` of params.yaml::

    explain_cosy_generate  Table 1 explanation files     -> data/explain_cosy/<generator>/{manifest.parquet,prompts.csv}
    explain_cosy_score     images + each setting's model -> results/explain/cosy/<generator>.csv (per unit)
    explain_crowd          a setting's tables + files    -> results/explain/crowd/<setting>.csv (per unit)
    explain_benchmark      every scorer's per-unit table -> cosy_table3, crowd_table3, agreement (.csv, .png)

Images live under ``data/explain_cosy/<generator>/`` and are reused between runs (one set per distinct prompt,
:func:`neuroneval.cosy.synthesis.synthesize`), so methods that agree share them. Control images and crowd inputs
are the setting's held-out inputs (``explain.holdout_fraction``), as for the simulation scores.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

if TYPE_CHECKING:
    from neuroneval.method_eval.cosy_table3 import CosyBenchmarkOptions

def _read_pairs(pairs: Sequence[Sequence[str]], paths: Sequence[str]) -> dict[tuple[str, str], pd.DataFrame]:
    from neuroneval.explain import read_explanations

    return {(str(setting), str(method)): read_explanations(path)
            for (setting, method), path in zip(pairs, paths, strict=True)}


def explain_cosy_generate(job: StepIO) -> None:
    """The text each Table 1 explanation shows and its synthetic images under one generator (resumed)."""
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.model_path import with_model_path
    from neuroneval.cosy.options import generator_options
    from neuroneval.cosy.synthesis import plan_images, synthesize, write_manifest
    from neuroneval.method_eval.cosy_table3 import CosyBenchmarkOptions, prompt_table
    from neuroneval.worlds.vision import saved_world_params

    options = CosyBenchmarkOptions.from_params(job.params.cosy)
    prompts = prompt_table(_read_pairs(job.params.pairs, job.input.explanations), max_units=options.max_units,
                           seed=options.seed)
    texts = sorted(set(prompts["explanation"]) - {""})
    name = job.wildcards.generator
    spec = with_model_path(generator_options(name, job.params.generator), job.params.data_root)
    world_dir = getattr(job.input, "world", None)
    generator = build_generator(name, spec,
                                world_params=saved_world_params(world_dir) if world_dir else None,
                                checkpoint=getattr(job.input, "checkpoint", None))
    plan = plan_images(texts, templates=[options.template], n_images=options.n_images)
    print(f"{name}: {len(prompts)} explanations, {len(texts)} distinct texts, {len(plan)} images")
    manifest, report = synthesize(generator, plan, Path(job.output.manifest).parent, batch_size=options.batch_size)
    print(f"{name}: generated {report['generated']} images in {report['seconds']:.1f} s, reused {report['reused']}")
    write_manifest(job.output.manifest, manifest)
    io.write_csv(job.output.prompts, prompts)


def explain_cosy_score(job: StepIO) -> None:
    """CoSy AUC and MAD of every explanation of the prompt table: each setting's units on the synthetic images
    vs on its first ``n_control`` held-out inputs (a world classifier sees the images at the world's size, your own
    ``family: custom`` model through its declared ``preprocess``, as rule ``cosy_custom_units`` runs it); and the
    ceiling rows ``ideal``: the truth explanations on the world's ideal units (their labels on the control images,
    the rendered concept on the synthetic ones; NaN for a generator whose images carry no labels,
    :func:`neuroneval.method_eval.cosy_table3.ideal_cosy_scores`)."""
    from neuroneval.cosy.activations import classifier_units, custom_model_on_images
    from neuroneval.cosy.synthesis import load_images, read_manifest, resize_images
    from neuroneval.explain.benchmark import holdout_mask
    from neuroneval.method_eval.cosy_table3 import (
        CONCEPT_RENDERING_GENERATORS,
        UNDEFINED_REASON,
        CosyBenchmarkOptions,
        cosy_unit_scores,
    )
    from neuroneval.worlds.vision import saved_world_params

    options = CosyBenchmarkOptions.from_params(job.params.cosy)
    manifest = read_manifest(job.input.manifest)
    prompts = pd.read_csv(job.input.prompts, dtype=str, keep_default_na=False)
    generated = load_images(Path(job.input.manifest).parent, manifest["path"].tolist())
    world_dir = getattr(job.input, "world", None) or None
    if world_dir:
        world_images = resize_images(generated, int(saved_world_params(world_dir)["image_size"]))
        hierarchy = json.loads((Path(world_dir) / "hierarchy.json").read_text())
    extraction = job.params.activations
    custom = getattr(job.params, "custom", None) or {}
    parts = []
    for setting, files in job.params.files.items():
        frame, _ = io.read_activation_table(files["activations"])
        held = holdout_mask(len(frame), float(job.params.holdout_fraction), int(job.params.seed))
        unit_names = [column for column in frame.columns if column != io.ID_COLUMN]
        control = io.value_matrix(frame)[held][: options.n_control].astype(np.float64)
        if setting in custom:
            synthetic, names = custom_model_on_images(generated, custom[setting], layer=files["layer"],
                                                      pooling=extraction["pooling"], runtime=job.params.runtime)
        else:
            synthetic, names = classifier_units(files["checkpoint"], world_images, layer=files["layer"],
                                                hierarchy=hierarchy, batch_size=int(extraction["batch_size"]),
                                                pooling=extraction["pooling"])
        if list(names) != unit_names:
            raise ValueError(f"{files['activations']}: units {unit_names[:3]}... differ from the model's "
                             f"{list(names)[:3]}...")
        parts.append(cosy_unit_scores(prompts[prompts["setting"] == setting], unit_names=unit_names, control=control,
                                      synthetic=synthetic.astype(np.float64), manifest=manifest,
                                      template=options.template, generator=job.wildcards.generator))
        parts.append(_ideal_cosy(setting, files, prompts, held, manifest, options, job.wildcards.generator))
    if job.wildcards.generator not in CONCEPT_RENDERING_GENERATORS:
        print(UNDEFINED_REASON.format(generator=job.wildcards.generator))
    scores = pd.concat(parts, ignore_index=True)
    io.write_csv(job.output.scores, scores)
    print(scores.groupby(["setting", "method"], sort=False)[["auc", "mad"]].mean().round(3).to_string())


def _ideal_cosy(setting: str, files: Mapping[str, str], prompts: pd.DataFrame, held: np.ndarray,
                manifest: pd.DataFrame, options: CosyBenchmarkOptions, generator: str) -> pd.DataFrame:
    """The ``ideal`` rows of one setting: its truth prompts scored on its ideal units (labels of the truth)."""
    from neuroneval.meta.ideal_units import load_ideal_units
    from neuroneval.method_eval.cosy_table3 import ideal_cosy_scores

    truth = pd.read_csv(files["truth"], dtype=str)
    ideal, _ = load_ideal_units([files["activations"]], files["concepts"], files["concepts"], truth,
                                concept_prefixes=[])
    rows = prompts[(prompts["setting"] == setting) & (prompts["method"] == "truth")]
    rows = rows[rows["unit"].isin(ideal.unit_names)]
    control = ideal.activations[held][: options.n_control]
    return ideal_cosy_scores(rows, unit_names=ideal.unit_names, control=control, manifest=manifest,
                             template=options.template, generator=generator)


def explain_crowd(job: StepIO) -> None:
    """The simulated crowd study (001 Sec. 4–5) of each crowd method's explanation of the setting's units, on its
    held-out inputs; and the ceiling rows ``ideal``: the truth explanations' study on the world's ideal units
    (:func:`neuroneval.method_eval.crowd_table3.ideal_crowd_scores`)."""
    from neuroneval.cosy.evaluation import select_units
    from neuroneval.cosy.shown_concept import shown_concepts
    from neuroneval.explain import read_explanations
    from neuroneval.explain.benchmark import holdout_mask
    from neuroneval.meta.ideal_units import load_ideal_units
    from neuroneval.method_eval.crowd_table3 import CrowdBenchmarkOptions, crowd_unit_scores, ideal_crowd_scores
    from neuroneval.settings import aligned_concepts, load_setting, setting_ids

    options = CrowdBenchmarkOptions.from_params(job.params.crowd)
    setting = job.params.setting
    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.labels),
                        concept_prefixes=setting["concepts"].get("prefixes", []))
    ids = setting_ids(job.input.labels)
    held = holdout_mask(len(ids), float(job.params.holdout_fraction), int(job.params.seed))
    pseudo = None
    if options.needs_pseudo:
        pseudo = aligned_concepts(job.input.pseudo, ids, data.concept_names)[0][held]
    parts = []
    for method, path in zip(job.params.methods, job.input.explanations, strict=True):
        frame = read_explanations(path)
        frame = frame[frame["unit"].astype(str).isin(select_units(frame["unit"].astype(str).tolist(),
                                                                  options.max_units, seed=options.seed))]
        parts.append(crowd_unit_scores(
            setting=job.wildcards.setting, method=method, units=frame["unit"].astype(str).tolist(),
            concepts=shown_concepts(frame), activations=data.activations[held], unit_names=data.unit_names,
            labels=data.concepts[held], pseudo=pseudo, concept_names=data.concept_names, options=options))
        if method == "truth":
            ideal, _ = load_ideal_units(job.input.activations, job.input.labels, job.input.labels,
                                        pd.read_csv(job.input.truth, dtype=str),
                                        ideal_files=getattr(job.input, "ideal", []),
                                        concept_prefixes=[])
            parts.append(ideal_crowd_scores(frame, ideal.activations[held], ideal.unit_names,
                                            setting=job.wildcards.setting,
                                            labels=data.concepts[held], pseudo=pseudo,
                                            concept_names=data.concept_names, options=options))
    scores = pd.concat(parts, ignore_index=True)
    io.write_csv(job.output.scores, scores)
    print(scores.groupby(["aggregation", "method"], sort=False)["crowd_correlation"].mean().round(3).to_string())


def explain_crowd_pages(job: StepIO) -> None:
    """The task pages of the crowd study of a setting of your own, its media shown by input id
    (:func:`neuroneval.crowd.explanation_pages.write_explanation_pages`; media read and checked by
    :func:`neuroneval.external.own_media.setting_media`)."""
    from neuroneval.crowd.explanation_pages import write_explanation_pages
    from neuroneval.external.own_media import setting_media
    from neuroneval.method_eval.crowd_table3 import CrowdBenchmarkOptions

    options = CrowdBenchmarkOptions.from_params(job.params.crowd)
    media = setting_media(job.params.media, job.input.activations[0])
    written = write_explanation_pages(list(job.input.activations),
                                      dict(zip(job.params.methods, job.input.explanations, strict=True)),
                                      media, job.output[0], n_inputs=options.n_inputs,
                                      sampling=options.sampling, seed=options.seed,
                                      title=f"Concept rating: {job.wildcards.setting}")
    print(f"{job.wildcards.setting}: {sum(path.suffix == '.html' for path in written)} task pages")


def _read_all(paths: Sequence[str]) -> pd.DataFrame:
    frames = [pd.read_csv(path, dtype={"unit": str}, keep_default_na=False, na_values=[""]) for path in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def explain_benchmark(job: StepIO) -> None:
    """CoSy and crowd tables (mean ± s.e. per method, the random floor and the ``ideal`` ceiling) and the scorers'
    agreement."""
    from neuroneval.explain.agreement import method_summary
    from neuroneval.explain.benchmark import benchmark_agreement, score_names
    from neuroneval.figures.results import plot_agreement, plot_cosy_table

    scores = _read_all(job.input.scores)
    cosy, crowd = _read_all(job.input.cosy), _read_all(job.input.crowd)
    cosy_table = (method_summary(cosy, keys=["setting", "generator", "method"], values=["auc", "mad"])
                  if len(cosy) else pd.DataFrame())
    crowd_table = (method_summary(crowd, keys=["setting", "aggregation", "method"],
                                  values=["crowd_correlation", "label_correlation"]) if len(crowd) else pd.DataFrame())
    io.write_csv(job.output.cosy_table, cosy_table)
    io.write_csv(job.output.crowd_table, crowd_table)
    plot_cosy_table(cosy_table, job.output.cosy_figure)
    metrics = [column for column in score_names() if column != "simulation_correlation"]
    agreement = benchmark_agreement(scores, cosy, crowd, metrics, n_boot=int(job.params.n_boot),
                                    ci_level=float(job.params.ci_level), seed=int(job.params.seed))
    io.write_csv(job.output.agreement, agreement)
    plot_agreement(agreement, job.output.agreement_figure)
    for name, table, value in (("CoSy", cosy_table, "auc_mean"), ("crowd", crowd_table, "crowd_correlation_mean")):
        if len(table):
            print(name, table[[*table.columns[:3], value, "floor", "ceiling"]].round(3).to_string(), sep="\n")
