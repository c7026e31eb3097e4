"""Figures of the main result tables: Table 4 (meta-AUPRC), the per-setting ceiling and the explanation-methods
benchmark (paper 001 Table 1), its CoSy table (paper 002 Table 3) and the scorers' ranking agreement."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    DIVERGING,
    FAIL_COLOUR,
    FULL_WIDTH,
    GREY,
    PALETTE,
    PASS_COLOUR,
    SEQUENTIAL,
    empty_figure,
    reference_line,
    savefig,
    shade_passing_x,
    styled,
    subplots,
)

#: A Table 4 column whose metrics all lie within this meta-AUPRC range cannot rank them: it is flagged.
UNINFORMATIVE_RANGE = 0.1


@styled
def plot_table4(table: pd.DataFrame, settings: Sequence[str], path: str | Path,
                excluded: Sequence[str] = ()) -> Path:
    """Heat map of meta-AUPRC (metrics × settings), metrics sorted by mean rank, mean AUPRC annotated.

    Each setting's column is labelled with the range of its values; a column whose range is below
    :data:`UNINFORMATIVE_RANGE` is flagged "uninformative" (every metric scores alike there), and the settings
    ``excluded`` from the means (those that fail ``meta.discrimination``) are labelled "not in mean", in red.
    """
    ordered = table.sort_values(["mean_rank", "metric"], kind="stable")
    values = ordered[[*list(settings), "mean_auprc"]].to_numpy(dtype=float)
    spans = np.nanmax(values, axis=0) - np.nanmin(values, axis=0)
    labels = [f"{name}\nrange {span:.2f}" + ("\nuninformative" if span < UNINFORMATIVE_RANGE else "")
              + ("\nnot in mean" if name in excluded else "")
              for name, span in zip(settings, spans, strict=False)] + ["mean"]
    figure, axes = subplots(width=FULL_WIDTH + 3.0, height=0.34 * len(ordered) + 3.0)
    image = axes.imshow(values, cmap=SEQUENTIAL, vmin=0.0, vmax=1.0, aspect="auto")
    axes.set_xticks(np.arange(len(labels)), labels, rotation=35, ha="right", fontsize=9)
    flagged = [*(span < UNINFORMATIVE_RANGE or name in excluded for name, span in zip(settings, spans, strict=False)),
               False]
    for tick, flag in zip(axes.get_xticklabels(), flagged, strict=True):
        if flag:
            tick.set_color(FAIL_COLOUR)
    axes.set_yticks(np.arange(len(ordered)),
                    [f"{metric}  (rank {rank:.1f})" for metric, rank in zip(ordered["metric"], ordered["mean_rank"],
                                                                            strict=True)], fontsize=9)
    axes.grid(False)
    axes.axvline(len(settings) - 0.5, color="white", linewidth=3)
    for row in range(values.shape[0]):
        for column in range(values.shape[1]):
            value = values[row, column]
            if np.isfinite(value):
                axes.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=8,
                          color="white" if value < 0.55 else "black")
    axes.set_title("Paper 000 Table 4: meta-AUPRC on units with known concepts (metrics sorted by mean rank)",
                   loc="left", fontsize=11)
    figure.colorbar(image, ax=axes, fraction=0.03, pad=0.01, label="meta-AUPRC")
    return savefig(figure, path)


@styled
def plot_ceiling(ceiling: pd.DataFrame, meta: pd.DataFrame, settings: Sequence[str], path: str | Path) -> Path:
    """Per setting: the floor (random scores), the best metric on the model's units (with its bootstrap
    interval) and the ceiling (the best metric on the world's ideal units), on one meta-AUPRC axis.

    A setting whose ceiling is low cannot rank metrics; one whose model sits at its ceiling and floor alike
    cannot either. ``ceiling``/``meta`` are ``results/ceiling.csv`` and ``results/meta.csv``.
    """
    rows = []
    for setting in settings:
        models = meta[meta["setting"] == setting]
        ideal = ceiling[ceiling["setting"] == setting]
        best = models.loc[models["test_auprc"].idxmax()]
        top = ideal.loc[ideal["meta_auprc"].idxmax()]
        rows.append((setting, float(best["chance_auprc"]), best, top))
    figure, axes = subplots(width=FULL_WIDTH, height=0.45 * len(rows) + 2.2)
    positions = np.arange(len(rows))[::-1]
    axes.set_xlim(0.0, 1.03)
    shade_passing_x(axes, 0.9, 1.03, "≥ 0.9: can rank metrics")
    for y, (_, floor, best, top) in zip(positions, rows, strict=True):
        axes.plot([floor, top["meta_auprc"]], [y, y], color="#DDDDDD", linewidth=7, solid_capstyle="round",
                  zorder=1)
        axes.scatter(floor, y, marker="|", s=200, color=GREY, zorder=3, linewidths=2,
                     label="floor (random units)" if y == 0 else None)
        interval = [[best["test_auprc"] - best["ci_low"]], [best["ci_high"] - best["test_auprc"]]]
        axes.errorbar(best["test_auprc"], y, xerr=interval, fmt="o", color=PALETTE["blue"], markersize=7,
                      capsize=3, zorder=4, label="best metric, model units (95 % CI)" if y == 0 else None)
        axes.scatter(top["meta_auprc"], y, marker="D", s=45, color=PALETTE["black"], zorder=5,
                     label="ceiling: best metric, ideal units" if y == 0 else None)
        axes.text(1.01, y, f"{best['metric']} {best['test_auprc']:.2f} / {top['meta_auprc']:.2f}", va="center",
                  fontsize=8.5, transform=axes.get_yaxis_transform())
    axes.set_yticks(positions, [row[0] for row in rows])
    axes.grid(axis="y", visible=False)
    axes.set_xlabel("meta-AUPRC (test units)")
    axes.set_title("Can each setting rank metrics? Floor, best model metric and ceiling", loc="left")
    figure.legend(loc="outside lower center", ncol=3, frameon=False)
    return savefig(figure, path)


@styled
def plot_explain_table(table: pd.DataFrame, path: str | Path, *, title: str) -> Path:
    """One panel per (setting, unit group) of an explanation-methods table (``results/explain/table1.csv``):
    each method's mean simulation correlation ± standard error as a bar, the random floor, the ceiling (the truth
    on the world's ideal units) and, where the table has one, the optimum (the best any explanation reaches on the
    units) as labelled lines, the truth on the trained units as a bar; text methods (no simulation) are left out."""
    scored = table[table["simulation_correlation_mean"].notna()]
    panels = list(scored.groupby(["setting", "group"], sort=False))
    columns = min(3, max(len(panels), 1))
    rows = -(-max(len(panels), 1) // columns)
    figure, axes = subplots(rows, columns, width=FULL_WIDTH + 2.0, height=3.2 * rows + 1.0, squeeze=False,
                            sharex=True)
    low = min(0.0, float(np.nanmin(scored["simulation_correlation_mean"])) if len(scored) else 0.0) - 0.05
    for axis, ((setting, group), frame) in zip(axes.ravel(), panels, strict=False):
        methods = frame[~frame["method"].isin(("random", "random_l1", "ideal", "oracle"))]
        positions = np.arange(len(methods))
        axis.barh(positions, methods["simulation_correlation_mean"], xerr=methods["simulation_correlation_se"],
                  color=PALETTE["blue"], alpha=0.85, error_kw={"elinewidth": 0.9, "ecolor": "#333333"})
        axis.set_yticks(positions, methods["method"], fontsize=9)
        axis.invert_yaxis()
        axis.grid(axis="y", visible=False)
        axis.set_xlim(low, 1.0)
        optimum = frame["optimum"].iloc[0] if "optimum" in frame else np.nan
        for value, colour, label, where in ((frame["floor"].iloc[0], FAIL_COLOUR, "random", 0.02),
                                            (frame["ceiling"].iloc[0], PASS_COLOUR, "ideal", 0.02),
                                            (optimum, PALETTE["black"], "optimum", 0.12)):
            if np.isfinite(value):
                reference_line(axis, value, label, axis="x", colour=colour, where=1.0 - where)
        axis.set_title(f"{setting} / {group}", loc="left", fontsize=10)
    for axis in axes.ravel()[len(panels):]:
        axis.set_visible(False)
    figure.suptitle(title, x=0.01, ha="left")
    figure.supxlabel("simulation correlation (mean ± s.e. over units); dashed: random floor, ceiling (truth on "
                     "the ideal units) and optimum (best explanation of the units, where exact)",
                     fontsize=9)
    return savefig(figure, path)


@styled
def plot_cosy_table(table: pd.DataFrame, path: str | Path) -> Path:
    """One panel per setting of ``results/explain/cosy_table3.csv``: each method's mean CoSy AUC ± s.e. per
    generator as grouped bars, chance (0.5) as a labelled line; the random, truth and ideal (ceiling) rows are bars
    too."""
    if table.empty:
        return empty_figure(path, "no CoSy scores (explain.cosy.settings is empty)")
    settings = list(dict.fromkeys(table["setting"]))
    generators = list(dict.fromkeys(table["generator"]))
    figure, axes = subplots(1, len(settings), width=FULL_WIDTH, height=4.2, squeeze=False, sharex=True)
    height = 0.8 / len(generators)
    for axis, setting in zip(axes.ravel(), settings, strict=True):
        part = table[table["setting"] == setting]
        methods = list(dict.fromkeys(part["method"]))
        for index, generator in enumerate(generators):
            rows = part[part["generator"] == generator].set_index("method").reindex(methods)
            positions = np.arange(len(methods)) + (index - (len(generators) - 1) / 2) * height
            axis.barh(positions, rows["auc_mean"], height=height, xerr=rows["auc_se"], label=generator,
                      color=list(PALETTE.values())[index % len(PALETTE)], alpha=0.85,
                      error_kw={"elinewidth": 0.9, "ecolor": "#333333"})
        axis.set_yticks(np.arange(len(methods)), methods, fontsize=9)
        axis.invert_yaxis()
        axis.grid(axis="y", visible=False)
        axis.set_xlim(0.0, 1.0)
        reference_line(axis, 0.5, "chance", axis="x", colour=FAIL_COLOUR)
        axis.set_title(setting, loc="left", fontsize=10)
    figure.legend(*axes.ravel()[0].get_legend_handles_labels(), title="generator", loc="outside lower right",
                  ncols=len(generators))
    figure.suptitle("Simple explanations through CoSy (paper 002 Table 3): AUC of synthetic vs control images",
                    x=0.01, ha="left")
    figure.supxlabel("CoSy AUC (mean ± s.e. over units)", fontsize=9)
    return savefig(figure, path)


@styled
def plot_agreement(agreement: pd.DataFrame, path: str | Path) -> Path:
    """Heat map of Kendall τ between the Table 1 method rankings of every scorer pair, pooled over settings
    (``setting == "all"``), each cell annotated with τ and its bootstrap interval."""
    pooled = agreement[(agreement["table"] == 1) & (agreement["setting"] == "all")]
    if pooled.empty:
        return empty_figure(path, "no scorer pairs to compare")
    names = list(dict.fromkeys([*pooled["reference"], *pooled["metric"]]))
    position = {name: index for index, name in enumerate(names)}
    matrix = np.full((len(names), len(names)), np.nan)
    notes = {}
    for row in pooled.drop_duplicates(["reference", "metric"]).itertuples(index=False):
        i, j = position[row.reference], position[row.metric]
        matrix[i, j] = matrix[j, i] = row.tau
        note = f"{row.tau:.2f}" if np.isfinite(row.tau) else "–"
        if np.isfinite(row.ci_low) and np.isfinite(row.ci_high):
            note += f"\n[{row.ci_low:.2f}, {row.ci_high:.2f}]"
        notes[(i, j)] = notes[(j, i)] = note
    size = max(5.0, 0.75 * len(names) + 2.5)
    figure, axis = subplots(width=min(FULL_WIDTH, size + 1.5), height=size)
    image = axis.imshow(matrix, cmap=DIVERGING, vmin=-1, vmax=1)
    for (i, j), note in notes.items():
        axis.text(j, i, note, ha="center", va="center", fontsize=7)
    axis.set_xticks(range(len(names)), names, rotation=45, ha="right")
    axis.set_yticks(range(len(names)), names)
    axis.grid(False)
    level = float(pooled["ci_level"].iloc[0])
    figure.colorbar(image, ax=axis,
                    label=f"Kendall τ of the method rankings ({level:.0%} bootstrap interval over units)")
    axis.set_title("Do the scorers rank the simple explanations alike? (blank: pair not compared)", loc="left")
    return savefig(figure, path)
