"""The embedded text-to-image model of CoSy (paper 002, Sec. 3 step 1): a tiny text-conditional diffusion model.

It stands in for SDXL / Stable Cascade on the embedded vision world: a diffusers ``UNet2DConditionModel`` on
32×32 RGB pixels, conditioned on the frozen text tower of the tiny CLIP trained in the DAG
(:mod:`neuroneval.models.clip`), trained on the world's images with their captions and concept prompts.

Objective (DDPM, Ho et al. 2020): ε-prediction with the simple loss
``L = E_{x0, c, t, ε} ‖ε − ε_θ(√ᾱ_t x0 + √(1 − ᾱ_t) ε, t, c)‖²``, ``t ~ U{0, …, T−1}``, ``ε ~ N(0, I)``,
cosine noise schedule (``squaredcos_cap_v2``, Nichol & Dhariwal 2021), ``T = 1000``.

Classifier-free guidance (Ho & Salimans 2022): in training the text is replaced by the empty caption ``∅`` with
probability ``cond_dropout``; in sampling
``ε̂ = ε_θ(x_t, t, ∅) + w · (ε_θ(x_t, t, c) − ε_θ(x_t, t, ∅))`` with ``w = guidance_scale`` (``w = 1`` runs the
conditional pass alone, ``w = 0`` the unconditional one). Sampling is DDIM with η = 0 (deterministic, Song et al.
2021) over ``steps`` "trailing" timesteps, so the only randomness is the initial noise, drawn per image from
``torch.Generator().manual_seed(seed)``.

Text conditioning — two views of the frozen CLIP text tower, both cheap:

* the pooled, projected, L2-normalised text embedding (scaled by √d to unit per-dimension variance) enters
  through the UNet's ``class_embed_type="projection"`` MLP and is added to the timestep embedding, so it
  modulates every ResNet block. It is the vector CLIP aligned with images, so colour/texture/shape content
  that CLIP learned is there at once;
* the token-level states (after ``ln_final``, masked after the end token) feed cross-attention at the lowest
  resolution(s) (``attention_levels``), so the UNet can also read individual words where the tiny CLIP's
  pooled vector blurs them. Cross-attention at 8×8 only keeps the step cost near that of an unconditional
  UNet; at 16×16 and above it costs ≈2× (docs/design.md §7).

Prompts and unknown words: CoSy prompts are templated ("realistic photo of a close up of a red striped circle",
002 App. A.3), and the caption tokenizer knows only caption words. :func:`conditioning_text` keeps the words the
tokenizer knows, in order, and drops the rest ("realistic", "painting", "close", "up"), so the template leaves
"photo of a of a red striped circle". Training shows the model the same thing: a fraction ``template_fraction``
of its texts are wrapped in one of the five templates and filtered the same way, so templated prompts are in
its training distribution. A prompt with no known word raises ``ValueError`` (it would silently be
unconditional).

Training texts: per image and step, the caption (``caption_fraction``), else the prompt of its leaf class
(``class_prompt_fraction``, e.g. "a red striped circle"), else the prompt of one of its positive attribute
concepts ("a circle", "a red", "a dotted", "a large", "on grass"), all from
:func:`~neuroneval.worlds.vision_concepts.concept_prompt` — the same phrases CoSy's explanations use, so
``p(x | "a circle")`` is learned directly rather than extrapolated from full captions.

Batch independence: image ``j`` depends only on ``(prompts[j], seeds[j])``, the checkpoint and the sampling knobs.
CPU kernels are not batch-size invariant (≈1e-6 differences), so every UNet call runs on exactly ``batch_size``
images (the last chunk is padded); with fixed shapes each row's result is bitwise independent of its position
and of the other rows. ``batch_size`` is therefore part of :meth:`EmbeddedDiffusionGenerator.config`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from diffusers import DDIMScheduler, DDPMScheduler, UNet2DConditionModel
from open_clip.transformer import text_global_pool

from neuroneval.cosy.image_generator import check_request
from neuroneval.cosy.options import EmbeddedTrainingOptions
from neuroneval.cosy.prompts import TEMPLATES
from neuroneval.io import staging_directory, swap_directory, write_json
from neuroneval.models.clip import CaptionTokenizer, load_clip
from neuroneval.models.training import fit
from neuroneval.progress import progress_bar

DEFAULT_CONFIG: dict[str, Any] = EmbeddedTrainingOptions().to_config()
"""Model, training and text-mixing knobs of :func:`train_embedded_diffusion`: the defaults of
:class:`~neuroneval.cosy.options.EmbeddedTrainingOptions` (the one source of truth), as a JSON-able mapping."""

ATTRIBUTE_PREFIXES = ("shape:", "colour:", "texture:", "size:", "scene:")
"""Label concepts whose prompts train the single-attribute conditioning ("a circle", "a red", "on grass")."""

UNET_DIR = "unet"
SCHEDULER_DIR = "scheduler"
TEXT_ENCODER_DIR = "text_encoder"
CLIP_FILE = "clip.pt"
MODEL_CARD = "embedded_diffusion.json"
TRAINING_REPORT = "training_report.json"


def conditioning_text(prompt: str, tokenizer: CaptionTokenizer) -> str:
    """The words of ``prompt`` the caption tokenizer knows, lower-cased, in order; the others are dropped.

    >>> tokenizer = CaptionTokenizer(["a", "circle", "of", "photo", "red"], context_length=8)
    >>> conditioning_text("realistic photo of a close up of a red circle", tokenizer)
    'photo of a of a red circle'

    Raises ``ValueError`` when the prompt is empty or has no known word.
    """
    words = str(prompt).lower().split()
    if not words:
        raise ValueError("empty prompt: the embedded generator needs at least one caption word")
    known = [word for word in words if word in tokenizer.index]
    if not known:
        raise ValueError(f"prompt {prompt!r} has no word of the caption vocabulary ({len(tokenizer.words)} words, "
                         f"e.g. {tokenizer.words[:5]}); the embedded generator cannot condition on it")
    return " ".join(known)


class TextConditioner:
    """The frozen CLIP text tower as the UNet's conditioning: token states, their mask and the pooled embedding."""

    def __init__(self, clip_model: torch.nn.Module, tokenizer: CaptionTokenizer) -> None:
        self.model = clip_model.eval().requires_grad_(False)
        self.tokenizer = tokenizer
        self.width = int(clip_model.token_embedding.embedding_dim)
        self.embed_dim = int(clip_model.text_projection.shape[1])

    def to(self, device: str) -> TextConditioner:
        self.model.to(device)
        return self

    @torch.no_grad()
    def encode(self, texts: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(states (B, L, width), mask (B, L) 0/1 float, pooled (B, embed_dim))`` of already-filtered texts."""
        model = self.model
        device = model.token_embedding.weight.device
        tokens = self.tokenizer(list(texts)).to(device)
        states = model.token_embedding(tokens) + model.positional_embedding
        states = model.ln_final(model.transformer(states, attn_mask=model.attn_mask))
        pooled = text_global_pool(states, tokens, model.text_pool_type) @ model.text_projection
        pooled = torch.nn.functional.normalize(pooled, dim=-1) * math.sqrt(pooled.shape[-1])
        end = (tokens == self.tokenizer.end_id).int().argmax(dim=1, keepdim=True)
        mask = (torch.arange(tokens.shape[1], device=device)[None, :] <= end).float()
        return states, mask, pooled


def build_unet(config: EmbeddedTrainingOptions, *, text_width: int, embed_dim: int) -> UNet2DConditionModel:
    """The ``UNet2DConditionModel`` of ``config``: cross-attention at ``attention_levels``, pooled text projection."""
    channels = tuple(int(width) for width in config.block_out_channels)
    levels = [bool(flag) for flag in config.attention_levels]
    if len(levels) != len(channels):
        raise ValueError(f"attention_levels ({len(levels)}) and block_out_channels ({len(channels)}) differ in length")
    down = tuple("CrossAttnDownBlock2D" if flag else "DownBlock2D" for flag in levels)
    up = tuple("CrossAttnUpBlock2D" if flag else "UpBlock2D" for flag in reversed(levels))
    return UNet2DConditionModel(
        sample_size=int(config.image_size), in_channels=3, out_channels=3, block_out_channels=channels,
        layers_per_block=int(config.layers_per_block), down_block_types=down, up_block_types=up,
        mid_block_type="UNetMidBlock2DCrossAttn" if levels[-1] else "UNetMidBlock2D",
        cross_attention_dim=text_width, attention_head_dim=int(config.attention_head_dim),
        norm_num_groups=int(config.norm_num_groups), class_embed_type="projection",
        projection_class_embeddings_input_dim=embed_dim)


class _TrainingTexts:
    """Draws each training image's text: caption, class prompt or attribute prompt, maybe templated, maybe ∅."""

    def __init__(self, world: Any, tokenizer: CaptionTokenizer, config: EmbeddedTrainingOptions) -> None:
        from neuroneval.worlds.vision_concepts import concept_prompt

        self.captions = list(world.captions)
        self.class_prompts = [concept_prompt(name) for name in world.class_names]
        self.class_index = np.asarray(world.class_index)
        columns = [column for column in world.labels.columns if column.startswith(ATTRIBUTE_PREFIXES)]
        self.attribute_prompts = [concept_prompt(column) for column in columns]
        self.attribute_labels = world.labels[columns].to_numpy() > 0.5
        self.templates = [pattern for pattern in TEMPLATES.values()]
        self.tokenizer = tokenizer
        self.config = config
        self.rng = np.random.default_rng([int(config.seed), 0x7E47])

    def __call__(self, indices: np.ndarray) -> list[str]:
        config, rng = self.config, self.rng
        texts = []
        for index in indices:
            source, template_draw, dropout_draw = rng.random(3)
            if source < config.caption_fraction:
                text = self.captions[index]
            elif source < config.caption_fraction + config.class_prompt_fraction:
                text = self.class_prompts[self.class_index[index]]
            else:
                positives = np.flatnonzero(self.attribute_labels[index])
                text = self.attribute_prompts[positives[rng.integers(len(positives))]] if len(positives) else ""
            if text and template_draw < config.template_fraction:
                text = self.templates[rng.integers(len(self.templates))].replace("{concept}", text)
            if dropout_draw < config.cond_dropout or not text:
                texts.append("")
            else:
                texts.append(conditioning_text(text, self.tokenizer))
        return texts


def images_to_unit_range(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, 3) uint8 → (N, 3, H, W) float32 in [−1, 1]."""
    return torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float() / 127.5 - 1.0


def unit_range_to_images(samples: torch.Tensor) -> np.ndarray:
    """(N, 3, H, W) float in [−1, 1] (clamped) → (N, H, W, 3) uint8, rounding to the nearest level."""
    levels = ((samples.clamp(-1.0, 1.0) + 1.0) * 127.5).round().to(torch.uint8)
    return levels.permute(0, 2, 3, 1).cpu().numpy()


@contextlib.contextmanager
def _atomic_directory(target: Path) -> Iterator[Path]:
    """Yield a staging sibling directory; it replaces ``target`` with the modes of any other output only if the
    block succeeds, else is removed (:func:`neuroneval.io.staging_directory`, :func:`neuroneval.io.swap_directory`)."""
    staging = staging_directory(target)
    try:
        yield staging
        swap_directory(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _hashed_bytes(path: Path) -> bytes:
    """A checkpoint file's bytes as :func:`checkpoint_sha256` hashes them: a JSON card without its wall-clock fields
    (keys ending in ``_seconds``, e.g. the copied CLIP card's ``train_seconds``), canonically dumped; else as is."""
    if path.suffix != ".json":
        return path.read_bytes()
    card = json.loads(path.read_text())
    if isinstance(card, dict):
        card = {key: value for key, value in card.items() if not str(key).endswith("_seconds")}
    return json.dumps(card, sort_keys=True).encode()


def checkpoint_sha256(checkpoint_dir: str | Path) -> str:
    """SHA-256 over the checkpoint's files (relative path and bytes, sorted), the training report excluded and the
    JSON cards without their wall-clock fields, so a retrained (same seed, same weights) checkpoint hashes the same."""
    root = Path(checkpoint_dir)
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and p.name != TRAINING_REPORT):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(_hashed_bytes(path))
    return digest.hexdigest()


def train_embedded_diffusion(world_dir: str | Path, clip_checkpoint: str | Path, out_dir: str | Path,
                             config: EmbeddedTrainingOptions) -> dict[str, Any]:
    """Train the text-conditional UNet on a saved vision world and write a self-contained checkpoint folder.

    Parameters
    ----------
    world_dir
        A split saved by :func:`~neuroneval.worlds.save_vision_world` (images, captions, labels).
    clip_checkpoint
        The tiny CLIP of :func:`~neuroneval.models.clip.save_clip` (its ``.json`` card beside it); frozen.
    out_dir
        The checkpoint folder: ``unet/`` (``save_pretrained``), ``scheduler/`` (DDPM config), ``text_encoder/``
        (a copy of the CLIP checkpoint and card), ``embedded_diffusion.json`` (config) and ``training_report.json``.
        Written in a temporary sibling and renamed, so a failure leaves no half-written folder.
    config
        Model, training and text-mixing options (``cosy.embedded.training``).

    Returns
    -------
    dict
        JSON-able report: ``steps``, ``seconds``, ``seconds_per_step``, ``final_loss``, ``parameters``,
        ``train_images``, ``torch_threads``.

    Objective: ε-prediction MSE of DDPM with the text dropped to ∅ with probability ``cond_dropout`` (see the
    module docstring). Deterministic for a given config, world, CLIP and thread count: ``torch.manual_seed(seed)``
    before initialisation, batch order and noise from the seed (:func:`~neuroneval.models.training.fit`).
    """
    from neuroneval.worlds import load_vision_world

    world_dir, clip_checkpoint, out_dir = Path(world_dir), Path(clip_checkpoint), Path(out_dir)
    if not clip_checkpoint.is_file() or not clip_checkpoint.with_suffix(".json").is_file():
        raise ValueError(f"CLIP checkpoint {clip_checkpoint} (and its .json card) not found")
    world = load_vision_world(world_dir)
    if world.images.shape[1:] != (config.image_size, config.image_size, 3):
        raise ValueError(f"world images have shape {world.images.shape[1:]}, config image_size is "
                         f"{config.image_size}")
    clip_model, tokenizer, _ = load_clip(clip_checkpoint)
    conditioner = TextConditioner(clip_model, tokenizer)
    torch.manual_seed(int(config.seed))
    unet = build_unet(config, text_width=conditioner.width, embed_dim=conditioner.embed_dim)
    noise_scheduler = DDPMScheduler(num_train_timesteps=int(config.num_train_timesteps),
                                    beta_schedule=config.beta_schedule, prediction_type="epsilon")
    alphas_cumprod = noise_scheduler.alphas_cumprod
    texts_for = _TrainingTexts(world, tokenizer, config)
    images = world.images

    def batch_loss(indices: np.ndarray) -> torch.Tensor:
        clean = images_to_unit_range(images[indices])
        noise = torch.randn_like(clean)
        timesteps = torch.randint(0, int(config.num_train_timesteps), (len(indices),))
        alpha_bar = alphas_cumprod[timesteps].view(-1, 1, 1, 1)
        noisy = alpha_bar.sqrt() * clean + (1.0 - alpha_bar).sqrt() * noise
        states, mask, pooled = conditioner.encode(texts_for(indices))
        predicted = unet(noisy, timesteps, encoder_hidden_states=states, class_labels=pooled,
                         encoder_attention_mask=mask).sample
        return torch.nn.functional.mse_loss(predicted, noise)

    started = time.perf_counter()
    final_loss = fit(unet, len(images), batch_loss, epochs=int(config.epochs),
                     batch_size=int(config.batch_size), learning_rate=float(config.learning_rate),
                     weight_decay=float(config.weight_decay), seed=int(config.seed),
                     desc="train embedded diffusion")
    seconds = time.perf_counter() - started
    steps = int(config.epochs) * math.ceil(len(images) / int(config.batch_size))
    report = {"steps": steps, "seconds": round(seconds, 1), "seconds_per_step": round(seconds / steps, 3),
              "final_loss": final_loss, "parameters": sum(p.numel() for p in unet.parameters()),
              "train_images": len(images), "torch_threads": torch.get_num_threads()}
    with _atomic_directory(out_dir) as staging:
        unet.save_pretrained(staging / UNET_DIR, safe_serialization=True)
        noise_scheduler.save_pretrained(staging / SCHEDULER_DIR)
        (staging / TEXT_ENCODER_DIR).mkdir()
        shutil.copyfile(clip_checkpoint, staging / TEXT_ENCODER_DIR / CLIP_FILE)
        shutil.copyfile(clip_checkpoint.with_suffix(".json"),
                        (staging / TEXT_ENCODER_DIR / CLIP_FILE).with_suffix(".json"))
        write_json(staging / MODEL_CARD, {"architecture": "embedded_text_diffusion", "config": config.to_config(),
                                          "text_width": conditioner.width, "embed_dim": conditioner.embed_dim})
        write_json(staging / TRAINING_REPORT, report)
    return report


class EmbeddedDiffusionGenerator:
    """Text-to-image generation with a checkpoint of :func:`train_embedded_diffusion` (DDIM η = 0 + CFG).

    Parameters
    ----------
    checkpoint_dir
        The folder :func:`train_embedded_diffusion` wrote; nothing outside it is read.
    steps
        DDIM steps (trailing spacing over the T training timesteps).
    guidance_scale
        CFG weight ``w`` in ``ε̂ = ε(∅) + w (ε(c) − ε(∅))``; 1 = conditional only, 0 = unconditional.
    batch_size
        Images per UNet call; every call is padded to exactly this many (see the module docstring), so it is
        part of :meth:`config`.
    device
        Torch device for the UNet and the text tower; initial noise is always drawn on the CPU.
    """

    name = "embedded"

    def __init__(self, checkpoint_dir: str | Path, *, steps: int = 25, guidance_scale: float = 3.0,
                 batch_size: int = 64, device: str = "cpu") -> None:
        root = Path(checkpoint_dir)
        required = [root / UNET_DIR / "config.json", root / SCHEDULER_DIR / "scheduler_config.json",
                    root / TEXT_ENCODER_DIR / CLIP_FILE, root / MODEL_CARD]
        missing = [str(path.relative_to(root)) for path in required if not path.is_file()]
        if not root.is_dir() or missing:
            raise ValueError(f"embedded diffusion checkpoint {root} is missing "
                             f"{'the folder' if not root.is_dir() else missing}; train it with "
                             "train_embedded_diffusion")
        if int(steps) < 1:
            raise ValueError(f"steps must be >= 1, got {steps}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not math.isfinite(float(guidance_scale)) or float(guidance_scale) < 0:
            raise ValueError(f"guidance_scale must be finite and >= 0, got {guidance_scale}")
        self.checkpoint_dir = root
        self.steps, self.guidance_scale = int(steps), float(guidance_scale)
        self.batch_size, self.device = int(batch_size), str(device)
        self.card = json.loads((root / MODEL_CARD).read_text())
        self.unet = UNet2DConditionModel.from_pretrained(root / UNET_DIR, local_files_only=True,
                                                         low_cpu_mem_usage=False).eval()
        self.unet.requires_grad_(False).to(self.device)
        clip_model, tokenizer, _ = load_clip(root / TEXT_ENCODER_DIR / CLIP_FILE)
        self.conditioner = TextConditioner(clip_model, tokenizer).to(self.device)
        self.scheduler = DDIMScheduler.from_config(DDPMScheduler.load_config(root / SCHEDULER_DIR),
                                                   timestep_spacing="trailing", clip_sample=True,
                                                   set_alpha_to_one=True)
        self.sha256 = checkpoint_sha256(root)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "checkpoint_sha256": self.sha256, "steps": self.steps,
                "guidance_scale": self.guidance_scale, "batch_size": self.batch_size, "sampler": "ddim",
                "eta": 0.0, "timestep_spacing": "trailing", "image_size": int(self.unet.config.sample_size)}

    def conditioning_text(self, prompt: str) -> str:
        """What the text tower sees of ``prompt`` (unknown words dropped, see :func:`conditioning_text`)."""
        return conditioning_text(prompt, self.conditioner.tokenizer)

    def initial_noise(self, seed: int) -> torch.Tensor:
        """(3, H, W) standard normal noise of one image, from ``torch.Generator().manual_seed(seed)``."""
        size = int(self.unet.config.sample_size)
        return torch.randn((3, size, size), generator=torch.Generator().manual_seed(int(seed)))

    @torch.no_grad()
    def predict_noise(self, samples: torch.Tensor, timestep: torch.Tensor | int,
                      condition: tuple[torch.Tensor, torch.Tensor, torch.Tensor],
                      null_condition: tuple[torch.Tensor, torch.Tensor, torch.Tensor]) -> torch.Tensor:
        """Guided ε̂ for a batch (CFG formula of the module docstring); w = 1 runs the conditional pass only."""
        weight = self.guidance_scale
        if weight == 1.0 or weight == 0.0:
            states, mask, pooled = condition if weight == 1.0 else null_condition
            return self.unet(samples, timestep, encoder_hidden_states=states, class_labels=pooled,
                             encoder_attention_mask=mask).sample
        states, mask, pooled = (torch.cat([cond, null]) for cond, null in zip(condition, null_condition, strict=True))
        both = self.unet(torch.cat([samples, samples]), timestep, encoder_hidden_states=states, class_labels=pooled,
                         encoder_attention_mask=mask).sample
        conditional, unconditional = both.chunk(2)
        return unconditional + weight * (conditional - unconditional)

    @torch.no_grad()
    def sample(self, noise: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """DDIM from ``noise`` (B, 3, H, W) for filtered ``texts`` (``""`` = ∅); returns samples in [−1, 1]."""
        condition = self.conditioner.encode(texts)
        null_condition = self.conditioner.encode([""] * len(texts))
        scheduler = DDIMScheduler.from_config(self.scheduler.config)
        scheduler.set_timesteps(self.steps)
        samples = noise.to(self.device)
        for timestep in scheduler.timesteps:
            predicted = self.predict_noise(samples, timestep, condition, null_condition)
            samples = scheduler.step(predicted, timestep, samples, eta=0.0).prev_sample
        return samples.clamp(-1.0, 1.0)

    def generate(self, prompts: Sequence[str], seeds: Sequence[int]) -> np.ndarray:
        """``(len(prompts), H, W, 3)`` uint8 RGB; image ``j`` depends only on ``(prompts[j], seeds[j])``.

        Raises ``ValueError`` for mismatched lengths, an empty list, an empty prompt, a prompt without a caption
        word, or a seed outside [0, 2**64).
        """
        prompts, seeds = check_request(prompts, seeds)
        texts = [self.conditioning_text(prompt) for prompt in prompts]
        noise = torch.stack([self.initial_noise(seed) for seed in seeds])
        images = []
        chunk_starts = range(0, len(prompts), self.batch_size)
        for start in progress_bar(chunk_starts, desc="embedded diffusion", unit="batch"):
            chunk_noise = noise[start : start + self.batch_size]
            chunk_texts = texts[start : start + self.batch_size]
            padding = self.batch_size - len(chunk_texts)
            if padding:
                chunk_noise = torch.cat([chunk_noise, torch.zeros((padding, *chunk_noise.shape[1:]))])
                chunk_texts = chunk_texts + [""] * padding
            samples = self.sample(chunk_noise, chunk_texts)
            images.append(unit_range_to_images(samples[: len(chunk_texts) - padding]))
        return np.concatenate(images)
