"""``neuroneval cosy``: CoSy (paper 002) on your own explanation file (:mod:`neuroneval.cosy.user`).

CoSy asks whether an explanation of a unit is right by drawing it: a text-to-image generator makes images of the
explanation's words, and the unit should fire more on them than on ordinary inputs (the control set). The
scores: AUC, the chance that a generated image activates the unit more than a control input (0.5 = no better
than chance), and MAD, the difference of the mean activations in control standard deviations; beside each
explanation, by default, a random other explanation of the file as the baseline.

Example, the units of the tiny CNN's softmax layer explained in ``mine.csv`` (the explanation CSV of
docs/explain.md), oracle images of the vision world, the probing split as control images::

    neuroneval cosy --explanations mine.csv --model data/models/vision_cnn.pt --layer softmax \
        --control data/worlds/vision/probe --generator oracle --n-images 20 --out cosy_mine.csv

Your own model (docs/your_model.md, "CoSy on your model") is named as for ``neuroneval record`` (``--factory``
with ``--weights``, ``--torchscript``, ``--export``, ``--hf-model``, ``--model-spec``), with ``--preprocess``
saying how an RGB image becomes one of its inputs (the keys of
:class:`~neuroneval.external.preprocess.ImagePreprocessing`, as JSON or a .json/.yaml file); its control set is
``--control-inputs`` (an array of its inputs, as ``neuroneval record --array`` reads it) or ``--control`` images
run through ``--preprocess``; units are named ``<layer>.<i>``, as ``neuroneval record`` names them::

    neuroneval cosy --factory mymodels:digits_mlp --weights mine/mlp.pt --layer 1 \
        --preprocess '{"image_size": 8, "channels": 1, "invert": true, "flatten": true}' \
        --control-inputs mine/images.npy --explanations mine/units.csv \
        --generator diffusers:mine/pipeline --params cosy.yaml --out mine/cosy.csv

``--control`` is a vision-world folder, a folder of images (PNG/JPEG, read in name order) or a ``.npy`` array
(n, H, W, 3) uint8; ``--world`` (default: ``--control`` when it is a world folder) gives the oracle its renderer
and the ``superclass`` layer its hierarchy. ``--generator`` is ``oracle``, ``embedded[:CHECKPOINT_DIR]``
(default ``data/cosy_models/diffusion``, trained by ``snakemake cosy_train_embedded``) or
``diffusers:PIPELINE_DIR`` (a local ``save_pretrained`` folder; never downloaded); their options are the
``cosy:`` block of ``--params`` (default: params.yaml's defaults, :class:`~neuroneval.cosy.options.CosyOptions`).
Besides the scores CSV it writes their figure (``--plot``, default ``<out>.png``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

#: Where ``embedded`` without a folder looks for its checkpoint (the ``cosy_train_embedded`` rule's output).
DEFAULT_EMBEDDED_CHECKPOINT = "data/cosy_models/diffusion"
#: Image files read from a control folder.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def add_cosy_parser(commands: Any) -> None:
    """Add the ``cosy`` subcommand to the ``neuroneval`` subparsers ``commands``."""
    from neuroneval.record_cli import add_model_arguments

    cosy = commands.add_parser("cosy", help="score your explanation file with CoSy (paper 002): AUC, MAD, U, p",
                               description=__doc__.split("\n")[0])
    cosy.add_argument("--explanations", required=True, help="explanation CSV: unit,explanation,length,kind,...")
    models = cosy.add_argument_group("model (one of)")
    models.add_argument("--model", help="a vision-world classifier checkpoint (data/models/<model>.pt)")
    add_model_arguments(models)
    cosy.add_argument("--preprocess", metavar="JSON",
                      help="your model: how an RGB image becomes its input, JSON or a .json/.yaml file with the keys "
                           "image_size, channels, invert, value_range, mean, std, layout, flatten (docs/your_model.md)")
    cosy.add_argument("--layer", required=True,
                      help="layer whose units are explained: softmax, logits, superclass, concepts or a module name")
    control = cosy.add_argument_group("control set (one of)")
    control.add_argument("--control",
                         help="control images: a vision-world folder, a folder of images or a .npy (n, H, W, 3) uint8")
    control.add_argument("--control-inputs", dest="control_inputs", metavar="FILE",
                         help="your model: an array of its inputs (.npy/.npz, one row per input, as neuroneval "
                              "record --array reads it)")
    cosy.add_argument("--world", help="vision-world folder (oracle renderer, superclass hierarchy); default: "
                                      "--control when it is one")
    cosy.add_argument("--generator", default="oracle",
                      help="oracle | embedded[:CHECKPOINT_DIR] | diffusers:PIPELINE_DIR (default oracle)")
    cosy.add_argument("--params", help="YAML whose cosy: block sets the generators' options (default: defaults)")
    cosy.add_argument("--n-images", dest="n_images", type=int, default=20,
                      help="synthetic images per explanation (default 20; paper 002: 50)")
    cosy.add_argument("--template", default="closeup", help="prompt template (default closeup, 002 Table 5)")
    cosy.add_argument("--n-control", dest="n_control", type=int, help="use the first N control inputs (default all)")
    cosy.add_argument("--seed", type=int, default=0, help="generation seed and draw of the random explanations")
    cosy.add_argument("--batch-size", dest="batch_size", type=int, default=64, help="images per batch (default 64)")
    cosy.add_argument("--pooling", default="mean", help="mean (default) or max: how a conv map becomes one value per "
                                                        "channel")
    cosy.add_argument("--device", default="cpu", help="your model: cpu (default), cuda, cuda:1, ...")
    cosy.add_argument("--no-random", dest="random", action="store_false",
                      help="score only the file's explanations (by default a random one per unit beside them)")
    cosy.add_argument("--images", help="folder of the generated images (default: <out>.images/<generator>; reused)")
    cosy.add_argument("--out", required=True, help="output CSV: unit,method,explanation,kind,prompt,auc,mad,u,"
                                                   "p_value,n_synthetic,n_control")
    cosy.add_argument("--plot", help="figure of the AUCs per unit (default: <out> with .png)")
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


def read_preprocess(text: str | None) -> Any:
    """``--preprocess`` (JSON text, or a .json/.yaml file) as
    :class:`~neuroneval.external.preprocess.ImagePreprocessing`; errors name the flag and the key.

    >>> read_preprocess('{"image_size": 8, "channels": 1}').image_size
    8
    """
    import yaml

    from neuroneval.external.preprocess import ImagePreprocessing
    from neuroneval.options import OptionsError

    if not text:
        raise ValueError("your model needs --preprocess: how an RGB image becomes one of its inputs, e.g. "
                         "'{\"image_size\": 32, \"mean\": [0.485, 0.456, 0.406], \"std\": [0.229, 0.224, 0.225]}' "
                         "(keys: docs/your_model.md, \"CoSy on your model\")")
    path = Path(text).expanduser()
    source = path.read_text() if path.suffix in (".json", ".yaml", ".yml") and path.is_file() else text
    try:
        block = yaml.safe_load(source)
    except yaml.YAMLError as error:
        raise ValueError(f"--preprocess is neither JSON/YAML nor a .json/.yaml file: {error}") from error
    if not isinstance(block, dict):
        raise ValueError(f"--preprocess must be a mapping of keys (image_size, channels, ...), got {block!r}")
    try:
        return ImagePreprocessing.of_model({"preprocess": block}, key="--preprocess")
    except OptionsError as error:
        raise ValueError(str(error).replace("--preprocess.preprocess", "--preprocess")) from error


def _generator(arguments: argparse.Namespace, world: Mapping[str, Any] | None) -> Any:
    from neuroneval.cosy.generators import build_generator
    from neuroneval.cosy.options import CosyOptions

    name, folder = parse_generator(arguments.generator)
    if name == "oracle" and world is None:
        raise ValueError("--generator oracle renders the vision world: give --world (or a world folder as --control)")
    cosy_options = CosyOptions.from_params(_cosy_block(arguments.params))
    generator_options = cosy_options.generator_options(name)
    if name == "diffusers":
        generator_options = dataclasses.replace(generator_options, model=folder)
    return build_generator(name, generator_options, world_params=world["params"] if world else None,
                           checkpoint=folder if name == "embedded" else None)


def _user_options(arguments: argparse.Namespace) -> Any:
    from neuroneval.cosy.user import UserCosyOptions

    return UserCosyOptions(n_images=arguments.n_images, template=arguments.template, seed=arguments.seed,
                           random=arguments.random, n_control=arguments.n_control,
                           batch_size=arguments.batch_size, pooling=arguments.pooling)


def own_model_scores(arguments: argparse.Namespace, *, explanations: Any, image_root: Path) -> Any:
    """CoSy scores of ``--explanations`` on your own model (module docstring): its control activations recorded by
    :func:`neuroneval.external.own.record_custom_layer` (``--control-inputs``) or by
    :func:`neuroneval.cosy.activations.custom_units` (``--control`` images through ``--preprocess``), the
    generated images by ``custom_units``, both through ``neuroneval record``'s loading and hooks; scored by
    :func:`neuroneval.cosy.user.score_explanations_on_units`."""
    import tempfile

    from neuroneval.cosy.activations import custom_units
    from neuroneval.cosy.user import score_explanations_on_units
    from neuroneval.external.own import array_row_shape, record_custom_layer
    from neuroneval.record_cli import model_spec

    spec = model_spec(arguments)
    preprocessing = read_preprocess(arguments.preprocess)
    world = _world(arguments.world, None)
    options = _user_options(arguments)
    record = {"batch_size": int(options.batch_size), "pooling": options.pooling, "device": arguments.device}
    if arguments.control_inputs:
        inputs = Path(arguments.control_inputs)
        if not inputs.is_file():
            raise ValueError(f"--control-inputs {inputs}: no such file")
        input_shape = array_row_shape(inputs)
        with tempfile.TemporaryDirectory(prefix="neuroneval-cosy-") as scratch:
            frame, _ = record_custom_layer(spec, inputs, arguments.layer, scratch, class_names=[], options=record)
        unit_names = [column for column in frame.columns if column != "input_id"]
        control = frame[unit_names].to_numpy(dtype=np.float64)[: options.n_control]
    else:
        input_shape = None
        images = read_control_images(arguments.control, size=None)[: options.n_control]
        values, unit_names = custom_units(spec, images, layer=arguments.layer, preprocessing=preprocessing,
                                          key="--preprocess", **record)
        control = values.astype(np.float64)

    def units_on_images(images: np.ndarray) -> np.ndarray:
        return custom_units(spec, images, layer=arguments.layer, preprocessing=preprocessing,
                            input_shape=input_shape, key="--preprocess", **record)[0]

    return score_explanations_on_units(explanations, source=str(arguments.explanations), control=control,
                                       unit_names=unit_names, units_on_images=units_on_images,
                                       generator=_generator(arguments, world), image_root=image_root,
                                       options=options, progress=arguments.progress)


def _world(world_dir: str | None, control: str | None) -> dict[str, Any] | None:
    world_dir = world_dir or (control if control and is_world_folder(control) else None)
    if world_dir and not is_world_folder(world_dir):
        raise ValueError(f"--world {world_dir}: not a vision-world folder (no classes.json)")
    if not world_dir:
        return None
    world = json.loads((Path(world_dir) / "classes.json").read_text())
    hierarchy_file = Path(world_dir) / "hierarchy.json"
    return {**world, "hierarchy": json.loads(hierarchy_file.read_text()) if hierarchy_file.is_file() else {}}


def world_model_scores(arguments: argparse.Namespace, *, explanations: Any, image_root: Path) -> Any:
    """CoSy scores of ``--explanations`` on a vision-world classifier
    (:func:`neuroneval.cosy.user.score_user_explanations`)."""
    from neuroneval.cosy.user import score_user_explanations

    if arguments.control_inputs:
        raise ValueError("--control-inputs goes with your own model (--factory, --torchscript, ...); a world "
                         "classifier (--model) takes --control images")
    world = _world(arguments.world, arguments.control)
    hierarchy = world["hierarchy"] if world else {}
    if arguments.layer == "superclass" and not hierarchy:
        raise ValueError("--layer superclass needs the world's hierarchy: give --world")
    control = read_control_images(arguments.control,
                                  size=int(world["params"]["image_size"]) if world else None)
    return score_user_explanations(explanations, source=str(arguments.explanations), control_images=control,
                                   checkpoint=arguments.model, layer=arguments.layer, hierarchy=hierarchy,
                                   generator=_generator(arguments, world), image_root=image_root,
                                   options=_user_options(arguments), progress=arguments.progress)


def run_cosy(arguments: argparse.Namespace) -> None:
    """The ``cosy`` subcommand: read, score (a world classifier or your own model), write the CSV and its figure."""
    from neuroneval import io
    from neuroneval.explain import read_explanations
    from neuroneval.figures.cosy_user import plot_user_scores

    own_flags = [flag for flag in ("factory", "torchscript", "export", "hf_model", "model_spec")
                 if getattr(arguments, flag, None)]
    if bool(arguments.model) == bool(own_flags):
        given = (["--model"] if arguments.model else []) + ["--" + flag.replace("_", "-") for flag in own_flags]
        raise ValueError("give one model: --model (a vision-world classifier) or your own (--factory, "
                         f"--torchscript, --export, --hf-model, --model-spec); got {given or 'none'}")
    if bool(arguments.control) == bool(arguments.control_inputs):
        raise ValueError("give one control set: --control (images) or --control-inputs (your model's inputs)")
    if arguments.model and arguments.preprocess:
        raise ValueError("--preprocess goes with your own model; a world classifier reads the world's images")
    parse_generator(arguments.generator)
    explanations = read_explanations(arguments.explanations)
    out = Path(arguments.out)
    name = arguments.generator.partition(":")[0]
    image_root = Path(arguments.images) if arguments.images else out.with_name(out.stem + ".images") / name
    scorer = world_model_scores if arguments.model else own_model_scores
    scores = scorer(arguments, explanations=explanations, image_root=image_root)
    out.parent.mkdir(parents=True, exist_ok=True)
    io.write_csv(out, scores, float_format="%.10g")
    plot = Path(arguments.plot) if arguments.plot else out.with_suffix(".png")
    plot_user_scores(scores, plot)
    summary = scores.groupby("method", sort=False)["auc"].mean()
    print(f"wrote {len(scores)} CoSy rows to {out} (mean AUC: "
          + ", ".join(f"{method} {value:.3f}" for method, value in summary.items()) + f") and the figure {plot}")


def _cosy_block(params_file: str | None) -> dict[str, Any]:
    if not params_file:
        return {}
    import yaml

    params = yaml.safe_load(Path(params_file).read_text()) or {}
    if not isinstance(params, dict) or not isinstance(params.get("cosy", {}), dict):
        raise ValueError(f"--params {params_file}: expected a mapping with a cosy: block")
    from neuroneval.cosy.user import USER_BLOCK

    return {key: value for key, value in (params.get("cosy") or {}).items() if key != USER_BLOCK}
