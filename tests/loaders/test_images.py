"""Image folder datasets (ImageNet/Places365 trees, split files) and CUB attribute concepts, on tiny fake trees."""

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from neuroneval.models.loaders_images import (
    CUB_CBM_ATTRIBUTE_IDS,
    class_majority_vote,
    load_cub_concepts,
    load_image_folder,
)


def write_image(path: Path, colour: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((8, 10, 3), colour, dtype=np.uint8)).save(path)


@pytest.fixture
def imagenet_tree(tmp_path: Path) -> Path:
    root = tmp_path / "train"
    for position, (synset, count) in enumerate([("n01440764", 3), ("n01443537", 2), ("n01484850", 4)]):
        for index in range(count):
            suffix = ".JPEG" if index % 2 == 0 else ".png"
            write_image(root / synset / f"{synset}_{index}{suffix}", 40 * position)
    (root / "n01440764" / "notes.txt").write_text("not an image")
    (root / "README.jpg").write_bytes(b"loose file outside any class folder")
    return root


def test_image_folder_lists_classes_in_sorted_order(imagenet_tree: Path) -> None:
    paths, labels, class_names = load_image_folder(imagenet_tree)
    assert class_names == ["n01440764", "n01443537", "n01484850"]
    assert labels.dtype == np.int64 and labels.tolist() == [0, 0, 0, 1, 1, 2, 2, 2, 2]
    assert [path.parent.name for path in paths] == [class_names[label] for label in labels]
    assert all(path.suffix in (".JPEG", ".png") for path in paths)
    with Image.open(paths[-1]) as image:
        assert image.size == (10, 8)


def test_limit_spreads_over_all_classes(imagenet_tree: Path) -> None:
    all_paths, all_labels, _ = load_image_folder(imagenet_tree)
    paths, labels, _ = load_image_folder(imagenet_tree, limit=3)
    assert len(paths) == 3 and sorted(set(labels.tolist())) == [0, 1, 2]
    assert all(path in all_paths for path in paths)
    assert load_image_folder(imagenet_tree, limit=100)[1].tolist() == all_labels.tolist()
    with pytest.raises(ValueError, match="limit must be positive"):
        load_image_folder(imagenet_tree, limit=0)


def test_places365_style_split_file_with_labels(tmp_path: Path) -> None:
    root = tmp_path / "val_256"
    for index in range(3):
        write_image(root / f"Places365_val_{index:08d}.jpg", 10 * index)
    categories = tmp_path / "categories_places365.txt"
    categories.write_text("/a/airfield 0\n/a/airplane_cabin 1\n/a/airport_terminal 2\n")
    split = tmp_path / "places365_val.txt"
    split.write_text("Places365_val_00000002.jpg 2\n# a comment\n\nPlaces365_val_00000000.jpg 0\n")
    paths, labels, class_names = load_image_folder(root, split_file=split, class_names_file=categories)
    assert [path.name for path in paths] == ["Places365_val_00000002.jpg", "Places365_val_00000000.jpg"]
    assert labels.tolist() == [2, 0] and class_names[2] == "/a/airport_terminal"

    split.write_text("Places365_val_00000001.jpg 7\n")
    with pytest.raises(ValueError, match="outside the 3 classes"):
        load_image_folder(root, split_file=split, class_names_file=categories)
    split.write_text("Places365_val_00000009.jpg 1\n")
    with pytest.raises(FileNotFoundError, match=r"line 1: image .*Places365_val_00000009\.jpg does not exist"):
        load_image_folder(root, split_file=split, class_names_file=categories)


def test_split_file_without_labels_uses_class_folders(imagenet_tree: Path, tmp_path: Path) -> None:
    split = tmp_path / "subset.txt"
    split.write_text("n01484850/n01484850_1.png\nn01440764/n01440764_0.JPEG\n")
    paths, labels, _ = load_image_folder(imagenet_tree, split_file=split)
    assert labels.tolist() == [2, 0] and paths[0] == imagenet_tree / "n01484850" / "n01484850_1.png"
    split.write_text("README.jpg\n")
    with pytest.raises(ValueError, match="not inside a class folder"):
        load_image_folder(imagenet_tree, split_file=split)


def test_image_folder_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"image folder .*missing does not exist"):
        load_image_folder(tmp_path / "missing")
    (tmp_path / "empty_class").mkdir()
    with pytest.raises(FileNotFoundError, match=f"no images .* under {tmp_path}"):
        load_image_folder(tmp_path)


def write_cub(root: Path, present: dict[tuple[int, int], int], n_attributes: int = 312) -> None:
    """CUB layout: attributes/image_attribute_labels.txt for images 1–3, attributes.txt beside the folder."""
    (root / "attributes").mkdir(parents=True)
    lines = []
    for image_id in (1, 2, 3):
        for attribute_id in range(1, n_attributes + 1):
            is_present = present.get((image_id, attribute_id), 0)
            lines.append(f"{image_id} {attribute_id} {is_present} 3 12.5")
    lines[5] += " 0.75"  # the released file has a few lines with an extra field
    (root / "attributes" / "image_attribute_labels.txt").write_text("\n".join(lines) + "\n")
    names = [f"{number} has_part::value_{number}" for number in range(1, n_attributes + 1)]
    (root.parent / "attributes.txt").write_text("\n".join(names) + "\n")


def test_cub_concepts_over_the_112_cbm_attributes(tmp_path: Path) -> None:
    root = tmp_path / "CUB_200_2011"
    write_cub(root, {(1, 2): 1, (2, 312): 1, (3, 1): 1, (3, 5): 1})
    image_ids, concepts, names = load_cub_concepts(root)
    assert len(CUB_CBM_ATTRIBUTE_IDS) == 112 and CUB_CBM_ATTRIBUTE_IDS[:3] == (2, 5, 7)
    assert CUB_CBM_ATTRIBUTE_IDS[-1] == 312
    assert image_ids.tolist() == [1, 2, 3] and concepts.shape == (3, 112) and concepts.dtype == np.float32
    assert names[0] == "has_part::value_2" and names[-1] == "has_part::value_312"
    expected = np.zeros((3, 112), dtype=np.float32)
    expected[0, 0] = expected[1, 111] = expected[2, 1] = 1  # attribute 1 is not a CBM concept
    np.testing.assert_array_equal(concepts, expected)

    _, chosen, chosen_names = load_cub_concepts(root, attribute_ids=[5, 1])
    np.testing.assert_array_equal(chosen, [[0, 0], [0, 0], [1, 1]])
    assert chosen_names == ["has_part::value_5", "has_part::value_1"]
    assert load_cub_concepts(root, attribute_ids=None)[1].shape == (3, 312)


def test_cub_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"image_attribute_labels\.txt do not exist"):
        load_cub_concepts(tmp_path)
    root = tmp_path / "cub"
    write_cub(root, {}, n_attributes=4)
    with pytest.raises(ValueError, match=r"attribute ids \[7\] do not occur in .*image_attribute_labels.txt"):
        load_cub_concepts(root, attribute_ids=[2, 7])
    (root / "attributes" / "image_attribute_labels.txt").write_text("1 1 0 3 1.0\n1 x 1 3 1.0\n")
    with pytest.raises(ValueError, match=r"image_attribute_labels\.txt line 2"):
        load_cub_concepts(root, attribute_ids=None)


def test_class_majority_vote() -> None:
    concepts = np.array([[1, 0], [1, 1], [0, 0], [0, 1], [0, 1]], dtype=np.float32)
    votes = class_majority_vote(concepts, np.array([7, 7, 7, 3, 3]))
    np.testing.assert_array_equal(votes, [[1, 0], [1, 0], [1, 0], [0, 1], [0, 1]])
    with pytest.raises(ValueError, match="one class label per row"):
        class_majority_vote(concepts, np.array([1, 2]))
