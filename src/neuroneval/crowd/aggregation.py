"""Aggregating m binary ratings of one (input, concept) pair into a concept value (paper 001, Sec. 3.2).

Each input x_i gets ratings r_i^1..r_i^m ∈ {0, 1}; α_i = Σ_j r_i^j is the number of raters who saw the
concept. Methods:

- ``"average"`` (Method 1): c_i = α_i / m.
- ``"majority"`` (Method 2): c_i = 1 if α_i / m > 0.5 else 0 (a tie counts as absent).
- ``"bayes_uniform"`` (Method 3a): c_i = P(c*_i = 1 | R_i) (Eq. 7) with the likelihood of Eq. 8 for raters
  who err independently with probability η, and a prior P(c*_i = 1) = β for every input (default 0.01).
- ``"bayes_pseudo"`` (Method 3b): the same posterior with the prior set to the input's pseudo-label score
  (SigLIP in the paper), clipped to [0.001, 0.999].

Closed form of Eq. 7–8: with π the prior,

    P(c* = 1 | R) = (1−η)^α η^(m−α) π / [ (1−η)^α η^(m−α) π + η^α (1−η)^(m−α) (1−π) ],

i.e. logit P = logit π + (2α − m) · log((1 − η)/η), which is how it is computed (no underflow for large m).
"""

from __future__ import annotations

from typing import Literal, get_args

import numpy as np
from scipy.special import expit, logit

#: Aggregation methods, in the order of the paper's Fig. 3.
AggregationMethod = Literal["average", "majority", "bayes_uniform", "bayes_pseudo"]
AGGREGATION_METHODS: tuple[AggregationMethod, ...] = get_args(AggregationMethod)
#: Rater error rate measured on Mechanical Turk (Sec. 4, Setting 2).
DEFAULT_RATER_ERROR = 0.13
#: β of the uniform prior (Method 3a, App. B.4).
DEFAULT_UNIFORM_PRIOR = 0.01
#: Clip range of the pseudo-label prior (Method 3b).
DEFAULT_PRIOR_CLIP = (0.001, 0.999)


def _counts(positives: np.ndarray, n_ratings: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    alpha = np.asarray(positives, dtype=np.float64)
    m = np.broadcast_to(np.asarray(n_ratings, dtype=np.float64), alpha.shape)
    if np.any(m < 1):
        raise ValueError("every input needs at least one rating to be aggregated")
    if np.any(alpha < 0) or np.any(alpha > m) or np.any(alpha != np.round(alpha)):
        raise ValueError("positives must be whole numbers between 0 and the number of ratings")
    return alpha, m


def average_rating(positives: np.ndarray, n_ratings: np.ndarray | int) -> np.ndarray:
    """Method 1: c_i = α_i / m_i.

    Examples
    --------
    >>> average_rating(np.array([0, 1, 2]), 2).tolist()
    [0.0, 0.5, 1.0]
    """
    alpha, m = _counts(positives, n_ratings)
    return alpha / m


def majority_vote(positives: np.ndarray, n_ratings: np.ndarray | int) -> np.ndarray:
    """Method 2: c_i = 1 if α_i / m_i > 0.5, else 0 (ties are 0).

    Examples
    --------
    >>> majority_vote(np.array([0, 1, 2]), 2).tolist()
    [0.0, 0.0, 1.0]
    """
    alpha, m = _counts(positives, n_ratings)
    return (2 * alpha > m).astype(np.float64)


def bayes_posterior(
    positives: np.ndarray,
    n_ratings: np.ndarray | int,
    prior: np.ndarray | float,
    *,
    rater_error: float = DEFAULT_RATER_ERROR,
) -> np.ndarray:
    """Method 3: posterior P(c*_i = 1 | R_i) of Eq. 7 with the likelihood of Eq. 8.

    Parameters
    ----------
    positives
        α_i, the number of positive ratings of each input.
    n_ratings
        m_i, the number of ratings of each input (scalar or per input).
    prior
        P(c*_i = 1), scalar (uniform prior β) or per input (pseudo-label prior), strictly inside (0, 1).
    rater_error
        η, the probability that a rating differs from the true label, in [0, 1).

    Returns
    -------
    numpy.ndarray
        Posterior probabilities in [0, 1].

    Raises
    ------
    ValueError
        With η = 0 (perfect raters) when the ratings of an input disagree, which has probability 0.

    Examples
    --------
    One positive rating, η = 0.13, β = 0.01: the posterior stays small because the concept is rare.

    >>> round(float(bayes_posterior(np.array(1), 1, 0.01)), 4)
    0.0633
    """
    alpha, m = _counts(positives, n_ratings)
    pi = np.broadcast_to(np.asarray(prior, dtype=np.float64), alpha.shape)
    if np.any(pi <= 0) or np.any(pi >= 1) or not np.all(np.isfinite(pi)):
        raise ValueError("prior must lie strictly between 0 and 1 (clip pseudo-label priors)")
    if not 0 <= rater_error < 1:
        raise ValueError(f"rater_error must be in [0, 1), got {rater_error}")
    if rater_error == 0:
        unanimous_yes, unanimous_no = alpha == m, alpha == 0
        if np.any(~unanimous_yes & ~unanimous_no):
            raise ValueError("ratings of an input disagree, impossible with rater_error = 0")
        return unanimous_yes.astype(np.float64)
    log_ratio = np.log1p(-rater_error) - np.log(rater_error)
    return expit(logit(pi) + (2 * alpha - m) * log_ratio)


def pseudo_label_prior(pseudo_labels: np.ndarray, clip: tuple[float, float] = DEFAULT_PRIOR_CLIP) -> np.ndarray:
    """Prior of Method 3b: the pseudo-label score clipped to ``clip`` (default [0.001, 0.999]).

    Examples
    --------
    >>> pseudo_label_prior(np.array([0.0, 0.5, 1.0])).tolist()
    [0.001, 0.5, 0.999]
    """
    low, high = clip
    if not 0 < low <= high < 1:
        raise ValueError(f"prior clip must satisfy 0 < low <= high < 1, got {clip}")
    return np.clip(np.asarray(pseudo_labels, dtype=np.float64), low, high)


def aggregate(
    method: str,
    positives: np.ndarray,
    n_ratings: np.ndarray | int,
    *,
    rater_error: float = DEFAULT_RATER_ERROR,
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR,
    pseudo_labels: np.ndarray | None = None,
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP,
) -> np.ndarray:
    """Aggregate rating counts with one of :data:`AGGREGATION_METHODS`.

    Parameters
    ----------
    method
        ``"average"``, ``"majority"``, ``"bayes_uniform"`` or ``"bayes_pseudo"``.
    positives, n_ratings
        α_i and m_i per input (any broadcastable shapes).
    rater_error
        η assumed by the Bayes methods (default 0.13).
    uniform_prior
        β of ``"bayes_uniform"`` (default 0.01).
    pseudo_labels
        Pseudo-label scores per input, required by ``"bayes_pseudo"``.
    prior_clip
        Clip range of the pseudo-label prior (default (0.001, 0.999)).

    Returns
    -------
    numpy.ndarray
        Concept values c_i in [0, 1], shape of ``positives``.

    Examples
    --------
    >>> aggregate("majority", np.array([2, 1]), 3).tolist()
    [1.0, 0.0]
    """
    if method == "average":
        return average_rating(positives, n_ratings)
    if method == "majority":
        return majority_vote(positives, n_ratings)
    if method == "bayes_uniform":
        return bayes_posterior(positives, n_ratings, uniform_prior, rater_error=rater_error)
    if method == "bayes_pseudo":
        if pseudo_labels is None:
            raise ValueError('method "bayes_pseudo" needs pseudo_labels for its prior')
        prior = pseudo_label_prior(pseudo_labels, prior_clip)
        return bayes_posterior(positives, n_ratings, prior, rater_error=rater_error)
    raise ValueError(f"unknown aggregation method {method!r}; expected one of {AGGREGATION_METHODS}")
