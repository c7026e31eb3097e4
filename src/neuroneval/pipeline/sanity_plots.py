"""Figures of the sanity tests (matplotlib, Agg backend, no timestamps so files are reproducible)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from neuroneval.io import atomic_path


def _save(figure: plt.Figure, path: str | Path) -> None:
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)


def plot_delta_vs_gamma(theoretical: pd.DataFrame, *, metrics: Sequence[str], test: str, passing: Sequence[str],
                        epsilon: float, path: str | Path) -> None:
    """Paper 000 Figure 3: mean Δs of the theoretical test against the activation frequency γ (log scale).

    One line per metric; metrics that pass the theoretical test at every γ are solid, the others dashed. The
    band ``|Δs| ≤ ε`` is shaded: a metric whose line enters it cannot tell the perturbed concept apart.
    """
    rows = theoretical[(theoretical["test"] == test) & theoretical["metric"].isin(list(metrics))]
    ties = ", ".join(sorted(rows["ties"].unique()))
    figure, axes = plt.subplots(figsize=(8.0, 5.0))
    colours = plt.get_cmap("tab20")(np.linspace(0.0, 1.0, max(len(metrics), 2)))
    for colour, metric in zip(colours, metrics, strict=False):
        line = rows[rows["metric"] == metric].sort_values("gamma")
        if line.empty:
            continue
        style = "-" if metric in passing else "--"
        axes.plot(line["gamma"], line["mean_delta"], style, marker="o", markersize=3, color=colour, label=metric)
    axes.axhspan(-epsilon, epsilon, color="grey", alpha=0.25, label=f"|Δs| ≤ ε = {epsilon:g}")
    axes.set_xscale("log")
    axes.set_xlabel("activation frequency γ")
    axes.set_ylabel(f"mean Δs ({test} labels)")
    axes.set_title(f"Theoretical {test} labels test on ideal units (paper 000, Fig. 3)\n"
                   f"ties: {ties}; dashed: fails at some γ", fontsize=9)
    axes.legend(fontsize=7, ncol=2, loc="lower left", bbox_to_anchor=(1.01, 0.0), borderaxespad=0.0)
    figure.tight_layout()
    _save(figure, path)


def plot_ties(comparison: pd.DataFrame, *, metrics: Sequence[str], path: str | Path) -> None:
    """Decrease Acc of ``metrics`` in average vs reference tie mode (the ``mean`` rows of results/ties.csv).

    A 2 × 2 grid: rows experimental (mean over settings) and theoretical (mean over γ), columns the missing and
    extra labels tests; two bars per metric.
    """
    means = comparison[comparison["case"] == "mean"]
    modes = sorted(means["ties"].unique())
    figure, grid = plt.subplots(2, 2, figsize=(9.0, 6.0), sharey=True)
    positions = np.arange(len(metrics))
    width = 0.8 / max(len(modes), 1)
    for row, source in enumerate(("experimental", "theoretical")):
        for column, test in enumerate(("missing", "extra")):
            axes = grid[row, column]
            for index, mode in enumerate(modes):
                chosen = means[(means["source"] == source) & (means["test"] == test) & (means["ties"] == mode)]
                values = chosen.set_index("metric")["decrease_acc"].reindex(list(metrics))
                axes.bar(positions + (index - (len(modes) - 1) / 2) * width, values.to_numpy(dtype=float), width,
                         label=f"ties = {mode}")
            axes.axhline(0.9, color="black", linewidth=0.8, linestyle=":")
            axes.set_xticks(positions, list(metrics), rotation=30, ha="right", fontsize=8)
            axes.set_ylim(0.0, 1.05)
            axes.set_title(f"{source}, {test} labels", fontsize=9)
            if column == 0:
                axes.set_ylabel("Decrease Acc")
    grid[0, 1].legend(fontsize=8)
    figure.suptitle("Decrease Acc with average ranks vs the authors' tie-breaking (reference)", fontsize=10)
    figure.tight_layout()
    _save(figure, path)
