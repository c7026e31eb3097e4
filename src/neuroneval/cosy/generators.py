"""Text-to-image generators behind one interface (paper 002, Sec. 3 step 1): explanation prompt -> images.

Three backends, chosen by params (``cosy.generators``):

``oracle``
    The vision world's own procedural renderer. It reads the concept words out of the prompt (the template is
    stripped) and renders images that truly show that concept, every other attribute random from the image's
    seed. It checks the evaluation pipeline independently of generation quality.
``embedded``
    A small text-conditional diffusion model (diffusers) trained in the DAG on the world's captions
    (:mod:`neuroneval.cosy.embedded_diffusion`).
``diffusers``
    Any diffusers text-to-image pipeline from a local directory or hub id (SDXL in the paper profile).

Every backend keeps the contract of :class:`neuroneval.cosy.image_generator.ImageGenerator`; prompts are made
from explanations by :mod:`neuroneval.cosy.prompts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from neuroneval.cosy.image_generator import ImageGenerator, check_request
from neuroneval.cosy.options import EmbeddedDiffusionOptions, GeneratorOptions, generator_options
from neuroneval.cosy.prompts import strip_template


class OracleGenerator:
    """The vision world's renderer as a generator: images that show exactly the prompt's concept.

    Understood concept words (after the template and a leading article are stripped): an optional size
    (``small``/``little``/``large``/``big``), an optional colour, an optional texture adjective and an optional
    shape of the world's catalogues, in that order (``a red striped circle``, ``a circle``, ``an orange``,
    ``a large``), or a scene phrase of the captions (``on grass``). Whatever the prompt leaves open is random
    from the image's seed (the world's own per-image sampling), so "a circle" gives circles of every colour.

    Parameters
    ----------
    world_params
        The ``params`` of a :class:`~neuroneval.worlds.VisionWorld` (``classes.json``): image size, catalogue
        sizes and the rendering knobs.
    """

    name = "oracle"

    def __init__(self, world_params: Mapping[str, Any]) -> None:
        from neuroneval.worlds.vision_concepts import build_class_catalogue
        from neuroneval.worlds.vision_sampling import scene_cdf

        keys = ("seed", "image_size", "n_classes", "n_shapes", "n_colours", "n_textures", "n_scenes",
                "class_prior_ratio", "class_prior_power", "p_large", "position_jitter", "rotation_jitter",
                "max_distractors", "distractor_prob", "colour_jitter", "brightness_jitter", "noise_std")
        missing = [key for key in keys if key not in world_params]
        if missing:
            raise ValueError(f"OracleGenerator: world params lack {missing}; pass a VisionWorld's params")
        self.world_params = {key: world_params[key] for key in keys}
        self.world_params["scene_weights"] = world_params.get("scene_weights")
        self._catalogue = build_class_catalogue(
            int(world_params["n_classes"]), n_shapes=int(world_params["n_shapes"]),
            n_colours=int(world_params["n_colours"]), n_textures=int(world_params["n_textures"]),
            seed=int(world_params["seed"]), prior_ratio=float(world_params["class_prior_ratio"]),
            prior_power=float(world_params["class_prior_power"]))
        self._scene_cdf = scene_cdf(self.world_params["scene_weights"], int(world_params["n_scenes"]))

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "world": dict(self.world_params)}

    def parse(self, prompt: str) -> dict[str, int | bool]:
        """Attribute indices fixed by a prompt (``shape``, ``colour``, ``texture``, ``large``, ``scene``).

        Raises ``ValueError`` naming the prompt when its concept words are not a concept of the world.
        """
        from neuroneval.worlds.render import SCENES, SHAPES, TEXTURES
        from neuroneval.worlds.vision_concepts import COLOUR_NAMES, SCENE_PHRASES, SIZE_WORDS, TEXTURE_ADJECTIVES

        knobs = self.world_params
        words = strip_template(prompt).lower()
        for scene_index, scene in enumerate(SCENES[: int(knobs["n_scenes"])]):
            if words in SCENE_PHRASES[scene]:
                return {"scene": scene_index}
        tokens = words.split()
        if tokens and tokens[0] in ("a", "an", "the"):
            tokens = tokens[1:]
        fixed: dict[str, int | bool] = {}
        vocabularies = [
            ("large", {word: large for large, options in SIZE_WORDS.items() for word in options}),
            ("colour", {name: index for index, name in enumerate(COLOUR_NAMES[: int(knobs["n_colours"])])}),
            ("texture", {word: index for index, texture in enumerate(TEXTURES[: int(knobs["n_textures"])])
                         for word in TEXTURE_ADJECTIVES[texture]}),
            ("shape", {name: index for index, name in enumerate(SHAPES[: int(knobs["n_shapes"])])}),
        ]
        position = 0
        for attribute, vocabulary in vocabularies:
            if position < len(tokens) and tokens[position] in vocabulary:
                fixed[attribute] = vocabulary[tokens[position]]
                position += 1
        if not fixed or position != len(tokens):
            raise ValueError(
                f"oracle generator cannot render prompt {prompt!r}: concept words {words!r} are not "
                "'[size] [colour] [texture] [shape]' of the world's catalogues or a scene phrase")
        return fixed

    def generate(self, prompts: Sequence[str], seeds: Sequence[int]) -> np.ndarray:
        from neuroneval.worlds.vision_sampling import (
            LARGE_RADIUS,
            N_UNIFORMS,
            SMALL_RADIUS,
            U_RADIUS,
            U_X,
            U_Y,
            jittered_colours,
            render_batch,
            sample_attributes,
        )

        prompts, seeds = check_request(prompts, seeds)
        parsed = [self.parse(prompt) for prompt in prompts]
        knobs = self.world_params
        size = int(knobs["image_size"])
        uniforms = np.empty((len(prompts), N_UNIFORMS), dtype=np.float64)
        noise = np.empty((len(prompts), size, size, 3), dtype=np.float32)
        extra = np.empty((len(prompts), 3), dtype=np.float64)
        for row, seed in enumerate(seeds):
            rng = np.random.default_rng([seed % 2**32, seed >> 32, 0x0AC1E])
            uniforms[row] = rng.random(N_UNIFORMS)
            noise[row] = rng.standard_normal((size, size, 3), dtype=np.float32)
            extra[row] = rng.random(3)
        attributes = sample_attributes(uniforms, self._catalogue, knobs, self._scene_cdf)
        for row, fixed in enumerate(parsed):
            # attributes the prompt leaves open are uniform over the catalogue (not the class prior)
            attributes["shape"][row] = fixed.get("shape", int(extra[row, 0] * knobs["n_shapes"]))
            attributes["colour"][row] = fixed.get("colour", int(extra[row, 1] * knobs["n_colours"]))
            attributes["texture"][row] = fixed.get("texture", int(extra[row, 2] * knobs["n_textures"]))
            if "scene" in fixed:
                attributes["scene"][row] = fixed["scene"]
            if "large" in fixed:
                attributes["large"][row] = bool(fixed["large"])
        large = attributes["large"]
        low = np.where(large, LARGE_RADIUS[0], SMALL_RADIUS[0]) * size
        high = np.where(large, LARGE_RADIUS[1], SMALL_RADIUS[1]) * size
        attributes["radius"] = low + (high - low) * uniforms[:, U_RADIUS]
        free = size / 2 - attributes["radius"] - 0.5
        attributes["centre_x"] = size / 2 + knobs["position_jitter"] * free * (2 * uniforms[:, U_X] - 1)
        attributes["centre_y"] = size / 2 + knobs["position_jitter"] * free * (2 * uniforms[:, U_Y] - 1)
        attributes["rgb"] = jittered_colours(attributes["colour"], uniforms[:, 9:12], knobs["colour_jitter"])
        # distractors were placed around the class-prior object; re-placing them is not needed for a probe image,
        # so they are dropped where they would now overlap the (possibly larger) main object
        overlap = np.hypot(attributes["distractor_centre_x"] - attributes["centre_x"][:, None],
                           attributes["distractor_centre_y"] - attributes["centre_y"][:, None]) < (
            attributes["radius"][:, None] + attributes["distractor_radius"] + 1)
        attributes["distractor_present"] = attributes["distractor_present"] & ~overlap
        images, _ = render_batch(attributes, noise, {**knobs, "image_size": size})
        return images


class DiffusersGenerator:
    """Any diffusers text-to-image pipeline (SDXL, Stable Diffusion, a tiny local one) as a generator.

    Parameters
    ----------
    model
        A local directory written by ``save_pretrained`` or a hub id already in the local cache.
    steps, guidance_scale
        Denoising steps and classifier-free guidance scale.
    height, width
        Output resolution in pixels (``None``: the pipeline's default).
    dtype
        ``float32`` | ``float16`` | ``bfloat16`` (half precision only on a GPU).
    batch_size
        Prompts per pipeline call (memory only; each image has its own ``torch.Generator`` from its seed).
    device
        ``auto`` (CUDA when available) | ``cpu`` | ``cuda`` | ``cuda:<index>``.
    local_files_only
        Never touch the network (default ``True``: a hub id must already be cached).
    negative_prompt
        Optional negative prompt for every image.

    Notes
    -----
    Each image gets its own ``torch.Generator`` seeded with its seed, so its initial latent does not depend on
    the batch, and every pipeline call runs exactly ``batch_size`` images (the last chunk is padded), so kernels
    see one shape whatever the number of prompts. The bytes are reproducible for a fixed batch size, device and
    dtype (``batch_size`` is part of :meth:`config`); GPU kernels may differ between devices.
    """

    name = "diffusers"

    def __init__(self, model: str, *, steps: int = 30, guidance_scale: float = 5.0, height: int | None = None,
                 width: int | None = None, dtype: str = "float32", batch_size: int = 4, device: str = "auto",
                 local_files_only: bool = True, negative_prompt: str | None = None) -> None:
        import torch

        dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
        if dtype not in dtypes:
            raise ValueError(f"dtype must be one of {sorted(dtypes)}, got {dtype!r}")
        if int(steps) < 1 or int(batch_size) < 1:
            raise ValueError(f"steps and batch_size must be >= 1, got {steps} and {batch_size}")
        self.model = str(model)
        self.steps = int(steps)
        self.guidance_scale = float(guidance_scale)
        self.height = None if height is None else int(height)
        self.width = None if width is None else int(width)
        self.dtype = dtype
        self.batch_size = int(batch_size)
        self.negative_prompt = negative_prompt
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        self._pipeline = load_text_to_image_pipeline(
            self.model, torch_dtype=dtypes[dtype], local_files_only=local_files_only).to(self.device)
        self._pipeline.set_progress_bar_config(disable=True)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "pipeline": type(self._pipeline).__name__,
                "steps": self.steps, "guidance_scale": self.guidance_scale, "height": self.height,
                "width": self.width, "dtype": self.dtype, "batch_size": self.batch_size,
                "negative_prompt": self.negative_prompt}

    def generate(self, prompts: Sequence[str], seeds: Sequence[int]) -> np.ndarray:
        import torch

        prompts, seeds = check_request(prompts, seeds)
        parts = []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start : start + self.batch_size]
            batch_seeds = seeds[start : start + self.batch_size]
            real = len(batch)
            # every call runs exactly batch_size images (the last chunk padded with copies of its first image),
            # so kernels see one shape and an image does not depend on how many others share its call
            batch = batch + [batch[0]] * (self.batch_size - real)
            batch_seeds = batch_seeds + [batch_seeds[0]] * (self.batch_size - real)
            generators = [torch.Generator(device=self.device).manual_seed(seed) for seed in batch_seeds]
            extra = {} if self.negative_prompt is None else {"negative_prompt": [self.negative_prompt] * len(batch)}
            with torch.no_grad():
                output = self._pipeline(prompt=batch, num_inference_steps=self.steps,
                                        guidance_scale=self.guidance_scale, height=self.height, width=self.width,
                                        generator=generators, output_type="np", **extra)
            parts.append(to_uint8(np.asarray(output.images))[:real])
        return np.concatenate(parts)


def load_text_to_image_pipeline(model: str, *, torch_dtype: Any, local_files_only: bool = True) -> Any:
    """A diffusers text-to-image pipeline from a folder or cached hub id (the class its ``model_index.json`` names).

    Raises ``FileNotFoundError`` naming the model when it is neither a folder nor available offline.
    """
    from pathlib import Path

    import diffusers

    path = Path(model).expanduser()
    source = str(path) if path.exists() else model
    if not path.exists() and ("/" not in model or model.startswith((".", "/", "~"))):
        raise FileNotFoundError(f"diffusers model {model!r}: no such folder (and not a hub id)")
    try:
        return diffusers.AutoPipelineForText2Image.from_pretrained(
            source, dtype=torch_dtype, local_files_only=local_files_only)
    except (OSError, ValueError) as error:
        try:
            return diffusers.DiffusionPipeline.from_pretrained(
                source, dtype=torch_dtype, local_files_only=local_files_only)
        except (OSError, ValueError):
            raise FileNotFoundError(f"diffusers model {model!r} could not be loaded offline: {error}") from error


def to_uint8(images: np.ndarray) -> np.ndarray:
    """Float images in [0, 1] (N, H, W, 3) -> uint8, rounded to nearest."""
    images = np.asarray(images)
    if images.dtype == np.uint8:
        return images
    return np.clip(np.rint(images.astype(np.float64) * 255.0), 0, 255).astype(np.uint8)


def build_generator(name: str, options: GeneratorOptions = None, *, world_params: Mapping[str, Any] | None = None,
                    checkpoint: str | None = None) -> ImageGenerator:
    """A generator from its options (:meth:`~neuroneval.cosy.options.CosyOptions.generator_options`).

    ``oracle`` takes no options and needs ``world_params``; ``embedded`` needs the trained ``checkpoint`` folder
    and samples as ``options.sampling`` (:class:`~neuroneval.cosy.options.EmbeddedDiffusionOptions`, defaults
    when ``None``); ``diffusers`` loads ``options.model`` (:class:`~neuroneval.cosy.options.DiffusersOptions`).
    """
    options = generator_options(name, options)
    if name == "oracle":
        if world_params is None:
            raise ValueError("the oracle generator needs the vision world's params")
        return OracleGenerator(world_params)
    if isinstance(options, EmbeddedDiffusionOptions):
        if checkpoint is None:
            raise ValueError("the embedded generator needs its trained checkpoint folder")
        from neuroneval.cosy.embedded_diffusion import EmbeddedDiffusionGenerator

        sampling = options.sampling
        return EmbeddedDiffusionGenerator(checkpoint, steps=sampling.steps, guidance_scale=sampling.guidance_scale,
                                          batch_size=sampling.batch_size, device=sampling.device)
    if not options.model:
        raise ValueError("cosy.diffusers.model is empty: set the folder (or cached hub id) of the pipeline")
    return DiffusersGenerator(options.model, steps=options.steps, guidance_scale=options.guidance_scale,
                              height=options.height, width=options.width, dtype=options.dtype,
                              batch_size=options.batch_size, device=options.device,
                              local_files_only=options.local_files_only, negative_prompt=options.negative_prompt)
