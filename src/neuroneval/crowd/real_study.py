"""Setting 2 of paper 001 (Sec. 4, Figs. 2b, 3b, 4): RCE against cost from the collected ratings of a real study.

The paper labelled a pool of inputs per neuron with 9 MTurk raters each and, to see how the estimate behaves with
fewer raters and inputs, averaged the error over 1000 random subsets of the ratings per point. Here a pool is a
designed study (:mod:`neuroneval.crowd.design`): N importance-sampling draws per (unit, explanation) pair and
every shown input rated by R raters. For each sample size n ≤ N, rater count r ≤ R and trial,
:func:`setting2_study` takes n of the N draws **without replacement** (a subset of an iid sample from q is an
iid sample from q, so Eq. 5–6 stay unbiased) and r of each input's ratings, aggregates the ratings
(:mod:`neuroneval.crowd.aggregation`) and estimates ρ_S (Eq. 5–6, Eq. 12). Draws of one input share its ratings.

Each pair's error is |ρ_S − ρ_gt| / ρ_gt averaged over trials, ρ_gt (Eq. 10) the Pearson correlation of the
unit's activations with the ground-truth labels over all inputs (:func:`reference_correlations`); the curve is
RCE (Eq. 13), the mean over pairs, with its standard error over pairs and the interval RCE ± z·SE.

One study per sampling distribution gives the sampling curve (uniform vs importance sampling, Fig. 2b); the
aggregation methods see the same subsets (common random numbers) and give Figs. 3b and 4, the x axis being
cost = n · r ratings (× price per rating in dollars, :mod:`neuroneval.crowd.cost_model`).

:func:`simulate_study_ratings` writes ratings of a known truth with a known rater error η in the ingest format
(task,input,rater,label): the test bed of this analysis and of the docs page.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from neuroneval.crowd.aggregation import (
    AGGREGATION_METHODS,
    DEFAULT_PRIOR_CLIP,
    DEFAULT_RATER_ERROR,
    DEFAULT_UNIFORM_PRIOR,
    aggregate,
)
from neuroneval.crowd.design import StudyDesign
from neuroneval.crowd.estimator import is_correlation
from neuroneval.crowd.ingest import rating_counts
from neuroneval.options import Options, check_choice, check_range


def _truth_column(truth: pd.DataFrame, explanation: str, source: str) -> pd.Series:
    if explanation not in truth.columns:
        raise ValueError(f"{source}: no ground-truth column {explanation!r} (an explanation of the study)")
    return truth.set_index("input_id")[explanation]


def simulate_study_ratings(design: StudyDesign, truth: pd.DataFrame, *, n_raters: int, rater_error: float,
                           seed: int = 0, source: str = "truth table") -> pd.DataFrame:
    """Ratings of every shown input (gold items included) by ``n_raters`` raters who err with probability η.

    Rater ``rater{j}`` answers task t's input i with the ground-truth label c_gt(explanation, i) flipped with
    probability ``rater_error`` (independent over raters and inputs, the model of Eq. 8); a gold item's label is
    its known answer, flipped the same way. The generator is seeded by (seed, CRC32 of the task).

    Parameters
    ----------
    design
        The study (:func:`~neuroneval.crowd.study_folder.read_design`).
    truth
        Concept table: ``input_id`` plus one binary column per explanation of the study.
    n_raters, rater_error
        Raters per task (≥ 1) and η in [0, 0.5).

    Returns
    -------
    pandas.DataFrame
        Columns task, input, rater, label: the ``crowd ingest`` format.
    """
    if isinstance(n_raters, bool) or not isinstance(n_raters, int | np.integer) or n_raters < 1:
        raise ValueError(f"n_raters must be an integer >= 1, got {n_raters!r}")
    if not 0 <= rater_error < 0.5:
        raise ValueError(f"rater_error must lie in [0, 0.5), got {rater_error!r}")
    if "input_id" not in truth.columns:
        raise ValueError(f"{source}: needs an input_id column (concept-table contract)")
    gold = {} if design.gold is None else {(str(t), int(i)): int(a) for t, i, a in
                                           zip(design.gold["task"], design.gold["input_id"], design.gold["answer"],
                                               strict=True)}
    input_columns = [column for column in design.tasks.columns if column.startswith("input_")]
    frames = []
    for record in design.tasks.to_dict("records"):
        task = str(record["task"])
        column = _truth_column(truth, str(record["explanation"]), source)
        shown = np.asarray([int(record[c]) for c in input_columns if pd.notna(record[c])], dtype=np.int64)
        labels = np.asarray([gold[task, i] if (task, i) in gold else column.get(i, np.nan) for i in shown.tolist()],
                            dtype=np.float64)
        if not np.isin(labels, (0.0, 1.0)).all():
            bad = int(shown[~np.isin(labels, (0.0, 1.0))][0])
            raise ValueError(f"{source}, column {record['explanation']!r}: input {bad} has no binary label")
        rng = np.random.default_rng([seed, zlib.crc32(task.encode())])
        flips = rng.random((n_raters, shown.size)) < rater_error
        given = np.abs(labels[None, :] - flips).astype(np.int64)
        frames.append(pd.DataFrame({"task": task, "input": np.tile(shown, n_raters),
                                    "rater": np.repeat([f"rater{j}" for j in range(n_raters)], shown.size),
                                    "label": given.ravel()}))
    return pd.concat(frames, ignore_index=True)


def reference_correlations(design: StudyDesign, activations: pd.DataFrame, truth: pd.DataFrame, *,
                           source: str = "truth table") -> pd.DataFrame:
    """ρ_gt of each pair (Eq. 10): Pearson r of the unit's activations with the explanation's ground-truth labels
    over every input of the activation table; ``design.pairs`` plus ``rho_true``.

    Raises ``ValueError`` when the tables' input ids differ, a column is missing, or ρ_gt ≤ 0 (RCE divides by it).
    """
    if not np.array_equal(activations["input_id"].to_numpy(np.int64), truth["input_id"].to_numpy(np.int64)):
        raise ValueError(f"{source}: input_id column does not match the activation table's")
    rows = []
    for pair, unit, explanation in design.pairs[["pair", "unit", "explanation"]].itertuples(index=False):
        if str(unit) not in activations.columns:
            raise ValueError(f"unit {unit!r} of pair {pair} is not a column of the activation table")
        labels = _truth_column(truth, str(explanation), source).to_numpy(np.float64)
        rho = float(stats.pearsonr(activations[str(unit)].to_numpy(np.float64), labels).statistic)
        if not rho > 0:
            raise ValueError(f"pair {pair} ({unit}, {explanation}): ground-truth correlation {rho:.3g} is not > 0, "
                             "so its relative error (Eq. 13) is undefined; leave the pair out")
        rows.append({"pair": int(pair), "rho_true": rho})
    return design.pairs.merge(pd.DataFrame(rows), on="pair")


@dataclass(frozen=True)
class Setting2Options(Options):
    """Grid and randomness of :func:`setting2_study`: ``sample_sizes`` (n, draws per subset), ``rater_counts``
    (r, ratings per input), aggregation ``methods``, ``n_trials`` random subsets per point (1000 in the paper),
    the Bayes model's ``rater_error`` η and ``uniform_prior`` β, ``ci_level`` of the interval over pairs,
    ``ddof`` of Eq. 5–6, ``seed``."""

    sample_sizes: tuple[int, ...] = (10, 20, 45, 90)
    rater_counts: tuple[int, ...] = (1, 2, 3)
    methods: tuple[str, ...] = ("average", "majority", "bayes_uniform", "bayes_pseudo")
    n_trials: int = 200
    rater_error: float = DEFAULT_RATER_ERROR
    uniform_prior: float = DEFAULT_UNIFORM_PRIOR
    ci_level: float = 0.95
    ddof: int = 1
    seed: int = 0

    def validate(self) -> None:
        for method in self.methods:
            if method not in AGGREGATION_METHODS:
                raise ValueError(f"methods: unknown aggregation method {method!r}; expected one of "
                                 f"{AGGREGATION_METHODS}")
        for name in ("sample_sizes", "rater_counts"):
            values = getattr(self, name)
            if not values or any(isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1 for v in values):
                raise ValueError(f"{name}: expected positive integers, got {values!r}")
        check_range(self, "n_trials", 1, integer=True)
        check_range(self, "rater_error", 0, 0.5, high_open=True)
        check_range(self, "ci_level", 0, 1, low_open=True, high_open=True)
        check_range(self, "seed", 0, integer=True)
        check_choice(self, "ddof", (0, 1))


def _pair_pool(group: pd.DataFrame, ratings: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per distinct input of one pair: its (D, R_max) labels (NaN-padded) and the draw → input index."""
    rated = ratings.merge(group[["task", "input_id"]].rename(columns={"input_id": "input"}), on=["task", "input"])
    rated = rated.assign(slot=rated.groupby(["task", "input"]).cumcount())
    index = pd.MultiIndex.from_arrays([group["task"].astype(str), group["input_id"].astype(np.int64)])
    wide = rated.pivot_table(index=["task", "input"], columns="slot", values="label", aggfunc="first")
    labels = wide.reindex(index).to_numpy(np.float64)
    expand = np.repeat(np.arange(len(group)), group["draws"].to_numpy(np.int64))
    return labels, expand, (~np.isnan(labels)).sum(axis=1)


def setting2_errors(design: StudyDesign, ratings: pd.DataFrame, reference: pd.DataFrame,
                    options: Setting2Options) -> pd.DataFrame:
    """Per-pair relative errors of every (method, n, r) cell of one study (module docstring).

    Returns one row per (method, n_inputs, n_raters, pair): unit, explanation, rho_true, ``relative_error``
    (mean over ``n_trials`` of |ρ_S − ρ_gt|/ρ_gt) and ``undefined_fraction`` (subsets whose ρ_S is undefined,
    counted as 0, a relative error of 1). Raises ``ValueError`` when n exceeds a pair's draws or r the ratings of
    one of its inputs, naming the pair.
    """
    counted = rating_counts(design, ratings)
    if "bayes_pseudo" in options.methods and counted["prior"].isna().any():
        raise ValueError('method "bayes_pseudo" needs pseudo-label priors; the study has none for some inputs')
    rho_true = reference.set_index("pair")["rho_true"]
    rows = []
    for pair, group in counted.groupby("pair", sort=True):
        labels, expand, per_input = _pair_pool(group, ratings)
        if max(options.sample_sizes) > expand.size:
            raise ValueError(f"pair {pair}: sample size {max(options.sample_sizes)} exceeds its {expand.size} draws")
        if max(options.rater_counts) > per_input.min():
            worst = group.iloc[int(per_input.argmin())]
            raise ValueError(f"pair {pair}: {max(options.rater_counts)} raters per input requested but input "
                             f"{int(worst['input_id'])} of task {worst['task']!r} has {int(per_input.min())} rating(s)")
        activation = group["activation"].to_numpy(np.float64)
        weight = group["weight"].to_numpy(np.float64)
        prior = group["prior"].to_numpy(np.float64)
        truth = float(rho_true[pair])
        padded = np.nan_to_num(labels, nan=0.0)
        for size in options.sample_sizes:
            for n_raters in options.rater_counts:
                rng = np.random.default_rng([options.seed, int(pair), int(size), int(n_raters)])
                picks = np.argsort(rng.random((options.n_trials, expand.size)), axis=1)[:, :size]
                inputs = expand[picks]
                keys = np.where(np.isnan(labels), np.inf, rng.random((options.n_trials, *labels.shape)))
                chosen = np.argsort(keys, axis=-1)[..., :n_raters]
                positives = np.take_along_axis(np.broadcast_to(padded, keys.shape), chosen, axis=-1).sum(axis=-1)
                positives = np.take_along_axis(positives, inputs, axis=1)
                for method in options.methods:
                    concept = aggregate(method, positives, n_raters, rater_error=options.rater_error,
                                        uniform_prior=options.uniform_prior, pseudo_labels=prior[inputs],
                                        prior_clip=DEFAULT_PRIOR_CLIP)
                    estimates = is_correlation(activation[inputs], concept, weight[inputs], ddof=options.ddof)
                    rows.append({"method": method, "n_inputs": int(size), "n_raters": int(n_raters),
                                 "pair": int(pair), "unit": str(group["unit"].iloc[0]),
                                 "explanation": str(group["explanation"].iloc[0]), "rho_true": truth,
                                 "relative_error": float(np.mean(np.abs(estimates - truth) / truth)),
                                 "undefined_fraction": float(np.mean(estimates == 0))})
    return pd.DataFrame(rows)


def rce_curve(errors: pd.DataFrame, *, ci_level: float = 0.95) -> pd.DataFrame:
    """RCE (Eq. 13) per cell of per-pair errors: mean over pairs, standard error over pairs (ddof 1) and the normal
    interval RCE ± z·SE (z the (1 + level)/2 normal quantile); ``cost`` = n_inputs · n_raters ratings, ``best``
    marks the rater count with the lowest RCE at its cost, per sampling and method (App. A.3)."""
    keys = [key for key in ("sampling", "method", "n_raters", "n_inputs") if key in errors.columns]
    grouped = errors.groupby(keys, sort=False)
    curve = grouped.agg(rce=("relative_error", "mean"), rce_sd=("relative_error", "std"),
                        n_pairs=("relative_error", "size"),
                        undefined_fraction=("undefined_fraction", "mean")).reset_index()
    curve["rce_se"] = curve.pop("rce_sd") / np.sqrt(curve["n_pairs"])
    z = float(stats.norm.ppf((1 + ci_level) / 2))
    curve["ci_low"] = curve["rce"] - z * curve["rce_se"]
    curve["ci_high"] = curve["rce"] + z * curve["rce_se"]
    curve["ci_level"] = ci_level
    curve["cost"] = curve["n_inputs"] * curve["n_raters"]
    by_cost = [key for key in ("sampling", "method") if key in curve.columns] + ["cost"]
    curve["best"] = curve["rce"] == curve.groupby(by_cost)["rce"].transform("min")
    return curve


def setting2_study(studies: Mapping[str, tuple[StudyDesign, pd.DataFrame]], references: Mapping[str, pd.DataFrame],
                   options: Setting2Options) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Setting 2 of every study (one per sampling distribution): its curve and the per-pair errors behind it.

    Parameters
    ----------
    studies
        Sampling name (e.g. ``"uniform"``, ``"pseudo"``) → (design, validated ratings).
    references
        Sampling name → :func:`reference_correlations` of that study.
    options
        :class:`Setting2Options`.

    Returns
    -------
    curve_df
        :func:`rce_curve`: one row per (sampling, method, n_raters, n_inputs).
    pair_df
        :func:`setting2_errors` rows with a ``sampling`` column.
    """
    frames = [setting2_errors(design, ratings, references[name], options).assign(sampling=name)
              for name, (design, ratings) in studies.items()]
    pair_df = pd.concat(frames, ignore_index=True)
    pair_df = pair_df[["sampling", *[c for c in pair_df.columns if c != "sampling"]]]
    return rce_curve(pair_df, ci_level=options.ci_level), pair_df

