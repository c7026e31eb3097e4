"""The identifiability ceiling of a setting: meta-AUPRC of the world's ideal units (issue "worlds", ceiling.csv).

A setting can only rank metrics if its ground truth is identifiable: the ideal unit of a concept — the world's
``P(c_t | x)`` — must score its own concept above the others. The ceiling scores ideal units exactly like the
models' units (same concepts, truth, validation split and α/λ search, :func:`~neuroneval.meta.evaluate_setting`),
so a low ceiling marks a broken setting, not a finding about metrics. Ideal units are

- ``labels``: the ground-truth label of the unit's concept (a deterministic renderer: ``P(c | x)`` is the
  label). Against ground-truth concepts this is the trivial ceiling 1; against pseudo-labels it measures how
  good the pseudo-labels are;
- ``generative_probability``: the generator's probability of the concept given its latent state, where the
  world is stochastic (next tokens of the text world, :func:`neuroneval.activations.lm.ideal_next_token_table`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from neuroneval.settings import SettingData

IDEAL_SOURCES = ("labels", "generative_probability")


def ideal_units_from_labels(data: SettingData, truth: pd.DataFrame, labels: np.ndarray,
                            label_names: list[str]) -> SettingData:
    """The setting's known units replaced by their ideal units: the label of their concept.

    ``labels`` (n, L) are the ground-truth labels on the setting's inputs (same row order as ``data``) with
    columns ``label_names``. A unit with several known concepts gets the largest of their labels (the union).
    Units without a known concept are dropped (meta-evaluation never scores them). The concepts stay the
    setting's own (labels or pseudo-labels).
    """
    column = {name: index for index, name in enumerate(label_names)}
    unit_concepts: dict[str, list[str]] = {}
    for unit, concept in truth[["unit", "concept"]].itertuples(index=False):
        if concept not in column:
            raise ValueError(f"truth concept {concept!r} of unit {unit!r} is not a column of the label table")
        unit_concepts.setdefault(unit, []).append(concept)
    units = [unit for unit in data.unit_names if unit in unit_concepts]
    if not units:
        raise ValueError("no unit of the setting has a known concept: nothing to build ideal units for")
    ideal = np.stack([labels[:, [column[c] for c in unit_concepts[unit]]].max(axis=1) for unit in units], axis=1)
    return SettingData(activations=np.ascontiguousarray(ideal, dtype=np.float32), unit_names=units,
                       concepts=data.concepts, concept_names=data.concept_names,
                       unit_concepts={unit: unit_concepts[unit] for unit in units})


def ceiling_frame(meta_rows: pd.DataFrame, *, ideal_source: str) -> pd.DataFrame:
    """``results/ceiling/<setting>.csv`` rows from :func:`~neuroneval.meta.evaluate_setting` on ideal units:
    ``setting, metric, ties, meta_auprc, ideal_source`` (the contract) then ``ci_low, ci_high, test_top1`` (share
    of ideal units whose own concept scores highest), ``chance_auprc`` (the floor), ``alpha, lam, test_units``."""
    if ideal_source not in IDEAL_SOURCES:
        raise ValueError(f"ideal_source must be one of {IDEAL_SOURCES}, got {ideal_source!r}")
    frame = meta_rows.rename(columns={"test_auprc": "meta_auprc"})
    frame["ideal_source"] = ideal_source
    return frame[["setting", "metric", "ties", "meta_auprc", "ideal_source", "ci_low", "ci_high", "test_top1",
                  "chance_auprc", "alpha", "lam", "test_units"]]
