"""Figures of the sanity tests: paper 000 Figure 3 (Δs against γ) and the tie-mode comparison."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    FAIL_COLOUR,
    FULL_WIDTH,
    PALETTE,
    coincident_groups,
    family_key,
    label_lines,
    metric_family,
    metric_style,
    order_by_family,
    savefig,
    shade_passing,
    shade_passing_x,
    styled,
    subplots,
)


def _gamma_label(gamma: float) -> str:
    """``0.1``, ``0.499``; powers of ten below 0.01 as ``10⁻³``."""
    exponent = round(float(np.log10(gamma)))
    return f"10$^{{{exponent}}}$" if gamma < 0.01 and np.isclose(gamma, 10.0 ** exponent) else f"{gamma:g}"


@styled
def plot_delta_vs_gamma(theoretical: pd.DataFrame, *, metrics: Sequence[str], test: str, passing: Sequence[str],
                        epsilon: float, path: str | Path) -> Path:
    """Paper 000 Figure 3: mean Δs of the theoretical test against the activation frequency γ (log scale).

    Two panels: the metrics that pass the test at every γ and those that fail at some γ. Metrics whose lines lie
    on top of each other are drawn once and labelled together (``precision = iou = …``); every line carries a
    direct label. The y axis is symmetric-log with a linear part of half-width ε, so the band ``|Δs| ≤ ε``
    (the perturbation goes unnoticed) is as visible as the region ``Δs < −ε`` (noticed: the test counts it).
    """
    rows = theoretical[(theoretical["test"] == test) & theoretical["metric"].isin(list(metrics))]
    ties = ", ".join(sorted(rows["ties"].unique()))
    gammas = np.sort(rows["gamma"].unique())
    series = {}
    for metric in order_by_family([metric for metric in metrics if metric in set(rows["metric"])]):
        line = rows[rows["metric"] == metric].set_index("gamma")["mean_delta"].reindex(gammas)
        series[metric] = line.to_numpy(dtype=float)
    panels = [(f"Pass at every γ (Decrease Acc > 90 %): {sum(m in passing for m in series)} metrics",
               [m for m in series if m in passing]),
              (f"Fail at some γ: {sum(m not in passing for m in series)} metrics",
               [m for m in series if m not in passing])]
    panels = [panel for panel in panels if panel[1]]
    figure, axes_list = subplots(len(panels), 1, width=FULL_WIDTH, height=3.6 * len(panels) + 1.2, sharex=True,
                                 squeeze=False)
    values = np.concatenate(list(series.values())) if series else np.zeros(1)
    finite = values[np.isfinite(values)]
    bottom = min(float(finite.min()) if finite.size else -1.0, -10 * epsilon) * 1.35
    top = max(float(finite.max()) if finite.size else 0.0, 0.0) + 0.3 * epsilon
    for axes, (title, names) in zip(axes_list[:, 0], panels, strict=True):
        axes.set_yscale("symlog", linthresh=epsilon, linscale=0.6)
        axes.set_xscale("log")
        axes.set_ylim(bottom, top)
        axes.set_xlim(gammas.min() / 1.6, gammas.max() * 1.3)
        noticed = shade_passing(axes, bottom, -epsilon, None)
        unnoticed = shade_passing(axes, -epsilon, top, None, colour=FAIL_COLOUR, alpha=0.12)
        entries = []
        for group in coincident_groups({name: series[name] for name in names}):
            look = metric_style(group[0])
            data = series[group[0]]
            axes.plot(gammas, data, **look.kwargs, linewidth=2.0, markersize=6.5, zorder=3,
                      markeredgecolor="white", markeredgewidth=0.6)
            last = np.flatnonzero(np.isfinite(data))
            if last.size:
                entries.append((gammas[last[-1]], data[last[-1]], " = ".join(group), look.color))
        ticks = [tick for tick in (-1.0, -0.5, -0.1, -0.01, -epsilon, 0.0) if bottom <= tick <= top]
        axes.set_yticks(ticks, [f"{tick:g}".replace("-", "−") if tick != -epsilon else "−ε" for tick in ticks])
        axes.set_yticks([], minor=True)
        axes.set_title(title, loc="left", fontsize=11)
        axes.set_ylabel(f"mean Δs ({test} labels)")
        label_lines(axes, entries, fontsize=9)
    bottom_axes = axes_list[-1, 0]
    bottom_axes.set_xticks(gammas, [_gamma_label(gamma) for gamma in gammas])
    bottom_axes.set_xticks([], minor=True)
    bottom_axes.set_xlabel("activation frequency γ of the ideal unit (log scale)")
    families = sorted({metric_family(metric) for metric in series})
    figure.suptitle(f"Paper 000 Figure 3: theoretical {test}-labels test on ideal units (ties: {ties})", x=0.01,
                    ha="left")
    axes_list[0, 0].legend([noticed, unnoticed],
                  [f"Δs < −ε: the {test} labels are noticed (counted by Decrease Acc)",
                   f"|Δs| ≤ ε = {epsilon:g}: not noticed"], loc="upper right", ncol=1, fontsize=9)
    figure.supxlabel(f"Line style = metric family: {family_key(families)}.   Lines that coincide are drawn once, "
                     "labelled a = b.", fontsize=8, color="#444444", x=0.01, ha="left")
    return savefig(figure, path)


@styled
def plot_ties(comparison: pd.DataFrame, *, metrics: Sequence[str], path: str | Path) -> Path:
    """Decrease Acc of ``metrics`` in average vs reference tie mode (the ``mean`` rows of results/ties.csv).

    A 2 × 2 grid: rows experimental (mean over settings) and theoretical (mean over γ), columns the missing and
    extra labels tests; one horizontal bar per metric and tie mode, the passing region (> 90 %) shaded.
    """
    means = comparison[comparison["case"] == "mean"]
    modes = sorted(means["ties"].unique())
    colours = {mode: colour for mode, colour in zip(modes, (PALETTE["blue"], PALETTE["orange"], PALETTE["green"]),
                                                       strict=False)}
    hatches = {mode: hatch for mode, hatch in zip(modes, ("", "//", ".."), strict=False)}
    figure, grid = subplots(2, 2, width=FULL_WIDTH, height=6.4, sharex=True, sharey=True)
    positions = np.arange(len(metrics))
    height = 0.8 / max(len(modes), 1)
    for row, source in enumerate(("experimental", "theoretical")):
        for column, test in enumerate(("missing", "extra")):
            axes = grid[row, column]
            axes.set_xlim(0.0, 1.08)
            shade_passing_x(axes, 0.9, 1.08, "passes")
            for index, mode in enumerate(modes):
                chosen = means[(means["source"] == source) & (means["test"] == test) & (means["ties"] == mode)]
                values = chosen.set_index("metric")["decrease_acc"].reindex(list(metrics)).to_numpy(dtype=float)
                offset = (index - (len(modes) - 1) / 2) * height
                axes.barh(positions + offset, np.nan_to_num(values), height, color=colours[mode],
                          hatch=hatches[mode], edgecolor="white", linewidth=0.5,
                          label=f"ties = {mode}" + (" (correct ranks)" if mode == "average" else
                                                    " (authors' tie-breaking)" if mode == "reference" else ""))
                for y, value in zip(positions + offset, values, strict=True):
                    if np.isfinite(value):
                        axes.text(min(value, 1.0) + 0.01, y, f"{value:.2f}", va="center", fontsize=7.5,
                                  color="#333333")
            axes.set_yticks(positions, list(metrics))
            axes.grid(axis="y", visible=False)
            axes.set_title(f"{source}, {test} labels", loc="left", fontsize=10)
            if row == 1:
                axes.set_xlabel("Decrease Acc (share of units where Δs < −ε)")
    grid[0, 0].invert_yaxis()  # shared: every panel lists the metrics top to bottom
    handles, labels = grid[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=len(modes), fontsize=9)
    figure.suptitle("Tie handling: Decrease Acc with average ranks vs the authors' tie-breaking", x=0.01, ha="left")
    return savefig(figure, path)
