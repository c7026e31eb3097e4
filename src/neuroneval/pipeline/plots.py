"""Figures for result tables (matplotlib, Agg backend, no timestamps so files are reproducible)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from neuroneval.io import atomic_path


def plot_table4(table: pd.DataFrame, settings: Sequence[str], path: str | Path) -> None:
    """Heat map of meta-AUPRC (metrics × settings), metrics sorted by mean rank, mean AUPRC annotated."""
    ordered = table.sort_values(["mean_rank", "metric"], kind="stable")
    values = ordered[[*list(settings), "mean_auprc"]].to_numpy(dtype=float)
    labels = [*list(settings), "mean"]
    height = 0.32 * len(ordered) + 1.6
    width = 1.2 * len(labels) + 3.0
    figure, axes = plt.subplots(figsize=(width, height))
    image = axes.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    axes.set_xticks(np.arange(len(labels)), labels, rotation=30, ha="right", fontsize=8)
    axes.set_yticks(np.arange(len(ordered)),
                    [f"{metric} (rank {rank:.1f})" for metric, rank in zip(ordered["metric"], ordered["mean_rank"],
                                                                           strict=True)], fontsize=8)
    for row in range(values.shape[0]):
        for column in range(values.shape[1]):
            value = values[row, column]
            axes.text(column, row, f"{value:.2f}", ha="center", va="center", fontsize=7,
                      color="white" if value < 0.5 else "black")
    axes.set_title("Meta-AUPRC on units with known concepts (paper 000, Table 4)", fontsize=9)
    figure.colorbar(image, ax=axes, fraction=0.04, label="meta-AUPRC")
    figure.tight_layout()
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)


def plot_ceiling(ceiling: pd.DataFrame, meta: pd.DataFrame, settings: Sequence[str], path: str | Path) -> None:
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
    figure, axes = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 1.8))
    positions = np.arange(len(rows))[::-1]
    for y, (_, floor, best, top) in zip(positions, rows, strict=True):
        axes.plot([floor, top["meta_auprc"]], [y, y], color="0.85", linewidth=6, solid_capstyle="round", zorder=1)
        axes.scatter(floor, y, marker="|", s=160, color="0.35", zorder=3,
                     label="floor (random units)" if y == 0 else None)
        interval = [[best["test_auprc"] - best["ci_low"]], [best["ci_high"] - best["test_auprc"]]]
        axes.errorbar(best["test_auprc"], y, xerr=interval, fmt="o", color="#0072B2", markersize=6, capsize=3, zorder=4,
                      label="best metric, model units (95 % CI)" if y == 0 else None)
        axes.scatter(top["meta_auprc"], y, marker="D", s=40, color="black", zorder=5,
                     label="ceiling: best metric, ideal units" if y == 0 else None)
        axes.text(1.02, y, f"{best['metric']} {best['test_auprc']:.2f} / {top['meta_auprc']:.2f}", va="center",
                  fontsize=7, transform=axes.get_yaxis_transform())
    axes.axvline(0.9, color="0.6", linestyle=":", linewidth=1)
    axes.set_yticks(positions, [row[0] for row in rows], fontsize=8)
    axes.set_xlim(0.0, 1.0)
    axes.set_xlabel("meta-AUPRC (test units)", fontsize=8)
    axes.set_title("Can each setting rank metrics? Floor, models and ceiling", fontsize=9)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3, fontsize=7, frameon=False)
    figure.tight_layout()
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)


def plot_explain_table(table: pd.DataFrame, path: str | Path, *, title: str) -> None:
    """One panel per (setting, unit group) of an explanation-methods table (``results/explain/table1.csv``):
    each method's mean simulation correlation ± standard error as a bar, the random floor and the truth ceiling
    as dashed lines; text methods (no simulation) are left out."""
    scored = table[table["simulation_correlation_mean"].notna()]
    panels = list(scored.groupby(["setting", "group"], sort=False))
    columns = min(3, len(panels))
    rows = -(-len(panels) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), squeeze=False)
    for axis, ((setting, group), frame) in zip(axes.ravel(), panels, strict=False):
        methods = frame[~frame["method"].isin(("random", "random_l1", "truth"))]
        positions = np.arange(len(methods))
        axis.barh(positions, methods["simulation_correlation_mean"], xerr=methods["simulation_correlation_se"],
                  color="tab:blue", alpha=0.8, error_kw={"elinewidth": 0.8})
        axis.set_yticks(positions, methods["method"], fontsize=7)
        axis.invert_yaxis()
        for value, colour, label in ((frame["floor"].iloc[0], "tab:red", "random"),
                                     (frame["ceiling"].iloc[0], "tab:green", "truth")):
            if np.isfinite(value):
                axis.axvline(value, color=colour, linestyle="--", linewidth=1.0, label=label)
        axis.set_xlim(min(0.0, float(np.nanmin(frame["simulation_correlation_mean"]))) - 0.02, 1.0)
        axis.set_title(f"{setting} / {group}", fontsize=8)
        axis.tick_params(axis="x", labelsize=7)
        axis.legend(fontsize=6, loc="lower right")
    for axis in axes.ravel()[len(panels):]:
        axis.set_visible(False)
    figure.suptitle(title, fontsize=9)
    figure.supxlabel("simulation correlation (mean ± s.e. over units)", fontsize=8)
    figure.tight_layout()
    with atomic_path(path) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=120, metadata={"Software": None})
    plt.close(figure)
