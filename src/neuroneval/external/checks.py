"""The parse-time check of the ``external:`` block: every problem of the settings of ``meta.settings`` at once.

:func:`check_external` runs when the workflow is parsed (``workflow/rules/external_common.smk``): it follows every
setting in ``meta.settings`` that reads an external dataset to the datasets, models, probes and pseudo-label
sources it needs, checks that they are declared with the right kind, and that their folders and files exist; own
datasets and models (``kind: tables``/``array``, ``family: custom``) are checked by :mod:`neuroneval.external.own`.
All problems are collected, then raised as one :class:`~neuroneval.external.config.ExternalConfigError` that names
each params key and resolved path, the settings that need it, and which settings to drop from ``meta.settings``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neuroneval.external import corpus, own
from neuroneval.external.config import (
    DATASET_PATH_KEYS,
    EMBEDDER_FAMILIES,
    LANGUAGE_FAMILIES,
    LM_LAYER,
    MODEL_PATH_KEYS,
    PROBE_LAYER,
    TEXT_KINDS,
    VISION_FAMILIES,
    ExternalConfigError,
    check_exists,
    external_block,
    image_datasets,
    is_model_path,
    probes,
)


def check_external(config: Mapping[str, Any]) -> None:
    """Check everything the settings of ``meta.settings`` need from ``external:`` (kinds, references, files).

    Settings on the embedded worlds (datasets ``vision_*``/``text_*``/``digits_*``) are skipped, so the embedded default
    passes whatever ``external:`` holds. Every problem is collected first (each names its params key and, for a
    file, the resolved path), then one :class:`ExternalConfigError` lists them all with the settings that need each
    and ends with how to trim ``meta.settings`` instead. Own datasets and models (``kind: tables``/``array``,
    ``family: custom``) are checked by :mod:`neuroneval.external.own`.
    """
    external = external_block(config)
    datasets = external.get("datasets") or {}
    own_kinds = (*own.OWN_KINDS, corpus.CORPUS_KIND)
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
            if datasets[dataset].get("kind") == corpus.CORPUS_KIND:
                for problem in corpus.corpus_setting_problems(config, setting_name, setting):
                    problems.setdefault(problem, set()).add(setting_name)
                if isinstance(datasets[dataset].get("tokenizer_model"), str):
                    needs.setdefault(("models", datasets[dataset]["tokenizer_model"]), set()).add(setting_name)
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
    entries = external.get(section) or {}
    if name not in entries:
        return [f"external.{section} has no entry {name!r} ({sorted(entries)})"]
    spec = entries[name]
    if spec.get("kind") == corpus.CORPUS_KIND:
        keys = corpus.corpus_file_keys(external, section, name)
    elif spec.get("kind") in own.OWN_KINDS or spec.get("family") == own.CUSTOM_FAMILY:
        keys = own.own_file_keys(external, section, name) + corpus.corpus_file_keys(external, section, name)
    elif section == "datasets":
        keys = [(f"external.datasets.{name}.{key}", spec[key], is_folder)
                for key, is_folder in DATASET_PATH_KEYS.items() if key in spec]
    else:
        keys = [(f"external.models.{name}.{key}", value, MODEL_PATH_KEYS[key])
                for key, value in spec.items() if is_model_path(key, value)]
    problems = []
    for key, value, is_folder in keys:
        try:
            check_exists(external, key, value, is_folder)
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
