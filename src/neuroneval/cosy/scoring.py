"""CoSy scores (paper 002 Sec. 3 step 3): a unit's activations on synthetic vs control images.

For a unit with control activations ``A0`` (n values) and synthetic activations ``A1`` (m values):

- AUC (Eq. 3): the probability that a synthetic image activates the unit more than a control image,
  ``Σ_{a∈A0} Σ_{b∈A1} 1[a < b] / (n m)``, with ties counting ½ (the Mann–Whitney statistic ``U / (n m)``, as
  ``sklearn.metrics.roc_auc_score``; Eq. 3 as printed counts ties 0, which only matters for saturated units).
  Computed by the metric engine's ``inverse_auc`` (unit activation = score, "is synthetic" = label).
- MAD (Eq. 4): ``(mean(A1) − mean(A0)) / std(A0)`` with the control standard deviation at ddof 1
  (``std(A0) = sqrt(Σ_{a∈A0} (a − ā)² / (n − 1))``); the numerator is the metric engine's ``mad``.
  Eq. 4 is undefined on a constant control set (``std(A0) = 0``, e.g. a ReLU unit that no control image
  activates). MAD is then **0**, whatever the synthetic mean, as in the reference code (``mad = 0.0`` when the
  control activations' std is 0), so a table of MAD means over units reproduces the paper's protocol: ``±inf``
  (the limit for a nonzero numerator) would make every mean over a layer with one such unit infinite, ``nan``
  would drop the unit. The 0 hides a difference when ``mean(A1) ≠ mean(A0)``: a RuntimeWarning counts those
  units and their direction, and AUC still scores them (1 when every synthetic activation exceeds the constant).
  With a single control image the ddof-1 std itself is undefined and MAD is ``nan`` (warned; the reference's
  ``torch.std`` of one value is also ``nan``).
- U: the Mann–Whitney statistic of the synthetic sample, ``U = Σ_{a∈A0} Σ_{b∈A1} (1[a < b] + ½·1[a = b])
  = AUC · n m`` (scipy's ``statistic`` of ``mannwhitneyu(synthetic, control)``, its first sample's U).
- p-value: two-sided Mann–Whitney U test of synthetic vs control, exactly as
  ``scipy.stats.mannwhitneyu(A1, A0, alternative="two-sided", method="auto")`` decides it for each unit alone:
  the exact null distribution of U when a sample has at most 8 values and the unit has no tied activations
  (pooled over both samples), else the normal approximation with tie correction and continuity correction
  (``2 · P(Z ≥ z)`` for ``max(U, nm − U)``, clipped to 1). The rule is scipy 1.17's ``_mwu_choose_method``.

The CoSy reference code (github.com/lkopf/cosy, ``src/evaluation.py`` at commit
00143a4c0e5c6e7f880fbf4948668d790a77aa57) reports per neuron ``auc`` (sklearn's ROC AUC), ``U1`` and ``p`` of
``scipy.stats.mannwhitneyu`` with scipy's defaults (two-sided, ``method="auto"``) and a median test. That call
passes the 0/1 label vector and the pooled activations as its two samples; the test here compares the synthetic
activations with the control activations, the comparison the paper's AUC describes, so ``U = AUC · n m``.
"""

from __future__ import annotations

import warnings

import numpy as np

from neuroneval.metrics import score


def _as_matrix(values: np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"{name} must be (n_images, n_units), got shape {array.shape}")
    if len(array) == 0:
        raise ValueError(f"{name} is empty: CoSy needs at least one {name.split('_')[0]} image")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds non-finite activations")
    return array


#: scipy's ``method="auto"`` rule of ``mannwhitneyu``: the exact null distribution when a sample has at most this
#: many values and nothing is tied, else the normal approximation.
EXACT_MAX_SAMPLE = 8


def mann_whitney_two_sided(synthetic: np.ndarray, control: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column: U of ``synthetic`` against ``control`` and the two-sided p-value, with scipy's ``auto`` method.

    Each unit (column) gets what ``scipy.stats.mannwhitneyu(synthetic[:, k], control[:, k],
    alternative="two-sided", method="auto")`` gives it alone: exact when ``min(m, n) <= 8`` and the pooled column
    has no ties, else asymptotic (tie- and continuity-corrected). One batched scipy call would choose a single
    method for all columns (any tie anywhere makes every column asymptotic), so columns are split by method first.

    Parameters
    ----------
    synthetic : array (m, K)
    control : array (n, K)

    Returns
    -------
    (u, p_value)
        float64 arrays of shape (K,); ``u`` is synthetic's U (pairs where synthetic wins, ties ½), in [0, m n].

    Examples
    --------
    >>> u, p = mann_whitney_two_sided(np.array([[3.0], [4.0]]), np.array([[0.0], [1.0], [2.0]]))
    >>> float(u[0]), float(p[0])  # exact: 2 of the C(5, 2) = 10 splits are as extreme (U = 6 or U = 0)
    (6.0, 0.2)
    """
    from scipy.stats import mannwhitneyu

    n_units = synthetic.shape[1]
    ordered = np.sort(np.concatenate([synthetic, control]), axis=0)
    tied = np.any(ordered[1:] == ordered[:-1], axis=0)
    small = min(len(synthetic), len(control)) <= EXACT_MAX_SAMPLE
    exact = ~tied if small else np.zeros(n_units, dtype=bool)
    u = np.empty(n_units, dtype=np.float64)
    p_value = np.empty(n_units, dtype=np.float64)
    for method, columns in (("exact", exact), ("asymptotic", ~exact)):
        if columns.any():
            result = mannwhitneyu(synthetic[:, columns], control[:, columns], alternative="two-sided",
                                  method=method, axis=0)
            u[columns] = result.statistic
            p_value[columns] = result.pvalue
    return u, p_value


def mad_from_difference(difference: np.ndarray, control: np.ndarray) -> np.ndarray:
    """MAD (Eq. 4) of each unit: ``difference / std(A0)``, the control std at ddof 1, with Eq. 4's undefined cases.

    ``difference`` (K,) is ``mean(A1) − mean(A0)`` per unit, ``control`` (n, K) the control activations.
    A unit constant on the control images (``std(A0) = 0``) gets MAD 0, the reference code's rule, for every
    ``difference`` (a RuntimeWarning counts the units whose difference is nonzero, whose 0 hides it); with
    ``n = 1`` the ddof-1 std is undefined and every MAD is ``nan`` (warned).

    Examples
    --------
    >>> float(mad_from_difference(np.array([1.5]), np.array([[0.0], [1.0], [2.0], [3.0]]))[0]) == 1.5 / (5 / 3) ** 0.5
    True
    """
    if len(control) < 2:
        warnings.warn("one control image: its standard deviation at ddof 1 is undefined, MAD is nan",
                      RuntimeWarning, stacklevel=3)
        return np.full(control.shape[1], np.nan)
    spread = control.std(axis=0, ddof=1)
    constant = spread == 0
    mad = difference / np.where(constant, 1.0, spread)
    mad[constant] = 0.0
    above, below = int(np.sum(constant & (difference > 0))), int(np.sum(constant & (difference < 0)))
    if above or below:
        warnings.warn(f"{above + below} unit(s) are constant on the control images but not on the synthetic ones "
                      f"({above} with a higher, {below} with a lower synthetic mean): MAD is 0 for them, as in the "
                      "reference code (Eq. 4 divides by a zero standard deviation); AUC still separates them",
                      RuntimeWarning, stacklevel=3)
    return mad


def cosy_scores(control: np.ndarray, synthetic: np.ndarray) -> dict[str, np.ndarray]:
    """AUC (Eq. 3), MAD (Eq. 4), Mann–Whitney U and two-sided p-value of each unit (column).

    Parameters
    ----------
    control : array (n, K) or (n,)
        Activations of K units on the n control images.
    synthetic : array (m, K) or (m,)
        Activations of the same units on the m synthetic images of one explanation.

    Returns
    -------
    dict
        ``auc``, ``mad``, ``u`` (synthetic's U, ``auc · n m``), ``p_value`` (two-sided, scipy's ``auto``
        method: :func:`mann_whitney_two_sided`): float64 arrays of shape (K,).

    Examples
    --------
    >>> scores = cosy_scores(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 4.0]))
    >>> float(scores["auc"][0]), round(float(scores["mad"][0]), 4), float(scores["u"][0])
    (0.8125, 1.1619, 6.5)
    """
    control = _as_matrix(control, "control_activations")
    synthetic = _as_matrix(synthetic, "synthetic_activations")
    if control.shape[1] != synthetic.shape[1]:
        raise ValueError(f"control has {control.shape[1]} units but synthetic has {synthetic.shape[1]}")
    stacked = np.concatenate([control, synthetic])
    label = np.concatenate([np.zeros(len(control)), np.ones(len(synthetic))])[:, None]
    auc = score("inverse_auc", stacked, label)[:, 0]
    difference = score("mad", stacked, label)[:, 0]
    mad = mad_from_difference(difference, control)
    u, p_value = mann_whitney_two_sided(synthetic, control)
    return {"auc": auc.astype(np.float64), "mad": mad.astype(np.float64), "u": u, "p_value": p_value}
