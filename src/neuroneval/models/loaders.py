"""Load the paper profile's real checkpoints from local files, behind one interface: :func:`load_model`.

A *spec* (a mapping from the profile) names a ``family`` and where its weights lie on disk; nothing is ever
downloaded. Every family returns a :class:`LoadedModel`: the ``nn.Module`` in eval mode, a ``preprocess`` that
turns one input (a PIL image or an (H, W, 3) uint8 array; a string for language models) into the tensor the
model expects, and ``layers``, the names of the modules people usually probe (``layer4``, ``fc``, ``head``,
``lm_head``…). Families and their keys:

``torchvision``
    ``arch`` (``resnet50``, ``vit_b_16``, ``resnet18``…), ``weights_path`` (a state dict: ``.pth``/``.pt``/
    ``.safetensors``, optionally wrapped in ``{"state_dict": …}`` with ``module.`` prefixes, or a directory
    holding one), ``num_classes`` (default 1000), optional ``transforms`` (the name of a torchvision weights
    entry whose preprocessing to use, default ``DEFAULT``) or ``image_transform`` (``resize_size``, ``crop_size``,
    ``mean``, ``std``), optional ``model_kwargs``.
``timm``
    ``arch`` (``vit_base_patch16_224``, ``resnet50``…), ``weights_path``, ``num_classes``, ``model_kwargs``.
``open_clip``
    ``config``: a built-in model name (``ViT-B-32-quickgelu``, ``ViT-SO400M-14-SigLIP-384``), a ``.json`` config
    file or a config mapping; ``pretrained``: a local weights file, or a directory with ``open_clip_config.json``
    + weights (+ tokenizer files), as the Hugging Face snapshots of open_clip models are. ``tokenizer``: a local
    Hugging Face tokenizer directory, needed when the config names one (SigLIP) and ``pretrained`` is a file.
``transformers_lm``
    ``model_dir``: a ``save_pretrained`` directory with the weights and the tokenizer (GPT-2 small / XL).
``local_tiny_cnn``
    ``weights_path``: a checkpoint written by :func:`neuroneval.models.classifier.save_checkpoint`.

Every spec may also give ``layers`` (a list of module names) to replace the defaults; each must exist.
Missing files raise ``FileNotFoundError`` and weights that do not fit the architecture raise ``ValueError``; both
name the path.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

FAMILIES = ("torchvision", "timm", "open_clip", "transformers_lm", "local_tiny_cnn")
WEIGHT_SUFFIXES = (".safetensors", ".pth", ".pt", ".bin", ".ckpt", ".tar")
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "tokenizer.model", "spiece.model", "vocab.txt")
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

# Names tried, in this order, when a spec gives no ``layers``; the last block of each stack in BLOCK_STACKS too.
PROBED_LAYERS: Mapping[str, tuple[str, ...]] = {
    "torchvision": ("layer1", "layer2", "layer3", "layer4", "avgpool", "fc", "features", "classifier",
                    "encoder.ln", "heads", "heads.head"),
    "timm": ("layer1", "layer2", "layer3", "layer4", "global_pool", "fc", "norm", "fc_norm", "head", "head.fc"),
    "open_clip": ("visual", "visual.ln_post", "visual.trunk.norm", "visual.trunk.head", "visual.head",
                  "visual.attnpool"),
    "transformers_lm": ("transformer.ln_f", "lm_head"),
    "local_tiny_cnn": ("block1", "block2", "block3", "pool", "fc", "blocks", "norm", "head", "features",
                       "concepts", "concept_probabilities"),
}
BLOCK_STACKS = ("encoder.layers", "blocks", "transformer.h", "visual.transformer.resblocks", "visual.trunk.blocks")


@dataclass
class LoadedModel:
    """A model ready to probe: ``module`` (eval mode), ``preprocess`` (one input -> tensor) and probed ``layers``.

    ``tokenizer`` is set for text-capable families (open_clip: list of strings -> token tensor; transformers_lm:
    the Hugging Face tokenizer); ``source`` is the file or directory the weights came from.
    """

    module: nn.Module
    preprocess: Callable[[Any], torch.Tensor]
    layers: tuple[str, ...]
    family: str
    source: Path
    tokenizer: Callable[..., Any] | None = None
    info: dict[str, Any] = field(default_factory=dict)


def load_model(spec: Mapping[str, Any]) -> LoadedModel:
    """Build the model a spec describes from local files only (see the module docstring for the keys).

    Examples
    --------
    >>> load_model({"family": "torchvision", "arch": "resnet50",
    ...             "weights_path": "~/models/resnet50-0676ba61.pth"})  # doctest: +SKIP
    """
    if not isinstance(spec, Mapping) or "family" not in spec:
        raise ValueError(f"a model spec must be a mapping with a 'family' key (one of {FAMILIES}), got {spec!r}")
    family = spec["family"]
    if family not in _LOADERS:
        raise ValueError(f"unknown model family {family!r}; expected one of {FAMILIES}")
    loaded = _LOADERS[family](spec)
    loaded.module.eval()
    if "layers" in spec:
        loaded.layers = _checked_layers(loaded.module, spec["layers"], loaded.source)
    return loaded


def default_layers(module: nn.Module, family: str) -> tuple[str, ...]:
    """The commonly probed layers of ``module`` that exist: the family's :data:`PROBED_LAYERS` and last blocks."""
    names = dict(module.named_modules())
    found = [name for name in PROBED_LAYERS[family] if name in names]
    for stack in BLOCK_STACKS:
        children = list(names[stack].named_children()) if stack in names else []
        if children:
            found.append(f"{stack}.{children[-1][0]}")
    return tuple(found)


def read_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Tensors of a checkpoint file (safetensors or ``torch.load(weights_only=True)``), unwrapped.

    Unwraps ``{"state_dict": …}`` / ``{"model": …}`` / ``{"model_state_dict": …}`` containers and strips a
    ``module.`` prefix that every key shares (checkpoints saved from ``DataParallel``, as Places365's are).
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"weights file {path} does not exist")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            payload: Any = load_file(str(path), device="cpu")
        else:
            payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # corrupt file, pickled code, wrong format: say which file
        raise ValueError(f"could not read weights from {path}: {error}") from error
    while isinstance(payload, Mapping):
        wrapped = [key for key in ("state_dict", "model", "model_state_dict") if isinstance(payload.get(key), Mapping)]
        if not wrapped:
            break
        payload = payload[wrapped[0]]
    if not isinstance(payload, Mapping) or not all(isinstance(value, torch.Tensor) for value in payload.values()):
        raise ValueError(f"{path} does not hold a state dict (a mapping of names to tensors)")
    state_dict = dict(payload)
    if state_dict and all(key.startswith("module.") for key in state_dict):
        state_dict = {key.removeprefix("module."): value for key, value in state_dict.items()}
    return state_dict


def weights_file(path: str | Path) -> Path:
    """``path`` itself if it is a file; in a directory, its single weights file (``model.safetensors`` first)."""
    path = Path(path).expanduser()
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(f"weights path {path} does not exist")
    for preferred in ("model.safetensors", "pytorch_model.bin"):
        if (path / preferred).is_file():
            return path / preferred
    candidates = sorted(child for child in path.iterdir() if child.is_file() and child.suffix in WEIGHT_SUFFIXES)
    if len(candidates) != 1:
        raise FileNotFoundError(f"expected one weights file ({', '.join(WEIGHT_SUFFIXES)}) in {path}, "
                                f"found {[candidate.name for candidate in candidates]}")
    return candidates[0]


def load_weights(module: nn.Module, path: Path, *, description: str) -> None:
    """``module.load_state_dict(read_state_dict(path))`` (strict), with an error naming the file if they differ."""
    state_dict = read_state_dict(path)
    try:
        module.load_state_dict(state_dict, strict=True)
    except RuntimeError as error:
        raise ValueError(f"weights in {path} do not match {description}: {_first_lines(str(error))}") from error


class ImagePreprocess:
    """Apply a PIL-based transform to a PIL image or an (H, W, 3) / (H, W) uint8 array (converted to RGB)."""

    def __init__(self, transform: Callable[[Any], torch.Tensor]) -> None:
        self.transform = transform

    def __call__(self, image: Any) -> torch.Tensor:
        return self.transform(to_pil(image))

    def __repr__(self) -> str:
        return f"ImagePreprocess({self.transform!r})"


def to_pil(image: Any) -> Any:
    """A PIL RGB image from a PIL image or a uint8 array (H, W) / (H, W, 3) / (H, W, 4)."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = np.asarray(image)
    if array.dtype != np.uint8 or array.ndim not in (2, 3) or (array.ndim == 3 and array.shape[-1] not in (3, 4)):
        raise ValueError(f"expected a PIL image or a uint8 (H, W[, 3|4]) array, got {array.dtype} {array.shape}")
    return Image.fromarray(array).convert("RGB")


def _checked_layers(module: nn.Module, layers: Sequence[str], source: Path) -> tuple[str, ...]:
    if isinstance(layers, str):
        raise ValueError(f"'layers' must be a list of module names, got the string {layers!r}")
    names = dict(module.named_modules())
    missing = [layer for layer in layers if layer not in names]
    if missing:
        raise ValueError(f"layers {missing} are not modules of the model loaded from {source}")
    return tuple(layers)


def _first_lines(message: str, count: int = 6) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return " ".join(lines[:count]) + (" …" if len(lines) > count else "")


def _required(spec: Mapping[str, Any], key: str) -> Any:
    if key not in spec:
        raise ValueError(f"a {spec['family']!r} model spec needs {key!r}; got keys {sorted(spec)}")
    return spec[key]


def _load_torchvision(spec: Mapping[str, Any]) -> LoadedModel:
    import torchvision

    arch = _required(spec, "arch")
    path = weights_file(_required(spec, "weights_path"))
    num_classes = int(spec.get("num_classes", 1000))
    try:
        module = torchvision.models.get_model(arch, weights=None, num_classes=num_classes,
                                              **spec.get("model_kwargs", {}))
    except ValueError as error:
        raise ValueError(f"torchvision has no architecture {arch!r}: {error}") from error
    load_weights(module, path, description=f"torchvision {arch!r} with num_classes={num_classes}")
    return LoadedModel(module, _torchvision_preprocess(arch, spec), default_layers(module, "torchvision"),
                       "torchvision", path)


def _torchvision_preprocess(arch: str, spec: Mapping[str, Any]) -> ImagePreprocess:
    from torchvision import transforms

    if "image_transform" in spec:
        options = spec["image_transform"]
        crop_size = options.get("crop_size", 224)
        return ImagePreprocess(transforms.Compose([
            transforms.Resize(options.get("resize_size", 256)),
            transforms.CenterCrop(crop_size),
            transforms.ToTensor(),
            transforms.Normalize(options.get("mean", IMAGENET_MEAN), options.get("std", IMAGENET_STD)),
        ]))
    import torchvision

    try:
        weights_enum = torchvision.models.get_model_weights(arch)
    except ValueError:
        return _torchvision_preprocess(arch, {"image_transform": {}})
    entry = spec.get("transforms", "DEFAULT")
    try:
        return ImagePreprocess(weights_enum[entry].transforms())
    except KeyError as error:
        known = ["DEFAULT", *weights_enum.__members__]
        raise ValueError(f"torchvision {arch!r} has no weights entry {entry!r} to take transforms from; "
                         f"expected one of {known}") from error


def _load_timm(spec: Mapping[str, Any]) -> LoadedModel:
    import timm
    from timm.data import create_transform, resolve_model_data_config

    arch = _required(spec, "arch")
    path = weights_file(_required(spec, "weights_path"))
    options: dict[str, Any] = dict(spec.get("model_kwargs", {}))
    if "num_classes" in spec:
        options["num_classes"] = int(spec["num_classes"])
    try:
        module = timm.create_model(arch, pretrained=False, **options)
    except RuntimeError as error:
        raise ValueError(f"timm has no architecture {arch!r}: {error}") from error
    load_weights(module, path, description=f"timm {arch!r} with {options}")
    data_config = resolve_model_data_config(module)
    # A ViT built with its own img_size keeps its architecture's pretrained input_size: the model's size wins.
    image_size = getattr(getattr(module, "patch_embed", None), "img_size", None)
    if image_size is not None and not getattr(module, "dynamic_img_size", False):
        data_config["input_size"] = (3, *image_size)
    preprocess = ImagePreprocess(create_transform(**data_config, is_training=False))
    return LoadedModel(module, preprocess, default_layers(module, "timm"), "timm", path,
                       info={"data_config": data_config})


def _load_local_tiny_cnn(spec: Mapping[str, Any]) -> LoadedModel:
    from neuroneval.models.classifier import load_checkpoint
    from neuroneval.models.cnn import images_to_tensor

    path = Path(_required(spec, "weights_path")).expanduser()
    if not path.is_file():
        raise FileNotFoundError(f"weights file {path} does not exist")
    if not path.with_suffix(".json").is_file():
        raise FileNotFoundError(f"the model card {path.with_suffix('.json')} beside {path} does not exist")
    try:
        module, card = load_checkpoint(path)
    except (RuntimeError, KeyError, TypeError) as error:
        raise ValueError(f"could not load the tiny classifier checkpoint {path}: {_first_lines(str(error))}") from error

    def preprocess(image: Any) -> torch.Tensor:
        return images_to_tensor(np.array(to_pil(image))[None])[0]

    return LoadedModel(module, preprocess, default_layers(module, "local_tiny_cnn"), "local_tiny_cnn", path,
                       info={"card": card})


def _load_open_clip(spec: Mapping[str, Any]) -> LoadedModel:
    import open_clip

    pretrained = Path(_required(spec, "pretrained")).expanduser()
    if not pretrained.exists():
        raise FileNotFoundError(f"open_clip weights {pretrained} do not exist")
    if pretrained.is_dir():
        if not (pretrained / "open_clip_config.json").is_file():
            raise FileNotFoundError(f"{pretrained} is a directory without open_clip_config.json; pass the weights "
                                    "file as 'pretrained' and the model name as 'config'")
        model_name, pretrained_arg = f"local-dir:{pretrained}", None
        model_config = json.loads((pretrained / "open_clip_config.json").read_text())["model_cfg"]
    else:
        model_name = _open_clip_model_name(_required(spec, "config"))
        pretrained_arg = str(pretrained)
        model_config = open_clip.get_model_config(model_name)
    try:
        module, _, preprocess = open_clip.create_model_and_transforms(
            model_name, pretrained=pretrained_arg, output_dict=True, force_quick_gelu=bool(spec.get("quick_gelu")),
            **spec.get("model_kwargs", {}))
    except RuntimeError as error:
        raise ValueError(f"could not load the open_clip weights {pretrained} into {model_name!r} (they do not match it "
                         f"or are not a state dict; TorchScript archives such as OpenAI's ViT-B-32.pt are refused): "
                         f"{_first_lines(str(error))}") from error
    tokenizer = _open_clip_tokenizer(model_name, model_config, spec, pretrained)
    return LoadedModel(module, ImagePreprocess(preprocess), default_layers(module, "open_clip"), "open_clip",
                       pretrained, tokenizer=tokenizer, info={"model_name": model_name})


def _open_clip_model_name(config: str | Mapping[str, Any]) -> str:
    """A name open_clip knows: built-in names pass through, JSON files and mappings are registered first."""
    import open_clip

    if isinstance(config, Mapping):
        missing = [key for key in ("embed_dim", "vision_cfg", "text_cfg") if key not in config]
        if missing:
            raise ValueError(f"an open_clip config mapping needs embed_dim, vision_cfg and text_cfg; {missing} missing")
        text = json.dumps(dict(config), sort_keys=True)
        name = f"neuroneval-{hashlib.sha256(text.encode()).hexdigest()[:16]}"
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / f"{name}.json").write_text(text)
            open_clip.add_model_config(Path(folder) / f"{name}.json")
        return name
    if str(config).endswith(".json"):
        config_path = Path(config).expanduser()
        if not config_path.is_file():
            raise FileNotFoundError(f"open_clip config file {config_path} does not exist")
        open_clip.add_model_config(config_path)
        return config_path.stem
    if open_clip.get_model_config(str(config)) is None:
        raise ValueError(f"open_clip has no model config {config!r}; give a built-in name (e.g. 'ViT-B-32'), "
                         "a .json file or a config mapping")
    return str(config)


def _open_clip_tokenizer(model_name: str, model_config: Mapping[str, Any], spec: Mapping[str, Any],
                         pretrained: Path) -> Callable[..., torch.Tensor]:
    """The bundled BPE tokenizer, or a Hugging Face tokenizer read from a local directory — never the hub."""
    import open_clip
    from open_clip.tokenizer import HFTokenizer

    text_config = model_config.get("text_cfg", {})
    needs_hf = bool(text_config.get("hf_tokenizer_name") or text_config.get("hf_model_name"))
    context_length = text_config.get("context_length")
    if "tokenizer" in spec:
        tokenizer_dir = Path(spec["tokenizer"]).expanduser()
        if not tokenizer_dir.is_dir():
            raise FileNotFoundError(f"tokenizer directory {tokenizer_dir} does not exist")
        return HFTokenizer(str(tokenizer_dir), context_length=context_length,
                                     tokenizer_mode=text_config.get("tokenizer_mode"),
                                     **text_config.get("tokenizer_kwargs", {}))
    if pretrained.is_dir():
        return open_clip.get_tokenizer(model_name)
    if needs_hf:
        raise ValueError(f"{model_name!r} uses a Hugging Face tokenizer ({text_config.get('hf_tokenizer_name')!r}); "
                         "give its local directory as 'tokenizer' (nothing is downloaded)")
    if "siglip" in model_name.lower():
        raise ValueError(f"{model_name!r} needs a SigLIP tokenizer; give its local directory as 'tokenizer'")
    return open_clip.get_tokenizer(model_name)


def _load_transformers_lm(spec: Mapping[str, Any]) -> LoadedModel:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(_required(spec, "model_dir")).expanduser()
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir} is not a saved model directory (no config.json)")
    try:
        module, loading_info = AutoModelForCausalLM.from_pretrained(
            model_dir, local_files_only=True, output_loading_info=True, **spec.get("model_kwargs", {}))
    except (OSError, RuntimeError, ValueError) as error:
        raise ValueError(f"could not load the language model in {model_dir}: {_first_lines(str(error))}") from error
    # transformers re-initialises missing and wrongly shaped weights with only a printed report: refuse instead.
    problems = {kind: sorted(map(str, loading_info.get(kind) or ()))[:5]
                for kind in ("missing_keys", "mismatched_keys", "error_msgs", "conversion_errors")}
    if any(problems.values()):
        raise ValueError(f"the weights in {model_dir} do not match its config.json: "
                         f"{ {kind: keys for kind, keys in problems.items() if keys} }")
    # Without tokenizer files transformers 5 returns an empty tokenizer instead of failing: check first.
    if not any((model_dir / name).is_file() for name in TOKENIZER_FILES):
        raise FileNotFoundError(f"no usable tokenizer files in {model_dir}: expected one of {TOKENIZER_FILES}")
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as error:
        raise FileNotFoundError(f"no usable tokenizer files in {model_dir}: {_first_lines(str(error))}") from error
    if len(tokenizer) < 2:
        raise ValueError(f"the tokenizer read from {model_dir} is empty")
    if tokenizer.vocab_size > module.config.vocab_size:
        raise ValueError(f"the tokenizer in {model_dir} has {tokenizer.vocab_size} tokens but the model only "
                         f"{module.config.vocab_size}")

    def preprocess(text: str) -> torch.Tensor:
        return torch.tensor(tokenizer(text)["input_ids"], dtype=torch.long)

    return LoadedModel(module, preprocess, default_layers(module, "transformers_lm"), "transformers_lm",
                       model_dir, tokenizer=tokenizer,
                       info={"unexpected_keys": sorted(loading_info.get("unexpected_keys") or ())})


_LOADERS: Mapping[str, Callable[[Mapping[str, Any]], LoadedModel]] = {
    "torchvision": _load_torchvision,
    "timm": _load_timm,
    "open_clip": _load_open_clip,
    "transformers_lm": _load_transformers_lm,
    "local_tiny_cnn": _load_local_tiny_cnn,
}
