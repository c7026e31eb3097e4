"""Paper 001 Tables 1–2 (App. B.2) as library calls: the seeded holdout and the per-source scoring on it.

The workflow's tables (``neuroneval.pipeline.explain_steps``) and :func:`neuroneval.evaluate.evaluate` call the same
functions, so an explanation file scored by either gets the same numbers:

* :func:`holdout_mask`: the held-out inputs, ``⌈f·n⌉`` of a seeded permutation of the ``n`` inputs; methods are
  fitted on the rest and scored on these;
* :func:`source_scores`: one source's explanations simulated from the concept table on the held-out inputs
  (001 Eq. 14–19) and scored: simulation correlation ρ (001 App. B.2) and each metric of the engine
  (:func:`~neuroneval.explain.simulate.score_explanations`); text explanations keep empty scores (no concept
  simulator reads them);
* :func:`optimum_scores`: the exact best score any explanation reaches on each unit where the concepts are one
  categorical variable (:mod:`neuroneval.explain.oracle`), ``None`` otherwise;
* :func:`score_setting`: every method file of one setting scored per unit (and the ceiling and optimum rows);
  :func:`summary_table` reduces them to Table 1 or 2, :func:`method_agreement` to the Kendall τ between the
  rankings by simulation and by each metric, :func:`benchmark_agreement` adds CoSy and the simulated crowd.

What a method file is (its tables, its family, the rows that are no method) comes from the catalogue
(:mod:`neuroneval.explain_catalogue`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.explain.simulate import SANITY_PASSING_METRICS, score_explanations
from neuroneval.explain_catalogue import IDEAL, REFERENCE_ROWS, method_tables

#: Columns of the per-unit scores before the scores.
SCORE_KEYS = ["setting", "group", "method", "table", "unit", "kind", "length"]
#: Name prefixes of the CoSy and crowd scorers in agreement.csv (``cosy_auc:oracle``, ``crowd:bayes_pseudo``).
SCORER_PREFIXES = {"cosy": "cosy_auc:", "crowd": "crowd:"}


def holdout_mask(n_inputs: int, fraction: float, seed: int) -> np.ndarray:
    """(n,) bool, True on the ⌈fraction·n⌉ held-out inputs of a seeded permutation (at least 2 on each side).

    >>> holdout_mask(5, 0.4, 0).sum()
    np.int64(2)
    """
    n_held = math.ceil(fraction * n_inputs)
    if n_held < 2 or n_inputs - n_held < 2:
        raise ValueError(f"explain.holdout_fraction {fraction} leaves {n_held} of {n_inputs} inputs held out; "
                         "both parts need at least 2")
    held = np.zeros(n_inputs, dtype=bool)
    held[np.random.default_rng(seed).permutation(n_inputs)[:n_held]] = True
    return held


def score_names(metrics: Sequence[str] = SANITY_PASSING_METRICS) -> list[str]:
    """Score columns of :func:`source_scores`: ``simulation_correlation``, then ``metrics``."""
    return ["simulation_correlation", *metrics]


def source_scores(explanations: pd.DataFrame, activations: pd.DataFrame, concepts: Any,
                  concept_names: Sequence[str], *, options: Any, metrics: Sequence[str] = SANITY_PASSING_METRICS,
                  source: str = "<explanations>") -> pd.DataFrame:
    """Every unit of one source's explanations, scored on held-out inputs: ``unit`` + :func:`score_names`.

    ``activations`` holds the held-out inputs, one column per unit (named as the explanations' units); ``concepts``
    (n, T) the concept values on the same inputs, columns ``concept_names``. Rows follow ``explanations``; text
    explanations (and only they) get NaN scores. ``options`` are the metric options shared by the metrics
    (:class:`~neuroneval.metrics.TopAlphaOptions`: α of the binarizing metrics).
    """
    frame = explanations.reset_index(drop=True)
    scores = pd.DataFrame({"unit": frame["unit"].astype(str)})
    scorable = frame[frame["kind"] != "text"]
    if len(scorable):
        scored = score_explanations(scorable, activations, concepts, concept_names, metrics=metrics, source=source,
                                    options=options)
        scores = scores.merge(scored.drop(columns=["kind", "length"]), on="unit", how="left")
    return scores.reindex(columns=["unit", *score_names(metrics)])


def optimum_scores(activations: pd.DataFrame, concepts: Any, *, options: Any,
                   metrics: Sequence[str] = SANITY_PASSING_METRICS) -> pd.DataFrame | None:
    """The exact optimum per unit (``unit`` + :func:`score_names`; a metric without a closed form is NaN) where
    the concepts (n, T) are one categorical variable (:func:`~neuroneval.explain.oracle.concept_groups`), else
    ``None``."""
    from neuroneval.explain.oracle import concept_groups, oracle_scores

    groups = concept_groups(concepts)
    if groups is None:
        return None
    return oracle_scores(activations, groups, options=options).reindex(columns=["unit", *score_names(metrics)])


def unit_groups(layers: Sequence[str], unit_names: Sequence[str]) -> list[str]:
    """Each unit's group: the layer of the activation table it comes from (names are ``<layer>.<unit>`` when a
    setting joins several tables, docs/design.md §2.2)."""
    if len(layers) == 1:
        return [layers[0]] * len(unit_names)
    ordered = sorted(layers, key=len, reverse=True)
    return [next(layer for layer in ordered if name.startswith(f"{layer}.")) for name in unit_names]


def truth_recovered(explanation: Any, truth: Sequence[str]) -> bool:
    """Does an explanation name one of the unit's truth concepts? Text explanations: do all words of one truth
    concept's value (``class:red_circle`` → red, circle) appear among its words?"""
    from neuroneval.explain import Text
    from neuroneval.explain.captions import words_of

    if isinstance(explanation, Text):
        words = set(words_of(explanation.description))
        return any(set(words_of(concept.partition(":")[2].replace("_", " "))) <= words for concept in truth)
    return bool(set(explanation.concepts()) & set(truth))


def pseudo_cosines(concepts: np.ndarray, metadata: Mapping[str, Any], concept_names: Sequence[str]) -> np.ndarray:
    """The image–text cosines behind a pseudo-label table ``c_t = σ(a_t·(cos − b_t))``: ``cos = b_t + logit(c_t)/a_t``
    (values are clipped away from 0 and 1 first; ``a_t``, ``b_t`` shared or per concept, see
    :func:`~neuroneval.concepts.pseudo.calibration_vectors`), for CLIP-Dissect without re-embedding the images."""
    from scipy.special import logit

    from neuroneval.concepts.pseudo import calibration_vectors

    slopes, offsets = calibration_vectors(metadata, concept_names)
    clipped = np.clip(np.asarray(concepts, dtype=np.float64), 1e-7, 1 - 1e-7)
    return offsets + logit(clipped) / slopes


def score_setting(explanations: Mapping[str, pd.DataFrame], activations: np.ndarray, unit_names: Sequence[str],
                  groups: Sequence[str], concepts: np.ndarray, concept_names: Sequence[str],
                  truth: Mapping[str, Sequence[str]], *, alpha: float,
                  ideal: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-unit scores of every method's explanations on held-out inputs (``SCORE_KEYS`` + ``score_names()`` +
    ``truth_recovered``; :func:`source_scores`, as ``neuroneval evaluate`` scores).

    With ``ideal`` (the world's ideal units on the same inputs, one column per unit) the ``truth`` explanations are
    also scored on them: the rows of method :data:`~neuroneval.explain_catalogue.IDEAL`, the ceiling
    (:mod:`neuroneval.explain.ideal`)."""
    from neuroneval.explain.ideal import ideal_scores
    from neuroneval.metrics import TopAlphaOptions

    group_of = dict(zip(unit_names, groups, strict=True))
    table = pd.DataFrame(activations, columns=list(unit_names))
    options = TopAlphaOptions(alpha=alpha)
    parts = []
    for method, frame in explanations.items():
        frame = frame.reset_index(drop=True)
        scored = source_scores(frame, table, concepts, concept_names, options=options, source=method)
        parts += _method_rows(method, frame, scored, group_of, truth)
    if ideal is not None and "truth" in explanations:
        frame = explanations["truth"]
        frame = frame[frame["unit"].astype(str).isin(set(ideal.columns.astype(str)))].reset_index(drop=True)
        scored = ideal_scores(frame, ideal, concepts, concept_names, options=options)
        parts += _method_rows(IDEAL, frame, scored, group_of, truth)
    parts += _oracle_rows(table, concepts, group_of, options)
    return pd.concat(parts, ignore_index=True)


def _oracle_rows(activations: pd.DataFrame, concepts: np.ndarray, group_of: Mapping[str, str],
                 options: Any) -> list[pd.DataFrame]:
    """Rows of method :data:`~neuroneval.explain.oracle.ORACLE` (both tables): the exact best score any explanation
    reaches on each unit (:func:`optimum_scores`), where the concepts are one
    categorical variable (the LM's next tokens, the class units' classes); none otherwise."""
    from neuroneval.explain.oracle import ORACLE

    scores = optimum_scores(activations, concepts, options=options)
    if scores is None:
        return []
    scores = scores.assign(kind="oracle", length=np.nan, group=[group_of[unit] for unit in scores["unit"]],
                           method=ORACLE, truth_recovered=np.nan)
    return [scores.assign(table=table_id) for table_id in (1, 2)]


def reference_rows() -> tuple[str, ...]:
    """Methods of the score tables that are no method: :data:`~neuroneval.explain_catalogue.REFERENCE_ROWS` and
    the exact optimum (:data:`neuroneval.explain.oracle.ORACLE`)."""
    from neuroneval.explain.oracle import ORACLE

    return (*REFERENCE_ROWS, ORACLE)


def _method_rows(method: str, frame: pd.DataFrame, scored: pd.DataFrame, group_of: Mapping[str, str],
                 truth: Mapping[str, Sequence[str]]) -> list[pd.DataFrame]:
    """One method's per-unit rows (every unit of ``frame``, with ``scored``'s scores where it has them), once per
    table of :func:`method_tables`."""
    from neuroneval.explain import parse

    scores = pd.DataFrame({"unit": frame["unit"].astype(str)})
    scores = scores.merge(scored.drop(columns=["kind", "length"], errors="ignore"), on="unit", how="left")
    scores = scores.reindex(columns=["unit", *score_names()])
    scores["kind"] = frame["kind"].to_numpy()
    scores["length"] = frame["length"].to_numpy()
    scores["group"] = [group_of[unit] for unit in scores["unit"]]
    scores["method"] = method
    recovered = [float(truth_recovered(parse(text, kind), truth[unit])) if unit in truth else np.nan
                 for unit, text, kind in zip(frame["unit"].astype(str), frame["explanation"], frame["kind"],
                                             strict=True)]
    scores["truth_recovered"] = recovered
    return [scores.assign(table=table_id) for table_id in method_tables(method)]


def summary_table(scores: pd.DataFrame, table_id: int) -> pd.DataFrame:
    """Table 1 or 2: per (setting, group, method) the mean ± standard error of every score over units, the
    truth-recovery rate on units with truth, and the floor (random), ceiling
    (:data:`~neuroneval.explain_catalogue.IDEAL`: the truth on the world's ideal units) and optimum
    (:data:`~neuroneval.explain.oracle.ORACLE`: the best any explanation reaches on the units, NaN where the
    concepts are not one categorical variable) simulation correlation beside every row."""
    from neuroneval.explain.oracle import ORACLE

    part = scores[scores["table"] == table_id]
    rows = []
    for (setting, group, method), frame in part.groupby(["setting", "group", "method"], sort=False):
        row: dict[str, Any] = {"setting": setting, "group": group, "method": method,
                               "kind": "/".join(sorted(frame["kind"].unique())), "n_units": len(frame),
                               "mean_length": frame["length"].mean()}
        for column in score_names():
            values = frame[column].dropna()
            row[f"{column}_mean"] = values.mean() if len(values) else np.nan
            row[f"{column}_se"] = values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else np.nan
        recovered = frame["truth_recovered"].dropna()
        row["truth_recovery"] = recovered.mean() if len(recovered) else np.nan
        row["n_truth_units"] = len(recovered)
        rows.append(row)
    table = pd.DataFrame(rows)
    floor_name = "random_l1" if table_id == 1 else "random"
    for column, method in (("floor", floor_name), ("ceiling", IDEAL), ("optimum", ORACLE)):
        reference = table[table["method"] == method].set_index(["setting", "group"])["simulation_correlation_mean"]
        table[column] = [reference.get((s, g), np.nan) for s, g in zip(table["setting"], table["group"], strict=True)]
    return table


def method_agreement(scores: pd.DataFrame, table_id: int, metrics: Sequence[str], *, n_boot: int,
                     ci_level: float, seed: int) -> pd.DataFrame:
    """Kendall τ between the method rankings by mean simulation correlation and by each metric, per setting and
    pooled over settings (the methods every setting has), with a percentile bootstrap interval over units."""
    from neuroneval.explain.agreement import ranking_agreement

    part = scores[(scores["table"] == table_id) & ~scores["method"].isin(reference_rows())
                  & (scores["kind"] != "text")]
    scopes = [(str(setting), frame) for setting, frame in part.groupby("setting", sort=False)]
    common = set.intersection(*(set(frame["method"]) for _, frame in scopes)) if scopes else set()
    scopes.append(("all", part[part["method"].isin(common)]))
    rows = []
    for scope, frame in scopes:
        wide = {column: frame.pivot_table(index=["setting", "unit"], columns="method", values=column)
                for column in ("simulation_correlation", *metrics)}
        reference = wide["simulation_correlation"].dropna()
        for metric in metrics:
            other = wide[metric].reindex(index=reference.index, columns=reference.columns).to_numpy()
            value, low, high = ranking_agreement(reference.to_numpy(), other, n_boot=n_boot, ci_level=ci_level,
                                                 seed=seed)
            rows.append({"table": table_id, "setting": scope, "reference": "simulation_correlation",
                         "metric": metric, "n_methods": reference.shape[1],
                         "n_units": reference.shape[0], "tau": value, "ci_low": low, "ci_high": high,
                         "n_boot": n_boot, "ci_level": ci_level, "seed": seed})
    return pd.DataFrame(rows)


def scorer_tables(scores: pd.DataFrame, cosy: pd.DataFrame, crowd: pd.DataFrame,
                  metrics: Sequence[str]) -> dict[str, pd.DataFrame]:
    """Wide per-unit scores of Table 1's methods (index setting, unit; baselines, ceiling, text methods left out) for
    every scorer: ``simulation_correlation``, each metric, ``cosy_auc:<generator>``, ``crowd:<aggregation>``."""
    def wide(frame: pd.DataFrame, value: str) -> pd.DataFrame:
        frame = frame[~frame["method"].isin(reference_rows())]
        return frame.pivot_table(index=["setting", "unit"], columns="method", values=value, dropna=False)

    table1 = scores[(scores["table"] == 1) & (scores["kind"] != "text")]
    scorers = {column: wide(table1, column) for column in ("simulation_correlation", *metrics)}
    for generator, frame in cosy.groupby("generator", sort=False) if len(cosy) else ():
        scorers[f"{SCORER_PREFIXES['cosy']}{generator}"] = wide(frame, "auc")
    for aggregation, frame in crowd.groupby("aggregation", sort=False) if len(crowd) else ():
        scorers[f"{SCORER_PREFIXES['crowd']}{aggregation}"] = wide(frame, "crowd_correlation")
    return scorers


def benchmark_agreement(scores: pd.DataFrame, cosy: pd.DataFrame, crowd: pd.DataFrame, metrics: Sequence[str], *,
                        n_boot: int, ci_level: float, seed: int) -> pd.DataFrame:
    """agreement.csv: simulation vs each metric on Tables 1 and 2 (per setting and pooled), then on Table 1 every
    pair of scorers except metric vs metric, per setting that CoSy or the crowd scored and pooled (``all``)."""
    from neuroneval.explain.agreement import scorer_agreement

    parts = [method_agreement(scores, table_id, metrics, n_boot=n_boot, ci_level=ci_level, seed=seed)
             for table_id in (1, 2)]
    scorers = scorer_tables(scores, cosy, crowd, metrics)
    others = [name for name in scorers if name not in metrics]
    pairs = [(first, second) for position, first in enumerate(others) for second in others[position + 1:]]
    pairs += [(first, metric) for first in others[1:] for metric in metrics]
    scored = sorted(set(cosy.get("setting", pd.Series(dtype=str))) | set(crowd.get("setting", pd.Series(dtype=str))))
    scopes: list[tuple[str, Mapping[str, pd.DataFrame]]] = [
        (setting, {name: frame[frame.index.get_level_values("setting") == setting] for name, frame in scorers.items()})
        for setting in scored]
    scopes.append(("all", scorers))
    for scope, tables in scopes:
        rows = scorer_agreement(tables, pairs=pairs, n_boot=n_boot, ci_level=ci_level, seed=seed)
        parts.append(rows.rename(columns={"other": "metric"}).assign(table=1, setting=scope, n_boot=n_boot,
                                                                    ci_level=ci_level, seed=seed))
    columns = ["table", "setting", "reference", "metric", "n_methods", "n_units", "tau", "ci_low", "ci_high",
               "n_boot", "ci_level", "seed"]
    return pd.concat(parts, ignore_index=True)[columns]
