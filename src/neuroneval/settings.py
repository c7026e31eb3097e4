"""Settings (docs/design.md §5.1): which activation tables, concept table and ground truth one evaluation uses.

A setting in ``params.yaml`` reads::

    vision_final_gt:
      dataset: vision_probe                      # data/activations/<dataset>/..., data/concepts/<dataset>/...
      units:                                     # activation tables whose columns are concatenated
        - {model: vision_cnn, layer: softmax}
      concepts: {source: labels, prefixes: ["class:"]}   # concept table and which of its columns to use

Unit columns are prefixed with their layer (``softmax.3``) when a setting joins several tables, so names stay
unique. Ground truth comes from the ``unit_concepts`` metadata of each activation table (known units).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.io import check_matching_ids, read_activation_table, read_concept_table, value_matrix

DATA = Path("data")
#: Setting fields that only label it for readers (the worlds and fidelity reports show them); no computation
#: reads them. ``paper_setting`` is the number of the paper 000 Table 4 setting (App. F.2) it stands in for.
DISPLAY_FIELDS = ("description", "paper_setting")


def activation_path(dataset: str, model: str, layer: str, *, root: Path = DATA) -> Path:
    """``data/activations/<dataset>/<model>/<layer>.parquet``."""
    return root / "activations" / dataset / model / f"{layer}.parquet"


def concept_path(dataset: str, source: str, *, root: Path = DATA) -> Path:
    """``data/concepts/<dataset>/<source>.parquet`` (``pseudo:clip`` is stored as ``pseudo-clip``)."""
    return root / "concepts" / dataset / f"{source.replace(':', '-')}.parquet"


def truth_path(setting: str, *, root: Path = DATA) -> Path:
    """``data/truth/<setting>.csv`` with columns ``unit,concept``."""
    return root / "truth" / f"{setting}.csv"


def setting_activation_paths(setting: Mapping[str, Any], *, root: Path = DATA) -> list[Path]:
    """The activation tables a setting reads, in its ``units`` order."""
    return [activation_path(setting["dataset"], unit["model"], unit["layer"], root=root) for unit in setting["units"]]


#: Unit layers whose world has a stochastic ground truth: their ideal units are the generator's probabilities,
#: written as the activation table of the pseudo-model ``ideal`` (``data/activations/<dataset>/ideal/<layer>``).
GENERATIVE_IDEAL_LAYERS = ("next_token",)
IDEAL_MODEL = "ideal"


def ideal_activation_paths(setting: Mapping[str, Any], *, root: Path = DATA, world: str = "text") -> list[Path]:
    """The ideal-unit tables of a setting of the embedded ``world`` whose generator writes them (datasets
    ``<world>_<split>``, rule ``lm_ideal_activations``) and whose units all have a generative ideal (else ``[]``:
    labels are the ideal — also on a user's own text dataset, whose generator nobody knows)."""
    units = setting["units"]
    if setting["dataset"].partition("_")[0] != world:
        return []
    if not units or any(unit["layer"] not in GENERATIVE_IDEAL_LAYERS for unit in units):
        return []
    return sorted({activation_path(setting["dataset"], IDEAL_MODEL, unit["layer"], root=root) for unit in units})


def setting_concept_path(setting: Mapping[str, Any], *, root: Path = DATA) -> Path:
    """The concept table a setting reads."""
    return concept_path(setting["dataset"], setting["concepts"]["source"], root=root)


def setting_knobs(setting: Mapping[str, Any]) -> dict[str, Any]:
    """A setting without its :data:`DISPLAY_FIELDS`: what rules take as a param, so relabelling a setting
    reruns nothing that does not show the label."""
    return {key: value for key, value in setting.items() if key not in DISPLAY_FIELDS}


@dataclass(frozen=True)
class SettingData:
    """Everything the metric engine needs for one setting, aligned on the same inputs."""

    activations: np.ndarray  # (n, K) float32
    unit_names: list[str]
    concepts: np.ndarray  # (n, C) float32
    concept_names: list[str]
    unit_concepts: dict[str, list[str]]  # known concepts of each unit that has any, within the setting


def select_concepts(names: Sequence[str], prefixes: Sequence[str]) -> list[str]:
    """Concept columns starting with one of ``prefixes`` (all columns when ``prefixes`` is empty)."""
    selected = [name for name in names if not prefixes or name.startswith(tuple(prefixes))]
    if not selected:
        raise ValueError(f"no concept column starts with any of {list(prefixes)}")
    return selected


def load_setting(
    activation_files: Sequence[Path], concept_file: Path, *, concept_prefixes: Sequence[str]
) -> SettingData:
    """Read, validate and align a setting's tables (ids must match exactly across all of them)."""
    concept_frame, _ = read_concept_table(concept_file)
    concept_names = select_concepts([c for c in concept_frame.columns if c != "input_id"], concept_prefixes)
    blocks, unit_names, unit_concepts = [], [], {}
    prefix_units = len(activation_files) > 1
    for path in activation_files:
        frame, metadata = read_activation_table(path)
        check_matching_ids(frame, concept_frame, first_source=str(path), second_source=str(concept_file))
        layer = metadata.get("layer", Path(path).stem)
        names = [c for c in frame.columns if c != "input_id"]
        known = metadata.get("unit_concepts", {})
        for name in names:
            full_name = f"{layer}.{name}" if prefix_units and not name.startswith(f"{layer}.") else name
            unit_names.append(full_name)
            concepts_here = [concept for concept in known.get(name, []) if concept in concept_names]
            if concepts_here:
                unit_concepts[full_name] = concepts_here
        blocks.append(value_matrix(frame))
    return SettingData(
        activations=np.concatenate(blocks, axis=1),
        unit_names=unit_names,
        concepts=concept_frame[concept_names].to_numpy(dtype=np.float32),
        concept_names=concept_names,
        unit_concepts=unit_concepts,
    )


def truth_method(setting: Mapping[str, Any]) -> dict[str, Any]:
    """A setting's ``truth`` block with defaults: ``{"method": "known"}`` unless the setting says otherwise."""
    return dict(setting.get("truth", {"method": "known"}))


def iou_truth(data: SettingData, *, alpha: float, prefixes: Sequence[str] = ()) -> dict[str, list[str]]:
    """Each unit's "correct" concept as the one of highest IoU at top-``alpha`` (000 App. F.1, after Bau et al.).

    ``IoU_kt = |B_α(a_k) ∩ B(c_t)| / |B_α(a_k) ∪ B(c_t)|`` over all (unit, concept) pairs at once
    (:func:`neuroneval.metrics.score`); candidates are the concepts starting with ``prefixes`` (all when
    empty). Ties go to the first concept in column order; a unit whose best IoU is 0 overlaps no concept and
    gets no truth. Nor does a degenerate unit (constant or near-dead,
    :func:`neuroneval.metrics.unit_checks.degenerate_units`): top-α binarization marks all its inputs active, so
    its IoU is a concept's positive rate, often the best of the layer; a warning names the units left out.
    """
    from neuroneval.metrics import score
    from neuroneval.metrics.unit_checks import degenerate_units

    candidates = [index for index, name in enumerate(data.concept_names)
                  if not prefixes or name.startswith(tuple(prefixes))]
    if not candidates:
        raise ValueError(f"no concept starts with any of {list(prefixes)}")
    iou = score("iou", data.activations, data.concepts[:, candidates], alpha=alpha)
    best = iou.argmax(axis=1)
    units = degenerate_units(data.activations, data.unit_names)
    units.warn("they get no IoU truth concept", stacklevel=2)
    return {unit: [data.concept_names[candidates[best[row]]]]
            for row, unit in enumerate(data.unit_names) if iou[row, best[row]] > 0 and not units.degenerate[row]}


def setting_truth_pairs(setting: Mapping[str, Any], data: SettingData) -> dict[str, list[str]]:
    """The known (unit → concepts) of a setting, by its truth method (``known`` metadata or ``iou``)."""
    truth = truth_method(setting)
    if truth["method"] == "known":
        return dict(data.unit_concepts)
    if truth["method"] == "iou":
        return iou_truth(data, alpha=float(truth["alpha"]), prefixes=truth.get("prefixes", ()))
    raise ValueError(f"unknown truth method {truth['method']!r} (known | iou)")


def truth_frame(unit_concepts: Mapping[str, Sequence[str]]) -> pd.DataFrame:
    """Ground truth as the ``unit,concept`` table, one row per known pair, in unit order."""
    rows = [(unit, concept) for unit, concepts in unit_concepts.items() for concept in concepts]
    if not rows:
        raise ValueError("no unit of this setting has a known concept among the setting's concepts")
    return pd.DataFrame(rows, columns=["unit", "concept"])



def setting_ids(concept_file: str | Path) -> np.ndarray:
    """The input ids of a setting, in its concept table's order (every table of the setting must follow it)."""
    from neuroneval.io import ID_COLUMN

    frame, _ = read_concept_table(concept_file)
    return frame[ID_COLUMN].to_numpy()


def aligned_concepts(path: str | Path, ids: np.ndarray, names: Sequence[str]) -> tuple[np.ndarray, dict]:
    """The columns ``names`` of a concept table, checked to hold the setting's input ids, and its metadata."""
    from neuroneval.io import ID_COLUMN

    frame, metadata = read_concept_table(path)
    if not np.array_equal(frame[ID_COLUMN].to_numpy(), ids):
        raise ValueError(f"{path}: its input ids differ from the setting's tables")
    missing = [name for name in names if name not in frame.columns]
    if missing:
        raise ValueError(f"{path}: concept columns {missing[:3]} of the setting are missing")
    return frame[list(names)].to_numpy(dtype=np.float64), metadata
