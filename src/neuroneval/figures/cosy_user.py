"""The figure of ``neuroneval cosy``: each unit's CoSy AUC under its explanation and under a random one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import FULL_WIDTH, LIGHT_GREY, empty_figure, savefig, series_style, styled, subplots


@styled
def plot_user_scores(scores: pd.DataFrame, path: str | Path) -> Path:
    """One row per unit: the AUC (paper 002 Eq. 3) of each method of ``scores`` (``true``, ``random``), a dashed
    line at chance (0.5: the generated images activate the unit no more than the control inputs do).

    ``scores`` holds the rows of :data:`neuroneval.cosy.user.USER_SCORE_COLUMNS`.
    """
    if scores.empty:
        return empty_figure(path, "no explanation scored")
    units = list(dict.fromkeys(scores["unit"].astype(str)))
    methods = list(dict.fromkeys(scores["method"]))
    figure, axes = subplots(width=min(FULL_WIDTH, 8.0), height=min(1.0 + 0.28 * len(units), 12.0))
    axes.axvline(0.5, color=LIGHT_GREY, linestyle="--", linewidth=1.0, label="chance")
    position = {unit: row for row, unit in enumerate(units)}
    for offset, method in enumerate(methods):
        rows = scores[scores["method"] == method]
        style = series_style(offset)
        axes.scatter(rows["auc"], [position[str(unit)] for unit in rows["unit"]], color=style.color,
                     marker=style.marker, label=f"{method} (mean {rows['auc'].mean():.2f})", zorder=3)
    axes.set_yticks(np.arange(len(units)), units, fontsize=8 if len(units) > 20 else 9)
    axes.invert_yaxis()
    axes.set_xlim(-0.02, 1.02)
    axes.set_xlabel("CoSy AUC: P(unit fires more on a generated image than on a control input)")
    axes.set_title("CoSy (paper 002): your explanations vs random ones", loc="left")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return savefig(figure, path)
