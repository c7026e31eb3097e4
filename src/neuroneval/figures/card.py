"""The figure of a metric's sanity card (``neuroneval sanity --metric``): your metric beside the built-ins."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuroneval.figures.style import FULL_WIDTH, GREY, LIGHT_GREY, PALETTE, savefig, shade_passing_x, styled, subplots
from neuroneval.sanity.card import SanityCard

_COLUMNS = (("experimental_missing", "experimental, missing labels"), ("theoretical_missing",
            "theoretical, missing labels"), ("experimental_extra", "experimental, extra labels"),
            ("theoretical_extra", "theoretical, extra labels"))


@styled
def plot_sanity_card(card: SanityCard, *, threshold: float, path: str | Path) -> Path:
    """Four panels of Decrease Acc (Table 3's columns), one bar per metric with yours highlighted and the passing
    region (> ``threshold``) shaded, and a fifth of meta-AUPRC per setting with its interval beside the best
    built-in metric's."""
    figure, grid = subplots(1, 5, width=FULL_WIDTH * 1.6, height=0.4 * len(card.verdicts) + 2.2)
    names = card.verdicts["metric"].tolist()
    positions = np.arange(len(names))
    colours = [PALETTE["vermillion"] if name == card.metric else PALETTE["blue"] for name in names]
    for axes, (column, title) in zip(grid[:4], _COLUMNS, strict=True):
        values = card.verdicts[column].to_numpy(dtype=float)
        axes.set_xlim(0.0, 1.1)
        shade_passing_x(axes, threshold, 1.1, "passes")
        axes.barh(positions, np.nan_to_num(values), color=colours)
        axes.set_yticks(positions, names if axes is grid[0] else [""] * len(names))
        axes.invert_yaxis()
        axes.set_title(title, loc="left", fontsize=9)
        axes.set_xlabel("Decrease Acc")
    meta_axes = grid[4]
    if len(card.meta):
        settings = card.meta["setting"].tolist()
        y = np.arange(len(settings))
        own = card.meta["test_auprc"].to_numpy(dtype=float)
        errors = np.vstack([own - card.meta["ci_low"].to_numpy(dtype=float),
                            card.meta["ci_high"].to_numpy(dtype=float) - own])
        meta_axes.errorbar(own, y, xerr=np.nan_to_num(np.abs(errors)), fmt="o", color=PALETTE["vermillion"],
                           label=card.metric)
        meta_axes.plot(card.meta["best_builtin_auprc"].to_numpy(dtype=float), y, "s", color=GREY,
                       label="best built-in")
        meta_axes.plot(card.meta["chance_auprc"].to_numpy(dtype=float), y, "|", color=LIGHT_GREY, markersize=12,
                       label="chance")
        meta_axes.set_yticks(y, settings)
        meta_axes.invert_yaxis()
        meta_axes.legend(fontsize=7, loc="lower left")
    meta_axes.set_xlim(0.0, 1.02)
    meta_axes.set_xlabel("meta-AUPRC (test units)")
    meta_axes.set_title("meta-AUPRC per setting", loc="left", fontsize=9)
    verdict = "passes" if card.passed else "fails"
    figure.suptitle(f"Sanity card of {card.metric}: {verdict} the Missing/Extra Labels tests", x=0.01, ha="left")
    return savefig(figure, path)
