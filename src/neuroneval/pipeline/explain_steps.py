"""Steps of the explanation-method benchmark (issue 15; paper 001 Tables 1–2, App. B.2): explain, score, tabulate.

``explain_setting`` writes ``explanations/<setting>/<method>.csv`` (docs/design.md §2.5) with a method of
:mod:`neuroneval.explain` fitted on the setting's inputs minus a seeded holdout; ``explain_score`` simulates every
explanation on the held-out inputs from the ground-truth concept table and scores it (simulation correlation and
the sanity-passing NeuronEval metrics, :func:`neuroneval.explain.score_explanations`); ``explain_results`` reduces
the scores to Table 1 (simple explanations), Table 2 (l > 1), a figure and the ranking agreement of the scorers.

Method file names: a method of ``explain.methods`` (``compexp``), its length-1 run (``compexp_l1``, for the methods
of ``explain.simple``) and the baselines ``random`` (l concepts, the floor of Table 2), ``random_l1`` (the floor of
Table 1) and ``truth`` (the planted truth on the trained unit, a reference row). The scores and tables add the rows
``ideal``: the truth explanations on the world's ideal units, the ceiling (:mod:`neuroneval.explain.ideal`).
``llm`` (opt-in, ``explain.methods.llm``) asks an OpenAI-compatible chat server; on external image datasets the
spatial methods read the concept masks you supply (:mod:`neuroneval.external.spatial`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO

#: The methods a setting may list (``explain.settings.<name>.methods``; the schema's enum is tested against it).
EXPLAIN_METHODS = ("netdissect", "clip_dissect", "le_label", "le_pseudo", "compexp", "invert", "cce", "captions",
                   "top_tokens", "llm")
#: Methods whose ``max_length`` is ``explain.max_length`` (l of Table 2).
FORMULA_METHODS = ("compexp", "invert", "cce")
#: Methods that give one concept per unit: Table 1 only (top_tokens: one token, ``n_words: 1``).
SIMPLE_METHODS = ("netdissect", "clip_dissect", "top_tokens")
#: Methods that read the pseudo-label table (``explain.pseudo_source``).
PSEUDO_METHODS = ("le_pseudo", "clip_dissect")
#: Methods that read the vision world (captions, or maps and masks).
TEXT_METHODS = ("captions",)
#: Methods that read the text world (the token after each position, named as the LM settings' concepts).
TOKEN_METHODS = ("top_tokens",)
#: Methods that ask a chat server (opt-in: ``explain.methods.llm``; they read the world's captions or text).
LLM_METHODS = ("llm",)
BASELINES = ("random", "random_l1", "truth")
#: The ceiling rows: :data:`neuroneval.explain.ideal.IDEAL`, repeated so that the Snakefile's imports of this module
#: stay light (the explain package loads scipy and scikit-learn; a test checks the two agree).
IDEAL = "ideal"
#: Rows of the scores and tables that are no method: the baselines and the ceiling (never ranked or claimed).
REFERENCE_ROWS = (*BASELINES, IDEAL)
SIMPLE_SUFFIX = "_l1"
#: Columns of the per-unit scores before the scores.
SCORE_KEYS = ["setting", "group", "method", "table", "unit", "kind", "length"]


#: The baselines every CoSy and crowd table scores beside the methods (the floor and ceiling of Table 1).
BENCHMARK_BASELINES = ("random_l1", "truth")


def benchmark_methods(methods: Sequence[str]) -> list[str]:
    """The method files an ``explain.cosy`` or ``explain.crowd`` block scores: its methods, then the two
    baselines (once each)."""
    return list(dict.fromkeys([*methods, *BENCHMARK_BASELINES]))


def benchmark_files(settings: Sequence[str], methods: Sequence[str]) -> list[tuple[str, str]]:
    """(setting, method file) pairs of :func:`benchmark_methods`, settings outermost."""
    return [(setting, method) for setting in settings for method in benchmark_methods(methods)]


def score_columns() -> list[str]:
    """Simulation correlation, then the sanity-passing metrics of :func:`neuroneval.explain.score_explanations`."""
    from neuroneval.explain import SANITY_PASSING_METRICS

    return ["simulation_correlation", *SANITY_PASSING_METRICS]


def base_method(name: str) -> tuple[str, bool]:
    """``("compexp", True)`` for ``compexp_l1``; ``(name, False)`` otherwise (baselines included)."""
    if name.endswith(SIMPLE_SUFFIX) and name != "random_l1":
        return name[: -len(SIMPLE_SUFFIX)], True
    return name, False


def method_files(spec: Mapping[str, Any], simple: Sequence[str]) -> list[str]:
    """The method file names of one explained setting: its methods, their ``_l1`` runs and the baselines."""
    methods = list(spec["methods"])
    return [*methods, *(f"{name}{SIMPLE_SUFFIX}" for name in simple if name in methods), *BASELINES]


def method_tables(name: str) -> tuple[int, ...]:
    """Which of Tables 1 (simple, l = 1) and 2 (l > 1) a method file belongs to (the truth and the ceiling: both)."""
    base, simple = base_method(name)
    if base in ("truth", IDEAL):
        return (1, 2)
    if base == "random_l1" or simple or base in SIMPLE_METHODS or base in TEXT_METHODS or base in LLM_METHODS:
        return (1,)
    return (2,)


def method_options(explain: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The options a method file is made with: ``explain.methods.<method>``, with the formula length
    ``explain.max_length`` (or 1 for an ``_l1`` run); a random baseline's length and seed."""
    base, simple = base_method(name)
    if base in ("random", "random_l1"):
        return {"length": 1 if base == "random_l1" else int(explain["max_length"]), "seed": int(explain["random_seed"])}
    if base == "truth":
        return {}
    options = dict((explain.get("methods") or {}).get(base) or {})
    if base in FORMULA_METHODS:
        options["max_length"] = int(explain["max_length"])
    if simple:
        options["max_length"] = 1
    return options


def unit_groups(layers: Sequence[str], unit_names: Sequence[str]) -> list[str]:
    """Each unit's group: the layer of the activation table it comes from (names are ``<layer>.<unit>`` when a
    setting joins several tables, docs/design.md §2.2)."""
    if len(layers) == 1:
        return [layers[0]] * len(unit_names)
    ordered = sorted(layers, key=len, reverse=True)
    return [next(layer for layer in ordered if name.startswith(f"{layer}.")) for name in unit_names]


def truth_recovered(explanation: Any, truth: Sequence[str]) -> bool:
    """Does an explanation name one of the unit's truth concepts? Text explanations: do all words of one truth
    concept's value (``class:red_circle`` → red, circle) appear among its words?"""
    from neuroneval.explain import Text
    from neuroneval.explain.captions import words_of

    if isinstance(explanation, Text):
        words = set(words_of(explanation.description))
        return any(set(words_of(concept.partition(":")[2].replace("_", " "))) <= words for concept in truth)
    return bool(set(explanation.concepts()) & set(truth))


def pseudo_cosines(concepts: np.ndarray, metadata: Mapping[str, Any], concept_names: Sequence[str]) -> np.ndarray:
    """The image–text cosines behind a pseudo-label table ``c_t = σ(a_t·(cos − b_t))``: ``cos = b_t + logit(c_t)/a_t``
    (values are clipped away from 0 and 1 first; ``a_t``, ``b_t`` shared or per concept, see
    :func:`~neuroneval.concepts.pseudo.calibration_vectors`), for CLIP-Dissect without re-embedding the images."""
    from scipy.special import logit

    from neuroneval.concepts.pseudo import calibration_vectors

    slopes, offsets = calibration_vectors(metadata, concept_names)
    clipped = np.clip(np.asarray(concepts, dtype=np.float64), 1e-7, 1 - 1e-7)
    return offsets + logit(clipped) / slopes


def aligned_concepts(path: str | Path, ids: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, dict]:
    """The columns ``names`` of a concept table, checked to hold the setting's input ids, and its metadata."""
    frame, metadata = io.read_concept_table(path)
    if not np.array_equal(frame[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{path}: its input ids differ from the setting's tables")
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise ValueError(f"{path}: concept columns {missing[:3]} of the setting are missing")
    return frame[list(names)].to_numpy(dtype=np.float64), metadata


def setting_ids(concept_file: str | Path) -> np.ndarray:
    """The input ids of a setting, in its concept table's order (every table of the setting must follow it)."""
    frame, _ = io.read_concept_table(concept_file)
    return frame[io.ID_COLUMN].to_numpy()


def spatial_maps(checkpoint: str | Path, images: np.ndarray, layer: str, batch_size: int,
                 pooling: str = "mean") -> tuple[np.ndarray, np.ndarray]:
    """Module ``layer`` of a world classifier on ``images``: its unpooled outputs as (N, C, h, w) float32 maps
    (a CNN's channel maps; a ViT's patch tokens on the patch grid, :func:`~neuroneval.activations.extract.
    spatial_grid`) and the outputs pooled as the activation tables pool them (N, C) (a ViT: class token
    included), to check the maps against the setting's table."""
    import torch

    from neuroneval.activations.extract import pool, spatial_grid
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor

    model, _ = load_checkpoint(checkpoint)
    modules = dict(model.named_modules())
    if layer not in modules or not layer:
        raise ValueError(f"explain spatial layer {layer!r} is not a module of {checkpoint}")
    maps: list[np.ndarray] = []
    pooled: list[np.ndarray] = []
    prefix = int(getattr(model, "num_prefix_tokens", 0))

    def record(_module: Any, _inputs: Any, output: Any) -> None:
        maps.append(spatial_grid(output.float().cpu().numpy(), prefix))
        pooled.append(pool(output.float(), pooling).cpu().numpy())

    handle = modules[layer].register_forward_hook(record)
    try:
        with torch.no_grad():
            for start in range(0, len(images), batch_size):
                model(images_to_tensor(images[start : start + batch_size]))
    finally:
        handle.remove()
    return np.concatenate(maps), np.concatenate(pooled)


def explain_setting(job: StepIO) -> None:
    """``explanations/<setting>/<method>.csv``: one method (or baseline) on the setting's fitting inputs."""
    from neuroneval.explain import (
        ClipDissectOptions,
        ProbingData,
        RandomOptions,
        clip_dissect,
        explain,
        random_explanations,
        truth_explanations,
        write_explanations,
    )
    from neuroneval.explain.benchmark import holdout_mask
    from neuroneval.explain.concept_sets import method_concept_prefixes
    from neuroneval.settings import load_setting

    setting, spec, name = job.params.setting, job.params.spec, job.wildcards.method
    options = dict(job.params.options)
    base, _ = base_method(name)
    prefixes = method_concept_prefixes(base, setting["concepts"].get("prefixes", []), spec.get("method_concepts"),
                                       setting=job.wildcards.setting)
    data = load_setting([Path(path) for path in job.input.activations], Path(job.input.concepts),
                        concept_prefixes=prefixes)
    ids = setting_ids(job.input.concepts)
    fit = ~holdout_mask(len(ids), float(job.params.holdout_fraction), int(job.params.seed))
    names, units = data.concept_names, data.unit_names
    if base == "truth":
        frame = truth_explanations(pd.read_csv(job.input.truth, dtype=str), unit_names=units)
    elif base in ("random", "random_l1"):
        frame = random_explanations(units, names, RandomOptions.from_params(options))
    elif base in LLM_METHODS:
        frame = _explain_llm(job, data, ids, fit, options)
    else:
        concepts = data.concepts.astype(np.float64)
        if base == "le_label":
            concepts, _ = aligned_concepts(job.input.labels, ids, names)
        elif base in PSEUDO_METHODS:
            concepts, pseudo_metadata = aligned_concepts(job.input.pseudo, ids, names)
        activations = data.activations[fit].astype(np.float64)
        spatial = spec.get("spatial") or {}
        if base == "clip_dissect":
            frame = clip_dissect(activations, pseudo_cosines(concepts, pseudo_metadata, names)[fit], names,
                                 ClipDissectOptions.from_params(options), unit_names=units)
        elif base in spatial.get("methods", []) and getattr(job.params, "external", None):
            frame = _explain_external_spatial(job, data, ids, fit, base, options, spatial)
        elif base in spatial.get("methods", []):
            frame = _explain_spatial(job, data, ids, fit, base, options, spatial)
        elif base in TOKEN_METHODS:
            frame = _explain_tokens(job.input.world, ids[fit], activations, concepts[fit], names, options, units)
        else:
            captions = None
            if base in TEXT_METHODS:
                captions = _world_captions(job.input.world, ids)
                captions = [captions[row] for row in np.flatnonzero(fit)]
            probing = ProbingData.build(concepts[fit], names, captions=captions)
            frame = explain(base, activations, probing, options, unit_names=units)
    write_explanations(job.output.explanations, frame)
    print(f"{job.wildcards.setting}/{name}: {len(frame)} units, kinds {frame['kind'].value_counts().to_dict()}")


def _world_captions(world_dir: str | Path, ids: np.ndarray) -> list[str]:
    captions = pd.read_csv(Path(world_dir) / "captions.csv", keep_default_na=False, dtype={"caption": str})
    if not np.array_equal(captions[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{world_dir}: the world's input ids differ from the setting's tables")
    return captions["caption"].tolist()


def _explain_tokens(world_dir: str | Path, positions: np.ndarray, activations: np.ndarray, concepts: np.ndarray,
                    names: Sequence[str], options: Mapping[str, Any], units: Sequence[str]) -> pd.DataFrame:
    """``top_tokens``: the next token (``next:<word>``, as the LM settings' concepts) most over-represented at each
    unit's top-activating probe positions (the LM settings' input ids are positions of the text world's stream)."""
    from neuroneval.explain import CaptionOptions, ProbingData
    from neuroneval.explain.tokens import top_token_concept_explanations
    from neuroneval.worlds.text import load_text_world, next_token_names

    world = load_text_world(Path(world_dir))
    probing = ProbingData.build(concepts, names, tokens=next_token_names(world.token_ids, world.vocabulary, positions))
    return top_token_concept_explanations(activations, probing, CaptionOptions.from_params(options), unit_names=units)


def llm_contexts(world_dir: str | Path, ids: np.ndarray, n_tokens: int) -> list[str]:
    """What the LLM explainer shows of each input: a vision world's captions (``captions.csv``), or for a text
    world the ``n_tokens`` tokens up to each position (the input ids of next-token tables are stream positions)."""
    from neuroneval.explain.llm_backend import position_contexts
    from neuroneval.worlds.text import load_text_world

    if (Path(world_dir) / "captions.csv").exists():
        return _world_captions(world_dir, ids)
    world = load_text_world(Path(world_dir))
    return position_contexts(world.token_ids, world.doc_offsets, world.vocabulary, ids, n_tokens)


def _explain_llm(job: StepIO, data: Any, ids: np.ndarray, fit: np.ndarray,
                 options: Mapping[str, Any]) -> pd.DataFrame:
    """The LLM explainer (``explain.methods.llm``) on the fitting inputs' contexts; an unreachable or failing
    server is an error naming the setting and the URL."""
    from neuroneval.explain import LLMOptions, ProbingData
    from neuroneval.explain.llm_backend import LLMError, llm_explanations

    llm = LLMOptions.from_params(options)
    rows = np.flatnonzero(fit)
    contexts = llm_contexts(job.input.world, ids, llm.context_tokens)
    probing = ProbingData.build(data.concepts[rows], data.concept_names, contexts=[contexts[r] for r in rows])
    try:
        return llm_explanations(data.activations[rows].astype(np.float64), probing, llm, unit_names=data.unit_names)
    except LLMError as error:
        raise LLMError(f"explain setting {job.wildcards.setting!r}, method llm: the chat server at {llm.base_url} "
                       f"(explain.methods.llm.base_url) failed: {error}") from error


def _explain_spatial(job: StepIO, data: Any, ids: np.ndarray, fit: np.ndarray, method: str,
                     options: Mapping[str, Any], spatial: Mapping[str, Any]) -> pd.DataFrame:
    """A method on the first ``max_inputs`` fitting inputs' spatial maps (CNN channel maps or ViT patch-token
    grids, :func:`spatial_maps`) against the world's concept masks; the layer's outputs are checked to pool to
    the setting's activation table (same model, layer and unit order)."""
    from neuroneval.explain import ProbingData, explain
    from neuroneval.worlds import concept_mask, load_vision_world

    world = load_vision_world(Path(job.input.world))
    if not np.array_equal(world.labels[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{job.input.world}: the world's input ids differ from the setting's tables")
    rows = np.flatnonzero(fit)[: int(spatial["max_inputs"])]
    maps, pooled = spatial_maps(job.input.checkpoint, world.images[rows], spatial["layer"],
                                int(job.params.batch_size), job.params.pooling)
    if pooled.shape[1] != len(data.unit_names) or not np.allclose(pooled, data.activations[rows], atol=1e-3):
        raise ValueError(f"maps of {spatial['model']}/{spatial['layer']} do not pool to the setting's activations")
    masks = np.stack([concept_mask(world, name)[rows] for name in data.concept_names], axis=1)
    probing = ProbingData.build(data.concepts[rows], data.concept_names, masks=masks)
    print(f"spatial {method}: maps {maps.shape}, masks {masks.shape}")
    return explain(method, maps, probing, options, unit_names=data.unit_names)


def _explain_external_spatial(job: StepIO, data: Any, ids: np.ndarray, fit: np.ndarray, method: str,
                              options: Mapping[str, Any], spatial: Mapping[str, Any]) -> pd.DataFrame:
    """A method on the spatial maps of an external model (``spatial.model``, ``spatial.layer``) against the
    concept masks you supplied (``external.datasets.<name>.masks``, :mod:`neuroneval.external.spatial`): the
    first ``max_inputs`` fitting images that have masks, the setting's concepts that have masks."""
    from neuroneval.explain import ProbingData, explain
    from neuroneval.external.config import loader_spec
    from neuroneval.external.image_datasets import image_paths
    from neuroneval.external.images import image_batches, resolve_device
    from neuroneval.external.spatial import layer_maps, load_concept_masks
    from neuroneval.models.loaders import load_model

    external = job.params.external
    inputs = pd.read_csv(job.input.inputs)
    if not np.array_equal(inputs[io.ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{job.input.inputs}: the dataset's input ids differ from the setting's tables")
    fitting = np.flatnonzero(fit)
    masks = load_concept_masks(job.input.masks, files=inputs["path"].astype(str).to_numpy()[fitting].tolist(),
                               concept_names=data.concept_names, key=external["masks_key"])
    keep = slice(0, int(spatial["max_inputs"]))
    rows, mask_array = fitting[masks.rows[keep]], masks.masks[keep]
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
    return explain(method, maps, probing, options, unit_names=data.unit_names)


def _check_pooled(maps: np.ndarray, activations: np.ndarray, spatial: Mapping[str, Any], pooling: str) -> None:
    """The maps must pool to the setting's activation table (same model, layer and unit order)."""
    pooled = maps.mean(axis=(2, 3)) if pooling == "mean" else maps.max(axis=(2, 3))
    if pooled.shape != activations.shape or not np.allclose(pooled, activations, rtol=1e-3, atol=1e-3):
        raise ValueError(f"maps of {spatial['model']}/{spatial['layer']} do not pool to the setting's activations")


def score_setting(explanations: Mapping[str, pd.DataFrame], activations: np.ndarray, unit_names: Sequence[str],
                  groups: Sequence[str], concepts: np.ndarray, concept_names: Sequence[str],
                  truth: Mapping[str, Sequence[str]], *, alpha: float,
                  ideal: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-unit scores of every method's explanations on held-out inputs (``SCORE_KEYS`` + ``score_columns()`` +
    ``truth_recovered``; :func:`neuroneval.explain.benchmark.source_scores`, as ``neuroneval evaluate`` scores).

    With ``ideal`` (the world's ideal units on the same inputs, one column per unit) the ``truth`` explanations are
    also scored on them: the rows of method :data:`IDEAL`, the ceiling (:mod:`neuroneval.explain.ideal`)."""
    from neuroneval.explain.benchmark import source_scores
    from neuroneval.explain.ideal import ideal_scores
    from neuroneval.metrics import TopAlphaOptions

    group_of = dict(zip(unit_names, groups, strict=True))
    table = pd.DataFrame(activations, columns=list(unit_names))
    options = TopAlphaOptions(alpha=alpha)
    parts = []
    for method, frame in explanations.items():
        frame = frame.reset_index(drop=True)
        scored = source_scores(frame, table, concepts, concept_names, options=options, source=method)
        parts += _method_rows(method, frame, scored, group_of, truth)
    if ideal is not None and "truth" in explanations:
        frame = explanations["truth"]
        frame = frame[frame["unit"].astype(str).isin(set(ideal.columns.astype(str)))].reset_index(drop=True)
        scored = ideal_scores(frame, ideal, concepts, concept_names, options=options)
        parts += _method_rows(IDEAL, frame, scored, group_of, truth)
    parts += _oracle_rows(table, concepts, group_of, options)
    return pd.concat(parts, ignore_index=True)


def _oracle_rows(activations: pd.DataFrame, concepts: np.ndarray, group_of: Mapping[str, str],
                 options: Any) -> list[pd.DataFrame]:
    """Rows of method :data:`~neuroneval.explain.oracle.ORACLE` (both tables): the exact best score any explanation
    reaches on each unit (:func:`neuroneval.explain.benchmark.optimum_scores`), where the concepts are one
    categorical variable (the LM's next tokens, the class units' classes); none otherwise."""
    from neuroneval.explain.benchmark import optimum_scores
    from neuroneval.explain.oracle import ORACLE

    scores = optimum_scores(activations, concepts, options=options)
    if scores is None:
        return []
    scores = scores.assign(kind="oracle", length=np.nan, group=[group_of[unit] for unit in scores["unit"]],
                           method=ORACLE, truth_recovered=np.nan)
    return [scores.assign(table=table_id) for table_id in (1, 2)]


def reference_rows() -> tuple[str, ...]:
    """Methods of the score tables that are no method: :data:`REFERENCE_ROWS` and the exact optimum
    (:data:`neuroneval.explain.oracle.ORACLE`)."""
    from neuroneval.explain.oracle import ORACLE

    return (*REFERENCE_ROWS, ORACLE)


def _method_rows(method: str, frame: pd.DataFrame, scored: pd.DataFrame, group_of: Mapping[str, str],
                 truth: Mapping[str, Sequence[str]]) -> list[pd.DataFrame]:
    """One method's per-unit rows (every unit of ``frame``, with ``scored``'s scores where it has them), once per
    table of :func:`method_tables`."""
    from neuroneval.explain import parse

    scores = pd.DataFrame({"unit": frame["unit"].astype(str)})
    scores = scores.merge(scored.drop(columns=["kind", "length"], errors="ignore"), on="unit", how="left")
    scores = scores.reindex(columns=["unit", *score_columns()])
    scores["kind"] = frame["kind"].to_numpy()
    scores["length"] = frame["length"].to_numpy()
    scores["group"] = [group_of[unit] for unit in scores["unit"]]
    scores["method"] = method
    recovered = [float(truth_recovered(parse(text, kind), truth[unit])) if unit in truth else np.nan
                 for unit, text, kind in zip(frame["unit"].astype(str), frame["explanation"], frame["kind"],
                                             strict=True)]
    scores["truth_recovered"] = recovered
    return [scores.assign(table=table_id) for table_id in method_tables(method)]


def explain_score(job: StepIO) -> None:
    """``results/explain/scores/<setting>.csv``: every method's explanations simulated on the held-out inputs
    from the ground-truth concept table, or from the setting's own table where ``input.scorer`` names it
    (``scored_on: setting``: pseudo-labels, paper 001 App. B.2) and scored; the truth explanations also on the
    world's ideal units (``input.ideal`` tables, else the truth concepts' labels): the ceiling rows ``ideal``."""
    from neuroneval.explain import read_explanations
    from neuroneval.explain.benchmark import holdout_mask
    from neuroneval.meta.ideal_units import load_ideal_units
    from neuroneval.settings import load_setting

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
    scores = scores[[*SCORE_KEYS, *score_columns(), "truth_recovered"]]
    io.write_csv(job.output.scores, scores)
    print(scores.groupby(["table", "method"])["simulation_correlation"].mean().round(3).to_string())


def summary_table(scores: pd.DataFrame, table_id: int) -> pd.DataFrame:
    """Table 1 or 2: per (setting, group, method) the mean ± standard error of every score over units, the
    truth-recovery rate on units with truth, and the floor (random), ceiling (:data:`IDEAL`: the truth on the
    world's ideal units) and optimum (:data:`~neuroneval.explain.oracle.ORACLE`: the best any explanation reaches on
    the units, NaN where the concepts are not one categorical variable) simulation correlation beside every row."""
    from neuroneval.explain.oracle import ORACLE

    part = scores[scores["table"] == table_id]
    rows = []
    for (setting, group, method), frame in part.groupby(["setting", "group", "method"], sort=False):
        row: dict[str, Any] = {"setting": setting, "group": group, "method": method,
                               "kind": "/".join(sorted(frame["kind"].unique())), "n_units": len(frame),
                               "mean_length": frame["length"].mean()}
        for column in score_columns():
            values = frame[column].dropna()
            row[f"{column}_mean"] = values.mean() if len(values) else np.nan
            row[f"{column}_se"] = values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else np.nan
        recovered = frame["truth_recovered"].dropna()
        row["truth_recovery"] = recovered.mean() if len(recovered) else np.nan
        row["n_truth_units"] = len(recovered)
        rows.append(row)
    table = pd.DataFrame(rows)
    floor_name = "random_l1" if table_id == 1 else "random"
    for column, method in (("floor", floor_name), ("ceiling", IDEAL), ("optimum", ORACLE)):
        reference = table[table["method"] == method].set_index(["setting", "group"])["simulation_correlation_mean"]
        table[column] = [reference.get((s, g), np.nan) for s, g in zip(table["setting"], table["group"], strict=True)]
    return table


def method_agreement(scores: pd.DataFrame, table_id: int, metrics: Sequence[str], *, n_boot: int,
                     ci_level: float, seed: int) -> pd.DataFrame:
    """Kendall τ between the method rankings by mean simulation correlation and by each metric, per setting and
    pooled over settings (the methods every setting has), with a percentile bootstrap interval over units."""
    from neuroneval.explain.agreement import ranking_agreement

    part = scores[(scores["table"] == table_id) & ~scores["method"].isin(reference_rows())
                  & (scores["kind"] != "text")]
    scopes = [(str(setting), frame) for setting, frame in part.groupby("setting", sort=False)]
    common = set.intersection(*(set(frame["method"]) for _, frame in scopes)) if scopes else set()
    scopes.append(("all", part[part["method"].isin(common)]))
    rows = []
    for scope, frame in scopes:
        wide = {column: frame.pivot_table(index=["setting", "unit"], columns="method", values=column)
                for column in ("simulation_correlation", *metrics)}
        reference = wide["simulation_correlation"].dropna()
        for metric in metrics:
            other = wide[metric].reindex(index=reference.index, columns=reference.columns).to_numpy()
            value, low, high = ranking_agreement(reference.to_numpy(), other, n_boot=n_boot, ci_level=ci_level,
                                                 seed=seed)
            rows.append({"table": table_id, "setting": scope, "reference": "simulation_correlation",
                         "metric": metric, "n_methods": reference.shape[1],
                         "n_units": reference.shape[0], "tau": value, "ci_low": low, "ci_high": high,
                         "n_boot": n_boot, "ci_level": ci_level, "seed": seed})
    return pd.DataFrame(rows)


def explain_results(job: StepIO) -> None:
    """Tables 1 and 2 and the Table 1 figure from every setting's scores."""
    from neuroneval.figures.results import plot_explain_table

    scores = pd.concat([pd.read_csv(path, dtype={"unit": str}) for path in job.input.scores], ignore_index=True)
    for table_id, path in ((1, job.output.table1), (2, job.output.table2)):
        io.write_csv(path, summary_table(scores, table_id))
    table1 = summary_table(scores, 1)
    plot_explain_table(table1, job.output.figure, title="Simple explanations (l = 1): simulation correlation on "
                       "held-out inputs (paper 001 Table 1)")
    print(table1[["setting", "group", "method", "simulation_correlation_mean", "floor", "ceiling",
                  "truth_recovery"]].round(3).to_string())
