"""Can a setting rank metrics? The discrimination criterion of Table 4 (``meta.discrimination``).

A setting's ceiling (:mod:`neuroneval.meta.ceiling`) says whether its ground truth is identifiable; it does not say
whether the setting tells metrics apart. A setting where every metric scores 1.000 meets any ceiling target and
still ranks nothing: its ranks are all tied, and averaging it into Table 4's means only pulls every metric towards
the middle rank. The criterion asks for a difference between metrics beyond the bootstrap noise of meta-AUPRC
(the percentile interval over test units, :func:`~neuroneval.meta.auprc.bootstrap_meta_auprc`):

- ``separated_pair`` (default): some pair of metrics has disjoint intervals, one lying wholly above the other,
  :math:`\\exists\\, i, j:\\ \\mathrm{low}_i > \\mathrm{high}_j`, which is the same as
  :math:`\\max_i \\mathrm{low}_i > \\min_j \\mathrm{high}_j` (the pair is the metric with the highest lower
  bound and the one with the lowest upper bound). It is the weakest claim that the setting separates *some*
  metrics beyond noise, and it does not depend on which metric happens to have the best point estimate;
- ``best_above_worst``: the interval of the metric with the highest meta-AUPRC lies above that of the metric with
  the lowest, :math:`\\mathrm{low}_{\\arg\\max} > \\mathrm{high}_{\\arg\\min}` (stricter: implies
  ``separated_pair``);
- ``off``: every setting counts (the papers' protocol, which has no such test).

Strict inequality: touching intervals do not separate, so a setting where all metrics tie at one value (intervals
``[1, 1]``) never discriminates. A metric without an interval (``n_boot: 0`` or a NaN bound) counts as its point
estimate ``[v, v]``. Settings that fail stay in Table 4 as columns but out of its means
(:func:`~neuroneval.meta.table4.build_table4`'s ``mean_settings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from neuroneval.options import Options, check_choice

DISCRIMINATION_RULES = ("separated_pair", "best_above_worst", "off")
#: Keys of the ``meta:`` block that shape Table 4 itself, not the meta-evaluation of a setting (so not
#: :class:`~neuroneval.meta.MetaOptions` fields; a change to them reruns only the ``table4`` rule).
TABLE4_KEYS = ("settings", "discrimination")
#: Columns of ``results/table4_settings.csv``.
DISCRIMINATION_COLUMNS = ("setting", "discriminates", "in_mean", "rule", "high_metric", "high_auprc", "high_ci_low",
                          "high_ci_high", "low_metric", "low_auprc", "low_ci_low", "low_ci_high", "gap", "metrics",
                          "reason")


@dataclass(frozen=True)
class DiscriminationOptions(Options):
    """``meta.discrimination`` of ``params.yaml``: ``rule`` is one of :data:`DISCRIMINATION_RULES` (module doc)."""

    rule: Literal["separated_pair", "best_above_worst", "off"] = "separated_pair"

    def validate(self) -> None:
        check_choice(self, "rule", DISCRIMINATION_RULES)


def meta_options_block(meta_params: dict) -> dict:
    """The ``meta:`` block without :data:`TABLE4_KEYS`: what :class:`~neuroneval.meta.MetaOptions` parses."""
    return {key: value for key, value in meta_params.items() if key not in TABLE4_KEYS}


def _intervals(rows: pd.DataFrame, setting: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(estimate, low, high) per metric row; a missing or NaN bound becomes the estimate."""
    estimate = rows["test_auprc"].to_numpy(dtype=np.float64)
    if not np.isfinite(estimate).all():
        bad = rows.loc[~np.isfinite(estimate), "metric"].tolist()
        raise ValueError(f"{setting}: test_auprc of metric(s) {bad} is not finite")
    low = rows["ci_low"].to_numpy(dtype=np.float64) if "ci_low" in rows.columns else estimate.copy()
    high = rows["ci_high"].to_numpy(dtype=np.float64) if "ci_high" in rows.columns else estimate.copy()
    return estimate, np.where(np.isfinite(low), low, estimate), np.where(np.isfinite(high), high, estimate)


def setting_discrimination(rows: pd.DataFrame, options: DiscriminationOptions, *, setting: str = "") -> dict:
    """Whether one setting's metrics differ beyond their bootstrap intervals (one row of
    ``results/table4_settings.csv``, columns :data:`DISCRIMINATION_COLUMNS`).

    ``rows``: one row per metric with ``metric``, ``test_auprc`` and (optionally) ``ci_low``, ``ci_high``.
    ``high``/``low`` name the pair the rule compares (module doc): ``gap = high_ci_low − low_ci_high`` and the
    setting discriminates when ``gap > 0`` (always under ``off``). Ties go to the first row.

    >>> rows = pd.DataFrame({"metric": ["a", "b", "c"], "test_auprc": [0.9, 0.5, 0.7],
    ...                      "ci_low": [0.8, 0.4, 0.55], "ci_high": [0.95, 0.6, 0.85]})
    >>> found = setting_discrimination(rows, DiscriminationOptions(), setting="demo")
    >>> found["discriminates"], found["high_metric"], found["low_metric"], round(found["gap"], 2)
    (True, 'a', 'b', 0.2)
    """
    if rows.empty:
        raise ValueError(f"{setting}: no metric rows to judge discrimination on")
    metrics = rows["metric"].astype(str).tolist()
    estimate, low, high = _intervals(rows, setting)
    if options.rule == "best_above_worst":
        top, bottom = int(np.argmax(estimate)), int(np.argmin(estimate))
    else:
        top, bottom = int(np.argmax(low)), int(np.argmin(high))
    gap = float(low[top] - high[bottom])
    separated = gap > 0
    discriminates = separated or options.rule == "off"
    interval = "[{:.3f}, {:.3f}]".format
    if separated:
        reason = (f"{metrics[top]} {interval(low[top], high[top])} lies above {metrics[bottom]} "
                  f"{interval(low[bottom], high[bottom])}")
    elif np.ptp(estimate) == 0 and np.ptp(low) == 0 and np.ptp(high) == 0:
        reason = f"all {len(metrics)} metrics tie at {estimate[0]:.3f}"
    elif options.rule == "best_above_worst":
        reason = (f"the best, {metrics[top]} {interval(low[top], high[top])}, overlaps the worst, {metrics[bottom]} "
                  f"{interval(low[bottom], high[bottom])}")
    else:
        reason = (f"every pair of intervals overlaps: the highest lower bound, {metrics[top]} {low[top]:.3f}, does "
                  f"not exceed the lowest upper bound, {metrics[bottom]} {high[bottom]:.3f}")
    if options.rule == "off":
        reason = f"criterion off (counted in the means); {reason}"
    return {"setting": setting, "discriminates": bool(discriminates), "in_mean": bool(discriminates),
            "rule": options.rule, "high_metric": metrics[top], "high_auprc": float(estimate[top]),
            "high_ci_low": float(low[top]), "high_ci_high": float(high[top]), "low_metric": metrics[bottom],
            "low_auprc": float(estimate[bottom]), "low_ci_low": float(low[bottom]),
            "low_ci_high": float(high[bottom]), "gap": gap, "metrics": len(metrics), "reason": reason}


def discrimination_table(results: pd.DataFrame, options: DiscriminationOptions, *,
                         setting_order: Sequence[str]) -> pd.DataFrame:
    """:func:`setting_discrimination` of every setting of ``setting_order`` (tidy ``results/meta.csv`` rows):
    ``results/table4_settings.csv``, one row per setting in that order."""
    missing = [setting for setting in setting_order if setting not in set(results["setting"])]
    if missing:
        raise ValueError(f"results lack settings {missing}")
    rows = [setting_discrimination(results[results["setting"] == setting], options, setting=setting)
            for setting in setting_order]
    return pd.DataFrame(rows, columns=list(DISCRIMINATION_COLUMNS))


def build_table4_discriminating(results: pd.DataFrame, options: DiscriminationOptions, *, metric_order: Sequence[str],
                                setting_order: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 4 whose means count only the settings that discriminate, and the verdict per setting.

    Returns ``(table, settings)``: ``table`` is :func:`~neuroneval.meta.table4.build_table4` over every setting of
    ``setting_order`` (one meta-AUPRC column each) with ``mean_auprc`` and ``mean_rank`` taken over the settings
    whose ``in_mean`` is True (ranks within each such setting, 1 = best, ties averaged; NaN when no setting
    discriminates); ``settings`` is :func:`discrimination_table` (``results/table4_settings.csv``), which says
    which settings discriminate and why. A setting left out stays a column of ``table``, reported beside the means.
    """
    from neuroneval.meta.table4 import build_table4

    table = build_table4(results, metric_order=metric_order, setting_order=setting_order)
    settings = discrimination_table(results, options, setting_order=setting_order)
    counted = settings.loc[settings["in_mean"], "setting"].tolist()
    if counted:
        means = build_table4(results[results["setting"].isin(counted)], metric_order=metric_order,
                             setting_order=counted)
        table["mean_auprc"], table["mean_rank"] = means["mean_auprc"].to_numpy(), means["mean_rank"].to_numpy()
    else:
        table["mean_auprc"], table["mean_rank"] = np.nan, np.nan
    return table, settings
