"""Figure of Setting 2 (paper 001, Figs. 2b, 3b and 4): RCE against cost from the ratings of a real study."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from neuroneval.figures.style import plain_log_ticks, savefig, series_style, styled, subplots

_LABELS = {
    "uniform": "uniform sampling",
    "activation": "IS, activation only",
    "pseudo": "IS, pseudo-label guided (Eq. 4)",
    "average": "1: average",
    "majority": "2: majority vote",
    "bayes_uniform": "3a: Bayes, uniform prior",
    "bayes_pseudo": "3b: Bayes, pseudo-label prior",
}


def _band(axes, rows: pd.DataFrame, x: str, label: str, index: int) -> None:
    rows = rows.sort_values(x)
    look = series_style(index).kwargs
    axes.plot(rows[x], rows["rce"], **look, label=label)
    axes.fill_between(rows[x], rows["ci_low"].clip(lower=1e-6), rows["ci_high"], alpha=0.15, color=look["color"],
                      linewidth=0)


def _envelope(rows: pd.DataFrame) -> pd.DataFrame:
    """Per cost, the measured design (raters × inputs) of lowest RCE among those costing at most as much."""
    rows = rows.sort_values(["cost", "rce"]).reset_index(drop=True)
    best = rows["rce"].cummin()
    chosen = [int(rows.index[(rows["rce"] == value) & (rows.index <= position)][0]) for position, value in
              enumerate(best)]
    return rows.loc[chosen].assign(dollars=rows["dollars"].to_numpy()).drop_duplicates("dollars", keep="last")


@styled
def plot_setting2(curve: pd.DataFrame, path: str | Path, *, price_per_rating: float, sampling_method: str,
                  aggregation_sampling: str, raters_method: str) -> Path:
    """Three panels of :func:`neuroneval.crowd.real_study.rce_curve`'s table, log–log, bands = its interval.

    (a) Fig. 2b: RCE against inputs per pair, one line per study (sampling), aggregated with ``sampling_method``
    at the fewest raters measured. (b) Fig. 3b: RCE against dollars per pair (cost × ``price_per_rating``) for
    every aggregation method of the ``aggregation_sampling`` study, at each cost the best measured design (rater
    count and inputs) costing at most that much (App. A.3: the best raters for a budget). (c) Fig. 4:
    ``raters_method``'s RCE against dollars, one line per rater count. Returns the written path.
    """
    figure, (left, middle, right) = subplots(1, 3, height=4.4)
    fewest = curve["n_raters"].min()
    sampled = curve[(curve["method"] == sampling_method) & (curve["n_raters"] == fewest)]
    for index, (sampling, rows) in enumerate(sampled.groupby("sampling", sort=False)):
        _band(left, rows, "n_inputs", _LABELS.get(sampling, sampling), index)
    left.set(xlabel="inputs per pair", title=f"(a) sampling ({_LABELS.get(sampling_method, sampling_method)}, "
                                             f"{fewest} rater{'s' if fewest > 1 else ''})")
    study = curve[curve["sampling"] == aggregation_sampling].assign(dollars=lambda t: t["cost"] * price_per_rating)
    for index, (method, rows) in enumerate(study.groupby("method", sort=False)):
        _band(middle, _envelope(rows), "dollars", _LABELS.get(method, method), index)
    middle.set(xlabel="dollars per pair", title="(b) aggregation, best design within each cost")
    for index, (n_raters, rows) in enumerate(study[study["method"] == raters_method].groupby("n_raters")):
        _band(right, rows, "dollars", f"{n_raters} rater{'s' if n_raters > 1 else ''} per input", index)
    right.set(xlabel="dollars per pair", title=f"(c) {_LABELS.get(raters_method, raters_method)}")
    for axes in (left, middle, right):
        axes.set(xscale="log", yscale="log", ylabel="relative correlation error (RCE)")
        axes.grid(True, which="major")
        plain_log_ticks(axes)
        axes.legend(fontsize=8)
        axes.title.set_fontsize(10)
    return savefig(figure, path)
