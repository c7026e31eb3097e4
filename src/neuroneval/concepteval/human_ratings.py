"""Human readability judgements of concepts (paper 004, Sec. 5.2): Table 3 (inter-rater τ) and Table 4 (concurrent
validity of every measure against the human mean), from a ratings file or from simulated raters.

A **ratings file** is a long CSV ``rater,concept,aspect,rating``: each rater scores each concept on the paper's
ordered scale 1 … ``levels`` (1 to 5 in the paper) for each aspect (``input`` and ``output`` readability in the
paper; the ``aspect`` column may be left out, then every rating is of ``readability``). Every rater must rate every
concept of an aspect: Kendall's τ between two raters compares their scores of the same concepts.

- :func:`table3_inter_rater`: per aspect and pair of raters, Kendall's τ of their scores (Eq. 15,
  :func:`~neuroneval.concepteval.measurement.inter_rater`, τ_b by default), with a bootstrap interval over
  concepts; plus, per pair, the ``average`` over aspects (Table 3's last column).
- :func:`table4_validity`: per aspect and measure, Kendall τ, Pearson r and Spearman ρ (over concepts) of the
  measure with the human mean rating (the criterion, :func:`human_means`)
  (:func:`~neuroneval.concepteval.measurement.concurrent_validity`); concepts where the measure is not finite
  are left out, and a measure constant over fewer than 3 usable concepts gets a NaN row.
- :func:`simulated_human_ratings`: the embedded default without a study, raters who see a planted truth through
  noise (:func:`~neuroneval.concepteval.measurement.simulate_raters`), written in the same format.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.concepteval.measurement import (
    MeasurementOptions,
    RaterOptions,
    concurrent_validity,
    inter_rater,
    simulate_raters,
)

RATING_COLUMNS = ("rater", "concept", "aspect", "rating")
#: The aspect of a ratings file without an ``aspect`` column.
DEFAULT_ASPECT = "readability"
#: Points of the paper's rating scale (Sec. 5.2.1: 1 to 5).
DEFAULT_LEVELS = 5


def read_human_ratings(path: str | Path, *, levels: int = DEFAULT_LEVELS) -> pd.DataFrame:
    """Read and check a ratings CSV (module docstring); returns columns rater, concept, aspect, rating (int64).

    Raises
    ------
    ValueError
        Naming the file, line (header = line 1) and column: a missing column, an empty cell, a rating that is not
        an integer in 1 … ``levels``, a (rater, concept, aspect) rated twice; or, naming the rater, concept and
        aspect, a rating missing from the complete raters × concepts design; or fewer than 2 raters or 3 concepts.
    """
    source = str(path)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "aspect" not in frame.columns:
        frame["aspect"] = DEFAULT_ASPECT
    missing = [column for column in RATING_COLUMNS if column not in frame.columns]
    if missing:
        raise ValueError(f"{source}, line 1: missing column(s) {', '.join(missing)}; expected "
                         f"{','.join(RATING_COLUMNS)} (aspect optional)")
    if frame.empty:
        raise ValueError(f"{source}: no ratings (only a header)")
    frame = frame[list(RATING_COLUMNS)].apply(lambda column: column.str.strip())
    for column in RATING_COLUMNS:
        empty = frame[column] == ""
        if empty.any():
            raise ValueError(f"{source}, line {int(np.flatnonzero(empty.to_numpy())[0]) + 2}, column {column}: "
                             "empty value")
    allowed = {str(level) for level in range(1, levels + 1)}
    bad = ~frame["rating"].isin(allowed)
    if bad.any():
        row = int(np.flatnonzero(bad.to_numpy())[0])
        raise ValueError(f"{source}, line {row + 2}, column rating: {frame['rating'].iloc[row]!r} is not an integer "
                         f"in 1 … {levels}")
    duplicated = frame.duplicated(["rater", "concept", "aspect"])
    if duplicated.any():
        row = int(np.flatnonzero(duplicated.to_numpy())[0])
        rater, concept, aspect = frame.iloc[row][["rater", "concept", "aspect"]]
        raise ValueError(f"{source}, line {row + 2}: rater {rater!r} rated concept {concept!r} ({aspect}) twice")
    frame["rating"] = frame["rating"].astype(np.int64)
    for aspect, rows in frame.groupby("aspect", sort=False):
        raters, concepts = pd.unique(rows["rater"]), pd.unique(rows["concept"])
        if raters.size < 2 or concepts.size < 3:
            raise ValueError(f"{source}: aspect {aspect!r} has {raters.size} rater(s) and {concepts.size} concept(s); "
                             "inter-rater agreement needs at least 2 raters and 3 concepts")
        rated = set(zip(rows["rater"], rows["concept"], strict=True))
        for rater in raters:
            for concept in concepts:
                if (rater, concept) not in rated:
                    raise ValueError(f"{source}: rater {rater!r} did not rate concept {concept!r} ({aspect}); every "
                                     "rater must rate every concept of an aspect")
    return frame.reset_index(drop=True)


def rating_matrix(ratings: pd.DataFrame, aspect: str) -> tuple[list[str], list[str], np.ndarray]:
    """Raters, concepts (first-seen order) and the (R, C) ratings of one aspect of :func:`read_human_ratings`."""
    rows = ratings[ratings["aspect"] == aspect]
    if rows.empty:
        raise ValueError(f"no ratings of aspect {aspect!r}")
    wide = rows.pivot(index="rater", columns="concept", values="rating")
    raters, concepts = list(pd.unique(rows["rater"])), list(pd.unique(rows["concept"]))
    return raters, concepts, wide.loc[raters, concepts].to_numpy(np.float64)


def human_means(ratings: pd.DataFrame) -> pd.DataFrame:
    """The criterion of Table 4: per aspect and concept, the mean rating over raters (``human_mean``)."""
    means = ratings.groupby(["aspect", "concept"], sort=False)["rating"].mean()
    return means.rename("human_mean").reset_index()


def table3_inter_rater(ratings: pd.DataFrame, options: MeasurementOptions | None = None) -> pd.DataFrame:
    """Table 3: Kendall's τ between every pair of raters per aspect, and their ``average`` over aspects.

    Returns
    -------
    pandas.DataFrame
        aspect, rater_a, rater_b, statistic, value, ci_low, ci_high, n_boot, seed, n_concepts; the ``average``
        rows (aspect ``"average"``, present with several aspects) carry the mean τ and no interval.
    """
    options = MeasurementOptions() if options is None else options
    frames = []
    for aspect in pd.unique(ratings["aspect"]):
        raters, _, matrix = rating_matrix(ratings, aspect)
        frames.append(inter_rater(matrix, raters, options).assign(aspect=aspect))
    table = pd.concat(frames, ignore_index=True)
    if len(frames) > 1:
        average = table.groupby(["rater_a", "rater_b", "statistic"], sort=False).agg(
            value=("value", "mean"), n_concepts=("n_concepts", "min")).reset_index().assign(aspect="average")
        table = pd.concat([table, average], ignore_index=True)
    return table[["aspect", "rater_a", "rater_b", "statistic", "value", "ci_low", "ci_high", "n_boot", "seed",
                  "n_concepts"]]


def _constant(values: np.ndarray) -> bool:
    return bool(np.ptp(values) <= 1e-9 * max(float(np.abs(values).max()), 1e-300))


def table4_validity(scores: pd.DataFrame, ratings: pd.DataFrame,
                    options: MeasurementOptions | None = None) -> pd.DataFrame:
    """Table 4: concurrent validity of every measure with the human mean of every aspect.

    Parameters
    ----------
    scores
        Long table ``concept, measure, value`` (e.g. one run of the concepteval ``measures.csv``); the rated
        concepts must all be in it.
    ratings
        :func:`read_human_ratings` (or :func:`simulated_human_ratings`).

    Returns
    -------
    pandas.DataFrame
        aspect, measure, statistic (kendall_tau_b, pearson, spearman), value, ci_low, ci_high, n_boot, seed,
        n_concepts (the concepts where the measure is finite).
    """
    options = MeasurementOptions() if options is None else options
    missing = [column for column in ("concept", "measure", "value") if column not in scores.columns]
    if missing:
        raise ValueError(f"measure scores lack column(s) {missing}; expected a long table concept,measure,value")
    if scores.duplicated(["concept", "measure"]).any():
        row = scores[scores.duplicated(["concept", "measure"])].iloc[0]
        raise ValueError(f"measure scores list ({row['concept']}, {row['measure']}) twice; select one run and model")
    wide = scores.pivot(index="concept", columns="measure", values="value").astype(np.float64)
    wide.index = wide.index.astype(str)
    frames = []
    for aspect, criterion in human_means(ratings).groupby("aspect", sort=False):
        concepts = criterion["concept"].astype(str).tolist()
        absent = [concept for concept in concepts if concept not in wide.index]
        if absent:
            raise ValueError(f"rated concept(s) {absent[:5]} ({aspect}) have no measure scores")
        target = criterion["human_mean"].to_numpy(np.float64)
        for measure in wide.columns:
            values = wide.loc[concepts, measure].to_numpy()
            keep = np.isfinite(values)
            if keep.sum() < 3 or _constant(values[keep]) or _constant(target[keep]):
                frames.append(pd.DataFrame({"measure": [measure], "statistic": ["undefined"], "value": [np.nan],
                                            "n_concepts": [int(keep.sum())], "aspect": aspect}))
                continue
            validity = concurrent_validity(values[keep], target[keep], [str(measure)], options)
            frames.append(validity.assign(aspect=aspect))
    table = pd.concat(frames, ignore_index=True)
    return table.reindex(columns=["aspect", "measure", "statistic", "value", "ci_low", "ci_high", "n_boot", "seed",
                                  "n_concepts"])


def simulated_human_ratings(true_scores: Mapping[str, Sequence[float]], concepts: Sequence[str],
                            options: RaterOptions | None = None) -> pd.DataFrame:
    """Ratings in the file format from raters who see each aspect's true score of each concept through noise.

    ``true_scores`` maps an aspect to its (C,) true scores over ``concepts``; each aspect's raters are
    :func:`~neuroneval.concepteval.measurement.simulate_raters` with ``options`` (the seed shifted by the aspect's
    position, so aspects get independent noise). Raters are named ``rater1`` … ``rater<R>``.
    """
    options = RaterOptions() if options is None else options
    frames = []
    for position, (aspect, truth) in enumerate(true_scores.items()):
        values = np.asarray(truth, dtype=np.float64)
        if values.shape != (len(concepts),):
            raise ValueError(f"true scores of aspect {aspect!r} have shape {values.shape}, expected ({len(concepts)},)")
        matrix = simulate_raters(values, dataclasses.replace(options, seed=options.seed + position))
        frames.append(pd.DataFrame({"rater": np.repeat([f"rater{r + 1}" for r in range(len(matrix))], len(concepts)),
                                    "concept": np.tile(np.asarray(concepts, dtype=object), len(matrix)),
                                    "aspect": aspect, "rating": matrix.ravel().astype(np.int64)}))
    return pd.concat(frames, ignore_index=True)
