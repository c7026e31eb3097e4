"""Figures of the CoSy sanity checks (paper 002 Figs. 2 and 3, activation histograms)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from neuroneval.figures.style import (
    FAIL_COLOUR,
    FULL_WIDTH,
    LIGHT_GREY,
    PASS_COLOUR,
    empty_figure,
    savefig,
    series_style,
    styled,
    subplots,
)


def _empty(path: str | Path, message: str) -> Path:
    """A placeholder figure saying why there is nothing to draw (e.g. no vision-world setting)."""
    return empty_figure(path, message)


@styled
def plot_templates(templates: pd.DataFrame, path: str | Path) -> Path:
    """Fig. 2 of paper 002: mean cosine similarity of synthetic to natural images per template and generator."""
    if templates.empty:
        return _empty(path, "template study not run (it needs a vision-world setting)")
    summary = templates.groupby(["generator", "template"], sort=False)["cosine_to_natural"].agg(["mean", "std"])
    generators = list(dict.fromkeys(templates["generator"]))
    names = list(dict.fromkeys(templates["template"]))
    figure, axes = subplots(width=min(FULL_WIDTH, 1.5 * len(names) + 4.0), height=4.4)
    height = 0.8 / max(len(generators), 1)
    for offset, generator in enumerate(generators):
        means = [summary.loc[(generator, name), "mean"] if (generator, name) in summary.index else np.nan
                 for name in names]
        spread = [summary.loc[(generator, name), "std"] if (generator, name) in summary.index else np.nan
                  for name in names]
        axes.barh(np.arange(len(names)) + offset * height, means, height, xerr=spread, capsize=3,
                  color=series_style(offset).color, label=generator, error_kw={"elinewidth": 0.9})
    patterns = dict(zip(templates["template"], templates["prompt_pattern"], strict=False))
    axes.set_yticks(np.arange(len(names)) + height * (len(generators) - 1) / 2,
                    [f"{index + 1}. {patterns[name]}" for index, name in enumerate(names)], fontsize=9)
    axes.invert_yaxis()
    axes.grid(axis="y", visible=False)
    axes.set_xlabel("cosine similarity to natural images of the class (mean ± s.d.)")
    axes.set_title("Paper 002 Fig. 2: prompt templates, synthetic vs natural images", loc="left")
    if len(generators) > 1:
        figure.legend(*axes.get_legend_handles_labels(), title="generator", loc="outside right upper")
    else:
        axes.text(0.99, 0.01, f"generator: {generators[0]}", transform=axes.transAxes, ha="right", va="bottom",
                  fontsize=9)
    return savefig(figure, path)


@styled
def plot_natural(natural: pd.DataFrame, path: str | Path) -> Path:
    """Fig. 3 of paper 002: MAD of natural vs synthetic images of a unit's class, per generator and setting."""
    if natural.empty:
        return _empty(path, "no unit has natural images of its class in the control set")
    groups = list(natural.groupby(["setting", "generator"], sort=False))
    columns = min(4, max(len(groups), 1))
    rows = -(-max(len(groups), 1) // columns)
    figure, axes = subplots(rows, columns, width=min(FULL_WIDTH, 2.6 * columns + 0.6), height=3.3 * rows + 0.6,
                            squeeze=False, sharey=True)
    for axis, ((setting, generator), frame) in zip(axes.ravel(), groups, strict=False):
        parts = axis.boxplot([frame["mad_natural"].dropna(), frame["mad_synthetic"].dropna()], patch_artist=True,
                             widths=0.6, medianprops={"color": "black"})
        for box, colour in zip(parts["boxes"], (PASS_COLOUR, series_style(1).color), strict=True):
            box.set_facecolor(colour)
            box.set_alpha(0.55)
        axis.set_xticks([1, 2], ["natural", "synthetic"])
        axis.axhline(0.0, color=LIGHT_GREY, linewidth=0.8)
        axis.set_title(f"{setting}\n{generator}", fontsize=9, loc="left")
    for axis in axes.ravel()[len(groups):]:
        axis.set_visible(False)
    for axis in axes[:, 0]:
        axis.set_ylabel("MAD vs control (Eq. 4)")
    figure.suptitle("Paper 002 Fig. 3: same class, natural vs synthetic images", x=0.01, ha="left")
    return savefig(figure, path)


@styled
def plot_distributions(samples: pd.DataFrame, path: str | Path) -> Path:
    """Activation histograms of sample units: control vs synthetic images of the true and a random explanation."""
    if samples.empty:
        return _empty(path, "no sample units (cosy.distributions.n_units = 0)")
    panels = list(samples.groupby(["generator", "setting", "unit"], sort=False))
    columns = min(4, max(len(panels), 1))
    rows = int(np.ceil(max(len(panels), 1) / columns))
    figure, axes = subplots(rows, columns, width=FULL_WIDTH + 1.0, height=2.7 * rows + 1.0, squeeze=False)
    colours = {"control": LIGHT_GREY, "true": PASS_COLOUR, "random": FAIL_COLOUR}
    labels = {"control": "control images", "true": "synthetic: true explanation",
              "random": "synthetic: random explanation"}
    for axis, ((generator, setting, unit), frame) in zip(axes.ravel(), panels, strict=False):
        values = frame["activation"].to_numpy(dtype=float)
        bins = np.linspace(values.min(), values.max(), 30) if values.max() > values.min() else 10
        for group, colour in colours.items():
            part = frame.loc[frame["group"] == group, "activation"]
            if len(part):
                axis.hist(part, bins=bins, density=True, alpha=0.6, color=colour, label=labels[group],
                          histtype="stepfilled", edgecolor=colour)
        concept = frame.loc[frame["group"] == "true", "concept"]
        axis.set_title(f"{setting} unit {unit} ({generator})\n{concept.iloc[0] if len(concept) else ''}",
                       fontsize=8.5, loc="left", fontweight="normal")
        axis.tick_params(labelsize=8)
        axis.set_yticks([])
    for axis in axes.ravel()[len(panels):]:
        axis.axis("off")
    handles, names = axes[0, 0].get_legend_handles_labels()
    figure.legend(handles, names, loc="outside upper right", ncol=3)
    figure.suptitle("Activations: control vs synthetic images", x=0.01, ha="left")
    figure.supxlabel("activation (density per group)", fontsize=9)
    return savefig(figure, path)
