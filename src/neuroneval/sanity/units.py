"""The units a setting's sanity tests run on: its data, which concepts each unit is known to detect, and the
validation/test split of the known units that Table 4 uses (paper 000 Sec. 4.3: the tests perturb the concepts
of the test units' correct pairs; α/λ come from the validation units)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class SanityUnits:
    """A setting's activations (n, K) and concepts (n, C) with the truth mask (K, C) and the unit split."""

    activations: np.ndarray
    concepts: np.ndarray
    concept_names: list[str]
    truth: np.ndarray  # (K, C) bool
    val_units: np.ndarray
    test_units: np.ndarray

    @property
    def test_pairs(self) -> np.ndarray:
        """(m, 2) correct (unit, concept) positions of the test units, the pairs the experimental test uses."""
        rows, columns = np.nonzero(self.truth[self.test_units])
        return np.column_stack([self.test_units[rows], columns]).astype(np.int64)


def chosen_params(hyperparameters: pd.DataFrame, metric: str) -> dict[str, float]:
    """The chosen ``alpha``/``lam`` of ``metric`` (those that are set) from a hyperparameter table indexed by
    metric (``results/sanity/hyperparameters/<setting>.csv``); ``ValueError`` naming the metric if absent."""
    if metric not in hyperparameters.index:
        raise ValueError(f"no chosen hyperparameters for {metric!r}; have {sorted(hyperparameters.index)}")
    row = hyperparameters.loc[metric]
    return {name: float(row[name]) for name in ("alpha", "lam") if pd.notna(row[name])}
