"""Your own setting in the workflow: precomputed tables (``kind: tables``) and your own model (``family: custom``).

Two declarations of the ``external:`` params block bring a user's work into every stage that takes a setting
(docs/your_model.md):

- ``external.datasets.<name>: {kind: tables, activations: {<model>: {<layer>: path}}, concepts: {<source>: path},
  known_concepts: path}``: activation and concept tables that follow docs/design.md §2.1 (written through
  :mod:`neuroneval.io` or ``neuroneval record``), imported as they are into ``data/activations/<name>/<model>/
  <layer>.parquet`` and ``data/concepts/<name>/<source>.parquet``. ``known_concepts`` (optional) is a CSV
  ``unit,concept`` whose pairs become the ``unit_concepts`` metadata of the imported tables, the truth of a setting
  with ``truth: {method: known}``; without it, use ``truth: {method: iou, alpha: …}``.
- ``external.datasets.<name>: {kind: array, images: x.npy, labels: y.npy, class_names_file: names.txt}``: inputs
  as one array row each (``.npy``, or one array of an ``.npz``), their integer classes, and optionally one class
  name a line (default: the class index). The concept table ``labels`` has one column ``class:<name>`` per class.
- ``external.datasets.<name>: {kind: images, folder: dir, labels: labels.csv, preprocess: {…}}``: an image folder
  (class subfolders, or files listed with their class in a CSV ``file,label``) read through a declared
  preprocessing (:meth:`~neuroneval.external.preprocess.ImagePreprocessing.of_dataset`) into the array the model reads
  (:mod:`neuroneval.external.own_images`); its images are also the inputs' media.
- ``external.models.<name>: {family: custom, factory: "package.module:callable", weights_path: state.pt}`` (a state
  dict loaded into the factory's ``nn.Module``), or ``torchscript: model.pt``, ``torch_export: model.pt2``, or
  ``model_dir:`` (a local transformers folder): recorded on an ``array`` or ``images`` dataset by
  :func:`neuroneval.activations.record.record_files`, one table per layer (units ``<layer>.<i>``). The units of
  the model's output (``logits``, ``softmax``) know their concept: unit ``i`` is class ``i``.

Problems are reported all at once by :func:`own_setting_problems` (called by
:func:`neuroneval.external.checks.check_external`), each naming its params key and resolved path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from neuroneval.external.config import LANGUAGE_FAMILIES, external_block, resolve_path

TABLES_KIND = "tables"
ARRAY_KIND = "array"
IMAGES_KIND = "images"
OWN_KINDS = (TABLES_KIND, ARRAY_KIND, IMAGES_KIND)
CUSTOM_FAMILY = "custom"
#: The keys of a custom model spec that say where the model comes from (exactly one), and the record family each
#: stands for (:data:`neuroneval.activations.record_models.RECORD_FAMILIES`).
CUSTOM_SOURCES = {"factory": "module", "torchscript": "torchscript", "torch_export": "torch_export",
                  "model_dir": "transformers"}
#: Path keys of an array dataset, an images dataset and a custom model spec.
ARRAY_PATH_KEYS = ("images", "labels", "class_names_file")
IMAGES_PATH_KEYS = ("folder", "labels")
CUSTOM_PATH_KEYS = ("weights_path", "torchscript", "torch_export", "model_dir")
#: Output layers whose unit ``i`` is class ``i`` of an array dataset.
CLASS_OUTPUT_LAYERS = ("logits", "softmax")
CLASS_PREFIX = "class:"
#: A tables dataset's ``media:`` block (:mod:`neuroneval.external.own_media`); ``ids: rows``: row *i* is input *i*.
MEDIA_KEY = "media"
ROW_IDS = "rows"


def tables_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the ``kind: tables`` datasets."""
    return [name for name, spec in (external.get("datasets") or {}).items() if spec.get("kind") == TABLES_KIND]


def array_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the ``kind: array`` datasets."""
    return [name for name, spec in (external.get("datasets") or {}).items() if spec.get("kind") == ARRAY_KIND]


def images_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the ``kind: images`` datasets."""
    return [name for name, spec in (external.get("datasets") or {}).items() if spec.get("kind") == IMAGES_KIND]


def recorded_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the own datasets that a custom model is recorded on (``kind: array`` and ``kind: images``)."""
    return [*array_datasets(external), *images_datasets(external)]


def images_array_path(dataset: str, root: Path = Path("data")) -> Path:
    """Where the workflow writes the preprocessed inputs of a ``kind: images`` dataset (the array the model reads)."""
    return root / "external" / dataset / "images.npy"


def images_index_path(dataset: str, root: Path = Path("data")) -> Path:
    """Where the workflow writes the ``input_id,file`` table of a ``kind: images`` dataset (its media)."""
    return root / "external" / dataset / "inputs.csv"


def custom_models(external: Mapping[str, Any]) -> list[str]:
    """Names of the ``family: custom`` models."""
    return [name for name, spec in (external.get("models") or {}).items() if spec.get("family") == CUSTOM_FAMILY]


def tables_models(external: Mapping[str, Any]) -> list[str]:
    """Every model name under ``activations`` of a tables dataset."""
    return sorted({model for name in tables_datasets(external)
                   for model in (external["datasets"][name].get("activations") or {})})


def tables_sources(external: Mapping[str, Any]) -> list[str]:
    """Every concept source under ``concepts`` of a tables dataset, as its file stem (``pseudo:x`` → ``pseudo-x``)."""
    return sorted({source.replace(":", "-") for name in tables_datasets(external)
                   for source in (external["datasets"][name].get("concepts") or {})})


def table_file(external: Mapping[str, Any], dataset: str, *keys: str) -> Path:
    """The resolved user file ``external.datasets.<dataset>.<keys…>`` (e.g. ``"activations", "mlp", "hidden"``)."""
    value: Any = external["datasets"][dataset]
    for key in keys:
        value = value[key]
    return resolve_path(external, value)


def tables_concept_file(external: Mapping[str, Any], dataset: str, stem: str) -> Path:
    """The user concept table of a tables dataset whose source's file stem is ``stem``."""
    sources = external["datasets"][dataset].get("concepts") or {}
    matches = [source for source in sources if source.replace(":", "-") == stem]
    if not matches:
        raise KeyError(f"external.datasets.{dataset}.concepts has no source {stem!r} ({sorted(sources)})")
    return table_file(external, dataset, "concepts", matches[0])


def array_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """An array dataset's spec with its paths resolved; for an images dataset, ``images`` is the workflow's
    preprocessed array (:func:`images_array_path`)."""
    spec = external["datasets"][dataset]
    if spec.get("kind") == IMAGES_KIND:
        return {"kind": IMAGES_KIND, "images": str(images_array_path(dataset))}
    return {key: str(resolve_path(external, value)) if key in ARRAY_PATH_KEYS else value for key, value in spec.items()}


def dataset_inputs(external: Mapping[str, Any], dataset: str) -> list[str]:
    """The user files an own dataset reads (Snakemake inputs), resolved; an images dataset's folder is not one
    (its preprocessed array is, :func:`images_array_path`)."""
    spec = external["datasets"][dataset]
    if spec.get("kind") == IMAGES_KIND:
        return [str(images_array_path(dataset))]
    return [str(resolve_path(external, spec[key])) for key in ARRAY_PATH_KEYS if spec.get(key)]


def model_inputs(external: Mapping[str, Any], model: str) -> list[str]:
    """The user files a custom model reads (Snakemake inputs), resolved."""
    spec = external["models"][model]
    return [str(resolve_path(external, spec[key])) for key in CUSTOM_PATH_KEYS if spec.get(key)]


def record_spec(external: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The :func:`~neuroneval.activations.record_models.load_record_model` spec of a custom model, paths resolved.

    Raises ``ValueError`` naming ``external.models.<model>`` unless exactly one of :data:`CUSTOM_SOURCES` is set.
    """
    spec = external["models"][model]
    sources = [key for key in CUSTOM_SOURCES if spec.get(key)]
    if len(sources) != 1:
        raise ValueError(f"external.models.{model}: a custom model needs exactly one of {list(CUSTOM_SOURCES)}, "
                         f"got {sources}")
    source = sources[0]
    family = CUSTOM_SOURCES[source]
    if source == "factory":
        loaded = {"family": family, "factory": spec["factory"], "kwargs": dict(spec.get("kwargs") or {})}
        if spec.get("weights_path"):
            loaded["weights_path"] = str(resolve_path(external, spec["weights_path"]))
        return loaded
    key = "model_dir" if source == "model_dir" else "path"
    return {"family": family, key: str(resolve_path(external, spec[source]))}


def array_class_names(labels: np.ndarray, class_names_file: str | Path | None) -> list[str]:
    """One name per class index ``0…max(labels)``: the lines of ``class_names_file``, else the index itself."""
    n_classes = int(labels.max()) + 1
    if class_names_file is None:
        return [str(index) for index in range(n_classes)]
    names = [line.strip() for line in Path(class_names_file).read_text().splitlines() if line.strip()]
    if len(names) < n_classes:
        raise ValueError(f"{class_names_file}: {len(names)} class names, but the labels reach class {n_classes - 1}")
    return names


def array_labels(labels_file: str | Path, n_inputs: int) -> np.ndarray:
    """The integer class of each input (a ``.npy`` of one non-negative integer per row of the images)."""
    labels = np.load(labels_file)
    if labels.ndim != 1 or len(labels) != n_inputs or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"{labels_file}: expected {n_inputs} integer class labels (one per image row), got "
                         f"{labels.dtype} {labels.shape}")
    if labels.min() < 0:
        raise ValueError(f"{labels_file}: class labels must be non-negative, got {int(labels.min())}")
    return labels.astype(np.int64)


def class_concept_frame(labels: np.ndarray, class_names: list[str]) -> pd.DataFrame:
    """The label concept table: ``input_id`` = row index, column ``class:<name>`` = 1 where the label is the class."""
    onehot = (labels[:, None] == np.arange(len(class_names))[None, :]).astype(np.float32)
    return pd.DataFrame({"input_id": np.arange(len(labels), dtype=np.int64),
                         **{CLASS_PREFIX + name: onehot[:, k] for k, name in enumerate(class_names)}})


def output_unit_concepts(layer: str, unit_names: list[str], class_names: list[str]) -> dict[str, list[str]]:
    """Unit ``<layer>.<i>`` → ``[class:<name_i>]`` for an output layer as wide as the classes, else ``{}``."""
    if layer not in CLASS_OUTPUT_LAYERS or len(unit_names) != len(class_names):
        return {}
    return {unit: [CLASS_PREFIX + name] for unit, name in zip(unit_names, class_names, strict=True)}


def known_concepts(path: str | Path) -> dict[str, list[str]]:
    """The ``unit,concept`` CSV of a tables dataset as unit → concepts (errors name the file and row)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(frame.columns) != ["unit", "concept"]:
        raise ValueError(f"{path}: expected the columns unit,concept, got {list(frame.columns)}")
    pairs: dict[str, list[str]] = {}
    for row, (unit, concept) in enumerate(frame.itertuples(index=False, name=None), start=2):
        if not unit or not concept:
            raise ValueError(f"{path}, line {row}: empty unit or concept")
        pairs.setdefault(unit, []).append(concept)
    return pairs


def imported_unit_concepts(unit_names: list[str], metadata_pairs: Mapping[str, list[str]],
                           file_pairs: Mapping[str, list[str]]) -> dict[str, list[str]]:
    """The table's own ``unit_concepts`` joined with the pairs of ``known_concepts`` that name its units."""
    merged = {unit: list(concepts) for unit, concepts in metadata_pairs.items()}
    for unit in unit_names:
        for concept in file_pairs.get(unit, []):
            if concept not in merged.setdefault(unit, []):
                merged[unit].append(concept)
    return {unit: concepts for unit, concepts in merged.items() if concepts}


def own_setting_problems(config: Mapping[str, Any], setting_name: str, setting: Mapping[str, Any]) -> list[str]:
    """What a setting on a tables or array dataset lacks in ``external:`` (its models, layers, concept source)."""
    external = external_block(config)
    dataset, key = setting.get("dataset"), f"settings.{setting_name}"
    problems = []
    for position, unit in enumerate(setting.get("units") or []):
        problems += own_unit_problems(external, f"{key}.units[{position}]", dataset, unit.get("model"),
                                      unit.get("layer"))
    source = (setting.get("concepts") or {}).get("source", "labels")
    return problems + own_source_problems(external, f"{key}.concepts.source", dataset, source)


def own_unit_problems(external: Mapping[str, Any], key: str, dataset: Any, model: Any, layer: Any) -> list[str]:
    """A unit block ``{model, layer}`` on a tables dataset (a declared table) or an array dataset (a custom model;
    its layers are checked when the model is loaded, as ``neuroneval record`` does)."""
    spec = (external.get("datasets") or {}).get(dataset) or {}
    if spec.get("kind") == TABLES_KIND:
        tables = spec.get("activations") or {}
        if model not in tables:
            return [f"{key}.model: {model!r} has no tables in external.datasets.{dataset}.activations "
                    f"({sorted(tables)})"]
        if layer not in (tables[model] or {}):
            return [f"{key}.layer: {layer!r} is not a layer of external.datasets.{dataset}.activations.{model} "
                    f"({sorted(tables[model] or {})})"]
        return []
    if model not in custom_models(external):
        return [f"{key}.model: {model!r} is not a custom model of external.models ({custom_models(external)}); "
                "an array dataset is recorded by a model of family: custom"]
    sources = [name for name in CUSTOM_SOURCES if (external["models"][model] or {}).get(name)]
    if len(sources) != 1:
        return [f"external.models.{model}: a custom model needs exactly one of {list(CUSTOM_SOURCES)}, got {sources}"]
    return []


def own_source_problems(external: Mapping[str, Any], key: str, dataset: Any, source: Any) -> list[str]:
    """The concept source of a setting on a tables dataset (one of its ``concepts``) or an array one (``labels``)."""
    spec = (external.get("datasets") or {}).get(dataset) or {}
    if spec.get("kind") == TABLES_KIND:
        known = sorted(spec.get("concepts") or {})
        if source not in known:
            return [f"{key}: {source!r} is not a concept table of external.datasets.{dataset}.concepts ({known})"]
        return []
    if source != "labels":
        return [f"{key}: an array dataset has the one concept source 'labels', got {source!r}"]
    return []


def own_file_keys(external: Mapping[str, Any], section: str, name: str) -> list[tuple[str, Any, bool | None]]:
    """``(params key, value, is_folder)`` of every user path of an own dataset or custom model."""
    spec = (external.get(section) or {}).get(name) or {}
    prefix = f"external.{section}.{name}"
    if section == "models":
        return [(f"{prefix}.{key}", spec[key], True if key == "model_dir" else False)
                for key in CUSTOM_PATH_KEYS if spec.get(key)]
    if spec.get("kind") == ARRAY_KIND:
        return [(f"{prefix}.{key}", spec[key], False) for key in ARRAY_PATH_KEYS if spec.get(key)]
    if spec.get("kind") == IMAGES_KIND:
        return [(f"{prefix}.{key}", spec[key], key == "folder") for key in IMAGES_PATH_KEYS if spec.get(key)]
    keys = [(f"{prefix}.activations.{model}.{layer}", path, None)
            for model, layers in (spec.get("activations") or {}).items() for layer, path in (layers or {}).items()]
    keys += [(f"{prefix}.concepts.{source}", path, None) for source, path in (spec.get("concepts") or {}).items()]
    if spec.get("known_concepts"):
        keys.append((f"{prefix}.known_concepts", spec["known_concepts"], False))
    media = spec.get("media") or {}
    keys += [(f"{prefix}.media.{key}", media[key], None) for key in ("path", "ids")
             if media.get(key) and media[key] != ROW_IDS]
    return keys


def array_concept_table(images: str | Path, labels_file: str | Path, class_names_file: str | Path | None, *,
                        dataset: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The label concept table of an array dataset and its metadata (docs/design.md §2.1)."""
    n_inputs = len(_image_rows(images))
    labels = array_labels(labels_file, n_inputs)
    class_names = array_class_names(labels, class_names_file)
    frame = class_concept_frame(labels, class_names)
    concepts = [column for column in frame.columns if column != "input_id"]
    return frame, {"source": "labels", "dataset": dataset, "concepts": concepts, "classes": class_names}


def record_custom_layer(spec: Mapping[str, Any], images: str | Path, layer: str, scratch: str | Path, *,
                        class_names: list[str], options: Mapping[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Record one layer of a custom model on an array dataset with
    :func:`~neuroneval.activations.record.record_files` into ``scratch``; the table and its metadata, with the
    output layer's units knowing their class (:func:`output_unit_concepts`).

    ``options`` are :class:`~neuroneval.activations.record.RecordOptions` fields (``batch_size``, ``device``,
    ``pooling``, ``image_size``…); ``layers`` is ``(layer,)``.
    """
    from neuroneval import io
    from neuroneval.activations.record import RecordOptions, record_files

    record_options = RecordOptions.from_params({**options, "layers": [layer], "progress": False})
    result = record_files(spec, "array", images, scratch, record_options)
    frame, metadata = io.read_activation_table(result.tables[layer])
    units = [column for column in frame.columns if column != "input_id"]
    metadata["unit_concepts"] = output_unit_concepts(layer, units, class_names)
    return frame, metadata


def import_activation_table(path: str | Path, known_file: str | Path | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A user's activation table, validated by :func:`neuroneval.io.read_activation_table`, with the pairs of
    ``known_file`` (:func:`known_concepts`) joined into its ``unit_concepts``."""
    from neuroneval import io

    frame, metadata = io.read_activation_table(path)
    units = [column for column in frame.columns if column != "input_id"]
    file_pairs = known_concepts(known_file) if known_file else {}
    metadata["unit_concepts"] = imported_unit_concepts(units, metadata.get("unit_concepts") or {}, file_pairs)
    return frame, metadata


def array_row_shape(images: str | Path) -> tuple[int, ...]:
    """The shape of one input (one row) of an array dataset's ``images`` file: what a custom model's
    preprocessing must give."""
    return tuple(int(size) for size in _image_rows(images).shape[1:])


def _image_rows(images: str | Path) -> np.ndarray:
    path = Path(images)
    if path.suffix == ".npz":
        with np.load(path) as archive:
            return archive[archive.files[0]]
    return np.load(path, mmap_mode="r")


def media_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any] | None:
    """The resolved media of an own dataset (its forms: :mod:`neuroneval.external.own_media`), ``{path, ids,
    image_shape, root}``, or None when
    it has none (a tables dataset without ``media:``).

    ``path`` is absolute (from ``external.data_root``); ``ids`` is ``"rows"``, an absolute path or None; ``root`` is
    the folder an image table's paths are relative to (a ``kind: images`` dataset's folder), else None.
    """
    spec = (external.get("datasets") or {}).get(dataset) or {}
    kind = spec.get("kind")
    if kind == ARRAY_KIND:
        return {"path": str(resolve_path(external, spec["images"])), "ids": ROW_IDS,
                "image_shape": spec.get("image_shape"), "root": None}
    if kind == IMAGES_KIND:
        return {"path": str(images_index_path(dataset)), "ids": None, "image_shape": None,
                "root": str(resolve_path(external, spec["folder"]))}
    media = spec.get(MEDIA_KEY) if kind == TABLES_KIND else None
    if not media:
        return None
    ids = media.get("ids")
    return {"path": str(resolve_path(external, media["path"])),
            "ids": ids if ids in (None, ROW_IDS) else str(resolve_path(external, ids)),
            "image_shape": media.get("image_shape"), "root": None}


def media_files(spec: Mapping[str, Any] | None) -> list[str]:
    """The files a media spec reads (Snakemake inputs): its path and its ids file."""
    if spec is None:
        return []
    return [spec["path"], *([spec["ids"]] if spec.get("ids") not in (None, ROW_IDS) else [])]


def crowd_media_problems(config: Mapping[str, Any]) -> list[str]:
    """A setting of your own named in ``explain.crowd.settings`` whose dataset has no media to show raters."""
    external = external_block(config)
    own_datasets = {*tables_datasets(external), *recorded_datasets(external)}
    settings = config.get("settings") or {}
    names = ((config.get("explain") or {}).get("crowd") or {}).get("settings") or []
    problems = []
    for position, name in enumerate([names] if isinstance(names, str) else names):
        dataset = (settings.get(name) or {}).get("dataset")
        if dataset in own_datasets and media_spec(external, dataset) is None:
            problems.append(f"explain.crowd.settings[{position}]: {name!r} is a setting of your own on dataset "
                            f"{dataset!r}, which has no media: a crowd study shows raters each input; declare "
                            f"external.datasets.{dataset}.media (an image array, image folder or tokens.csv; "
                            "docs/your_model.md)")
    return problems


#: Params keys whose settings CoSy runs on generated images: each runs a setting of your own whose model is a
#: ``family: custom`` model (through its ``preprocess``), on the generators of the block (the last key path).
COSY_SETTING_KEYS = (("cosy", "settings"), ("cosy", "generative", "settings"), ("explain", "cosy", "settings"))


def cosy_problems(config: Mapping[str, Any]) -> list[str]:
    """A setting of your own (a tables or array dataset) named where CoSy cannot run it (:data:`COSY_SETTING_KEYS`).

    ``cosy.settings``, ``cosy.generative.settings`` and ``explain.cosy.settings`` take a setting of your own whose
    one model is a ``family: custom`` model (the workflow runs it on the generated images through
    :mod:`neuroneval.external.preprocess`) when the block's generators (``cosy.generators``,
    ``explain.cosy.generators``) name a generator of new images (``embedded`` or ``diffusers``); ``explain.cosy``
    also refuses the ``oracle`` beside it (it renders the vision world's concepts only, and every explanation
    text of the block goes to every generator). Tables without a runnable model are refused with the key and
    the reason. (The schema checks a ``preprocess`` block's keys and types, and
    :class:`~neuroneval.external.preprocess.ImagePreprocessing` the rest when the model is run.)
    """
    external = external_block(config)
    own_datasets = {*tables_datasets(external), *recorded_datasets(external)}
    runnable_models = custom_models(external)
    settings = config.get("settings") or {}
    problems = []
    for path in COSY_SETTING_KEYS:
        value: Any = config
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        names = [value] if isinstance(value, str) else list(value or [])
        block_key = "explain.cosy.generators" if path[0] == "explain" else "cosy.generators"
        block: Any = (config.get("explain") or {}).get("cosy") if path[0] == "explain" else config.get("cosy")
        generators = list((block or {}).get("generators") or ([] if path[0] == "cosy" else ["oracle"]))
        for name in names:
            setting = settings.get(name) or {}
            dataset = setting.get("dataset")
            if dataset not in own_datasets:
                continue
            where = f"{'.'.join(path)}: {name!r} is a setting of your own (dataset {dataset!r})"
            models = [unit.get("model") for unit in setting.get("units") or []]
            if len(models) != 1 or models[0] not in runnable_models:
                problems.append(f"{where}; CoSy runs the setting's model on generated images, and its model "
                                f"{models[0] if len(models) == 1 else models!r} is not a family: custom model of "
                                f"external.models ({runnable_models}) that the workflow can run: a table cannot "
                                "be run on new images (docs/your_model.md)")
            elif not [generator for generator in generators if generator != "oracle"]:
                problems.append(f"{where}; its model runs on generated images, but {block_key} {generators} "
                                "names no generator of new images (embedded or diffusers; the oracle renders the "
                                "vision world only)")
            elif path[0] == "explain" and "oracle" in generators:
                problems.append(f"{where}; {block_key} {generators} names the oracle, which renders the vision "
                                "world's concepts only and cannot draw your setting's explanations: list embedded "
                                "or diffusers alone")
    return problems


def perturbable_lm_spec(model_spec: Mapping[str, Any], *, key: str) -> dict[str, Any]:
    """The spec of an LM of ``external.models`` (paths resolved) as concepteval reads it — the one place that says
    which LMs it can perturb: a ``family: transformers_lm`` model as declared, or a ``family: custom`` model with
    ``model_dir`` (a ``save_pretrained`` transformers causal LM and its tokenizer, docs/your_lm.md) as a
    ``transformers_lm`` of that folder. :func:`neuroneval.concepteval.sources.load_token_source` loads either;
    :mod:`neuroneval.concepteval.lm_split` then finds its
    blocks (GPT-2's ``transformer.h``, GPT-NeoX's ``gpt_neox.layers``). The workflow passes this spec to the rules
    (``concepteval_model_spec``), and the params check asks it too.

    Raises ``ValueError`` naming ``key`` for any other model: a custom ``factory``, TorchScript or ``torch.export``
    model is an opaque module whose blocks and token embeddings concepteval cannot address.

    >>> perturbable_lm_spec({"family": "custom", "model_dir": "/m/tiny-gpt2", "sae": {"transformer.h.0": "sae"}},
    ...                     key="concepteval.corpus.tiny_gpt2")
    {'family': 'transformers_lm', 'model_dir': '/m/tiny-gpt2'}
    """
    family = model_spec.get("family")
    if family in LANGUAGE_FAMILIES:
        return dict(model_spec)
    if family == CUSTOM_FAMILY and model_spec.get("model_dir"):
        return {"family": LANGUAGE_FAMILIES[0], "model_dir": str(model_spec["model_dir"])}
    sources = [name for name in CUSTOM_SOURCES if model_spec.get(name)]
    what = f"a family {CUSTOM_FAMILY} model of {sources} without model_dir" if family == CUSTOM_FAMILY else \
        f"a model of family {family!r}"
    raise ValueError(f"{key}: concepteval perturbs a transformers causal LM (family {LANGUAGE_FAMILIES[0]}, or family "
                     f"{CUSTOM_FAMILY} with model_dir), not {what}")
