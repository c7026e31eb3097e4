"""What the vision world's images mean: leaf-class catalogue, class prior, hierarchy, concept labels, captions.

Leaf classes are (colour, texture, shape) combinations of the main object, named ``class:<colour>_<texture>_<shape>``
(``class:red_striped_circle``). Parents group leaves by one attribute of the main object (``parent:circle``,
``parent:red``); a parent is positive exactly when one of its children is. Attribute concepts describe
everything visible: ``shape:*`` and ``colour:*`` are positive when the main object *or a distractor* has that
shape/colour (like Broden's pixel-level concepts), ``texture:*`` and ``size:*`` describe the main object,
``scene:*`` the background, ``distractors:1``/``distractors:2`` how many distractors are visible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from neuroneval.worlds.render import COLOURS, SCENES, SHAPES, TEXTURES

COLOUR_NAMES: tuple[str, ...] = tuple(COLOURS)
PARENT_GROUPINGS: tuple[str, ...] = ("shape", "colour", "texture")
"""Attributes of the main object that may define parents (``parent_groupings`` knob)."""

CATALOGUE_STREAM = 0x5EED_C1A5
"""Random-stream code of the class catalogue: it depends on the world seed only, never on the split."""


@dataclass(frozen=True)
class ClassCatalogue:
    """The leaf classes of a world: attribute indices per class, names and prior probabilities."""

    shape: np.ndarray
    colour: np.ndarray
    texture: np.ndarray
    prior: np.ndarray
    names: list[str]


def class_name(shape: int, colour: int, texture: int) -> str:
    """Concept column of a leaf class, e.g. ``class:red_striped_circle``."""
    return f"class:{COLOUR_NAMES[colour]}_{TEXTURES[texture]}_{SHAPES[shape]}"


def class_prior(n_classes: int, *, ratio: float, power: float) -> np.ndarray:
    """Class probabilities by rank: log-rates fall from the most to the least common class as ``rank**power``.

    ``p_k ∝ ratio ** (-(k / (K - 1)) ** power)`` for ranks ``k = 0..K-1``, so the most common class is ``ratio``
    times as frequent as the rarest; ``power = 1`` is a geometric (exponential) decay, larger powers keep most
    classes near the top rate and put a short rare tail at the end (with K = 120, ratio 15, power 3 the rates
    run from ≈1.3 % down to ≈0.09 %).
    """
    ranks = np.arange(n_classes, dtype=np.float64) / max(n_classes - 1, 1)
    weights = ratio ** (-(ranks**power))
    return weights / weights.sum()


def build_class_catalogue(
    n_classes: int,
    *,
    n_shapes: int,
    n_colours: int,
    n_textures: int,
    seed: int,
    prior_ratio: float,
    prior_power: float,
) -> ClassCatalogue:
    """Choose ``n_classes`` (shape, colour, texture) combinations, balanced over shapes and colours.

    Class ``j`` gets shape ``j mod S``; within a shape, consecutive classes walk a random offset through the
    colour × texture grid with colours and textures both cycling quickly, so every shape holds
    ``⌊K/S⌋`` or ``⌈K/S⌉`` classes and each colour about ``K/C``. The prior rank of each class is a random
    permutation. Everything is drawn from the world seed alone, so all splits share one catalogue.
    """
    rng = np.random.default_rng([seed, CATALOGUE_STREAM])
    combos = n_colours * n_textures
    shape_offsets = rng.integers(0, combos, size=n_shapes)
    colour_orders = np.stack([rng.permutation(n_colours) for _ in range(n_shapes)])
    texture_orders = np.stack([rng.permutation(n_textures) for _ in range(n_shapes)])
    classes = np.arange(n_classes)
    shape = classes % n_shapes
    walk = (classes // n_shapes + shape_offsets[shape]) % combos
    colour_slot = walk % n_colours
    texture_slot = (colour_slot + walk // n_colours) % n_textures
    colour = colour_orders[shape, colour_slot]
    texture = texture_orders[shape, texture_slot]
    order = np.lexsort((texture, colour, shape))
    shape, colour, texture = shape[order], colour[order], texture[order]
    prior = class_prior(n_classes, ratio=prior_ratio, power=prior_power)[rng.permutation(n_classes)]
    names = [class_name(int(s), int(c), int(t)) for s, c, t in zip(shape, colour, texture, strict=True)]
    return ClassCatalogue(shape=shape, colour=colour, texture=texture, prior=prior, names=names)


def parent_name(grouping: str, value: int) -> str:
    """Concept column of a parent: the grouping attribute's value of the main object (``parent:circle``)."""
    return f"parent:{attribute_catalogue(grouping)[value]}"


def attribute_catalogue(attribute: str) -> tuple[str, ...]:
    """Value names of a main-object attribute (``shape``, ``colour``, ``texture``, ``scene``)."""
    catalogues = {"shape": SHAPES, "colour": COLOUR_NAMES, "texture": TEXTURES, "scene": SCENES}
    if attribute not in catalogues:
        raise ValueError(f"attribute must be one of {sorted(catalogues)}, got {attribute!r}")
    return catalogues[attribute]


def build_hierarchy(catalogue: ClassCatalogue, groupings: Sequence[str]) -> dict[str, list[str]]:
    """``{parent column: [leaf class columns]}``, one parent per value of each grouping.

    A value held by fewer than two classes makes no parent: its label would duplicate the one child's column.
    """
    hierarchy: dict[str, list[str]] = {}
    for grouping in groupings:
        values = getattr(catalogue, grouping)
        for value in np.unique(values):
            children = [name for name, member in zip(catalogue.names, values == value, strict=True) if member]
            if len(children) >= 2:
                hierarchy[parent_name(grouping, int(value))] = children
    return hierarchy


def concept_labels(
    attributes: Mapping[str, np.ndarray],
    catalogue: ClassCatalogue,
    hierarchy: Mapping[str, Sequence[str]],
    *,
    n_shapes: int,
    n_colours: int,
    n_textures: int,
    n_scenes: int,
) -> dict[str, np.ndarray]:
    """0/1 float32 label columns, in table order: classes, parents, shapes, colours, textures, sizes, scenes,
    distractor counts.

    ``attributes`` holds per-image integer arrays: ``class_index``, ``shape``, ``colour``, ``texture``,
    ``large`` (bool), ``scene``, and ``distractor_present`` (B, D) bool, ``distractor_shape``/``distractor_colour``
    (B, D) indices.
    """
    class_index = attributes["class_index"]
    present = attributes["distractor_present"]
    labels: dict[str, np.ndarray] = {}
    class_hits = class_index[:, None] == np.arange(len(catalogue.names))[None, :]
    for position, name in enumerate(catalogue.names):
        labels[name] = class_hits[:, position]
    name_position = {name: position for position, name in enumerate(catalogue.names)}
    for parent, children in hierarchy.items():
        labels[parent] = class_hits[:, [name_position[child] for child in children]].any(axis=1)
    for value in range(n_shapes):
        labels[f"shape:{SHAPES[value]}"] = (attributes["shape"] == value) | (
            present & (attributes["distractor_shape"] == value)
        ).any(axis=1)
    for value in range(n_colours):
        labels[f"colour:{COLOUR_NAMES[value]}"] = (attributes["colour"] == value) | (
            present & (attributes["distractor_colour"] == value)
        ).any(axis=1)
    for value in range(n_textures):
        labels[f"texture:{TEXTURES[value]}"] = attributes["texture"] == value
    labels["size:small"] = ~attributes["large"]
    labels["size:large"] = attributes["large"]
    for value in range(n_scenes):
        labels[f"scene:{SCENES[value]}"] = attributes["scene"] == value
    n_present = present.sum(axis=1)
    for count in range(1, present.shape[1] + 1):
        labels[f"distractors:{count}"] = n_present == count
    return {name: column.astype(np.float32) for name, column in labels.items()}


SIZE_WORDS = {False: ("small", "little"), True: ("large", "big")}
TEXTURE_ADJECTIVES = {"solid": ("solid", "plain"), "striped": ("striped",), "dotted": ("dotted", "spotted"),
                      "checked": ("checked", "checkered")}
TEXTURE_PHRASES = {"solid": "a solid surface", "striped": "stripes", "dotted": "dots", "checked": "a checker pattern"}
SCENE_PHRASES = {"sky": ("against the sky", "in the sky"), "grass": ("on grass", "on a lawn of grass"),
                 "sand": ("on sand", "on a sandy beach"), "water": ("on water", "floating on water"),
                 "indoor": ("indoors", "in an indoor room")}
DISTRACTOR_NOUNS = {"circle": "dot"}
NEARBY_WORDS = ("next to", "beside", "near")


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _pick(options: Sequence[str], uniform: float) -> str:
    return options[min(int(uniform * len(options)), len(options) - 1)]


def make_caption(
    *,
    shape: str,
    colour: str,
    texture: str,
    large: bool,
    scene: str,
    distractors: Sequence[tuple[str, str]],
    choices: Sequence[float],
) -> str:
    """One short caption of an image; ``choices`` (five numbers in [0, 1)) pick the wording deterministically.

    The caption always names the main object's size, colour, texture, shape and the scene, and each visible
    distractor by colour and shape (a distractor circle is a "dot"), e.g. "a large red striped circle on
    grass next to a small blue dot".
    """
    size_word = _pick(SIZE_WORDS[bool(large)], choices[0])
    texture_word = _pick(TEXTURE_ADJECTIVES[texture], choices[1])
    scene_phrase = _pick(SCENE_PHRASES[scene], choices[2])
    template = min(int(choices[3] * 4), 3)
    if template == 0:
        core = f"{size_word} {colour} {texture_word} {shape}"
        text = f"{_article(core)} {core} {scene_phrase}"
    elif template == 1:
        core = f"{size_word} {texture_word} {colour} {shape}"
        text = f"a photo of {_article(core)} {core} {scene_phrase}"
    elif template == 2:
        core = f"{size_word} {colour} {shape} with {TEXTURE_PHRASES[texture]}"
        text = f"{_article(core)} {core} {scene_phrase}"
    else:
        core = f"{colour} {texture_word} {shape}"
        text = f"{scene_phrase}, {_article(size_word)} {size_word} {core}"
    if distractors:
        nearby = _pick(NEARBY_WORDS, choices[4])
        items = [f"a small {d_colour} {DISTRACTOR_NOUNS.get(d_shape, d_shape)}" for d_shape, d_colour in distractors]
        text = f"{text} {nearby} {' and '.join(items)}"
    return text


def make_captions(attributes: Mapping[str, np.ndarray], choices: np.ndarray) -> list[str]:
    """Captions of a batch from the integer attribute arrays of :func:`concept_labels` and (B, 5) choices."""
    captions = []
    for row in range(len(attributes["class_index"])):
        distractors = [
            (SHAPES[int(attributes["distractor_shape"][row, slot])],
             COLOUR_NAMES[int(attributes["distractor_colour"][row, slot])])
            for slot in range(attributes["distractor_present"].shape[1])
            if attributes["distractor_present"][row, slot]
        ]
        captions.append(make_caption(
            shape=SHAPES[int(attributes["shape"][row])],
            colour=COLOUR_NAMES[int(attributes["colour"][row])],
            texture=TEXTURES[int(attributes["texture"][row])],
            large=bool(attributes["large"][row]),
            scene=SCENES[int(attributes["scene"][row])],
            distractors=distractors,
            choices=choices[row],
        ))
    return captions


def concept_prompt(concept: str) -> str:
    """The text prompt a contrastive model scores for a label concept, in the captions' own words.

    ``class:red_striped_circle`` → "a red striped circle", ``parent:circle`` / ``shape:circle`` → "a circle",
    ``parent:orange`` / ``colour:orange`` → "an orange", ``texture:dotted`` → "a dotted", ``size:large`` → "a
    large", ``scene:grass`` → "on grass", ``distractors:2`` → "next to a small and a small". Only caption
    words are used, so the text tower never sees an unknown token. Raises ``ValueError`` for an unknown kind.
    """
    kind, _, value = concept.partition(":")
    if kind == "class" and value.count("_") >= 2:
        colour, texture, shape = value.split("_", 2)
        return f"{_article(colour)} {colour} {texture} {shape}"
    if (kind in ("parent", "shape", "colour", "texture") and value in (*SHAPES, *COLOUR_NAMES, *TEXTURES)) or (
            kind == "size" and value in ("small", "large")):
        return f"{_article(value)} {value}"
    if kind == "scene" and value in SCENE_PHRASES:
        return SCENE_PHRASES[value][0]
    if kind == "distractors" and value.isdigit() and int(value) >= 1:
        return "next to " + " and ".join(["a small"] * int(value))
    raise ValueError(f"no prompt for concept {concept!r} (kinds: class, parent, shape, colour, texture, size, "
                     "scene, distractors)")
