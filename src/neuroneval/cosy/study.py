"""CoSy's evaluation of one generator's images: every explanation of every setting, all per-generator tables.

For each CoSy setting (one activation table of one classifier) the units' activations on the setting's control
images (its probing set) are compared with their activations on the synthetic images of each explanation
(paper 002 Sec. 3: AUC Eq. 3, MAD Eq. 4), giving:

* ``scores``      every (unit, explanation) pair: AUC, MAD, p-value (:func:`neuroneval.cosy.evaluation.score_table`);
* ``natural``     the same against natural images of the explained concept (App. A.3);
* ``seeds``       per-seed scores and the intraclass similarity of the images (Table 8);
* ``generative``  the generative metrics of the ``generative:`` block (vision-world settings it names);
* ``templates``   the prompt-template study (Fig. 2), once, on the first vision-world setting;
* ``samples``     a few units' activations on control, true and random images (the distribution figure).

World classifiers see the synthetic images resized to the world's size, external classifiers through their own
preprocessing; your own models (``family: custom``) are run on them beforehand (rule ``cosy_custom_units``: their
declared ``preprocess``, then recorded as their control inputs were) and their table is read here. The template
study and Table 8's intraclass similarity embed images with the tiny CLIP and compare with the vision world's
natural images, so they run for vision-world settings only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.concepts.threshold import concept_positive
from neuroneval.cosy.evaluation import (
    EXPLANATION_COLUMNS,
    generative_table,
    natural_table,
    sample_table,
    score_table,
    seed_table,
    template_table,
)
from neuroneval.cosy.options import CosyOptions
from neuroneval.metrics import WpmiOptions

#: The per-generator tables :func:`evaluate_generator` returns (and the workflow merges across generators).
GENERATOR_TABLES = ("scores", "natural", "templates", "seeds", "generative", "samples")
#: What runs a CoSy setting's units on the synthetic images: ``world`` a classifier trained in the workflow on the
#: vision world, ``external`` a classifier of ``external.models`` loaded from its spec, ``custom`` your own model
#: (``family: custom``), whose activations on the images rule ``cosy_custom_units`` recorded beforehand.
UnitKind = Literal["world", "external", "custom"]
UNIT_KINDS: tuple[str, ...] = get_args(UnitKind)


@dataclass(frozen=True)
class SettingUnits:
    """One CoSy setting's units: which model runs them on the synthetic images, and where their tables lie.

    Attributes
    ----------
    kind
        The :data:`UnitKind` of the model: ``world``, ``external`` or ``custom``.
    model, layer
        The model (a key of ``models`` or ``external.models``) and the layer whose units are explained.
    activations
        The units' activation table on the setting's inputs; its first ``cosy.n_control`` rows are the control
        images.
    concepts
        The concept table of the same inputs (the labels of the explained concepts).
    checkpoint
        A ``world`` classifier's checkpoint; None for the other kinds.
    synthetic
        A ``custom`` model's activation table on the manifest's images, one row per image in manifest order
        (:func:`~neuroneval.cosy.activations.custom_units`); None for the other kinds.
    """

    kind: UnitKind
    model: str
    layer: str
    activations: Path
    concepts: Path
    checkpoint: Path | None = None
    synthetic: Path | None = None

    def __post_init__(self) -> None:
        if self.kind not in UNIT_KINDS:
            raise ValueError(f"SettingUnits.kind of model {self.model!r} must be one of {list(UNIT_KINDS)}, "
                             f"got {self.kind!r}")
        needed = {"world": "checkpoint", "custom": "synthetic"}.get(self.kind)
        if needed is not None and getattr(self, needed) is None:
            raise ValueError(f"SettingUnits of model {self.model!r}: a {self.kind} setting needs its {needed} path")


def read_explanation_table(path: str | Path) -> pd.DataFrame:
    """Read CoSy's explanations (``data/cosy/explanations.csv``: setting, unit, method, concept, explanation);
    ``ValueError`` naming the file and the missing columns, or the row of an empty explanation."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in EXPLANATION_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; expected {EXPLANATION_COLUMNS}")
    empty = frame.index[frame["explanation"].str.strip() == ""]
    if len(empty):
        raise ValueError(f"{path}, row {int(empty[0]) + 2}: empty explanation")
    return frame


def evaluate_generator(explanations: pd.DataFrame, manifest: pd.DataFrame, image_root: Path,
                       settings: Mapping[str, SettingUnits], options: CosyOptions, *, generator: str,
                       extraction: Mapping[str, Any], world: Any = None, clip_file: str | Path | None = None,
                       external: Mapping[str, Any] | None = None) -> dict[str, pd.DataFrame]:
    """The :data:`GENERATOR_TABLES` of one generator (see the module docstring).

    ``settings``: each CoSy setting's units by setting name (:class:`SettingUnits`: which model runs them, where
    its activation, concept and synthetic tables lie); ``options``: the ``cosy:`` block; ``extraction``: the
    ``activations:`` block (batch size, pooling); ``world``: the vision world of the world settings (their control
    set) with ``clip_file`` the tiny CLIP that embeds images, or ``None`` when no setting is on the vision world.
    """
    from neuroneval.cosy.synthesis import load_images, resize_images

    external = dict(external or {})
    template = options.template
    tables: dict[str, list[pd.DataFrame]] = {name: [] for name in GENERATOR_TABLES}
    world_images = embeddings = None
    if world is not None:
        world_images = resize_images(load_images(image_root, manifest["path"].tolist()), world.images.shape[1])
        embeddings = _clip_embeddings(clip_file, world_images)
    templates_done = world is None

    for name, units in settings.items():
        subset = explanations[explanations["setting"] == name]
        if subset.empty:
            continue
        frame, _ = io.read_activation_table(units.activations)
        labels, _ = io.read_concept_table(units.concepts)
        io.check_matching_ids(frame, labels, first_source=str(units.activations), second_source=str(units.concepts))
        if options.n_control is not None:
            frame, labels = frame.iloc[: int(options.n_control)], labels.iloc[: int(options.n_control)]
        unit_names = [column for column in frame.columns if column != io.ID_COLUMN]
        control = io.value_matrix(frame).astype(np.float64)
        synthetic, synthetic_names = _synthetic_units(
            units, image_root, manifest["path"].tolist(), world_images=world_images,
            hierarchy=world.hierarchy if world is not None else {}, external=external, extraction=extraction)
        if list(synthetic_names) != unit_names:
            raise ValueError(f"{units.activations}: units {unit_names[:3]}... differ from the model's "
                             f"{list(synthetic_names)[:3]}...")
        synthetic = synthetic.astype(np.float64)
        true_concepts = subset[subset["method"] == "true"].set_index("unit")["concept"]
        target = {unit: concept_positive(labels[true_concepts[unit]].to_numpy()) for unit in true_concepts.index}
        shared = {"unit_names": unit_names, "control": control, "target_labels": target, "synthetic": synthetic,
                  "manifest": manifest, "generator": generator}
        tables["scores"].append(score_table(subset, template=template, **shared))
        tables["natural"].append(natural_table(subset, template=template, **shared))
        tables["seeds"].append(seed_table(subset, seeds=options.seeds, template=template,
                                          synthetic_embeddings=embeddings, **shared))
        generative = options.generative
        if name in generative.settings:
            tables["generative"].append(generative_table(
                subset, template=template, metrics=generative.metrics,
                options=WpmiOptions(alpha=float(generative.alpha), lam=float(generative.lam)), **shared))
        if not templates_done and units.kind == "world":
            tables["templates"].append(template_table(
                subset, templates=options.templates, manifest=manifest, synthetic_embeddings=embeddings,
                natural_embeddings=_natural_embeddings(clip_file, world, subset, int(options.templates.n_natural)),
                generator=generator))
            templates_done = True
        tables["samples"].append(sample_table(
            subset, distributions=options.distributions, template=template, unit_names=unit_names, control=control,
            synthetic=synthetic, manifest=manifest, generator=generator))

    return {table: pd.concat(parts, ignore_index=True) if (parts := [p for p in tables[table] if not p.empty])
            else pd.DataFrame() for table in GENERATOR_TABLES}


def template_summary(templates: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2's numbers per (generator, template, prompt pattern): mean and std of the cosine between synthetic
    and natural images, mean intraclass cosine, number of concepts (empty in, empty out)."""
    if templates.empty:
        return templates
    return (templates.groupby(["generator", "template", "prompt_pattern"], sort=False)
            .agg(cosine_to_natural_mean=("cosine_to_natural", "mean"),
                 cosine_to_natural_std=("cosine_to_natural", "std"),
                 intraclass_cosine_mean=("intraclass_cosine", "mean"), n_concepts=("concept", "nunique"))
            .reset_index())


def _clip_embeddings(clip_file: str | Path | None, images: np.ndarray) -> np.ndarray:
    from neuroneval.models.clip import embed_images, load_clip

    model, _, _ = load_clip(clip_file)
    return embed_images(model, images)


def _synthetic_units(units: SettingUnits, image_root: Path, image_paths: Sequence[str], *,
                     world_images: np.ndarray | None, hierarchy: Mapping[str, Sequence[str]],
                     external: Mapping[str, Any], extraction: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """A setting's units on the synthetic images: world classifiers see them resized to the world's size,
    external classifiers through their own preprocessing."""
    from neuroneval.cosy.activations import classifier_units, external_units
    from neuroneval.cosy.synthesis import load_images

    if units.kind == "world":
        return classifier_units(units.checkpoint, world_images, layer=units.layer, hierarchy=hierarchy,
                                batch_size=int(extraction["batch_size"]), pooling=extraction["pooling"])
    if units.kind == "custom":
        return _custom_synthetic_units(units.synthetic, len(image_paths))
    from neuroneval.external.config import model_spec

    _, concept_metadata = io.read_concept_table(units.concepts)
    return external_units(model_spec(external, units.model), load_images(image_root, image_paths),
                          layer=units.layer, concept_metadata=concept_metadata,
                          batch_size=int(external.get("batch_size", 64)), pooling=extraction["pooling"],
                          device=str(external.get("device", "auto")))


def _custom_synthetic_units(table: Path, n_images: int) -> tuple[np.ndarray, list[str]]:
    """Your own model's units on the synthetic images: the ``table`` recorded by
    :func:`neuroneval.cosy.activations.custom_units` (one row per manifest row, in its order)."""
    frame, _ = io.read_activation_table(table)
    if len(frame) != n_images or not np.array_equal(frame[io.ID_COLUMN].to_numpy(), np.arange(n_images)):
        raise ValueError(f"{table}: expected the {n_images} images of the manifest as input_id "
                         f"0..{n_images - 1}, got {len(frame)} rows; record them again")
    unit_names = [column for column in frame.columns if column != io.ID_COLUMN]
    return io.value_matrix(frame), unit_names


def _natural_embeddings(clip_file: str | Path | None, world: Any, explanations: pd.DataFrame,
                        n_natural: int) -> dict[str, np.ndarray]:
    """Tiny-CLIP embeddings of the first ``n_natural`` world images of each explained concept."""
    embeddings = {}
    for concept in sorted(set(explanations["concept"])):
        positive = np.flatnonzero(concept_positive(world.labels[concept].to_numpy()))[:n_natural]
        if len(positive):
            embeddings[concept] = _clip_embeddings(clip_file, world.images[positive])
    return embeddings
