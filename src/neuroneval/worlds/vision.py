"""The embedded vision world: procedurally rendered images with known concepts, masks, hierarchy and captions.

It stands in for the probing datasets of paper 000 (ImageNet/Places/CUB, App. F) and the semantic
sub/superclasses of its App. E.3: each image shows one main object (shape, colour, texture, size, position,
rotation) on a background scene, plus up to two small solid distractors. The leaf class (the training target)
is the main object's (colour, texture, shape); classes are many and rare, parents group them.

Determinism: image ``i`` of split ``s`` draws all its randomness from
``np.random.default_rng([seed, crc32(s), i])`` (a fixed block of uniforms, then its pixel noise), so a world is a
pure function of its parameters and seed, and any range of images rendered alone (``start_index``) or in any
chunking (``chunk_size``) has identical bytes. The class catalogue depends on ``seed`` only, so every split shares
the same classes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval import io
from neuroneval.concepts.threshold import concept_positive
from neuroneval.options import Options, check_range
from neuroneval.progress import progress_bar
from neuroneval.worlds import render
from neuroneval.worlds.splits import check_splits
from neuroneval.worlds.vision_concepts import (
    PARENT_GROUPINGS,
    build_class_catalogue,
    build_hierarchy,
    concept_labels,
    make_captions,
)
from neuroneval.worlds.vision_sampling import (
    MAX_DISTRACTORS,
    attribute_frame,
    draw_randomness,
    render_batch,
    sample_attributes,
    scene_cdf,
    split_code,
)

MIN_IMAGE_SIZE = 16
SPLIT_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
PROGRESS_MIN_IMAGES = 10_000


@dataclass(frozen=True)
class VisionWorld:
    """One split of the embedded vision world.

    Attributes
    ----------
    images
        (N, H, W, 3) uint8 RGB images.
    masks
        (N, H, W) uint8 object masks: 0 background, 1 main object, 2 and 3 the first and second distractor.
    labels
        ``input_id`` (int64) then one float32 0/1 column per concept: ``class:*`` (in class-index order),
        ``parent:*``, ``shape:*``, ``colour:*``, ``texture:*``, ``size:*``, ``scene:*``, ``distractors:*``.
    class_index
        (N,) int64 leaf-class index (the classifiers' training target).
    class_names
        Leaf-class concept columns in class-index order.
    hierarchy
        ``{parent column: [leaf class columns]}``; each parent label is the OR of its children's labels.
    captions
        One caption per image.
    attributes
        ``input_id`` plus the raw attributes: ``class_index``, ``class``, ``shape``, ``colour``, ``texture``, ``size``,
        ``scene``, ``radius``, ``centre_x``, ``centre_y``, ``rotation_deg``, ``n_distractors`` and
        ``distractor{1,2}_{shape,colour,centre_x,centre_y,radius}`` (shape/colour ``""`` and NaN when absent).
    params
        The parameters the world was built from (keyword arguments of :func:`build_vision_world`).
    """

    images: np.ndarray
    masks: np.ndarray
    labels: pd.DataFrame
    class_index: np.ndarray
    class_names: list[str]
    hierarchy: dict[str, list[str]]
    captions: list[str]
    attributes: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)


def _check_int(name: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return int(value)


def _check_float(name: str, value: Any, minimum: float, maximum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    if not np.isfinite(value) or value < minimum or (maximum is not None and value > maximum):
        bounds = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return float(value)


def _check_split(split: Any) -> str:
    if not isinstance(split, str) or not SPLIT_PATTERN.fullmatch(split):
        raise ValueError(
            f"split must be a non-empty string of letters, digits, '_' or '-' (e.g. 'train'), got {split!r}")
    return split


@dataclass(frozen=True)
class VisionWorldOptions(Options):
    """The ``world.vision`` block of params.yaml: the world's ``seed``, its rendering knobs (the keyword parameters
    of :func:`build_vision_world`, same names and defaults) and ``splits`` (images per split name).

    Parsed once by the workflow step and handed to :func:`build_vision_world_split`; the builder checks each knob
    and names the one out of range (one home for those checks), these options check the seed and the splits.
    """

    seed: int = 0
    image_size: int = 32
    n_classes: int = 120
    n_shapes: int = 8
    n_colours: int = 8
    n_textures: int = 4
    n_scenes: int = 5
    class_prior_ratio: float = 15.0
    class_prior_power: float = 3.0
    parent_groupings: tuple[str, ...] = ("shape", "colour")
    p_large: float = 0.5
    position_jitter: float = 0.6
    rotation_jitter: float = 15.0
    max_distractors: int = 2
    distractor_prob: float = 0.3
    scene_weights: tuple[float, ...] | None = None
    colour_jitter: float = 20.0
    brightness_jitter: float = 0.12
    noise_std: float = 8.0
    splits: Mapping[str, int] = field(default_factory=dict)

    def validate(self) -> None:
        check_range(self, "seed", 0, integer=True)
        check_splits(self, "splits")


def build_vision_world_split(options: VisionWorldOptions, split: str, n_images: int, *,
                             progress: bool | None = None) -> VisionWorld:
    """Split ``split`` (``n_images`` images) of the world that ``options`` describe: :func:`build_vision_world`
    with every knob of the options."""
    return build_vision_world(
        n_images, seed=options.seed, split=split, image_size=options.image_size, n_classes=options.n_classes,
        n_shapes=options.n_shapes, n_colours=options.n_colours, n_textures=options.n_textures,
        n_scenes=options.n_scenes, class_prior_ratio=options.class_prior_ratio,
        class_prior_power=options.class_prior_power, parent_groupings=options.parent_groupings,
        p_large=options.p_large, position_jitter=options.position_jitter, rotation_jitter=options.rotation_jitter,
        max_distractors=options.max_distractors, distractor_prob=options.distractor_prob,
        scene_weights=options.scene_weights, colour_jitter=options.colour_jitter,
        brightness_jitter=options.brightness_jitter, noise_std=options.noise_std, progress=progress)


def build_vision_world(
    n_images: int,
    *,
    seed: int,
    split: str,
    image_size: int = 32,
    n_classes: int = 120,
    n_shapes: int = 8,
    n_colours: int = 8,
    n_textures: int = 4,
    n_scenes: int = 5,
    class_prior_ratio: float = 15.0,
    class_prior_power: float = 3.0,
    parent_groupings: Sequence[str] = ("shape", "colour"),
    p_large: float = 0.5,
    position_jitter: float = 0.6,
    rotation_jitter: float = 15.0,
    max_distractors: int = 2,
    distractor_prob: float = 0.3,
    scene_weights: Sequence[float] | None = None,
    colour_jitter: float = 20.0,
    brightness_jitter: float = 0.12,
    noise_std: float = 8.0,
    start_index: int = 0,
    chunk_size: int = 1024,
    progress: bool | None = None,
) -> VisionWorld:
    """Render one split of the embedded vision world.

    Parameters
    ----------
    n_images
        Number of images (>= 1); their ``input_id`` are ``start_index .. start_index + n_images - 1``.
    seed
        World seed (>= 0). Together with ``split`` and the image index it determines each image.
    split
        Split name (``"train"``, ``"probe"``, any ``[A-Za-z0-9_-]+``); different names give independent images.
    image_size
        Pixels per side (>= 16; default 32).
    n_classes
        Number of leaf classes (2 .. n_shapes · n_colours · n_textures; default 120).
    n_shapes, n_colours, n_textures, n_scenes
        How many entries of the shape (8), colour (10), texture (4) and scene (5) catalogues are used
        (defaults 8, 8, 4, 5).
    class_prior_ratio, class_prior_power
        Class prior (see :func:`~neuroneval.worlds.vision_concepts.class_prior`): the most common class is
        ``class_prior_ratio`` times as frequent as the rarest (default 15); ``class_prior_power`` shapes the
        decay (1 = geometric; default 3 = most classes common, a short rare tail). With the defaults the leaf
        rates run from ≈1.3 % to ≈0.09 %.
    parent_groupings
        Main-object attributes whose values define parents (``"shape"``, ``"colour"``, ``"texture"``; default
        shape and colour: 16 parents, each leaf in two).
    p_large
        Probability that the main object is large (radius 0.29–0.36 of the side) rather than small
        (0.17–0.22); default 0.5.
    position_jitter
        How far the main object's centre may move from the image centre, as a fraction of the room left
        inside the image (0 = always centred, 1 = may touch the border; default 0.6).
    rotation_jitter
        Maximum rotation of objects in degrees, uniform in ±this (default 15; keep < 45 so squares stay
        squares and diamonds diamonds).
    max_distractors
        Distractor slots, 0–2 (default 2).
    distractor_prob
        Probability that each slot holds a distractor (default 0.3); a distractor that finds no free place
        beside the main object after a few tries is left out (labels follow what is drawn).
    scene_weights
        Relative scene frequencies, one per scene (default ``None`` = uniform).
    colour_jitter
        Per-channel uniform jitter of object colours, ±this in 0–255 units (default 20).
    brightness_jitter
        Per-image brightness factor, uniform in 1 ± this (default 0.12).
    noise_std
        Standard deviation of the per-pixel Gaussian noise in 0–255 units (default 8).
    start_index
        Index of the first image (default 0); rendering ``[a, b)`` alone equals rows ``a..b`` of a larger
        world, so large splits can be built in parallel chunks.
    chunk_size
        Images rendered per vectorised batch (memory only; the output does not depend on it).
    progress
        Show a tqdm progress bar (default ``None``: when ``n_images >= 10000``).

    Returns
    -------
    VisionWorld
        Images, masks, labels, class indices and names, hierarchy, captions and attributes.

    Raises
    ------
    ValueError
        A parameter is out of range or of the wrong kind; the message names it.

    Examples
    --------
    >>> world = build_vision_world(8, seed=0, split="probe")
    >>> world.images.shape, world.masks.shape, len(world.class_names)
    ((8, 32, 32, 3), (8, 32, 32), 120)
    """
    n_images = _check_int("n_images", n_images, 1)
    seed = _check_int("seed", seed, 0)
    split = _check_split(split)
    image_size = _check_int("image_size", image_size, MIN_IMAGE_SIZE)
    n_shapes = _check_int("n_shapes", n_shapes, 2, len(render.SHAPES))
    n_colours = _check_int("n_colours", n_colours, 2, len(render.COLOURS))
    n_textures = _check_int("n_textures", n_textures, 1, len(render.TEXTURES))
    n_scenes = _check_int("n_scenes", n_scenes, 1, len(render.SCENES))
    n_classes = _check_int("n_classes", n_classes, 2, n_shapes * n_colours * n_textures)
    if (isinstance(parent_groupings, str) or not isinstance(parent_groupings, Sequence)
            or len(set(parent_groupings)) != len(parent_groupings)
            or not set(parent_groupings) <= set(PARENT_GROUPINGS)):
        raise ValueError(f"parent_groupings must be distinct names from {PARENT_GROUPINGS}, got {parent_groupings!r}")
    knobs: dict[str, Any] = {
        "image_size": image_size,
        "n_classes": n_classes,
        "n_shapes": n_shapes,
        "n_colours": n_colours,
        "n_textures": n_textures,
        "n_scenes": n_scenes,
        "class_prior_ratio": _check_float("class_prior_ratio", class_prior_ratio, 1.0),
        "class_prior_power": _check_float("class_prior_power", class_prior_power, 1e-6),
        "parent_groupings": list(parent_groupings),
        "p_large": _check_float("p_large", p_large, 0.0, 1.0),
        "position_jitter": _check_float("position_jitter", position_jitter, 0.0, 1.0),
        "rotation_jitter": _check_float("rotation_jitter", rotation_jitter, 0.0, 180.0),
        "max_distractors": _check_int("max_distractors", max_distractors, 0, MAX_DISTRACTORS),
        "distractor_prob": _check_float("distractor_prob", distractor_prob, 0.0, 1.0),
        "scene_weights": None if scene_weights is None else [float(w) for w in scene_weights],
        "colour_jitter": _check_float("colour_jitter", colour_jitter, 0.0, 255.0),
        "brightness_jitter": _check_float("brightness_jitter", brightness_jitter, 0.0, 0.99),
        "noise_std": _check_float("noise_std", noise_std, 0.0),
    }
    start_index = _check_int("start_index", start_index, 0)
    chunk_size = _check_int("chunk_size", chunk_size, 1)
    scene_cumulative = scene_cdf(scene_weights, n_scenes)

    catalogue = build_class_catalogue(
        n_classes, n_shapes=n_shapes, n_colours=n_colours, n_textures=n_textures, seed=seed,
        prior_ratio=knobs["class_prior_ratio"], prior_power=knobs["class_prior_power"])
    hierarchy = build_hierarchy(catalogue, parent_groupings)
    code = split_code(split)
    input_ids = np.arange(start_index, start_index + n_images, dtype=np.int64)
    show = n_images >= PROGRESS_MIN_IMAGES if progress is None else progress
    parts: dict[str, list] = {"images": [], "masks": [], "attributes": [], "labels": [], "captions": []}
    with progress_bar(total=n_images, enabled=show, desc=f"vision world {split}", unit="img") as bar:
        for first in range(0, n_images, chunk_size):
            chunk_ids = input_ids[first : first + chunk_size]
            uniforms, noise = draw_randomness(chunk_ids, seed, code, image_size)
            attributes = sample_attributes(uniforms, catalogue, knobs, scene_cumulative)
            images, masks = render_batch(attributes, noise, knobs)
            parts["images"].append(images)
            parts["masks"].append(masks)
            parts["attributes"].append(attribute_frame(chunk_ids, attributes, catalogue.names))
            parts["labels"].append(pd.DataFrame(concept_labels(
                attributes, catalogue, hierarchy, n_shapes=n_shapes, n_colours=n_colours, n_textures=n_textures,
                n_scenes=n_scenes)))
            parts["captions"].extend(make_captions(attributes, attributes["caption_choices"]))
            bar.update(len(chunk_ids))

    labels = pd.concat(parts["labels"], ignore_index=True)
    labels.insert(0, io.ID_COLUMN, input_ids)
    attribute_table = pd.concat(parts["attributes"], ignore_index=True)
    return VisionWorld(
        images=np.concatenate(parts["images"]),
        masks=np.concatenate(parts["masks"]),
        labels=labels,
        class_index=attribute_table["class_index"].to_numpy(dtype=np.int64),
        class_names=list(catalogue.names),
        hierarchy=hierarchy,
        captions=parts["captions"],
        attributes=attribute_table,
        params={"n_images": n_images, "seed": seed, "split": split, "start_index": start_index, **knobs},
    )


def concept_mask(world: VisionWorld, concept: str) -> np.ndarray:
    """Per-pixel segmentation (N, H, W) bool of a concept column, for IoU-with-masks analyses.

    Main-object concepts (``class:``, ``parent:``, ``texture:``, ``size:``) cover the main object's pixels of
    positive images; ``shape:`` and ``colour:`` also cover matching distractors; ``scene:`` covers the
    background pixels of positive images; ``distractors:`` covers the distractor pixels of positive images.
    """
    if concept not in world.labels.columns or concept == io.ID_COLUMN:
        raise ValueError(f"concept must be a label column of the world, got {concept!r}")
    kind, _, value = concept.partition(":")
    positive = concept_positive(world.labels[concept].to_numpy())
    if kind == "scene":
        return (world.masks == 0) & positive[:, None, None]
    if kind == "distractors":
        return (world.masks >= 2) & positive[:, None, None]
    if kind in ("shape", "colour"):
        main = (world.attributes[kind].to_numpy() == value)[:, None, None] & (world.masks == 1)
        for slot in range(MAX_DISTRACTORS):
            matches = (world.attributes[f"distractor{slot + 1}_{kind}"].to_numpy() == value)[:, None, None]
            main |= matches & (world.masks == 2 + slot)
        return main
    return (world.masks == 1) & positive[:, None, None]


def _save_array(path: Path, array: np.ndarray) -> None:
    with io.atomic_path(path) as tmp_path, open(tmp_path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def save_vision_world(world: VisionWorld, directory: str | Path) -> None:
    """Write a world into ``directory`` (created if needed), each file atomically.

    Files: ``images.npy``, ``masks.npy``, ``class_index.npy``, ``labels.parquet`` (a concept table with
    ``source="labels"``, the concept names and the hierarchy in its metadata), ``attributes.parquet``,
    ``hierarchy.json``, ``captions.csv`` (``input_id,caption``) and ``classes.json`` (class names and the
    build parameters).
    """
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    _save_array(target / "images.npy", world.images)
    _save_array(target / "masks.npy", world.masks)
    _save_array(target / "class_index.npy", world.class_index)
    concepts = [column for column in world.labels.columns if column != io.ID_COLUMN]
    io.write_concept_table(target / "labels.parquet", world.labels, metadata={
        "source": "labels", "dataset": world.params.get("dataset", f"vision_{world.params.get('split', 'unknown')}"),
        "concepts": concepts,
        "hierarchy": world.hierarchy})
    with io.atomic_path(target / "attributes.parquet") as tmp_path:
        world.attributes.to_parquet(tmp_path, index=False)
    io.write_json(target / "hierarchy.json", world.hierarchy)
    io.write_csv(target / "captions.csv", pd.DataFrame({
        io.ID_COLUMN: world.labels[io.ID_COLUMN].to_numpy(), "caption": world.captions}))
    io.write_json(target / "classes.json", {"class_names": world.class_names, "params": world.params})


def load_vision_world(directory: str | Path) -> VisionWorld:
    """Read a world written by :func:`save_vision_world`; raises ``FileNotFoundError`` naming a missing file."""
    source = Path(directory)
    for name in ("images.npy", "masks.npy", "class_index.npy", "labels.parquet", "attributes.parquet",
                 "hierarchy.json", "captions.csv", "classes.json"):
        if not (source / name).exists():
            raise FileNotFoundError(f"{source}: vision world file {name} is missing")
    labels, _ = io.read_concept_table(source / "labels.parquet")
    classes = json.loads((source / "classes.json").read_text())
    captions = pd.read_csv(source / "captions.csv", keep_default_na=False, dtype={"caption": str})
    attributes = pd.read_parquet(source / "attributes.parquet")
    return VisionWorld(
        images=np.load(source / "images.npy", allow_pickle=False),
        masks=np.load(source / "masks.npy", allow_pickle=False),
        labels=labels,
        class_index=np.load(source / "class_index.npy", allow_pickle=False),
        class_names=list(classes["class_names"]),
        hierarchy={parent: list(children) for parent, children in
                   json.loads((source / "hierarchy.json").read_text()).items()},
        captions=captions["caption"].tolist(),
        attributes=attributes,
        params=dict(classes["params"]),
    )


def saved_world_params(world_dir: str | Path) -> dict[str, Any]:
    """The generation params of a saved vision-world split (``params`` of its ``classes.json``,
    :func:`save_vision_world`)."""
    return dict(json.loads((Path(world_dir) / "classes.json").read_text())["params"])
