"""Do two scorers rank the explanation methods alike? Kendall τ of method rankings with a bootstrap over units.

A scorer gives a (units × methods) matrix of per-unit scores (simulation correlation, a NeuronEval metric, CoSy
AUC, the simulated crowd's ρ_S). Each method's score is its column mean over units (NaN cells skipped); the
agreement of two scorers is Kendall's τ-b between the two vectors of method means (paper 004 Eq. 15, the
tie-corrected variant scipy computes),

    τ_b = (P − Q) / sqrt((P + Q + T_x)(P + Q + T_y)),

with P concordant and Q discordant method pairs and T_x, T_y pairs tied in one ranking only. Its percentile
interval resamples units (rows of both matrices together) with replacement.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from itertools import combinations

import numpy as np
import pandas as pd

#: Columns of :func:`scorer_agreement`.
AGREEMENT_COLUMNS = ["reference", "other", "n_methods", "n_units", "tau", "ci_low", "ci_high"]


def ranking_agreement(reference: np.ndarray, other: np.ndarray, *, n_boot: int, ci_level: float,
                      seed: int) -> tuple[float, float, float]:
    """Kendall τ between the method rankings of two (units × methods) score matrices (column means), and its
    percentile bootstrap interval over units (rows resampled together; NaN with fewer than 2 methods or units)."""
    from scipy.stats import kendalltau

    n_units, n_methods = reference.shape
    if n_units < 2 or n_methods < 2:
        return np.nan, np.nan, np.nan

    def tau(rows: np.ndarray) -> float:
        return float(kendalltau(np.nanmean(reference[rows], axis=0), np.nanmean(other[rows], axis=0)).statistic)

    value = tau(np.arange(n_units))
    rng = np.random.default_rng(seed)
    boot = np.array([tau(rng.integers(0, n_units, n_units)) for _ in range(n_boot)], dtype=float)
    boot = boot[np.isfinite(boot)]
    if not len(boot):
        return value, np.nan, np.nan
    low, high = np.quantile(boot, [(1 - ci_level) / 2, (1 + ci_level) / 2])
    return value, float(low), float(high)


def scorer_agreement(scorers: Mapping[str, pd.DataFrame], *, pairs: Sequence[tuple[str, str]] | None = None,
                     n_boot: int, ci_level: float, seed: int) -> pd.DataFrame:
    """Kendall τ (and bootstrap interval) of the method rankings of every pair of scorers.

    Parameters
    ----------
    scorers
        Scorer name → wide per-unit scores (index: units, e.g. (setting, unit); columns: methods).
    pairs
        (reference, other) scorer pairs; None = every pair in the order of ``scorers``.

    Each pair is compared on the units and methods both scorers have, after dropping units on which either
    scorer scores no method. Returns one row per pair (:data:`AGREEMENT_COLUMNS`).
    """
    pairs = list(combinations(scorers, 2)) if pairs is None else list(pairs)
    rows = []
    for reference, other in pairs:
        first, second = scorers[reference], scorers[other]
        methods = [method for method in first.columns if method in set(second.columns)]
        units = first.index.intersection(second.index)
        left, right = first.loc[units, methods], second.loc[units, methods]
        keep = left.notna().any(axis=1) & right.notna().any(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a bootstrap sample may leave a method all-NaN
            tau, low, high = ranking_agreement(left[keep].to_numpy(dtype=float), right[keep].to_numpy(dtype=float),
                                               n_boot=n_boot, ci_level=ci_level, seed=seed)
        rows.append({"reference": reference, "other": other, "n_methods": len(methods),
                     "n_units": int(keep.sum()), "tau": tau, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def mean_se(values: pd.Series | np.ndarray) -> tuple[float, float, int]:
    """Mean, standard error of the mean (``std(ddof=1)/sqrt(n)``) and count of the finite values (NaN when
    fewer than 1, resp. 2, values)."""
    array = np.asarray(values, dtype=float)
    array = array[np.isfinite(array)]
    mean = float(array.mean()) if len(array) else float("nan")
    se = float(array.std(ddof=1) / math.sqrt(len(array))) if len(array) > 1 else float("nan")
    return mean, se, len(array)


def method_summary(scores: pd.DataFrame, *, keys: Sequence[str], values: Sequence[str],
                   floor: str = "random_l1", ceiling: str = "ideal", reference: str | None = None) -> pd.DataFrame:
    """Mean ± standard error over units of each score column per ``keys`` group (which must end in ``method``),
    ``n_units`` (finite values of the first column) and ``n_unscored``, then the ``floor`` and ``ceiling``
    methods' means of ``reference`` (default: the first column) beside every row of their group (default ceiling:
    the truth on the world's ideal units, :data:`neuroneval.explain.ideal.IDEAL`)."""
    if keys[-1] != "method":
        raise ValueError(f"the last key must be 'method', got {list(keys)}")
    reference = reference or values[0]
    rows = []
    for group, frame in scores.groupby(list(keys), sort=False):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,), strict=True))
        for column in values:
            mean, se, count = mean_se(frame[column])
            row.update({f"{column}_mean": mean, f"{column}_se": se})
            if column == values[0]:
                row.update({"n_units": count, "n_unscored": len(frame) - count})
        rows.append(row)
    table = pd.DataFrame(rows)
    context = list(keys[:-1])
    for column, method in (("floor", floor), ("ceiling", ceiling)):
        anchor = table[table["method"] == method].set_index(context)[f"{reference}_mean"] if context else None
        if context:
            table[column] = [anchor.get(tuple(row) if len(context) > 1 else row[0], np.nan)
                             for row in table[context].itertuples(index=False)]
        else:
            values_of = table.loc[table["method"] == method, f"{reference}_mean"]
            table[column] = values_of.iloc[0] if len(values_of) else np.nan
    return table
