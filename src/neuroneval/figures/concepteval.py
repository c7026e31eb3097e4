"""Figures of the concept-evaluation benchmark (paper 004 Figs. 2–4)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    DIVERGING,
    FAIL_COLOUR,
    FULL_WIDTH,
    GREY,
    PALETTE,
    reference_line,
    savefig,
    shade_passing_x,
    styled,
    subplots,
)

RELIABILITY_THRESHOLD = 0.9  # Nunnally and Bernstein (1994): the minimal standard the paper draws in Fig. 2
AXIS_FLOOR = -1.0  # Fig. 2's axis starts here: α is unbounded below, values and intervals under it are cut


def _error(frame: pd.DataFrame, value: str = "value", *, floor: float = -np.inf) -> np.ndarray:
    """Asymmetric error bars (2, n) from ``ci_low``/``ci_high`` around ``value`` (0 where undefined), the lower
    end cut at ``floor``."""
    low = (frame[value] - frame["ci_low"].clip(lower=floor)).clip(lower=0).fillna(0)
    high = (frame["ci_high"] - frame[value]).clip(lower=0).fillna(0)
    return np.vstack([low.to_numpy(), high.to_numpy()])


@styled
def plot_reliability(table: pd.DataFrame, path: str | Path) -> Path:
    """Paper 004 Fig. 2: per LM, each measure's test-retest reliability and subset consistency (Cronbach's α of
    the test run) with their bootstrap intervals, and the 0.9 line (``results/concepteval/reliability.csv``)."""
    models = list(dict.fromkeys(table["model"]))
    figure, axes = subplots(1, len(models), width=min(FULL_WIDTH, 5.4 * len(models) + 1.0), height=5.6,
                            squeeze=False, sharey=True)
    series = (("pearson", "test-retest", "test-retest r", PALETTE["blue"], ""),
              ("cronbach_alpha", "test", "subset consistency α", PALETTE["orange"], "//"))
    for axis, model in zip(axes.ravel(), models, strict=True):
        part = table[table["model"] == model]
        measures = list(dict.fromkeys(part["measure"]))
        positions = np.arange(len(measures))
        axis.set_xlim(AXIS_FLOOR - 0.05, 1.05)
        shade_passing_x(axis, RELIABILITY_THRESHOLD, 1.05, "≥ 0.9\nreliable")
        for offset, (statistic, run, label, colour, hatch) in zip((-0.2, 0.2), series, strict=True):
            rows = part[(part["statistic"] == statistic) & (part["run"] == run)].set_index("measure").reindex(measures)
            rows = rows.assign(value=rows["value"].clip(lower=AXIS_FLOOR))
            axis.barh(positions + offset, rows["value"].fillna(0), height=0.38, xerr=_error(rows, floor=AXIS_FLOOR),
                      color=colour, hatch=hatch, edgecolor="white", linewidth=0.4, label=label,
                      error_kw={"elinewidth": 0.8, "ecolor": "#333333"})
        axis.axvline(0.0, color=GREY, linewidth=0.8)
        axis.set_yticks(positions, measures, fontsize=9)
        axis.grid(axis="y", visible=False)
        axis.set_title(model, loc="left", fontsize=10)
    axes[0, 0].invert_yaxis()
    handles, labels = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=2)
    figure.suptitle("Paper 004 Fig. 2: reliability of the measures (95 % CI; cut at −1)", x=0.01, ha="left")
    return savefig(figure, path)


@styled
def plot_mtmm(matrices: Mapping[str, pd.DataFrame], path: str | Path) -> Path:
    """Paper 004 Fig. 3: per LM the MTMM heat map, Kendall τ between measures off the diagonal and subset
    consistency on it (``results/concepteval/mtmm.csv``)."""
    count = max(len(matrices), 1)
    size = max((len(matrix) for matrix in matrices.values()), default=1)
    figure, axes = subplots(1, count, width=min(FULL_WIDTH + 4.0, (0.42 * size + 2.4) * count + 1.0),
                            height=0.36 * size + 1.8, squeeze=False)
    image = None
    for axis, (model, matrix) in zip(axes.ravel(), matrices.items(), strict=True):
        values = matrix.to_numpy(dtype=float)
        image = axis.imshow(values, cmap=DIVERGING, vmin=-1.0, vmax=1.0)
        labels = list(matrix.index)
        axis.set_xticks(np.arange(len(labels)), labels, rotation=60, ha="right", fontsize=8.5)
        axis.set_yticks(np.arange(len(labels)), labels, fontsize=8.5)
        axis.grid(False)
        for row in range(values.shape[0]):
            for column in range(values.shape[1]):
                if np.isfinite(values[row, column]):
                    axis.text(column, row, f"{values[row, column]:.2f}", ha="center", va="center", fontsize=7,
                              color="white" if abs(values[row, column]) > 0.6 else "black",
                              fontweight="bold" if row == column else "normal")
        axis.set_title(model, loc="left", fontsize=10)
    if image is not None:
        figure.colorbar(image, ax=axes.ravel().tolist(), fraction=0.03, label="Kendall τ (diagonal, bold: α)")
    figure.suptitle("Paper 004 Fig. 3: MTMM table — construct validity off the diagonal, subset consistency on it",
                    x=0.01, ha="left")
    return savefig(figure, path)


@styled
def plot_method_comparison(table: pd.DataFrame, path: str | Path) -> Path:
    """Paper 004 Fig. 4: per LM (rows) and representative measure (columns), each concept family's mean with its
    bootstrap interval over concepts (``results/concepteval/methods.csv``; probes also per planted kind); the
    random floor as a labelled dashed line."""
    models = list(dict.fromkeys(table["model"]))
    measures = list(dict.fromkeys(table["measure"]))
    columns = min(len(measures), 5)
    rows = -(-len(models) * len(measures) // columns)
    figure, axes = subplots(rows, columns, width=FULL_WIDTH + 1.0, height=2.9 * rows + 0.8, squeeze=False)
    for index, (model, measure) in enumerate((model, measure) for model in models for measure in measures):
        axis = axes.ravel()[index]
        part = table[(table["model"] == model) & (table["measure"] == measure)]
        positions = np.arange(len(part))
        colours = [GREY if family == "random" else PALETTE["blue"] for family in part["family"]]
        axis.barh(positions, part["mean"].fillna(0), xerr=_error(part, "mean"), color=colours, alpha=0.9,
                  error_kw={"elinewidth": 0.8, "ecolor": "#333333"})
        floor = part.loc[part["family"] == "random", "mean"]
        if len(floor) and np.isfinite(floor.iloc[0]):
            reference_line(axis, floor.iloc[0], "random", axis="x", colour=FAIL_COLOUR)
        axis.set_yticks(positions, part["family"], fontsize=8.5)
        axis.invert_yaxis()
        axis.grid(axis="y", visible=False)
        axis.tick_params(axis="x", labelsize=8)
        axis.set_title(f"{measure}\n{model}", loc="left", fontsize=9.5)
    for axis in axes.ravel()[len(models) * len(measures):]:
        axis.set_visible(False)
    figure.suptitle("Paper 004 Fig. 4: concept families on representative measures (mean over concepts, 95 % CI)",
                    x=0.01, ha="left")
    return savefig(figure, path)
