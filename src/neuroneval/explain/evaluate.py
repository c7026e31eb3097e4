"""Score any explanation file against your own activations and concepts: :func:`evaluate` (docs/evaluate.md).

For each explanation source (a file or frame of ``unit, explanation, length, kind`` rows) and each unit:

* the explanation is simulated from the concept table (001 Eq. 14–19) on the held-out inputs of a seeded split
  (:func:`neuroneval.explain.benchmark.holdout_mask`) and scored exactly as the workflow's Tables 1–2 score
  (:func:`neuroneval.explain.benchmark.source_scores`): simulation correlation ρ (001 App. B.2) and every metric
  that passes both sanity tests of paper 000 — read from a sanity results table the project computes
  (``results/table3.csv``, column ``pass``), else the paper's Table 3 (:data:`SANITY_PASSING_METRICS`);
* each score gets a percentile bootstrap interval over the held-out inputs: ``unit_n_boot`` resamples of the
  held-out rows, the same resamples for every unit and source, each scored for all (unit, source) columns at once
  by the metric engine (``score_pairs`` on the pairs :func:`neuroneval.explain.simulate.simulation_metrics` scores),
  and ρ for all resamples from five matrix products (:func:`resampled_correlations`);
* per source the mean over its scored units, with a percentile bootstrap interval over units (``n_boot``), and
  for every two sources the paired difference of means over their common units, ``Δ = mean_u (s_A(u) − s_B(u))``,
  with a paired bootstrap interval over those units.

Two reference sources are always added: ``random`` (the floor: one uniformly drawn concept per unit,
:func:`~neuroneval.explain.random_explanations`, seeded) and, where each input has at most one active concept
(one categorical variable), ``optimum``: the exact best score any explanation reaches
(:func:`neuroneval.explain.benchmark.optimum_scores`, :mod:`neuroneval.explain.oracle`; closed forms, no interval).

Explanation files of any tool are read by :func:`neuroneval.explain.formats.read_explanation_file` with the
activation table's unit names and :attr:`EvaluateOptions.mapping` (free text → concepts); every row it cannot score
is a row of :attr:`Evaluation.unscorable`. Units that are constant or near-dead on the held-out inputs
(:func:`neuroneval.metrics.unit_checks.degenerate_units`, docs/design.md §5.6) keep their scores in ``units.csv``
with ``degenerate`` true, are listed after the other units, and are left out of the per-source means and the paired
differences (``n_units`` counts the units used); one :class:`~neuroneval.metrics.unit_checks.DegenerateUnitWarning`
names them.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.explain.benchmark import holdout_mask, optimum_scores, score_names, source_scores
from neuroneval.explain.explanation import CSV_COLUMNS
from neuroneval.explain.formats import UNIT_NOT_IN_TABLE, read_explanation_file
from neuroneval.explain.simulate import SANITY_PASSING_METRICS, simulate_table, to_unit_interval
from neuroneval.explain.text_mapping import TextMapping
from neuroneval.metrics import FeatureCache, get_spec, score_pairs
from neuroneval.metrics.unit_checks import (
    DEGENERATE_COLUMN,
    degenerate_units,
    flag_degenerate_rows,
    warn_small_probe_set,
)
from neuroneval.options import Options, OptionsError, check_fraction, check_range

#: Source names of the reference rows :func:`evaluate` adds (not allowed as your source names).
FLOOR = "random"
OPTIMUM = "optimum"
#: Columns of :attr:`Evaluation.units`.
UNIT_COLUMNS = ["unit", "source", "metric", "value", "ci_low", "ci_high", "kind", "length", "explanation",
                "n_held_out", DEGENERATE_COLUMN]
#: Where the sanity-passing metrics come from when no sanity table is given.
PAPER_TABLE3 = "paper 000 Table 3 (no sanity results table given)"


@dataclass(frozen=True)
class EvaluateOptions(Options):
    """Options of :func:`evaluate`.

    Attributes
    ----------
    holdout : float in (0, 1)
        Fraction of inputs held out for scoring (⌈holdout·n⌉ of a permutation seeded by ``seed``).
    seed : int
        Seed of the split, the random floor and the bootstraps.
    alpha : float in (0, 1]
        Top-α of the metrics that binarize activations (000 Eq. A.1).
    n_boot : int ≥ 0
        Bootstrap resamples over units for the per-source means and the paired differences (0: no intervals).
    unit_n_boot : int ≥ 0
        Bootstrap resamples over held-out inputs for each (unit, source) score (0: no intervals). Each resample
        costs one more engine pass over every (unit, source) column, about as much as the point estimates
        (benchmarks/bench_evaluate.py).
    ci_level : float in (0, 1)
        Coverage of the percentile intervals.
    sanity : str or None
        Path of a sanity results table (``results/table3.csv``: columns ``metric``, ``pass``); None: paper 000's
        Table 3.
    format : str
        Format of the explanation files (:func:`neuroneval.explain.formats.read_explanation_file`).
    mapping : TextMapping
        How free text maps to concept names beyond exact names and formulas: a synonyms CSV ``text,concept``, a
        local text-embedding model folder and its cosine threshold (:class:`~neuroneval.explain.text_mapping.
        TextMapping`).
    unit_template : str or None
        ``str.format`` template over a format's unit fields giving the activation-table column (None: the format's
        default, e.g. ``{layer}/{index}`` for Neuronpedia).
    unit_map : str or None
        Path of a CSV ``source_unit,unit`` renaming templated unit names to activation-table columns.
    """

    holdout: float = 0.5
    seed: int = 0
    alpha: float = 0.005
    n_boot: int = 1000
    unit_n_boot: int = 20
    ci_level: float = 0.95
    sanity: str | None = None
    format: str = "auto"
    mapping: TextMapping = field(default_factory=TextMapping)
    unit_template: str | None = None
    unit_map: str | None = None

    def validate(self) -> None:
        check_fraction(self, "holdout", high_open=True)
        check_fraction(self, "alpha")
        check_fraction(self, "ci_level", high_open=True)
        check_range(self, "n_boot", 0, integer=True)
        check_range(self, "unit_n_boot", 0, integer=True)
        check_range(self, "seed", 0, integer=True)


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns (docs/evaluate.md lists every column)."""

    units: pd.DataFrame  # UNIT_COLUMNS: one row per (unit, source, metric)
    summary: pd.DataFrame  # source, metric, mean, ci_low, ci_high, n_units, reference
    differences: pd.DataFrame  # source_a, source_b, metric, difference, ci_low, ci_high, n_units
    unscorable: pd.DataFrame  # source, unit, row, text, reason
    metrics: tuple[str, ...]
    sanity_source: str
    n_inputs: int
    n_held_out: int
    options: EvaluateOptions
    degenerate: tuple[str, ...] = ()  # units constant or near-dead on the held-out inputs, in column order
    degenerate_note: str = ""  # one line naming them (DegenerateUnits.summary), empty when there are none


def sanity_metrics(path: str | os.PathLike | None) -> tuple[tuple[str, ...], str]:
    """The metrics that pass both sanity tests and where that came from: the rows of a sanity results table
    (``results/table3.csv`` of ``snakemake sanity_results``) whose ``pass`` is true, in its order; without a table,
    :data:`SANITY_PASSING_METRICS` (paper 000 Table 3)."""
    from neuroneval.metrics import METRICS

    if path is None:
        return SANITY_PASSING_METRICS, PAPER_TABLE3
    table = pd.read_csv(path)
    missing = [column for column in ("metric", "pass") if column not in table.columns]
    if missing:
        raise ValueError(f"{path}: a sanity results table needs columns metric and pass; missing {missing}")
    flags = table["pass"].astype(str).str.lower()
    bad = flags[~flags.isin(["true", "false"])]
    if not bad.empty:
        raise ValueError(f"{path}, row {bad.index[0]}: column pass is {table['pass'].iloc[bad.index[0]]!r}, "
                         "expected True or False")
    passing = table.loc[flags == "true", "metric"].astype(str).tolist()
    unknown = [metric for metric in passing if metric not in METRICS]
    if unknown:
        raise ValueError(f"{path}: metric {unknown[0]!r} is not in the metric registry")
    return tuple(passing), f"sanity results table {path} ({len(passing)} of {len(table)} metrics pass)"


def aligned_tables(activations: pd.DataFrame, concepts: pd.DataFrame, *, activation_source: str = "activations",
                   concept_source: str = "concepts") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Both tables in the concept table's ``input_id`` order; an id in one table only is an error naming it."""
    for frame, name in ((activations, activation_source), (concepts, concept_source)):
        if io.ID_COLUMN not in frame.columns:
            raise ValueError(f"{name}: no {io.ID_COLUMN} column")
        duplicated = frame[io.ID_COLUMN][frame[io.ID_COLUMN].duplicated()]
        if not duplicated.empty:
            raise ValueError(f"{name}: input_id {duplicated.iloc[0]!r} appears more than once")
    left, right = set(activations[io.ID_COLUMN]), set(concepts[io.ID_COLUMN])
    if left != right:
        only_left, only_right = sorted(left - right)[:3], sorted(right - left)[:3]
        raise ValueError(f"input ids differ: {activation_source} only {only_left}, {concept_source} only "
                         f"{only_right} ({len(left - right)} and {len(right - left)} ids)")
    order = activations.set_index(io.ID_COLUMN).loc[concepts[io.ID_COLUMN]].reset_index()
    return order, concepts.reset_index(drop=True)


def _read_source(name: str, given: pd.DataFrame | str | os.PathLike, concept_names: Sequence[str],
                 unit_names: Sequence[str], options: EvaluateOptions) -> tuple[pd.DataFrame, pd.DataFrame]:
    """An explanation frame and its unscorable rows (``row, unit, text, reason``): a file is read with the
    activation table's unit names and the options' text mapping and unit naming."""
    if isinstance(given, pd.DataFrame):
        return given.reset_index(drop=True), pd.DataFrame(columns=["row", "unit", "text", "reason"])
    imported = read_explanation_file(given, format=options.format, concept_names=concept_names, source=str(given),
                                     mapping=options.mapping, unit_names=unit_names,
                                     unit_template=options.unit_template, unit_map=options.unit_map)
    return imported.explanations, imported.unscorable


def _percentile_interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of bootstrap samples along axis 0 (NaN-aware)."""
    tail = 50.0 * (1.0 - level)
    with np.errstate(invalid="ignore"):
        low, high = np.nanpercentile(samples, [tail, 100.0 - tail], axis=0)
    return low, high


def resampled_correlations(actual: np.ndarray, predicted: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """(B, K) Pearson correlation of column k of ``actual`` and of ``predicted`` on each resample ``rows[b]`` (row
    indices, with repetition), as :func:`~neuroneval.explain.simulate.simulation_correlation` of
    ``actual[rows[b]]``, ``predicted[rows[b]]`` gives it, for all resamples from five matrix products.

    With ``c_b(i)`` the number of times input i is drawn, ``x``, ``y`` the columns centred on their full-sample means
    (which leaves ρ unchanged) and ``m_x = Σ_i c_b(i) x_i / n``:
    ``ρ_bk = (Σ c x y − n m_x m_y) / sqrt((Σ c x² − n m_x²)(Σ c y² − n m_y²))``, so ``C @ x``, ``C @ y``,
    ``C @ xy``, ``C @ x²``, ``C @ y²`` (C the B × n count matrix) give every resample at once. A column that a
    resample leaves constant has ρ = 0, as in ``simulation_correlation``; its sum of squares is 0 up to rounding,
    so a resample variance below 1e-10 of ``Σ c x²`` counts as 0.
    """
    n = actual.shape[0]
    counts = np.zeros((rows.shape[0], n))
    np.add.at(counts, (np.arange(rows.shape[0])[:, None], rows), 1.0)
    x = actual - actual.mean(axis=0)
    y = predicted - predicted.mean(axis=0)
    mean_x, mean_y = counts @ x / n, counts @ y / n
    square_x, square_y = counts @ (x * x), counts @ (y * y)
    variance_x = square_x - n * mean_x**2
    variance_y = square_y - n * mean_y**2
    covariance = counts @ (x * y) - n * mean_x * mean_y
    varies = (variance_x > 1e-10 * square_x) & (variance_y > 1e-10 * square_y)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(varies, covariance / np.sqrt(np.where(varies, variance_x * variance_y, 1.0)), 0.0)
    return np.clip(rho, -1.0, 1.0)


def _input_intervals(actual: np.ndarray, simulated: np.ndarray, metrics: Sequence[str], options: EvaluateOptions,
                     metric_options: Any) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per column, the percentile interval of every score over ``unit_n_boot`` resamples of the held-out rows:
    simulation correlation for all resamples at once (:func:`resampled_correlations`), each engine metric in one
    call per resample for all columns (the pairs (k, k) that :func:`~neuroneval.explain.simulate.simulation_metrics`
    scores, on columns already in [0, 1])."""
    rng = np.random.default_rng([options.seed, 1])
    n = actual.shape[0]
    rescaled = to_unit_interval(simulated)
    draws = np.stack([rng.integers(0, n, size=n) for _ in range(options.unit_n_boot)])
    samples = {"simulation_correlation": resampled_correlations(actual, rescaled, draws)}
    samples.update({name: np.empty((options.unit_n_boot, actual.shape[1])) for name in metrics})
    units = np.arange(actual.shape[1])
    pairs = np.repeat(units[:, None], 2, axis=1)
    for draw, rows in enumerate(draws):
        resampled_actual, resampled_simulated = actual[rows], rescaled[rows]
        cache = FeatureCache()  # the resample's unit features, prepared once for all its metrics
        for name in metrics:
            samples[name][draw] = score_pairs(name, resampled_actual, resampled_simulated, pairs, units=units,
                                              cache=cache, options=get_spec(name).options_from(metric_options))
    return {name: _percentile_interval(values, options.ci_level) for name, values in samples.items()}


def _tidy(scores: pd.DataFrame, source: str, frame: pd.DataFrame | None, metrics: Sequence[str],
          intervals: Mapping[str, tuple[np.ndarray, np.ndarray]] | None, n_held_out: int) -> pd.DataFrame:
    """Wide per-unit scores → UNIT_COLUMNS rows (metric outermost)."""
    parts = []
    for name in score_names(metrics):
        low, high = intervals[name] if intervals else (np.full(len(scores), np.nan), np.full(len(scores), np.nan))
        parts.append(pd.DataFrame({
            "unit": scores["unit"].to_numpy(), "source": source, "metric": name, "value": scores[name].to_numpy(),
            "ci_low": low, "ci_high": high,
            "kind": frame["kind"].to_numpy() if frame is not None else "optimum",
            "length": frame["length"].to_numpy() if frame is not None else np.nan,
            "explanation": frame["explanation"].to_numpy() if frame is not None else "",
            "n_held_out": n_held_out}))
    return pd.concat(parts, ignore_index=True)


def _summary(units: pd.DataFrame, options: EvaluateOptions) -> pd.DataFrame:
    """Per (source, metric): mean over scored units that are not degenerate, with a percentile bootstrap interval
    over units."""
    rows = []
    rng = np.random.default_rng([options.seed, 2])
    for (source, metric), frame in units.groupby(["source", "metric"], sort=False):
        values = frame.loc[~frame[DEGENERATE_COLUMN].astype(bool), "value"].dropna().to_numpy()
        low = high = np.nan
        if len(values) and options.n_boot:
            means = values[rng.integers(0, len(values), size=(options.n_boot, len(values)))].mean(axis=1)
            low, high = _percentile_interval(means, options.ci_level)
        rows.append({"source": source, "metric": metric, "mean": values.mean() if len(values) else np.nan,
                     "ci_low": low, "ci_high": high, "n_units": len(values),
                     "reference": source in (FLOOR, OPTIMUM)})
    return pd.DataFrame(rows)


def _differences(units: pd.DataFrame, options: EvaluateOptions) -> pd.DataFrame:
    """Every two sources, per metric: the mean paired difference over common scored units that are not degenerate,
    paired bootstrap."""
    rows = []
    rng = np.random.default_rng([options.seed, 3])
    sources = list(dict.fromkeys(units["source"]))
    for metric, frame in units[~units[DEGENERATE_COLUMN].astype(bool)].groupby("metric", sort=False):
        wide = frame.pivot(index="unit", columns="source", values="value")
        for first, second in itertools.combinations(sources, 2):
            if first not in wide or second not in wide:
                continue
            delta = (wide[first] - wide[second]).dropna().to_numpy()
            low = high = np.nan
            if len(delta) and options.n_boot:
                means = delta[rng.integers(0, len(delta), size=(options.n_boot, len(delta)))].mean(axis=1)
                low, high = _percentile_interval(means, options.ci_level)
            rows.append({"source_a": first, "source_b": second, "metric": metric,
                         "difference": delta.mean() if len(delta) else np.nan, "ci_low": low, "ci_high": high,
                         "n_units": len(delta)})
    return pd.DataFrame(rows, columns=["source_a", "source_b", "metric", "difference", "ci_low", "ci_high",
                                       "n_units"])


def evaluate(activations: pd.DataFrame | str | os.PathLike, concepts: pd.DataFrame | str | os.PathLike,
             explanations: Mapping[str, pd.DataFrame | str | os.PathLike], *,
             options: EvaluateOptions | None = None) -> Evaluation:
    """Score explanation sources on one activation table and one concept table (module docstring).

    Parameters
    ----------
    activations
        ``input_id`` + one column per unit (a frame, or a Parquet path read by
        :func:`neuroneval.io.read_activation_table`).
    concepts
        ``input_id`` + one column per concept, values in [0, 1]: labels or pseudo-labels (frame or Parquet path).
    explanations
        Source name → explanation frame or file (any format of :data:`neuroneval.explain.formats.FORMATS`). A unit
        of the activation table that a source does not explain, and a row that cannot be scored (text that maps to
        no concept, unit not in the table, a unit explained twice), is listed in :attr:`Evaluation.unscorable`.

    Examples
    --------
    >>> import pandas as pd
    >>> acts = pd.DataFrame({"input_id": range(8), "u": [1.0, 0, 1, 0, 1, 0, 1, 0]})
    >>> cons = pd.DataFrame({"input_id": range(8), "a": [1.0, 0, 1, 0, 1, 0, 1, 0], "b": [0.0, 1] * 4})
    >>> mine = pd.DataFrame({"unit": ["u"], "explanation": ["a"], "length": [1], "kind": ["concept"]})
    >>> result = evaluate(acts, cons, {"mine": mine}, options=EvaluateOptions(n_boot=0, unit_n_boot=0, seed=1))
    >>> result.summary.set_index(["source", "metric"]).loc[("mine", "simulation_correlation"), "mean"]
    np.float64(1.0)
    """
    from neuroneval.explain import RandomOptions, random_explanations
    from neuroneval.metrics import TopAlphaOptions

    options = options or EvaluateOptions()
    reserved = [name for name in explanations if name in (FLOOR, OPTIMUM)]
    if reserved:
        raise OptionsError(f"explanation source name {reserved[0]!r} is reserved for a reference row")
    activation_source = str(activations) if not isinstance(activations, pd.DataFrame) else "activations"
    concept_source = str(concepts) if not isinstance(concepts, pd.DataFrame) else "concepts"
    if not isinstance(activations, pd.DataFrame):
        activations, _ = io.read_activation_table(activations)
    if not isinstance(concepts, pd.DataFrame):
        concepts, _ = io.read_concept_table(concepts)
    activations, concepts = aligned_tables(activations, concepts, activation_source=activation_source,
                                           concept_source=concept_source)
    metrics, sanity_source = sanity_metrics(options.sanity)
    unit_names = [str(column) for column in activations.columns if column != io.ID_COLUMN]
    concept_names = [str(column) for column in concepts.columns if column != io.ID_COLUMN]
    held = holdout_mask(len(activations), options.holdout, options.seed)
    table = pd.DataFrame(activations.drop(columns=[io.ID_COLUMN]).to_numpy(dtype=np.float64)[held],
                         columns=unit_names)
    concept_values = concepts[concept_names].to_numpy(dtype=np.float64)[held]
    metric_options = TopAlphaOptions(alpha=options.alpha)
    n_held_out = int(held.sum())
    warn_small_probe_set(n_held_out, "alpha", options.alpha, where="evaluate (held-out inputs)")
    checked = degenerate_units(table.to_numpy(), unit_names)
    sources = {name: _read_source(name, given, concept_names, unit_names, options)
               for name, given in explanations.items()}
    sources[FLOOR] = (random_explanations(unit_names, concept_names, RandomOptions(length=1, seed=options.seed)),
                      pd.DataFrame(columns=["row", "unit", "text", "reason"]))
    frames, unscorable = {}, []
    for name, (frame, unread) in sources.items():
        unscorable.append(unread.assign(source=name))
        frame = frame.reset_index(drop=True)
        units = frame["unit"].astype(str)
        outside = ~units.isin(unit_names)
        text = frame["kind"] == "text"
        dropped = outside | text
        reasons = np.where(outside[dropped], UNIT_NOT_IN_TABLE,
                           "text explanation: no concept simulator reads it")
        unscorable.append(pd.DataFrame({"source": name, "unit": units[dropped], "row": frame.index[dropped],
                                        "text": frame["explanation"][dropped], "reason": reasons}))
        explained = set(units) | set(unread["unit"].astype(str))
        absent = [unit for unit in unit_names if unit not in explained]
        unscorable.append(pd.DataFrame({"source": name, "unit": absent, "row": np.nan, "text": "",
                                        "reason": "the source has no explanation for this unit"}))
        frames[name] = frame.loc[~outside & ~text, list(CSV_COLUMNS)].reset_index(drop=True)
    parts = []
    scored_frames = {name: frame for name, frame in frames.items() if len(frame)}
    wide = {name: source_scores(frame, table, concept_values, concept_names, options=metric_options,
                                metrics=metrics, source=name) for name, frame in scored_frames.items()}
    intervals: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
    if options.unit_n_boot and scored_frames:
        columns = [table[frame["unit"].astype(str).tolist()].to_numpy() for frame in scored_frames.values()]
        simulated = [simulate_table(frame, concept_values, concept_names, source=name)
                     for name, frame in scored_frames.items()]
        joined = _input_intervals(np.hstack(columns), np.hstack(simulated), metrics, options, metric_options)
        start = 0
        for name, frame in scored_frames.items():
            stop = start + len(frame)
            intervals[name] = {metric: (low[start:stop], high[start:stop]) for metric, (low, high) in joined.items()}
            start = stop
    for name, frame in scored_frames.items():
        parts.append(_tidy(wide[name], name, frame, metrics, intervals.get(name), n_held_out))
    optimum = optimum_scores(table, concept_values, options=metric_options, metrics=metrics)
    if optimum is not None:
        parts.append(_tidy(optimum, OPTIMUM, None, metrics, None, n_held_out))
    columns = UNIT_COLUMNS[:-1]
    units = pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)
    units = flag_degenerate_rows(units, checked, consequence="evaluate keeps their scores in units.csv (degenerate "
                                 "true, listed last) and leaves them out of the means and paired differences")
    # within each (source, metric) the degenerate units come last, so no listing puts one first
    group = units.groupby(["source", "metric"], sort=False).ngroup()
    units = units.assign(group=group).sort_values(["group", DEGENERATE_COLUMN], kind="stable")
    units = units.reset_index(drop=True)[UNIT_COLUMNS]
    unread = pd.concat(unscorable, ignore_index=True)[["source", "unit", "row", "text", "reason"]]
    return Evaluation(units=units, summary=_summary(units, options), differences=_differences(units, options),
                      unscorable=unread, metrics=tuple(metrics), sanity_source=sanity_source,
                      n_inputs=len(activations), n_held_out=n_held_out, options=options,
                      degenerate=tuple(checked.names()), degenerate_note=checked.summary())


def read_sources(pairs: Sequence[str]) -> dict[str, Path]:
    """``NAME=PATH`` arguments → source name → path (names unique, paths as given)."""
    sources: dict[str, Path] = {}
    for text in pairs:
        name, separator, path = text.partition("=")
        if not separator or not name or not path:
            raise ValueError(f"--explanations expects NAME=PATH, got {text!r}")
        if name in sources:
            raise ValueError(f"--explanations: source name {name!r} given twice")
        sources[name] = Path(path)
    return sources
