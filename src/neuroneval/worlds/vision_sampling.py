"""Per-image randomness of the vision world and its mapping to attributes, pixels and attribute tables.

Image ``i`` of a split draws a fixed block of ``N_UNIFORMS`` uniforms and then its pixel noise from
``np.random.default_rng([seed, split_code(split), i])``; each attribute reads its own fixed positions of the
block, so a knob never shifts another attribute's random numbers and any range of images can be rendered alone.
Everything after the draw is vectorised over a batch.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.io import ID_COLUMN
from neuroneval.worlds import render
from neuroneval.worlds.vision_concepts import COLOUR_NAMES, ClassCatalogue

MAX_DISTRACTORS = 2
DISTRACTOR_SHAPES = 3
"""Distractors take one of the first three shapes (circle, square, triangle): recognisable at a few pixels."""
SMALL_RADIUS = (0.17, 0.22)
LARGE_RADIUS = (0.29, 0.36)
DISTRACTOR_RADIUS = (0.08, 0.11)
"""Object radii as fractions of the image side (uniform within the range)."""
PLACEMENT_TRIES = 6

# Per-image block of uniforms: fixed positions, so a knob never shifts another attribute's random numbers.
U_CLASS, U_SIZE, U_RADIUS, U_X, U_Y, U_ROTATION, U_SCENE = range(7)
U_SCENE_VARIATION = slice(7, 9)
U_COLOUR_JITTER = slice(9, 12)
U_TEXTURE_PHASE = slice(12, 14)
U_BRIGHTNESS = 14
U_CAPTION = slice(15, 20)
U_DISTRACTOR_BASE, U_DISTRACTOR_STRIDE = 20, 20
N_UNIFORMS = U_DISTRACTOR_BASE + MAX_DISTRACTORS * U_DISTRACTOR_STRIDE


def split_code(split: str) -> int:
    """The random-stream code of a split name (CRC-32 of its UTF-8 bytes; stable across runs and machines)."""
    return zlib.crc32(split.encode("utf-8"))


def draw_randomness(indices: np.ndarray, seed: int, code: int, image_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each image's uniforms (B, N_UNIFORMS) and standard-normal pixel noise (B, H, W, 3), from its own stream."""
    uniforms = np.empty((len(indices), N_UNIFORMS), dtype=np.float64)
    noise = np.empty((len(indices), image_size, image_size, 3), dtype=np.float32)
    for row, index in enumerate(indices):
        rng = np.random.default_rng([seed, code, int(index)])
        uniforms[row] = rng.random(N_UNIFORMS)
        noise[row] = rng.standard_normal((image_size, image_size, 3), dtype=np.float32)
    return uniforms, noise


def scene_cdf(scene_weights: Sequence[float] | None, n_scenes: int) -> np.ndarray:
    """Cumulative scene distribution: ``cumsum(w / sum(w))`` over the ``n_scenes`` scenes (uniform when None).

    Image scenes are drawn by inverse transform, ``searchsorted(cdf, u)`` of the uniform ``U_SCENE``.

    >>> scene_cdf(None, 4).tolist()
    [0.25, 0.5, 0.75, 1.0]
    """
    if scene_weights is None:
        weights = np.ones(n_scenes)
    else:
        weights = np.asarray(scene_weights, dtype=np.float64)
        if weights.shape != (n_scenes,) or not np.all(np.isfinite(weights)) or weights.min() < 0 or weights.sum() <= 0:
            raise ValueError(f"scene_weights must be {n_scenes} non-negative numbers (one per scene) with a positive "
                             f"sum, got {scene_weights!r}")
    return np.cumsum(weights / weights.sum())


def jittered_colours(colour_index: np.ndarray, uniforms: np.ndarray, jitter: float) -> np.ndarray:
    """Object RGB: the catalogue colour plus ``jitter · (2u − 1)`` per channel (float32), clipped to [0, 255]."""
    colours = render.COLOUR_TABLE[colour_index] + np.float32(jitter) * (2 * uniforms.astype(np.float32) - 1)
    return np.clip(colours, 0, 255)


def sample_attributes(
    uniforms: np.ndarray, catalogue: ClassCatalogue, knobs: Mapping[str, Any], scene_cdf: np.ndarray
) -> dict[str, np.ndarray]:
    """Map each image's uniforms to its attributes (vectorised over the batch)."""
    size = float(knobs["image_size"])
    n_rows = len(uniforms)
    cumulative = np.cumsum(catalogue.prior)
    class_index = np.minimum(np.searchsorted(cumulative, uniforms[:, U_CLASS] * cumulative[-1], side="right"),
                             len(cumulative) - 1).astype(np.int64)
    large = uniforms[:, U_SIZE] < knobs["p_large"]
    low = np.where(large, LARGE_RADIUS[0], SMALL_RADIUS[0]) * size
    high = np.where(large, LARGE_RADIUS[1], SMALL_RADIUS[1]) * size
    radius = low + (high - low) * uniforms[:, U_RADIUS]
    free = size / 2 - radius - 0.5
    centre_x = size / 2 + knobs["position_jitter"] * free * (2 * uniforms[:, U_X] - 1)
    centre_y = size / 2 + knobs["position_jitter"] * free * (2 * uniforms[:, U_Y] - 1)
    attributes: dict[str, np.ndarray] = {
        "class_index": class_index,
        "shape": catalogue.shape[class_index],
        "colour": catalogue.colour[class_index],
        "texture": catalogue.texture[class_index],
        "large": large,
        "radius": radius,
        "centre_x": centre_x,
        "centre_y": centre_y,
        "rotation": np.deg2rad(knobs["rotation_jitter"]) * (2 * uniforms[:, U_ROTATION] - 1),
        "scene": np.minimum(np.searchsorted(scene_cdf, uniforms[:, U_SCENE], side="right"), len(scene_cdf) - 1),
        "scene_variation": uniforms[:, U_SCENE_VARIATION],
        "rgb": jittered_colours(catalogue.colour[class_index], uniforms[:, U_COLOUR_JITTER], knobs["colour_jitter"]),
        "texture_phase": uniforms[:, U_TEXTURE_PHASE].astype(np.float32),
        "brightness": 1 + knobs["brightness_jitter"] * (2 * uniforms[:, U_BRIGHTNESS] - 1),
        "caption_choices": uniforms[:, U_CAPTION],
    }
    n_distractor_shapes = min(DISTRACTOR_SHAPES, knobs["n_shapes"])
    slots = {key: [] for key in ("present", "shape", "colour", "radius", "centre_x", "centre_y", "rotation", "rgb")}
    for slot in range(MAX_DISTRACTORS):
        block = uniforms[:, U_DISTRACTOR_BASE + slot * U_DISTRACTOR_STRIDE:][:, :U_DISTRACTOR_STRIDE]
        wanted = (slot < knobs["max_distractors"]) & (block[:, 0] < knobs["distractor_prob"])
        d_colour = np.minimum((block[:, 2] * knobs["n_colours"]).astype(np.int64), knobs["n_colours"] - 1)
        d_radius = (DISTRACTOR_RADIUS[0] + (DISTRACTOR_RADIUS[1] - DISTRACTOR_RADIUS[0]) * block[:, 3]) * size
        span = size - 2 * d_radius[:, None] - 1
        candidates_x = d_radius[:, None] + 0.5 + span * block[:, 8 : 8 + PLACEMENT_TRIES]
        candidates_y = d_radius[:, None] + 0.5 + span * block[:, 8 + PLACEMENT_TRIES : 8 + 2 * PLACEMENT_TRIES]
        clear = np.hypot(candidates_x - centre_x[:, None], candidates_y - centre_y[:, None]) >= (
            radius + d_radius + 1)[:, None]
        for earlier in range(slot):
            clear &= ~slots["present"][earlier][:, None] | (
                np.hypot(candidates_x - slots["centre_x"][earlier][:, None],
                         candidates_y - slots["centre_y"][earlier][:, None])
                >= (slots["radius"][earlier] + d_radius + 1)[:, None])
        choice = np.argmax(clear, axis=1)
        rows = np.arange(n_rows)
        slots["present"].append(wanted & clear.any(axis=1))
        slots["shape"].append(np.minimum((block[:, 1] * n_distractor_shapes).astype(np.int64), n_distractor_shapes - 1))
        slots["colour"].append(d_colour)
        slots["radius"].append(d_radius)
        slots["centre_x"].append(candidates_x[rows, choice])
        slots["centre_y"].append(candidates_y[rows, choice])
        slots["rotation"].append(np.deg2rad(knobs["rotation_jitter"]) * (2 * block[:, 7] - 1))
        slots["rgb"].append(jittered_colours(d_colour, block[:, 4:7], knobs["colour_jitter"]))
    for key, values in slots.items():
        attributes[f"distractor_{key}"] = np.stack(values, axis=1)
    return attributes


def render_batch(
    attributes: Mapping[str, np.ndarray], noise: np.ndarray, knobs: Mapping[str, Any]
) -> tuple[np.ndarray, np.ndarray]:
    """Images (B, H, W, 3) uint8 and masks (B, H, W) uint8 of a batch of sampled attributes."""
    size = knobs["image_size"]
    y, x = render.pixel_grid(size)
    canvas = render.render_backgrounds(attributes["scene"], attributes["scene_variation"], size)
    masks = np.zeros(canvas.shape[:3], dtype=np.uint8)
    period = max(3.0, size / 8)
    for slot in range(MAX_DISTRACTORS):
        distractor = {
            "present": attributes["distractor_present"][:, slot],
            "shape": attributes["distractor_shape"][:, slot],
            "texture": np.zeros(len(canvas), dtype=np.int64),
            "colour": attributes["distractor_rgb"][:, slot],
            "centre_y": attributes["distractor_centre_y"][:, slot],
            "centre_x": attributes["distractor_centre_x"][:, slot],
            "radius": attributes["distractor_radius"][:, slot],
            "rotation": attributes["distractor_rotation"][:, slot],
            "texture_phase": attributes["texture_phase"],
        }
        render.paint_objects(canvas, masks, y, x, distractor, mask_value=2 + slot, texture_period=period)
    main = {
        "present": np.ones(len(canvas), dtype=bool),
        "shape": attributes["shape"],
        "texture": attributes["texture"],
        "colour": attributes["rgb"],
        "centre_y": attributes["centre_y"],
        "centre_x": attributes["centre_x"],
        "radius": attributes["radius"],
        "rotation": attributes["rotation"],
        "texture_phase": attributes["texture_phase"],
    }
    render.paint_objects(canvas, masks, y, x, main, mask_value=1, texture_period=period)
    return render.finish_images(canvas, attributes["brightness"], noise, knobs["noise_std"]), masks


def attribute_frame(
    input_ids: np.ndarray, attributes: Mapping[str, np.ndarray], class_names: Sequence[str]
) -> pd.DataFrame:
    """The raw attribute table of a batch (columns listed in :class:`~neuroneval.worlds.vision.VisionWorld`)."""
    columns: dict[str, Any] = {
        ID_COLUMN: input_ids.astype(np.int64),
        "class_index": attributes["class_index"].astype(np.int64),
        "class": [class_names[k].removeprefix("class:") for k in attributes["class_index"]],
        "shape": [render.SHAPES[k] for k in attributes["shape"]],
        "colour": [COLOUR_NAMES[k] for k in attributes["colour"]],
        "texture": [render.TEXTURES[k] for k in attributes["texture"]],
        "size": np.where(attributes["large"], "large", "small").tolist(),
        "scene": [render.SCENES[k] for k in attributes["scene"]],
        "radius": attributes["radius"].astype(np.float32),
        "centre_x": attributes["centre_x"].astype(np.float32),
        "centre_y": attributes["centre_y"].astype(np.float32),
        "rotation_deg": np.rad2deg(attributes["rotation"]).astype(np.float32),
        "n_distractors": attributes["distractor_present"].sum(axis=1).astype(np.int64),
    }
    present = attributes["distractor_present"]
    for slot in range(MAX_DISTRACTORS):
        prefix = f"distractor{slot + 1}_"
        on = present[:, slot]
        columns[prefix + "shape"] = [render.SHAPES[k] if p else "" for k, p in zip(
            attributes["distractor_shape"][:, slot], on, strict=True)]
        columns[prefix + "colour"] = [COLOUR_NAMES[k] if p else "" for k, p in zip(
            attributes["distractor_colour"][:, slot], on, strict=True)]
        for key in ("centre_x", "centre_y", "radius"):
            columns[prefix + key] = np.where(on, attributes[f"distractor_{key}"][:, slot], np.nan).astype(np.float32)
    return pd.DataFrame(columns)
