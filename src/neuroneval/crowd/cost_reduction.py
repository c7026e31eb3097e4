"""Cost-reduction factors of the simulated crowd study (paper 001, Sec. 4, App. A.3) at equal RCE.

The **cost-reduction factor** of a method over a baseline is cost_baseline(r*) / cost_method(r*), the ratio of
the costs at which their RCE curves (Eq. 13; minimised over the number of raters at each cost, App. A.3)
reach the same level r*, with a percentile bootstrap over units for its uncertainty. The curves are read from
the per-unit error tables of :mod:`neuroneval.crowd.curves`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from neuroneval.crowd.study_options import CostReductionOptions


def _envelope(errors: np.ndarray, unit_rows: np.ndarray | None = None) -> np.ndarray:
    """Best-over-raters mean-RCE curve, made non-increasing (the best RCE reachable up to each cost).

    ``errors`` is (raters, costs, K); NaN cells (too few inputs) are skipped.
    """
    selected = errors if unit_rows is None else errors[..., unit_rows]
    means = selected.mean(axis=-1)
    curve = np.where(np.isnan(means), np.inf, means).min(axis=0)
    running = np.minimum.accumulate(curve)
    return np.where(np.isfinite(running), running, np.nan)


def cost_at_rce(costs: np.ndarray, curve: np.ndarray, target: float) -> float:
    """Cost at which a non-increasing RCE curve first reaches ``target`` (log-log interpolation).

    Returns NaN when the curve never reaches ``target``, and also when it is already at or below it at the
    smallest cost (the crossing lies outside the measured range).

    Examples
    --------
    >>> round(cost_at_rce(np.array([10.0, 100.0]), np.array([0.4, 0.1]), 0.2), 6)
    31.622777
    """
    x = np.log(np.asarray(costs, dtype=np.float64))
    y = np.asarray(curve, dtype=np.float64)
    reached = np.flatnonzero(np.nan_to_num(y, nan=np.inf) <= target)
    if reached.size == 0 or reached[0] == 0 or np.isnan(y[reached[0] - 1]):
        return float("nan")
    j = reached[0]
    y0, y1 = np.log(y[j - 1]), np.log(max(y[j], 1e-300))
    fraction = 1.0 if y0 == y1 else (y0 - np.log(target)) / (y0 - y1)
    return float(np.exp(x[j - 1] + fraction * (x[j] - x[j - 1])))


def default_target_rce(baseline_curve: np.ndarray, method_curve: np.ndarray) -> float:
    """Geometric middle of the RCE range that both curves cover strictly inside their cost ranges.

    The baseline must reach the target above its smallest cost and the method must still be above it at
    its smallest cost, so the range is (max(min baseline, min method), min(baseline[0], method[0])).
    NaN when the ranges do not overlap (then no factor can be read off without extrapolation).
    """
    finite_b, finite_m = baseline_curve[np.isfinite(baseline_curve)], method_curve[np.isfinite(method_curve)]
    if finite_b.size < 2 or finite_m.size < 2:
        return float("nan")
    low = max(finite_b.min(), finite_m.min())
    high = min(finite_b[0], finite_m[0])
    if not low < high:
        return float("nan")
    return float(np.sqrt(low * high))


def cost_reduction_factor(
    costs: Sequence[float],
    baseline_errors: np.ndarray,
    method_errors: np.ndarray,
    *,
    target_rce: float | None = None,
    n_boot: int = 1000,
    ci_level: float = 0.95,
    seed: int = 0,
) -> dict[str, float]:
    """Cost reduction of a method over a baseline at equal RCE, with a bootstrap over units.

    factor = cost_baseline(r*) / cost_method(r*), where cost_X(r*) is the cost at which X's curve first
    reaches the RCE level r* (:func:`cost_at_rce`). A curve is the mean over units of the per-unit errors,
    minimised over the number of raters at each cost (App. A.3) and made non-increasing.

    Parameters
    ----------
    costs
        (S,) increasing costs shared by both curves.
    baseline_errors, method_errors
        Per-unit relative errors, (S, K) or (raters, S, K); NaN marks cells that were not run.
    target_rce
        r*; default :func:`default_target_rce` of the two full-data curves. It stays fixed in the
        bootstrap.
    n_boot
        Bootstrap resamples of the K units (with replacement); 0 skips the interval.
    ci_level
        Coverage of the percentile interval (default 0.95).
    seed
        Seed of the unit resampling.

    Returns
    -------
    dict
        ``target_rce``, ``baseline_cost``, ``method_cost``, ``factor``, ``ci_low``, ``ci_high`` (percentile
        interval over the resamples where both curves reach r*), ``valid_boot_fraction`` (share of those
        resamples).
    """
    grid = np.asarray(costs, dtype=np.float64)
    base = np.asarray(baseline_errors, dtype=np.float64)
    new = np.asarray(method_errors, dtype=np.float64)
    base = base[None] if base.ndim == 2 else base
    new = new[None] if new.ndim == 2 else new
    n_units = base.shape[-1]
    base_curve, new_curve = _envelope(base), _envelope(new)
    target = default_target_rce(base_curve, new_curve) if target_rce is None else float(target_rce)
    base_cost = cost_at_rce(grid, base_curve, target)
    new_cost = cost_at_rce(grid, new_curve, target)
    result = {
        "target_rce": target,
        "baseline_cost": base_cost,
        "method_cost": new_cost,
        "factor": base_cost / new_cost,
        "ci_low": float("nan"),
        "ci_high": float("nan"),
        "valid_boot_fraction": float("nan"),
    }
    if n_boot > 0 and np.isfinite(target):
        rng = np.random.default_rng([seed, 7])
        factors = np.full(n_boot, np.nan)
        for b in range(n_boot):
            rows = rng.integers(0, n_units, n_units)
            factors[b] = cost_at_rce(grid, _envelope(base, rows), target) / cost_at_rce(
                grid, _envelope(new, rows), target
            )
        valid = factors[np.isfinite(factors)]
        result["valid_boot_fraction"] = valid.size / n_boot
        if valid.size:
            tail = (1 - ci_level) / 2
            result["ci_low"], result["ci_high"] = (float(v) for v in np.quantile(valid, [tail, 1 - tail]))
    return result


#: Per-unit error columns that :func:`cost_reduction_table` reads, per experiment.
UNIT_ERROR_COLUMNS = {
    "sampling": ("method", "n_inputs", "unit", "relative_error"),
    "aggregation": ("method", "n_raters", "cost", "unit", "relative_error"),
}


def _error_arrays(unit_df: pd.DataFrame, experiment: str) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Cost grid and, per method, the (raters, grid, K) errors of a per-unit table (NaN where absent)."""
    missing = [column for column in UNIT_ERROR_COLUMNS[experiment] if column not in unit_df.columns]
    if missing:
        raise ValueError(f"{experiment} per-unit errors lack column(s) {missing}")
    grid_column = "n_inputs" if experiment == "sampling" else "cost"
    frame = unit_df if experiment == "aggregation" else unit_df.assign(n_raters=1)
    unit_ids = pd.unique(frame["unit"].astype(str))
    grid = np.sort(pd.unique(frame[grid_column]))
    raters = np.sort(pd.unique(frame["n_raters"]))
    index = pd.MultiIndex.from_product([raters, grid, unit_ids], names=["n_raters", grid_column, "unit"])
    arrays = {}
    for method, rows in frame.groupby("method", sort=False):
        values = rows.assign(unit=rows["unit"].astype(str)).set_index(["n_raters", grid_column, "unit"])
        if values.index.duplicated().any():
            raise ValueError(f"{experiment} per-unit errors list a ({method}, raters, {grid_column}, unit) cell twice")
        errors = values["relative_error"].astype(np.float64).reindex(index).to_numpy()
        arrays[str(method)] = errors.reshape(raters.size, grid.size, unit_ids.size)
    return grid.astype(np.float64), arrays, unit_ids.size


def cost_reduction_table(
    sampling_units: pd.DataFrame, aggregation_units: pd.DataFrame, options: CostReductionOptions
) -> pd.DataFrame:
    """Cost-reduction factors at equal RCE (:func:`cost_reduction_factor`) from per-unit error tables.

    Parameters
    ----------
    sampling_units, aggregation_units
        The ``unit_df`` of :func:`~neuroneval.crowd.curves.sampling_study` and
        :func:`~neuroneval.crowd.curves.aggregation_study` (or the same tables read back
        from CSV); the unit order of their first appearance fixes the bootstrap resampling.
    options
        The comparisons, unit groups and bootstrap (:class:`~neuroneval.crowd.study_options.CostReductionOptions`):
        triples whose methods are absent are skipped; each comparison is repeated on the units whose
        explanation starts with a unit-group prefix (needs a ``concept`` column), after the row for all units.

    Returns
    -------
    pandas.DataFrame
        One row per (comparison, unit group): experiment, baseline, method, ``unit_group`` (``"all"`` or the
        prefix), ``target_rce``, ``baseline_cost``, ``method_cost``, ``factor``, ``ci_low``, ``ci_high``,
        ``valid_boot_fraction``, ``n_units``, ``n_boot``, ``ci_level``, ``seed``. Groups without units are
        left out.
    """
    comparisons, target_rce, n_boot, ci_level, seed = (
        options.comparisons, options.target_rce, options.n_boot, options.ci_level, options.seed
    )
    selections: list[tuple[str, pd.DataFrame, pd.DataFrame]] = [("all", sampling_units, aggregation_units)]
    for prefix in options.unit_groups:
        if "concept" not in sampling_units.columns or "concept" not in aggregation_units.columns:
            raise ValueError("per-unit errors need a concept column to be grouped by concept prefix")
        chosen = [
            frame[frame["concept"].astype(str).str.startswith(prefix)] for frame in (sampling_units, aggregation_units)
        ]
        if len(chosen[0]) and len(chosen[1]):
            selections.append((prefix, chosen[0], chosen[1]))
    rows = []
    for group, sampling_rows, aggregation_rows in selections:
        per_experiment = {
            "sampling": _error_arrays(sampling_rows, "sampling"),
            "aggregation": _error_arrays(aggregation_rows, "aggregation"),
        }
        for experiment, baseline, method in comparisons:
            grid, curves, n_units = per_experiment[experiment]
            if baseline not in curves or method not in curves:
                continue
            factor = cost_reduction_factor(
                grid,
                curves[baseline],
                curves[method],
                target_rce=target_rce,
                n_boot=n_boot,
                ci_level=ci_level,
                seed=seed,
            )
            rows.append(
                {
                    "experiment": experiment,
                    "baseline": baseline,
                    "method": method,
                    "unit_group": group,
                    **factor,
                    "n_units": n_units,
                    "n_boot": n_boot,
                    "ci_level": ci_level,
                    "seed": seed,
                }
            )
    return pd.DataFrame(rows)
