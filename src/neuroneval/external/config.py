"""The ``external:`` params block: resolved paths, the names each rule accepts, and checks that name the key.

:func:`check_external` runs when the workflow is parsed (``workflow/rules/external.smk``): it follows every
setting in ``meta.settings`` that reads an external dataset to the datasets, models, probes and pseudo-label
sources it needs, checks that they are declared with the right kind, and that their folders and files exist.
Every problem raises :class:`ExternalConfigError` naming the params key (``external.models.vit_b16.weights_path``)
and the resolved path, before any job runs. Steps call the same resolvers, so a job never sees a relative path.
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
    return {key: str(resolve_path(external, value)) if _is_model_path(key, value) else value
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
    return [str(resolve_path(external, value)) for key, value in spec.items() if _is_model_path(key, value)]


def dataset_masks(external: Mapping[str, Any], name: str, *, needed_by: str) -> str:
    """The resolved concept-mask path ``external.datasets.<name>.masks`` (:mod:`neuroneval.external.spatial`),
    checked to exist; ``needed_by`` (the params key that asks for it) is named when it is not declared."""
    spec = _entry(external, "datasets", name)
    if not spec.get("masks"):
        raise ExternalConfigError(f"{needed_by} needs per-pixel concept masks of dataset {name!r}: declare "
                                  f"external.datasets.{name}.masks (an .npz or a folder of .npy arrays; "
                                  "see docs/paper_profile.md)")
    _check_exists(external, f"external.datasets.{name}.masks", spec["masks"], None)
    return str(resolve_path(external, spec["masks"]))


def check_dataset_files(external: Mapping[str, Any], name: str) -> None:
    """Raise :class:`ExternalConfigError` naming ``external.datasets.<name>.<key>`` when a path is missing."""
    spec = _entry(external, "datasets", name)
    for key, is_folder in DATASET_PATH_KEYS.items():
        if key in spec:
            _check_exists(external, f"external.datasets.{name}.{key}", spec[key], is_folder)


def check_model_files(external: Mapping[str, Any], name: str) -> None:
    """Raise :class:`ExternalConfigError` naming ``external.models.<name>.<key>`` when a path is missing."""
    spec = _entry(external, "models", name)
    for key, value in spec.items():
        if _is_model_path(key, value):
            _check_exists(external, f"external.models.{name}.{key}", value, MODEL_PATH_KEYS[key])


def check_external(config: Mapping[str, Any]) -> None:
    """Check everything the settings of ``meta.settings`` need from ``external:`` (kinds, references, files).

    Settings on the embedded worlds (datasets ``vision_*``/``text_*``/``digits_*``) are skipped, so the embedded default
    passes whatever ``external:`` holds. Every problem is collected first (each names its params key and, for a
    file, the resolved path), then one :class:`ExternalConfigError` lists them all with the settings that need each
    and ends with how to trim ``meta.settings`` instead. Own datasets and models (``kind: tables``/``array``,
    ``family: custom``) are checked by :mod:`neuroneval.external.own`.
    """
    from neuroneval.external import own

    external = external_block(config)
    datasets = external.get("datasets") or {}
    own_kinds = (own.TABLES_KIND, own.ARRAY_KIND)
    needs: dict[tuple[str, str], set[str]] = {}
    problems: dict[str, set[str]] = {}
    settings = config.get("settings", {})
    for setting_name in config.get("meta", {}).get("settings", []):
        setting = settings.get(setting_name, {})
        dataset = setting.get("dataset", "")
        if dataset not in datasets:
            if not dataset.startswith(("vision_", "text_", "digits_")):
                problems.setdefault(f"settings.{setting_name}.dataset: {dataset!r} is neither an embedded world "
                                    f"(vision_*, text_*, digits_*) nor declared in external.datasets "
                                    f"({sorted(datasets)})", set()).add(setting_name)
            continue
        needs.setdefault(("datasets", dataset), set()).add(setting_name)
        if datasets[dataset].get("kind") in own_kinds:
            for problem in own.own_setting_problems(config, setting_name, setting):
                problems.setdefault(problem, set()).add(setting_name)
            for unit in setting.get("units", []):
                if unit.get("model") in own.custom_models(external):
                    needs.setdefault(("models", unit["model"]), set()).add(setting_name)
            continue
        try:
            is_text = datasets[dataset].get("kind") in TEXT_KINDS
            for position, unit in enumerate(setting.get("units", [])):
                unit_key = f"settings.{setting_name}.units[{position}]"
                needed_datasets_of, needed_models_of = _unit_needs(external, unit_key, unit, is_text=is_text)
                for name in needed_datasets_of:
                    needs.setdefault(("datasets", name), set()).add(setting_name)
                for name in needed_models_of:
                    needs.setdefault(("models", name), set()).add(setting_name)
            source = setting.get("concepts", {}).get("source", "labels")
            needed_datasets_of, needed_models_of = _source_needs(external, f"settings.{setting_name}.concepts.source",
                                                                 source, is_text=is_text)
            for name in needed_datasets_of:
                needs.setdefault(("datasets", name), set()).add(setting_name)
            for name in needed_models_of:
                needs.setdefault(("models", name), set()).add(setting_name)
            spec = datasets[dataset]
            if spec.get("kind") in TEXT_KINDS:
                tokenizer_model = spec.get("tokenizer_model")
                _require_model(external, f"external.datasets.{dataset}.tokenizer_model", tokenizer_model,
                               LANGUAGE_FAMILIES)
                needs.setdefault(("models", tokenizer_model), set()).add(setting_name)
        except ExternalConfigError as error:
            problems.setdefault(str(error), set()).add(setting_name)
    for (section, name), users in sorted(needs.items()):
        for problem in _file_problems(external, section, name):
            problems.setdefault(problem, set()).update(users)
    if problems:
        raise ExternalConfigError(missing_report(problems))


def missing_report(problems: Mapping[str, set[str]]) -> str:
    """One message listing every problem with the settings that need it, and how to trim ``meta.settings``."""
    lines = [f"external: {len(problems)} problem{'s' if len(problems) > 1 else ''} in the settings of meta.settings:"]
    lines += [f"  - {problem} (needed by {', '.join(sorted(users))})" for problem, users in problems.items()]
    affected = sorted(set().union(*problems.values()))
    lines.append(f"Fix these, or remove settings {', '.join(affected)} from meta.settings.")
    return "\n".join(lines)


def _file_problems(external: Mapping[str, Any], section: str, name: str) -> list[str]:
    """A missing path of ``external.<section>.<name>`` (every one, not the first), or an undeclared entry."""
    from neuroneval.external import own

    entries = external.get(section) or {}
    if name not in entries:
        return [f"external.{section} has no entry {name!r} ({sorted(entries)})"]
    spec = entries[name]
    if spec.get("kind") in (own.TABLES_KIND, own.ARRAY_KIND) or spec.get("family") == own.CUSTOM_FAMILY:
        keys = own.own_file_keys(external, section, name)
    elif section == "datasets":
        keys = [(f"external.datasets.{name}.{key}", spec[key], is_folder)
                for key, is_folder in DATASET_PATH_KEYS.items() if key in spec]
    else:
        keys = [(f"external.models.{name}.{key}", value, MODEL_PATH_KEYS[key])
                for key, value in spec.items() if _is_model_path(key, value)]
    problems = []
    for key, value, is_folder in keys:
        try:
            _check_exists(external, key, value, is_folder)
        except ExternalConfigError as error:
            problems.append(str(error))
    return problems


def _unit_needs(external: Mapping[str, Any], key: str, unit: Mapping[str, Any], *,
                is_text: bool) -> tuple[set[str], set[str]]:
    model, layer = unit.get("model"), unit.get("layer")
    if model in probes(external):
        if is_text or layer != PROBE_LAYER:
            raise ExternalConfigError(f"{key}: probe {model!r} has the single layer {PROBE_LAYER!r} on image "
                                      f"datasets, got layer {layer!r}")
        probe = external["probes"][model]
        probe_key = f"external.probes.{model}"
        _require_model(external, f"{probe_key}.features", probe.get("features"), EMBEDDER_FAMILIES)
        train_dataset = probe.get("train_dataset")
        if train_dataset not in image_datasets(external):
            raise ExternalConfigError(f"{probe_key}.train_dataset: {train_dataset!r} is not an image dataset of "
                                      f"external.datasets ({image_datasets(external)})")
        return {train_dataset}, {probe["features"]}
    if is_text:
        _require_model(external, f"{key}.model", model, LANGUAGE_FAMILIES)
        if layer != LM_LAYER:
            raise ExternalConfigError(f"{key}.layer: language models have the layer {LM_LAYER!r}, got {layer!r}")
    else:
        _require_model(external, f"{key}.model", model, VISION_FAMILIES)
    return set(), {model}


def _source_needs(external: Mapping[str, Any], key: str, source: str, *, is_text: bool) -> tuple[set[str], set[str]]:
    if source == "labels":
        return set(), set()
    if is_text or not source.startswith("pseudo:"):
        raise ExternalConfigError(f"{key}: external {'text' if is_text else 'image'} datasets have the concept "
                                  f"sources labels{'' if is_text else ' and pseudo:<open_clip model>'}, got {source!r}")
    model = source.removeprefix("pseudo:")
    _require_model(external, key, model, EMBEDDER_FAMILIES)
    calibration = (external.get("pseudo_labels") or {}).get(model, {}).get("calibration", {})
    if calibration.get("method") == "fit":
        dataset = calibration.get("dataset")
        if dataset not in image_datasets(external):
            raise ExternalConfigError(f"external.pseudo_labels.{model}.calibration.dataset: {dataset!r} is not an "
                                      f"image dataset of external.datasets ({image_datasets(external)})")
        return {dataset}, {model}
    return set(), {model}


def _require_model(external: Mapping[str, Any], key: str, name: Any, families: tuple[str, ...]) -> None:
    models = external.get("models") or {}
    if name not in models:
        raise ExternalConfigError(f"{key}: {name!r} is not declared in external.models ({sorted(models)})")
    family = models[name].get("family")
    if family not in families:
        raise ExternalConfigError(f"{key}: external.models.{name} has family {family!r}; this needs one of "
                                  f"{list(families)}")


def _entry(external: Mapping[str, Any], section: str, name: str) -> Mapping[str, Any]:
    entries = external.get(section) or {}
    if name not in entries:
        raise ExternalConfigError(f"external.{section} has no entry {name!r} ({sorted(entries)})")
    return entries[name]


def _is_model_path(key: str, value: Any) -> bool:
    if key not in MODEL_PATH_KEYS or not isinstance(value, str | Path):
        return False
    return key != "config" or str(value).endswith(".json")


def _check_exists(external: Mapping[str, Any], key: str, value: str | Path, is_folder: bool | None) -> None:
    path = resolve_path(external, value).absolute()
    relative = "" if Path(str(value)).expanduser().is_absolute() else \
        f" (relative to external.data_root = {data_root(external)})"
    if is_folder is True and not path.is_dir():
        raise ExternalConfigError(f"{key}: folder {path} does not exist{relative}")
    if is_folder is False and not path.is_file():
        raise ExternalConfigError(f"{key}: file {path} does not exist{relative}")
    if is_folder is None and not path.exists():
        raise ExternalConfigError(f"{key}: {path} does not exist{relative}")
