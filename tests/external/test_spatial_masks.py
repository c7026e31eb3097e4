"""User-supplied concept masks of an external image dataset (neuroneval.external.spatial) and the params checks
that name their key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from neuroneval.external.config import ExternalConfigError, dataset_masks
from neuroneval.external.spatial import MaskError, layer_maps, load_concept_masks

KEY = "external.datasets.imagenet_val.masks"
FILES = np.array(["a/1.png", "a/2.png", "b/3.png"])
CONCEPTS = np.array(["class:a", "other:x", "class:b"])


def _masks() -> np.ndarray:
    masks = np.zeros((3, 3, 4, 4), dtype=np.uint8)
    masks[0, 0, :2] = 1
    masks[1, 0, 2:] = 1
    masks[2, 2] = 1
    return masks


@pytest.fixture(params=["npz", "folder"])
def mask_path(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "npz":
        path = tmp_path / "masks.npz"
        np.savez(path, files=FILES, concepts=CONCEPTS, masks=_masks())
        return path
    for name, array in (("files", FILES), ("concepts", CONCEPTS), ("masks", _masks())):
        np.save(tmp_path / f"{name}.npy", array)
    return tmp_path


def test_masks_of_the_asked_files_and_the_settings_concepts(mask_path: Path) -> None:
    loaded = load_concept_masks(mask_path, files=["b/3.png", "c/9.png", "a/1.png"],
                                concept_names=["class:b", "class:a", "class:c"], key=KEY)
    assert loaded.rows.tolist() == [0, 2] and loaded.concepts == ["class:b", "class:a"]
    assert loaded.masks.dtype == bool and loaded.masks.shape == (2, 2, 4, 4)
    np.testing.assert_array_equal(loaded.masks[0, 0], np.ones((4, 4), dtype=bool))
    np.testing.assert_array_equal(loaded.masks[1, 1], _masks()[0, 0].astype(bool))
    assert not loaded.masks[1, 0].any()


def test_mask_errors_name_the_key_and_the_file(tmp_path: Path) -> None:
    with pytest.raises(MaskError, match=f"{KEY}: .*gone.npz does not exist"):
        load_concept_masks(tmp_path / "gone.npz", files=["a/1.png"], concept_names=["class:a"], key=KEY)
    np.savez(tmp_path / "partial.npz", files=FILES, masks=_masks())
    with pytest.raises(MaskError, match=r"partial.npz lacks the array\(s\) \['concepts'\]"):
        load_concept_masks(tmp_path / "partial.npz", files=["a/1.png"], concept_names=["class:a"], key=KEY)
    np.savez(tmp_path / "shape.npz", files=FILES, concepts=CONCEPTS, masks=_masks()[:, :2])
    with pytest.raises(MaskError, match=r"shape.npz: 'masks' must have shape \(files=3, concepts=3, H, W\)"):
        load_concept_masks(tmp_path / "shape.npz", files=["a/1.png"], concept_names=["class:a"], key=KEY)
    np.savez(tmp_path / "twice.npz", files=np.array(["a/1.png", "a/1.png", "b/3.png"]), concepts=CONCEPTS,
             masks=_masks())
    with pytest.raises(MaskError, match=r"'files' repeats \['a/1.png'\]"):
        load_concept_masks(tmp_path / "twice.npz", files=["a/1.png"], concept_names=["class:a"], key=KEY)
    np.savez(tmp_path / "ok.npz", files=FILES, concepts=CONCEPTS, masks=_masks())
    with pytest.raises(MaskError, match="none of the 1 images"):
        load_concept_masks(tmp_path / "ok.npz", files=["/abs/a/1.png"], concept_names=["class:a"], key=KEY)
    with pytest.raises(MaskError, match="none of the setting's concepts"):
        load_concept_masks(tmp_path / "ok.npz", files=["a/1.png"], concept_names=["parent:z"], key=KEY)
    (tmp_path / "folder").mkdir()
    np.save(tmp_path / "folder" / "files.npy", FILES)
    with pytest.raises(MaskError, match=r"folder .* lacks concepts.npy, masks.npy"):
        load_concept_masks(tmp_path / "folder", files=["a/1.png"], concept_names=["class:a"], key=KEY)


def test_the_masks_key_is_checked_when_a_spatial_method_needs_it(tmp_path: Path) -> None:
    external = {"data_root": str(tmp_path), "datasets": {"imagenet_val": {"kind": "image_folder", "root": "val"}}}
    with pytest.raises(ExternalConfigError, match=r"explain\.settings\.s\.spatial needs .* "
                                                  r"external\.datasets\.imagenet_val\.masks"):
        dataset_masks(external, "imagenet_val", needed_by="explain.settings.s.spatial")
    external["datasets"]["imagenet_val"]["masks"] = "masks.npz"
    with pytest.raises(ExternalConfigError, match=f"{KEY}: .*masks.npz does not exist"):
        dataset_masks(external, "imagenet_val", needed_by="explain.settings.s.spatial")
    (tmp_path / "masks.npz").write_bytes(b"")
    assert dataset_masks(external, "imagenet_val", needed_by="x") == str(tmp_path / "masks.npz")


def test_layer_maps_are_the_unpooled_module_outputs() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten())
    images = torch.rand(5, 3, 6, 6)
    maps = layer_maps(model, [images[:3], images[3:]], "1")
    assert maps.shape == (5, 4, 6, 6)
    np.testing.assert_allclose(maps, torch.relu(model[0](images)).detach().numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="not a module"):
        layer_maps(model, [images], "layer9")
    with pytest.raises(ValueError, match=r"not \(channels, h, w\) maps"):
        layer_maps(model, [images], "2")
