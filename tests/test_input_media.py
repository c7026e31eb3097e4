"""neuroneval.input_media: the user's images and texts by input_id, every id found or named as missing."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from neuroneval.input_media import (
    TokenInContext,
    as_display_images,
    read_image_array,
    read_image_folder,
    read_input_media,
    read_text_table,
)


def pictures(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, size=(n, 5, 4, 3), dtype=np.uint8)


def test_image_folder_with_inputs_csv_pairs_each_id_with_its_file(tmp_path) -> None:
    images = pictures(3)
    for k, name in enumerate(["b.png", "a.png", "sub/c.png"]):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        Image.fromarray(images[k]).save(tmp_path / name)
    pd.DataFrame({"input_id": [42, 7, 19], "file": ["b.png", "a.png", "sub/c.png"]}).to_csv(
        tmp_path / "inputs.csv", index=False)
    found = read_input_media(tmp_path).lookup([19, 42])
    np.testing.assert_array_equal(found[42], images[0])
    np.testing.assert_array_equal(found[19], images[2])
    with pytest.raises(ValueError, match=r"no image for 2 of the 3 requested input id\(s\), e.g. \[1, 2\]"):
        read_image_folder(tmp_path).lookup([7, 1, 2])
    (tmp_path / "a.png").unlink()
    with pytest.raises(ValueError, match=r"inputs\.csv, line 3, column file: 'a.png' is not a file"):
        read_image_folder(tmp_path)


def test_image_folder_named_by_id(tmp_path) -> None:
    grey = pictures(2)[..., 0]
    Image.fromarray(grey[0]).save(tmp_path / "0031.png")
    Image.fromarray(grey[1]).save(tmp_path / "5.png")
    found = read_image_folder(tmp_path).lookup([5, 31])
    np.testing.assert_array_equal(found[31], grey[0])
    np.testing.assert_array_equal(found[5], grey[1])
    Image.fromarray(grey[1]).save(tmp_path / "cat.png")
    with pytest.raises(ValueError, match=r"named by their input id .*\['cat.png'\]"):
        read_image_folder(tmp_path)


def test_array_rows_follow_their_ids_and_lengths_must_match(tmp_path) -> None:
    images = pictures(4)
    np.save(tmp_path / "x.npy", images)
    np.save(tmp_path / "ids.npy", np.array([9, 3, 5, 1]))
    found = read_image_array(tmp_path / "x.npy", ids=tmp_path / "ids.npy").lookup([1, 9])
    np.testing.assert_array_equal(found[1], images[3])
    np.testing.assert_array_equal(found[9], images[0])
    pd.DataFrame({"input_id": [9, 3, 5]}).to_csv(tmp_path / "ids.csv", index=False)
    with pytest.raises(ValueError, match=r"x\.npy has 4 image\(s\) but .*ids\.csv lists 3 input id\(s\)"):
        read_image_array(tmp_path / "x.npy", ids=tmp_path / "ids.csv")
    with pytest.raises(ValueError, match="row i = input id i"):
        read_image_array(tmp_path / "x.npy")
    np.testing.assert_array_equal(read_image_array(tmp_path / "x.npy", row_is_id=True).lookup([2])[2], images[2])
    with pytest.raises(ValueError, match=r"input id\(s\) \[3\] are listed twice"):
        read_image_array(tmp_path / "x.npy", ids=np.array([3, 3, 5, 1]))


def test_npz_with_its_own_ids_and_channel_first_arrays(tmp_path) -> None:
    images = np.random.default_rng(1).integers(0, 256, size=(3, 5, 6, 3), dtype=np.uint8)
    np.savez(tmp_path / "x.npz", images=np.moveaxis(images, -1, 1), input_id=np.array([4, 8, 6]))
    np.testing.assert_array_equal(read_input_media(tmp_path / "x.npz").lookup([6])[6], images[2])
    np.savez(tmp_path / "bad.npz", images=images, input_id=np.array([4, 8]))
    with pytest.raises(ValueError, match=r"bad\.npz has 3 image\(s\) but .*input_id lists 2"):
        read_input_media(tmp_path / "bad.npz")


def test_non_uint8_images_share_one_linear_scale() -> None:
    values = np.array([[[0.0, 4.0]], [[8.0, 16.0]]])
    np.testing.assert_array_equal(as_display_images(values, "v"), np.rint(values / 16 * 255).astype(np.uint8))
    with pytest.raises(ValueError, match=r"v: images must be an array"):
        as_display_images(np.zeros((2, 3)), "v")


def test_text_and_token_tables(tmp_path) -> None:
    pd.DataFrame({"input_id": [3, 1], "text": ["three", "one"]}).to_csv(tmp_path / "t.csv", index=False)
    assert read_text_table(tmp_path / "t.csv").lookup([1, 3]) == {1: "one", 3: "three"}
    pd.DataFrame({"input_id": [10, 11], "document": [0, 0], "position": [0, 1], "token_id": [5, 6],
                  "token": [" the", " cat"], "context": ["", " the"]}).to_parquet(tmp_path / "tokens.parquet")
    assert read_input_media(tmp_path / "tokens.parquet").lookup([11]) == {11: TokenInContext(" the", " cat")}
    pd.DataFrame({"input_id": [1], "words": ["x"]}).to_csv(tmp_path / "w.csv", index=False)
    with pytest.raises(ValueError, match=r"w\.csv: expected columns input_id,text"):
        read_text_table(tmp_path / "w.csv")


def test_an_id_that_is_not_a_whole_number_is_named(tmp_path) -> None:
    (tmp_path / "t.csv").write_text("input_id,text\n1,a\nx,b\n")
    with pytest.raises(ValueError, match=r"t\.csv, column input_id: input id number 2 is not a whole number"):
        read_text_table(tmp_path / "t.csv")
