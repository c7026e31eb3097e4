"""Correlation on the full probing set (Eq. 1) and its importance-sampling estimate (Eq. 5–6 of paper 001).

With inputs drawn with replacement from q (:mod:`neuroneval.crowd.sampling`) and importance weights
w_i = p(x_i)/q(x_i) = 1/(|D| q(x_i)), the correction is applied sequentially (Sec. 3.1.2):

1. weighted mean, μ_S(c) = (1/|S|) Σ_{i∈S} w_i c_i                                    (Eq. 5, left)
2. weighted standard deviation, σ_S(c) = sqrt( Σ_{i∈S} w_i (c_i − μ_S(c))² / (|S| − 1) )  (Eq. 5, right)
3. normalised weighted product, ρ_S = Σ_{i∈S} w_i ā_i c̄_i / (|S| − 1),
   ā = (a − μ_S(a))/σ_S(a), c̄ = (c − μ_S(c))/σ_S(c)                                    (Eq. 6)

Deviation from the printed Eq. 6, on purpose: the paper divides the product sum by |S| while Eq. 5
divides by |S| − 1, which multiplies every estimate by (|S| − 1)/|S| (a 10 % shrinkage towards 0 at
|S| = 10). We use the same denominator |S| − ddof in steps 2 and 3, so that uniform q (all w_i = 1)
gives exactly Pearson's r of the sample, Eq. 11. ``literal_eq6=True`` restores the printed form.
"""

from __future__ import annotations

import numpy as np


def importance_weights(q: np.ndarray) -> np.ndarray:
    """Importance weights p/q with p = 1/n uniform over the n probing inputs (Theorem 1, App. B.3).

    Parameters
    ----------
    q
        (n,) or (n, K) sampling probabilities (columns sum to 1).

    Returns
    -------
    numpy.ndarray
        ``1 / (n · q)``, same shape; ``inf`` where q = 0 (such inputs are never drawn).

    Examples
    --------
    >>> importance_weights(np.array([0.5, 0.25, 0.25])).tolist()
    [0.6666666666666666, 1.3333333333333333, 1.3333333333333333]
    """
    probabilities = np.asarray(q, dtype=np.float64)
    n = probabilities.shape[0]
    with np.errstate(divide="ignore"):
        return 1.0 / (n * probabilities)


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Importance-sampling mean over the last axis, μ_S = (1/|S|) Σ w_i x_i (Eq. 5).

    Unbiased for the full-data mean when the draws come from q and w = p/q.

    Examples
    --------
    >>> float(weighted_mean(np.array([1.0, 0.0]), np.array([0.5, 2.0])))
    0.25
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), x.shape)
    return (w * x).mean(axis=-1)


def weighted_std(
    values: np.ndarray, weights: np.ndarray, *, mean: np.ndarray | None = None, ddof: int = 1
) -> np.ndarray:
    """Importance-sampling standard deviation over the last axis (Eq. 5).

    σ_S = sqrt( Σ w_i (x_i − μ_S)² / (|S| − ddof) ), with μ_S from :func:`weighted_mean` unless given.

    Returns
    -------
    numpy.ndarray
        float64, NaN where |S| − ddof ≤ 0.

    Examples
    --------
    >>> float(weighted_std(np.array([0.0, 2.0]), np.ones(2)))
    1.4142135623730951
    """
    x = np.asarray(values, dtype=np.float64)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), x.shape)
    centre = weighted_mean(x, w) if mean is None else np.asarray(mean, dtype=np.float64)
    dof = x.shape[-1] - ddof
    squares = (w * (x - centre[..., None]) ** 2).sum(axis=-1)
    if dof <= 0:
        return np.full(squares.shape, np.nan)
    return np.sqrt(squares / dof)


def is_correlation(
    activations: np.ndarray,
    concepts: np.ndarray,
    weights: np.ndarray,
    *,
    ddof: int = 1,
    activation_mean: np.ndarray | float | None = None,
    activation_std: np.ndarray | float | None = None,
    literal_eq6: bool = False,
) -> np.ndarray:
    """Importance-sampling estimate ρ_S of the correlation (Eq. 5–6), vectorised over leading axes.

    Parameters
    ----------
    activations, concepts, weights
        Arrays of the same shape (..., |S|): the activations of the sampled inputs, their (aggregated)
        concept labels, and their importance weights p/q (:func:`importance_weights`). A draw that
        occurs twice appears twice.
    ddof
        Delta degrees of freedom of σ_S (Eq. 5 uses 1); the Eq. 6 sum is divided by |S| − ddof too.
    activation_mean, activation_std
        Full-data μ(a) and σ(a) (population) if known; by default (as in the paper) both are estimated
        from the sample with Eq. 5 like those of the concept.
    literal_eq6
        Divide the Eq. 6 sum by |S| as printed in the paper (see the module notes).

    Returns
    -------
    numpy.ndarray
        Estimates of shape (...). Where σ_S(c) or σ_S(a) is 0 (e.g. a uniform sample without a single
        positive input) or |S| − ddof ≤ 0, the correlation is undefined and the estimate is 0 (the
        library-wide convention for zero-variance vectors).

    Examples
    --------
    With uniform q (weights 1) the estimate is Pearson's r of the sample:

    >>> a, c = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.0, 0.0, 1.0, 1.0])
    >>> round(float(is_correlation(a, c, np.ones(4))), 6)
    0.894427
    """
    a = np.asarray(activations, dtype=np.float64)
    c = np.asarray(concepts, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if not (a.shape == c.shape == w.shape):
        raise ValueError(f"activations {a.shape}, concepts {c.shape} and weights {w.shape} must have equal shapes")
    size = a.shape[-1]
    dof = size - ddof
    if dof <= 0:
        return np.zeros(a.shape[:-1])
    mean_c = weighted_mean(c, w)
    std_c = weighted_std(c, w, mean=mean_c, ddof=ddof)
    if activation_mean is None:
        mean_a = weighted_mean(a, w)
    else:
        mean_a = np.broadcast_to(np.asarray(activation_mean, dtype=np.float64), a.shape[:-1])
    if activation_std is None:
        std_a = weighted_std(a, w, mean=mean_a, ddof=ddof)
    else:
        std_a = np.broadcast_to(np.asarray(activation_std, dtype=np.float64), a.shape[:-1])
    defined = _nonzero_spread(std_a, mean_a) & _nonzero_spread(std_c, mean_c)
    safe_scale = np.where(defined, std_a * std_c, 1.0)
    products = (w * (a - mean_a[..., None]) * (c - mean_c[..., None])).sum(axis=-1)
    estimate = products / safe_scale / (size if literal_eq6 else dof)
    return np.where(defined, estimate, 0.0)


def _nonzero_spread(std: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """σ is positive beyond float round-off (a constant sample can leave σ ≈ 1e-17 instead of 0)."""
    return std > 1e-12 * (np.abs(mean) + 1.0)


def correlation_matrix(activations: np.ndarray, concepts: np.ndarray) -> np.ndarray:
    """Pearson correlation of every unit with every concept on the full probing set (Eq. 1).

    Parameters
    ----------
    activations
        (n, K) activations.
    concepts
        (n, C) concept values.

    Returns
    -------
    numpy.ndarray
        (K, C) correlations; 0 where a unit or a concept is constant.

    Examples
    --------
    >>> correlation_matrix(np.array([[0.0], [1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])).tolist()
    [[1.0, -1.0]]
    """
    from neuroneval.crowd.sampling import standardize

    a = np.asarray(activations, dtype=np.float64)
    c = np.asarray(concepts, dtype=np.float64)
    if a.ndim != 2 or c.ndim != 2 or a.shape[0] != c.shape[0]:
        raise ValueError(f"need (n, K) activations and (n, C) concepts with equal n, got {a.shape} and {c.shape}")
    return np.clip(standardize(a).T @ standardize(c) / a.shape[0], -1.0, 1.0)
