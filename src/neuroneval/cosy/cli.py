"""``neuroneval cosy``: CoSy (paper 002) on your own explanation file (:mod:`neuroneval.cosy.user`).

Example, the units of the tiny CNN's softmax layer explained in ``mine.csv`` (the explanation CSV of
docs/explain.md), oracle images of the vision world, the probing split as control images::

    neuroneval cosy --explanations mine.csv --model data/models/vision_cnn.pt --layer softmax \
        --control data/worlds/vision/probe --generator oracle --n-images 20 --out cosy_mine.csv

``--control`` is a vision-world folder, a folder of images (PNG/JPEG, read in name order) or a ``.npy`` array
(n, H, W, 3) uint8; ``--world`` (default: ``--control`` when it is a world folder) gives the oracle its renderer
and the ``superclass`` layer its hierarchy. ``--generator`` is ``oracle``, ``embedded[:CHECKPOINT_DIR]``
(default ``data/cosy_models/diffusion``, trained by ``snakemake cosy_train_embedded``) or
``diffusers:PIPELINE_DIR`` (a local ``save_pretrained`` folder; never downloaded); their options are the
``cosy:`` block of ``--params`` (default: params.yaml's defaults, :class:`~neuroneval.cosy.options.CosyOptions`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

#: Where ``embedded`` without a folder looks for its checkpoint (the ``cosy_train_embedded`` rule's output).
DEFAULT_EMBEDDED_CHECKPOINT = "data/cosy_models/diffusion"
#: Image files read from a control folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def add_cosy_parser(commands: Any) -> None:
    """Add the ``cosy`` subcommand to the ``neuroneval`` subparsers ``commands``."""
    cosy = commands.add_parser("cosy", help="score your explanation file with CoSy (paper 002): AUC, MAD, U, p")
    cosy.add_argument("--explanations", required=True, help="explanation CSV: unit,explanation,length,kind,...")
    cosy.add_argument("--model", required=True, help="world classifier checkpoint (data/models/<model>.pt)")
    cosy.add_argument("--layer", required=True,
                      help="layer whose units are explained: softmax, logits, superclass, concepts or a module name")
    cosy.add_argument("--control", required=True,
                      help="control images: a vision-world folder, a folder of images or a .npy (n, H, W, 3) uint8")
    cosy.add_argument("--world", help="vision-world folder (oracle renderer, superclass hierarchy); default: "
                                      "--control when it is one")
    cosy.add_argument("--generator", default="oracle",
                      help="oracle | embedded[:CHECKPOINT_DIR] | diffusers:PIPELINE_DIR (default oracle)")
    cosy.add_argument("--params", help="YAML whose cosy: block sets the generators' options (default: defaults)")
    cosy.add_argument("--n-images", dest="n_images", type=int, default=20,
                      help="synthetic images per explanation (default 20; paper 002: 50)")
    cosy.add_argument("--template", default="closeup", help="prompt template (default closeup, 002 Table 5)")
    cosy.add_argument("--n-control", dest="n_control", type=int, help="use the first N control images (default all)")
    cosy.add_argument("--seed", type=int, default=0, help="generation seed and draw of the random explanations")
    cosy.add_argument("--batch-size", dest="batch_size", type=int, default=64, help="images per batch (default 64)")
    cosy.add_argument("--no-random", dest="random", action="store_false",
                      help="score only the file's explanations (by default a random one per unit beside them)")
    cosy.add_argument("--images", help="folder of the generated images (default: <out>.images/<generator>; reused)")
    cosy.add_argument("--out", required=True, help="output CSV: unit,method,explanation,kind,prompt,auc,mad,u,"
                                                   "p_value,n_synthetic,n_control")
    cosy.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bars")


def parse_generator(text: str) -> tuple[str, str | None]:
    """``--generator`` as (name, folder): ``oracle``, ``embedded[:DIR]`` or ``diffusers:DIR``.

    >>> parse_generator("oracle"), parse_generator("diffusers:/models/sdxl")
    (('oracle', None), ('diffusers', '/models/sdxl'))
    """
    name, _, folder = text.partition(":")
    if name not in ("oracle", "embedded", "diffusers") or (name == "oracle" and folder) or \
            (name == "diffusers" and not folder):
        raise ValueError(f"--generator {text!r}: use oracle, embedded[:CHECKPOINT_DIR] or diffusers:PIPELINE_DIR")
    if name == "embedded":
        return name, folder or DEFAULT_EMBEDDED_CHECKPOINT
    return name, folder or None


def is_world_folder(path: str | Path) -> bool:
    """Whether ``path`` is a saved vision-world split (it has ``classes.json``)."""
    return (Path(path) / "classes.json").is_file()


def read_control_images(path: str | Path, *, size: int | None = None) -> np.ndarray:
    """(n, H, W, 3) uint8 control images from a vision-world folder, a folder of images or a ``.npy`` array.

    Folder images are read in file-name order, as RGB, and resized to ``size`` (default: the first image's
    size) when they differ. Raises ``ValueError`` naming the path (and the file) when nothing usable is there.
    """
    from neuroneval.cosy.synthesis import read_png, resize_images

    path = Path(path)
    if is_world_folder(path):
        from neuroneval.worlds import load_vision_world

        images = load_vision_world(path).images
    elif path.is_dir():
        files = sorted(child for child in path.iterdir() if child.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise ValueError(f"--control {path}: no world (classes.json) and no {'/'.join(IMAGE_SUFFIXES)} images")
        first = read_png(files[0])
        side = int(size or first.shape[0])
        images = np.stack([resize_images(read_png(file)[None], side)[0] for file in files])
    elif path.suffix == ".npy" and path.is_file():
        images = np.load(path, allow_pickle=False)
        if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
            raise ValueError(f"--control {path}: expected an (n, H, W, 3) uint8 array, got {images.shape} "
                             f"{images.dtype}")
    else:
        raise ValueError(f"--control {path}: not a world folder, an image folder or a .npy file")
    if size is not None and images.shape[1] != size:
        images = resize_images(images, int(size))
    return images


def run_cosy(arguments: argparse.Namespace) -> None:
    """The ``cosy`` subcommand: read, score (:func:`neuroneval.cosy.user.score_user_explanations`), write."""
    from neuroneval import io
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.options import CosyOptions
    from neuroneval.cosy.user import UserCosyOptions, score_user_explanations
    from neuroneval.explain import read_explanations

    name, folder = parse_generator(arguments.generator)
    explanations = read_explanations(arguments.explanations)
    world_dir = arguments.world or (arguments.control if is_world_folder(arguments.control) else None)
    if world_dir and not is_world_folder(world_dir):
        raise ValueError(f"--world {world_dir}: not a vision-world folder (no classes.json)")
    world = json.loads((Path(world_dir) / "classes.json").read_text()) if world_dir else None
    if name == "oracle" and world is None:
        raise ValueError("--generator oracle renders the vision world: give --world (or a world folder as --control)")
    hierarchy = json.loads((Path(world_dir) / "hierarchy.json").read_text()) if world_dir else {}
    if arguments.layer == "superclass" and not hierarchy:
        raise ValueError("--layer superclass needs the world's hierarchy: give --world")
    control = read_control_images(arguments.control, size=int(world["params"]["image_size"]) if world else None)
    cosy_options = CosyOptions.from_params(_cosy_block(arguments.params))
    generator_options = cosy_options.generator_options(name)
    if name == "diffusers":
        generator_options = dataclasses.replace(generator_options, model=folder)
    generator = build_generator(name, generator_options, world_params=world["params"] if world else None,
                                checkpoint=folder if name == "embedded" else None)
    options = UserCosyOptions(n_images=arguments.n_images, template=arguments.template, seed=arguments.seed,
                              random=arguments.random, n_control=arguments.n_control,
                              batch_size=arguments.batch_size)
    out = Path(arguments.out)
    image_root = Path(arguments.images) if arguments.images else out.with_name(out.stem + ".images") / name
    scores = score_user_explanations(explanations, source=str(arguments.explanations), control_images=control,
                                     checkpoint=arguments.model, layer=arguments.layer, hierarchy=hierarchy,
                                     generator=generator, image_root=image_root, options=options,
                                     progress=arguments.progress)
    out.parent.mkdir(parents=True, exist_ok=True)
    io.write_csv(out, scores, float_format="%.10g")
    summary = scores.groupby("method", sort=False)["auc"].mean()
    print(f"wrote {len(scores)} CoSy rows to {out} (mean AUC: "
          + ", ".join(f"{method} {value:.3f}" for method, value in summary.items()) + ")")


def _cosy_block(params_file: str | None) -> dict[str, Any]:
    if not params_file:
        return {}
    import yaml

    params = yaml.safe_load(Path(params_file).read_text()) or {}
    if not isinstance(params, dict) or not isinstance(params.get("cosy", {}), dict):
        raise ValueError(f"--params {params_file}: expected a mapping with a cosy: block")
    from neuroneval.cosy.user import USER_BLOCK

    return {key: value for key, value in (params.get("cosy") or {}).items() if key != USER_BLOCK}
