"""The media of your own setting (neuroneval.external.own_media) and the image-folder dataset kind
(neuroneval.external.own_images): what the viewer and the crowd pages show for each input id, checked against the
activation table; and how an image folder becomes the array a custom model reads.

Oracles: sklearn's digits array (each row rescaled by the closed form of ``display_rows`` and enlarged by
``np.kron``), PNG files written from known uint8 arrays, and the preprocessing formula ``(p / 255 − mean) / std``.
"""

from __future__ import annotations

import base64
import io as _io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from sklearn.datasets import load_digits

from neuroneval import io
from neuroneval.external import own, own_media
from neuroneval.external.own_images import build_images_dataset, image_listing
from neuroneval.external.preprocess import ImagePreprocessing
from neuroneval.figures.viewer import build_viewer
from neuroneval.input_media import TokenInContext
from neuroneval.options import OptionsError
from neuroneval.params.check import schema_problems
from tests.workflow.conftest import ROOT

SCHEMA = ROOT / "workflow" / "schemas" / "params.schema.yaml"
N = 40


def digits_rows() -> np.ndarray:
    """The first :data:`N` sklearn digits as flat float rows in [0, 1], as an MLP reads them."""
    return (load_digits().data[:N] / 16.0).astype(np.float32)


def expected_thumbnail(rows: np.ndarray, row: int) -> np.ndarray:
    """Closed form of the viewer's picture of a row: one [min, max] → [0, 255] scale for the whole array, the row
    reshaped to 8×8, each pixel repeated 8×8 times (64 px, :data:`own_media.THUMBNAIL_MIN_SIZE`)."""
    low, high = rows.min(), rows.max()
    grey = np.rint((rows[row].astype(np.float64) - low) / (high - low) * 255).astype(np.uint8).reshape(8, 8)
    return np.kron(grey, np.ones((8, 8), dtype=np.uint8))


def write_setting(root: Path, n_inputs: int = N) -> dict[str, Path]:
    """An activation table (unit ``u`` fires on fives), the label concept table and the truth of one setting."""
    target = load_digits().target[:n_inputs]
    ids = np.arange(n_inputs, dtype=np.int64)
    activations = pd.DataFrame({"input_id": ids, "u": (target == 5).astype(np.float32) + ids / 1000.0})
    io.write_activation_table(root / "u.parquet", activations, metadata={"model": "m", "layer": "l"})
    concepts = pd.DataFrame({"input_id": ids, **{f"class:{k}": (target == k).astype(np.float32) for k in range(10)}})
    io.write_concept_table(root / "labels.parquet", concepts, metadata={"source": "labels"})
    pd.DataFrame({"unit": ["u"], "concept": ["class:5"]}).to_csv(root / "truth.csv", index=False)
    return {"activations": root / "u.parquet", "concepts": root / "labels.parquet", "truth": root / "truth.csv"}


def external_with(root: Path, **datasets: dict) -> dict:
    return {"data_root": str(root), "datasets": datasets}


def test_an_array_dataset_shows_each_row_as_the_image_of_its_row_id(tmp_path: Path) -> None:
    rows = digits_rows()
    np.save(tmp_path / "images.npy", rows)
    external = external_with(tmp_path, mine={"kind": "array", "images": "images.npy", "labels": "labels.npy",
                                             "image_shape": [8, 8]})
    spec = own.media_spec(external, "mine")
    assert spec == {"path": str(tmp_path / "images.npy"), "ids": "rows", "image_shape": [8, 8], "root": None}
    files = write_setting(tmp_path)
    media = own_media.setting_media(spec, files["activations"])
    low, high = rows.min(), rows.max()
    for identifier in (0, 17, N - 1):
        expected = np.rint((rows[identifier] - low) / (high - low) * 255).astype(np.uint8).reshape(8, 8)
        np.testing.assert_array_equal(media.lookup([identifier])[identifier], expected)


@pytest.mark.parametrize("suffix", [".npy", ".npz"])
def test_flat_rows_without_image_shape_show_ids_with_a_note(tmp_path: Path, suffix: str) -> None:
    """An array dataset of flat rows and no ``image_shape`` (a feature table, or images of undeclared shape) has no
    picture to draw: the viewer gets no media and a note naming the key; with ``image_shape`` it gets the rows."""
    rows = digits_rows()
    path = tmp_path / f"images{suffix}"
    np.save(path, rows) if suffix == ".npy" else np.savez(path, images=rows)
    files = write_setting(tmp_path)
    spec = {"path": str(path), "ids": "rows", "image_shape": None, "root": None}
    media, note = own_media.viewer_media(spec, files["activations"])
    assert media is None and "declare image_shape: [H, W]" in note and path.name in note
    media, note = own_media.viewer_media({**spec, "image_shape": [8, 8]}, files["activations"])
    assert note == "" and sorted(media.ids) == list(range(N))


def decoded_pictures(page: str) -> dict[int, np.ndarray]:
    """Every ``<figure data-input>`` thumbnail of a viewer page, decoded from its PNG data URI."""
    pictures = {}
    for identifier, data in re.findall(r'data-input="(\d+)"><img[^>]*src="data:image/png;base64,([^"]+)"', page):
        pictures[int(identifier)] = np.asarray(Image.open(_io.BytesIO(base64.b64decode(data))))
    return pictures


def test_the_viewer_shows_the_upscaled_row_of_every_top_input(tmp_path: Path) -> None:
    rows = digits_rows()
    np.save(tmp_path / "images.npy", rows)
    files = write_setting(tmp_path)
    spec = {"path": str(tmp_path / "images.npy"), "ids": "rows", "image_shape": [8, 8], "root": None}
    page = build_viewer("mine", {"dataset": "mine", "concepts": {"prefixes": ["class:"]}},
                        activation_files=[files["activations"]], concept_file=files["concepts"],
                        truth_file=files["truth"], metrics=["auc"], top_k=6, max_units=None, data_root=None,
                        media=own_media.setting_media(spec, files["activations"]),
                        min_size=own_media.THUMBNAIL_MIN_SIZE)
    pictures = decoded_pictures(page)
    fives = np.flatnonzero(load_digits().target[:N] == 5)
    assert len(pictures) == 6 and set(pictures) <= set(fives.tolist())
    for identifier, picture in pictures.items():
        np.testing.assert_array_equal(picture, expected_thumbnail(rows, identifier))
    assert 'width="64" height="64"' in page


@pytest.mark.parametrize("rows_kept", [N - 3, N + 2])
def test_media_and_table_of_different_lengths_are_an_error_naming_file_and_id(tmp_path: Path, rows_kept: int) -> None:
    rows = load_digits().data[:rows_kept]
    np.save(tmp_path / "images.npy", rows)
    files = write_setting(tmp_path)
    spec = {"path": str(tmp_path / "images.npy"), "ids": "rows", "image_shape": [8, 8], "root": None}
    with pytest.raises(ValueError) as error:
        own_media.setting_media(spec, files["activations"])
    message = str(error.value)
    assert str(tmp_path / "images.npy") in message and str(files["activations"]) in message
    first_bad = N - 3 if rows_kept < N else N
    assert f"input id {first_bad} " in message


def test_a_shape_that_does_not_fit_the_rows_names_both(tmp_path: Path) -> None:
    np.save(tmp_path / "images.npy", digits_rows())
    spec = {"path": str(tmp_path / "images.npy"), "ids": "rows", "image_shape": [8, 9], "root": None}
    with pytest.raises(ValueError, match=r"image_shape \[8, 9\] holds 72 values, but a row of shape \[64\] holds 64"):
        own_media.read_media(spec)


def test_a_tables_dataset_shows_the_tokens_that_neuroneval_record_wrote(tmp_path: Path) -> None:
    tokens = pd.DataFrame({"input_id": [0, 1, 2], "document": [0, 0, 0], "position": [0, 1, 2],
                           "token_id": [5, 6, 7], "token": ["The", " cat", " sat"],
                           "context": ["", "The", "The cat"]})
    tokens.to_csv(tmp_path / "tokens.csv", index=False)
    external = external_with(tmp_path, lm={"kind": "tables", "activations": {"m": {"l": "l.parquet"}},
                                           "concepts": {"labels": "c.parquet"}, "media": {"path": "tokens.csv"}})
    spec = own.media_spec(external, "lm")
    media = own_media.read_media(spec)
    own_media.check_media_ids(media, np.array([0, 1, 2]), table="l.parquet")
    assert media.lookup([2])[2] == TokenInContext("The cat", " sat")
    with pytest.raises(ValueError, match=r"no tokens for input id 3 of l.parquet"):
        own_media.check_media_ids(media, np.array([0, 1, 2, 3]), table="l.parquet")
    assert own.media_files(spec) == [str(tmp_path / "tokens.csv")]


def test_a_tables_dataset_without_media_has_none() -> None:
    external = {"data_root": "/x", "datasets": {"t": {"kind": "tables", "activations": {}, "concepts": {}}}}
    assert own.media_spec(external, "t") is None and own.media_files(None) == []


def own_crowd_config(media: dict | None) -> dict:
    dataset = {"kind": "tables", "activations": {"m": {"l": "l.parquet"}}, "concepts": {"labels": "c.parquet"}}
    if media:
        dataset["media"] = media
    return {"external": {"data_root": "/data", "datasets": {"mine": dataset}},
            "settings": {"own": {"dataset": "mine"}, "world": {"dataset": "vision_probe"}},
            "explain": {"crowd": {"settings": ["world", "own"]}}}


def test_the_crowd_refuses_an_own_setting_without_media_and_takes_one_with_media() -> None:
    problems = own.crowd_media_problems(own_crowd_config(None))
    assert problems == ["explain.crowd.settings[1]: 'own' is a setting of your own on dataset 'mine', which has no "
                        "media: a crowd study shows raters each input; declare external.datasets.mine.media (an "
                        "image array, image folder or tokens.csv; docs/your_model.md)"]
    assert own.crowd_media_problems(own_crowd_config({"path": "x.npy", "ids": "rows"})) == []


def test_the_schema_catches_a_typo_in_the_media_keys() -> None:
    config = own_crowd_config({"path": "x.npy", "idz": "rows"})
    problems = [problem for problem in schema_problems(config, SCHEMA) if "media" in problem]
    assert problems and "external.datasets.mine.media.idz: unknown key" in problems[0]
    folder = {"kind": "images", "folder": "f", "preprocess": {"grayscle": True}}
    config["external"]["datasets"]["folder"] = folder
    assert any("external.datasets.folder.preprocess.grayscle: unknown key; did you mean 'grayscale'?" in problem
               for problem in schema_problems(config, SCHEMA))


def write_png_folder(root: Path) -> dict[str, np.ndarray]:
    """Class subfolders ``cat``/``dog`` of 4×3 RGB PNGs with known pixels."""
    rng = np.random.default_rng(0)
    written = {}
    for name in ("dog/b.png", "cat/z.png", "cat/a.png", "dog/a.png"):
        pixels = rng.integers(0, 256, size=(4, 3, 3), dtype=np.uint8)
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(root / name)
        written[name] = pixels
    return written


def test_an_image_folder_is_listed_by_class_subfolder_and_preprocessed_by_the_formula(tmp_path: Path) -> None:
    written = write_png_folder(tmp_path)
    mean, std = (0.5, 0.4, 0.3), (0.2, 0.25, 0.5)
    images, listing, classes = build_images_dataset(tmp_path, None, {"mean": list(mean), "std": list(std)})
    assert classes == ["cat", "dog"]
    assert listing["file"].tolist() == ["cat/a.png", "cat/z.png", "dog/a.png", "dog/b.png"]
    assert listing["label"].tolist() == [0, 0, 1, 1] and listing["input_id"].tolist() == [0, 1, 2, 3]
    assert images.shape == (4, 3, 4, 3) and images.dtype == np.float32
    for row, name in enumerate(listing["file"]):
        expected = (np.moveaxis(written[name], -1, 0) / 255.0 - np.array(mean)[:, None, None]) \
            / np.array(std)[:, None, None]
        np.testing.assert_allclose(images[row], expected, rtol=1e-5, atol=1e-5)


def test_a_grey_flattened_folder_gives_the_rows_an_mlp_reads(tmp_path: Path) -> None:
    digits = load_digits()
    names = []
    for index in range(12):
        name = f"d{index:02d}.png"
        Image.fromarray(np.rint(digits.images[index] * 255 / 16).astype(np.uint8)).save(tmp_path / name)
        names.append(name)
    pd.DataFrame({"file": names, "label": digits.target[:12]}).to_csv(tmp_path / "labels.csv", index=False)
    images, listing, classes = build_images_dataset(tmp_path, tmp_path / "labels.csv",
                                                    {"grayscale": True, "flatten": True})
    assert images.shape == (12, 64)
    np.testing.assert_allclose(images, digits.data[:12] / 16.0, atol=0.5 / 255 + 1e-6)
    assert [classes[label] for label in listing["label"]] == [str(value) for value in digits.target[:12]]


def test_a_bad_labels_csv_names_its_line_and_column(tmp_path: Path) -> None:
    write_png_folder(tmp_path)
    pd.DataFrame({"file": ["cat/a.png", "cat/missing.png"], "label": ["cat", "cat"]}).to_csv(
        tmp_path / "labels.csv", index=False)
    with pytest.raises(ValueError, match=r"labels.csv, line 3, column file: 'cat/missing.png' is not a file in"):
        image_listing(tmp_path, tmp_path / "labels.csv")


@pytest.mark.parametrize("params, message", [
    ({"size": [8]}, "size must be two positive integers"),
    ({"grayscale": True, "mean": [0.1, 0.2, 0.3]}, r"mean must be one number or one per channel \(1\)"),
    ({"grayscle": True}, "unknown option 'grayscle' of an images dataset"),
    ({"std": [0.0]}, "std must be positive"),
])
def test_bad_preprocessing_names_the_option(params: dict, message: str) -> None:
    with pytest.raises(OptionsError, match=message):
        ImagePreprocessing.of_dataset(params)
