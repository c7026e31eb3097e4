"""CoSy scores (paper 002 Sec. 3 step 3): a unit's activations on synthetic vs control images.

For a unit with control activations ``A0`` (n values) and synthetic activations ``A1`` (m values):

- AUC (Eq. 3): the probability that a synthetic image activates the unit more than a control image,
  ``Σ_{a∈A0} Σ_{b∈A1} 1[a < b] / (n m)``, with ties counting ½ (the Mann–Whitney statistic ``U / (n m)``, as
  ``sklearn.metrics.roc_auc_score``; Eq. 3 as printed counts ties 0, which only matters for saturated units).
  Computed by the metric engine's ``inverse_auc`` (unit activation = score, "is synthetic" = label).
- MAD (Eq. 4): ``(mean(A1) − mean(A0)) / std(A0)`` with the control standard deviation at ddof 1; the
  numerator is the metric engine's ``mad``. A constant control set (std 0) gives MAD ``nan`` (warned).
- p-value: one-sided Mann–Whitney U test that synthetic activations are larger (``scipy.stats.mannwhitneyu``,
  ``alternative="greater"``, asymptotic with tie correction).
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


def cosy_scores(control: np.ndarray, synthetic: np.ndarray) -> dict[str, np.ndarray]:
    """AUC (Eq. 3), MAD (Eq. 4) and the Mann–Whitney p-value of each unit (column).

    Parameters
    ----------
    control : array (n, K) or (n,)
        Activations of K units on the n control images.
    synthetic : array (m, K) or (m,)
        Activations of the same units on the m synthetic images of one explanation.

    Returns
    -------
    dict
        ``auc``, ``mad``, ``p_value``: float64 arrays of shape (K,).

    Examples
    --------
    >>> scores = cosy_scores(np.array([0.0, 1.0, 2.0, 3.0]), np.array([2.0, 4.0]))
    >>> float(scores["auc"][0]), round(float(scores["mad"][0]), 4)
    (0.8125, 1.1619)
    """
    from scipy.stats import mannwhitneyu

    control = _as_matrix(control, "control_activations")
    synthetic = _as_matrix(synthetic, "synthetic_activations")
    if control.shape[1] != synthetic.shape[1]:
        raise ValueError(f"control has {control.shape[1]} units but synthetic has {synthetic.shape[1]}")
    stacked = np.concatenate([control, synthetic])
    label = np.concatenate([np.zeros(len(control)), np.ones(len(synthetic))])[:, None]
    auc = score("inverse_auc", stacked, label)[:, 0]
    difference = score("mad", stacked, label)[:, 0]
    spread = control.std(axis=0, ddof=1) if len(control) > 1 else np.zeros(control.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        mad = np.where(spread > 0, difference / np.where(spread > 0, spread, 1.0), np.nan)
    if np.any(spread == 0):
        warnings.warn(f"{int(np.sum(spread == 0))} unit(s) are constant on the control images: MAD is nan",
                      RuntimeWarning, stacklevel=2)
    p_value = np.asarray(mannwhitneyu(synthetic, control, alternative="greater", axis=0,
                                      method="asymptotic").pvalue, dtype=np.float64)
    return {"auc": auc.astype(np.float64), "mad": mad.astype(np.float64), "p_value": p_value}
