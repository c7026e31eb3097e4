"""Models of ``neuroneval record``, from local files only: a spec (mapping) → :class:`RecordModel`.

Families beyond those of :func:`neuroneval.models.loaders.load_model` (``torchvision``, ``timm``, ``open_clip``,
``transformers_lm``, ``local_tiny_cnn``, loaded by it unchanged):

``module``
    ``factory``: ``"package.module:callable"`` (imported; called with ``kwargs``, a JSON mapping, default none),
    returning an ``nn.Module``; ``weights_path`` (optional): a state dict (``.pt``/``.pth``/``.safetensors``,
    read by :func:`neuroneval.models.loaders.read_state_dict`) loaded strictly.
``torchscript``
    ``path``: a ``torch.jit.save`` archive. TorchScript modules take no forward hooks: only the output layers
    ``logits``/``softmax`` can be recorded (save with ``torch.export`` to record inner layers).
``torch_export``
    ``path``: a ``torch.export.save`` file, unflattened (``torch.export.unflatten``) so that its submodules keep
    their names and take hooks.
``transformers``
    ``model_dir``: a ``save_pretrained`` folder; ``modality``: ``text`` (default; ``AutoModelForCausalLM``,
    else ``AutoModel``, with ``AutoTokenizer``) or ``vision`` (``AutoModel`` with ``AutoImageProcessor``); always
    ``local_files_only=True``.

Images reach ``module``/``torchscript``/``torch_export`` models as float tensors in [0, 1], (3, H, W), resized to
``image_size`` when it is given.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from neuroneval.activations.record_inputs import sha256_file, sha256_files
from neuroneval.models.loaders import FAMILIES, load_model, load_weights, to_pil

RECORD_FAMILIES = ("module", "torchscript", "torch_export", "transformers", *FAMILIES)


@dataclass
class RecordModel:
    """What recording needs of a model: the hookable ``module``, a ``forward`` of one batch, how to turn an image
    into a tensor (``preprocess``), the ``tokenizer`` of a text model, whether its submodules take hooks, and its
    ``description`` (spec and file hashes) for the tables' metadata."""

    module: nn.Module
    forward: Callable[[Any], Any]
    description: dict[str, Any]
    preprocess: Callable[[Any], torch.Tensor] | None = None
    tokenizer: Any = None
    hookable: bool = True
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_module(cls, module: nn.Module, *, name: str = "module", image_size: int | None = None) -> RecordModel:
        """Wrap an ``nn.Module`` already in memory (library use); ``name`` is what the metadata records, with the
        sha256 of its state dict (:func:`state_dict_digest`), so a resumed run never mixes two models' batches."""
        return cls(module, _call_module(module), {"model": name, "family": "in_memory",
                                                  "sha256": state_dict_digest(module)},
                   preprocess=image_tensor(image_size))


def state_dict_digest(module: nn.Module) -> str:
    """The sha256 of a module's state dict: each entry's name, dtype, shape and bytes, in key order."""
    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}\0{flat.dtype}\0{tuple(tensor.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def load_record_model(spec: Mapping[str, Any], *, image_size: int | None = None) -> RecordModel:
    """The :class:`RecordModel` a spec describes (module docstring), in eval mode, from local files only."""
    if not isinstance(spec, Mapping) or spec.get("family") not in RECORD_FAMILIES:
        raise ValueError(f"a model spec needs 'family' in {list(RECORD_FAMILIES)}, got {spec!r}")
    family = spec["family"]
    if family == "module":
        loaded = _factory_model(spec, image_size)
    elif family == "torchscript":
        path = _existing(spec, "path")
        module = torch.jit.load(str(path), map_location="cpu")
        loaded = RecordModel(module, _call_module(module), _describe(spec, [path]),
                             preprocess=image_tensor(image_size), hookable=False)
    elif family == "torch_export":
        path = _existing(spec, "path")
        try:
            module = torch.export.unflatten(torch.export.load(str(path)))
        except Exception as error:  # a corrupt or foreign archive: name the file
            raise ValueError(f"could not load the torch.export file {path}: {error}") from error
        loaded = RecordModel(module, _call_module(module), _describe(spec, [path]), preprocess=image_tensor(image_size))
    elif family == "transformers":
        loaded = _transformers_model(spec)
    else:
        model = load_model(spec)
        forward = model.module.encode_image if family == "open_clip" else _call_module(model.module)
        if family == "transformers_lm":
            forward = _call_text_model(model.module)
        files = [model.source] if model.source.is_file() else sorted(p for p in model.source.iterdir() if p.is_file())
        loaded = RecordModel(model.module, forward, _describe(spec, files), preprocess=model.preprocess,
                             tokenizer=model.tokenizer if family == "transformers_lm" else None)
    loaded.module.eval()
    return loaded


def image_tensor(image_size: int | None) -> Callable[[Any], torch.Tensor]:
    """PIL image / uint8 array → float (3, H, W) in [0, 1], resized (bilinear) to ``image_size`` square if given."""

    def preprocess(image: Any) -> torch.Tensor:
        import numpy as np

        picture = to_pil(image)
        if image_size is not None:
            picture = picture.resize((image_size, image_size))
        return torch.from_numpy(np.asarray(picture, dtype=np.float32) / 255.0).permute(2, 0, 1).contiguous()

    return preprocess


def import_factory(path: str) -> Callable[..., Any]:
    """The callable named by ``"package.module:name"``, imported with the current directory on ``sys.path``
    (so ``mymodels:build`` finds ``./mymodels.py``); errors name the path and what is missing."""
    module_name, separator, attribute = str(path).partition(":")
    if not separator or not module_name or not attribute:
        raise ValueError(f"a model factory is 'package.module:callable', got {path!r}")
    try:
        with _working_directory_on_path():
            module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import the module {module_name!r} of the model factory {path!r}: {error}") from error
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise ValueError(f"the model factory {path!r} does not exist: {module_name!r} has no {attribute!r}")
        target = getattr(target, part)
    if not callable(target):
        raise ValueError(f"the model factory {path!r} is not callable")
    return target


@contextlib.contextmanager
def _working_directory_on_path() -> Iterator[None]:
    """The current directory first on ``sys.path`` while a factory is imported (a console script leaves it out)."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and cwd in sys.path:
            sys.path.remove(cwd)


def _factory_model(spec: Mapping[str, Any], image_size: int | None) -> RecordModel:
    factory = import_factory(spec.get("factory", ""))
    kwargs = spec.get("kwargs") or {}
    if isinstance(kwargs, str):
        kwargs = json.loads(kwargs)
    if not isinstance(kwargs, Mapping):
        raise ValueError(f"the factory kwargs must be a JSON mapping, got {kwargs!r}")
    module = factory(**kwargs)
    if not isinstance(module, nn.Module):
        raise ValueError(f"the model factory {spec['factory']!r} returned {type(module).__name__}, not an nn.Module")
    if not spec.get("weights_path"):
        description = {"model": dict(spec), "sha256": state_dict_digest(module)}
        return RecordModel(module, _call_module(module), description, preprocess=image_tensor(image_size))
    path = Path(spec["weights_path"]).expanduser()
    load_weights(module, path, description=f"the module built by {spec['factory']!r}")
    return RecordModel(module, _call_module(module), _describe(spec, [path]), preprocess=image_tensor(image_size))


def _transformers_model(spec: Mapping[str, Any]) -> RecordModel:
    import transformers

    model_dir = _existing(spec, "model_dir")
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir} is not a save_pretrained folder (no config.json)")
    modality = spec.get("modality", "text")
    if modality not in ("text", "vision"):
        raise ValueError(f"modality must be 'text' or 'vision', got {modality!r}")
    files = sorted(path for path in model_dir.iterdir() if path.is_file())
    try:
        if modality == "vision":
            module = _checked_pretrained(transformers.AutoModel, model_dir)
            processor = transformers.AutoImageProcessor.from_pretrained(model_dir, local_files_only=True)

            def preprocess(image: Any) -> torch.Tensor:
                return processor(images=to_pil(image), return_tensors="pt")["pixel_values"][0]

            def forward(batch: torch.Tensor) -> Any:
                return module(pixel_values=batch)

            return RecordModel(module, forward, _describe(spec, files), preprocess=preprocess)
        try:
            module = _checked_pretrained(transformers.AutoModelForCausalLM, model_dir)
        except ValueError as error:
            if "do not match" in str(error):
                raise
            module = _checked_pretrained(transformers.AutoModel, model_dir)
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    except OSError as error:
        raise ValueError(f"could not load the transformers model in {model_dir}: {error}") from error
    return RecordModel(module, _call_text_model(module), _describe(spec, files), tokenizer=tokenizer)


def _checked_pretrained(auto_class: Any, model_dir: Path) -> nn.Module:
    """``auto_class.from_pretrained(model_dir)`` from local files, refusing weights that transformers would silently
    re-initialise (missing or wrongly shaped keys), as :func:`neuroneval.models.loaders.load_model` does."""
    module, loading_info = auto_class.from_pretrained(model_dir, local_files_only=True, output_loading_info=True)
    problems = {kind: sorted(map(str, loading_info.get(kind) or ()))[:5]
                for kind in ("missing_keys", "mismatched_keys", "error_msgs")}
    if any(problems.values()):
        raise ValueError(f"the weights in {model_dir} do not match {type(module).__name__} built from its "
                         f"config.json: { {kind: keys for kind, keys in problems.items() if keys} }")
    return module


def _call_module(module: nn.Module) -> Callable[[Any], Any]:
    def forward(batch: Any) -> Any:
        return module(batch)

    return forward


def _call_text_model(module: nn.Module) -> Callable[[Any], Any]:
    def forward(batch: Mapping[str, torch.Tensor]) -> Any:
        return module(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"])

    return forward


def _existing(spec: Mapping[str, Any], key: str) -> Path:
    if not spec.get(key):
        raise ValueError(f"a {spec['family']!r} model spec needs {key!r}; got keys {sorted(spec)}")
    path = Path(spec[key]).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"{key} {path} does not exist")
    return path


def _describe(spec: Mapping[str, Any], files: list[Path]) -> dict[str, Any]:
    """The spec and the sha256 of the model's files, for the tables' metadata and the run's resume key."""
    hashes = {str(path): sha256_file(path) for path in files if path.is_file()}
    if len(files) > 1:
        root = files[0].parent
        return {"model": dict(spec), "sha256": sha256_files(root, files), "files": sorted(hashes)}
    return {"model": dict(spec), "sha256": next(iter(hashes.values()), None)}
