"""Linear Explanations, LE(label) and LE(pseudo) (Oikarinen & Weng 2024; paper 001 Sec. 5, Eq. 15).

A unit is explained as ``s(x) = Σ_j w_j c_{t_j}(x) + b`` with non-negative weights on a few concepts. LE(label)
fits it on ground-truth labels, LE(pseudo) on pseudo-labels (LE(SigLIP) in the papers); the method is the same,
only the concept matrix differs. Following the authors' procedure:

1. Split the probing inputs into train and validation (``val_fraction``, seeded).
2. Rank concepts for each unit by a non-negative elastic net on standardized train data,
   ``min_w 1/(2n)‖y − Xw‖² + λ·ρ‖w‖₁ + λ(1 − ρ)/2‖w‖²``, w ≥ 0 (λ = 0.05, ρ = 0.99; ties broken by marginal
   correlation), all units in one fit.
3. Greedy search: starting from no concept, try the ``width`` best-ranked unused concepts; each candidate set S
   gets the non-negative least-squares fit ``min_{w ≥ 0} ‖y_c − X_{S,c} w‖²`` on centered train data and is
   scored by the validation correlation of its prediction. A candidate that gains less than ``tolerance``
   (0.02) over the current explanation is dropped for good; the best gain is added. The length is where no
   candidate gains ``tolerance`` any more, at most ``max_length`` (10): the "length chosen as in the paper".

The fits use Gram matrices: centered train/validation covariances ``XᵀX``, ``Xᵀy`` of all concepts and units are
computed once (two products), and every candidate fit is an NNLS on a Cholesky factor of a ≤ l×l block, so the
inner loop never touches the N inputs.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData, as_activations, check_rows
from neuroneval.explain.explanation import Linear, explanation_frame
from neuroneval.explain.options import LinearOptions
from neuroneval.progress import progress_bar


def split_inputs(n: int, val_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded (train, validation) row indices, each sorted; validation gets ⌈val_fraction·n⌉ ≥ 2 rows."""
    n_val = max(2, int(np.ceil(val_fraction * n)))
    if n - n_val < 2:
        raise ValueError(f"{n} inputs are too few to hold out {n_val} for validation")
    order = np.random.default_rng([seed, n]).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def nnls_gram(gram: np.ndarray, moment: np.ndarray) -> np.ndarray:
    """``argmin_{w ≥ 0} wᵀGw − 2mᵀw`` (= NNLS on the data whose Gram matrix is G and moment Xᵀy is m).

    With ``G = LLᵀ`` it is ``min ‖Lᵀw − L⁻¹m‖²``, solved by :func:`scipy.optimize.nnls`; a relative ridge of
    1e-10 keeps G positive definite when concepts coincide.
    """
    ridge = 1e-10 * max(float(np.trace(gram)), 1e-12) / max(1, gram.shape[0])
    factor = np.linalg.cholesky(gram + ridge * np.eye(gram.shape[0]))
    from scipy.linalg import solve_triangular
    from scipy.optimize import nnls

    target = solve_triangular(factor, moment, lower=True)
    weights, _ = nnls(factor.T, target)
    return weights


def concept_ranking(features: np.ndarray, targets: np.ndarray, options: LinearOptions) -> np.ndarray:
    """(K, T) concept order per unit: elastic-net weight, then marginal correlation, descending."""
    from sklearn.exceptions import ConvergenceWarning  # here, not at import: a job that fits no LE skips sklearn
    from sklearn.linear_model import ElasticNet

    mean, std = features.mean(axis=0), features.std(axis=0)
    usable = std > 0
    standardized = np.zeros_like(features)
    standardized[:, usable] = (features[:, usable] - mean[usable]) / std[usable]
    target_std = targets.std(axis=0)
    scaled_targets = (targets - targets.mean(axis=0)) / np.where(target_std > 0, target_std, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = ElasticNet(alpha=options.l1_penalty, l1_ratio=options.l1_ratio, positive=True, max_iter=2000)
        coef = np.atleast_2d(model.fit(standardized, scaled_targets).coef_)
    marginal = scaled_targets.T @ standardized / features.shape[0]
    marginal[:, ~usable] = -np.inf
    return np.lexsort((-marginal, -coef), axis=1)


def _centered_moments(features: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    centered_x = features - features.mean(axis=0)
    centered_y = targets - targets.mean(axis=0)
    return centered_x.T @ centered_x, centered_x.T @ centered_y, np.einsum("ik,ik->k", centered_y, centered_y)


def greedy_linear(order: np.ndarray, train: tuple[np.ndarray, np.ndarray], val: tuple[np.ndarray, np.ndarray, float],
                  options: LinearOptions) -> tuple[list[int], np.ndarray, float]:
    """One unit's greedy search (module docstring, step 3): (concept columns, weights, validation correlation).

    ``train = (G_train, m_train)``, ``val = (G_val, m_val, Σ(y_val − ȳ)²)`` restricted to this unit.
    """
    gram, moment = train
    val_gram, val_moment, val_ss = val
    selected: list[int] = []
    rejected: set[int] = set()
    best_corr, best_weights = -np.inf, np.zeros(0)
    while len(selected) < options.max_length:
        candidates = [int(t) for t in order if int(t) not in rejected and int(t) not in selected][:options.width]
        step_best, step_concept, step_weights = best_corr, None, None
        for concept in candidates:
            columns = [*selected, concept]
            weights = nnls_gram(gram[np.ix_(columns, columns)], moment[columns])
            prediction_ss = float(weights @ val_gram[np.ix_(columns, columns)] @ weights)
            denominator = np.sqrt(prediction_ss * val_ss)
            corr = float(weights @ val_moment[columns] / denominator) if denominator > 0 else 0.0
            if selected and corr - best_corr < options.tolerance:
                rejected.add(concept)
            elif corr > step_best:
                step_best, step_concept, step_weights = corr, concept, weights
        if step_concept is None:
            break
        selected.append(step_concept)
        best_corr, best_weights = step_best, step_weights
    return selected, best_weights, float(best_corr)


def linear_explanations(activations: Any, probing: ProbingData, options: LinearOptions | None = None, *,
                        unit_names: Sequence[str] | None = None) -> pd.DataFrame:
    """LE on the probing concept matrix (labels → LE(label), pseudo-labels → LE(pseudo)).

    Returns ``unit, explanation, length, kind, val_correlation``; explanations are ``w1*t1 + … + b`` with the
    weights in activation units (so :func:`neuroneval.explain.simulate.simulate` predicts activations on the
    unit's own scale) and concepts ordered by weight.
    """
    options = options or LinearOptions()
    matrix, names = as_activations(activations, unit_names)
    check_rows(matrix, probing)
    concepts = probing.concepts
    train_rows, val_rows = split_inputs(matrix.shape[0], options.val_fraction, options.seed)
    order = concept_ranking(concepts[train_rows], matrix[train_rows], options)
    gram, moment, _ = _centered_moments(concepts[train_rows], matrix[train_rows])
    val_gram, val_moment, val_ss = _centered_moments(concepts[val_rows], matrix[val_rows])
    train_mean_x, train_mean_y = concepts[train_rows].mean(axis=0), matrix[train_rows].mean(axis=0)
    explanations, correlations = [], np.zeros(len(names))
    for unit in progress_bar(range(len(names)), desc="linear explanations", unit="unit"):
        columns, weights, corr = greedy_linear(order[unit], (gram, moment[:, unit]),
                                               (val_gram, val_moment[:, unit], float(val_ss[unit])), options)
        ranked = np.argsort(-weights, kind="stable")
        bias = float(train_mean_y[unit] - train_mean_x[columns] @ weights)
        explanations.append(Linear(tuple((probing.concept_names[columns[i]], float(weights[i])) for i in ranked),
                                   bias))
        correlations[unit] = corr
    return explanation_frame(names, explanations, {"val_correlation": correlations})
