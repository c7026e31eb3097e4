"""torchvision, timm and local tiny classifiers: saved locally, loaded through load_model, outputs unchanged."""

from pathlib import Path

import numpy as np
import pytest
import timm
import torch
import torchvision
from PIL import Image
from safetensors.torch import save_file

from neuroneval.models.classifier import build_classifier, save_checkpoint
from neuroneval.models.loaders import LoadedModel, default_layers, load_model, read_state_dict


def assert_same_outputs(original: torch.nn.Module, loaded: LoadedModel, inputs: torch.Tensor) -> None:
    original.eval()
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(inputs), original(inputs), rtol=0, atol=0)
    assert not loaded.module.training
    names = dict(loaded.module.named_modules())
    assert loaded.layers and all(layer in names for layer in loaded.layers)


@pytest.fixture(scope="module")
def resnet18() -> torch.nn.Module:
    torch.manual_seed(0)
    return torchvision.models.get_model("resnet18", weights=None, num_classes=3).eval()


@pytest.fixture(scope="module")
def resnet18_file(resnet18: torch.nn.Module, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("torchvision") / "resnet18.pth"
    torch.save(resnet18.state_dict(), path)
    return path


def test_torchvision_round_trip(resnet18: torch.nn.Module, resnet18_file: Path) -> None:
    loaded = load_model({"family": "torchvision", "arch": "resnet18", "weights_path": str(resnet18_file),
                         "num_classes": 3})
    assert_same_outputs(resnet18, loaded, torch.randn(2, 3, 64, 64))
    assert {"layer4", "fc"} <= set(loaded.layers)
    assert loaded.source == resnet18_file and loaded.family == "torchvision"


def test_torchvision_reads_wrapped_and_safetensors_checkpoints(resnet18: torch.nn.Module, tmp_path: Path) -> None:
    """Places365's checkpoints are {"state_dict": {"module.…": …}}; HF snapshots are a folder with safetensors."""
    wrapped = tmp_path / "resnet18_places365.pth.tar"
    torch.save({"epoch": 90, "arch": "resnet18",
                "state_dict": {f"module.{key}": value for key, value in resnet18.state_dict().items()}}, wrapped,
               _use_new_zipfile_serialization=False)  # the legacy format of the 2017 Places365 release
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    save_file({key: value.contiguous() for key, value in resnet18.state_dict().items()},
              snapshot / "model.safetensors")
    inputs = torch.randn(1, 3, 48, 48)
    for weights_path in (wrapped, snapshot):
        loaded = load_model({"family": "torchvision", "arch": "resnet18", "weights_path": weights_path,
                             "num_classes": 3, "layers": ["layer4", "fc"]})
        assert_same_outputs(resnet18, loaded, inputs)
        assert loaded.layers == ("layer4", "fc")
    assert read_state_dict(wrapped).keys() == resnet18.state_dict().keys()


def test_torchvision_preprocess_takes_pil_images_and_uint8_arrays(resnet18_file: Path) -> None:
    loaded = load_model({"family": "torchvision", "arch": "resnet18", "weights_path": resnet18_file,
                         "num_classes": 3})
    array = np.random.default_rng(0).integers(0, 256, (300, 260, 3), dtype=np.uint8)
    from_array, from_pil = loaded.preprocess(array), loaded.preprocess(Image.fromarray(array))
    assert from_array.shape == (3, 224, 224) and from_array.dtype == torch.float32
    torch.testing.assert_close(from_array, from_pil)
    custom = load_model({"family": "torchvision", "arch": "resnet18", "weights_path": resnet18_file,
                         "num_classes": 3, "image_transform": {"resize_size": [224, 224], "crop_size": 224}})
    assert custom.preprocess(array).shape == (3, 224, 224)


def test_torchvision_vit_layer_names() -> None:
    """vit_b_16 itself is 86 M parameters; a small VisionTransformer has the same module names."""
    from torchvision.models.vision_transformer import VisionTransformer

    vit = VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2, hidden_dim=16, mlp_dim=32,
                            num_classes=3)
    assert default_layers(vit, "torchvision") == ("encoder.ln", "heads", "heads.head", "encoder.layers.encoder_layer_1")


@pytest.mark.parametrize("arch, model_kwargs, image_size", [
    ("resnet10t", {}, 64),
    ("vit_tiny_patch16_224", {"img_size": 32, "depth": 2}, 32),
])
def test_timm_round_trip(arch: str, model_kwargs: dict, image_size: int, tmp_path: Path) -> None:
    torch.manual_seed(0)
    original = timm.create_model(arch, pretrained=False, num_classes=3, **model_kwargs)
    path = tmp_path / f"{arch}.safetensors"
    save_file(original.state_dict(), path)
    loaded = load_model({"family": "timm", "arch": arch, "weights_path": path, "num_classes": 3,
                         "model_kwargs": model_kwargs})
    assert_same_outputs(original, loaded, torch.randn(2, 3, image_size, image_size))
    expected = {"layer4", "fc"} if arch.startswith("resnet") else {"head", "norm", "blocks.1"}
    assert expected <= set(loaded.layers)
    image = np.zeros((40, 50, 3), dtype=np.uint8)
    assert loaded.preprocess(image).shape == (3, *loaded.info["data_config"]["input_size"][1:])


def test_local_tiny_cnn_round_trip(tmp_path: Path) -> None:
    torch.manual_seed(0)
    config = {"n_classes": 4, "width": 8, "image_size": 16}
    original = build_classifier("tiny_cnn", config).eval()
    path = tmp_path / "cnn.pt"
    save_checkpoint(original, path, architecture="tiny_cnn", config=config, report={}, class_names=list("abcd"))
    loaded = load_model({"family": "local_tiny_cnn", "weights_path": path})
    assert_same_outputs(original, loaded, torch.randn(2, 3, 16, 16))
    assert {"block3", "fc"} <= set(loaded.layers)
    assert loaded.info["card"]["class_names"] == list("abcd")
    image = np.full((16, 16, 3), 255, dtype=np.uint8)
    torch.testing.assert_close(loaded.preprocess(image), torch.ones(3, 16, 16))


def test_missing_weights_name_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "resnet50.pth"
    for spec in ({"family": "torchvision", "arch": "resnet18", "weights_path": missing},
                 {"family": "timm", "arch": "resnet10t", "weights_path": missing},
                 {"family": "local_tiny_cnn", "weights_path": missing},
                 {"family": "open_clip", "config": "ViT-B-32", "pretrained": missing},
                 {"family": "transformers_lm", "model_dir": missing.parent}):
        with pytest.raises(FileNotFoundError, match="nowhere"):
            load_model(spec)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="expected one weights file"):
        load_model({"family": "torchvision", "arch": "resnet18", "weights_path": empty})


def test_mismatched_weights_name_the_file(resnet18_file: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"resnet18\.pth do not match torchvision 'resnet18' with num_classes=5"):
        load_model({"family": "torchvision", "arch": "resnet18", "weights_path": resnet18_file, "num_classes": 5})
    with pytest.raises(ValueError, match=r"resnet18\.pth do not match timm 'resnet10t'"):
        load_model({"family": "timm", "arch": "resnet10t", "weights_path": resnet18_file, "num_classes": 3})
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match=r"could not read weights from .*garbage\.pt"):
        load_model({"family": "torchvision", "arch": "resnet18", "weights_path": garbage})
    torch.save({"weights": [1, 2, 3]}, tmp_path / "odd.pt")
    with pytest.raises(ValueError, match=r"odd\.pt does not hold a state dict"):
        read_state_dict(tmp_path / "odd.pt")


def test_bad_specs_say_what_was_expected(resnet18_file: Path) -> None:
    with pytest.raises(ValueError, match="unknown model family 'keras'"):
        load_model({"family": "keras"})
    with pytest.raises(ValueError, match="needs 'arch'"):
        load_model({"family": "torchvision", "weights_path": resnet18_file})
    with pytest.raises(ValueError, match="torchvision has no architecture 'resnet7'"):
        load_model({"family": "torchvision", "arch": "resnet7", "weights_path": resnet18_file})
    with pytest.raises(ValueError, match=r"layers \['layer9'\] are not modules"):
        load_model({"family": "torchvision", "arch": "resnet18", "weights_path": resnet18_file, "num_classes": 3,
                    "layers": ["layer4", "layer9"]})
