"""Ingest crowd ratings and estimate each pair's correlation with an interval (paper 001, Sec. 3, 5.2).

A ratings file is a CSV with columns ``task,input,rater,label`` (what the study pages download). Reading
validates every row against the study design and raises :class:`RatingsError` naming the file, the line and
the column of the first problem: missing columns, empty cells, an unknown task, an input that the task did
not show (a gold item of :mod:`neuroneval.crowd.gold` counts as shown), a duplicate (task, input, rater), a
label other than 0/1.

Estimation, per (unit, explanation) pair: the ratings of each shown input are counted (α positives of m),
aggregated (:mod:`neuroneval.crowd.aggregation`, Bayes with the pseudo-label prior by default, the paper's
choice), expanded to the importance-sampling draws (an input drawn twice counts twice) and fed to the
estimator of Eq. 5–6. The uncertainty interval is a percentile interval over replicates:

- ``"bootstrap"``: resample the |S| draws with replacement (sampling uncertainty);
- ``"posterior"``: keep the draws, sample each input's true label from its Bayes posterior (label
  uncertainty; Bayes methods only);
- ``"both"``: both at once.
"""

from __future__ import annotations

import csv
import dataclasses
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args

import numpy as np
import pandas as pd

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    DEFAULT_PRIOR_CLIP,
    DEFAULT_RATER_ERROR,
    DEFAULT_UNIFORM_PRIOR,
    AggregationMethod,
    aggregate,
    bayes_posterior,
    pseudo_label_prior,
)
from neuroneval.crowd.design import StudyDesign
from neuroneval.crowd.estimator import is_correlation
from neuroneval.options import Options, check_choice

RATING_COLUMNS = ("task", "input", "rater", "label")
IntervalMethod = Literal["bootstrap", "posterior", "both"]
INTERVALS: tuple[IntervalMethod, ...] = get_args(IntervalMethod)


class RatingsError(ValueError):
    """A ratings file breaks the format or does not match the study design; the message says where."""


class CrowdWarning(UserWarning):
    """An estimate fell back to a documented convention (e.g. a pair whose ratings are all equal)."""


def read_ratings(paths: str | Path | Sequence[str | Path], design: StudyDesign) -> pd.DataFrame:
    """Read and validate one or more ratings CSV files against a study design.

    Parameters
    ----------
    paths
        One path or several (e.g. one file per rater); they are concatenated.
    design
        The study the ratings belong to (:func:`neuroneval.crowd.study_folder.read_design`).

    Returns
    -------
    pandas.DataFrame
        Columns task (str), input (int64), rater (str), label (int8), source (file name), line (line
        number in its file, header = line 1).

    Raises
    ------
    RatingsError
        Naming file, line and column: missing header columns, empty cell, unknown task, input not shown in
        that task, non-integer input, non-binary label, duplicate (task, input, rater) (within or across
        files), or no rating at all.
    """
    files = [paths] if isinstance(paths, str | Path) else list(paths)
    if not files:
        raise RatingsError("no ratings files given")
    shown = {(str(t), int(i)) for t, i in zip(design.samples["task"], design.samples["input_id"], strict=True)}
    if design.gold is not None:
        shown |= {(str(t), int(i)) for t, i in zip(design.gold["task"], design.gold["input_id"], strict=True)}
    tasks = {t for t, _ in shown}
    records: list[tuple[str, int, str, int, str, int]] = []
    seen: dict[tuple[str, int, str], str] = {}
    for path in files:
        source = str(path)
        try:
            handle = open(path, newline="", encoding="utf-8")
        except OSError as error:
            raise RatingsError(f"{source}: cannot read ratings file ({error.strerror})") from error
        with handle:
            reader = csv.reader(handle)
            header = next(reader, None)
            if header is None:
                raise RatingsError(f"{source}: empty file; expected header {','.join(RATING_COLUMNS)}")
            header = [name.strip().lstrip("\ufeff") for name in header]
            missing = [c for c in RATING_COLUMNS if c not in header]
            if missing:
                raise RatingsError(
                    f"{source}, line 1: missing column(s) {', '.join(missing)}; expected header "
                    f"{','.join(RATING_COLUMNS)}, got {','.join(header)}"
                )
            position = {c: header.index(c) for c in RATING_COLUMNS}
            for line, row in enumerate(reader, start=2):
                if not row or all(not cell.strip() for cell in row):
                    continue
                where = f"{source}, line {line}"
                if len(row) != len(header):
                    raise RatingsError(f"{where}: {len(row)} cells but the header has {len(header)}")
                cells = {c: row[position[c]].strip() for c in RATING_COLUMNS}
                for column, value in cells.items():
                    if value == "":
                        raise RatingsError(f"{where}, column {column}: empty value")
                task, rater = cells["task"], cells["rater"]
                if task not in tasks:
                    raise RatingsError(f"{where}, column task: unknown task {task!r} (not in the study design)")
                try:
                    input_id = int(cells["input"])
                except ValueError as error:
                    message = f"{where}, column input: {cells['input']!r} is not an integer input id"
                    raise RatingsError(message) from error
                if (task, input_id) not in shown:
                    raise RatingsError(f"{where}, column input: unknown input {input_id} for task {task!r}")
                if cells["label"] not in ("0", "1"):
                    raise RatingsError(f"{where}, column label: non-binary label {cells['label']!r}; expected 0 or 1")
                key = (task, input_id, rater)
                if key in seen:
                    raise RatingsError(
                        f"{where}: duplicate rating of input {input_id} in task {task!r} by rater {rater!r} "
                        f"(first at {seen[key]})"
                    )
                seen[key] = where
                records.append((task, input_id, rater, int(cells["label"]), source, line))
    if not records:
        raise RatingsError(f"{', '.join(str(p) for p in files)}: no ratings (only a header)")
    frame = pd.DataFrame(records, columns=[*RATING_COLUMNS, "source", "line"])
    frame["input"] = frame["input"].astype(np.int64)
    frame["label"] = frame["label"].astype(np.int8)
    return frame


def rating_counts(design: StudyDesign, ratings: pd.DataFrame, *, allow_missing: bool = False) -> pd.DataFrame:
    """The design's samples with ``positives`` (α) and ``n_ratings`` (m) per shown input.

    Raises
    ------
    RatingsError
        If an input got no rating, unless ``allow_missing`` (then such inputs are dropped; the remaining
        draws are still a valid importance sample when missingness does not depend on the content).
    """
    counts = (
        ratings.groupby(["task", "input"], sort=False)["label"]
        .agg(positives="sum", n_ratings="size")
        .reset_index()
        .rename(columns={"input": "input_id"})
    )
    samples = design.samples.copy()
    samples["task"] = samples["task"].astype(str)
    samples["input_id"] = samples["input_id"].astype(np.int64)
    merged = samples.merge(counts, on=["task", "input_id"], how="left")
    unrated = merged["n_ratings"].isna()
    if unrated.any():
        if not allow_missing:
            first = merged[unrated].iloc[0]
            raise RatingsError(
                f"{int(unrated.sum())} shown input(s) have no rating, e.g. input {int(first['input_id'])} of task "
                f"{first['task']!r}; pass allow_missing=True to drop them"
            )
        merged = merged[~unrated]
    merged["positives"] = merged["positives"].astype(np.int64)
    merged["n_ratings"] = merged["n_ratings"].astype(np.int64)
    return merged.reset_index(drop=True)


def estimate_correlations(
    design: StudyDesign,
    ratings: pd.DataFrame,
    *,
    method: AggregationMethod = "bayes_pseudo",
    rater_error: float = DEFAULT_RATER_ERROR,
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR,
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP,
    interval: IntervalMethod = "bootstrap",
    n_boot: int = 2000,
    ci_level: float = 0.95,
    ddof: int = 1,
    allow_missing: bool = False,
    seed: int = 0,
) -> pd.DataFrame:
    """Estimate the correlation of each (unit, explanation) pair from its ratings, with an interval.

    Parameters
    ----------
    design
        The study design (its samples carry activation, importance weight and prior of each input).
    ratings
        Validated ratings (:func:`read_ratings`).
    method
        Aggregation method (default ``"bayes_pseudo"``, Method 3b; ``"bayes_uniform"`` gives the pure
        human result).
    rater_error
        η assumed by the Bayes methods (default 0.13).
    uniform_prior, prior_clip
        β of Method 3a (default 0.01) and the clip range of the pseudo-label prior (default (0.001, 0.999)).
    interval
        ``"bootstrap"`` (over the draws), ``"posterior"`` (over the posterior labels) or ``"both"``.
    n_boot
        Replicates of the interval, an integer >= 1 (default 2000).
    ci_level
        Coverage of the percentile interval, in (0, 1) (default 0.95).
    ddof
        Delta degrees of freedom of Eq. 5–6 (default 1).
    allow_missing
        Drop shown inputs without ratings instead of failing.
    seed
        Seed of the replicates (combined with the pair id).

    Returns
    -------
    pandas.DataFrame
        One row per pair: the columns of ``design.pairs``, then aggregation, rho (Eq. 6), ci_low, ci_high,
        interval, ci_level, n_draws (|S|), n_inputs (distinct inputs rated), n_ratings, raters.
    """
    if interval not in INTERVALS:
        raise ValueError(f"unknown interval {interval!r}; expected one of {INTERVALS}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be an integer >= 1, got {n_boot!r}")
    if not 0 < ci_level < 1:
        raise ValueError(f"ci_level must lie in (0, 1), got {ci_level!r}")
    if interval != "bootstrap" and not method.startswith("bayes"):
        raise ValueError(f"interval {interval!r} needs a Bayes aggregation method, got {method!r}")
    counted = rating_counts(design, ratings, allow_missing=allow_missing)
    if method == "bayes_pseudo" and counted["prior"].isna().any():
        raise ValueError('method "bayes_pseudo" needs pseudo-label priors; the design has none for some inputs')
    raters_per_pair = (
        ratings.merge(design.samples[["task", "pair"]].drop_duplicates(), on="task", how="left")
        .groupby("pair")["rater"]
        .nunique()
    )
    tail = (1 - ci_level) / 2
    rows = []
    for pair, group in counted.groupby("pair", sort=True):
        positives = group["positives"].to_numpy()
        n_ratings = group["n_ratings"].to_numpy()
        prior_scores = group["prior"].to_numpy(dtype=np.float64)
        concept = aggregate(
            method,
            positives,
            n_ratings,
            rater_error=rater_error,
            uniform_prior=uniform_prior,
            pseudo_labels=prior_scores if method == "bayes_pseudo" else None,
            prior_clip=prior_clip,
        )
        draws = group["draws"].to_numpy(dtype=np.int64)
        expand = np.repeat(np.arange(len(group)), draws)
        activation = group["activation"].to_numpy(dtype=np.float64)[expand]
        weight = group["weight"].to_numpy(dtype=np.float64)[expand]
        rho = float(is_correlation(activation, concept[expand], weight, ddof=ddof))
        if rho == 0.0:
            warnings.warn(
                f"pair {pair}: the aggregated labels (or activations) of its sample are constant, so the "
                "correlation is undefined; reported as 0",
                CrowdWarning,
                stacklevel=2,
            )
        rng = np.random.default_rng([seed, int(pair)])
        size = expand.size
        picks = rng.integers(0, size, (n_boot, size)) if interval in ("bootstrap", "both") else None
        positions = np.broadcast_to(np.arange(size), (n_boot, size)) if picks is None else picks
        if interval == "bootstrap":
            labels = concept[expand][positions]
        else:
            prior = uniform_prior if method == "bayes_uniform" else pseudo_label_prior(prior_scores, prior_clip)
            posterior = bayes_posterior(positives, n_ratings, prior, rater_error=rater_error)
            sampled = (rng.random((n_boot, len(group))) < posterior).astype(np.float64)
            labels = np.take_along_axis(sampled, expand[positions], axis=1)
        replicates = is_correlation(activation[positions], labels, weight[positions], ddof=ddof)
        low, high = np.quantile(replicates, [tail, 1 - tail])
        rows.append(
            {
                "pair": int(pair),
                "aggregation": method,
                "rho": rho,
                "ci_low": float(low),
                "ci_high": float(high),
                "interval": interval,
                "ci_level": ci_level,
                "n_draws": int(size),
                "n_inputs": len(group),
                "n_ratings": int(n_ratings.sum()),
                "raters": int(raters_per_pair.get(pair, 0)),
            }
        )
    estimates = pd.DataFrame(rows)
    return design.pairs.merge(estimates, on="pair", how="inner")


@dataclasses.dataclass(frozen=True)
class EstimationOptions(Options):
    """How :func:`ingest_study` estimates each pair's correlation: the keyword parameters of
    :func:`estimate_correlations` (same names and defaults; the estimator checks their values and names a bad
    one, these options check the choices)."""

    method: AggregationMethod = "bayes_pseudo"
    rater_error: float = DEFAULT_RATER_ERROR
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR
    prior_clip: tuple[float, float] = DEFAULT_PRIOR_CLIP
    interval: IntervalMethod = "bootstrap"
    n_boot: int = 2000
    ci_level: float = 0.95
    ddof: int = 1
    allow_missing: bool = False
    seed: int = 0

    def validate(self) -> None:
        check_choice(self, "method", AGGREGATION_METHODS)
        check_choice(self, "interval", INTERVALS)


def ingest_study(
    design_directory: str | Path,
    ratings_paths: str | Path | Sequence[str | Path],
    options: EstimationOptions | None = None,
) -> pd.DataFrame:
    """Read a study directory and its ratings files and return :func:`estimate_correlations`' table, estimated as
    ``options`` say (default: the estimator's defaults)."""
    from neuroneval.crowd.study_folder import read_design

    options = EstimationOptions() if options is None else options
    design = read_design(design_directory)
    ratings = read_ratings(ratings_paths, design)
    return estimate_correlations(
        design, ratings, method=options.method, rater_error=options.rater_error,
        uniform_prior=options.uniform_prior, prior_clip=options.prior_clip, interval=options.interval,
        n_boot=options.n_boot, ci_level=options.ci_level, ddof=options.ddof, allow_missing=options.allow_missing,
        seed=options.seed)
