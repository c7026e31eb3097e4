"""Paper-shaped tables of the sanity tests and their ablations (paper 000, Table 3, App. C–F).

Every function takes the tidy outputs of :mod:`neuroneval.sanity` (one row per metric, test and case, with a
``ties`` column) and returns a wide table whose first columns are ``metric`` and ``ties``. Decrease Acc and
meta-AUPRC stay fractions in [0, 1] (the paper prints percentages).

Conventions
-----------
- Experimental Decrease Acc of Table 3 = mean over settings of each setting's Decrease Acc (Sec. 4.3);
  theoretical = mean over the activation frequencies γ (App. C). A metric passes a test when the Decrease Acc
  exceeds the threshold (90 %) in both columns of that test, and passes when it passes both tests (Sec. 4.4).
- Tables C.1/C.2 and E.6/E.7 judge the theoretical test per γ: a metric passes when Decrease Acc exceeds the
  threshold at *every* γ (App. C.1).
- Ranks in Tables F.5–F.7 and E.9 are competition ranks within a setting (1 = highest meta-AUPRC; tied
  metrics share the best rank of their group), as printed in the paper.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from neuroneval.metrics import get_spec
from neuroneval.sanity.analytical import ANALYTICAL_METRICS, decrease_probability, expected_delta
from neuroneval.sanity.perturb import TESTS

#: γ at which the population forms stand in for their limit γ → 0 (the forms are continuous at 0; the error
#: is O(γ)).
LIMIT_GAMMA = 1e-12
#: Metrics whose closed forms assume average ranks (``ties="average"``); in reference mode the published
#: tie-breaking changes them, so they get no analytical value there.
RANK_METRICS = ("auc", "inverse_auc", "spearman")


def _select(tidy: pd.DataFrame, *, ties: str, metrics: Sequence[str]) -> pd.DataFrame:
    """Rows of ``tidy`` in tie mode ``ties`` and of the listed metrics."""
    return tidy[(tidy["ties"] == ties) & tidy["metric"].isin(list(metrics))]


def _ordered(wide: pd.DataFrame, metrics: Sequence[str], ties: str) -> pd.DataFrame:
    """``wide`` (indexed by metric) as rows in ``metrics`` order with leading ``metric, ties`` columns."""
    table = wide.reindex(list(metrics))
    table.columns.name = None
    table.insert(0, "ties", ties)
    return table.rename_axis("metric").reset_index()


def paper_groups(names: Sequence[str], sizes: Sequence[int]) -> list[list[str]]:
    """Split ``names`` into consecutive groups of the given sizes; the last group takes all the rest.

    Tables F.1–F.4 show the eight experimental settings two by two (``sizes=(2, 2, 2)``), Tables F.5–F.7 the
    ten meta settings as 4, 4 and 2 (``sizes=(4, 4)``). Groups past the end are empty.

    Examples
    --------
    >>> paper_groups(list("abcdefg"), (2, 2, 2))
    [['a', 'b'], ['c', 'd'], ['e', 'f'], ['g']]
    >>> paper_groups(list("abc"), (4, 4))
    [['a', 'b', 'c'], [], []]
    """
    groups, start = [], 0
    for size in sizes:
        groups.append(list(names[start:start + size]))
        start += size
    groups.append(list(names[start:]))
    return groups


def table3(experimental: pd.DataFrame, theoretical: pd.DataFrame, *, metrics: Sequence[str],
           settings: Sequence[str], ties: str, threshold: float,
           mean_settings: Sequence[str] | None = None) -> pd.DataFrame:
    """Table 3: experimental and theoretical Decrease Acc per metric and test, and the pass verdicts.

    ``experimental_<test>`` = mean over ``mean_settings`` (all ``settings`` when None or empty; the paper
    averages its eight settings of App. F.1) of Decrease Acc (Eq. 11) on each setting's units;
    ``theoretical_<test>`` = mean over γ of the theoretical Decrease Acc (App. C);
    ``pass_<test>`` = both > ``threshold``; ``pass`` = ``pass_missing`` and ``pass_extra``. Each setting of
    ``settings`` outside ``mean_settings`` (our real-data digits settings) is reported beside the mean, in
    ``<setting>_<test>`` columns after ``pass``, and takes no part in the verdicts.

    Parameters
    ----------
    experimental
        Tidy rows ``setting, metric, test, ties, decrease_acc`` (random perturbations).
    theoretical
        Tidy rows ``metric, test, gamma, ties, decrease_acc``.
    """
    averaged = list(mean_settings) if mean_settings else list(settings)
    stray = [setting for setting in averaged if setting not in settings]
    if stray:
        raise ValueError(f"Table 3's mean_settings are not among its settings: {stray}")
    exp = _select(experimental, ties=ties, metrics=metrics)
    beside = [setting for setting in settings if setting not in averaged]
    theo = _select(theoretical, ties=ties, metrics=metrics)
    columns = {}
    for test in TESTS:
        in_mean = exp[(exp["test"] == test) & exp["setting"].isin(averaged)]
        columns[f"experimental_{test}"] = in_mean.groupby("metric")["decrease_acc"].mean()
        columns[f"theoretical_{test}"] = theo[theo["test"] == test].groupby("metric")["decrease_acc"].mean()
    table = _ordered(pd.DataFrame(columns), metrics, ties)
    for test in TESTS:
        table[f"pass_{test}"] = (table[f"experimental_{test}"] > threshold) & (table[f"theoretical_{test}"] > threshold)
    table["pass"] = table["pass_missing"] & table["pass_extra"]
    if beside:
        side = per_setting_table(experimental, metrics=metrics, settings=beside, ties=ties)  # same rows, in order
        table = pd.concat([table, side.drop(columns=["metric", "ties"])], axis=1)
    return table


def per_setting_table(experimental: pd.DataFrame, *, metrics: Sequence[str], settings: Sequence[str],
                      ties: str, value: str = "decrease_acc") -> pd.DataFrame:
    """Tables F.1–F.4 and E.8: one ``<setting>_<test>`` column of ``value`` per setting and test."""
    rows = _select(experimental, ties=ties, metrics=metrics)
    wide = {}
    for setting in settings:
        for test in TESTS:
            chosen = rows[(rows["setting"] == setting) & (rows["test"] == test)]
            wide[f"{setting}_{test}"] = chosen.set_index("metric")[value]
    return _ordered(pd.DataFrame(wide), metrics, ties)


def gamma_column(gamma: float) -> str:
    """Column name of an activation frequency: ``gamma_0.001``."""
    return f"gamma_{gamma:g}"


def gamma_table(theoretical: pd.DataFrame, *, metrics: Sequence[str], test: str, ties: str,
                value: str = "decrease_acc", threshold: float | None = None) -> pd.DataFrame:
    """Tables C.1–C.4, E.6, E.7: one column per γ with ``value`` (Decrease Acc or mean Δs) of one test.

    With ``threshold``, a ``pass`` column: ``value`` > threshold at every γ (App. C.1).
    """
    rows = _select(theoretical, ties=ties, metrics=metrics)
    rows = rows[rows["test"] == test]
    gammas = sorted(rows["gamma"].unique(), reverse=True)
    wide = rows.pivot(index="metric", columns="gamma", values=value).reindex(columns=gammas)
    wide.columns = [gamma_column(gamma) for gamma in gammas]
    table = _ordered(wide, metrics, ties)
    if threshold is not None:
        table["pass"] = (table[[gamma_column(g) for g in gammas]] > threshold).all(axis=1)
    return table


def with_published_columns(table: pd.DataFrame, *, test: str, value: str = "decrease_acc") -> pd.DataFrame:
    """A :func:`gamma_table` of Tables C.1–C.4 with paper 000's values beside ours, per γ column.

    ``printed_gamma_<γ>`` is the printed table (:data:`neuroneval.published.TABLE_C1` … ``TABLE_C4``; empty for
    metrics it does not print, such as the App. E.6 combinations) and ``notebook_gamma_<γ>`` the authors' saved
    notebook output (:mod:`neuroneval.sanity.reference_data`), for ``value`` ``"decrease_acc"`` (C.1/C.2, a
    fraction) or ``"mean_delta"`` (C.3/C.4); γ columns the paper has not are left empty. Why the two published
    versions differ: docs/fidelity.md.
    """
    from neuroneval.sanity.printed_reference import published_reference
    from neuroneval.sanity.theoretical_reference import load_theoretical_reference

    if value not in ("decrease_acc", "mean_delta"):
        raise ValueError(f"value must be 'decrease_acc' or 'mean_delta', got {value!r}")
    reference = published_reference(load_theoretical_reference())
    reference = reference[reference["test"] == test]
    printed = reference[f"ref_{value}"].where(reference["ref_source"] == "printed table")
    columns = {"printed": printed, "notebook": reference[f"notebook_{value}"]}
    table = table.copy()
    gammas = [column for column in table.columns if str(column).startswith("gamma_")]
    for source, values in columns.items():
        for column in gammas:
            chosen = reference["gamma"].map(gamma_column) == column
            by_metric = pd.Series(values[chosen].to_numpy(), index=reference.loc[chosen, "metric"].to_numpy())
            table[f"{source}_{column}"] = table["metric"].map(by_metric)
    return table


def has_closed_form(metric: str, ties: str) -> bool:
    """Whether :mod:`neuroneval.sanity.analytical` has the metric's Δs under tie mode ``ties``."""
    parts = get_spec(metric).components or (metric,)
    if any(part not in ANALYTICAL_METRICS for part in parts):
        return False
    return ties == "average" or not any(part in RANK_METRICS for part in parts)


def limit_column(metrics: Sequence[str], *, test: str, ties: str, spans: Mapping[str, float],
                 lam: float) -> pd.Series:
    """The ``lim γ→0`` column of Tables C.3/C.4: population-limit Δs of the ideal unit (App. D, Table D.2).

    ``expected_delta(metric, test, γ)`` with n → ∞ at γ = ``LIMIT_GAMMA``, normalised by ``spans[metric]``
    (the theoretical run's ``max − min``); NaN where there is no closed form (top-and-random metrics; rank
    metrics in reference mode).
    """
    values = {metric: (expected_delta(metric, test, LIMIT_GAMMA, lam=lam, span=spans[metric])
                       if has_closed_form(metric, ties) else np.nan) for metric in metrics}
    return pd.Series(values, name="limit", dtype=float)


def analytical_table(metrics: Sequence[str], *, gammas: Sequence[float], n: int, spans: Mapping[str, float],
                     epsilon: float, lam: float) -> pd.DataFrame:
    """Table D.2 extended: expected Δs of the ideal unit per metric, test and γ (App. D), average-rank forms.

    Columns: ``metric, ties, test, gamma, span, population_delta`` (n → ∞, Table D.2's expressions),
    ``limit`` (γ → 0), ``n``, ``expected_delta`` (exact mean over the binomial number of kept/added labels at
    this n) and ``expected_decrease_acc`` (exact ``P(Δs < −ε)`` of one draw). Metrics without a closed form
    (top-and-random) are left out; ``spans`` normalise as in the theoretical run. ``printed_delta`` is Table D.2's
    printed form at γ (:data:`neuroneval.published.TABLE_D2`; empty for the metrics D.2 leaves out).
    """
    from neuroneval.published import TABLE_D2

    rows = []
    for metric in metrics:
        if not has_closed_form(metric, "average"):
            continue
        span = spans[metric]
        for test in TESTS:
            limit = expected_delta(metric, test, LIMIT_GAMMA, lam=lam, span=span)
            for gamma in gammas:
                rows.append({
                    "metric": metric, "ties": "average", "test": test, "gamma": gamma, "span": span,
                    "population_delta": expected_delta(metric, test, gamma, lam=lam, span=span), "limit": limit,
                    "n": n, "expected_delta": expected_delta(metric, test, gamma, n, lam=lam, span=span),
                    "expected_decrease_acc": decrease_probability(metric, test, gamma, n, epsilon=epsilon, lam=lam,
                                                                  span=span),
                    "printed_delta": (getattr(TABLE_D2[metric], test)(gamma) / span if metric in TABLE_D2
                                      else np.nan),
                })
    return pd.DataFrame(rows)


def competition_ranks(values: pd.Series) -> pd.Series:
    """1 for the highest value; tied values share the best rank of their group (``method="min"``), as integers."""
    return values.rank(ascending=False, method="min").astype("Int64")


def meta_detail_table(meta: pd.DataFrame, *, metrics: Sequence[str], settings: Sequence[str]) -> pd.DataFrame:
    """Tables F.5–F.7: test meta-AUPRC, its rank within the setting and the chosen α, λ per setting.

    ``meta`` holds tidy rows ``setting, metric, ties, alpha, lam, test_auprc`` (``results/meta.csv``); ranks
    are taken over all metrics of ``meta`` in the setting.
    """
    ties = str(meta["ties"].iloc[0]) if len(meta) else ""
    wide = {}
    for setting in settings:
        rows = meta[meta["setting"] == setting].set_index("metric")
        wide[f"{setting}_auprc"] = rows["test_auprc"]
        wide[f"{setting}_rank"] = competition_ranks(rows["test_auprc"])
        wide[f"{setting}_alpha"] = rows["alpha"]
        wide[f"{setting}_lam"] = rows["lam"]
    return _ordered(pd.DataFrame(wide), metrics, ties)


def combination_meta_table(results: pd.DataFrame, *, combinations: Sequence[str], metrics: Sequence[str],
                           settings: Sequence[str]) -> pd.DataFrame:
    """Table E.9: meta-AUPRC and rank of the combinations next to the single metrics, per setting.

    Ranks are competition ranks over the combinations and metrics listed. A ``kind`` column says
    ``combination`` or ``metric``.
    """
    rows_order = [*combinations, *metrics]
    chosen = results[results["metric"].isin(rows_order)]
    table = meta_detail_table(chosen, metrics=rows_order, settings=settings)
    table = table.drop(columns=[c for c in table.columns if c.endswith(("_alpha", "_lam"))])
    table.insert(2, "kind", ["combination" if name in combinations else "metric" for name in table["metric"]])
    return table


def ablation_table(ablations: pd.DataFrame, *, metrics: Sequence[str], ties: str, ablation: str,
                   column: str, label: str) -> pd.DataFrame:
    """Tables E.1, E.3–E.5: Decrease Acc per metric with one ``<test>_<label><value>`` column per level.

    ``ablations`` holds tidy rows ``ablation, metric, test, ties, <column>, decrease_acc``; the levels are the
    distinct values of ``column`` in the rows of ``ablation`` (in the order they appear).
    """
    rows = _select(ablations, ties=ties, metrics=metrics)
    rows = rows[rows["ablation"] == ablation]
    wide = {}
    for test in TESTS:
        of_test = rows[rows["test"] == test]
        for level in dict.fromkeys(of_test[column]):
            name = f"{level:g}" if isinstance(level, float | int | np.number) else str(level)
            wide[f"{test}_{label}{name}"] = of_test[of_test[column] == level].set_index("metric")["decrease_acc"]
    table = _ordered(pd.DataFrame(wide), metrics, ties)
    settings = rows["setting"].unique()
    table.insert(2, "setting", settings[0] if settings.size == 1 else ",".join(settings))
    return table


def ties_comparison(experimental: pd.DataFrame, theoretical: pd.DataFrame, *,
                    metrics: Sequence[str], mean_settings: Sequence[str] = ()) -> pd.DataFrame:
    """Decrease Acc and mean Δs of ``metrics`` in both tie modes, per case and averaged (results/ties.csv).

    Rows ``source`` (``experimental`` | ``theoretical``), ``case`` (the setting, ``gamma_<γ>``, or ``mean`` for
    the Table 3 average over settings resp. γ: over ``mean_settings`` when given, as :func:`table3`),
    ``metric, test, ties, mean_delta, decrease_acc``. Only (metric, case, test) present in both modes are kept.
    """
    exp = experimental[experimental["metric"].isin(list(metrics))].assign(
        source="experimental", case=lambda frame: frame["setting"])
    theo = theoretical[theoretical["metric"].isin(list(metrics))].assign(
        source="theoretical", case=lambda frame: [gamma_column(g) for g in frame["gamma"]])
    columns = ["source", "case", "metric", "test", "ties", "mean_delta", "decrease_acc"]
    detail = pd.concat([exp[columns], theo[columns]], ignore_index=True)
    modes = detail.groupby(["source", "case", "metric", "test"])["ties"].transform("nunique")
    detail = detail[modes == detail["ties"].nunique()]
    averaged = detail[(detail["source"] != "experimental") | detail["case"].isin(list(mean_settings))] \
        if mean_settings else detail
    means = (averaged.groupby(["source", "metric", "test", "ties"], sort=False)[["mean_delta", "decrease_acc"]]
             .mean().reset_index().assign(case="mean"))
    table = pd.concat([means[columns], detail], ignore_index=True)
    rank = {
        "case": {"mean": ""},  # the averages first, then the cases in name order
        "metric": {metric: f"{index:04d}" for index, metric in enumerate(metrics)},
        "test": {test: str(index) for index, test in enumerate(TESTS)},
    }
    return table.sort_values(["source", "case", "metric", "test", "ties"], ignore_index=True,
                             key=lambda col: col.map(lambda v: rank.get(col.name, {}).get(v, v)))
