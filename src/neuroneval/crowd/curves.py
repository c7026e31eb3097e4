"""Tables of the simulated crowd study's two curves (paper 001, Fig. 2a and Fig. 3a): per curve and per unit.

Each curve is the mean over units of the relative correlation error, RCE = mean_k |ρ_S − ρ_gt| / ρ_gt (Eq. 13),
with its standard error over units; the per-unit table keeps every unit's error at full precision, the input
of :func:`~neuroneval.crowd.cost_reduction.cost_reduction_table`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from neuroneval.crowd.simulation import aggregation_errors, sampling_errors
from neuroneval.crowd.study_options import AggregationOptions, SamplingOptions
from neuroneval.crowd.study_units import StudyUnits
from neuroneval.grid_choice import first_best_index


def _mean_se(errors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over units (last axis) and its standard error."""
    n_units = errors.shape[-1]
    if n_units < 2:
        return errors.mean(axis=-1), np.full(errors.shape[:-1], np.nan)
    return errors.mean(axis=-1), errors.std(axis=-1, ddof=1) / np.sqrt(n_units)


def _fewest_raters_of_lowest_rce(rce: np.ndarray) -> np.ndarray:
    """Per cost (column of ``rce``, rater counts × costs, NaN where not run): the position of the rater count with
    the lowest mean RCE, the first (fewest raters) among float ties (:func:`~neuroneval.grid_choice.first_best_index`).
    """
    finite = np.where(np.isnan(rce), np.inf, rce)
    return np.array([first_best_index(column, higher_is_better=False) for column in finite.T], dtype=np.int64)


def _unit_frame(
    units: StudyUnits, keys: dict[str, np.ndarray], errors: np.ndarray, **parameters: object
) -> pd.DataFrame:
    """Tidy per-unit errors: one row per cell of ``errors`` (key axes..., K), keys first, then the unit."""
    n_units = units.rho_true.size
    cells = int(np.prod([values.size for values in keys.values()]))
    grids = np.meshgrid(*keys.values(), indexing="ij")
    frame = pd.DataFrame({name: np.repeat(grid.ravel(), n_units) for name, grid in zip(keys, grids, strict=True)})
    frame["unit"] = np.tile(np.asarray(units.unit_ids, dtype=object), cells)
    frame["concept"] = np.tile(np.asarray(units.concept_names, dtype=object), cells)
    frame["rho_true"] = np.tile(units.rho_true, cells)
    frame["relative_error"] = errors.reshape(cells * n_units)
    for name, value in parameters.items():
        frame[name] = value
    return frame


def sampling_study(
    units: StudyUnits, options: SamplingOptions, *, progress: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The sampling curve (Fig. 2a) of a simulated study: its tidy table and the per-unit errors behind it.

    ``options`` and ``progress`` are those of :func:`~neuroneval.crowd.simulation.sampling_errors`.

    Returns
    -------
    curve_df
        One row per (method, n_inputs): ``rce`` (Eq. 13, mean over units and trials), ``rce_se`` (standard
        error over units), ``unique_inputs`` (mean distinct inputs per sample), ``undefined_fraction``, and
        the parameters (rater_error, n_units, n_trials, epsilon, ddof, seed).
    unit_df
        One row per (method, n_inputs, unit): ``concept`` (Eq. 9), ``rho_true`` (Eq. 10),
        ``relative_error`` (|ρ_S − ρ_gt|/ρ_gt averaged over trials) and the parameters; the input of
        :func:`~neuroneval.crowd.cost_reduction.cost_reduction_table`.
    """
    sampled = sampling_errors(units, options, progress=progress)
    parameters = options.simulation.table_columns()
    rater_error, methods, sample_sizes = options.rater_error, options.methods, options.sample_sizes
    rce, rce_se = _mean_se(sampled["errors"])
    curve_df = pd.DataFrame(
        [
            {
                "method": method,
                "n_inputs": int(size),
                "rce": rce[i, j],
                "rce_se": rce_se[i, j],
                "unique_inputs": sampled["unique"][i, j],
                "undefined_fraction": sampled["undefined"][i, j],
                "rater_error": rater_error,
                "n_units": units.rho_true.size,
                **parameters,
            }
            for i, method in enumerate(methods)
            for j, size in enumerate(sample_sizes)
        ]
    )
    keys = {"method": np.asarray(methods, dtype=object), "n_inputs": np.asarray(sample_sizes, dtype=np.int64)}
    unit_df = _unit_frame(units, keys, sampled["errors"], rater_error=rater_error, **parameters)
    return curve_df, unit_df


def aggregation_study(
    units: StudyUnits, options: AggregationOptions, *, progress: bool = False
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The aggregation curve (Fig. 3a, App. A.3) of a simulated study: its table and the per-unit errors.

    ``options`` and ``progress`` are those of :func:`~neuroneval.crowd.simulation.aggregation_errors`.

    Returns
    -------
    curve_df
        One row per (method, cost, n_raters) that was run (at least
        :data:`~neuroneval.crowd.simulation.MIN_INPUTS` inputs): ``n_inputs``, ``rce``, ``rce_se``, ``best``
        (lowest RCE over rater counts at this cost and method; the fewest raters among float ties), and the parameters.
    unit_df
        One row per (method, n_raters, cost, unit): ``n_inputs``, ``concept``, ``rho_true``,
        ``relative_error`` (empty where the cell was not run) and the parameters.
    """
    aggregated = aggregation_errors(units, options, progress=progress)
    methods, rater_counts, costs = options.methods, options.rater_counts, options.costs
    parameters = {
        "sampling": options.sampling,
        "rater_error": options.rater_error,
        "assumed_rater_error": options.model_rater_error,
        "uniform_prior": options.uniform_prior,
        "n_units": units.rho_true.size,
        **options.simulation.table_columns(),
    }
    errors = aggregated["errors"]
    agg_rce, agg_se = _mean_se(errors)
    rows = []
    for i, method in enumerate(methods):
        best_r = _fewest_raters_of_lowest_rce(agg_rce[i])
        for r_index, n_raters in enumerate(rater_counts):
            for c_index, cost in enumerate(costs):
                if np.isnan(agg_rce[i, r_index, c_index]):
                    continue
                rows.append(
                    {
                        "method": method,
                        "cost": int(cost),
                        "n_raters": int(n_raters),
                        "n_inputs": int(aggregated["n_inputs"][r_index, c_index]),
                        "rce": agg_rce[i, r_index, c_index],
                        "rce_se": agg_se[i, r_index, c_index],
                        "best": bool(best_r[c_index] == r_index),
                        **parameters,
                    }
                )
    curve_df = pd.DataFrame(rows)
    keys = {
        "method": np.asarray(methods, dtype=object),
        "n_raters": np.asarray(rater_counts, dtype=np.int64),
        "cost": np.asarray(costs, dtype=np.int64),
    }
    unit_df = _unit_frame(units, keys, errors, **{k: v for k, v in parameters.items() if k != "n_units"})
    n_inputs = np.broadcast_to(aggregated["n_inputs"], (len(methods), *aggregated["n_inputs"].shape))
    unit_df.insert(3, "n_inputs", np.repeat(n_inputs.ravel(), units.rho_true.size))
    return curve_df, unit_df
