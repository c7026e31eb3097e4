"""Time the embedded CoSy diffusion model: training s/step and sampling images/s against the number of DDIM steps.

Usage::

    python benchmarks/bench_cosy_diffusion.py [--threads 2] [--train-steps 8] [--ddim-steps 10 25 50] [--images 64]
    python benchmarks/bench_cosy_diffusion.py --checkpoint DIR [--probe-world DIR] [--sheet /tmp/sheet.png]

Without ``--checkpoint`` it renders a small world, trains a tiny CLIP for one epoch and the diffusion model
(``DEFAULT_CONFIG`` architecture and batch size) for ``--train-steps`` steps, then times sampling with that
checkpoint. With ``--checkpoint`` it times sampling of that checkpoint and also checks its quality:
``--classes`` leaf classes × ``--per-class`` images from the CoSy default prompt ("realistic photo of a close up
of a red striped circle"), judged by (1) the colour of the object region (pixels far from the border's median
colour) — is the named colour the nearest catalogue colour? — and (2) the checkpoint's own CLIP image tower:
top-1 over the classes' prompts and the mean one-vs-rest ROC AUC. With ``--probe-world`` the same measures on
real images of those classes are printed as the reference, and ``--sheet`` writes a contact sheet (one row per
class: generated images, then two real ones). The load average is printed with every timing: the CPU is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from neuroneval.cosy import fill_template, image_seed
from neuroneval.cosy.embedded_diffusion import (
    CLIP_FILE,
    DEFAULT_CONFIG,
    TEXT_ENCODER_DIR,
    EmbeddedDiffusionGenerator,
    train_embedded_diffusion,
)
from neuroneval.models.clip import embed_images, embed_texts, load_clip, save_clip, train_clip
from neuroneval.models.training import TrainingOptions
from neuroneval.worlds import build_vision_world, load_vision_world, save_vision_world
from neuroneval.worlds.render import COLOURS, secondary_colour
from neuroneval.worlds.vision_concepts import concept_prompt

SMALL_CLIP = {"embed_dim": 64, "logit_bias": -10.0,
              "vision": {"image_size": 32, "layers": 2, "width": 64, "patch_size": 8, "head_width": 32},
              "text": {"context_length": 24, "width": 64, "heads": 4, "layers": 2}}


def load() -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def time_training(workspace: Path, train_steps: int) -> Path:
    batch_size = int(DEFAULT_CONFIG["batch_size"])
    world = build_vision_world(batch_size * train_steps, seed=0, split="train")
    save_vision_world(world, workspace / "world")
    model, tokenizer, report = train_clip(world.images, world.captions, SMALL_CLIP,
                                          TrainingOptions(epochs=1, batch_size=128, learning_rate=0.002,
                                                          weight_decay=0.05, seed=0))
    save_clip(model, tokenizer, workspace / "clip.pt", config=SMALL_CLIP, report=report)
    print(load())
    report = train_embedded_diffusion(workspace / "world", workspace / "clip.pt", workspace / "checkpoint",
                                      {"epochs": 1})
    print(f"training: {report['steps']} steps of {batch_size} images, {report['seconds_per_step']:.3f} s/step "
          f"(first step included), {report['parameters'] / 1e6:.2f} M parameters; {load()}")
    return workspace / "checkpoint"


def time_sampling(checkpoint: Path, ddim_steps: list[int], n_images: int, guidance_scales: list[float]) -> None:
    prompts = [fill_template("closeup", "a red striped circle")] * n_images
    seeds = [image_seed(prompts[0], index) for index in range(n_images)]
    print(f"sampling {n_images} images (batch_size {DEFAULT_CONFIG['batch_size']}):")
    for guidance_scale in guidance_scales:
        for steps in ddim_steps:
            generator = EmbeddedDiffusionGenerator(checkpoint, steps=steps, guidance_scale=guidance_scale)
            generator.generate(prompts[:1], seeds[:1])
            started = time.perf_counter()
            generator.generate(prompts, seeds)
            seconds = time.perf_counter() - started
            print(f"  guidance {guidance_scale:g}, {steps:3d} DDIM steps: {n_images / seconds:6.2f} images/s "
                  f"({seconds / n_images:.3f} s/image); {load()}")


def named_colours(images: np.ndarray, colour_names: list[str]) -> np.ndarray:
    """Index (into ``colour_names``) of each image's object colour: a vote of the object pixels.

    Object pixels are those farther than 20 (RGB) from every border pixel (the background); each votes for the
    catalogue colour whose base or texture shade (:func:`~neuroneval.worlds.render.secondary_colour`) is nearest,
    if within 60. On real world images this recovers the main object's colour ≈99 % of the time.
    """
    base = np.array([COLOURS[name] for name in colour_names], dtype=np.float32)
    prototypes = np.concatenate([base, secondary_colour(base)])
    owner = np.tile(np.arange(len(colour_names)), 2)
    pixels = images.reshape(len(images), -1, 3).astype(np.float32)
    border = np.concatenate([images[:, 0], images[:, -1], images[:, :, 0], images[:, :, -1]], axis=1)
    votes = np.zeros((len(images), len(colour_names)))
    for row in range(len(images)):
        to_background = np.linalg.norm(pixels[row][:, None] - border[row][None].astype(np.float32), axis=2).min(1)
        to_prototype = np.linalg.norm(pixels[row][:, None] - prototypes[None], axis=2)
        voting = (to_background > 20) & (to_prototype.min(1) < 60)
        np.add.at(votes[row], owner[to_prototype.argmin(1)[voting]], 1)
    return votes.argmax(axis=1)


def judge(images: np.ndarray, class_of_image: np.ndarray, class_names: list[str], clip_path: Path,
          colour_names: list[str]) -> dict[str, float]:
    """Colour accuracy (:func:`named_colours`), CLIP top-1 and mean one-vs-rest AUC over the classes' prompts."""
    from sklearn.metrics import roc_auc_score

    predicted = named_colours(images, colour_names)
    named = np.array([colour_names.index(class_names[k].split(":")[1].split("_")[0]) for k in class_of_image])
    model, tokenizer, _ = load_clip(clip_path)
    similarity = embed_images(model, images) @ embed_texts(model, tokenizer, [concept_prompt(c) for c in class_names]).T
    aucs = [roc_auc_score(class_of_image == k, similarity[:, k]) for k in range(len(class_names))]
    return {"colour_accuracy": float(np.mean(predicted == named)),
            "clip_top1": float(np.mean(similarity.argmax(axis=1) == class_of_image)),
            "clip_auc": float(np.mean(aucs))}


def check_quality(checkpoint: Path, probe_world: Path, n_classes: int, per_class: int, sheet: Path | None,
                  guidance_scale: float, steps: int) -> None:
    from neuroneval.worlds.vision_concepts import COLOUR_NAMES

    world = load_vision_world(probe_world)
    rng = np.random.default_rng(0)
    chosen = sorted(rng.choice(len(world.class_names), size=min(n_classes, len(world.class_names)),
                               replace=False).tolist())
    class_names = [world.class_names[k] for k in chosen]
    colour_names = list(COLOUR_NAMES[: int(world.params["n_colours"])])
    prompts = [fill_template("closeup", concept_prompt(name)) for name in class_names for _ in range(per_class)]
    seeds = [image_seed(prompt, index % per_class) for index, prompt in enumerate(prompts)]
    class_of_image = np.repeat(np.arange(len(class_names)), per_class)
    generator = EmbeddedDiffusionGenerator(checkpoint, steps=steps, guidance_scale=guidance_scale)
    started = time.perf_counter()
    images = generator.generate(prompts, seeds)
    print(f"quality: {len(images)} images in {time.perf_counter() - started:.1f} s "
          f"(guidance {guidance_scale:g}, {steps} steps); {load()}")
    clip_path = checkpoint / TEXT_ENCODER_DIR / CLIP_FILE
    scores = judge(images, class_of_image, class_names, clip_path, colour_names)
    print(f"  generated ({len(class_names)} classes x {per_class}): " + json.dumps(scores))
    real_rows = [np.flatnonzero(world.class_index == k)[:per_class] for k in chosen]
    real = np.concatenate([world.images[rows] for rows in real_rows])
    real_class = np.concatenate([np.full(len(rows), position) for position, rows in enumerate(real_rows)])
    print(f"  real probe images ({len(real)}):      " + json.dumps(judge(real, real_class, class_names, clip_path,
                                                                            colour_names)))
    if sheet:
        from PIL import Image

        shown = min(len(class_names), 15)
        blank = np.full((32, 32, 3), 255, np.uint8)
        rows = [np.concatenate([*images[k * per_class : (k + 1) * per_class], np.full((32, 4, 3), 255, np.uint8),
                                *[*world.images[real_rows[k][:2]], blank, blank][:2]], axis=1)
                for k in range(shown)]
        grid = np.concatenate([np.pad(row, ((1, 1), (0, 0), (0, 0)), constant_values=255) for row in rows])
        Image.fromarray(grid).resize((grid.shape[1] * 3, grid.shape[0] * 3), Image.NEAREST).save(sheet)
        print(f"  contact sheet {sheet}: rows = " + ", ".join(concept_prompt(c) for c in class_names[:shown]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--train-steps", type=int, default=8)
    parser.add_argument("--ddim-steps", type=int, nargs="+", default=[10, 25, 50])
    parser.add_argument("--guidance", type=float, nargs="+", default=[3.0, 1.0])
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--checkpoint", type=Path, help="time (and judge) this checkpoint instead of training one")
    parser.add_argument("--probe-world", type=Path, help="saved world split: classes and real reference images")
    parser.add_argument("--classes", type=int, default=30)
    parser.add_argument("--per-class", type=int, default=8)
    parser.add_argument("--sheet", type=Path, help="write a contact sheet PNG here")
    arguments = parser.parse_args()
    torch.set_num_threads(arguments.threads)
    print(f"torch {torch.__version__}, {arguments.threads} threads; {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-cosy-diffusion-") as scratch:
        checkpoint = arguments.checkpoint or time_training(Path(scratch), arguments.train_steps)
        time_sampling(checkpoint, arguments.ddim_steps, arguments.images, arguments.guidance)
        if arguments.checkpoint and arguments.probe_world:
            check_quality(checkpoint, arguments.probe_world, arguments.classes, arguments.per_class, arguments.sheet,
                          arguments.guidance[0], 25)


if __name__ == "__main__":
    main()
