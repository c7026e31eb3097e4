"""Figures of the simulated crowd study: the sampling curve (Fig. 2a) and the aggregation curve (Fig. 3a)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

_LABELS = {
    "uniform": "uniform (Monte Carlo)",
    "activation": "IS, activation only (q ∝ ā² + ε)",
    "pseudo": "IS, pseudo-label guided (Eq. 4)",
    "average": "1: average",
    "majority": "2: majority vote",
    "bayes_uniform": "3a: Bayes, uniform prior",
    "bayes_pseudo": "3b: Bayes, pseudo-label prior",
}


def _save(figure: plt.Figure, path: str | Path) -> Path:
    from neuroneval.io import atomic_path

    target = Path(path)
    with atomic_path(target) as tmp_path:
        kind = target.suffix.lstrip(".").lower() or "png"
        stamp = {"svg": {"Date": None}, "png": {"Software": None}}.get(kind)
        figure.savefig(tmp_path, format=kind, dpi=150, bbox_inches="tight", metadata=stamp)
    plt.close(figure)
    return target


def plot_sampling_curves(sampling_df: pd.DataFrame, path: str | Path) -> Path:
    """RCE (Eq. 13) against the number of labelled inputs, one line per sampling method (Fig. 2a).

    Shaded bands are ±1 standard error over units. Log–log axes. Returns the written path (PNG or SVG,
    by suffix).
    """
    figure, axes = plt.subplots(figsize=(5.5, 4))
    for method, rows in sampling_df.groupby("method", sort=False):
        rows = rows.sort_values("n_inputs")
        axes.plot(rows["n_inputs"], rows["rce"], marker="o", label=_LABELS.get(method, method))
        axes.fill_between(rows["n_inputs"], rows["rce"] - rows["rce_se"], rows["rce"] + rows["rce_se"], alpha=0.2)
    axes.set(xscale="log", yscale="log", xlabel="labelled inputs per unit", ylabel="relative correlation error")
    axes.set_title("Sampling (noise-free labels)", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, path)


def plot_aggregation_curves(aggregation_df: pd.DataFrame, path: str | Path) -> Path:
    """RCE against cost (inputs × raters), best number of raters per cost, per aggregation method (Fig. 3a).

    Each point is annotated with its number of raters. Returns the written path.
    """
    figure, axes = plt.subplots(figsize=(5.5, 4))
    best = aggregation_df[aggregation_df["best"]]
    for method, rows in best.groupby("method", sort=False):
        rows = rows.sort_values("cost")
        line = axes.plot(rows["cost"], rows["rce"], marker="o", label=_LABELS.get(method, method))[0]
        axes.fill_between(rows["cost"], rows["rce"] - rows["rce_se"], rows["rce"] + rows["rce_se"], alpha=0.2)
        for row in rows.itertuples(index=False):
            axes.annotate(
                str(row.n_raters),
                (row.cost, row.rce),
                fontsize=6,
                color=line.get_color(),
                xytext=(2, 3),
                textcoords="offset points",
            )
    axes.set(xscale="log", yscale="log", xlabel="cost (inputs × raters per input)", ylabel="relative correlation error")
    axes.set_title("Aggregation (simulated raters; label = raters per input)", fontsize=10)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=8)
    return _save(figure, path)


#: Paper 001's headline factors (abstract, Sec. 4.1 and 4.2), drawn as reference lines.
_PAPER_FACTORS = {("sampling", "uniform", "pseudo"): 30.0, ("aggregation", "majority", "bayes_pseudo"): 5.0}


def plot_rarity_factors(factors_df: pd.DataFrame, path: str | Path, *, paper_rarity: float = 0.001) -> Path:
    """Cost-reduction factor against concept rarity, one line per comparison, with bootstrap intervals.

    ``factors_df`` is :func:`neuroneval.crowd.rarity.rarity_factors`. Dotted lines: the paper's ≈ 30× (IS)
    and ≈ 5× (Bayes with pseudo-label prior); the grey vertical line: the rarity of one ImageNet class.
    Log–log axes. Returns the written path.
    """
    figure, axes = plt.subplots(figsize=(5.5, 4))
    for (experiment, baseline, method), rows in factors_df.groupby(["experiment", "baseline", "method"], sort=False):
        rows = rows.sort_values("rarity")
        label = f"{_LABELS.get(method, method)} over {_LABELS.get(baseline, baseline)}"
        line = axes.plot(rows["rarity"], rows["factor"], marker="o", label=label)[0]
        axes.fill_between(rows["rarity"], rows["ci_low"], rows["ci_high"], alpha=0.15, color=line.get_color())
        paper = _PAPER_FACTORS.get((experiment, baseline, method))
        if paper is not None:
            axes.axhline(paper, linestyle=":", color=line.get_color(), linewidth=1)
    axes.axvline(paper_rarity, color="grey", linewidth=1, alpha=0.6)
    axes.set(xscale="log", yscale="log", xlabel="concept rarity γ (fraction of inputs)", ylabel="cost-reduction factor")
    axes.invert_xaxis()
    axes.set_title("Crowd study gains vs rarity (dotted: paper 001; grey: one ImageNet class)", fontsize=9)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=6)
    return _save(figure, path)
