"""Cost model of a crowd study (paper 001, Sec. 4.2 and App. A.3): dollars per design, RCE per budget.

A task shows ``inputs_per_task`` inputs for ``price_per_task`` dollars, so one rating costs
c = price_per_task / inputs_per_task, and a (unit, explanation) pair rated on n inputs by r raters each costs

    cost(n, r) = c · n · r,

the paper's $0.06 / 15 · 90 · 2 = $0.72 (Sec. 4.2; :class:`CostModel` defaults). The expected RCE of a design is
read off a measured RCE curve (:func:`neuroneval.crowd.real_study.rce_curve` of Setting 2, or the simulated
curves) by log–log interpolation in n between the measured sample sizes, at the design's rater count;
its interval interpolates the curve's interval bounds the same way (no extrapolation: NaN outside the measured
range). :func:`design_for_budget` spends a budget on every measured rater count and marks the best,
:func:`cheapest_design` finds, per rater count, the fewest inputs whose expected RCE reaches a target and
marks the cheapest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from neuroneval.options import Options, check_range


@dataclass(frozen=True)
class CostModel(Options):
    """Prices of a crowd study: ``price_per_task`` dollars for a task of ``inputs_per_task`` inputs (the paper's
    MTurk setup: $0.05 to the rater + $0.01 fee for 15 inputs)."""

    price_per_task: float = 0.06
    inputs_per_task: int = 15

    def validate(self) -> None:
        check_range(self, "price_per_task", 0, low_open=True)
        check_range(self, "inputs_per_task", 1, integer=True)

    @property
    def price_per_rating(self) -> float:
        """c = price_per_task / inputs_per_task dollars."""
        return self.price_per_task / self.inputs_per_task

    def cost(self, n_inputs: float, n_raters: int) -> float:
        """Dollars for one pair: c · n · r.

        Examples
        --------
        >>> round(CostModel().cost(90, 2), 6)
        0.72
        """
        return self.price_per_rating * n_inputs * n_raters


def _curve_rows(curve: pd.DataFrame, method: str, n_raters: int, sampling: str | None) -> pd.DataFrame:
    missing = [column for column in ("method", "n_raters", "n_inputs", "rce", "ci_low", "ci_high")
               if column not in curve.columns]
    if missing:
        raise ValueError(f"RCE curve lacks column(s) {missing}; expected a 'crowd analyze' curve table")
    rows = curve[(curve["method"] == method) & (curve["n_raters"] == n_raters)]
    if sampling is not None and "sampling" in curve.columns:
        rows = rows[rows["sampling"] == sampling]
    return rows.sort_values("n_inputs")


def _loglog(x: np.ndarray, y: np.ndarray, at: float) -> float:
    if x.size == 0 or not x[0] <= at <= x[-1]:
        return float("nan")
    return float(np.exp(np.interp(np.log(at), np.log(x), np.log(np.maximum(y, 1e-300)))))


def expected_rce(curve: pd.DataFrame, *, method: str, n_inputs: float, n_raters: int,
                 sampling: str | None = None) -> dict[str, float]:
    """Expected RCE of n inputs × r raters with ``method`` (module docstring): ``rce``, ``ci_low``, ``ci_high``
    (NaN outside the measured sample sizes of that rater count)."""
    rows = _curve_rows(curve, method, n_raters, sampling)
    x = rows["n_inputs"].to_numpy(np.float64)
    return {name: _loglog(x, rows[name].to_numpy(np.float64), float(n_inputs)) for name in ("rce", "ci_low", "ci_high")}


def design_for_budget(curve: pd.DataFrame, budget: float, model: CostModel | None = None, *, method: str,
                      sampling: str | None = None) -> pd.DataFrame:
    """Per measured rater count r: n = ⌊budget / (c · r)⌋ inputs, the dollars spent and the expected RCE; ``best``
    marks the lowest expected RCE (App. A.3's black lines)."""
    model = CostModel() if model is None else model
    if not budget > 0:
        raise ValueError(f"budget must be > 0 dollars, got {budget!r}")
    rows = []
    for n_raters in sorted(pd.unique(curve.loc[curve["method"] == method, "n_raters"])):
        n_inputs = math.floor(budget / (model.price_per_rating * n_raters) + 1e-9)
        rows.append({"method": method, "n_raters": int(n_raters), "n_inputs": n_inputs,
                     "dollars": model.cost(n_inputs, int(n_raters)),
                     **expected_rce(curve, method=method, n_inputs=n_inputs, n_raters=int(n_raters),
                                    sampling=sampling)})
    table = pd.DataFrame(rows)
    if table.empty:
        raise ValueError(f"the RCE curve has no row of method {method!r}")
    finite = table["rce"].where(np.isfinite(table["rce"]), np.inf)
    table["best"] = np.isfinite(finite) & (finite == finite.min())
    return table


def cheapest_design(curve: pd.DataFrame, target_rce: float, model: CostModel | None = None, *, method: str,
                    sampling: str | None = None) -> pd.DataFrame:
    """Per measured rater count: the fewest inputs n (an integer) whose expected RCE is at most ``target_rce``,
    its dollars and expected RCE; NaN when the measured curve does not reach the target. ``cheapest`` marks the
    lowest cost."""
    model = CostModel() if model is None else model
    if not target_rce > 0:
        raise ValueError(f"target_rce must be > 0, got {target_rce!r}")
    rows = []
    for n_raters in sorted(pd.unique(curve.loc[curve["method"] == method, "n_raters"])):
        part = _curve_rows(curve, method, int(n_raters), sampling)
        x, y = part["n_inputs"].to_numpy(np.float64), part["rce"].to_numpy(np.float64)
        n_inputs = float("nan")
        reached = np.flatnonzero(y <= target_rce)
        if reached.size:
            j = int(reached[0])
            if j == 0:
                n_inputs = float(x[0])
            else:
                slope = (np.log(y[j]) - np.log(y[j - 1])) / (np.log(x[j]) - np.log(x[j - 1]))
                n_inputs = float(math.ceil(np.exp(np.log(x[j - 1]) + (np.log(target_rce) - np.log(y[j - 1])) / slope)
                                           - 1e-9))
        expected = expected_rce(curve, method=method, n_inputs=n_inputs, n_raters=int(n_raters), sampling=sampling)
        rows.append({"method": method, "n_raters": int(n_raters), "n_inputs": n_inputs,
                     "dollars": model.cost(n_inputs, int(n_raters)), "target_rce": target_rce, **expected})
    table = pd.DataFrame(rows)
    if table.empty:
        raise ValueError(f"the RCE curve has no row of method {method!r}")
    dollars = table["dollars"].where(np.isfinite(table["dollars"]), np.inf)
    table["cheapest"] = np.isfinite(dollars) & (dollars == dollars.min())
    return table
