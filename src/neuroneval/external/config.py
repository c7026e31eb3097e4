"""The ``external:`` params block: resolved paths, the names each rule accepts, and checks that name the key.

:func:`neuroneval.external.checks.check_external` runs when the workflow is parsed
(``workflow/rules/external_common.smk``) and uses the resolvers here; a problem is an :class:`ExternalConfigError`
naming the params key (``external.models.vit_b16.weights_path``) and the resolved path, before any job runs. Steps
call the same resolvers, so a job never sees a relative path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

IMAGE_KINDS = ("image_folder", "cub")
TEXT_KINDS = ("text",)
VISION_FAMILIES = ("torchvision", "timm")
EMBEDDER_FAMILIES = ("open_clip",)
LANGUAGE_FAMILIES = ("transformers_lm",)
# Keys of a dataset / model spec that hold paths, and whether each names a folder (True) or a file (False).
DATASET_PATH_KEYS = {"root": True, "split_file": False, "class_names_file": False, "hierarchy_file": False,
                     "path": None}
MODEL_PATH_KEYS = {"weights_path": None, "pretrained": None, "tokenizer": True, "model_dir": True, "config": False}
# Keys this package reads from a model spec that load_model does not know.
NEURONEVAL_MODEL_KEYS = ("concept_prefixes", "context_length")
PROBE_LAYER = "concepts"
LM_LAYER = "next_token"


class ExternalConfigError(ValueError):
    """A problem in the ``external:`` params block; the message names the key and, for files, the path."""


def external_block(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """``config["external"]``, or an empty block when the params have none."""
    return config.get("external") or {}


def data_root(external: Mapping[str, Any]) -> Path:
    """``external.data_root`` with ``~`` expanded (default ``data/external_inputs``)."""
    return Path(str(external.get("data_root", "data/external_inputs"))).expanduser()


def resolve_path(external: Mapping[str, Any], path: str | Path) -> Path:
    """``path`` with ``~`` expanded; a relative path is taken relative to ``external.data_root``."""
    candidate = Path(str(path)).expanduser()
    return candidate if candidate.is_absolute() else data_root(external) / candidate


def names_of_kind(external: Mapping[str, Any], section: str, field: str, kinds: Iterable[str]) -> list[str]:
    """Entries of ``external.<section>`` whose ``field`` (``kind`` or ``family``) is one of ``kinds``."""
    wanted = tuple(kinds)
    return [name for name, spec in (external.get(section) or {}).items() if spec.get(field) in wanted]


def image_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the image datasets (``image_folder`` and ``cub``)."""
    return names_of_kind(external, "datasets", "kind", IMAGE_KINDS)


def text_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the text datasets."""
    return names_of_kind(external, "datasets", "kind", TEXT_KINDS)


def vision_models(external: Mapping[str, Any]) -> list[str]:
    """Names of the torchvision/timm image classifiers."""
    return names_of_kind(external, "models", "family", VISION_FAMILIES)


def embedders(external: Mapping[str, Any]) -> list[str]:
    """Names of the open_clip image–text models (pseudo-labels, probe features)."""
    return names_of_kind(external, "models", "family", EMBEDDER_FAMILIES)


def language_models(external: Mapping[str, Any]) -> list[str]:
    """Names of the transformers causal language models."""
    return names_of_kind(external, "models", "family", LANGUAGE_FAMILIES)


def probes(external: Mapping[str, Any]) -> list[str]:
    """Names of the linear probes trained in the DAG."""
    return list(external.get("probes") or {})


def dataset_spec(external: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The dataset spec ``external.datasets.<name>`` with its paths resolved (without ``masks``, which only the
    spatial explanation jobs read, :func:`dataset_masks`: declaring them reruns nothing upstream)."""
    spec = _entry(external, "datasets", name)
    return {key: str(resolve_path(external, value)) if key in DATASET_PATH_KEYS else value
            for key, value in spec.items() if key != "masks"}


def model_spec(external: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The model spec ``external.models.<name>`` with its paths resolved (a ``config`` is a path if ``.json``)."""
    spec = _entry(external, "models", name)
    return {key: str(resolve_path(external, value)) if is_model_path(key, value) else value
            for key, value in spec.items()}


def loader_spec(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A resolved model spec without the keys only neuroneval reads (what ``load_model`` takes)."""
    return {key: value for key, value in spec.items() if key not in NEURONEVAL_MODEL_KEYS}


def dataset_files(external: Mapping[str, Any], name: str) -> list[str]:
    """The user's folders and files a dataset reads (Snakemake inputs), resolved."""
    spec = _entry(external, "datasets", name)
    return [str(resolve_path(external, spec[key])) for key in DATASET_PATH_KEYS if key in spec]


def model_files(external: Mapping[str, Any], name: str) -> list[str]:
    """The user's checkpoint files and folders a model reads (Snakemake inputs), resolved."""
    spec = _entry(external, "models", name)
    return [str(resolve_path(external, value)) for key, value in spec.items() if is_model_path(key, value)]


def dataset_masks(external: Mapping[str, Any], name: str, *, needed_by: str) -> str:
    """The resolved concept-mask path ``external.datasets.<name>.masks`` (:mod:`neuroneval.external.spatial`),
    checked to exist; ``needed_by`` (the params key that asks for it) is named when it is not declared."""
    spec = _entry(external, "datasets", name)
    if not spec.get("masks"):
        raise ExternalConfigError(f"{needed_by} needs per-pixel concept masks of dataset {name!r}: declare "
                                  f"external.datasets.{name}.masks (an .npz or a folder of .npy arrays; "
                                  "see docs/paper_profile.md)")
    check_exists(external, f"external.datasets.{name}.masks", spec["masks"], None)
    return str(resolve_path(external, spec["masks"]))


def _entry(external: Mapping[str, Any], section: str, name: str) -> Mapping[str, Any]:
    entries = external.get(section) or {}
    if name not in entries:
        raise ExternalConfigError(f"external.{section} has no entry {name!r} ({sorted(entries)})")
    return entries[name]


def is_model_path(key: str, value: Any) -> bool:
    """Whether ``key: value`` of a model spec names a file or folder (a key of ``MODEL_PATH_KEYS``; ``config``
    only as a ``.json`` file)."""
    if key not in MODEL_PATH_KEYS or not isinstance(value, str | Path):
        return False
    return key != "config" or str(value).endswith(".json")


def check_exists(external: Mapping[str, Any], key: str, value: str | Path, is_folder: bool | None) -> None:
    """Raise :class:`ExternalConfigError` naming ``key`` and the resolved path unless ``value`` exists under
    ``external.data_root`` (a folder, a file, or either for ``is_folder=None``)."""
    path = resolve_path(external, value).absolute()
    relative = "" if Path(str(value)).expanduser().is_absolute() else \
        f" (relative to external.data_root = {data_root(external)})"
    if is_folder is True and not path.is_dir():
        raise ExternalConfigError(f"{key}: folder {path} does not exist{relative}")
    if is_folder is False and not path.is_file():
        raise ExternalConfigError(f"{key}: file {path} does not exist{relative}")
    if is_folder is None and not path.exists():
        raise ExternalConfigError(f"{key}: {path} does not exist{relative}")
