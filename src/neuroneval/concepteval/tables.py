"""The meta-evaluation tables of paper 004 (Sec. 4; docs/concepteval.md §Workflow) from the measures of every run:
reliability (Fig. 2: test-retest r, Eq. 13; Cronbach's α, Eq. 14), concurrent validity (Table 4), inter-rater
agreement of the simulated raters (Table 3), the MTMM table (Fig. 3), the method comparison (Fig. 4) and the
patterns (Table 5). :func:`benchmark_tables` builds them all; the rule ``concepteval_tables`` writes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.concepteval.benchmark import readability_measures
from neuroneval.concepteval.measurement import (
    BootstrapOptions,
    MeasurementOptions,
    RaterOptions,
    concurrent_validity,
    inter_rater,
    mean_with_interval,
    mtmm,
    mtmm_matrix,
    retest_reliability,
    simulate_raters,
    subset_consistency,
)
from neuroneval.concepteval.protocol import FAMILIES, READABILITY_SIDES, RUNS, SUBSET_ALL, family_of
from neuroneval.options import Options, check_range

#: The α rows' columns that say why α is low (:func:`~neuroneval.concepteval.measurement.subset_noise`).
SUBSET_NOISE = ("median_effect", "subset_sd", "sign_agreement")


def score_matrix(measures: pd.DataFrame, run: str, concepts: Sequence[str], names: Sequence[str],
                 subset: str = SUBSET_ALL) -> np.ndarray:
    """(C, M) values of one run (and subset) for ``concepts`` × measures ``names`` (NaN where missing)."""
    part = measures[(measures["run"] == run) & (measures["subset"].astype(str) == subset)]
    wide = part.pivot_table(index="concept", columns="measure", values="value", aggfunc="first", dropna=False)
    return wide.reindex(index=list(concepts), columns=list(names)).to_numpy(dtype=np.float64)


def constant(values: np.ndarray) -> bool:
    """Whether finite ``values`` are equal up to rounding (spread ≤ 1e-9 of their magnitude): a measure that does
    not vary over concepts has no correlation or α, whatever its rounding noise gives."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return finite.size == 0 or np.ptp(finite) <= 1e-9 * max(float(np.abs(finite).max()), 1e-300)


def _statistic_row(function: Any, arrays: Sequence[np.ndarray], measure: str, **kwargs: Any) -> pd.DataFrame:
    """``function`` on the concepts where every array is finite; a NaN row with fewer than 3 of them or when an
    array is :func:`constant` over them."""
    keep = np.all([np.isfinite(array).reshape(-1, array.shape[-1]).all(axis=0) if array.ndim > 1
                   else np.isfinite(array) for array in arrays], axis=0)
    kept = [array[..., keep] if array.ndim > 1 else array[keep] for array in arrays]
    if keep.sum() < 3 or any(constant(array) for array in kept):
        return pd.DataFrame({"measure": [measure], "value": [np.nan], "n_concepts": [int(keep.sum())]})
    return function(*kept, **kwargs)


def reliability_table(measures: pd.DataFrame, concepts: Sequence[str], names: Sequence[str], subsets: int,
                      bootstrap: Any) -> pd.DataFrame:
    """Per measure: test-retest Pearson r over concepts (Eq. 13) and Cronbach's α over the J subsets of each run
    (Eq. 14), with bootstrap intervals over concepts; ``acceptable`` = value ≥ 0.9 (Nunnally and Bernstein). The α
    rows carry :data:`SUBSET_NOISE` (:func:`~neuroneval.concepteval.measurement.subset_noise`: effects against the
    noise of a subset, the reason for a low α)."""
    test, retest = (score_matrix(measures, run, concepts, names) for run in RUNS)
    frames = []
    for column, measure in enumerate(names):
        row = _statistic_row(lambda a, b, m=measure: retest_reliability(a, b, [m], bootstrap),
                             [test[:, column], retest[:, column]], measure)
        frames.append(row.assign(statistic="pearson", run="test-retest"))
        for run in RUNS:
            stacked = np.stack([score_matrix(measures, run, concepts, [measure], str(j))[:, 0]
                                for j in range(subsets)])
            row = _statistic_row(lambda scores, m=measure: subset_consistency(scores, [m], bootstrap), [stacked],
                                 measure)
            frames.append(row.assign(statistic="cronbach_alpha", run=run))
    table = pd.concat(frames, ignore_index=True)
    table["acceptable"] = table["value"] >= 0.9
    return table.reindex(columns=["measure", "statistic", "run", "value", "ci_low", "ci_high", "acceptable",
                                  "n_concepts", "n_boot", "seed", *SUBSET_NOISE])


def criteria(concepts: Sequence[str], truth: pd.DataFrame,
             raters: Any) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """The validity criteria (:data:`CRITERIA`) per concept and the simulated ratings (R, C) of the test run:
    ``planted`` 1/0 for probe/random directions (NaN for other families), ``alignment`` the best planted AUC,
    ``raters`` the mean rating of raters who see the alignment through noise (``RaterOptions``). Without any
    planted alignment (a user's corpus) there is nothing to rate: ``raters`` is NaN and the ratings ``None``."""
    alignment = truth.set_index("concept").loc[list(concepts), "alignment"].to_numpy(dtype=np.float64)
    families = np.array([family_of(name) for name in concepts])
    planted = np.where(families == "probe", 1.0, np.where(families == "random", 0.0, np.nan))
    if not np.isfinite(alignment).any():
        return {"planted": planted, "alignment": alignment, "raters": np.full(len(concepts), np.nan)}, None
    ratings = simulate_raters(np.nan_to_num(alignment, nan=0.5), raters)
    return {"planted": planted, "alignment": alignment, "raters": ratings.mean(axis=0)}, ratings


def validity_table(scores: np.ndarray, names: Sequence[str], criterion_values: Mapping[str, np.ndarray],
                   options: Any) -> pd.DataFrame:
    """Concurrent validity (Table 4): Kendall τ, Pearson r, Spearman ρ of each measure with each criterion."""
    frames = []
    for criterion, values in criterion_values.items():
        for column, measure in enumerate(names):
            row = _statistic_row(lambda x, y, m=measure: concurrent_validity(x, y, [m], options),
                                 [scores[:, column], values], measure)
            frames.append(row.assign(criterion=criterion))
    table = pd.concat(frames, ignore_index=True)
    return table.reindex(columns=["criterion", "measure", "statistic", "value", "ci_low", "ci_high", "n_concepts",
                                  "n_boot", "seed"])


def mtmm_table(scores: np.ndarray, names: Sequence[str], alpha: Mapping[str, float], options: Any) -> pd.DataFrame:
    """The MTMM table (Fig. 3): Kendall τ between measures over the concepts defined on all of them, α (test run)
    on the diagonal. Measures undefined for more than half of the concepts are left out."""
    defined = np.isfinite(scores)
    keep_measures = defined.mean(axis=0) > 0.5
    matrix = scores[:, keep_measures]
    matrix = matrix[np.isfinite(matrix).all(axis=1)]
    kept = [name for name, keep in zip(names, keep_measures, strict=True) if keep]
    if len(matrix) < 3:
        raise ValueError(f"MTMM: only {len(matrix)} concepts have every measure; need 3")
    consistency = np.array([alpha.get(name, np.nan) for name in kept])
    return mtmm(matrix, kept, consistency=consistency, options=options)


def method_table(scores: np.ndarray, concepts: Sequence[str], names: Sequence[str], bootstrap: Any,
                 alignment: Sequence[float] | None = None) -> pd.DataFrame:
    """Method comparison (Fig. 4): per family and measure the mean over its concepts with a bootstrap interval; the
    probes also per planted kind (``probe:slot``, ``probe:topic``), as the world may encode one kind and not the
    other. ``median_alignment``: the median over the family's concepts of their planted ``alignment`` (one value
    per concept, :func:`~neuroneval.concepteval.benchmark.planted_alignment`; NaN without it), how monosemantic the
    family's concepts are in the world, whatever the measures say."""
    planted = (np.full(len(concepts), np.nan) if alignment is None
               else np.asarray(alignment, dtype=np.float64).reshape(len(concepts)))
    groups = {family: np.array([family_of(name) == family for name in concepts]) for family in FAMILIES}
    kinds = dict.fromkeys(name.split(":")[1] for name in concepts if family_of(name) == "probe")
    groups.update({f"probe:{kind}": np.array([name.startswith(f"probe:{kind}:") for name in concepts])
                   for kind in kinds if len(kinds) > 1})
    order = [*FAMILIES[: FAMILIES.index("probe") + 1], *(f"probe:{kind}" for kind in kinds if len(kinds) > 1),
             *FAMILIES[FAMILIES.index("probe") + 1 :]]
    rows = []
    for family in [group for group in order if groups[group].any()]:
        aligned = planted[groups[family]]
        aligned = aligned[np.isfinite(aligned)]
        median_alignment = float(np.median(aligned)) if aligned.size else np.nan
        for column, measure in enumerate(names):
            values = scores[groups[family], column]
            values = values[np.isfinite(values)]
            summary = (mean_with_interval(values, bootstrap) if values.size else
                       {"value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n_boot": bootstrap.n_boot,
                        "seed": bootstrap.seed})
            rows.append({"family": family, "measure": measure, "mean": summary["value"],
                         "ci_low": summary["ci_low"], "ci_high": summary["ci_high"], "n_concepts": int(values.size),
                         "n_boot": summary["n_boot"], "seed": summary["seed"],
                         "median_alignment": median_alignment})
    return pd.DataFrame(rows)


def shown_concepts(scores: pd.DataFrame, per_family: int) -> list[str]:
    """Table 5's concepts: every probe, and per other family the ``per_family`` best and worst by the mean rank of
    IN-EmbCos and OUT-EmbCos (as the paper picks its SAE examples)."""
    wide = scores.pivot_table(index="concept", columns="measure", values="value", aggfunc="first")
    ranks = wide.reindex(columns=["IN-EmbCos", "OUT-EmbCos"]).rank(ascending=False).mean(axis=1)
    chosen = []
    for family in FAMILIES:
        members = [name for name in scores["concept"].drop_duplicates() if family_of(name) == family]
        if family == "probe":
            chosen += members
            continue
        ordered = ranks.reindex(members).sort_values(kind="stable").index.tolist()
        picked = ordered[:per_family] + ordered[-per_family:]
        chosen += list(dict.fromkeys(picked))
    return chosen


def patterns_markdown(patterns: pd.DataFrame, scores: pd.DataFrame, per_family: int) -> str:
    """Table 5 for every LM as Markdown: the input and output patterns of the shown concepts (:func:`shown_concepts`)
    with their IN-/OUT-EmbCos."""
    lines = ["# Top patterns per concept (paper 004 Table 5)", "",
             "Input side: tokens with the largest activation or contribution to high activations (context "
             "ablation); output side: tokens the model prefers when the hidden state is the concept direction. "
             "Test run; every probe direction, and per other family the best and worst concepts by the mean rank of "
             "IN-EmbCos and OUT-EmbCos.", ""]
    for model, model_scores in scores.groupby("model", sort=False):
        model_patterns = patterns[patterns["model"] == model]
        wide = model_scores.pivot_table(index="concept", columns="measure", values="value", aggfunc="first")
        lines += [f"## {model}", "", "| family | concept | input pattern | output pattern | IN-EmbCos | OUT-EmbCos |",
                  "|---|---|---|---|---|---|"]
        for concept in shown_concepts(model_scores, per_family):
            cells = []
            for side in READABILITY_SIDES:
                tokens = model_patterns[(model_patterns["concept"] == concept) & (model_patterns["side"] == side)]
                tokens = tokens.sort_values("rank")["token"].astype(str)
                cells.append(", ".join(_markdown_cell(token) for token in tokens) or "–")
            values = [wide.at[concept, name] if name in wide.columns else np.nan
                      for name in ("IN-EmbCos", "OUT-EmbCos")]
            lines.append(f"| {family_of(concept)} | `{concept}` | {cells[0]} | {cells[1]} | "
                         + " | ".join("–" if not np.isfinite(value) else f"{value:.3f}" for value in values) + " |")
        lines.append("")
    return "\n".join(lines)


def _markdown_cell(token: str) -> str:
    return token.replace("|", "\\|").replace("`", "'") or "·"




@dataclass(frozen=True)
class TableOptions(Options):
    """What :func:`benchmark_tables` reads from ``concepteval``: the J ``subsets`` of each run, the faithfulness
    measures run (``faithfulness.measures``; the readability measures follow them), the statistics'
    ``measurement`` options, the simulated ``raters``, the measures of the method ``comparison`` (Fig. 4) and the
    concepts per family in Table 5 (``patterns_shown``)."""

    subsets: int = 4
    faithfulness_measures: tuple[str, ...] = ()
    measurement: MeasurementOptions = field(default_factory=MeasurementOptions)
    raters: RaterOptions = field(default_factory=RaterOptions)
    comparison: tuple[str, ...] = ()
    patterns_shown: int = 2

    def validate(self) -> None:
        check_range(self, "subsets", 2, integer=True)
        check_range(self, "patterns_shown", 1, integer=True)


@dataclass(frozen=True)
class BenchmarkTables:
    """Every table of ``results/concepteval/`` (one frame per file, the ``model`` column first), the MTMM matrices
    per LM (Fig. 3) and Table 5 as Markdown."""

    measures: pd.DataFrame
    reliability: pd.DataFrame
    validity: pd.DataFrame
    inter_rater: pd.DataFrame
    mtmm: pd.DataFrame
    methods: pd.DataFrame
    mtmm_matrices: dict[str, pd.DataFrame]
    patterns_markdown: str


def benchmark_tables(measures: pd.DataFrame, truths: Mapping[tuple[str, str], pd.DataFrame],
                     patterns: pd.DataFrame, options: TableOptions) -> BenchmarkTables:
    """The tables of every LM from the runs' long measures (``model, run, subset, family, concept, measure,
    value``), each run's planted alignment ``truths[(model, run)]`` and the test run's patterns (with ``model``).

    Every statistic is computed on the test run's concepts with the percentile bootstrap of
    ``options.measurement.bootstrap``; the criteria are :data:`~neuroneval.concepteval.benchmark.CRITERIA`."""
    measurement = options.measurement
    bootstrap: BootstrapOptions = measurement.bootstrap
    raters = options.raters
    present = set(measures["measure"])
    names = list(dict.fromkeys([*options.faithfulness_measures,
                                *(name for name in readability_measures() if name in present)]))
    reliability, validity, rater_tables, mtmm_tables, methods, matrices = [], [], [], [], [], {}
    for model in dict.fromkeys(measures["model"]):
        part = measures[measures["model"] == model]
        concepts = list(dict.fromkeys(part["concept"]))
        table = reliability_table(part, concepts, names, options.subsets, bootstrap).assign(model=model)
        reliability.append(table)
        alpha = table[(table["statistic"] == "cronbach_alpha") & (table["run"] == RUNS[0])].set_index("measure")
        test_scores = score_matrix(part, RUNS[0], concepts, names)
        criterion_values, ratings = criteria(concepts, truths[(model, RUNS[0])], raters)
        validity.append(validity_table(test_scores, names, criterion_values, measurement).assign(model=model))
        if ratings is not None:
            rater_tables.append(inter_rater(ratings, [f"rater{i + 1}" for i in range(len(ratings))], measurement)
                                .assign(model=model, truth="alignment", noise=raters.noise,
                                        noise_scale=raters.noise_scale))
        mtmm_frame = mtmm_table(test_scores, names, alpha["value"].to_dict(), measurement).assign(model=model)
        mtmm_tables.append(mtmm_frame)
        matrices[model] = mtmm_matrix(mtmm_frame)
        comparison = list(options.comparison)
        methods.append(method_table(score_matrix(part, RUNS[0], concepts, comparison), concepts, comparison, bootstrap,
                                    criterion_values["alignment"]).assign(model=model))
    frames = {}
    for name, parts in {"reliability": reliability, "validity": validity, "inter_rater": rater_tables,
                        "mtmm": mtmm_tables, "methods": methods}.items():
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["model"])
        frames[name] = frame[["model", *[c for c in frame.columns if c != "model"]]]
    run_rows = measures[measures["subset"] == SUBSET_ALL].drop(columns="subset")
    test_rows = run_rows[run_rows["run"] == RUNS[0]]
    return BenchmarkTables(measures=run_rows, mtmm_matrices=matrices,
                           patterns_markdown=patterns_markdown(patterns, test_rows, options.patterns_shown), **frames)
