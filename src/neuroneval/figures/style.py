"""The project's one figure style: palette, per-metric line styles, sizes, labels and the one ``savefig``.

Every figure of the workflow is drawn inside :func:`styled` (or a function decorated with it) and written with
:func:`savefig`, so they share:

* a colour-blind-safe palette (Okabe & Ito 2008, yellow left out: it vanishes on white) — :data:`PALETTE`;
* one look per metric across all figures (:func:`metric_style`): the metric's *family* (its registry ``kind``:
  binary, rank, continuous, top-and-random sample, combination) sets the line style, the metric's place in the
  family the colour and the marker, so the 18 metrics of paper 000 get 18 distinct (colour, marker, line)
  triples and a family reads as one dash pattern;
* sizes that read at 1280 px wide (:data:`DPI` × :data:`FULL_WIDTH` = 1280 px, 10 pt text ≈ 18 px);
* direct labels beside line ends (:func:`label_lines`, spread so that they never overlap) or a legend inside the
  figure, a shaded and labelled passing region (:func:`shade_passing`), reference lines that carry their own
  label (:func:`reference_line`);
* atomic, byte-reproducible files: :func:`savefig` writes a temporary sibling and renames it, with no timestamp,
  software string or random id in the file (PNG, SVG or PDF by suffix).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

#: Okabe–Ito colours (without yellow), in the order they are handed out.
PALETTE: dict[str, str] = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "black": "#000000",
}
COLOURS: tuple[str, ...] = tuple(PALETTE.values())
#: Neutral greys for floors, controls and context.
GREY, LIGHT_GREY = "#6E6E6E", "#BDBDBD"
#: The passing region and the failing band.
PASS_COLOUR, FAIL_COLOUR = "#009E73", "#D55E00"
#: Sequential and diverging colour maps (perceptually uniform, colour-blind safe).
SEQUENTIAL, DIVERGING = "viridis", "RdBu_r"
MARKERS: tuple[str, ...] = ("o", "s", "^", "D", "v", "P", "X", "h")

#: Metric families: registry ``kind`` → (label, dash pattern, marker offset).
FAMILIES: dict[str, tuple[str, Any, int]] = {
    "binary": ("binary (top-α confusion counts)", "-", 0),
    "rank": ("rank-based", (0, (6, 2)), 3),
    "continuous": ("continuous", (0, (6, 2, 1.5, 2)), 5),
    "sampled": ("top-and-random sample", (0, (1.5, 1.5)), 7),
    "combination": ("harmonic-mean combination", (0, (3, 1.5, 1.5, 1.5, 1.5, 1.5)), 1),
    "other": ("other", "-", 2),
}

DPI = 128
#: Width in inches of a full-width figure (1280 px at :data:`DPI`) and of a half-width one.
FULL_WIDTH, HALF_WIDTH = 10.0, 6.4

RC: dict[str, Any] = {
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": True,
    "legend.framealpha": 0.92,
    "legend.edgecolor": "#DDDDDD",
    "figure.titlesize": 12,
    "figure.titleweight": "bold",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#E6E6E6",
    "grid.linewidth": 0.7,
    "axes.axisbelow": True,
    "axes.prop_cycle": matplotlib.cycler(color=list(COLOURS)),
    "lines.linewidth": 1.8,
    "lines.markersize": 6,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.constrained_layout.use": True,
    "svg.hashsalt": "neuroneval",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "image.cmap": SEQUENTIAL,
}

F = TypeVar("F", bound=Callable[..., Any])


@contextmanager
def style() -> Iterator[None]:
    """The project's rcParams, for the duration of the block."""
    with matplotlib.rc_context(RC):
        yield


def styled(function: F) -> F:
    """Run ``function`` (a plotting function) inside :func:`style`."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with style():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@dataclass(frozen=True)
class LineStyle:
    """How one series is drawn: pass ``**style.kwargs`` to ``Axes.plot``."""

    color: str
    marker: str
    linestyle: Any
    family: str

    @property
    def kwargs(self) -> dict[str, Any]:
        return {"color": self.color, "marker": self.marker, "linestyle": self.linestyle}


def metric_family(metric: str) -> str:
    """The metric's family (registry ``kind``), ``"other"`` for names the registry does not know."""
    from neuroneval.metrics.registry import get_spec

    try:
        return get_spec(metric).kind
    except (KeyError, ValueError):
        return "other"


def _family_members(family: str) -> list[str]:
    from neuroneval.metrics.registry import METRICS

    return [name for name, spec in METRICS.items() if spec.kind == family]


def metric_style(metric: str, *, others: Sequence[str] = ()) -> LineStyle:
    """The one look of ``metric`` in every figure: family → dash pattern, place in the family → colour and marker.

    Registered metrics get fixed (colour, marker) pairs, distinct over all 18; other names (combinations, custom
    metrics) are numbered by their place in ``others`` (or the family's registered members plus themselves).
    """
    family = metric_family(metric)
    _, dashes, offset = FAMILIES.get(family, FAMILIES["other"])
    members = _family_members(family) if family in ("binary", "rank", "continuous", "sampled") else list(others)
    if metric not in members:
        members = [*members, metric]
    index = members.index(metric)
    return LineStyle(color=COLOURS[index % len(COLOURS)], marker=MARKERS[(index + offset) % len(MARKERS)],
                     linestyle=dashes, family=family)


def series_style(index: int) -> LineStyle:
    """Style of the ``index``-th series of a figure that does not plot metrics (methods, generators…)."""
    return LineStyle(color=COLOURS[index % len(COLOURS)], marker=MARKERS[index % len(MARKERS)],
                     linestyle="-" if index < len(COLOURS) else (0, (6, 2)), family="other")


def order_by_family(metrics: Sequence[str]) -> list[str]:
    """``metrics`` grouped by family (binary, rank, continuous, sampled, combination, other), stable within."""
    ranks = {family: position for position, family in enumerate(FAMILIES)}
    return sorted(metrics, key=lambda metric: ranks.get(metric_family(metric), len(ranks)))


def family_key(families: Sequence[str]) -> str:
    """One line that says which dash pattern is which family, e.g. for a caption: ``— binary  – – rank …``."""
    glyphs = {"binary": "——", "rank": "– –", "continuous": "–·–", "sampled": "···", "combination": "–··",
              "other": "——"}
    return "   ".join(f"{glyphs[family]} {FAMILIES[family][0]}" for family in FAMILIES if family in families)


def subplots(nrows: int = 1, ncols: int = 1, *, width: float = FULL_WIDTH, height: float = 5.0,
             **kwargs: Any) -> tuple[plt.Figure, Any]:
    """``plt.subplots`` at the style's size (call inside :func:`style`); constrained layout."""
    return plt.subplots(nrows, ncols, figsize=(width, height), **kwargs)


def savefig(figure: plt.Figure, path: str | Path, *, dpi: int = DPI) -> Path:
    """Write ``figure`` to ``path`` atomically (temporary sibling, then rename) and close it.

    The format follows the suffix (``.png`` default, ``.svg``, ``.pdf``); the file carries no date, software
    string or random id, so the same figure gives the same bytes on every run.
    """
    from neuroneval.io import atomic_path

    target = Path(path)
    kind = target.suffix.lstrip(".").lower() or "png"
    metadata = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None}}.get(kind)
    with matplotlib.rc_context({"svg.hashsalt": "neuroneval"}), atomic_path(target) as tmp_path:
        figure.savefig(tmp_path, format=kind, dpi=dpi, metadata=metadata)
    plt.close(figure)
    return target


def empty_figure(path: str | Path, message: str) -> Path:
    """A small figure that says why there is nothing to draw."""
    with style():
        figure, axes = subplots(width=HALF_WIDTH, height=1.6)
        axes.axis("off")
        axes.text(0.5, 0.5, message, ha="center", va="center", fontsize=11, color=GREY, wrap=True)
        return savefig(figure, path)


def shade_passing(axes: plt.Axes, low: float, high: float, label: str | None, *, where: str = "left",
                  colour: str = PASS_COLOUR, alpha: float = 0.10) -> matplotlib.patches.Patch:
    """Shade ``low ≤ y ≤ high``; write ``label`` inside it (at the left or right edge) unless it is None.

    Returns a patch for a legend entry (when the label does not fit inside the band)."""
    axes.axhspan(low, high, color=colour, alpha=alpha, linewidth=0, zorder=0)
    if label is not None:
        x = 0.01 if where == "left" else 0.99
        y_low, y_high = sorted((max(low, axes.get_ylim()[0]), min(high, axes.get_ylim()[1])))
        axes.text(x, _middle(axes, y_low, y_high), label, transform=_x_axes_y_data(axes), ha=where, va="center",
                  fontsize=9, color=_darker(colour), zorder=5,
                  bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none", "alpha": 0.75})
    return region_patch(colour, alpha, label or "")


def region_patch(colour: str, alpha: float, label: str) -> matplotlib.patches.Patch:
    """A legend handle for a shaded region."""
    from matplotlib.patches import Patch

    return Patch(facecolor=colour, alpha=min(1.0, alpha * 2.5), edgecolor="none", label=label)


def shade_passing_x(axes: plt.Axes, low: float, high: float, label: str, *, colour: str = PASS_COLOUR,
                    alpha: float = 0.10) -> None:
    """Shade ``low ≤ x ≤ high`` and write ``label`` at its top."""
    axes.axvspan(low, high, color=colour, alpha=alpha, linewidth=0, zorder=0)
    x_low, x_high = axes.get_xlim()
    centre = (max(low, x_low) + min(high, x_high)) / 2
    axes.text(centre, 0.99, label, transform=axes.get_xaxis_transform(), ha="center", va="top", fontsize=8,
              color=_darker(colour), zorder=5)


def reference_line(axes: plt.Axes, value: float, label: str, *, axis: str = "y", colour: str = GREY,
                   linestyle: Any = (0, (4, 3)), where: float = 0.99, va: str = "bottom") -> None:
    """A dashed reference line that carries its own label (no unattributed lines)."""
    if axis == "y":
        axes.axhline(value, color=colour, linestyle=linestyle, linewidth=1.1, zorder=1)
        axes.text(where, value, f" {label} ", transform=axes.get_yaxis_transform(), ha="right" if where > 0.5
                  else "left", va=va, fontsize=8, color=colour, zorder=5)
    else:
        axes.axvline(value, color=colour, linestyle=linestyle, linewidth=1.1, zorder=1)
        axes.text(value, where, f" {label} ", transform=axes.get_xaxis_transform(), ha="left", va="top",
                  fontsize=8, color=colour, rotation=90 if va == "rotate" else 0, zorder=5)


def _x_axes_y_data(axes: plt.Axes) -> Any:
    from matplotlib.transforms import blended_transform_factory

    return blended_transform_factory(axes.transAxes, axes.transData)


def _middle(axes: plt.Axes, low: float, high: float) -> float:
    """Midpoint of ``[low, high]`` in the axis' scale (so log/symlog bands get their label in the middle)."""
    scale = axes.yaxis.get_transform()
    mid = scale.transform(np.array([[low], [high]])).mean()
    return float(scale.inverted().transform(np.array([[mid]]))[0, 0])


def _darker(colour: str, factor: float = 0.75) -> tuple[float, float, float]:
    red, green, blue = matplotlib.colors.to_rgb(colour)
    return (red * factor, green * factor, blue * factor)


def spread(positions: Sequence[float], gap: float, low: float = -np.inf, high: float = np.inf) -> np.ndarray:
    """Move ``positions`` as little as possible so that neighbours are at least ``gap`` apart (within
    ``[low, high]`` where possible); the order of the positions is kept."""
    values = np.asarray(positions, dtype=float)
    order = np.argsort(values, kind="stable")
    placed = values[order].copy()
    # clusters of labels that would touch are centred on their mean, then merged with neighbours that touch
    groups = [[value] for value in placed]
    starts = list(placed)
    merged = True
    while merged:
        merged = False
        centres = [float(np.mean(group)) for group in groups]
        starts = [centre - gap * (len(group) - 1) / 2 for centre, group in zip(centres, groups, strict=True)]
        for index in range(len(groups) - 1):
            end = starts[index] + gap * (len(groups[index]) - 1)
            if starts[index + 1] - end < gap - 1e-12:
                groups[index] = groups[index] + groups.pop(index + 1)
                merged = True
                break
    result = np.concatenate([start + gap * np.arange(len(group)) for start, group in zip(starts, groups,
                                                                                          strict=True)])
    span = gap * (len(result) - 1)
    if np.isfinite(low) and np.isfinite(high) and span <= high - low:
        shift_up = max(0.0, low - result[0])
        shift_down = max(0.0, result[-1] - high)
        result = result + shift_up - shift_down
    out = np.empty_like(result)
    out[order] = result
    return out


def label_lines(axes: plt.Axes, entries: Sequence[tuple[float, float, str, Any]], *, fontsize: float = 9,
                side: str = "right") -> None:
    """Direct labels: ``(x, y, text, colour)`` per line end, written beside the axes (right or left), moved
    apart vertically so that none overlap, each tied to its point by a thin leader line.

    Call after the axes' limits and scales are final.
    """
    if not entries:
        return
    figure = axes.figure
    figure.canvas.draw()  # settle the layout so that the axes' height in points is known
    to_axes = axes.transScale + axes.transLimits
    fractions = np.array([to_axes.transform((x, y))[1] for x, y, _, _ in entries])
    height_pt = axes.get_window_extent().height * 72.0 / figure.dpi
    lines = np.array([text.count("\n") + 1 for _, _, text, _ in entries])
    gap = 1.3 * fontsize * float(lines.max()) / max(height_pt, 1.0)
    placed = spread(fractions, gap, 0.0, 1.0)
    x_text = 1.02 if side == "right" else -0.02
    width_pt = axes.get_window_extent().width * 72.0 / figure.dpi
    for (x, y, text, colour), y_text in zip(entries, placed, strict=True):
        # a leader only where the label sits away from its point: a leader shorter than its end shrinkage (or one
        # that ends inside the label's box) leaves matplotlib nothing to draw and fails at save time
        point = to_axes.transform((x, y))
        distance_pt = float(np.hypot((x_text - point[0]) * width_pt, (y_text - point[1]) * height_pt))
        outside = point[0] < x_text if side == "right" else point[0] > x_text
        leader = {"arrowstyle": "-", "color": colour, "linewidth": 0.6, "alpha": 0.6, "shrinkA": 1,
                  "shrinkB": 3} if outside and distance_pt > 2 * fontsize else None
        axes.annotate(text, xy=(x, y), xycoords="data", xytext=(x_text, y_text), textcoords="axes fraction",
                      ha="left" if side == "right" else "right", va="center", fontsize=fontsize, color=colour,
                      annotation_clip=False, arrowprops=leader)


def plain_log_ticks(axes: plt.Axes, which: str = "both") -> None:
    """Log axes labelled ``0.02, 0.05, 0.1`` instead of ``2×10⁻²`` (major ticks; minor ones at 2 and 5)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in ((axes.xaxis, axes.yaxis) if which == "both" else (axes.xaxis,) if which == "x" else (axes.yaxis,)):
        if axis.get_scale() != "log":
            continue
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())


def coincident_groups(series: dict[str, np.ndarray], *, rtol: float = 0.01, atol: float = 1e-4) -> list[list[str]]:
    """Names whose series lie on top of each other (every point within ``atol + rtol·|value|``), in order."""
    groups: list[list[str]] = []
    for name, values in series.items():
        for group in groups:
            other = series[group[0]]
            if other.shape == values.shape and np.all(
                    (np.isnan(other) & np.isnan(values))
                    | (np.abs(other - values) <= atol + rtol * np.maximum(np.abs(other), np.abs(values)))):
                group.append(name)
                break
        else:
            groups.append([name])
    return groups
