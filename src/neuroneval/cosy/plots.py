"""Figures of the CoSy sanity checks (matplotlib, Agg backend, no timestamps so files are reproducible)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd


def _save(figure: plt.Figure, path: str | Path) -> Path:
    from neuroneval.io import atomic_path

    target = Path(path)
    with atomic_path(target) as tmp_path:
        figure.savefig(tmp_path, format="png", dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(figure)
    return target


def _empty(path: str | Path, message: str) -> Path:
    """A placeholder figure saying why there is nothing to draw (e.g. no vision-world setting)."""
    figure, axes = plt.subplots(figsize=(5, 1.5))
    axes.axis("off")
    axes.text(0.5, 0.5, message, ha="center", va="center", fontsize=9)
    return _save(figure, path)


def plot_templates(templates: pd.DataFrame, path: str | Path) -> Path:
    """Fig. 2 of paper 002: mean cosine similarity of synthetic to natural images per template and generator."""
    if templates.empty:
        return _empty(path, "template study not run (it needs a vision-world setting)")
    summary = templates.groupby(["generator", "template"], sort=False)["cosine_to_natural"].agg(["mean", "std"])
    generators = list(dict.fromkeys(templates["generator"]))
    names = list(dict.fromkeys(templates["template"]))
    figure, axes = plt.subplots(figsize=(1.4 * len(names) + 2.5, 3.4))
    width = 0.8 / max(len(generators), 1)
    for offset, generator in enumerate(generators):
        means = [summary.loc[(generator, name), "mean"] if (generator, name) in summary.index else np.nan
                 for name in names]
        spread = [summary.loc[(generator, name), "std"] if (generator, name) in summary.index else np.nan
                  for name in names]
        axes.bar(np.arange(len(names)) + offset * width, means, width, yerr=spread, capsize=3, label=generator)
    patterns = dict(zip(templates["template"], templates["prompt_pattern"], strict=False))
    axes.set_xticks(np.arange(len(names)) + width * (len(generators) - 1) / 2,
                    [f"{index + 1}. {patterns[name]}" for index, name in enumerate(names)], rotation=20, ha="right",
                    fontsize=7)
    axes.set_ylabel("cosine similarity to natural images")
    axes.set_title("Prompt templates: synthetic vs natural images of the class (002 Fig. 2)", fontsize=9)
    axes.legend(fontsize=7)
    return _save(figure, path)


def plot_natural(natural: pd.DataFrame, path: str | Path) -> Path:
    """Fig. 3 of paper 002: MAD of natural vs synthetic images of a unit's class, per generator and setting."""
    if natural.empty:
        return _empty(path, "no unit has natural images of its class in the control set")
    groups = list(natural.groupby(["setting", "generator"], sort=False))
    figure, axes = plt.subplots(1, max(len(groups), 1), figsize=(3.2 * max(len(groups), 1), 3.2), squeeze=False)
    for axis, ((setting, generator), frame) in zip(axes[0], groups, strict=False):
        axis.boxplot([frame["mad_natural"].dropna(), frame["mad_synthetic"].dropna()])
        axis.set_xticks([1, 2], ["natural", "synthetic"])
        axis.set_title(f"{setting}\n{generator}", fontsize=8)
    axes[0, 0].set_ylabel("MAD vs control (Eq. 4)")
    figure.suptitle("Same class, natural vs synthetic images (002 Fig. 3)", fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.93))
    return _save(figure, path)


def plot_distributions(samples: pd.DataFrame, path: str | Path) -> Path:
    """Activation histograms of sample units: control vs synthetic images of the true and a random explanation."""
    if samples.empty:
        return _empty(path, "no sample units (cosy.distributions.n_units = 0)")
    panels = list(samples.groupby(["generator", "setting", "unit"], sort=False))
    columns = min(4, max(len(panels), 1))
    rows = int(np.ceil(max(len(panels), 1) / columns))
    figure, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.9 * rows), squeeze=False)
    for axis, ((generator, setting, unit), frame) in zip(axes.ravel(), panels, strict=False):
        values = frame["activation"].to_numpy(dtype=float)
        bins = np.linspace(values.min(), values.max(), 30) if values.max() > values.min() else 10
        for group, colour in (("control", "0.6"), ("true", "tab:green"), ("random", "tab:red")):
            part = frame.loc[frame["group"] == group, "activation"]
            if len(part):
                axis.hist(part, bins=bins, density=True, alpha=0.55, color=colour, label=group)
        concept = frame.loc[frame["group"] == "true", "concept"]
        axis.set_title(f"{generator} {setting} unit {unit}\n{concept.iloc[0] if len(concept) else ''}", fontsize=7)
        axis.set_xlabel("activation", fontsize=7)
        axis.tick_params(labelsize=6)
        axis.legend(fontsize=6)
    for axis in axes.ravel()[len(panels):]:
        axis.axis("off")
    figure.suptitle("Activations: control vs synthetic images (true and random explanation)", fontsize=9)
    figure.tight_layout(rect=(0, 0, 1, 0.95))
    return _save(figure, path)
