"""Task pages: the PNG encoder and a page's content, escaped and without external resources."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from neuroneval.crowd import encode_png, render_batch_html
from neuroneval.crowd.task_pages import RATER_PATTERN


def test_png_encoder_round_trips():
    image = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    data = encode_png(image)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    # IHDR (PNG spec 11.2.2): width 7, height 5, bit depth 8, colour type 2 (truecolour), then compression method,
    # filter method and interlace method, each 0 (the only compression and filter methods the spec defines)
    assert data[12:16] == b"IHDR" and data[16:29] == bytes([0, 0, 0, 7, 0, 0, 0, 5, 8, 2, 0, 0, 0])
    length = int.from_bytes(data[33:37], "big")
    assert data[37:41] == b"IDAT"
    raw = np.frombuffer(zlib.decompress(data[41 : 41 + length]), dtype=np.uint8).reshape(5, 1 + 7 * 3)
    assert np.all(raw[:, 0] == 0)
    np.testing.assert_array_equal(raw[:, 1:].reshape(5, 7, 3), image)
    with pytest.raises(ValueError, match="uint8"):
        encode_png(image.astype(float))


@pytest.mark.parametrize(("shape", "mode"), [((5, 7), "L"), ((5, 7, 1), "L"), ((4, 6, 3), "RGB"), ((3, 2, 4), "RGBA"),
                                             ((1, 1), "L")])
def test_pillow_decodes_every_image_kind_to_its_pixels(shape: tuple[int, ...], mode: str) -> None:
    """Pillow (an independent PNG decoder, which checks the header, CRCs and zlib stream) reads back the pixels,
    the mode (grey, RGB, RGBA) and the size of each kind of image."""
    image = np.random.default_rng(sum(shape)).integers(0, 256, shape, dtype=np.uint8)
    decoded = Image.open(io.BytesIO(encode_png(image)))
    decoded.load()
    assert decoded.mode == mode and decoded.size == (shape[1], shape[0])
    np.testing.assert_array_equal(np.asarray(decoded), image.reshape(shape[0], shape[1], -1).squeeze(-1)
                                  if mode == "L" else image)


@pytest.mark.parametrize("shape", [(4,), (2, 3, 3, 1), (2, 3, 2), (2, 3, 5), (0, 3, 3), (3, 0)])
def test_images_of_other_shapes_are_refused_naming_the_shape(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=rf"got shape \({shape[0]},"):
        encode_png(np.zeros(shape, dtype=np.uint8))


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint16, np.float32])
def test_images_of_other_types_are_refused_naming_the_type(dtype: type) -> None:
    with pytest.raises(ValueError, match=f"uint8 arrays, got {np.dtype(dtype)}"):
        encode_png(np.zeros((2, 2), dtype=dtype))


def test_a_page_takes_its_options_by_keyword_only() -> None:
    tasks = pd.DataFrame({"task": ["t0"], "explanation": ["grass"], "input_1": [3]})
    with pytest.raises(TypeError):
        render_batch_html(tasks, {3: "x"})  # type: ignore[misc]


def test_a_page_shows_each_task_once_with_escaped_text():
    tasks = pd.DataFrame({"task": ["t0", "t1"], "explanation": ["a <red> circle", "grass"],
                          "input_1": [3, 5], "input_2": [4, pd.NA]}).astype({"input_2": "Int64"})
    page = render_batch_html(tasks, media={3: np.zeros((2, 2), dtype=np.uint8), 5: "x & y"}, title="T & C")
    assert page.count('class="answer"') == 3 and page.count('<section class="task"') == 2
    assert "a &lt;red&gt; circle" in page and "x &amp; y" in page and "<title>T &amp; C</title>" in page
    assert '<img alt="input 3" src="data:image/png;base64,' in page and ">input 4</span>" in page
    assert f'pattern="{RATER_PATTERN}"' in page
