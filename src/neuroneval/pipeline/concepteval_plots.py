"""Figures of the concept-evaluation benchmark (paper 004 Figs. 2–4; matplotlib, Agg backend, no timestamps so
files are reproducible)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from neuroneval.io import atomic_path

RELIABILITY_THRESHOLD = 0.9  # Nunnally and Bernstein (1994): the minimal standard the paper draws in Fig. 2
AXIS_FLOOR = -1.0  # Fig. 2's axis starts here: α is unbounded below, values and intervals under it are cut


def _save(figure: plt.Figure, path: str | Path) -> None:
    figure.tight_layout()
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)


def _error(frame: pd.DataFrame, value: str = "value", *, floor: float = -np.inf) -> np.ndarray:
    """Asymmetric error bars (2, n) from ``ci_low``/``ci_high`` around ``value`` (0 where undefined), the lower
    end cut at ``floor``."""
    low = (frame[value] - frame["ci_low"].clip(lower=floor)).clip(lower=0).fillna(0)
    high = (frame["ci_high"] - frame[value]).clip(lower=0).fillna(0)
    return np.vstack([low.to_numpy(), high.to_numpy()])


def plot_reliability(table: pd.DataFrame, path: str | Path) -> None:
    """Paper 004 Fig. 2: per LM, each measure's test-retest reliability and subset consistency (Cronbach's α of
    the test run) with their bootstrap intervals, and the 0.9 line (``results/concepteval/reliability.csv``)."""
    models = list(dict.fromkeys(table["model"]))
    figure, axes = plt.subplots(1, len(models), figsize=(5.0 * len(models), 5.2), squeeze=False)
    series = (("pearson", "test-retest", "test-retest r", "tab:blue"),
              ("cronbach_alpha", "test", "subset consistency α", "tab:orange"))
    for axis, model in zip(axes.ravel(), models, strict=True):
        part = table[table["model"] == model]
        measures = list(dict.fromkeys(part["measure"]))
        positions = np.arange(len(measures))
        for offset, (statistic, run, label, colour) in zip((-0.2, 0.2), series, strict=True):
            rows = part[(part["statistic"] == statistic) & (part["run"] == run)].set_index("measure").reindex(measures)
            rows = rows.assign(value=rows["value"].clip(lower=AXIS_FLOOR))
            axis.barh(positions + offset, rows["value"].fillna(0), height=0.38, xerr=_error(rows, floor=AXIS_FLOOR),
                      color=colour, alpha=0.85, label=label, error_kw={"elinewidth": 0.8})
        axis.axvline(RELIABILITY_THRESHOLD, color="tab:red", linestyle="--", linewidth=1.0, label="0.9")
        axis.set_yticks(positions, measures, fontsize=7)
        axis.invert_yaxis()
        axis.set_xlim(AXIS_FLOOR - 0.05, 1.05)
        axis.set_title(model, fontsize=8)
        axis.tick_params(axis="x", labelsize=7)
        axis.legend(fontsize=6, loc="lower left")
    figure.suptitle("Reliability of the measures (paper 004 Fig. 2):\ntest-retest r over concepts, Cronbach's α "
                    "over data subsets (95 % CI; cut at −1)", fontsize=9)
    _save(figure, path)


def plot_mtmm(matrices: Mapping[str, pd.DataFrame], path: str | Path) -> None:
    """Paper 004 Fig. 3: per LM the MTMM heat map, Kendall τ between measures off the diagonal and subset
    consistency on it (``results/concepteval/mtmm.csv``)."""
    figure, axes = plt.subplots(1, len(matrices), figsize=(6.4 * len(matrices), 5.8), squeeze=False)
    image = None
    for axis, (model, matrix) in zip(axes.ravel(), matrices.items(), strict=True):
        values = matrix.to_numpy(dtype=float)
        image = axis.imshow(values, cmap="RdBu_r", vmin=-1.0, vmax=1.0)
        labels = list(matrix.index)
        axis.set_xticks(np.arange(len(labels)), labels, rotation=60, ha="right", fontsize=7)
        axis.set_yticks(np.arange(len(labels)), labels, fontsize=7)
        for row in range(values.shape[0]):
            for column in range(values.shape[1]):
                if np.isfinite(values[row, column]):
                    axis.text(column, row, f"{values[row, column]:.2f}", ha="center", va="center", fontsize=5,
                              color="white" if abs(values[row, column]) > 0.6 else "black")
        axis.set_title(model, fontsize=8)
    figure.colorbar(image, ax=axes.ravel().tolist(), fraction=0.03, label="Kendall τ (diagonal: α)")
    figure.suptitle("MTMM table (paper 004 Fig. 3):\nconstruct validity off the diagonal, subset consistency on it",
                    fontsize=9)
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)


def plot_method_comparison(table: pd.DataFrame, path: str | Path) -> None:
    """Paper 004 Fig. 4: per LM (rows) and representative measure (columns), each concept family's mean with its
    bootstrap interval over concepts (``results/concepteval/methods.csv``; probes also per planted kind); the
    random floor as a dashed line."""
    models = list(dict.fromkeys(table["model"]))
    measures = list(dict.fromkeys(table["measure"]))
    figure, axes = plt.subplots(len(models), len(measures), figsize=(2.9 * len(measures), 2.4 * len(models) + 0.6),
                                squeeze=False)
    for row, model in enumerate(models):
        for column, measure in enumerate(measures):
            axis = axes[row, column]
            part = table[(table["model"] == model) & (table["measure"] == measure)]
            positions = np.arange(len(part))
            colours = ["0.6" if family == "random" else "tab:blue" for family in part["family"]]
            axis.barh(positions, part["mean"].fillna(0), xerr=_error(part, "mean"), color=colours, alpha=0.85,
                      error_kw={"elinewidth": 0.8})
            floor = part.loc[part["family"] == "random", "mean"]
            if len(floor) and np.isfinite(floor.iloc[0]):
                axis.axvline(floor.iloc[0], color="tab:red", linestyle="--", linewidth=0.8)
            axis.set_yticks(positions, part["family"], fontsize=7)
            axis.invert_yaxis()
            axis.tick_params(axis="x", labelsize=6)
            axis.set_title(f"{model}: {measure}" if column == 0 else measure, fontsize=8)
    figure.suptitle("Concept families on representative measures (paper 004 Fig. 4):\nmean over concepts, 95 % CI",
                    fontsize=9)
    _save(figure, path)
