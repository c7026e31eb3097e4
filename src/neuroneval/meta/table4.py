"""Paper 000 Table 4: meta-AUPRC per metric and setting, mean AUPRC and mean rank."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def build_table4(results: pd.DataFrame, *, metric_order: Sequence[str], setting_order: Sequence[str]) -> pd.DataFrame:
    """Pivot tidy meta results into Table 4.

    Parameters
    ----------
    results
        One row per (setting, metric) with columns ``setting``, ``metric``, ``test_auprc``.
    metric_order, setting_order
        Row and column order of the table.

    Returns
    -------
    DataFrame
        ``metric``, one column per setting (test meta-AUPRC), ``mean_auprc`` (mean over settings) and
        ``mean_rank``: within each setting metrics are ranked by meta-AUPRC (1 = best, ties share the
        average rank), then ranks are averaged over settings.
    """
    duplicated = results.duplicated(["setting", "metric"])
    if duplicated.any():
        first = results.loc[duplicated, ["setting", "metric"]].iloc[0].tolist()
        raise ValueError(f"results hold (setting, metric) {first} more than once")
    wide = results.pivot(index="metric", columns="setting", values="test_auprc")
    missing_settings = [setting for setting in setting_order if setting not in wide.columns]
    missing_metrics = [metric for metric in metric_order if metric not in wide.index]
    if missing_settings or missing_metrics:
        raise ValueError(f"results lack settings {missing_settings} / metrics {missing_metrics}")
    wide = wide.loc[list(metric_order), list(setting_order)]
    ranks = wide.rank(axis=0, ascending=False, method="average")
    table = wide.copy()
    table["mean_auprc"] = wide.mean(axis=1)
    table["mean_rank"] = ranks.mean(axis=1)
    table.columns.name = None
    return table.reset_index()
