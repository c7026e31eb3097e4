"""Several metrics in one call, as one tidy table: ``unit, concept, metric, <parameters>, score``.

:func:`score_table_chunks` scores each metric (at each point of an optional α/λ grid) with the engine of
:func:`neuroneval.metrics.score` — one :class:`~neuroneval.metrics.context.FeatureCache` shared by all metrics, so
each unit feature is prepared once — and yields the table in pieces of at most ``chunk_rows`` rows, metric by
metric, grid point by grid point, in row-major (unit, concept) order. ``unit``, ``concept`` and ``metric`` are
categorical columns (integer codes into the names, never one string per pair), so a piece costs about
:data:`TIDY_ROW_BYTES` per row however long the names are, and a writer that consumes the pieces one by one
(``neuroneval score``, :func:`neuroneval.tidy_writer.write_tidy`) holds one piece at a time.

The parameter columns are the union of the hyper-parameters of the requested metrics (:attr:`MetricSpec.params`;
``alpha, lam`` first, then ``tr_top_fraction, tr_n_top, tr_n_random, top_alpha``); a row holds the value its
metric was scored with and a missing value (NaN/NA) for a parameter its metric does not take.
:func:`score_table` is the whole table at once.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.metrics.budget import budget_bytes
from neuroneval.metrics.context import FeatureCache
from neuroneval.metrics.engine import GRID_PARAMS, run_grid
from neuroneval.metrics.frames import align
from neuroneval.metrics.metric_options import DEFAULTS, MetricOptions, WpmiAndRandomOptions, options_from_params
from neuroneval.metrics.registry import METRICS, get_spec
from neuroneval.metrics.validation import check_inputs

#: Columns before the parameter columns, and the last column.
KEY_COLUMNS = ("unit", "concept", "metric")
SCORE_COLUMN = "score"

#: ``metrics`` value that selects every registered metric (not the harmonic-mean combinations).
ALL_METRICS = "all"

#: Memory of one tidy row while a piece is built and written as CSV (codes, parameters, score, index arithmetic and
#: the writer's formatted text), used to size pieces from a memory budget (:func:`chunk_rows_for`).
TIDY_ROW_BYTES = 256

#: Rows per piece when the budget is unbounded.
MAX_CHUNK_ROWS = 2**22


def metric_names(metrics: str | Sequence[str]) -> list[str]:
    """The metrics to score: ``"all"`` (every registered metric), a comma-separated string (``"iou,auc"``) or a
    sequence of names; each checked against the registry (combinations ``hmean:…`` too), repeats dropped."""
    names = [name.strip() for name in metrics.split(",")] if isinstance(metrics, str) else list(metrics)
    if names == [ALL_METRICS]:
        return list(METRICS)
    if not names or any(not name for name in names):
        raise ValueError(f"metrics must name at least one metric (or {ALL_METRICS!r}), got {metrics!r}")
    for name in names:
        get_spec(name)
    return list(dict.fromkeys(names))


def table_params(metrics: Sequence[str]) -> list[str]:
    """The parameter columns of a table of ``metrics``: every hyper-parameter one of them takes, the grid's
    (α, λ) first, then in :data:`DEFAULTS` order."""
    taken = {param for metric in metrics for param in get_spec(metric).params}
    ordered = sorted(DEFAULTS, key=lambda param: param not in GRID_PARAMS)
    return [param for param in ordered if param in taken]


def metric_points(metric: str, grid: Sequence[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
    """The grid points that apply to ``metric``: each point restricted to the parameters it takes (α, λ), repeats
    dropped, so a metric without α is scored once on an α grid; ``[{}]`` without a grid."""
    if not grid:
        return [{}]
    taken = set(get_spec(metric).params)
    for point in grid:
        varying = sorted(set(point) - GRID_PARAMS)
        if varying:
            raise ValueError(f"grid points may set only {sorted(GRID_PARAMS)}; got {varying}")
    points = {tuple(sorted((name, value) for name, value in point.items() if name in taken)): None
              for point in grid}
    return [dict(point) for point in points]


def chunk_rows_for(memory_budget: int | str, n: int, n_units: int, n_concepts: int) -> int:
    """Rows per piece that keep a piece within ``memory_budget`` (:func:`~neuroneval.metrics.budget.budget_bytes`):
    budget / :data:`TIDY_ROW_BYTES`, at least 1,024 and at most :data:`MAX_CHUNK_ROWS`."""
    budget = budget_bytes(memory_budget, n, n_units, n_concepts)
    return MAX_CHUNK_ROWS if budget is None else int(min(MAX_CHUNK_ROWS, max(1024, budget // TIDY_ROW_BYTES)))


def _categories(names: list[Any], side: str) -> pd.CategoricalDtype:
    repeated = pd.Index(names)[pd.Index(names).duplicated()].unique().tolist()
    if repeated:
        raise ValueError(f"{side} column names must be unique to label a score table; repeated: {repeated[:5]}")
    return pd.CategoricalDtype(names)


def _param_column(name: str, value: Any, rows: int) -> Any:
    """A constant parameter column: float64 (NaN where unused), nullable ``Int64`` for integer parameters (NA), or
    strings (missing)."""
    default = DEFAULTS[name]
    if isinstance(default, str):
        return pd.array([value] * rows, dtype="str")
    if isinstance(default, int):
        return pd.array([value] * rows, dtype="Int64")
    return np.full(rows, np.nan if value is None else float(value))


def score_table_chunks(metrics: str | Sequence[str], activations: Any, concepts: Any, *,
                       options: MetricOptions | None = None, grid: Sequence[Mapping[str, Any]] | None = None,
                       cache: FeatureCache | None = None, progress: bool = False, chunk_rows: int | None = None,
                       **params: Any) -> Iterator[pd.DataFrame]:
    """Pieces of the tidy table of :func:`score_table` (module docstring), at most ``chunk_rows`` rows each
    (default: from the options' ``memory_budget``, :func:`chunk_rows_for`). Arguments as for
    :func:`score_table`."""
    names = metric_names(metrics)
    if options is not None and params:
        raise TypeError(f"pass options= or keyword parameters {sorted(params)}, not both")
    shared = options if options is not None else options_from_params("score_table", WpmiAndRandomOptions, params)
    inputs = align(activations, concepts)
    shapes = [np.shape(inputs.activations), np.shape(inputs.concepts)]
    if len(shapes[0]) != 2 or len(shapes[1]) != 2:
        check_inputs(inputs.activations, inputs.concepts)  # the engine's message for a malformed input
    n, n_units, n_concepts = shapes[0][0], shapes[0][1], shapes[1][1]
    if cache is None:
        budget = budget_bytes(shared.memory_budget, n, n_units, n_concepts)
        cache = FeatureCache() if budget is None else FeatureCache(max_bytes=budget)
    rows_per_chunk = chunk_rows or chunk_rows_for(shared.memory_budget, n, n_units, n_concepts)
    unit_type = _categories(inputs.unit_names or list(range(n_units)), "activations")
    concept_type = _categories(inputs.concept_names or list(range(n_concepts)), "concepts")
    metric_type = pd.CategoricalDtype(names)
    columns = table_params(names)
    total = n_units * n_concepts
    for metric in names:
        spec = get_spec(metric)
        metric_options = spec.options_from(shared)
        points = metric_points(metric, grid)
        results = run_grid(metric, inputs.activations, inputs.concepts, None, points, metric_options, cache=cache,
                           progress=progress, cache_source=inputs.cache_source)
        for point in points:
            scores = results.pop(0)  # each point's matrix is freed once written
            values = {name: point.get(name, getattr(metric_options, name)) if name in spec.params else None
                      for name in columns}
            flat_scores = scores.reshape(-1)
            for start in range(0, total, rows_per_chunk):
                flat = np.arange(start, min(total, start + rows_per_chunk))
                piece = {
                    "unit": pd.Categorical.from_codes(flat // n_concepts, dtype=unit_type),
                    "concept": pd.Categorical.from_codes(flat % n_concepts, dtype=concept_type),
                    "metric": pd.Categorical.from_codes(np.full(flat.size, names.index(metric)), dtype=metric_type),
                }
                piece.update({name: _param_column(name, value, flat.size) for name, value in values.items()})
                piece[SCORE_COLUMN] = flat_scores[start:start + flat.size]
                yield pd.DataFrame(piece)


def score_table(metrics: str | Sequence[str], activations: Any, concepts: Any, *,
                options: MetricOptions | None = None, grid: Sequence[Mapping[str, Any]] | None = None,
                cache: FeatureCache | None = None, progress: bool = False, **params: Any) -> pd.DataFrame:
    """Score several metrics on one pair of inputs: one tidy row per (unit, concept, metric, grid point).

    Parameters
    ----------
    metrics : str or sequence of str
        Metric names (as for :func:`neuroneval.metrics.score`, combinations included), a comma-separated string, or
        ``"all"`` for every registered metric.
    activations, concepts
        As for :func:`neuroneval.metrics.score`: arrays or DataFrames, frames with ``input_id`` matched by id.
    options : MetricOptions, optional
        Options shared by all metrics (any :class:`MetricOptions`, e.g. ``WpmiAndRandomOptions(alpha=0.01)``): each
        metric takes the fields it has (:meth:`MetricSpec.options_from`), e.g. α only where it binarizes.
    grid : sequence of mappings, optional
        α/λ points (as for :func:`neuroneval.metrics.score_grid`); each metric is scored at the distinct
        restrictions of the points to the parameters it takes (WPMI at every (α, λ), IoU at every α, Pearson
        once).
    cache : FeatureCache, optional
        Shared by all metrics; by default a new one limited to the options' memory budget.
    progress : bool
        A tqdm bar per metric.
    **params
        The shared options as keywords (not together with ``options``).

    Returns
    -------
    pandas.DataFrame
        Columns ``unit, concept, metric``, the parameter columns of the requested metrics (``alpha``, ``lam``, …;
        missing where a metric does not take one) and ``score``; rows metric by metric (in the given order), grid
        point by grid point, then unit-major. Row ``(k, t)`` of a metric at a point equals ``score(metric,
        activations, concepts, **shared, **point)[k, t]``.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.array([[3.0], [2.0], [0.0], [0.0]]); c = np.array([[1.0], [1.0], [0.0], [0.0]])
    >>> table = score_table("iou,correlation", a, c, alpha=0.5)
    >>> list(table.columns)
    ['unit', 'concept', 'metric', 'alpha', 'top_alpha', 'score']
    >>> table[["metric", "alpha", "score"]].round(4).values.tolist()
    [['iou', 0.5, 1.0], ['correlation', nan, 0.9623]]
    """
    pieces = list(score_table_chunks(metrics, activations, concepts, options=options, grid=grid, cache=cache,
                                     progress=progress, chunk_rows=MAX_CHUNK_ROWS, **params))
    return pd.concat(pieces, ignore_index=True)
