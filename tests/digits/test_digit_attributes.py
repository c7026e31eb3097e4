"""Attribute concepts of the digits (ink, symmetry, mass, centre, extent, closed loops) against a pixel-by-pixel
reference written here with plain loops and a breadth-first flood fill, on sklearn's bundled images."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from sklearn.datasets import load_digits

from neuroneval.worlds.digit_attributes import ATTRIBUTE_CONCEPTS, attribute_concepts, attribute_measures
from neuroneval.worlds.digits import build_digits_world

STROKE = 8  # grey level of a stroke pixel, as documented (half of 0-16)


def _reference_measures(image: np.ndarray) -> dict[str, float]:
    """One image's measures, pixel by pixel (the module doc's definitions)."""
    ink = sum(image[r][c] for r in range(8) for c in range(8))
    mirror_lr = sum(abs(image[r][c] - image[r][7 - c]) for r in range(8) for c in range(8))
    mirror_tb = sum(abs(image[r][c] - image[7 - r][c]) for r in range(8) for c in range(8))
    stroke_columns = [c for c in range(8) if any(image[r][c] >= STROKE for r in range(8))]
    return {
        "ink:heavy": ink,
        "symmetry:left_right": 1 - mirror_lr / (2 * ink),
        "symmetry:top_bottom": 1 - mirror_tb / (2 * ink),
        "mass:top": sum(image[r][c] for r in range(4) for c in range(8)) / ink,
        "mass:left": sum(image[r][c] for r in range(8) for c in range(4)) / ink,
        "centre:ink": sum(image[r][c] for r in range(2, 6) for c in range(2, 6)) / ink,
        "extent:wide": (max(stroke_columns) - min(stroke_columns) + 1) if stroke_columns else 0,
        "loop:closed": float(_has_enclosed_background(image)),
    }


def _has_enclosed_background(image: np.ndarray) -> bool:
    """Flood the background (grey < 8) from every border pixel, 4-neighbours; any background pixel left unreached
    is enclosed by stroke."""
    background = {(r, c) for r in range(8) for c in range(8) if image[r][c] < STROKE}
    queue = deque(p for p in background if p[0] in (0, 7) or p[1] in (0, 7))
    reached = set(queue)
    while queue:
        r, c = queue.popleft()
        for neighbour in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if neighbour in background and neighbour not in reached:
                reached.add(neighbour)
                queue.append(neighbour)
    return bool(background - reached)


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    return load_digits().images


def test_measures_match_the_pixel_by_pixel_reference(images: np.ndarray) -> None:
    sample = images[::9]  # 200 of the 1,797 images, every digit
    measures = attribute_measures(sample)
    assert measures.columns.tolist() == list(ATTRIBUTE_CONCEPTS)
    for index, image in enumerate(sample):
        expected = _reference_measures(image)
        for name in ATTRIBUTE_CONCEPTS:
            assert measures.loc[index, name] == pytest.approx(expected[name], abs=1e-12), (index, name)


def test_concepts_threshold_at_the_reference_median_and_at_one_half(images: np.ndarray) -> None:
    sample = images[::9]
    concepts = attribute_concepts(sample, images)
    reference = [_reference_measures(image) for image in images]
    for index, image in enumerate(sample):
        expected = _reference_measures(image)
        for name in ("ink:heavy", "symmetry:left_right", "symmetry:top_bottom", "centre:ink", "extent:wide"):
            median = np.median([measures[name] for measures in reference])
            assert concepts.loc[index, name] == float(expected[name] > median)
        for name in ("mass:top", "mass:left"):
            assert concepts.loc[index, name] == float(expected[name] > 0.5)
        assert concepts.loc[index, "loop:closed"] == expected["loop:closed"]
    assert concepts.dtypes.eq(np.float32).all()


def test_loops_are_where_the_digit_has_them(images: np.ndarray) -> None:
    """A drawn ring has a loop and a bar has none; over the bundled data most 0s and 8s are closed, few 1s."""
    ring = np.zeros((1, 8, 8))
    ring[0, 1:7, 1:7] = 16
    ring[0, 2:6, 2:6] = 0
    bar = np.zeros((1, 8, 8))
    bar[0, 1:7, 3:5] = 16
    assert attribute_measures(ring)["loop:closed"].item() == 1.0 == 1.0 - attribute_measures(bar)["loop:closed"].item()
    targets = load_digits().target
    loops = attribute_measures(images)["loop:closed"].to_numpy()
    assert loops[targets == 0].mean() > 0.5 and loops[targets == 8].mean() > 0.5 > 0.1 > loops[targets == 1].mean()


def test_the_digits_world_labels_carry_the_attributes_of_its_images(images: np.ndarray) -> None:
    world = build_digits_world("probe", seed=0, probe_fraction=0.5)
    source = images[world.attributes["source_index"].to_numpy()]
    expected = attribute_concepts(source, images)
    for name in ATTRIBUTE_CONCEPTS:
        np.testing.assert_array_equal(world.labels[name].to_numpy(), expected[name].to_numpy())
        assert 0.05 < world.labels[name].mean() < 0.95  # informative: neither always nor never


def test_a_bad_shape_is_named() -> None:
    with pytest.raises(ValueError, match=r"digit images must be \(n, 8, 8\) grey levels, got shape \(2, 4, 4\)"):
        attribute_measures(np.zeros((2, 4, 4)))
