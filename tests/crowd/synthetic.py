"""A synthetic probing set with a planted unit–concept structure, and the whole simulated study, for the crowd tests."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.crowd import (
    AGGREGATION_METHODS,
    SAMPLING_METHODS,
    AggregationOptions,
    CostReductionOptions,
    SamplingOptions,
    SimulationOptions,
    aggregation_study,
    cost_reduction_table,
    sampling_study,
    select_explanations,
)


@dataclass(frozen=True)
class PlantedWorld:
    """Activations (n, K), binary labels (n, C), pseudo-labels (n, C) and the planted concept per unit."""

    activations: np.ndarray
    labels: np.ndarray
    pseudo_labels: np.ndarray
    planted: np.ndarray
    unit_ids: list[str]
    concept_names: list[str]


def planted_world(
    n: int = 10_000, n_classes: int = 40, n_groups: int = 8, n_units: int = 64, seed: int = 0
) -> PlantedWorld:
    """Rare leaf classes (≈0.5–5 % positive) grouped into superclasses; each unit responds to one concept.

    Unit k: a = relu(s_k · c_t + 0.3 · c_other + N(0, 1)) with a random strength s_k, so true correlations
    spread over ≈0.1–0.8. Pseudo-labels are calibrated posteriors P(c = 1 | z) of a noisy detector
    z = 2·(2c − 1) + N(0, 1) given the concept's base rate.
    """
    rng = np.random.default_rng(seed)
    frequencies = rng.dirichlet(np.full(n_classes, 2.0))
    classes = rng.choice(n_classes, size=n, p=frequencies)
    leaf = np.zeros((n, n_classes))
    leaf[np.arange(n), classes] = 1.0
    group_of = np.arange(n_classes) % n_groups
    parent = np.zeros((n, n_groups))
    parent[np.arange(n), group_of[classes]] = 1.0
    labels = np.concatenate([leaf, parent], axis=1)
    names = [f"class:{i}" for i in range(n_classes)] + [f"parent:{g}" for g in range(n_groups)]
    planted = rng.integers(0, labels.shape[1], n_units)
    other = rng.integers(0, labels.shape[1], n_units)
    strength = rng.uniform(0.5, 6.0, n_units)
    drive = labels[:, planted] * strength + 0.3 * labels[:, other] + rng.normal(size=(n, n_units))
    activations = np.maximum(drive, 0.0).astype(np.float32)
    evidence = 2.0 * (2.0 * labels - 1.0) + rng.normal(size=labels.shape)
    base_rate = np.clip(labels.mean(axis=0), 1.0 / n, 1.0 - 1.0 / n)
    log_odds = np.log(base_rate / (1.0 - base_rate)) + 4.0 * evidence
    pseudo = 1.0 / (1.0 + np.exp(-np.clip(log_odds, -50.0, 50.0)))
    return PlantedWorld(
        activations=activations,
        labels=labels,
        pseudo_labels=pseudo,
        planted=planted,
        unit_ids=[f"u{k}" for k in range(n_units)],
        concept_names=names,
    )


def simulated_study_tables(
    activations: np.ndarray,
    labels: np.ndarray,
    pseudo_labels: np.ndarray | None = None,
    *,
    unit_ids: Sequence[str],
    concept_names: Sequence[str] | None = None,
    sample_sizes: Sequence[int],
    costs: Sequence[int],
    rater_counts: Sequence[int],
    n_trials: int,
    n_boot: int,
    max_units: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The whole simulated study in one call: the sampling, aggregation and cost-reduction tables.

    The workflow runs the same library calls as separate steps. Without ``pseudo_labels`` the ``"pseudo"``
    sampling and ``"bayes_pseudo"`` aggregation are dropped and the aggregation study samples by activation.
    """
    units = select_explanations(
        activations, labels, pseudo_labels, unit_ids=unit_ids, concept_names=concept_names, max_units=max_units
    )
    has_pseudo = units.pseudo_labels is not None
    simulation = SimulationOptions(n_trials=n_trials)
    sampling = SamplingOptions(
        sample_sizes=sample_sizes,
        methods=tuple(m for m in SAMPLING_METHODS if has_pseudo or m != "pseudo"),
        simulation=simulation,
    )
    aggregation = AggregationOptions(
        costs=costs,
        rater_counts=rater_counts,
        methods=tuple(m for m in AGGREGATION_METHODS if has_pseudo or m != "bayes_pseudo"),
        sampling="pseudo" if has_pseudo else "activation",
        simulation=simulation,
    )
    sampling_df, sampling_units = sampling_study(units, sampling)
    aggregation_df, aggregation_units = aggregation_study(units, aggregation)
    return sampling_df, aggregation_df, cost_reduction_table(
        sampling_units, aggregation_units, CostReductionOptions(n_boot=n_boot)
    )
