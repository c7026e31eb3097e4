"""Steps of the explanation-method benchmark (issue 15; paper 001 Tables 1–2, App. B.2): explain, score, tabulate.

``explain_setting`` writes ``explanations/<setting>/<method>.csv`` (docs/design.md §2.5), a method fitted on the
setting's inputs minus a seeded holdout; ``explain_score`` simulates and scores every explanation on the held-out
inputs (:func:`neuroneval.explain.benchmark.score_setting`); ``explain_results`` reduces the scores to Table 1
(simple explanations), Table 2 (l > 1) and a figure (:func:`neuroneval.explain.benchmark.summary_table`).

What each method file is (its inputs, how it is fitted, its tables) is its entry of the catalogue
(:mod:`neuroneval.explain_catalogue`); ``explain_setting`` looks its fitting up in :data:`RUNNERS` by the entry's
``runner``. ``llm`` (opt-in, ``explain.methods.llm``) asks an OpenAI-compatible chat server; on external image
datasets the spatial methods read the concept masks you supply (:mod:`neuroneval.external.spatial`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


@dataclass(frozen=True)
class Fitting:
    """What a method is fitted on: the setting's tables (:class:`~neuroneval.settings.SettingData`), its input ids,
    the fitting inputs (not held out), the method's base name, its options and the setting's ``spatial`` block."""

    data: Any
    ids: np.ndarray
    fit: np.ndarray
    method: str
    options: Mapping[str, Any]
    spatial: Mapping[str, Any]


def explain_setting(job: StepIO) -> None:
    """``explanations/<setting>/<method>.csv``: one method (or baseline) on the setting's fitting inputs, fitted by
    the :data:`RUNNERS` entry of its catalogue entry's ``runner`` (a spatial method of the setting's ``spatial``
    block: on activation maps)."""
    from neuroneval.explain import write_explanations
    from neuroneval.explain.benchmark import holdout_mask
    from neuroneval.explain.concept_sets import method_concept_prefixes
    from neuroneval.explain_catalogue import method_entry
    from neuroneval.settings import load_setting, setting_ids

    setting, spec, name = job.params.setting, job.params.spec, job.wildcards.method
    entry = method_entry(name)
    prefixes = method_concept_prefixes(entry.name, setting["concepts"].get("prefixes", []),
                                       spec.get("method_concepts"), setting=job.wildcards.setting)
    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.concepts),
                        concept_prefixes=prefixes)
    ids = setting_ids(job.input.concepts)
    fit = ~holdout_mask(len(ids), float(job.params.holdout_fraction), int(job.params.seed))
    spatial = spec.get("spatial") or {}
    runner = entry.runner
    if entry.spatial and entry.name in spatial.get("methods", []):
        runner = "external_spatial" if getattr(job.params, "external", None) else "spatial"
    frame = RUNNERS[runner](job, Fitting(data, ids, fit, entry.name, dict(job.params.options), spatial))
    write_explanations(job.output.explanations, frame)
    print(f"{job.wildcards.setting}/{name}: {len(frame)} units, kinds {frame['kind'].value_counts().to_dict()}")


def _fitting_concepts(job: StepIO, fitting: Fitting) -> tuple[np.ndarray, dict]:
    """The concept table a method fits on (float64, all inputs): the labels or pseudo-labels its catalogue entry
    reads, else the setting's concepts; and that table's metadata (empty for the setting's)."""
    from neuroneval.explain_catalogue import CATALOGUE
    from neuroneval.settings import aligned_concepts

    inputs = CATALOGUE[fitting.method].inputs
    for source in ("labels", "pseudo"):
        if source in inputs:
            return aligned_concepts(getattr(job.input, source), fitting.ids, fitting.data.concept_names)
    return fitting.data.concepts.astype(np.float64), {}


def _fitting_activations(fitting: Fitting) -> np.ndarray:
    return fitting.data.activations[fitting.fit].astype(np.float64)


def _explain_truth(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    from neuroneval.explain import truth_explanations

    return truth_explanations(pd.read_csv(job.input.truth, dtype=str), unit_names=fitting.data.unit_names)


def _explain_random(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    from neuroneval.explain import RandomOptions, random_explanations

    return random_explanations(fitting.data.unit_names, fitting.data.concept_names,
                               RandomOptions.from_params(fitting.options))


def _explain_clip_dissect(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    from neuroneval.explain import ClipDissectOptions, clip_dissect
    from neuroneval.explain.benchmark import pseudo_cosines

    names = fitting.data.concept_names
    concepts, pseudo_metadata = _fitting_concepts(job, fitting)
    return clip_dissect(_fitting_activations(fitting), pseudo_cosines(concepts, pseudo_metadata, names)[fitting.fit],
                        names, ClipDissectOptions.from_params(fitting.options), unit_names=fitting.data.unit_names)


def _explain_probing(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    """A method of :data:`neuroneval.explain.METHODS` on the fitting inputs' concepts (``captions``: and the
    world's captions)."""
    from neuroneval.explain import ProbingData, explain

    concepts, _ = _fitting_concepts(job, fitting)
    captions = None
    if fitting.method == "captions":
        captions = _world_captions(job.input.world, fitting.ids)
        captions = [captions[row] for row in np.flatnonzero(fitting.fit)]
    probing = ProbingData.build(concepts[fitting.fit], fitting.data.concept_names, captions=captions)
    return explain(fitting.method, _fitting_activations(fitting), probing, fitting.options,
                   unit_names=fitting.data.unit_names)


def _explain_tokens(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    """``top_tokens``: the next token (``next:<word>``, as the LM settings' concepts) most over-represented at each
    unit's top-activating probe positions (the LM settings' input ids are positions of the text world's stream)."""
    from neuroneval.explain import CaptionOptions, ProbingData
    from neuroneval.explain.tokens import top_token_concept_explanations
    from neuroneval.worlds.text import load_text_world, next_token_names

    concepts, _ = _fitting_concepts(job, fitting)
    world = load_text_world(Path(job.input.world))
    positions = fitting.ids[fitting.fit]
    probing = ProbingData.build(concepts[fitting.fit], fitting.data.concept_names,
                                tokens=next_token_names(world.token_ids, world.vocabulary, positions))
    return top_token_concept_explanations(_fitting_activations(fitting), probing,
                                          CaptionOptions.from_params(fitting.options),
                                          unit_names=fitting.data.unit_names)


def _world_captions(world_dir: str | Path, ids: np.ndarray) -> list[str]:
    captions = pd.read_csv(Path(world_dir) / "captions.csv", keep_default_na=False, dtype={"caption": str})
    if not np.array_equal(captions[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{world_dir}: the world's input ids differ from the setting's tables")
    return captions["caption"].tolist()


def llm_contexts(world_dir: str | Path, ids: np.ndarray, n_tokens: int) -> list[str]:
    """What the LLM explainer shows of each input: a vision world's captions (``captions.csv``), or for a text
    world the ``n_tokens`` tokens up to each position (the input ids of next-token tables are stream positions)."""
    from neuroneval.explain.llm_backend import position_contexts
    from neuroneval.worlds.text import load_text_world

    if (Path(world_dir) / "captions.csv").exists():
        return _world_captions(world_dir, ids)
    world = load_text_world(Path(world_dir))
    return position_contexts(world.token_ids, world.doc_offsets, world.vocabulary, ids, n_tokens)


def _explain_llm(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    """The LLM explainer (``explain.methods.llm``) on the fitting inputs' contexts; an unreachable or failing
    server is an error naming the setting and the URL."""
    from neuroneval.explain import LLMOptions, ProbingData
    from neuroneval.explain.llm_backend import LLMError, llm_explanations

    data, ids = fitting.data, fitting.ids
    llm = LLMOptions.from_params(fitting.options)
    rows = np.flatnonzero(fitting.fit)
    contexts = llm_contexts(job.input.world, ids, llm.context_tokens)
    probing = ProbingData.build(data.concepts[rows], data.concept_names, contexts=[contexts[r] for r in rows])
    try:
        return llm_explanations(data.activations[rows].astype(np.float64), probing, llm, unit_names=data.unit_names)
    except LLMError as error:
        raise LLMError(f"explain setting {job.wildcards.setting!r}, method llm: the chat server at {llm.base_url} "
                       f"(explain.methods.llm.base_url) failed: {error}") from error


def _explain_spatial(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    """A method on the first ``max_inputs`` fitting inputs' spatial maps (CNN channel maps or ViT patch-token
    grids, :func:`~neuroneval.activations.spatial.classifier_spatial_maps`) against the world's concept masks;
    the layer's outputs are checked to pool to the setting's activation table (same model, layer and unit order)."""
    from neuroneval.activations.spatial import classifier_spatial_maps
    from neuroneval.explain import ProbingData, explain
    from neuroneval.worlds import concept_mask, load_vision_world

    data, ids, fit, method, spatial = fitting.data, fitting.ids, fitting.fit, fitting.method, fitting.spatial

    world = load_vision_world(Path(job.input.world))
    if not np.array_equal(world.labels[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{job.input.world}: the world's input ids differ from the setting's tables")
    rows = np.flatnonzero(fit)[: int(spatial["max_inputs"])]
    maps, pooled = classifier_spatial_maps(job.input.checkpoint, world.images[rows], spatial["layer"],
                                int(job.params.batch_size), job.params.pooling)
    if pooled.shape[1] != len(data.unit_names) or not np.allclose(pooled, data.activations[rows], atol=1e-3):
        raise ValueError(f"maps of {spatial['model']}/{spatial['layer']} do not pool to the setting's activations")
    masks = np.stack([concept_mask(world, name)[rows] for name in data.concept_names], axis=1)
    probing = ProbingData.build(data.concepts[rows], data.concept_names, masks=masks)
    print(f"spatial {method}: maps {maps.shape}, masks {masks.shape}")
    return explain(method, maps, probing, fitting.options, unit_names=data.unit_names)


def _explain_external_spatial(job: StepIO, fitting: Fitting) -> pd.DataFrame:
    """A method on the spatial maps of an external model (``spatial.model``, ``spatial.layer``) against the
    concept masks you supplied (``external.datasets.<name>.masks``, :mod:`neuroneval.external.spatial`): the
    first ``max_inputs`` fitting images that have masks, the setting's concepts that have masks."""
    from neuroneval.explain import ProbingData, explain
    from neuroneval.external.config import loader_spec
    from neuroneval.external.image_datasets import image_paths
    from neuroneval.external.images import image_batches, resolve_device
    from neuroneval.external.spatial import layer_maps, load_concept_masks
    from neuroneval.models.loaders import load_model

    data, ids, fit, method, spatial = fitting.data, fitting.ids, fitting.fit, fitting.method, fitting.spatial
    external = job.params.external
    inputs = pd.read_csv(job.input.inputs)
    if not np.array_equal(inputs[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{job.input.inputs}: the dataset's input ids differ from the setting's tables")
    fitting_rows = np.flatnonzero(fit)
    masks = load_concept_masks(job.input.masks, files=inputs["path"].astype(str).to_numpy()[fitting_rows].tolist(),
                               concept_names=data.concept_names, key=external["masks_key"])
    keep = slice(0, int(spatial["max_inputs"]))
    rows, mask_array = fitting_rows[masks.rows[keep]], masks.masks[keep]
    loaded = load_model(loader_spec(external["model"]))
    device = resolve_device(external["runtime"]["device"])
    loaded.module.to(device)
    batches = image_batches(image_paths(inputs.iloc[rows], external["dataset"]), loaded.preprocess,
                            batch_size=int(external["runtime"]["batch_size"]),
                            num_workers=int(external["runtime"]["num_workers"]))
    maps = layer_maps(loaded.module, batches, spatial["layer"], device=device)
    _check_pooled(maps, data.activations[rows], spatial, str(job.params.pooling))
    columns = [data.concept_names.index(name) for name in masks.concepts]
    probing = ProbingData.build(data.concepts[rows][:, columns], masks.concepts, masks=mask_array)
    print(f"external spatial {method}: maps {maps.shape}, masks {mask_array.shape} "
          f"({len(masks.concepts)} of {len(data.concept_names)} concepts have masks)")
    return explain(method, maps, probing, fitting.options, unit_names=data.unit_names)


def _check_pooled(maps: np.ndarray, activations: np.ndarray, spatial: Mapping[str, Any], pooling: str) -> None:
    """The maps must pool to the setting's activation table (same model, layer and unit order)."""
    pooled = maps.mean(axis=(2, 3)) if pooling == "mean" else maps.max(axis=(2, 3))
    if pooled.shape != activations.shape or not np.allclose(pooled, activations, rtol=1e-3, atol=1e-3):
        raise ValueError(f"maps of {spatial['model']}/{spatial['layer']} do not pool to the setting's activations")


#: How ``explain_setting`` fits each ``runner`` of :class:`~neuroneval.explain_catalogue.MethodEntry` (and a
#: setting's spatial methods on embedded or external models).
RUNNERS: Mapping[str, Callable[[StepIO, Fitting], pd.DataFrame]] = {
    "truth": _explain_truth, "random": _explain_random, "llm": _explain_llm, "clip_dissect": _explain_clip_dissect,
    "probing": _explain_probing, "captions": _explain_probing, "tokens": _explain_tokens,
    "spatial": _explain_spatial, "external_spatial": _explain_external_spatial,
}


def explain_score(job: StepIO) -> None:
    """``results/explain/scores/<setting>.csv``: every method's explanations simulated on the held-out inputs
    from the ground-truth concept table, or from the setting's own table where ``input.scorer`` names it
    (``scored_on: setting``: pseudo-labels, paper 001 App. B.2) and scored; the truth explanations also on the
    world's ideal units (``input.ideal`` tables, else the truth concepts' labels): the ceiling rows ``ideal``."""
    from neuroneval.explain import read_explanations
    from neuroneval.explain.benchmark import SCORE_KEYS, holdout_mask, score_names, score_setting, unit_groups
    from neuroneval.meta.ideal_units import load_ideal_units
    from neuroneval.settings import load_setting, setting_ids

    setting = job.params.setting
    scorer = Path(getattr(job.input, "scorer", job.input.labels))
    data = load_setting([Path(path) for path in job.input.activations], scorer,
                        concept_prefixes=setting["concepts"].get("prefixes", []))
    ids = setting_ids(job.input.labels)
    held = holdout_mask(len(ids), float(job.params.holdout_fraction), int(job.params.seed))
    truth_table = pd.read_csv(job.input.truth, dtype=str)
    truth = truth_table.groupby("unit")["concept"].apply(list).to_dict()
    explanations = {method: read_explanations(path)
                    for method, path in zip(job.params.methods, job.input.explanations, strict=True)}
    layers = [unit["layer"] for unit in setting["units"]]
    ideal, source = load_ideal_units(job.input.activations, job.input.labels, job.input.labels, truth_table,
                                     ideal_files=getattr(job.input, "ideal", []), concept_prefixes=[])
    print(f"ideal units ({source}): {len(ideal.unit_names)} of {len(data.unit_names)} units")
    scores = score_setting(explanations, data.activations[held].astype(np.float64), data.unit_names,
                           unit_groups(layers, data.unit_names), data.concepts[held].astype(np.float64),
                           data.concept_names, truth, alpha=float(job.params.alpha),
                           ideal=pd.DataFrame(ideal.activations[held].astype(np.float64),
                                              columns=ideal.unit_names))
    scores.insert(0, "setting", job.wildcards.setting)
    scores = scores[[*SCORE_KEYS, *score_names(), "truth_recovered"]]
    io.write_csv(job.output.scores, scores)
    print(scores.groupby(["table", "method"])["simulation_correlation"].mean().round(3).to_string())


def explain_results(job: StepIO) -> None:
    """Tables 1 and 2 and the Table 1 figure from every setting's scores."""
    from neuroneval.explain.benchmark import summary_table
    from neuroneval.figures.results import plot_explain_table

    scores = pd.concat([pd.read_csv(path, dtype={"unit": str}) for path in job.input.scores], ignore_index=True)
    for table_id, path in ((1, job.output.table1), (2, job.output.table2)):
        io.write_csv(path, summary_table(scores, table_id))
    table1 = summary_table(scores, 1)
    plot_explain_table(table1, job.output.figure, title="Simple explanations (l = 1): simulation correlation on "
                       "held-out inputs (paper 001 Table 1)")
    print(table1[["setting", "group", "method", "simulation_correlation_mean", "floor", "ceiling",
                  "truth_recovery"]].round(3).to_string())
