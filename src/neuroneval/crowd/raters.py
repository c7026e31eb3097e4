"""Simulated raters and the Relative Correlation Error (paper 001, Sec. 4, Setting 1 and Eq. 13).

A simulated rater reports the true binary label of an input, flipped with probability η independently of
everything else (η = 0.13, the error rate measured on Mechanical Turk). This is exactly the noise model
assumed by the Bayes aggregation (Eq. 8), so it is the favourable case for that method; real raters may
err more on some inputs than on others.
"""

from __future__ import annotations

import numpy as np

from neuroneval.crowd.aggregation import DEFAULT_RATER_ERROR


def simulate_ratings(
    labels: np.ndarray,
    n_raters: int,
    rng: np.random.Generator,
    *,
    rater_error: float = DEFAULT_RATER_ERROR,
) -> np.ndarray:
    """Ratings of ``n_raters`` independent raters who flip each true label with probability η.

    Parameters
    ----------
    labels
        True binary labels (any shape, values 0/1).
    n_raters
        Ratings per input, >= 1.
    rng
        Source of the flips.
    rater_error
        η in [0, 1] (default 0.13); η = 0 returns the labels unchanged.

    Returns
    -------
    numpy.ndarray
        int8 ratings of shape ``labels.shape + (n_raters,)``.

    Examples
    --------
    >>> simulate_ratings(np.array([0, 1]), 2, np.random.default_rng(0), rater_error=0.0).tolist()
    [[0, 0], [1, 1]]
    """
    truth = np.asarray(labels)
    if not np.all((truth == 0) | (truth == 1)):
        raise ValueError("simulated raters need binary labels (0/1)")
    if n_raters < 1:
        raise ValueError(f"n_raters must be >= 1, got {n_raters}")
    if not 0 <= rater_error <= 1:
        raise ValueError(f"rater_error must be in [0, 1], got {rater_error}")
    flips = rng.random((*truth.shape, n_raters)) < rater_error
    return (truth.astype(np.int8)[..., None] ^ flips).astype(np.int8)


def relative_errors(estimates: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Elementwise |ρ_S − ρ_gt| / |ρ_gt|, the summand of Eq. 13 (``truth`` broadcasts against ``estimates``).

    Examples
    --------
    >>> relative_errors(np.array([0.1, 0.4]), np.array(0.2)).tolist()
    [0.5, 1.0]
    """
    rho_true = np.asarray(truth, dtype=np.float64)
    if np.any(rho_true == 0):
        raise ValueError("relative error is undefined for a true correlation of 0")
    return np.abs(np.asarray(estimates, dtype=np.float64) - rho_true) / np.abs(rho_true)


def relative_correlation_error(estimates: np.ndarray, truth: np.ndarray) -> float:
    """Relative Correlation Error (Eq. 13): RCE = (1/K) Σ_k |ρ_S,k − ρ_gt,k| / |ρ_gt,k|.

    Parameters
    ----------
    estimates
        (K,) estimated correlations, or (K, T) for T trials per unit (the mean then runs over trials
        too, as the paper averages each point over 10 trials).
    truth
        (K,) ground-truth correlations (Eq. 10), non-zero.

    Returns
    -------
    float
        The mean relative error (0.2 means estimates are 20 % off on average).

    Examples
    --------
    >>> relative_correlation_error(np.array([0.1, 0.45]), np.array([0.2, 0.5]))
    0.3
    """
    rho = np.asarray(estimates, dtype=np.float64)
    rho_true = np.asarray(truth, dtype=np.float64)
    if rho.ndim == rho_true.ndim + 1:
        rho_true = rho_true[..., None]
    return float(relative_errors(rho, rho_true).mean())
