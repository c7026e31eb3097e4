"""Your digits in headless Chromium: the viewer page and the crowd task pages built for an own ``kind: array``
dataset (flat 64-pixel rows, ``image_shape: [8, 8]``) show, for every shown input, the array row of its input id.

Chromium decodes each picture into pixels (a canvas at the image's natural size); the oracle is sklearn's digits
array indexed by the input id, rescaled by the closed form of ``display_rows`` and, in the viewer, enlarged by
``np.kron`` to 64 px. The unit's activations are not in row order (a shuffled table), so a picture chosen by row
position instead of by id would fail. Needs Debian's ``chromium`` (``make chromium``); the test is skipped, with
that reason, only when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_digits

from neuroneval import io
from neuroneval.crowd.explanation_pages import write_explanation_pages
from neuroneval.external import own, own_media
from neuroneval.figures.viewer import build_viewer, write_viewer
from tests.crowd.chromium import INSTALL_HINT, READ_PICTURES, Browser, chromium_path

N = 120


@pytest.fixture(scope="module")
def browser():
    binary = chromium_path()
    if binary is None:
        pytest.skip(f"Chromium is absent; install it with: {INSTALL_HINT} (or make chromium)")
    with Browser(binary) as instance:
        yield instance


@pytest.fixture(scope="module")
def digits_setting(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("own_digits")
    digits = load_digits()
    rows, target = (digits.data[:N] / 16.0).astype(np.float32), digits.target[:N]
    np.save(root / "images.npy", rows)
    rng = np.random.default_rng(1)
    order = rng.permutation(N)
    ids = order.astype(np.int64)
    activations = pd.DataFrame({"input_id": ids,
                                "fives": ((target[ids] == 5) + 0.2 * rng.standard_normal(N)).astype(np.float32),
                                "zeros": ((target[ids] == 0) + 0.2 * rng.standard_normal(N)).astype(np.float32)})
    io.write_activation_table(root / "acts.parquet", activations, metadata={"model": "mlp", "layer": "1"})
    concepts = pd.DataFrame({"input_id": np.arange(N), **{f"class:{k}": (target == k).astype(np.float32)
                                                          for k in range(10)}})
    io.write_concept_table(root / "labels.parquet", concepts, metadata={"source": "labels"})
    pd.DataFrame({"unit": ["fives", "zeros"], "concept": ["class:5", "class:0"]}).to_csv(root / "truth.csv",
                                                                                         index=False)
    pd.DataFrame({"unit": ["fives", "zeros"], "explanation": ["class:5", "class:0"], "length": [1, 1],
                  "kind": ["concept", "concept"]}).to_csv(root / "netdissect.csv", index=False)
    external = {"data_root": str(root), "datasets": {"mine": {"kind": "array", "images": "images.npy",
                                                              "labels": "labels.npy", "image_shape": [8, 8]}}}
    low, high = rows.min(), rows.max()
    display = np.rint((rows - low) / (high - low) * 255).astype(np.uint8).reshape(N, 8, 8)
    return {"root": root, "spec": own.media_spec(external, "mine"), "display": display}


def open_page(browser: Browser, page: Path) -> None:
    target = browser.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
    browser.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   session=False)["sessionId"]
    browser.call("Page.enable")
    browser.call("Page.navigate", {"url": page.as_uri()})
    browser.wait_for("document.readyState === 'complete' && document.images.length > 0 && "
                     "Array.from(document.images).every(function (i) { return i.complete; })")


def test_the_viewer_shows_each_top_input_as_its_upscaled_row(browser: Browser, digits_setting: dict) -> None:
    root = digits_setting["root"]
    media = own_media.setting_media(digits_setting["spec"], root / "acts.parquet")
    page = build_viewer("mine", {"dataset": "mine", "concepts": {"prefixes": ["class:"]}},
                        activation_files=[root / "acts.parquet"], concept_file=root / "labels.parquet",
                        truth_file=root / "truth.csv", metrics=["auc"], top_k=8, max_units=None, data_root=None,
                        media=media, min_size=own_media.THUMBNAIL_MIN_SIZE)
    path = write_viewer(root / "viewer" / "index.html", page)
    open_page(browser, path)
    pictures = browser.evaluate(READ_PICTURES)
    assert len(pictures) == 16
    for picture in pictures:
        assert (picture["height"], picture["width"]) == (64, 64)
        expected = np.kron(digits_setting["display"][picture["input"]], np.ones((8, 8), dtype=np.uint8))
        np.testing.assert_array_equal(np.reshape(picture["grey"], (64, 64)), expected,
                                      err_msg=f"input {picture['input']}")


def test_the_crowd_task_pages_show_each_input_as_its_row(browser: Browser, digits_setting: dict) -> None:
    root = digits_setting["root"]
    media = own_media.setting_media(digits_setting["spec"], root / "acts.parquet")
    written = write_explanation_pages([str(root / "acts.parquet")], {"netdissect": str(root / "netdissect.csv")},
                                      media, root / "study", n_inputs=30, sampling="activation", seed=0,
                                      title="Concept rating: mine")
    samples = pd.read_csv(root / "study" / "samples.csv")
    shown: dict[int, list[int]] = {}
    for page in [path for path in written if path.suffix == ".html"]:
        open_page(browser, page)
        for picture in browser.evaluate(READ_PICTURES):
            assert (picture["height"], picture["width"]) == (8, 8)
            shown[picture["input"]] = picture["grey"]
    assert sorted(shown) == sorted(samples["input_id"].unique().tolist())
    for input_id, grey in shown.items():
        np.testing.assert_array_equal(np.reshape(grey, (8, 8)), digits_setting["display"][input_id],
                                      err_msg=f"input {input_id}")


def test_a_shorter_array_is_an_error_for_the_viewer_and_the_crowd(digits_setting: dict, tmp_path: Path) -> None:
    np.save(tmp_path / "short.npy", np.load(digits_setting["root"] / "images.npy")[:-1])
    spec = {**digits_setting["spec"], "path": str(tmp_path / "short.npy")}
    acts = digits_setting["root"] / "acts.parquet"
    with pytest.raises(ValueError, match=rf"short.npy: no image for input id {N - 1} of {acts}"):
        own_media.setting_media(spec, acts)  # the crowd pages' step reads its media through it first
