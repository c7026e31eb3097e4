"""A contact sheet of vision-world images, to check by eye that the rendering looks as intended."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neuroneval.figures.style import savefig
from neuroneval.worlds.vision import VisionWorld


def contact_sheet(
    world: VisionWorld, path: str | Path, *, n: int = 64, columns: int = 8, show_masks: bool = False
) -> Path:
    """Save a PNG grid of the first ``n`` images, each titled with its leaf class (written atomically).

    Parameters
    ----------
    world
        The world to preview.
    path
        Destination PNG file.
    n
        Number of images (at most the world's size; default 64).
    columns
        Images per row (default 8).
    show_masks
        Overlay the object masks (main object red tint, distractors blue tint) instead of the plain images.

    Returns
    -------
    Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    count = min(int(n), len(world.images))
    if count < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rows = -(-count // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(columns * 1.6, rows * 1.75), squeeze=False)
    for position, axis in enumerate(axes.ravel()):
        axis.axis("off")
        if position >= count:
            continue
        image = world.images[position]
        if show_masks:
            tint = np.zeros_like(image)
            tint[world.masks[position] == 1] = (255, 0, 0)
            tint[world.masks[position] >= 2] = (0, 0, 255)
            image = (0.5 * image + 0.5 * tint).astype(np.uint8)
        axis.imshow(image, interpolation="nearest")
        title = world.class_names[world.class_index[position]].removeprefix("class:").replace("_", "\n", 1)
        axis.set_title(title, fontsize=6)
    figure.tight_layout()
    return savefig(figure, path, dpi=110)
