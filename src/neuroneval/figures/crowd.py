"""Figures of the simulated crowd study: the sampling curve (Fig. 2a), the aggregation curve (Fig. 3a) and the
cost-reduction factors against concept rarity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    GREY,
    HALF_WIDTH,
    label_lines,
    plain_log_ticks,
    reference_line,
    savefig,
    series_style,
    styled,
    subplots,
)

_LABELS = {
    "uniform": "uniform (Monte Carlo)",
    "activation": "IS, activation only (q ∝ ā² + ε)",
    "pseudo": "IS, pseudo-label guided (Eq. 4)",
    "average": "1: average",
    "majority": "2: majority vote",
    "bayes_uniform": "3a: Bayes, uniform prior",
    "bayes_pseudo": "3b: Bayes, pseudo-label prior",
}
_ORDER = list(_LABELS)


def _style(method: str, methods: list[str]) -> dict:
    index = _ORDER.index(method) if method in _ORDER else len(_ORDER) + methods.index(method)
    return series_style(index).kwargs


def _ends(axes, frame: pd.DataFrame, x: str, y: str, group: str) -> list:
    entries = []
    for method, rows in frame.groupby(group, sort=False):
        rows = rows.sort_values(x)
        last = rows.iloc[-1]
        entries.append((last[x], last[y], _LABELS.get(method, method),
                        _style(method, list(dict.fromkeys(frame[group])))["color"]))
    return entries


@styled
def plot_sampling_curves(sampling_df: pd.DataFrame, path: str | Path) -> Path:
    """RCE (Eq. 13) against the number of labelled inputs, one line per sampling method (Fig. 2a).

    Shaded bands are ±1 standard error over units; each line is labelled at its end. Log–log axes. Returns the
    written path (PNG or SVG, by suffix).
    """
    figure, axes = subplots(width=HALF_WIDTH + 2.4, height=4.6)
    methods = list(dict.fromkeys(sampling_df["method"]))
    for method, rows in sampling_df.groupby("method", sort=False):
        rows = rows.sort_values("n_inputs")
        look = _style(method, methods)
        axes.plot(rows["n_inputs"], rows["rce"], **look, label=_LABELS.get(method, method))
        axes.fill_between(rows["n_inputs"], rows["rce"] - rows["rce_se"], rows["rce"] + rows["rce_se"], alpha=0.18,
                          color=look["color"], linewidth=0)
    axes.set(xscale="log", yscale="log", xlabel="labelled inputs per unit", ylabel="relative correlation error (RCE)")
    axes.grid(True, which="major")
    axes.set_title("Sampling: RCE against labelled inputs per unit (noise-free labels; band ±1 s.e.)",
                   loc="left", fontsize=10)
    plain_log_ticks(axes)
    label_lines(axes, _ends(axes, sampling_df, "n_inputs", "rce", "method"))
    return savefig(figure, path)


@styled
def plot_aggregation_curves(aggregation_df: pd.DataFrame, path: str | Path) -> Path:
    """RCE against cost (inputs × raters), best number of raters per cost, per aggregation method (Fig. 3a).

    The upper panel draws the curves (±1 s.e. bands, labels at the line ends); the lower panel lists, on the same
    cost axis, the number of raters per input that each method's best point uses — a grid of numbers instead of
    labels beside the points, which overlapped. Returns the written path.
    """
    figure, (axes, grid) = subplots(2, 1, width=HALF_WIDTH + 3.0, height=6.0, sharex=True,
                                    gridspec_kw={"height_ratios": [3.2, 1.0]})
    best = aggregation_df[aggregation_df["best"]]
    methods = list(dict.fromkeys(best["method"]))
    for position, (method, rows) in enumerate(best.groupby("method", sort=False)):
        rows = rows.sort_values("cost")
        look = _style(method, methods)
        axes.plot(rows["cost"], rows["rce"], **look, label=_LABELS.get(method, method))
        axes.fill_between(rows["cost"], rows["rce"] - rows["rce_se"], rows["rce"] + rows["rce_se"], alpha=0.18,
                          color=look["color"], linewidth=0)
        for row in rows.itertuples(index=False):
            grid.text(row.cost, position, str(row.n_raters), ha="center", va="center", fontsize=9,
                      color=look["color"], fontweight="bold")
    axes.set(xscale="log", yscale="log", ylabel="relative correlation error (RCE)")
    axes.grid(True, which="major")
    plain_log_ticks(axes)
    axes.set_title("Aggregation: RCE against labelling cost, best raters per input at each cost (band ±1 s.e.)",
                   loc="left", fontsize=10)
    label_lines(axes, _ends(axes, best, "cost", "rce", "method"))
    grid.set_ylim(len(methods) - 0.5, -0.5)
    grid.set_yticks(range(len(methods)), [_LABELS.get(method, method) for method in methods], fontsize=8)
    for tick, method in zip(grid.get_yticklabels(), methods, strict=True):
        tick.set_color(_style(method, methods)["color"])
    grid.grid(False)
    grid.tick_params(axis="y", length=0)
    grid.set_title("raters per input at the best point", loc="left", fontsize=9, fontweight="normal", color=GREY)
    grid.set_xlabel("cost (inputs × raters per input, log scale)")
    costs = np.sort(best["cost"].unique())
    grid.set_xlim(costs.min() / 1.4, costs.max() * 1.4)
    grid.set_xticks(costs, [f"{cost:g}" for cost in costs])  # the costs themselves: each column of numbers
    grid.set_xticks([], minor=True)
    for spine in ("left", "bottom"):
        grid.spines[spine].set_visible(False)
    return savefig(figure, path)


#: Paper 001's headline factors (abstract, Sec. 4.1 and 4.2), drawn as reference lines.
_PAPER_FACTORS = {("sampling", "uniform", "pseudo"): 30.0, ("aggregation", "majority", "bayes_pseudo"): 5.0}


@styled
def plot_rarity_factors(factors_df: pd.DataFrame, path: str | Path, *, paper_rarity: float = 0.001) -> Path:
    """Cost-reduction factor against concept rarity, one line per comparison, with bootstrap intervals.

    ``factors_df`` is :func:`neuroneval.crowd.rarity.rarity_factors`. Dotted lines: the paper's ≈ 30× (IS)
    and ≈ 5× (Bayes with pseudo-label prior), labelled; the grey vertical line: the rarity of one ImageNet class.
    Log–log axes. Returns the written path.
    """
    figure, axes = subplots(width=HALF_WIDTH + 3.6, height=5.0)
    entries = []
    for index, ((experiment, baseline, method), rows) in enumerate(
            factors_df.groupby(["experiment", "baseline", "method"], sort=False)):
        rows = rows.sort_values("rarity")
        label = f"{_LABELS.get(method, method)}\n  over {_LABELS.get(baseline, baseline)}"
        look = series_style(index).kwargs
        axes.plot(rows["rarity"], rows["factor"], **look)
        axes.fill_between(rows["rarity"], rows["ci_low"], rows["ci_high"], alpha=0.15, color=look["color"],
                          linewidth=0)
        entries.append((rows["rarity"].iloc[0], rows["factor"].iloc[0], label, look["color"]))
        paper = _PAPER_FACTORS.get((experiment, baseline, method))
        if paper is not None:
            reference_line(axes, paper, f"paper 001: ≈ {paper:g}×", colour=look["color"], linestyle=(0, (1, 2)),
                           where=0.01)
    axes.axvline(paper_rarity, color=GREY, linewidth=1, alpha=0.6)
    axes.text(paper_rarity, 0.99, " one ImageNet class", transform=axes.get_xaxis_transform(), ha="left",
              va="top", fontsize=8, color=GREY)
    axes.axhline(1.0, color="#999999", linewidth=0.8)
    axes.set(xscale="log", yscale="log", xlabel="concept rarity γ (fraction of inputs; rarer to the right)",
             ylabel="cost-reduction factor (×)")
    axes.invert_xaxis()
    axes.grid(True, which="major")
    plain_log_ticks(axes, "y")
    axes.set_title("Crowd-study gains against concept rarity (95 % bootstrap bands)", loc="left", fontsize=10)
    label_lines(axes, entries, fontsize=8.5)
    return savefig(figure, path)
