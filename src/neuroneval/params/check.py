"""Checks of the workflow's params (``params.yaml`` and every ``--configfile`` overlay) before Snakemake plans a job.

``workflow/rules/common.smk`` calls :func:`check_params` right after Snakemake has loaded the config, then replaces
the config by :func:`canonical_config`. Nothing else imports this module, so editing it reruns no job.

:func:`check_params` collects every problem of four kinds and raises one :class:`ParamsError` that lists them by key
path (``settings.cnn_final_gt.units[0].model``), so a typo stops the run instead of leaving a stale Table 4 in place
(Snakemake keeps an existing output whose producer's inputs cannot be made):

* duplicate keys in a params file (:func:`duplicate_key_problems`), which Snakemake's YAML loader would resolve
  silently to the last value while DVC refuses the file;
* schema violations (:func:`schema_problems`: every error of ``workflow/schemas/params.schema.yaml``, with integers
  that must be integral, ``3.0`` is not an integer);
* numbers that are NaN or infinite anywhere in the config (:func:`nonfinite_problems`; JSON Schema cannot say so);
* references that name nothing (:func:`reference_problems`): a setting's dataset, its units' models and layers, its
  concept source, the settings, models and blocks named by other sections.

Snakemake's params trigger compares the ``repr`` of each rule param, so the order of a mapping's keys would rerun
jobs whose values did not change; :func:`canonical_config` sorts every mapping's keys (lists keep their order).
"""

from __future__ import annotations

import difflib
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from neuroneval.external import config as externals
from neuroneval.models.layer_names import classifier_layer_names

#: Layers every world classifier has without a module of that name (neuroneval.activations.OUTPUT_LAYERS, and
#: ``superclass``, the sums of ``softmax`` per parent that ``vision_classifier_activations`` records).
CLASSIFIER_OUTPUT_LAYERS = ("logits", "softmax", "superclass")
#: The layer of a concept bottleneck's sigmoid concept units (recorded from its ``concept_probabilities`` module).
CBM_CONCEPT_LAYER = "concepts"
#: The layer of a linear probe's units and of a language model's next-token units.
PROBE_LAYER = externals.PROBE_LAYER
LM_LAYER = externals.LM_LAYER
#: Concept sources of a setting on an embedded or external dataset: labels, or ``pseudo:<contrastive model>``.
LABELS_SOURCE = "labels"
PSEUDO_PREFIX = "pseudo:"
#: Embedded dataset prefixes: ``<world>_<split>``.
EMBEDDED_WORLDS = ("vision", "text", "digits")
DIGITS_SPLITS = ("train", "probe")


class ParamsError(ValueError):
    """Problems in the workflow's params; the message lists each one by key path."""


def check_params(config: Mapping[str, Any], *, schema_path: str | Path,
                 config_files: Iterable[str | Path] = ()) -> None:
    """Raise one :class:`ParamsError` listing every problem of ``config`` (and the files it was loaded from).

    The first line counts the problems and names the unknown top-level keys, if any; then one line per problem,
    ``<key path>: <what is wrong>``. Reference checks run on every block whose shape the schema accepts.
    """
    files = [Path(path) for path in config_files]
    problems = [problem for path in files for problem in duplicate_key_problems(path)]
    schema_found = schema_problems(config, schema_path)
    problems += schema_found + nonfinite_problems(config)
    problems += reference_problems(config, tolerate_malformed=bool(schema_found))
    if not problems:
        return
    unknown = unknown_top_level_keys(config, schema_path)
    sources = ", ".join(str(path) for path in files) or "the config"
    first = f"{len(problems)} problem{'s' if len(problems) > 1 else ''} in the params ({sources})"
    if unknown:
        first += f"; unknown top-level key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
    raise ParamsError("\n".join([first + ":", *(f"  {problem}" for problem in problems)]))


#: PyYAML's safe loader, compiled (libyaml) where PyYAML has it: Snakemake reads the files on every invocation.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# --- duplicate keys -------------------------------------------------------------------------------------------------

def duplicate_key_problems(path: str | Path) -> list[str]:
    """``<file>:<line>: duplicate key <key path> (first at line <n>)`` for every key given twice in one mapping.

    YAML merge keys (``<<: *anchor``) followed by keys that override the merged ones are not duplicates.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        root = yaml.compose(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as error:
        return [f"{path}: not valid YAML: {_quoting_yaml_error(text) or error}"]
    problems: list[str] = []
    seen: set[int] = set()

    def walk(node: yaml.Node, key_path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first_line: dict[Any, int] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = key_node.value if isinstance(key_node, yaml.ScalarNode) else repr(key_node)
                line = key_node.start_mark.line + 1
                child = _join(key_path, str(key))
                if key in first_line:
                    problems.append(f"{path}:{line}: duplicate key {child} (first at line {first_line[key]}); "
                                    f"YAML loaders disagree on which one counts")
                else:
                    first_line[key] = line
                walk(value_node, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                walk(item, f"{key_path}[{index}]")

    if root is not None:
        walk(root, "")
    return problems


def _quoting_yaml_error(text: str) -> yaml.YAMLError | None:
    """The pure-Python loader's error for ``text``, which quotes the offending line (libyaml's does not)."""
    try:
        yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        return error
    return None


# --- schema and numbers ---------------------------------------------------------------------------------------------

def _is_integer(_checker: Any, value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@functools.lru_cache(maxsize=4)
def _validator(schema_path: str) -> Any:
    """Snakemake's validator class (JSON Schema 2020-12) on the schema file, with integers that are ints."""
    from jsonschema import Draft202012Validator, validators

    schema = yaml.load(Path(schema_path).read_text(encoding="utf-8"), Loader=_SAFE_LOADER)
    strict = validators.extend(Draft202012Validator,
                               type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer))
    return strict(schema)


def schema_problems(config: Mapping[str, Any], schema_path: str | Path) -> list[str]:
    """Every schema error of ``config`` as ``<key path>: <message>``, unknown keys with a close known key."""
    validator = _validator(str(schema_path))
    problems = []
    for error in sorted(validator.iter_errors(_plain(config)), key=lambda error: _format_path(error.absolute_path)):
        problems.append(_schema_message(error))
    return problems


def unknown_top_level_keys(config: Mapping[str, Any], schema_path: str | Path) -> list[str]:
    """Top-level keys of ``config`` that the schema does not declare."""
    declared = _validator(str(schema_path)).schema.get("properties", {})
    return [key for key in config if key not in declared]


def _schema_message(error: Any) -> str:
    where = _format_path(error.absolute_path) or "(top level)"
    if error.validator == "additionalProperties" and isinstance(error.instance, Mapping):
        declared = list(error.schema.get("properties", {}))
        extra = [key for key in error.instance if key not in declared]
        return "; ".join(f"{_join(_format_path(error.absolute_path), str(key))}: unknown key"
                         f"{_did_you_mean(str(key), declared)} (known: {', '.join(declared)})" for key in extra)
    if error.context:
        from jsonschema.exceptions import best_match

        detail = best_match(error.context)
        deeper = _format_path(detail.absolute_path) or where
        return f"{deeper}: {_shorten(detail.message)}"
    return f"{where}: {_shorten(error.message)}"


def nonfinite_problems(config: Any, key_path: str = "") -> list[str]:
    """``<key path>: <value> is not a finite number`` for every NaN or ±Inf anywhere in ``config``."""
    if isinstance(config, float) and not math.isfinite(config):
        return [f"{key_path or '(top level)'}: {config!r} is not a finite number"]
    if isinstance(config, Mapping):
        return [problem for key, value in config.items() for problem in nonfinite_problems(value, _join(key_path,
                                                                                                          str(key)))]
    if isinstance(config, list | tuple):
        return [problem for index, value in enumerate(config)
                for problem in nonfinite_problems(value, f"{key_path}[{index}]")]
    return []


# --- references -----------------------------------------------------------------------------------------------------

def reference_problems(config: Mapping[str, Any], *, tolerate_malformed: bool = False) -> list[str]:
    """Every name in ``config`` that should name a setting, model, layer, dataset or concept source but names
    nothing, as ``<key path>: '<name>' is not <what> (known: …)`` with a close known name where there is one.

    ``tolerate_malformed`` skips a block whose shape is wrong (the schema has reported it) instead of raising.
    """
    problems: list[str] = []
    for check in (_setting_name_problems, _setting_problems, _section_problems):
        try:
            problems += check(config)
        except (AttributeError, KeyError, TypeError, ValueError):
            if not tolerate_malformed:
                raise
    return problems


def _unknown(key: str, name: Any, what: str, known: Iterable[str]) -> str:
    known = sorted(known)
    listed = ", ".join(known) if known else "none"
    return f"{key}: {name!r} is not {what} (known: {listed}){_did_you_mean(str(name), known)}"


def _did_you_mean(name: str, known: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def _names(value: Any) -> list[tuple[str, Any]]:
    """``(suffix, name)`` of a single name (suffix '') or of each name of a list (suffix ``[i]``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [("", value)]
    return [(f"[{index}]", name) for index, name in enumerate(value)]


#: Keys of ``params.yaml`` that name settings (a list or a single name), as paths of nested keys.
SETTING_REFERENCES = (
    ("meta", "settings"),
    ("sanity", "settings"),
    ("crowd", "settings"),
    ("sanity", "mean_settings"),
    ("sanity", "combinations", "settings"),
    ("sanity", "combinations", "meta_settings"),
    ("sanity", "ablations", "setting"),
    ("sanity", "shift", "setting"),
    ("cosy", "settings"),
    ("cosy", "generative", "settings"),
    ("explain", "run_settings"),
    ("explain", "cosy", "settings"),
    ("explain", "crowd", "settings"),
)


def _lookup(config: Mapping[str, Any], path: Sequence[str]) -> Any:
    """``config[path[0]][path[1]]…``, or None where a level is missing or not a mapping."""
    value: Any = config
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return None
        value = value[key]
    return value


def _setting_name_problems(config: Mapping[str, Any]) -> list[str]:
    settings = list(config.get("settings") or {})
    problems = [_unknown(".".join(path) + suffix, name, "a setting of settings", settings)
                for path in SETTING_REFERENCES for suffix, name in _names(_lookup(config, path))
                if name not in settings]
    explained = _lookup(config, ("explain", "settings")) or {}
    problems += [_unknown(f"explain.settings.{name}", name, "a setting of settings", settings)
                 for name in explained if name not in settings]
    viewer = _lookup(config, ("viewer", "settings"))
    if isinstance(viewer, list):
        problems += [_unknown(f"viewer.settings{suffix}", name, "a setting of settings", settings)
                     for suffix, name in _names(viewer) if name not in settings]
    return problems


def _setting_problems(config: Mapping[str, Any]) -> list[str]:
    problems = []
    for name, setting in (config.get("settings") or {}).items():
        problems += _unit_block_problems(config, f"settings.{name}", setting.get("dataset"), setting.get("units"),
                                         setting.get("concepts", {}).get("source", LABELS_SOURCE))
    crowd = config.get("crowd") or {}
    if crowd:
        problems += _unit_block_problems(config, "crowd", crowd.get("dataset"), [crowd.get("units")],
                                         crowd.get("concepts", {}).get("source", LABELS_SOURCE), units_key="units")
        problems += _source_problems(config, "crowd.pseudo_source", crowd.get("dataset"), crowd.get("pseudo_source"))
    explain = config.get("explain") or {}
    for name, block in (explain.get("settings") or {}).items():
        spatial = (block or {}).get("spatial")
        setting = (config.get("settings") or {}).get(name)
        if spatial and setting:
            units = [(unit.get("model"), unit.get("layer")) for unit in setting.get("units", [])]
            if (spatial.get("model"), spatial.get("layer")) not in units:
                problems.append(f"explain.settings.{name}.spatial: model {spatial.get('model')!r}, layer "
                                f"{spatial.get('layer')!r} is not a unit block of settings.{name} "
                                f"({', '.join(f'{model}/{layer}' for model, layer in units)})")
    explained = explain.get("run_settings") or list(explain.get("settings") or {})
    image_datasets = {(config.get("settings") or {}).get(name, {}).get("dataset") for name in explained}
    for dataset in sorted(dataset for dataset in image_datasets
                          if _dataset_world(config, dataset)[0] in ("vision", "external_image")):
        problems += _source_problems(config, "explain.pseudo_source", dataset, explain.get("pseudo_source"))
    return problems


def _unit_block_problems(config: Mapping[str, Any], key: str, dataset: Any, units: Any, source: Any, *,
                         units_key: str = "") -> list[str]:
    """A setting's (or the crowd study's) dataset, units and concept source."""
    world, known_datasets = _dataset_world(config, dataset)
    if world is None:
        return [_unknown(f"{key}.dataset", dataset, "a dataset (an embedded world split or external.datasets)",
                         known_datasets)]
    problems = []
    for position, unit in enumerate(units or []):
        unit_key = f"{key}.{units_key}" if units_key else f"{key}.units[{position}]"
        problems += _unit_problems(config, unit_key, world, unit.get("model"), unit.get("layer"), dataset=dataset)
    problems += _source_problems(config, f"{key}.concepts.source", dataset, source)
    return problems


def _dataset_world(config: Mapping[str, Any], dataset: Any) -> tuple[str | None, list[str]]:
    """The world of a dataset name (``vision``, ``text``, ``digits``, ``external_image``, ``external_text``), or
    None, with the known dataset names."""
    world = config.get("world") or {}
    external = externals.external_block(config)
    known = {f"vision_{split}": "vision" for split in (world.get("vision") or {}).get("splits", {})}
    known |= {f"text_{split}": "text" for split in (world.get("text") or {}).get("splits", {})}
    if config.get("digits"):
        known |= {f"digits_{split}": "digits" for split in DIGITS_SPLITS}
    known |= {name: "external_image" for name in externals.image_datasets(external)}
    known |= {name: "external_text" for name in externals.text_datasets(external)}
    known |= own_dataset_worlds(external)
    return known.get(dataset), sorted(known)


def own_dataset_worlds(external: Mapping[str, Any]) -> dict[str, str]:
    """``external_own`` for each ``kind: tables``/``array``/``images``/``corpus`` dataset
    (:mod:`neuroneval.external.own`, :mod:`neuroneval.external.corpus`)."""
    from neuroneval.external import corpus, own

    return {name: "external_own" for name in [*own.tables_datasets(external), *own.recorded_datasets(external),
                                              *corpus.corpus_datasets(external)]}


def _unit_problems(config: Mapping[str, Any], key: str, world: str, model: Any, layer: Any, *,
                   dataset: Any = None) -> list[str]:
    models = config.get("models") or {}
    external = externals.external_block(config)
    if world == "vision":
        vision, probes = models.get("vision") or {}, models.get("probes") or {}
        if model in probes:
            return [] if layer == PROBE_LAYER else [f"{key}.layer: {layer!r} is not a layer of probe {model!r} "
                                                    f"(its units are the layer {PROBE_LAYER!r})"]
        if model not in vision:
            return [_unknown(f"{key}.model", model, "a model of models.vision or models.probes",
                             [*vision, *probes])]
        return _classifier_layer_problems(f"{key}.layer", model, vision[model], layer)
    if world == "digits":
        digits_models = (config.get("digits") or {}).get("models") or {}
        if model not in digits_models:
            return [_unknown(f"{key}.model", model, "a model of digits.models", digits_models)]
        return _classifier_layer_problems(f"{key}.layer", model, digits_models[model], layer)
    if world == "text":
        language = models.get("language") or {}
        if model not in language:
            return [_unknown(f"{key}.model", model, "a model of models.language", language)]
        return [] if layer == LM_LAYER else [f"{key}.layer: {layer!r} is not a layer of language model {model!r} "
                                             f"(its units are the layer {LM_LAYER!r})"]
    if world == "external_own":
        from neuroneval.external.corpus import corpus_unit_problems
        from neuroneval.external.own import own_unit_problems

        return [*own_unit_problems(external, key, dataset, model, layer),
                *corpus_unit_problems(external, key, dataset, model, layer)]
    if world == "external_text":
        known = externals.language_models(external)
        if model not in known:
            return [_unknown(f"{key}.model", model, "a transformers_lm model of external.models", known)]
        return [] if layer == LM_LAYER else [f"{key}.layer: {layer!r} is not a layer of language model {model!r} "
                                             f"(its units are the layer {LM_LAYER!r})"]
    known = [*externals.vision_models(external), *externals.probes(external)]
    if model not in known:
        return [_unknown(f"{key}.model", model, "a torchvision/timm model of external.models or a probe of "
                         "external.probes", known)]
    if model in externals.probes(external) and layer != PROBE_LAYER:
        return [f"{key}.layer: {layer!r} is not a layer of probe {model!r} (its units are the layer "
                f"{PROBE_LAYER!r})"]
    return []


def _source_problems(config: Mapping[str, Any], key: str, dataset: Any, source: Any) -> list[str]:
    world, _ = _dataset_world(config, dataset)
    if world == "external_own":
        from neuroneval.external.own import own_source_problems

        return own_source_problems(externals.external_block(config), key, dataset, source)
    if world is None or source == LABELS_SOURCE:
        return []
    pseudo_models = {"vision": list((config.get("models") or {}).get("contrastive") or {}),
                     "external_image": externals.embedders(externals.external_block(config))}.get(world)
    if pseudo_models is None:
        return [f"{key}: {source!r} is not a concept source of dataset {dataset!r} (its only source is "
                f"{LABELS_SOURCE!r})"]
    if not isinstance(source, str) or not source.startswith(PSEUDO_PREFIX):
        known = [LABELS_SOURCE, *(PSEUDO_PREFIX + model for model in pseudo_models)]
        return [_unknown(key, source, f"a concept source of dataset {dataset!r}", known)]
    model = source.removeprefix(PSEUDO_PREFIX)
    if model not in pseudo_models:
        where = "models.contrastive" if world == "vision" else "external.models (open_clip)"
        return [_unknown(key, source, f"pseudo:<a model of {where}>", [PSEUDO_PREFIX + name
                                                                       for name in pseudo_models])]
    return []


def _classifier_layer_problems(key: str, model: str, spec: Mapping[str, Any], layer: Any) -> list[str]:
    """A world classifier's layer: an output layer, ``concepts`` of a CBM, or a module of the architecture."""
    architecture = spec.get("architecture")
    if layer in CLASSIFIER_OUTPUT_LAYERS or (layer == CBM_CONCEPT_LAYER and architecture == "tiny_cbm"):
        return []
    modules = classifier_layer_names(architecture, spec.get("config") or {})
    if layer in modules:
        return []
    special = [*CLASSIFIER_OUTPUT_LAYERS, *([CBM_CONCEPT_LAYER] if architecture == "tiny_cbm" else [])]
    blocks = [name for name in modules if name.count(".") <= 1]
    return [f"{key}: {layer!r} is not a layer of {model!r} ({architecture}; known: {', '.join(special)} and its "
            f"modules {', '.join(blocks)}, ...){_did_you_mean(str(layer), [*special, *modules])}"]


def _section_problems(config: Mapping[str, Any]) -> list[str]:
    """Models named outside the settings: probes' features, the CoSy CLIP, schedule, concepteval's LMs."""
    models = config.get("models") or {}
    contrastive = list(models.get("contrastive") or {})
    problems = [_unknown(f"models.probes.{name}.features", probe.get("features"), "a model of models.contrastive",
                         contrastive)
                for name, probe in (models.get("probes") or {}).items() if probe.get("features") not in contrastive]
    cosy_clip = _lookup(config, ("cosy", "clip"))
    if cosy_clip is not None and cosy_clip not in contrastive:
        problems.append(_unknown("cosy.clip", cosy_clip, "a model of models.contrastive", contrastive))
    digits_models = list((config.get("digits") or {}).get("models") or {})
    all_models = [*(name for section in models.values() for name in (section or {})), *digits_models]
    problems += [_unknown(f"schedule.train_first{suffix}", name, "a model of this profile (models.*, digits.models)",
                          all_models)
                 for suffix, name in _names(_lookup(config, ("schedule", "train_first"))) if name not in all_models]
    from neuroneval.external.corpus import corpus_cosy_problems
    from neuroneval.external.own import cosy_problems, crowd_media_problems

    problems += cosy_problems(config) + corpus_cosy_problems(config) + crowd_media_problems(config)
    corpus = _lookup(config, ("concepteval", "corpus")) or {}
    language = [*(models.get("language") or {}), *corpus]
    external_models = externals.external_block(config).get("models") or {}
    problems += [_unknown(f"concepteval.models{suffix}", name, "a model of models.language or concepteval.corpus",
                          language)
                 for suffix, name in _names(_lookup(config, ("concepteval", "models")))
                 if name not in language and name not in external_models]
    problems += concepteval_lm_problems(config)
    return problems


def concepteval_lm_problems(config: Mapping[str, Any]) -> list[str]:
    """What concepteval's LMs of ``external.models`` lack (paper profile, your own LM; docs/concepteval.md).

    Each LM of ``concepteval.models`` that is declared in ``external.models`` needs its corpus in
    ``concepteval.corpus``; each entry ``concepteval.corpus.<lm>: <dataset>`` needs an LM that concepteval can
    perturb (:func:`neuroneval.external.own.perturbable_lm_spec`: ``family: transformers_lm`` or ``family:
    custom`` with ``model_dir``) and a ``kind: text`` or ``kind: corpus`` dataset of ``external.datasets``. A user's
    corpus has none of the embedded text world's planted concepts, so a probe family that ``family_set: all``
    would build (``concepteval.families.probe``) is refused while such an LM is studied. Every problem names its
    key; LMs named nowhere are reported by :func:`_section_problems`.
    """
    from neuroneval.external.corpus import corpus_datasets
    from neuroneval.external.own import perturbable_lm_spec

    external = externals.external_block(config)
    concepteval = config.get("concepteval") or {}
    corpus_of = concepteval.get("corpus") or {}
    models = external.get("models") or {}
    problems = [f"concepteval.corpus: {name!r} of concepteval.models is a model of external.models without a "
                f"corpus: add concepteval.corpus.{name}: <a kind: text or kind: corpus dataset of external.datasets>"
                for name in concepteval.get("models") or [] if name in models and name not in corpus_of]
    readable = [*externals.text_datasets(external), *corpus_datasets(external)]
    for name, dataset in corpus_of.items():
        key = f"concepteval.corpus.{name}"
        if name not in models:
            problems.append(f"{key}: {name!r} is not declared in external.models ({sorted(models)})")
        else:
            try:
                perturbable_lm_spec(models[name], key=key)
            except ValueError as error:
                problems.append(str(error))
        if dataset not in readable:
            problems.append(f"{key}: {dataset!r} is not a kind: text or kind: corpus dataset of external.datasets "
                            f"({sorted(readable)})")
    studied = [name for name in concepteval.get("models") or [] if name in corpus_of]
    families = concepteval.get("families") or {}
    if studied and concepteval.get("family_set", "all") == "all" and families.get("probe") is not None:
        problems.append(f"concepteval.families.probe: probes are fitted to the embedded text world's planted "
                        f"concepts, which the corpus of {studied} (concepteval.corpus) does not have; set "
                        "concepteval.families.probe: null, or family_set: paper")
    return problems


# --- canonical form -------------------------------------------------------------------------------------------------

def canonical_config(value: Any) -> Any:
    """``value`` with every mapping's keys sorted (recursively, as plain dicts); lists keep their order.

    Snakemake compares a rule's params by ``repr``, in which a dict shows its insertion order: sorted keys make two
    configs that differ only in key order give the same params, so reordering keys in params.yaml reruns nothing.
    """
    if isinstance(value, Mapping):
        return {key: canonical_config(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [canonical_config(item) for item in value]
    return value


def _plain(value: Any) -> Any:
    """Mappings as dicts and tuples as lists (what jsonschema's type checks expect)."""
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _format_path(path: Iterable[Any]) -> str:
    text = ""
    for part in path:
        text = f"{text}[{part}]" if isinstance(part, int) else _join(text, str(part))
    return text


def _shorten(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."
