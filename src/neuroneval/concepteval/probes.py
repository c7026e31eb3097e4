"""TCAV-style probe directions for labelled concepts (Kim et al., 2018; paper 004 Sec. 5.3, Table 1 TCAV row).

For each concept t, hidden states of inputs that carry t are positives and all other inputs negatives; an
L2-regularised logistic regression (scikit-learn, balanced class weights) separates them, and its decision
function is the concept's activation: a_t(h) = w_tᵀh + b_t, a
:class:`~neuroneval.concepteval.concepts.LinearConcept`. (TCAV uses random texts as negatives; with planted
concepts every input without t is such a text.) A seeded hold-out split reports each probe's balanced accuracy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.concepteval.concepts import LinearConcept
from neuroneval.concepteval.validation import as_float_array
from neuroneval.options import Options, check_range


@dataclass(frozen=True)
class ProbeOptions(Options):
    """Probe fitting: inverse L2 strength ``c`` (scikit-learn's C), ``max_iter``, ``holdout_fraction`` of the
    rows kept out to report balanced accuracy (0: no report), ``seed`` of that split."""

    c: float = 1.0
    max_iter: int = 1000
    holdout_fraction: float = 0.2
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "c", 0, low_open=True)
        check_range(self, "max_iter", 1, integer=True)
        check_range(self, "holdout_fraction", 0, 1, high_open=True)
        check_range(self, "seed", 0, integer=True)


def fit_probes(hidden: np.ndarray, labels: np.ndarray, names: Sequence[str],
               options: ProbeOptions = ProbeOptions(), *, prefix: str = "probe") -> tuple[list[LinearConcept],
                                                                                         pd.DataFrame]:
    """One probe direction per concept column of ``labels`` (n, T) 0/1 on hidden states (n, m).

    Returns the concepts (named ``"{prefix}:{name}"``) and a table ``concept, positives, holdout_balanced_accuracy``
    (the probe reported is then refitted on all rows).
    """
    from sklearn.linear_model import LogisticRegression

    states = as_float_array("fit_probes hidden", hidden, ndim=2, min_rows=2)
    targets = np.asarray(labels)
    if targets.ndim == 1:
        targets = targets[:, None]
    if targets.shape != (states.shape[0], len(names)):
        raise ValueError(f"fit_probes: labels must have shape {(states.shape[0], len(names))}, got {targets.shape}")
    if not np.isin(targets, (0, 1)).all():
        raise ValueError("fit_probes: labels must be 0/1")
    rng = np.random.default_rng(options.seed)
    holdout = rng.random(states.shape[0]) < options.holdout_fraction
    concepts, rows = [], []
    for column, name in enumerate(names):
        target = targets[:, column].astype(int)
        if target.min() == target.max():
            raise ValueError(f"fit_probes: concept {name!r} has only {'positives' if target[0] else 'negatives'}")
        model = LogisticRegression(C=options.c, max_iter=options.max_iter, class_weight="balanced")
        accuracy = np.nan
        train = ~holdout
        if holdout.any() and np.unique(target[train]).size == 2 and np.unique(target[holdout]).size == 2:
            predicted = model.fit(states[train], target[train]).predict(states[holdout])
            truth = target[holdout]
            accuracy = 0.5 * ((predicted[truth == 1] == 1).mean() + (predicted[truth == 0] == 0).mean())
        model.fit(states, target)
        concepts.append(LinearConcept(model.coef_[0], float(model.intercept_[0]), f"{prefix}:{name}"))
        rows.append({"concept": f"{prefix}:{name}", "positives": int(target.sum()),
                     "holdout_balanced_accuracy": accuracy})
    return concepts, pd.DataFrame(rows)
