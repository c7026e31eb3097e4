"""Task pages show each checkbox beside the image of *its own* input, for media read from a ``.npy`` whose rows
are in another order than the study's inputs: the page is parsed, every image decoded (Pillow, not our PNG
encoder) and compared with the ``.npy`` row that the ids file assigns to the checkbox's input id."""

from __future__ import annotations

import base64
import io
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from neuroneval.crowd import design_study, write_study
from neuroneval.input_media import read_image_array

N_INPUTS = 120
FIRST_ID = 500


class CheckboxImages(HTMLParser):
    """Collects (task, input id, decoded image or None) for each ``label.item`` of a task page."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[list] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "label" and attributes.get("class") == "item":
            self.items.append([None, None, None])
        elif tag == "input" and attributes.get("class") == "answer":
            self.items[-1][0], self.items[-1][1] = attributes["data-task"], int(attributes["data-input"])
        elif tag == "img" and self.items and self.items[-1][2] is None:
            payload = attributes["src"].removeprefix("data:image/png;base64,")
            self.items[-1][2] = np.asarray(Image.open(io.BytesIO(base64.b64decode(payload))))


def id_images(input_ids: np.ndarray, seed: int = 0) -> np.ndarray:
    """(n, 6, 6) uint8 images whose first two pixels spell the input id (the rest random, so rows differ)."""
    images = np.random.default_rng(seed).integers(0, 256, (len(input_ids), 6, 6), dtype=np.uint8)
    images[:, 0, 0], images[:, 0, 1] = input_ids // 256, input_ids % 256
    return images


def test_every_checkbox_shows_the_npy_row_of_its_own_input(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    input_ids = np.arange(N_INPUTS, dtype=np.int64) + FIRST_ID
    activations = pd.DataFrame({"input_id": input_ids, "u0": rng.gamma(1.0, size=N_INPUTS),
                                "u1": rng.gamma(1.0, size=N_INPUTS)})
    pairs = pd.DataFrame({"unit": ["u0", "u1"], "explanation": ["stripes", "dots"]})
    design = design_study(activations, pairs, n_draws=40, sampling="activation", tasks_per_batch=2, seed=1)

    row_order = rng.permutation(N_INPUTS)  # the .npy rows follow neither the ids' order nor the design's
    images = id_images(input_ids[row_order])
    np.save(tmp_path / "images.npy", images)
    np.save(tmp_path / "ids.npy", input_ids[row_order])
    media = read_image_array(tmp_path / "images.npy", ids=tmp_path / "ids.npy")
    write_study(design, tmp_path / "study", media=media)

    row_of_id = {int(identifier): row for row, identifier in enumerate(input_ids[row_order])}
    shown: list[tuple[str, int]] = []
    for page in sorted((tmp_path / "study").glob("batch_*.html")):
        parser = CheckboxImages()
        parser.feed(page.read_text(encoding="utf-8"))
        for task, input_id, image in parser.items:
            assert image is not None, f"{page.name}: task {task} input {input_id} has no image"
            np.testing.assert_array_equal(image, images[row_of_id[input_id]],
                                          err_msg=f"{page.name}: task {task}, input {input_id}")
            shown.append((task, input_id))
    expected = sorted(zip(design.samples["task"].astype(str), design.samples["input_id"].astype(int), strict=True))
    assert sorted(shown) == expected
    assert len({input_id for _, input_id in shown}) > 10
