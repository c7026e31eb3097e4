"""The exact best score any explanation can reach on a unit, where the concepts are one categorical variable.

The ``ideal`` rows (:mod:`neuroneval.explain.ideal`) bound the methods only where the scorer's optimum on the ideal
unit is the planted truth. That holds in the deterministic vision world and fails in the text world: a next-token
concept is a *realised* token, and the binarised scorers (F1, IoU at top-α, AUPRC) and the uncentred cosine rank a
frequent sibling token above the rare true one even on the generator's own probability ``P(w | x)``.

Where each input has at most one active concept — the LM settings' ``next:<w>`` one-hots, the class-unit settings'
``class:<name>`` labels — every explanation
(concept, formula, linear form, cluster) simulates a function ``g(z)`` of the input's group ``z`` (its concept, or
"none"), so the best score over *all* explanations of a unit ``a`` is a closed form (row :data:`ORACLE`):

- correlation and simulation correlation (001 Eq. 18): the correlation ratio
  ``η = corr(E[a | z], a) = sqrt(Σ_z n_z (ā_z − ā)² / Σ_i (a_i − ā)²)``; by Cauchy–Schwarz no ``g`` does better,
  and ``g = E[a | z]`` attains it;
- cosine (uncentred, 000 App. A): ``‖P a‖ / ‖a‖ = sqrt(Σ_z n_z ā_z² / Σ_i a_i²)``, ``P`` the projection onto the
  group indicators (an upper bound: the simulator's values live in [0, 1]);
- IoU and F1 at top-α (000 Eq. A.2–A.5): a simulation binarises to ``1[z ∈ S]`` for a set ``S`` of groups;
  with ``k_z`` of the unit's active inputs ``B(a)`` in group ``z`` and ``n_z`` inputs in it,
  ``IoU(S) = Σ_S k_z / (|B(a)| + Σ_S (n_z − k_z))`` is maximised by a prefix of the groups sorted by ``k_z / n_z``
  (Dinkelbach: ``z`` joins iff ``k_z − λ(n_z − k_z) > 0``), scanned exactly; ``F1 = 2 IoU / (1 + IoU)`` follows;
- AUPRC (000 Eq. A.6, the average precision of ``B(a)`` ranked by the simulation): ``g(z) = k_z / n_z``, the
  group's precision (``P(B(a) | z)``, the probability-ranking order), scored by the metric engine itself.

The scores are an upper bound of every method's score on the same unit, and show how far the methods are from
the best the concept language allows; the ``ideal`` rows keep the planted truth on the ideal unit beside them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

#: Method name of the exact-optimum rows in the score tables (settings whose concepts are one categorical variable).
ORACLE = "oracle"
#: Score columns the oracle fills (those of :func:`neuroneval.explain.simulate.score_explanations` it has a
#: closed form for).
ORACLE_COLUMNS = ("simulation_correlation", "correlation", "cosine", "f1", "iou", "auprc")


def concept_groups(concepts: Any) -> np.ndarray | None:
    """Each input's group ``z``: the index of its one active concept, ``C`` (one past the last) for inputs with
    none; ``None`` unless every value of ``concepts`` (n, C) is 0 or 1 and every row has at most one 1."""
    values = np.asarray(concepts)
    if values.ndim != 2 or values.shape[1] == 0 or not np.isin(values, (0, 1)).all():
        return None
    active = values.sum(axis=1)
    if (active > 1).any():
        return None
    return np.where(active > 0, values.argmax(axis=1), values.shape[1]).astype(np.int64)


def best_prefix_iou(active_per_group: np.ndarray, inputs_per_group: np.ndarray, n_active: int) -> np.ndarray:
    """Indicator of the group set ``S`` of largest ``Σ_S k_z / (n_active + Σ_S (n_z − k_z))``: the best prefix of
    the groups in decreasing ``k_z / n_z`` (groups with ``k_z = 0`` never help)."""
    k = np.asarray(active_per_group, dtype=np.float64)
    n = np.asarray(inputs_per_group, dtype=np.float64)
    useful = np.flatnonzero(k > 0)
    chosen = np.zeros(len(k), dtype=bool)
    if len(useful) == 0:
        return chosen
    order = useful[np.lexsort((useful, -k[useful] / n[useful]))]
    iou = np.cumsum(k[order]) / (n_active + np.cumsum(n[order] - k[order]))
    chosen[order[: int(np.argmax(iou)) + 1]] = True
    return chosen


def oracle_scores(activations: pd.DataFrame, groups: np.ndarray, *, options: Any = None) -> pd.DataFrame:
    """Per unit (column of ``activations``, the held-out inputs) the best score any explanation can reach
    (module docstring), columns ``unit`` + :data:`ORACLE_COLUMNS`; ``groups`` from :func:`concept_groups` on the
    same inputs, ``options`` the :class:`~neuroneval.metrics.TopAlphaOptions` the methods are scored with."""
    from neuroneval.metrics import TopAlphaOptions, get_spec, score_pairs
    from neuroneval.metrics.binarize import top_count

    options = TopAlphaOptions() if options is None else options
    values = activations.to_numpy(dtype=np.float64)
    n, n_units = values.shape
    if len(groups) != n:
        raise ValueError(f"groups has {len(groups)} inputs, the activations {n}")
    n_groups = int(groups.max()) + 1
    counts = np.bincount(groups, minlength=n_groups).astype(np.float64)
    one_hot = np.zeros((n, n_groups), dtype=np.float64)
    one_hot[np.arange(n), groups] = 1.0
    sums = one_hot.T @ values
    means = np.divide(sums, counts[:, None], out=np.zeros_like(sums), where=counts[:, None] > 0)
    centred = values - values.mean(axis=0)
    between = (counts[:, None] * (means - values.mean(axis=0)) ** 2).sum(axis=0)
    total = (centred**2).sum(axis=0)
    eta = np.sqrt(np.divide(between, total, out=np.zeros(n_units), where=total > 0))
    squares = (values**2).sum(axis=0)
    cosine = np.sqrt(np.divide((counts[:, None] * means**2).sum(axis=0), squares, out=np.zeros(n_units),
                               where=squares > 0))
    kth = np.sort(values, axis=0)[n - top_count(options.alpha, n)]
    active = values >= kth
    active_per_group = one_hot.T @ active
    precision = np.divide(active_per_group, counts[:, None], out=np.zeros_like(active_per_group),
                          where=counts[:, None] > 0)
    best_sets = np.stack([best_prefix_iou(active_per_group[:, unit], counts, int(active[:, unit].sum()))
                          for unit in range(n_units)], axis=1)
    pairs = np.repeat(np.arange(n_units)[:, None], 2, axis=1)

    def engine(metric: str, simulated: np.ndarray) -> np.ndarray:
        return score_pairs(metric, values, simulated, pairs, options=get_spec(metric).options_from(options))

    binary = best_sets[groups].astype(np.float64)
    return pd.DataFrame({"unit": activations.columns.astype(str), "simulation_correlation": eta,
                         "correlation": eta, "cosine": cosine, "f1": engine("f1", binary),
                         "iou": engine("iou", binary), "auprc": engine("auprc", precision[groups])})
