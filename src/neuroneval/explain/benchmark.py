"""Paper 001 Tables 1–2 (App. B.2) as library calls: the seeded holdout and the per-source scoring on it.

The workflow's tables (``neuroneval.pipeline.explain_steps``) and :func:`neuroneval.evaluate.evaluate` call the same
functions, so an explanation file scored by either gets the same numbers:

* :func:`holdout_mask`: the held-out inputs, ``⌈f·n⌉`` of a seeded permutation of the ``n`` inputs; methods are
  fitted on the rest and scored on these;
* :func:`source_scores`: one source's explanations simulated from the concept table on the held-out inputs
  (001 Eq. 14–19) and scored: simulation correlation ρ (001 App. B.2) and each metric of the engine
  (:func:`~neuroneval.explain.simulate.score_explanations`); text explanations keep empty scores (no concept
  simulator reads them);
* :func:`optimum_scores`: the exact best score any explanation reaches on each unit where the concepts are one
  categorical variable (:mod:`neuroneval.explain.oracle`), ``None`` otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.simulate import SANITY_PASSING_METRICS, score_explanations


def holdout_mask(n_inputs: int, fraction: float, seed: int) -> np.ndarray:
    """(n,) bool, True on the ⌈fraction·n⌉ held-out inputs of a seeded permutation (at least 2 on each side).

    >>> holdout_mask(5, 0.4, 0).sum()
    np.int64(2)
    """
    n_held = math.ceil(fraction * n_inputs)
    if n_held < 2 or n_inputs - n_held < 2:
        raise ValueError(f"explain.holdout_fraction {fraction} leaves {n_held} of {n_inputs} inputs held out; "
                         "both parts need at least 2")
    held = np.zeros(n_inputs, dtype=bool)
    held[np.random.default_rng(seed).permutation(n_inputs)[:n_held]] = True
    return held


def score_names(metrics: Sequence[str] = SANITY_PASSING_METRICS) -> list[str]:
    """Score columns of :func:`source_scores`: ``simulation_correlation``, then ``metrics``."""
    return ["simulation_correlation", *metrics]


def source_scores(explanations: pd.DataFrame, activations: pd.DataFrame, concepts: Any,
                  concept_names: Sequence[str], *, options: Any, metrics: Sequence[str] = SANITY_PASSING_METRICS,
                  source: str = "<explanations>") -> pd.DataFrame:
    """Every unit of one source's explanations, scored on held-out inputs: ``unit`` + :func:`score_names`.

    ``activations`` holds the held-out inputs, one column per unit (named as the explanations' units); ``concepts``
    (n, T) the concept values on the same inputs, columns ``concept_names``. Rows follow ``explanations``; text
    explanations (and only they) get NaN scores. ``options`` are the metric options shared by the metrics
    (:class:`~neuroneval.metrics.TopAlphaOptions`: α of the binarizing metrics).
    """
    frame = explanations.reset_index(drop=True)
    scores = pd.DataFrame({"unit": frame["unit"].astype(str)})
    scorable = frame[frame["kind"] != "text"]
    if len(scorable):
        scored = score_explanations(scorable, activations, concepts, concept_names, metrics=metrics, source=source,
                                    options=options)
        scores = scores.merge(scored.drop(columns=["kind", "length"]), on="unit", how="left")
    return scores.reindex(columns=["unit", *score_names(metrics)])


def optimum_scores(activations: pd.DataFrame, concepts: Any, *, options: Any,
                   metrics: Sequence[str] = SANITY_PASSING_METRICS) -> pd.DataFrame | None:
    """The exact optimum per unit (``unit`` + :func:`score_names`; a metric without a closed form is NaN) where
    the concepts (n, T) are one categorical variable (:func:`~neuroneval.explain.oracle.concept_groups`), else
    ``None``."""
    from neuroneval.explain.oracle import concept_groups, oracle_scores

    groups = concept_groups(concepts)
    if groups is None:
        return None
    return oracle_scores(activations, groups, options=options).reindex(columns=["unit", *score_names(metrics)])
