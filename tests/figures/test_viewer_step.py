"""The viewer step on an external image dataset: its ``inputs.csv`` (``input_id,path`` under the dataset root) is the
media, so each card's thumbnails are the files of their input ids (decoded back to pixels)."""

from __future__ import annotations

import base64
import io as bytes_io
import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
from PIL import Image

from neuroneval import io
from neuroneval.pipeline.viewer_steps import viewer_setting


def test_an_external_image_datasets_files_are_shown_by_input_id(tmp_path) -> None:
    rng = np.random.default_rng(0)
    n = 30
    ids = 1000 + 7 * np.arange(n)
    pictures = rng.integers(0, 256, size=(n, 6, 5, 3), dtype=np.uint8)
    root = tmp_path / "photos"
    (root / "nested").mkdir(parents=True)
    paths = [f"nested/img_{k:02d}.png" for k in rng.permutation(n)]  # file names say nothing about the id
    for picture, path in zip(pictures, paths, strict=True):
        Image.fromarray(picture).save(root / path)
    (tmp_path / "external").mkdir()
    pd.DataFrame({"input_id": ids, "path": paths}).to_csv(tmp_path / "external/inputs.csv", index=False)
    concept = (rng.random(n) < 0.4).astype(np.float32)
    activations = pd.DataFrame({"input_id": ids, "u0": concept + 0.1 * rng.random(n).astype(np.float32)})
    io.write_activation_table(tmp_path / "acts.parquet", activations, metadata={"model": "m"})
    io.write_concept_table(tmp_path / "concepts.parquet", pd.DataFrame({"input_id": ids, "dog": concept}),
                           metadata={"source": "labels"})
    pd.DataFrame({"unit": ["u0"], "concept": ["dog"]}).to_csv(tmp_path / "truth.csv", index=False)
    job = SimpleNamespace(
        input=SimpleNamespace(activations=[str(tmp_path / "acts.parquet")], concepts=str(tmp_path / "concepts.parquet"),
                              truth=str(tmp_path / "truth.csv"), media=str(tmp_path / "external/inputs.csv")),
        output=[str(tmp_path / "index.html")],
        params=SimpleNamespace(viewer={"metrics": ["correlation"], "top_inputs": 5, "thumbnail_scale": 2},
                               setting={"dataset": "photos", "concepts": {"prefixes": []}}, description="",
                               media_root=str(root), own_media=None),
        wildcards=SimpleNamespace(setting="photos_setting"),
    )
    viewer_setting(job)
    page = (tmp_path / "index.html").read_text()
    shown = re.findall(r'data-input="(\d+)"><img alt="input \1" width="10" height="12" src="data:image/png;base64,'
                       r'([^"]+)"', page)
    assert len(shown) == 5
    row_of = {int(i): r for r, i in enumerate(ids)}
    for input_id, encoded in shown:
        decoded = np.asarray(Image.open(bytes_io.BytesIO(base64.b64decode(encoded))))
        np.testing.assert_array_equal(decoded, pictures[row_of[int(input_id)]])
    top = np.argsort(-activations["u0"].to_numpy(), kind="stable")[:5]
    assert [int(i) for i, _ in shown] == ids[top].tolist()
