"""The declared input preprocessing of a custom model (neuroneval.external.preprocess) against numpy by hand."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.external.preprocess import ImagePreprocessing, preprocess_images
from neuroneval.options import OptionsError

RNG = np.random.default_rng(0)
IMAGES = RNG.integers(0, 256, size=(5, 6, 7, 3), dtype=np.uint8)


def test_rgb_value_range_mean_std_and_layout_follow_the_formulas() -> None:
    options = ImagePreprocessing(value_range=(-1.0, 3.0), mean=(0.1, 0.2, 0.3), std=(0.5, 2.0, 4.0))
    got = preprocess_images(IMAGES, options)
    pixels = IMAGES.astype(np.float64)
    expected = ((-1.0 + 4.0 * pixels / 255.0) - np.array([0.1, 0.2, 0.3])) / np.array([0.5, 2.0, 4.0])
    assert got.shape == (5, 3, 6, 7) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected.transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-5)
    hwc = preprocess_images(IMAGES, ImagePreprocessing(layout="hwc", flatten=True))
    np.testing.assert_allclose(hwc, (pixels / 255.0).reshape(5, -1), rtol=1e-6)


def test_grayscale_is_the_luma_of_itu_r_601_and_inverts_and_flattens() -> None:
    options = ImagePreprocessing(channels=1, invert=True, value_range=(0.0, 16.0), layout="hw", flatten=True)
    got = preprocess_images(IMAGES, options)
    rgb = IMAGES.astype(np.float64)
    luma = (rgb[..., 0] * 299 + rgb[..., 1] * 587 + rgb[..., 2] * 114) / 1000.0
    expected = 16.0 * (255.0 - luma) / 255.0
    assert got.shape == (5, 42)
    # PIL rounds the luma to an integer: at most half a grey level apart
    np.testing.assert_allclose(got, expected.reshape(5, -1), atol=16.0 * 0.5 / 255 + 1e-6)
    chw = preprocess_images(IMAGES, ImagePreprocessing(channels=1))
    assert chw.shape == (5, 1, 6, 7)


def test_resizing_keeps_a_flat_image_flat_and_averages_a_checkerboard() -> None:
    flat = np.full((2, 16, 16, 3), 200, dtype=np.uint8)
    got = preprocess_images(flat, ImagePreprocessing(image_size=8, channels=1, flatten=True))
    np.testing.assert_allclose(got, 200 / 255.0, rtol=1e-6)
    board = np.zeros((1, 32, 32, 3), dtype=np.uint8)
    board[:, ::2, ::2] = board[:, 1::2, 1::2] = 255
    shrunk = preprocess_images(board, ImagePreprocessing(image_size=8))
    assert shrunk.shape == (1, 3, 8, 8)
    np.testing.assert_allclose(shrunk.mean(), 0.5, atol=0.02)  # antialiased: the mean grey, not aliasing


@pytest.mark.parametrize(("block", "message"), [
    ({"chanels": 1}, "external.models.m.preprocess: ImagePreprocessing: unknown option 'chanels'"),
    ({"channels": 2}, "ImagePreprocessing.channels must be 1 (grayscale) or 3 (RGB), got 2"),
    ({"value_range": [1, 0]}, "ImagePreprocessing.value_range must be [low, high] with low < high"),
    ({"mean": [0.5]}, "ImagePreprocessing.mean and std come together"),
    ({"mean": [0.5, 0.5], "std": [1, 1]}, "ImagePreprocessing.mean must be one number or one per channel (3)"),
    ({"mean": 0.5, "std": 0}, "ImagePreprocessing.std must be positive"),
    ({"layout": "hw"}, "layout 'hw' (no channel axis) needs channels: 1"),
    ({"image_size": 0}, "image_size"),
])
def test_a_bad_preprocess_block_is_named_by_its_key(block: dict, message: str) -> None:
    with pytest.raises(OptionsError) as caught:
        ImagePreprocessing.of_model({"family": "custom", "preprocess": block}, key="external.models.m")
    assert message in str(caught.value) and str(caught.value).startswith("external.models.m.preprocess: ")


def test_no_block_gives_rgb_in_the_unit_range() -> None:
    options = ImagePreprocessing.of_model({"family": "custom"}, key="external.models.m")
    np.testing.assert_allclose(preprocess_images(IMAGES, options), IMAGES.transpose(0, 3, 1, 2) / 255.0, rtol=1e-6)


def test_non_uint8_images_are_refused() -> None:
    with pytest.raises(ValueError, match="expected uint8 images"):
        preprocess_images(IMAGES.astype(np.float32), ImagePreprocessing())


def test_the_schema_restates_the_choices_of_the_options() -> None:
    """workflow/schemas/params.schema.yaml checks a ``preprocess`` block before any job; its keys and enums must be
    the options' fields and choices."""
    import dataclasses
    from pathlib import Path

    import yaml

    from neuroneval.external.preprocess import LAYOUTS

    schema = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow/schemas/params.schema.yaml").read_text())
    block = schema["properties"]["external"]["properties"]["models"]["additionalProperties"]["properties"]["preprocess"]
    assert set(block["properties"]) == {field.name for field in dataclasses.fields(ImagePreprocessing)}
    assert tuple(block["properties"]["layout"]["enum"]) == LAYOUTS
    assert block["properties"]["channels"]["enum"] == [1, 3]
