"""The diffusers backend offline: a tiny StableDiffusionPipeline assembled, saved and reloaded in the test."""

from __future__ import annotations

import string
from pathlib import Path

import numpy as np
import pytest

from neuroneval.cosy import DiffusersGenerator, ImageGenerator, build_generator
from neuroneval.cosy.options import DiffusersOptions
from neuroneval.cosy.synthesis import plan_images, synthesize


def tiny_pipeline_folder(directory: Path) -> Path:
    import torch
    from diffusers import AutoencoderKL, DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    torch.manual_seed(0)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for char in string.ascii_lowercase:  # character-level BPE: no merges needed, any lower-case prompt works
        vocab.setdefault(char, len(vocab))
        vocab.setdefault(f"{char}</w>", len(vocab))
    # transformers 5: vocabulary and merges go in as objects (file arguments are ignored)
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=16, pad_token="<|endoftext|>")
    text_encoder = CLIPTextModel(CLIPTextConfig(
        vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        max_position_embeddings=16, bos_token_id=0, eos_token_id=1, pad_token_id=1))
    unet = UNet2DConditionModel(
        sample_size=8, in_channels=4, out_channels=4, layers_per_block=1, block_out_channels=(8, 16),
        down_block_types=("CrossAttnDownBlock2D", "DownBlock2D"), up_block_types=("UpBlock2D", "CrossAttnUpBlock2D"),
        cross_attention_dim=16, attention_head_dim=2, norm_num_groups=4)
    vae = AutoencoderKL(block_out_channels=(8,), in_channels=3, out_channels=3, latent_channels=4,
                        down_block_types=("DownEncoderBlock2D",), up_block_types=("UpDecoderBlock2D",),
                        norm_num_groups=4, sample_size=8)
    pipeline = StableDiffusionPipeline(vae=vae, text_encoder=text_encoder, tokenizer=tokenizer, unet=unet,
                                       scheduler=DDIMScheduler(num_train_timesteps=50), safety_checker=None,
                                       feature_extractor=None, requires_safety_checker=False)
    pipeline.save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("diffusers")
    return tiny_pipeline_folder(tmp_path_factory.mktemp("tiny_sd") / "pipeline")


def test_tiny_pipeline_offline(tiny_pipeline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = DiffusersOptions(model=str(tiny_pipeline), steps=3, guidance_scale=2.0, height=8, width=8,
                            dtype="float32", batch_size=2, device="cpu", local_files_only=True, negative_prompt=None)
    generator = build_generator("diffusers", spec)
    assert isinstance(generator, DiffusersGenerator) and isinstance(generator, ImageGenerator)
    assert generator.config()["pipeline"] == "StableDiffusionPipeline"
    images = generator.generate(["a red circle", "a blue square", "a red circle"], [7, 8, 7])
    assert images.shape == (3, 8, 8, 3) and images.dtype == np.uint8
    assert np.array_equal(images[0], images[2])  # same (prompt, seed), other batch position
    assert not np.array_equal(images[0], images[1])
    assert np.array_equal(generator.generate(["a red circle"], [7])[0], images[0])


def test_tiny_pipeline_image_set(tiny_pipeline: Path, tmp_path: Path) -> None:
    generator = DiffusersGenerator(str(tiny_pipeline), steps=2, height=8, width=8, batch_size=3, device="cpu")
    plan = plan_images(["a red circle"], templates=["closeup"], n_images=2)
    manifest, report = synthesize(generator, plan, tmp_path / "diffusers", progress=False)
    assert report["generated"] == 2 and len(manifest) == 2
    assert (manifest["generator"] == "diffusers").all()
