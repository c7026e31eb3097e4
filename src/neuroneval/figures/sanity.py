"""Figures of the sanity tests: paper 000 Figure 3 (Δs against γ), the tie-mode comparison and Decrease Acc
against α·n (the size of the top-α set a setting's chosen α selects)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    FAIL_COLOUR,
    FULL_WIDTH,
    GREY,
    PALETTE,
    coincident_groups,
    family_key,
    label_lines,
    metric_family,
    metric_style,
    order_by_family,
    plain_log_ticks,
    reference_line,
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


@styled
def plot_decrease_vs_alpha_inputs(experimental: pd.DataFrame, inputs: Mapping[str, int], *, metrics: Sequence[str],
                                  ties: str, mean_settings: Sequence[str], threshold: float, min_alpha_inputs: int,
                                  path: str | Path) -> Path:
    """Experimental Decrease Acc of every α-metric against ``α·n``: the inputs its chosen α selects per setting.

    One panel per metric that has an α (rows of ``experimental`` with a finite ``alpha``, tie mode ``ties``),
    x = ``alpha × inputs[setting]`` on a log axis, y = Decrease Acc of the missing (filled) and extra (open)
    labels tests, one point per setting; settings outside ``mean_settings`` (not in Table 3's mean) are drawn in
    grey. The band above ``threshold`` passes; the dashed line is ``min_alpha_inputs``, the paper's smallest
    α·n (α = 10⁻⁴ of 50,000 images = 5). A metric that fails only left of it fails for lack of inputs.
    """
    rows = experimental[(experimental["ties"] == ties) & experimental["metric"].isin(list(metrics))
                        & np.isfinite(experimental["alpha"].astype(float))].copy()
    rows["alpha_inputs"] = rows["alpha"].astype(float) * rows["setting"].map(inputs).astype(float)
    names = [metric for metric in metrics if metric in set(rows["metric"])]
    columns = 3
    n_rows = max(1, -(-len(names) // columns))
    figure, grid = subplots(n_rows, columns, width=FULL_WIDTH, height=2.5 * n_rows + 1.2, sharex=True, sharey=True,
                            squeeze=False)
    finite = rows["alpha_inputs"][rows["alpha_inputs"] > 0]
    low = min(float(finite.min()) if finite.size else 1.0, min_alpha_inputs) / 2
    high = max(float(finite.max()) if finite.size else 10.0, min_alpha_inputs) * 2
    in_mean = set(mean_settings)
    for index, axes in enumerate(grid.ravel()):
        if index >= len(names):
            axes.set_visible(False)
            continue
        metric = names[index]
        look = metric_style(metric)
        axes.set_xscale("log")
        axes.set_xlim(low, high)
        axes.set_ylim(-0.03, 1.05)
        shade_passing(axes, threshold, 1.05, None)
        reference_line(axes, min_alpha_inputs, f"α·n = {min_alpha_inputs}", axis="x", where=0.2)
        chosen = rows[rows["metric"] == metric]
        for test, filled in (("missing", True), ("extra", False)):
            for averaged in (True, False):
                part = chosen[(chosen["test"] == test) & (chosen["setting"].isin(in_mean) == averaged)]
                colour = look.color if averaged else GREY
                axes.scatter(part["alpha_inputs"], part["decrease_acc"], s=36, marker=look.marker, zorder=3,
                             facecolors=colour if filled else "white", edgecolors=colour, linewidths=1.2)
        axes.set_title(metric, loc="left", fontsize=10)
        plain_log_ticks(axes, "x")
        if index + columns >= len(names):  # no panel below: this one carries the x axis
            axes.tick_params(labelbottom=True)
            axes.set_xlabel("α·n: inputs the chosen α selects")
    for axes in grid[:, 0]:
        axes.set_ylabel("Decrease Acc")
    figure.suptitle(f"Experimental Decrease Acc against α·n per setting (ties: {ties}); band: passes "
                    f"(> {threshold:g})", x=0.01, ha="left")
    figure.supxlabel("Filled: missing labels; open: extra labels. Coloured: settings in Table 3's mean; grey: "
                     "reported beside it.", fontsize=8, color="#444444", x=0.01, ha="left")
    return savefig(figure, path)
