"""Your media in the workflow: a custom MLP recorded on a folder of digit PNGs (``kind: images``, grey, flattened),
the viewer of an array setting (``image_shape: [8, 8]``) showing each top input as its upscaled row, and the crowd
task pages of the image-folder setting showing each sampled input as its PNG.

Oracles: the PNG files themselves (their pixels / 255 through the user's model for the recording, their pixels for
the task pages) and the array rows (rescaled by the closed form of ``display_rows``, enlarged by ``np.kron``).
"""

from __future__ import annotations

import base64
import io as _io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from PIL import Image

from neuroneval import io
from tests.external import own_model
from tests.external.test_own_setting import own_workspace
from tests.workflow.conftest import run_tool

SETTINGS = ["rows_logits", "folder_logits"]
TARGETS = ["results/viewer/rows_logits/index.html", "results/explain/crowd_pages/folder_logits",
           "results/explain/crowd/folder_logits.csv"]


def media_overlay(data_root: Path) -> dict:
    classes = {"source": "labels", "prefixes": ["class:"]}
    return {
        "external": {
            "data_root": str(data_root), "device": "cpu", "batch_size": 64,
            "datasets": {
                "mine_rows": {"kind": "array", "images": "images.npy", "labels": "labels.npy", "image_shape": [8, 8]},
                "mine_folder": {"kind": "images", "folder": "pngs", "labels": "pngs.csv",
                                "preprocess": {"grayscale": True, "flatten": True}},
            },
            "models": {"digits_mlp": {"family": "custom", "factory": "own_model:digits_mlp",
                                      "weights_path": "mlp.pt"}},
        },
        "settings": {
            "rows_logits": {"dataset": "mine_rows", "units": [{"model": "digits_mlp", "layer": "logits"}],
                            "concepts": classes},
            "folder_logits": {"dataset": "mine_folder", "units": [{"model": "digits_mlp", "layer": "logits"}],
                              "concepts": classes},
        },
        "meta": {"settings": SETTINGS},
        "sanity": {"settings": SETTINGS},
        "explain": {"settings": {name: {"methods": ["netdissect"]} for name in SETTINGS}, "run_settings": SETTINGS,
                    "cosy": {"settings": []},
                    "crowd": {"settings": ["folder_logits"], "methods": ["netdissect"], "n_inputs": 20,
                              "sampling": "activation", "aggregation": ["bayes_uniform"], "n_trials": 2}},
        "viewer": {"settings": SETTINGS, "metrics": ["auc"], "top_inputs": 4},
    }


@pytest.fixture(scope="module")
def media_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("own_media_inputs")
    own_model.write_user_files(root)
    rows = np.load(root / "images.npy")
    (root / "pngs").mkdir()
    names = [f"d{index:03d}.png" for index in range(len(rows))]
    for name, row in zip(names, rows, strict=True):
        Image.fromarray(np.rint(row.reshape(8, 8) * 255).astype(np.uint8)).save(root / "pngs" / name)
    pd.DataFrame({"file": names, "label": np.load(root / "labels.npy")}).to_csv(root / "pngs.csv", index=False)
    workspace = own_workspace(tmp_path_factory.mktemp("own_media_run"), root, media_overlay(root))
    run_tool(["snakemake", "--cores", "2", *TARGETS, "--configfile", "mine.yaml"], workspace)
    return workspace, root


def png_pixels(root: Path, input_id: int) -> np.ndarray:
    return np.asarray(Image.open(root / "pngs" / f"d{input_id:03d}.png"))


@pytest.mark.slow
def test_the_folder_is_recorded_through_its_declared_preprocessing(media_run: tuple[Path, Path]) -> None:
    """Slow (marker ``slow``): reads ``media_run``, Snakemake's build on a media folder."""
    workspace, root = media_run
    frame, _ = io.read_activation_table(workspace / "data/activations/mine_folder/digits_mlp/logits.parquet")
    model = own_model.digits_mlp()
    model.load_state_dict(torch.load(root / "mlp.pt"))
    pixels = np.stack([png_pixels(root, int(i)).reshape(-1) / 255.0 for i in frame["input_id"]]).astype(np.float32)
    with torch.no_grad():
        logits = model(torch.from_numpy(pixels)).numpy()
    np.testing.assert_allclose(frame.drop(columns="input_id").to_numpy(), logits, rtol=1e-5, atol=1e-5)
    labels, concept_metadata = io.read_concept_table(workspace / "data/concepts/mine_folder/labels.parquet")
    assert concept_metadata["classes"] == [str(k) for k in range(10)]
    assert (labels.drop(columns="input_id").to_numpy().argmax(axis=1) == np.load(root / "labels.npy")).all()


@pytest.mark.slow
def test_the_array_viewer_shows_every_top_input_as_its_upscaled_row(media_run: tuple[Path, Path]) -> None:
    """Slow (marker ``slow``): reads ``media_run``, Snakemake's build on a media folder."""
    workspace, root = media_run
    page = (workspace / "results/viewer/rows_logits/index.html").read_text()
    rows = np.load(root / "images.npy")
    low, high = rows.min(), rows.max()
    pictures = re.findall(r'data-input="(\d+)"><img[^>]*src="data:image/png;base64,([^"]+)"', page)
    assert len(pictures) == 40  # 10 logits units x 4 top inputs
    for identifier, data in pictures:
        grey = np.rint((rows[int(identifier)] - low) / (high - low) * 255).astype(np.uint8).reshape(8, 8)
        decoded = np.asarray(Image.open(_io.BytesIO(base64.b64decode(data))))
        np.testing.assert_array_equal(decoded, np.kron(grey, np.ones((8, 8), dtype=np.uint8)))


@pytest.mark.slow
def test_the_crowd_task_pages_show_each_sampled_input_as_its_png(media_run: tuple[Path, Path]) -> None:
    """Slow (marker ``slow``): reads ``media_run``, Snakemake's build on a media folder."""
    workspace, root = media_run
    study = workspace / "results/explain/crowd_pages/folder_logits"
    samples = pd.read_csv(study / "samples.csv")
    shown = {}
    for page in sorted(study.glob("batch_*.html")):
        for identifier, data in re.findall(r'data-input="(\d+)"><img alt="input \d+" src="data:image/png;base64,'
                                           r'([^"]+)"', page.read_text()):
            shown[int(identifier)] = np.asarray(Image.open(_io.BytesIO(base64.b64decode(data))))
    assert sorted(shown) == sorted(samples["input_id"].unique().tolist())
    for identifier, picture in shown.items():
        np.testing.assert_array_equal(picture, png_pixels(root, identifier))
    scores = pd.read_csv(workspace / "results/explain/crowd/folder_logits.csv")
    assert "netdissect" in set(scores["method"])
