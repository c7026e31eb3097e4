"""Meta-evaluation of one setting: every metric's meta-AUPRC with α/λ chosen on validation units (000 Sec. 5).

One function serves Table 4 (the setting's model units) and the identifiability ceiling (the world's ideal
units scored against the same concepts): both must be evaluated the same way for the ceiling to bound them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.meta.auprc import truth_mask
from neuroneval.meta.search import evaluate_metric, scoring_order, split_units
from neuroneval.metrics import FeatureCache, MetricOptions
from neuroneval.metrics.ties import TIES, TieMode
from neuroneval.metrics.unit_checks import warn_small_probe_set
from neuroneval.options import Options, OptionsError, check_choice, check_fraction, check_range
from neuroneval.progress import progress_bar
from neuroneval.settings import SettingData


@dataclass(frozen=True)
class MetaOptions(Options):
    """The ``meta:`` block of ``params.yaml`` without ``settings`` (validated by the schema), as the library takes
    it: the metrics compared, the α and λ grids searched on validation units (000 Sec. 5), the tie mode, the
    validation split (``val_fraction`` of the known units, at least ``min_val_units``; ``seed``), the unit-feature
    cache and the bootstrap of meta-AUPRC's interval (``n_boot`` resamples at ``ci_level``).

    The defaults are the ``meta:`` block of the shipped ``params.yaml`` (docs/design.md §4.4; a test keeps them
    equal): Table 4's 18 metrics, α from 1e-4 to 0.5, λ from 0 to 1 in steps of 0.01, at least 10 validation
    units, 200 bootstrap resamples. An empty ``metrics`` is an error, not an empty table."""

    metrics: tuple[str, ...] = (
        "recall", "precision", "f1", "iou", "accuracy", "balanced_accuracy", "inverse_balanced_accuracy", "auc",
        "inverse_auc", "correlation", "correlation_tr", "spearman", "spearman_tr", "cosine", "wpmi", "mad", "auprc",
        "inverse_auprc")
    alpha_grid: tuple[float, ...] = (0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5)
    lam_grid: tuple[float, ...] = tuple(round(step / 100, 2) for step in range(101))
    ties: TieMode = "average"
    val_fraction: float = 0.05
    min_val_units: int = 10
    seed: int = 0
    feature_cache_gib: float = 4.0
    n_boot: int = 200
    ci_level: float = 0.95

    def validate(self) -> None:
        # grids as floats whatever YAML wrote (0 vs 0.0): they are written into the result tables
        for grid in ("alpha_grid", "lam_grid"):
            object.__setattr__(self, grid, tuple(float(value) for value in getattr(self, grid)))
        object.__setattr__(self, "metrics", tuple(self.metrics))
        if not self.metrics:
            raise OptionsError("MetaOptions.metrics is empty: name the metrics to compare (the default is Table 4's "
                               "18; neuroneval.metrics.METRICS lists every registered one)")
        for grid in ("alpha_grid", "lam_grid"):
            if not getattr(self, grid):
                raise OptionsError(f"MetaOptions.{grid} is empty: the search needs at least one value")
        check_choice(self, "ties", TIES)
        check_fraction(self, "val_fraction", high_open=True)
        check_range(self, "min_val_units", 1, integer=True)
        check_range(self, "seed", 0, integer=True)
        check_range(self, "feature_cache_gib", 0)
        check_range(self, "n_boot", 0, integer=True)
        check_fraction(self, "ci_level", high_open=True)


def validation_split(mask: np.ndarray, options: MetaOptions) -> tuple[np.ndarray, np.ndarray]:
    """(validation, test) unit indices among the units with a known concept (rows of ``mask`` with any True):
    the one split the meta-evaluation, the ceiling and the sanity tests share (:func:`split_units`)."""
    known_units = np.flatnonzero(mask.any(axis=1))
    val_positions, test_positions = split_units(known_units.size, val_fraction=options.val_fraction,
                                                seed=options.seed, min_val_units=options.min_val_units)
    return known_units[val_positions], known_units[test_positions]


def evaluate_setting(data: SettingData, truth: pd.DataFrame, options: MetaOptions, *, setting: str,
                     progress: bool = True, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per metric: chosen α/λ, validation and test meta-AUPRC, unit counts (``results/meta/<setting>.csv``).

    Units with a known concept (``truth``: columns ``unit, concept``) are split into a seeded validation part
    (``val_fraction``, at least ``min_val_units``) and a test part; each metric's α (and WPMI's λ) maximise
    validation meta-AUPRC and the test units report it (000 Eq. 13), with a bootstrap interval over test units
    (``ci_low``, ``ci_high``; ``n_boot`` resamples, seed ``seed``) so a difference between metrics can be told
    from noise, ``test_top1`` (share of test units whose best-scoring concept is their own,
    :func:`~neuroneval.meta.auprc.own_concept_first`), ``grid_tied`` (every grid point tied on validation, so
    α/λ is the grid's first point by the tie rule), and the floor ``chance_auprc`` (the share of correct
    pairs among the test pairs: the expected meta-AUPRC of random scores). Rows follow ``options.metrics`` (or
    ``metrics``) whatever the scoring order. α values of the grid that select fewer than 10 of the setting's
    inputs raise a :class:`~neuroneval.metrics.unit_checks.SmallProbeSetWarning` naming them.
    """
    names = list(options.metrics if metrics is None else metrics)
    if not names:
        raise ValueError(f"{setting}: no metric to evaluate (metrics is empty)")
    warn_small_probe_set(data.activations.shape[0], "alpha", options.alpha_grid, where=f"meta {setting}",
                         stacklevel=2)
    mask = truth_mask(truth, data.unit_names, data.concept_names)
    val_units, test_units = validation_split(mask, options)
    cache = FeatureCache(max_bytes=int(options.feature_cache_gib * 2**30))  # unit features shared by the metrics
    chance = float(mask[test_units].mean())  # expected meta-AUPRC of random scores: the floor
    rows = {}
    for metric in progress_bar(scoring_order(names), desc=f"meta-AUPRC {setting}", unit="metric", enabled=progress):
        result = evaluate_metric(
            metric, data.activations, data.concepts, mask,
            val_units=val_units, test_units=test_units,
            alpha_grid=options.alpha_grid, lam_grid=options.lam_grid,
            options=MetricOptions(ties=options.ties, seed=options.seed), cache=cache,
            n_boot=options.n_boot, ci_level=options.ci_level, boot_seed=options.seed, progress=progress,
        )
        rows[metric] = {
            "setting": setting,
            "metric": metric,
            "ties": options.ties,
            "alpha": result.params.get("alpha", np.nan),
            "lam": result.params.get("lam", np.nan),
            "grid_tied": result.grid_tied,
            "val_auprc": result.val_auprc,
            "test_auprc": result.test_auprc,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "test_top1": result.test_top1,
            "n_boot": options.n_boot,
            "chance_auprc": chance,
            "val_units": result.n_val_units,
            "test_units": result.n_test_units,
            "concepts": len(data.concept_names),
            "inputs": data.activations.shape[0],
            "seed": options.seed,
        }
    return pd.DataFrame([rows[metric] for metric in names])
