"""open_clip: tiny custom configs saved locally, loaded by load_model, embedded by concepts.pseudo — offline."""

import json
from pathlib import Path

import numpy as np
import open_clip
import pytest
import torch
from PIL import Image

from neuroneval.concepts.pseudo import embed_images, embed_texts
from neuroneval.models.loaders import load_model

from .helpers import save_tiny_bpe_tokenizer

# CLIP-style: open_clip's own ViT and text transformer, the bundled BPE tokenizer (vocab 49408).
CLIP_CONFIG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 2, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 12, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def siglip_config(vocab_size: int) -> dict:
    """SigLIP-style like ViT-SO400M-14-SigLIP-384: timm trunk with MAP pooling, custom text tower, HF tokenizer."""
    return {
        "embed_dim": 64,
        "init_logit_bias": -10,
        "custom_text": True,
        "vision_cfg": {"image_size": 32, "timm_model_name": "test_vit", "timm_model_pretrained": False,
                       "timm_pool": "map", "timm_proj": "none"},
        "text_cfg": {"context_length": 8, "vocab_size": vocab_size, "hf_tokenizer_name": "timm/not-downloaded",
                     "tokenizer_kwargs": {"clean": "canonicalize"}, "width": 64, "heads": 2, "layers": 1,
                     "no_causal_mask": True, "proj_bias": True, "pool_type": "last"},
    }


def images(count: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (40, 36, 3), dtype=np.uint8) for _ in range(count)]


@pytest.fixture(scope="module")
def clip_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> tuple[torch.nn.Module, Path]:
    torch.manual_seed(0)
    original = open_clip.CLIP(**CLIP_CONFIG, output_dict=True).eval()
    path = tmp_path_factory.mktemp("open_clip") / "tiny_clip.pt"
    torch.save(original.state_dict(), path)
    return original, path


def test_open_clip_custom_config_and_local_file(clip_checkpoint: tuple[torch.nn.Module, Path]) -> None:
    original, path = clip_checkpoint
    loaded = load_model({"family": "open_clip", "config": CLIP_CONFIG, "pretrained": str(path)})
    assert loaded.module.output_dict and not loaded.module.training
    pixels = torch.stack([loaded.preprocess(image) for image in images(3)])
    assert pixels.shape == (3, 3, 32, 32)
    tokens = loaded.tokenizer(["a photo of a bird", "a red wing"])
    assert tokens.shape == (2, 12)
    with torch.no_grad():
        torch.testing.assert_close(loaded.module.encode_image(pixels), original.encode_image(pixels), rtol=0, atol=0)
        torch.testing.assert_close(loaded.module.encode_text(tokens), original.encode_text(tokens), rtol=0, atol=0)
    names = dict(loaded.module.named_modules())
    assert {"visual", "visual.transformer.resblocks.1"} <= set(loaded.layers) <= set(names)


def test_open_clip_config_file(clip_checkpoint: tuple[torch.nn.Module, Path], tmp_path: Path) -> None:
    original, path = clip_checkpoint
    config_file = tmp_path / "tiny-clip-from-file.json"
    config_file.write_text(json.dumps(CLIP_CONFIG))
    loaded = load_model({"family": "open_clip", "config": str(config_file), "pretrained": path})
    assert loaded.info["model_name"] == "tiny-clip-from-file"
    torch.testing.assert_close(loaded.module.state_dict(), original.state_dict(), rtol=0, atol=0)


def test_siglip_style_local_dir_with_local_tokenizer(tmp_path: Path) -> None:
    """The Hugging Face snapshot layout (open_clip_config.json + weights + tokenizer files) loads offline."""
    snapshot = tmp_path / "tiny-siglip"
    vocab_size = save_tiny_bpe_tokenizer(snapshot, pad=True)
    config = siglip_config(vocab_size)
    (snapshot / "open_clip_config.json").write_text(json.dumps({"model_cfg": config, "preprocess_cfg": {
        "mean": [0.5, 0.5, 0.5], "std": [0.5, 0.5, 0.5]}}))
    torch.manual_seed(0)
    original = open_clip.CustomTextCLIP(**{key: value for key, value in config.items() if key != "custom_text"},
                                        output_dict=True).eval()
    torch.save(original.state_dict(), snapshot / "open_clip_pytorch_model.bin")

    loaded = load_model({"family": "open_clip", "pretrained": snapshot})
    prompts = ["the bird", "a red the wing"]
    tokens = loaded.tokenizer(prompts)
    assert tokens.shape == (2, 8) and int(tokens.max()) < vocab_size
    pixels = torch.stack([loaded.preprocess(image) for image in images(2)])
    white = loaded.preprocess(np.full((40, 36, 3), 255, dtype=np.uint8))
    torch.testing.assert_close(white, torch.ones(3, 32, 32))  # the snapshot's preprocess_cfg: mean = std = 0.5
    with torch.no_grad():
        torch.testing.assert_close(loaded.module.encode_image(pixels), original.encode_image(pixels), rtol=0, atol=0)
        torch.testing.assert_close(loaded.module.encode_text(tokens), original.encode_text(tokens), rtol=0, atol=0)
    last_block = f"visual.trunk.blocks.{len(loaded.module.visual.trunk.blocks) - 1}"
    assert {"visual", "visual.trunk.norm", last_block} <= set(loaded.layers)

    weights_file = snapshot / "open_clip_pytorch_model.bin"
    name = load_model({"family": "open_clip", "config": config, "pretrained": weights_file,
                       "tokenizer": snapshot})
    torch.testing.assert_close(name.tokenizer(prompts), tokens)
    with pytest.raises(ValueError, match="give its local directory as 'tokenizer'"):
        load_model({"family": "open_clip", "config": config, "pretrained": weights_file})


def test_open_clip_mismatch_names_the_file(clip_checkpoint: tuple[torch.nn.Module, Path], tmp_path: Path) -> None:
    _, path = clip_checkpoint
    wider = {**CLIP_CONFIG, "embed_dim": 8}
    with pytest.raises(ValueError, match=r"open_clip weights .*tiny_clip\.pt into .* \(they do not match"):
        load_model({"family": "open_clip", "config": wider, "pretrained": path})
    with pytest.raises(ValueError, match="open_clip has no model config 'ViT-Q-99'"):
        load_model({"family": "open_clip", "config": "ViT-Q-99", "pretrained": path})
    with pytest.raises(ValueError, match="embed_dim, vision_cfg and text_cfg"):
        load_model({"family": "open_clip", "config": {"vision_cfg": {}}, "pretrained": path})
    with pytest.raises(FileNotFoundError, match=r"without open_clip_config\.json"):
        load_model({"family": "open_clip", "pretrained": tmp_path})


def test_embeddings_are_normalised_encoder_outputs(clip_checkpoint: tuple[torch.nn.Module, Path],
                                                    tmp_path: Path) -> None:
    original, path = clip_checkpoint
    loaded = load_model({"family": "open_clip", "config": CLIP_CONFIG, "pretrained": path})
    pictures = images(5)
    image_embeddings = embed_images(loaded.module, loaded.preprocess, pictures, batch_size=2)
    with torch.no_grad():
        pixels = torch.stack([loaded.preprocess(picture) for picture in pictures])
        expected = original.encode_image(pixels).numpy()
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(image_embeddings, expected, atol=1e-6)
    assert image_embeddings.dtype == np.float32 and image_embeddings.shape == (5, 16)
    np.testing.assert_allclose(embed_images(loaded.module, loaded.preprocess, pictures, batch_size=5),
                               image_embeddings, atol=1e-6)

    files = []
    for position, picture in enumerate(pictures[:2]):
        files.append(tmp_path / f"{position}.png")
        Image.fromarray(picture).save(files[-1])
    np.testing.assert_allclose(embed_images(loaded.module, loaded.preprocess, files), image_embeddings[:2], atol=1e-6)

    prompts = ["a bird", "a red wing", "a long tail"]
    text_embeddings = embed_texts(loaded.module, loaded.tokenizer, prompts, batch_size=2)
    with torch.no_grad():
        expected_text = original.encode_text(open_clip.get_tokenizer("ViT-B-32", context_length=12)(prompts)).numpy()
    expected_text /= np.linalg.norm(expected_text, axis=1, keepdims=True)
    np.testing.assert_allclose(text_embeddings, expected_text, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(text_embeddings, axis=1), 1, atol=1e-6)
    with pytest.raises(ValueError, match="non-empty list of strings"):
        embed_texts(loaded.module, loaded.tokenizer, "a bird")
