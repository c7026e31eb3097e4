"""Sampling distributions over probing inputs and sampling with replacement (paper 001, Sec. 3.1).

A crowd study labels only a subset S of the probing set D. Inputs are drawn **with replacement** from a
distribution q over D; the estimator of :mod:`neuroneval.crowd.estimator` corrects for q with the importance
weights p(x_i)/q(x_i), p = 1/|D|. Three choices of q:

- ``"uniform"``: q(x_i) = 1/|D| (plain Monte Carlo, Sec. 3.1.1).
- ``"activation"``: q(x_i) ∝ ā_i² + ε, activation only (Sec. 4.1), for when no cheap concept estimate exists.
- ``"pseudo"``: q(x_i) ∝ |ā_i · c̄_i^pseudo + ε| (Eq. 4), guided by pseudo-labels (SigLIP/CLIP in the paper),
  the cheap stand-in for the unknown concept in the variance-optimal q* ∝ |h(x)| p(x) (Eq. 3, App. B.3).

ā and c̄ are standardised over the whole probing set (mean 0, population standard deviation 1); a
constant vector standardises to zeros. ε = 0.001 keeps every input reachable (Sec. 3.1.2).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np

#: Sampling distributions, in the order of the paper's Fig. 2.
SamplingMethod = Literal["uniform", "activation", "pseudo"]
SAMPLING_METHODS: tuple[SamplingMethod, ...] = get_args(SamplingMethod)
#: ε of Eq. 4 (also used for the activation-only q).
DEFAULT_EPSILON = 0.001


def standardize(values: np.ndarray) -> np.ndarray:
    """Standardise each column over the inputs (axis 0): ``(x − μ(x)) / σ(x)``.

    Parameters
    ----------
    values
        (n,) or (n, K) array.

    Returns
    -------
    numpy.ndarray
        float64 array of the same shape; μ and σ are the mean and population standard deviation
        (ddof = 0) of Eq. 1. A constant column becomes all zeros.

    Examples
    --------
    >>> standardize(np.array([0.0, 2.0])).tolist()
    [-1.0, 1.0]
    """
    x = np.asarray(values, dtype=np.float64)
    centred = x - x.mean(axis=0)
    scale = np.sqrt((centred**2).mean(axis=0))
    safe = np.where(scale > 0, scale, 1.0)
    return np.where(scale > 0, centred / safe, 0.0)


def sampling_distribution(
    method: str,
    activations: np.ndarray,
    pseudo_labels: np.ndarray | None = None,
    *,
    epsilon: float = DEFAULT_EPSILON,
) -> np.ndarray:
    """The sampling distribution q over the probing inputs, for one unit or one per column.

    Parameters
    ----------
    method
        ``"uniform"`` (q = 1/n), ``"activation"`` (q ∝ ā² + ε) or ``"pseudo"`` (q ∝ |ā · c̄^pseudo + ε|,
        Eq. 4).
    activations
        (n,) activations of one unit, or (n, K) of K units.
    pseudo_labels
        Pseudo-label scores of the explanation, same shape as ``activations`` (column k belongs to unit
        k); required for ``"pseudo"`` only.
    epsilon
        ε of Eq. 4 (default 0.001), > 0.

    Returns
    -------
    numpy.ndarray
        float64 probabilities, same shape as ``activations``, each column summing to 1.

    Notes
    -----
    Eq. 4 adds ε inside the absolute value, so an input with ā·c̄ = −ε exactly would get q = 0; with
    real-valued scores this does not happen, and :func:`draw_indices` simply never draws such an input.

    Examples
    --------
    >>> q = sampling_distribution("activation", np.array([0.0, 0.0, 3.0]))
    >>> int(np.argmax(q)), round(float(q.sum()), 12)
    (2, 1.0)
    """
    a = np.asarray(activations, dtype=np.float64)
    if a.ndim not in (1, 2) or a.shape[0] == 0:
        raise ValueError(f"activations must be a non-empty (n,) or (n, K) array, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("activations contain NaN or infinite values")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    if method == "uniform":
        weights = np.ones_like(a)
    elif method == "activation":
        weights = standardize(a) ** 2 + epsilon
    elif method == "pseudo":
        if pseudo_labels is None:
            raise ValueError('method "pseudo" needs pseudo_labels (the cheap concept scores of Eq. 4)')
        c = np.asarray(pseudo_labels, dtype=np.float64)
        if c.shape != a.shape:
            raise ValueError(f"pseudo_labels shape {c.shape} does not match activations shape {a.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError("pseudo_labels contain NaN or infinite values")
        weights = np.abs(standardize(a) * standardize(c) + epsilon)
    else:
        raise ValueError(f"unknown sampling method {method!r}; expected one of {SAMPLING_METHODS}")
    return weights / weights.sum(axis=0)


def draw_indices(
    q: np.ndarray,
    size: int | tuple[int, ...],
    rng: np.random.Generator | Sequence[np.random.Generator],
) -> np.ndarray:
    """Draw input indices with replacement from q (inverse-CDF sampling, vectorised over units).

    Parameters
    ----------
    q
        (n,) probabilities of one unit or (n, K) with one distribution per column; columns need not be
        normalised exactly (they are rescaled to sum to 1).
    size
        Number of draws, or a shape such as ``(n_trials, n_draws)``.
    rng
        Source of the uniforms: one generator, or (for 2-D q) one generator per column, so that a unit's
        draws depend on its own seed only and not on which other units share the call.

    Returns
    -------
    numpy.ndarray
        int64 indices into the n inputs, of shape ``size`` for 1-D q and ``(K, *size)`` for 2-D q, sorted
        along the last axis (the order of independent draws carries no information; sorted uniforms make
        the inverse-CDF search several times faster and group repeated draws of one input). An input of
        probability 0 is never drawn.

    Examples
    --------
    >>> draw_indices(np.array([0.0, 1.0, 0.0]), 4, np.random.default_rng(0)).tolist()
    [1, 1, 1, 1]
    """
    probabilities = np.asarray(q, dtype=np.float64)
    shape = (size,) if isinstance(size, int | np.integer) else tuple(size)
    if probabilities.ndim == 1:
        return draw_indices(probabilities[:, None], shape, rng)[0]
    if probabilities.ndim != 2:
        raise ValueError(f"q must be (n,) or (n, K), got shape {probabilities.shape}")
    if np.any(probabilities < 0) or not np.all(np.isfinite(probabilities)):
        raise ValueError("q must be finite and non-negative")
    totals = probabilities.sum(axis=0)
    if np.any(totals <= 0):
        raise ValueError("every column of q needs positive total probability")
    n, n_units = probabilities.shape
    cdf = np.cumsum(probabilities / totals, axis=0).T
    cdf[:, -1] = 1.0
    offsets = np.arange(n_units, dtype=np.float64)
    flat_cdf = (cdf + offsets[:, None]).ravel()
    if isinstance(rng, np.random.Generator):
        uniforms = rng.random((n_units, *shape))
    else:
        if len(rng) != n_units:
            raise ValueError(f"got {len(rng)} generators for {n_units} columns of q")
        uniforms = np.stack([generator.random(shape) for generator in rng])
    uniforms.sort(axis=-1)
    expand = (slice(None),) + (None,) * len(shape)
    flat = np.searchsorted(flat_cdf, uniforms + offsets[expand], side="right")
    indices = flat - (np.arange(n_units) * n)[expand]
    # u + k may round up to k + 1 (u within 2**-53 of 1), which the search places past the column's end: such a
    # draw is the column's last input of positive probability, as u → 1 is
    last_positive = n - 1 - np.argmax(probabilities[::-1] > 0, axis=0)
    return np.minimum(indices, last_positive[expand]).astype(np.int64)
