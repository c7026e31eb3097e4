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
