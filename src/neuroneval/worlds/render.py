"""Drawing the vision world: shapes by analytic inequalities, textures, background scenes, composition.

Everything works on a batch of images at once with numpy coordinate grids: a shape is the set of pixels whose
object-local coordinates satisfy an inequality, so masks are exact and rendering needs no per-pixel loops.
Pixel centres sit at ``(i + 0.5, j + 0.5)``; ``y`` grows downwards.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

SHAPES: tuple[str, ...] = ("circle", "square", "triangle", "cross", "ring", "diamond", "star", "crescent")
"""Main-object shapes, in catalogue order (``n_shapes`` takes the first ones)."""

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (215, 40, 40),
    "orange": (245, 140, 25),
    "yellow": (240, 220, 40),
    "green": (40, 175, 60),
    "blue": (35, 75, 215),
    "purple": (140, 55, 195),
    "pink": (245, 125, 195),
    "white": (245, 245, 245),
    "cyan": (40, 205, 215),
    "black": (20, 20, 20),
}
"""Object colours (RGB), in catalogue order (``n_colours`` takes the first ones)."""

TEXTURES: tuple[str, ...] = ("solid", "striped", "dotted", "checked")
"""Surface patterns of the main object, in catalogue order (``n_textures`` takes the first ones)."""

SCENES: tuple[str, ...] = ("sky", "grass", "sand", "water", "indoor")
"""Background scenes, in catalogue order (``n_scenes`` takes the first ones)."""

COLOUR_TABLE = np.array(list(COLOURS.values()), dtype=np.float32)
TWO_PI = np.float32(2.0 * np.pi)


def pixel_grid(image_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates ``(y, x)``, each of shape ``(1, image_size, image_size)`` (float32)."""
    centres = np.arange(image_size, dtype=np.float32) + np.float32(0.5)
    return centres[None, :, None], centres[None, None, :]


def local_coordinates(
    y: np.ndarray, x: np.ndarray, centre_y: np.ndarray, centre_x: np.ndarray, rotation: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Object-local pixel offsets ``(u, v)`` (rotated by ``-rotation`` radians), shape ``(B, H, W)``."""
    dy = y - centre_y[:, None, None]
    dx = x - centre_x[:, None, None]
    cos = np.cos(rotation)[:, None, None].astype(np.float32)
    sin = np.sin(rotation)[:, None, None].astype(np.float32)
    return dx * cos + dy * sin, dy * cos - dx * sin


def shape_mask(shape: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Pixels inside ``shape`` given local coordinates scaled to the object radius (unit circle = extent).

    Every shape lies inside the unit disc, so its radius bounds its extent (used to place distractors).
    """
    if shape == "circle":
        return u * u + v * v <= 1.0
    if shape == "square":
        return np.maximum(np.abs(u), np.abs(v)) <= 0.75
    if shape == "triangle":
        return (v <= 0.55) & (np.float32(np.sqrt(3.0)) * np.abs(u) <= v + 1.0)
    if shape == "cross":
        au, av = np.abs(u), np.abs(v)
        return ((au <= 0.3) & (av <= 0.95)) | ((av <= 0.3) & (au <= 0.95))
    if shape == "ring":
        squared = u * u + v * v
        return (squared <= 1.0) & (squared >= 0.3)
    if shape == "diamond":
        return np.abs(u) + np.abs(v) <= 1.0
    if shape == "star":
        radius = np.sqrt(u * u + v * v)
        turns = (np.arctan2(u, -v) / TWO_PI * 5.0) % 1.0
        spike = np.abs(turns - 0.5) * 2.0
        return radius <= 0.38 + 0.62 * spike**2
    if shape == "crescent":
        return (u * u + v * v <= 1.0) & ((u - 0.5) ** 2 + (v + 0.15) ** 2 > 0.55)
    raise ValueError(f"shape must be one of {SHAPES}, got {shape!r}")


def texture_pattern(texture: str, u: np.ndarray, v: np.ndarray, phase: np.ndarray, period: float) -> np.ndarray:
    """Pixels of the secondary colour of ``texture`` (local pixel offsets ``u, v``; ``phase`` in [0, 1), (B, 2))."""
    shift_u = (phase[:, 0] * period)[:, None, None]
    shift_v = (phase[:, 1] * period)[:, None, None]
    if texture == "solid":
        return np.zeros(u.shape, dtype=bool)
    if texture == "striped":
        return (u + shift_u) % period < period / 2
    if texture == "dotted":
        du = (u + shift_u) % period - period / 2
        dv = (v + shift_v) % period - period / 2
        return du * du + dv * dv <= (0.3 * period) ** 2
    if texture == "checked":
        cell = period / 2
        return (np.floor((u + shift_u) / cell) + np.floor((v + shift_v) / cell)) % 2 == 0
    raise ValueError(f"texture must be one of {TEXTURES}, got {texture!r}")


def secondary_colour(colour: np.ndarray) -> np.ndarray:
    """The pattern colour of a textured object: a dark shade of light colours, a light tint of dark ones."""
    luminance = colour @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    dark = colour * np.float32(0.35)
    light = colour + (255.0 - colour) * np.float32(0.6)
    return np.where((luminance > 120.0)[..., None], dark, light).astype(np.float32)


def background(scene: str, y: np.ndarray, x: np.ndarray, variation: np.ndarray) -> np.ndarray:
    """Background of ``scene`` for a batch, (B, H, W, 3) float32; ``variation`` (B, 2) in [0, 1) varies it."""
    size = np.float32(y.shape[1])
    ty = y / size
    a = variation[:, 0][:, None, None].astype(np.float32)
    b = variation[:, 1][:, None, None].astype(np.float32)
    if scene == "sky":
        top = np.array([70, 135, 215], dtype=np.float32)
        bottom = np.array([195, 222, 245], dtype=np.float32)
        mix = np.clip(ty * (0.7 + 0.6 * a) + 0.1 * np.sin(TWO_PI * (x / size + b)), 0.0, 1.0)[..., None]
        return top + (bottom - top) * mix
    if scene == "grass":
        base = np.array([62, 118, 48], dtype=np.float32)
        blades = np.sin(1.9 * x + 2.5 * np.sin(0.45 * y + TWO_PI * a) + TWO_PI * b)
        shade = 0.8 + 0.3 * ty + 0.15 * blades
        return base * shade[..., None]
    if scene == "sand":
        base = np.array([214, 188, 132], dtype=np.float32)
        ripples = np.sin(0.8 * (x + 0.6 * y) + TWO_PI * a)
        shade = 0.92 + 0.07 * ripples + 0.06 * (b - 0.5)
        return base * shade[..., None]
    if scene == "water":
        base = np.array([30, 88, 150], dtype=np.float32)
        waves = np.sin(1.2 * y + 1.6 * np.sin(0.35 * x + TWO_PI * a) + TWO_PI * b)
        shade = 0.85 + 0.25 * np.maximum(waves, 0.0) ** 3 + 0.2 * (1.0 - ty)
        return base * shade[..., None]
    if scene == "indoor":
        horizon = (0.4 + 0.2 * a) * size
        wall = np.array([178, 168, 152], dtype=np.float32)
        light_tile = np.array([118, 106, 94], dtype=np.float32)
        dark_tile = np.array([66, 58, 52], dtype=np.float32)
        cell = size / 8
        checker = ((np.floor(x / cell + b * 2) + np.floor(y / cell)) % 2 == 0)[..., None]
        floor = np.where(checker, light_tile, dark_tile)
        above = np.broadcast_to(y < horizon, floor.shape[:3])[..., None]
        return np.where(above, wall, floor).astype(np.float32)
    raise ValueError(f"scene must be one of {SCENES}, got {scene!r}")


def paint_objects(
    canvas: np.ndarray,
    masks: np.ndarray,
    y: np.ndarray,
    x: np.ndarray,
    objects: Mapping[str, np.ndarray],
    *,
    mask_value: int,
    texture_period: float,
) -> None:
    """Draw one object per image into ``canvas`` (B, H, W, 3) and ``masks`` (B, H, W), in place.

    ``objects`` holds per-image arrays: ``present`` (bool), ``shape``/``texture`` (catalogue indices into
    :data:`SHAPES`/:data:`TEXTURES`), ``colour`` (B, 3) float RGB, ``centre_y``, ``centre_x``, ``radius``,
    ``rotation`` (radians) and ``texture_phase`` (B, 2). Pixels inside the shape get the colour (or its
    secondary shade where the texture pattern is on) and ``mask_value`` in ``masks``.
    """
    rows = np.flatnonzero(np.asarray(objects["present"], dtype=bool))
    if rows.size == 0:
        return
    u, v = local_coordinates(y, x, objects["centre_y"][rows], objects["centre_x"][rows], objects["rotation"][rows])
    radius = objects["radius"][rows].astype(np.float32)[:, None, None]
    shapes, textures = objects["shape"][rows], objects["texture"][rows]
    inside = np.zeros(u.shape, dtype=bool)
    pattern = np.zeros(u.shape, dtype=bool)
    for shape_index in np.unique(shapes):
        group = shapes == shape_index
        inside[group] = shape_mask(SHAPES[shape_index], u[group] / radius[group], v[group] / radius[group])
    for texture_index in np.unique(textures):
        group = textures == texture_index
        if TEXTURES[texture_index] != "solid":
            pattern[group] = texture_pattern(TEXTURES[texture_index], u[group], v[group],
                                             objects["texture_phase"][rows][group], texture_period)
    colour = objects["colour"][rows].astype(np.float32)
    paint = np.where(pattern[..., None], secondary_colour(colour)[:, None, None, :], colour[:, None, None, :])
    everyone = rows.size == len(canvas)
    target_canvas = canvas if everyone else canvas[rows]
    target_masks = masks if everyone else masks[rows]
    np.copyto(target_canvas, paint, where=inside[..., None])
    target_masks[inside] = mask_value
    if not everyone:
        canvas[rows] = target_canvas
        masks[rows] = target_masks


def render_backgrounds(scene: np.ndarray, variation: np.ndarray, image_size: int) -> np.ndarray:
    """Backgrounds of a batch, (B, H, W, 3) float32, from scene indices into :data:`SCENES`."""
    y, x = pixel_grid(image_size)
    canvas = np.empty((len(scene), image_size, image_size, 3), dtype=np.float32)
    for scene_index, scene_name in enumerate(SCENES):
        rows = np.flatnonzero(scene == scene_index)
        if rows.size:
            canvas[rows] = background(scene_name, y, x, variation[rows])
    return canvas


def finish_images(canvas: np.ndarray, brightness: np.ndarray, noise: np.ndarray, noise_std: float) -> np.ndarray:
    """Apply per-image brightness and pixel noise, round and clip to uint8 (B, H, W, 3)."""
    shaded = canvas * brightness.astype(np.float32)[:, None, None, None] + noise * np.float32(noise_std)
    return np.clip(np.rint(shaded), 0, 255).astype(np.uint8)
