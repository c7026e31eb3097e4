"""Task pages: the PNG encoder and a page's content, escaped and without external resources."""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import encode_png, render_batch_html
from neuroneval.crowd.task_pages import RATER_PATTERN


def test_png_encoder_round_trips():
    image = np.random.default_rng(0).integers(0, 256, (5, 7, 3), dtype=np.uint8)
    data = encode_png(image)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    length = int.from_bytes(data[33:37], "big")
    assert data[37:41] == b"IDAT"
    raw = np.frombuffer(zlib.decompress(data[41 : 41 + length]), dtype=np.uint8).reshape(5, 1 + 7 * 3)
    assert np.all(raw[:, 0] == 0)
    np.testing.assert_array_equal(raw[:, 1:].reshape(5, 7, 3), image)
    with pytest.raises(ValueError, match="uint8"):
        encode_png(image.astype(float))


def test_a_page_shows_each_task_once_with_escaped_text():
    tasks = pd.DataFrame({"task": ["t0", "t1"], "explanation": ["a <red> circle", "grass"],
                          "input_1": [3, 5], "input_2": [4, pd.NA]}).astype({"input_2": "Int64"})
    page = render_batch_html(tasks, media={3: np.zeros((2, 2), dtype=np.uint8), 5: "x & y"}, title="T & C")
    assert page.count('class="answer"') == 3 and page.count('<section class="task"') == 2
    assert "a &lt;red&gt; circle" in page and "x &amp; y" in page and "<title>T &amp; C</title>" in page
    assert '<img alt="input 3" src="data:image/png;base64,' in page and ">input 4</span>" in page
    assert f'pattern="{RATER_PATTERN}"' in page
