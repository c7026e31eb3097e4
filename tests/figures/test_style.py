"""The figure style: one distinct look per metric, grouped by family; labels that never overlap; byte-identical,
atomically written files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neuroneval.figures.style import (
    FAMILIES,
    coincident_groups,
    metric_family,
    metric_style,
    order_by_family,
    savefig,
    spread,
    style,
    subplots,
)
from neuroneval.metrics import METRICS


def test_every_metric_has_its_own_look_and_its_family_shares_a_dash_pattern() -> None:
    looks = {metric: metric_style(metric) for metric in METRICS}
    assert len({(look.color, look.marker) for look in looks.values()}) == len(METRICS) == 18
    for metric, look in looks.items():
        assert look.linestyle == FAMILIES[METRICS[metric].kind][1]
    assert metric_family("hmean:auc+recall") == "combination" and metric_family("nonsense") == "other"
    ordered = order_by_family(["cosine", "auc", "recall", "spearman_tr", "precision"])
    assert ordered == ["recall", "precision", "auc", "cosine", "spearman_tr"]


@pytest.mark.parametrize("positions", [[0.5, 0.5, 0.5], [0.0, 0.01, 0.02, 0.9], [0.95, 0.99, 1.0], [0.3]])
def test_spread_keeps_order_and_gap(positions: list[float]) -> None:
    placed = spread(positions, 0.05, 0.0, 1.0)
    order = np.argsort(positions, kind="stable")
    assert np.all(np.diff(placed[order]) >= 0.05 - 1e-9)
    assert placed.min() >= -1e-9 and placed.max() <= 1.0 + 1e-9


def test_coincident_series_are_grouped() -> None:
    series = {"a": np.array([-0.5, -0.2]), "b": np.array([-0.5001, -0.2]), "c": np.array([-0.5, -0.1]),
              "d": np.array([np.nan, -0.1])}
    assert coincident_groups(series) == [["a", "b"], ["c"], ["d"]]


def _draw(path: Path) -> Path:
    with style():
        figure, axes = subplots(width=4, height=3)
        axes.plot([1, 2, 3], [3, 1, 2], **metric_style("auprc").kwargs)
        axes.set_title("a title")
        return savefig(figure, path)


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_savefig_is_byte_reproducible_and_atomic(tmp_path: Path, suffix: str) -> None:
    first = _draw(tmp_path / f"one{suffix}").read_bytes()
    second = _draw(tmp_path / f"two{suffix}").read_bytes()
    assert first == second and len(first) > 1000
    assert sorted(path.name for path in tmp_path.iterdir()) == [f"one{suffix}", f"two{suffix}"]  # no temp left
    if suffix == ".png":
        assert b"Software" not in first and b"tIME" not in first


@pytest.mark.parametrize("x", [9.95, 10.0, 10.6])
def test_label_beside_its_point_draws_without_a_leader(tmp_path: Path, x: float) -> None:
    """A line ending at (or past) the right edge, level with its label: matplotlib cannot draw a leader shorter
    than its end shrinkage (StopIteration at save time), so none is drawn (seen with the tiny rarity study)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from neuroneval.figures.style import label_lines

    figure, axes = plt.subplots(figsize=(6, 3))
    axes.plot([1.0, 10.0], [1.0, 2.0])
    axes.set(xlim=(1.0, 10.0), ylim=(0.0, 4.0))
    label_lines(axes, [(x, 2.0, "a label\nover two lines", "C0"), (1.0, 1.0, "far from its point", "C1")])
    target = tmp_path / "labels.png"
    figure.savefig(target)
    plt.close(figure)
    leaders = [text for text in axes.texts if getattr(text, "arrow_patch", None) is not None]
    assert target.stat().st_size > 0 and [text.get_text() for text in leaders] == ["far from its point"]
