"""The embedded text-conditional diffusion model: checkpoint, determinism, batch independence, CFG, validation."""

from __future__ import annotations

import dataclasses
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from diffusers import DDIMScheduler, UNet2DConditionModel

from neuroneval.cosy import TEMPLATES, ImageGenerator, fill_template, image_seed
from neuroneval.cosy.embedded_diffusion import (
    CLIP_FILE,
    MODEL_CARD,
    TEXT_ENCODER_DIR,
    TRAINING_REPORT,
    EmbeddedDiffusionGenerator,
    _TrainingTexts,
    checkpoint_sha256,
    conditioning_text,
    train_embedded_diffusion,
)
from neuroneval.cosy.options import EmbeddedTrainingOptions
from neuroneval.io import current_umask
from neuroneval.models.clip import load_clip, save_clip, train_clip
from neuroneval.models.training import TrainingOptions
from neuroneval.options import OptionsError
from neuroneval.worlds import build_vision_world, load_vision_world, save_vision_world

TINY_CLIP = {"embed_dim": 16, "vision": {"image_size": 32, "layers": 1, "width": 16, "patch_size": 16, "head_width": 8},
             "text": {"context_length": 24, "width": 16, "heads": 2, "layers": 1}}
TINY_UNET = EmbeddedTrainingOptions(block_out_channels=(8, 16, 16), attention_levels=(False, False, True),
                                    norm_num_groups=4, attention_head_dim=4, epochs=1, batch_size=16)
PROMPTS = [fill_template("closeup", "a red striped circle"), "a blue square", "photo of a circle on grass"]


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Tiny models: one thread is faster than two on a shared CPU (OpenMP barriers wait on descheduled threads)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("embedded_diffusion")
    world = build_vision_world(48, seed=0, split="train", n_classes=16)
    save_vision_world(world, root / "world")
    model, tokenizer, report = train_clip(world.images, world.captions, TINY_CLIP,
                                          TrainingOptions(epochs=1, batch_size=16, learning_rate=1e-3, seed=0))
    save_clip(model, tokenizer, root / "clip.pt", config=TINY_CLIP, report=report)
    train_report = train_embedded_diffusion(root / "world", root / "clip.pt", root / "checkpoint", TINY_UNET)
    return {"root": root, "world": root / "world", "clip": root / "clip.pt", "checkpoint": root / "checkpoint",
            "report": train_report}


@pytest.fixture(scope="module")
def generator(trained: dict[str, Path]) -> EmbeddedDiffusionGenerator:
    return EmbeddedDiffusionGenerator(trained["checkpoint"], steps=3, guidance_scale=3.0, batch_size=4)


def test_training_writes_a_self_contained_checkpoint(trained: dict) -> None:
    checkpoint, report = trained["checkpoint"], trained["report"]
    assert report["steps"] == 3 and report["parameters"] > 0 and np.isfinite(report["final_loss"])
    assert report["seconds_per_step"] > 0 and report["train_images"] == 48
    for relative in ("unet/config.json", "unet/diffusion_pytorch_model.safetensors",
                     "scheduler/scheduler_config.json", f"{TEXT_ENCODER_DIR}/{CLIP_FILE}", MODEL_CARD, TRAINING_REPORT):
        assert (checkpoint / relative).is_file(), relative
    # the CLIP text tower is copied byte for byte, not referenced
    assert (checkpoint / TEXT_ENCODER_DIR / CLIP_FILE).read_bytes() == trained["clip"].read_bytes()
    assert not list(checkpoint.parent.glob(".checkpoint.*"))
    # every folder and file has the mode a plain mkdir/open gives (safetensors alone would write 0o600)
    umask = current_umask()
    modes = {(path.is_dir(), stat.S_IMODE(path.stat().st_mode)) for path in [checkpoint, *checkpoint.rglob("*")]}
    assert modes == {(True, 0o777 & ~umask), (False, 0o666 & ~umask)}


def test_training_is_deterministic(trained: dict, tmp_path: Path) -> None:
    train_embedded_diffusion(trained["world"], trained["clip"], tmp_path / "again", TINY_UNET)
    assert checkpoint_sha256(tmp_path / "again") == checkpoint_sha256(trained["checkpoint"])
    train_embedded_diffusion(trained["world"], trained["clip"], tmp_path / "seed1",
                             dataclasses.replace(TINY_UNET, seed=1))
    assert checkpoint_sha256(tmp_path / "seed1") != checkpoint_sha256(trained["checkpoint"])


def test_the_checkpoint_hash_ignores_wall_clock_fields_and_sees_every_weight(trained: dict, tmp_path: Path) -> None:
    """A retrained CLIP copied into the checkpoint differs only in its card's train_seconds: same hash (two builds
    then write byte-identical manifests); a changed byte of a weight file or of a card's real field: another hash."""
    import json
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(trained["checkpoint"], copy)
    card_path = copy / TEXT_ENCODER_DIR / "clip.json"
    card = json.loads(card_path.read_text())
    assert "train_seconds" in card
    card_path.write_text(json.dumps({**card, "train_seconds": card["train_seconds"] + 123.4}))
    assert checkpoint_sha256(copy) == checkpoint_sha256(trained["checkpoint"])
    card_path.write_text(json.dumps({**card, "seed": 12345}))
    assert checkpoint_sha256(copy) != checkpoint_sha256(trained["checkpoint"])
    card_path.write_text(json.dumps(card))
    weights = next(path for path in sorted(copy.rglob("*")) if path.is_file() and path.suffix in (".pt", ".bin",
                                                                                                  ".safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert checkpoint_sha256(copy) != checkpoint_sha256(trained["checkpoint"])


def test_output_follows_the_contract(generator: EmbeddedDiffusionGenerator) -> None:
    assert isinstance(generator, ImageGenerator) and generator.name == "embedded"
    seeds = [image_seed(prompt, 0) for prompt in PROMPTS]
    images = generator.generate(PROMPTS, seeds)
    assert images.shape == (3, 32, 32, 3) and images.dtype == np.uint8
    assert images.min() >= 0 and images.max() <= 255 and images.std() > 0
    # another seed gives another image
    assert not np.array_equal(generator.generate(PROMPTS[:1], [seeds[0] + 1])[0], images[0])
    config = generator.config()
    assert config["checkpoint_sha256"] == checkpoint_sha256(generator.checkpoint_dir)
    assert {"steps": 3, "guidance_scale": 3.0, "batch_size": 4}.items() <= config.items()


def test_image_depends_only_on_its_prompt_and_seed(generator: EmbeddedDiffusionGenerator, trained: dict) -> None:
    seeds = [11, 12, 13]
    images = generator.generate(PROMPTS, seeds)
    assert np.array_equal(generator.generate(PROMPTS, seeds), images)
    alone = np.stack([generator.generate([prompt], [seed])[0] for prompt, seed in zip(PROMPTS, seeds, strict=True)])
    assert np.array_equal(alone, images)
    assert np.array_equal(generator.generate(PROMPTS[::-1], seeds[::-1])[::-1], images)
    # across chunk boundaries (batch_size 2: the 3 images fall in two chunks, the second padded)
    small_batches = EmbeddedDiffusionGenerator(trained["checkpoint"], steps=3, guidance_scale=3.0, batch_size=2)
    twice = small_batches.generate(PROMPTS * 2, seeds * 2)
    assert np.array_equal(twice[:3], twice[3:])
    assert np.array_equal(twice[2:5], small_batches.generate([PROMPTS[2], *PROMPTS[:2]], [seeds[2], *seeds[:2]]))


def test_round_trip_from_a_copied_folder(generator: EmbeddedDiffusionGenerator, trained: dict, tmp_path: Path) -> None:
    copied = tmp_path / "elsewhere"
    shutil.copytree(trained["checkpoint"], copied)
    reloaded = EmbeddedDiffusionGenerator(copied, steps=3, guidance_scale=3.0, batch_size=4)
    assert reloaded.config() == generator.config()
    assert np.array_equal(reloaded.generate(PROMPTS, [1, 2, 3]), generator.generate(PROMPTS, [1, 2, 3]))


def test_guidance_one_is_the_conditional_sampler(trained: dict) -> None:
    """Reference: diffusers' DDIM loop over the conditional prediction alone (η = 0, trailing spacing)."""
    checkpoint = trained["checkpoint"]
    guided = EmbeddedDiffusionGenerator(checkpoint, steps=4, guidance_scale=1.0, batch_size=2)
    images = guided.generate(PROMPTS[:2], [5, 6])

    unet = UNet2DConditionModel.from_pretrained(checkpoint / "unet", low_cpu_mem_usage=False).eval()
    _, tokenizer, _ = load_clip(checkpoint / TEXT_ENCODER_DIR / CLIP_FILE)
    scheduler = DDIMScheduler.from_pretrained(checkpoint / "scheduler", timestep_spacing="trailing")
    scheduler.set_timesteps(4)
    states, mask, pooled = guided.conditioner.encode([conditioning_text(p, tokenizer) for p in PROMPTS[:2]])
    samples = torch.stack([torch.randn((3, 32, 32), generator=torch.Generator().manual_seed(seed)) for seed in (5, 6)])
    with torch.no_grad():
        for timestep in scheduler.timesteps:
            noise = unet(samples, timestep, encoder_hidden_states=states, class_labels=pooled,
                         encoder_attention_mask=mask).sample
            samples = scheduler.step(noise, timestep, samples).prev_sample
    reference = ((samples.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(0, 2, 3, 1).numpy()
    assert np.array_equal(images, reference)


def test_guidance_formula(generator: EmbeddedDiffusionGenerator) -> None:
    texts = [generator.conditioning_text(prompt) for prompt in PROMPTS]
    condition = generator.conditioner.encode(texts)
    null = generator.conditioner.encode([""] * 3)
    samples = torch.randn((3, 3, 32, 32), generator=torch.Generator().manual_seed(0))
    timestep = torch.tensor(500)
    with torch.no_grad():
        conditional = generator.unet(samples, timestep, encoder_hidden_states=condition[0], class_labels=condition[2],
                                     encoder_attention_mask=condition[1]).sample
        unconditional = generator.unet(samples, timestep, encoder_hidden_states=null[0], class_labels=null[2],
                                       encoder_attention_mask=null[1]).sample
    guided = generator.predict_noise(samples, timestep, condition, null)
    expected = unconditional + 3.0 * (conditional - unconditional)
    torch.testing.assert_close(guided, expected, rtol=1e-4, atol=1e-4)
    assert not torch.allclose(conditional, unconditional)


def test_templates_keep_only_caption_words(trained: dict) -> None:
    _, tokenizer, _ = load_clip(trained["clip"])
    assert (conditioning_text("realistic photo of a close up of a red striped circle", tokenizer)
            == "photo of a of a red striped circle")
    for template in TEMPLATES:
        text = conditioning_text(fill_template(template, "a red striped circle"), tokenizer)
        assert text.endswith("a red striped circle")
        assert all(word in tokenizer.index for word in text.split())
    with pytest.raises(ValueError, match="no word of the caption vocabulary"):
        conditioning_text("realistic painting", tokenizer)
    # training texts: templated with probability template_fraction, always in the vocabulary, ∅ under dropout
    world = load_vision_world(trained["world"])
    config = EmbeddedTrainingOptions(template_fraction=1.0, cond_dropout=0.0)
    texts = _TrainingTexts(world, tokenizer, config)(np.arange(48))
    assert all(text and all(word in tokenizer.index for word in text.split()) for text in texts)
    assert sum(text.startswith(("photo of", "a of")) for text in texts) > 10
    dropped = _TrainingTexts(world, tokenizer, dataclasses.replace(config, cond_dropout=1.0))(np.arange(48))
    assert dropped == [""] * 48


def test_bad_requests_raise(generator: EmbeddedDiffusionGenerator, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="2 prompts but 1 seeds"):
        generator.generate(PROMPTS[:2], [1])
    with pytest.raises(ValueError, match="empty"):
        generator.generate(["a circle", "  "], [1, 2])
    with pytest.raises(ValueError, match="caption vocabulary"):
        generator.generate(["realistic painting"], [1])
    with pytest.raises(ValueError, match="missing the folder"):
        EmbeddedDiffusionGenerator(tmp_path / "absent")
    (tmp_path / "half").mkdir()
    with pytest.raises(ValueError, match=r"unet/config\.json"):
        EmbeddedDiffusionGenerator(tmp_path / "half")
    with pytest.raises(ValueError, match="steps"):
        EmbeddedDiffusionGenerator(generator.checkpoint_dir, steps=0)


def test_bad_training_config_raises(trained: dict, tmp_path: Path) -> None:
    with pytest.raises(OptionsError, match="unknown option 'epoch'"):
        EmbeddedTrainingOptions.from_params({"epoch": 1})
    with pytest.raises(OptionsError, match=r"EmbeddedTrainingOptions\.caption_fraction \+ class_prompt_fraction"):
        EmbeddedTrainingOptions(caption_fraction=0.8, class_prompt_fraction=0.3)
    with pytest.raises(ValueError, match="CLIP checkpoint"):
        train_embedded_diffusion(trained["world"], tmp_path / "no_clip.pt", tmp_path / "x", TINY_UNET)
    assert not (tmp_path / "x").exists()


def test_failed_training_leaves_no_partial_folder(trained: dict, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "checkpoint"
    shutil.copytree(trained["checkpoint"], target)
    before = checkpoint_sha256(target)

    def save_then_fail(self: UNet2DConditionModel, directory: Path, **kwargs: object) -> None:
        Path(directory).mkdir(parents=True)
        (Path(directory) / "config.json").write_text("{")
        raise OSError("disk full")

    monkeypatch.setattr(UNet2DConditionModel, "save_pretrained", save_then_fail)
    with pytest.raises(OSError, match="disk full"):
        train_embedded_diffusion(trained["world"], trained["clip"], target, dataclasses.replace(TINY_UNET, seed=3))
    with pytest.raises(OSError, match="disk full"):
        train_embedded_diffusion(trained["world"], trained["clip"], tmp_path / "fresh", TINY_UNET)
    assert checkpoint_sha256(target) == before
    assert not (tmp_path / "fresh").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["checkpoint"]


def test_neuroneval_cosy_draws_with_the_embedded_generator(trained: dict, tmp_path: Path) -> None:
    """``--generator embedded:DIR`` with the sampling options of ``--params``' cosy block: the plumbing of the user
    command (an untrained classifier, so only counts and ranges are checked here)."""
    import json

    import pandas as pd
    import yaml

    from neuroneval.cli import main
    from neuroneval.explain.explanation import Concept, Text, explanation_frame, write_explanations
    from neuroneval.models.classifier import build_classifier, save_checkpoint

    world = load_vision_world(trained["world"])
    config = {"n_classes": len(world.class_names), "width": 4}
    torch.manual_seed(0)
    save_checkpoint(build_classifier("tiny_cnn", config), tmp_path / "cnn.pt", architecture="tiny_cnn",
                    config=config, report={}, class_names=world.class_names)
    write_explanations(tmp_path / "mine.csv", explanation_frame(
        ["0", "1"], [Concept(world.class_names[0]), Text("a circle on grass")]))
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"cosy": {"embedded": {"sampling": {"steps": 2,
                                                                                           "batch_size": 4}}}}))
    out = tmp_path / "scores.csv"
    assert main(["cosy", "--explanations", str(tmp_path / "mine.csv"), "--model", str(tmp_path / "cnn.pt"),
                 "--layer", "softmax", "--control", str(trained["world"]), "--generator",
                 f"embedded:{trained['checkpoint']}", "--params", str(tmp_path / "params.yaml"), "--n-images", "2",
                 "--out", str(out), "--no-progress"]) == 0
    table = pd.read_csv(out, dtype={"unit": str, "method": str})
    assert len(table) == 4 and (table["n_synthetic"] == 2).all() and (table["n_control"] == 48).all()
    assert table["auc"].between(0, 1).all() and table["p_value"].between(0, 1).all()
    recorded = json.loads((tmp_path / "scores.images" / "embedded" / "generator.json").read_text())["config"]
    assert (recorded["name"], recorded["steps"], recorded["batch_size"]) == ("embedded", 2, 4)
