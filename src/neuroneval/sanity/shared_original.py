"""Why the theoretical Spearman cells of paper 000 (Tables C.1–C.4, reference mode) are single random draws.

In the authors' loop (``run_test_fast`` of their ``theoretical_sanity_check.ipynb``, and our
:func:`~neuroneval.sanity.theoretical.theoretical_test`) the original score ``s_0 = s(a, c)`` is computed *once* per
γ, with its own tie-breaking noise, and every draw's difference ``Δs_d = (s_d − s_0) / span`` subtracts that one
value. On an ideal binary unit Spearman with noise tie-breaking (``ties="reference"``) ranks the n(1 − γ) zeros of
the unit and of the concept in two independent random orders, so every score, ``s_0`` included, carries a random
term of standard deviation ≈ 1/√n, far above the signal at small γ (E s ≈ 3γ(1 − γ)). With
``s_d ~ N(m, τ²)`` independent of ``s_0``, given ``s_0`` each draw falls below ``−ε`` with the same probability, and
the run's mean Δs estimates ``Δ̄ = (m − s_0) / span``, so

    Decrease Acc = P(Δs_d < −ε | s_0) = Φ((−Δ̄ − ε) / σ),   σ = τ / span   (the per-draw sd of Δs)

(:func:`implied_decrease_acc`). A run's Decrease Acc is therefore decided by where its one ``s_0`` fell, and ranges
over (0, 1) from run to run however many draws it averages; its mean Δs and Decrease Acc are tied by the formula.
docs/fidelity.md applies it to the notebook's and the printed cells.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from neuroneval.sanity.delta import DEFAULT_EPSILON


def implied_decrease_acc(mean_delta: float | np.ndarray, per_draw_sd: float | np.ndarray, *,
                         epsilon: float = DEFAULT_EPSILON) -> float | np.ndarray:
    """Decrease Acc of a run whose draws share one original score: ``Φ((−mean_delta − ε) / per_draw_sd)``.

    Parameters
    ----------
    mean_delta : float or array
        The run's mean Δs (an estimate of ``(m − s_0) / span``; exact as the draws grow).
    per_draw_sd : float or array
        Standard deviation σ of one draw's Δs around it (> 0).
    epsilon : float, default 1e-3
        ε of Decrease Acc (000 Eq. 11).

    Returns
    -------
    float or ndarray in (0, 1)

    Examples
    --------
    >>> round(implied_decrease_acc(-0.0004, spearman_per_draw_sd(500_000)), 3)  # notebook, γ = 1e-4: 19.8 %
    0.198
    >>> round(implied_decrease_acc(-0.0018, spearman_per_draw_sd(500_000)), 3)  # printed C.3 beside C.1's 13.3 %
    0.871
    """
    per_draw_sd = np.asarray(per_draw_sd, dtype=float)
    if np.any(per_draw_sd <= 0):
        raise ValueError(f"per_draw_sd must be positive, got {per_draw_sd}")
    value = stats.norm.cdf((-np.asarray(mean_delta, dtype=float) - epsilon) / per_draw_sd)
    return float(value) if np.ndim(value) == 0 else value


def spearman_per_draw_sd(n: int, *, span: float = 2.0) -> float:
    """σ of one draw's Δs for reference-mode Spearman on an ideal unit at small γ: ``1 / (span · √n)``.

    The random term of each score is the Pearson correlation of two independent random orders of the ≈ n zeros,
    whose standard deviation is 1/√(n − 1) ≈ 1/√n (γ → 0); Δs divides it by the span 2 of [−1, 1].

    Examples
    --------
    >>> round(spearman_per_draw_sd(500_000), 6)
    0.000707
    """
    if n < 2:
        raise ValueError(f"n must be at least 2, got {n}")
    return 1.0 / (span * math.sqrt(n))
