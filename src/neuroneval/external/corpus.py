"""Your own language model in the workflow: a ``kind: corpus`` dataset recorded per token by a ``family: custom``
transformers LM (``model_dir``), optionally through an SAE (docs/your_lm.md).

- ``external.datasets.<name>: {kind: corpus, text: corpus.txt, tokenizer_model: <custom model>, context_length,
  max_positions, position_sampling, seed, concepts: {rules: rules.yaml, words: words.csv}, known_concepts}``: a
  text corpus (:func:`neuroneval.activations.record_inputs.read_documents`: one document a line of a ``.txt``, one
  a file of a folder, or a ``datasets`` folder), split into tokens by the tokenizer of ``tokenizer_model`` (its
  ``model_dir``). One row per kept token position (``max_positions``/``position_sampling``/``seed`` as
  ``neuroneval record``). :func:`corpus_tokens` gives its ``tokens.csv`` (``input_id, document, position,
  token_id, token, context``) from the tokenizer alone, :func:`corpus_concept_table` its ``labels`` concept table
  by the token rules and word lists of ``concepts`` (:mod:`neuroneval.concepts.tokens`).
- ``external.models.<name>: {family: custom, model_dir: folder, sae: {<layer>: folder}}``: the layer
  ``<layer>.sae`` of a setting is the SAE's features on ``<layer>`` (SAELens layout,
  :mod:`neuroneval.activations.sae`), units ``<layer>.sae.<j>``; any other layer is recorded as it is (units
  ``<layer>.<i>``). :func:`record_corpus_layer` records one layer with
  :func:`neuroneval.activations.record.record_files`, the same code as ``neuroneval record --text``, and refuses a
  ``tokens.csv`` that differs from the dataset's. ``known_concepts`` (``unit,concept``) joins the
  ``unit_concepts`` of the recorded tables, the truth of ``truth: {method: known}``.
- concepteval (paper 004; ``concepteval.corpus: {<custom model>: <corpus dataset>}``) reads the whole corpus as one
  token stream of the tokenizer model, :func:`corpus_token_stream` (rule ``external_corpus_stream``), and perturbs
  the model itself (:func:`neuroneval.external.own.perturbable_lm_spec`).

Problems (a tokenizer model that is not a transformers folder, a ``.sae`` layer without an SAE, an unreadable rules
file, a missing path) are collected by :func:`corpus_setting_problems` and :func:`corpus_file_keys`, called by
:func:`neuroneval.external.checks.check_external` and :mod:`neuroneval.params.check`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from neuroneval.external.config import external_block, resolve_path
from neuroneval.external.own import CUSTOM_FAMILY

CORPUS_KIND = "corpus"
#: The layer suffix of a setting's units that means "the features of the model's SAE on this layer".
SAE_SUFFIX = ".sae"
#: Path keys of a corpus dataset (``concepts.rules``/``concepts.words`` are nested) and whether each is a folder.
CORPUS_PATH_KEYS = {"text": None, "known_concepts": False}
CORPUS_CONCEPT_KEYS = ("rules", "words")
#: The record options a corpus dataset sets (:class:`~neuroneval.activations.record.RecordOptions` fields).
CORPUS_RECORD_KEYS = ("context_length", "max_positions", "position_sampling", "seed", "text_column")


def corpus_datasets(external: Mapping[str, Any]) -> list[str]:
    """Names of the ``kind: corpus`` datasets."""
    return [name for name, spec in (external.get("datasets") or {}).items() if spec.get("kind") == CORPUS_KIND]


def corpus_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """A corpus dataset's spec with its paths resolved (``concepts.rules``/``words`` too) and the ``model_dir`` of
    its tokenizer model."""
    spec = dict(external["datasets"][dataset])
    resolved = {key: str(resolve_path(external, value)) if key in CORPUS_PATH_KEYS else value
                for key, value in spec.items() if key != "concepts"}
    resolved["concepts"] = {key: str(resolve_path(external, value))
                            for key, value in (spec.get("concepts") or {}).items()}
    model = (external.get("models") or {}).get(spec["tokenizer_model"]) or {}
    resolved["model_dir"] = str(resolve_path(external, model["model_dir"]))
    return resolved


def corpus_inputs(external: Mapping[str, Any], dataset: str) -> list[str]:
    """The user files a corpus dataset reads (Snakemake inputs), resolved: the text, the rules and word lists, the
    known concepts and the tokenizer model's folder."""
    spec = corpus_spec(external, dataset)
    files = [spec["text"], *spec["concepts"].values(), spec["model_dir"]]
    return files + ([spec["known_concepts"]] if spec.get("known_concepts") else [])


def corpus_stream_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any]:
    """What a corpus dataset's token stream (:func:`corpus_token_stream`) reads, resolved: ``text``,
    ``tokenizer_model`` and its ``model_dir``, ``text_column`` if set; its rules and recording options are left
    out, so changing them does not rebuild the stream (nor concepteval's runs on it)."""
    spec = corpus_spec(external, dataset)
    keys = ("text", "tokenizer_model", "model_dir", "text_column")
    return {key: spec[key] for key in keys if spec.get(key) is not None}


def record_options(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The :class:`~neuroneval.activations.record.RecordOptions` fields a corpus spec sets."""
    return {key: spec[key] for key in CORPUS_RECORD_KEYS if spec.get(key) is not None}


def sae_layer(layer: str, sae: Mapping[str, Any]) -> str | None:
    """The recorded layer of ``<layer>.sae`` when ``sae`` (a custom model's ``sae:``) has an SAE on it, else None.

    >>> sae_layer("transformer.h.0.sae", {"transformer.h.0": "sae"}), sae_layer("transformer.h.0", {})
    ('transformer.h.0', None)
    """
    base = layer[:-len(SAE_SUFFIX)] if layer.endswith(SAE_SUFFIX) else None
    return base if base is not None and base in sae else None


def sae_folder(external: Mapping[str, Any], model: str, layer: str) -> str | None:
    """The resolved SAE folder that ``layer`` of custom model ``model`` reads, or None for a plain layer."""
    sae = (external["models"][model] or {}).get("sae") or {}
    base = sae_layer(layer, sae)
    return None if base is None else str(resolve_path(external, sae[base]))


def corpus_rules(rules_file: str | Path | None, words_file: str | Path | None) -> list[Any]:
    """The token rules of a ``rules`` YAML file and of a ``token,concept`` word list, in that order."""
    from neuroneval.concepts.tokens import read_token_rules, read_word_lists

    rules = read_token_rules(rules_file) if rules_file else []
    return rules + (read_word_lists(words_file) if words_file else [])


def corpus_tokens_path(dataset: str) -> str:
    """The workflow's ``tokens.csv`` of a corpus dataset (rule ``external_corpus_dataset``), relative to the
    workflow directory."""
    return f"data/external/{dataset}/tokens.csv"


def dataset_media_spec(external: Mapping[str, Any], dataset: str) -> dict[str, Any] | None:
    """What the viewer and the crowd pages show for an input of an own dataset: its declared media
    (:func:`neuroneval.external.own.media_spec`), and for a ``kind: corpus`` dataset the ``tokens.csv`` the
    workflow writes (:func:`corpus_tokens_path`): each input is its token after its left context."""
    from neuroneval.external.own import media_spec

    spec = media_spec(external, dataset)
    if spec is None and ((external.get("datasets") or {}).get(dataset) or {}).get("kind") == CORPUS_KIND:
        return {"path": corpus_tokens_path(dataset), "ids": None, "image_shape": None, "root": None}
    return spec


def corpus_tokens(spec: Mapping[str, Any], *, batch_size: int = 64) -> pd.DataFrame:
    """The ``tokens.csv`` rows of a corpus dataset, from its tokenizer alone (the model is not run): the same rows
    ``neuroneval record --text`` writes with the same ``context_length`` (default: the model config's positions),
    ``max_positions``, ``position_sampling`` and ``seed``."""
    from neuroneval.activations.record_inputs import text_source

    model_dir = spec["model_dir"]
    tokenizer, config = corpus_tokenizer(model_dir)
    longest = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    options = record_options(spec)
    context_length = options.get("context_length") or longest
    if longest is not None and context_length > longest:
        raise ValueError(f"context_length {context_length} exceeds the positions of {model_dir} ({longest})")
    source = text_source(spec["text"], tokenizer, batch_size=batch_size, context_length=context_length,
                         max_positions=options.get("max_positions"),
                         position_sampling=options.get("position_sampling", "random"), seed=options.get("seed", 0),
                         text_column=options.get("text_column", "text"))
    return pd.concat([batch.side_tables["tokens"] for batch in source.batches()], ignore_index=True)


def corpus_tokenizer(model_dir: str | Path) -> tuple[Any, Any]:
    """The tokenizer and config of the transformers folder ``model_dir`` (local files only); raises ``ValueError``
    naming the folder when it has none."""
    import transformers

    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        config = transformers.AutoConfig.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as error:
        raise ValueError(f"{model_dir}: not a transformers folder with a tokenizer ({error})") from error
    return tokenizer, config


def corpus_token_stream(spec: Mapping[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A corpus dataset as one token stream, what concepteval reads (docs/concepteval.md; the files of a ``kind:
    text`` dataset: ``tokens.npy``, ``vocabulary.json``).

    Every document of ``text`` (:func:`neuroneval.activations.record_inputs.read_documents`: a ``.txt`` line, a
    file of a folder, a row of a ``datasets`` folder) is tokenized by the tokenizer of ``tokenizer_model`` (its
    ``model_dir``) and followed by the tokenizer's end-of-text token
    (:func:`neuroneval.external.text_datasets.token_stream`); the whole corpus is kept: ``max_positions`` and
    ``position_sampling`` choose recorded positions, not the stream. Returns the ids (an int64 array) and the
    vocabulary record ``{tokenizer_model, exclude, vocabulary}``: the special token ids (never in a pattern; the
    first replaces ablated tokens) and the token strings by id, padded to the model's ``vocab_size``.
    """
    import sys

    from neuroneval.activations.record_inputs import read_documents
    from neuroneval.external.text_datasets import special_token_ids, token_stream, tokenizer_vocabulary

    tokenizer, config = corpus_tokenizer(spec["model_dir"])
    documents = read_documents(spec["text"], text_column=spec.get("text_column") or "text")
    tokens = token_stream(documents, tokenizer, max_tokens=sys.maxsize)
    return tokens, {"tokenizer_model": spec["tokenizer_model"], "exclude": special_token_ids(tokenizer),
                    "vocabulary": tokenizer_vocabulary(tokenizer, int(config.vocab_size))}


def corpus_concept_table(tokens_file: str | Path, spec: Mapping[str, Any], *,
                         dataset: str) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The ``labels`` concept table of a corpus dataset from its ``tokens.csv``: one column per concept of its rules
    and word lists (:func:`neuroneval.concepts.tokens.token_concept_table`, as ``neuroneval concepts tokens``),
    and the table's metadata."""
    from neuroneval.concepts.tokens import read_tokens, token_concept_table

    concepts = spec.get("concepts") or {}
    tokens = read_tokens(tokens_file)
    frame = token_concept_table(tokens, corpus_rules(concepts.get("rules"), concepts.get("words")))
    names = [column for column in frame.columns if column != "input_id"]
    return frame, {"source": "labels", "dataset": dataset, "concepts": names, "tokens": str(tokens_file),
                   "n_documents": int(tokens["document"].nunique())}


def check_same_tokens(recorded: str | Path, expected: str | Path) -> None:
    """Raise ``ValueError`` naming both files and the first differing row unless the two ``tokens.csv`` agree."""
    left = pd.read_csv(recorded, dtype=str, keep_default_na=False)
    right = pd.read_csv(expected, dtype=str, keep_default_na=False)
    if list(left.columns) != list(right.columns) or len(left) != len(right):
        raise ValueError(f"{recorded}: {len(left)} rows of {list(left.columns)}, but the dataset's {expected} has "
                         f"{len(right)} rows of {list(right.columns)}")
    differs = (left != right).any(axis=1).to_numpy()
    if differs.any():
        row = int(differs.argmax())
        raise ValueError(f"{recorded}, row {row + 2}: {left.iloc[row].to_dict()} differs from the dataset's "
                         f"{expected} ({right.iloc[row].to_dict()}): the model's tokenizer is not the dataset's")


def record_corpus_layer(model_spec: Mapping[str, Any], spec: Mapping[str, Any], layer: str, sae: str | Path | None,
                        scratch: str | Path, *, tokens_file: str | Path, known_file: str | Path | None,
                        options: Mapping[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Record ``layer`` of the transformers LM of ``model_spec`` (:func:`neuroneval.external.own.record_spec`) on a
    corpus dataset into ``scratch``.

    With ``sae`` (the folder of the SAE on ``<layer>`` for the layer ``<layer>.sae``), the SAE's features on the
    layer, else the layer itself. The recorded ``tokens.csv`` must equal the dataset's ``tokens_file``
    (:func:`check_same_tokens`); ``known_file`` pairs join the table's ``unit_concepts``. ``options`` are
    :class:`~neuroneval.activations.record.RecordOptions` fields (``batch_size``, ``device``).
    """
    from neuroneval import io
    from neuroneval.activations.record import RecordOptions, record_files
    from neuroneval.external.own import imported_unit_concepts, known_concepts

    recorded_layer = layer[:-len(SAE_SUFFIX)] if sae is not None else layer
    record_options_ = RecordOptions.from_params({**options, **record_options(spec), "layers": [recorded_layer],
                                                 "progress": False})
    result = record_files(model_spec, "text", spec["text"], scratch,
                          record_options_, sae_folder=sae)
    check_same_tokens(result.side_files["tokens.csv"], tokens_file)
    frame, metadata = io.read_activation_table(result.tables[layer])
    units = [column for column in frame.columns if column != "input_id"]
    file_pairs = known_concepts(known_file) if known_file else {}
    metadata["unit_concepts"] = imported_unit_concepts(units, metadata.get("unit_concepts") or {}, file_pairs)
    return frame, metadata


def corpus_setting_problems(config: Mapping[str, Any], setting_name: str, setting: Mapping[str, Any]) -> list[str]:
    """What a setting on a corpus dataset lacks: a tokenizer model that is a custom transformers folder, units of
    such a model, an SAE for each ``<layer>.sae``, readable rules (:func:`corpus_unit_problems`)."""
    external = external_block(config)
    dataset = setting.get("dataset")
    problems = corpus_dataset_problems(external, dataset)
    for position, unit in enumerate(setting.get("units") or []):
        problems += corpus_unit_problems(external, f"settings.{setting_name}.units[{position}]", dataset,
                                         unit.get("model"), unit.get("layer"))
    return problems


def corpus_dataset_problems(external: Mapping[str, Any], dataset: Any) -> list[str]:
    """A corpus dataset's ``tokenizer_model`` (a ``family: custom`` model with ``model_dir``) and rules files that
    exist but do not parse."""
    spec = (external.get("datasets") or {}).get(dataset) or {}
    key = f"external.datasets.{dataset}"
    problems = _transformers_model_problems(external, f"{key}.tokenizer_model", spec.get("tokenizer_model"))
    for name in CORPUS_CONCEPT_KEYS:
        value = (spec.get("concepts") or {}).get(name)
        path = resolve_path(external, value) if value else None
        if path is None or not path.is_file():
            continue
        try:
            corpus_rules(path if name == "rules" else None, path if name == "words" else None)
        except (ValueError, KeyError, TypeError) as error:
            problems.append(f"{key}.concepts.{name}: {error}")
    return problems


def corpus_unit_problems(external: Mapping[str, Any], key: str, dataset: Any, model: Any, layer: Any) -> list[str]:
    """A unit block on a corpus dataset: a custom model with a ``model_dir``, and an SAE of its ``sae:`` for a layer
    ``<layer>.sae`` (its other layers are checked when the model is loaded, as ``neuroneval record`` does)."""
    if ((external.get("datasets") or {}).get(dataset) or {}).get("kind") != CORPUS_KIND:
        return []
    if ((external.get("models") or {}).get(model) or {}).get("family") != CUSTOM_FAMILY:
        return []  # not a custom model: :func:`neuroneval.external.own.own_unit_problems` says so
    problems = _transformers_model_problems(external, f"{key}.model", model)
    if problems or not isinstance(layer, str) or not layer.endswith(SAE_SUFFIX):
        return problems
    sae = (external["models"][model] or {}).get("sae") or {}
    if sae_layer(layer, sae) is None:
        problems.append(f"{key}.layer: {layer!r} reads an SAE on {layer[:-len(SAE_SUFFIX)]!r}, but "
                        f"external.models.{model}.sae has none there ({sorted(sae)})")
    return problems


def _transformers_model_problems(external: Mapping[str, Any], key: str, model: Any) -> list[str]:
    spec = (external.get("models") or {}).get(model) or {}
    if spec.get("family") != CUSTOM_FAMILY or not spec.get("model_dir"):
        known = sorted(name for name, entry in (external.get("models") or {}).items()
                       if entry.get("family") == CUSTOM_FAMILY and entry.get("model_dir"))
        return [f"{key}: {model!r} is not a family: custom model with a model_dir (a transformers folder) in "
                f"external.models ({known}); a corpus dataset is tokenized and recorded by one"]
    return []


def corpus_file_keys(external: Mapping[str, Any], section: str, name: str) -> list[tuple[str, Any, bool | None]]:
    """``(params key, value, is_folder)`` of every user path of a corpus dataset, or of the SAE folders of a custom
    model (the rest of a custom model's paths are :func:`neuroneval.external.own.own_file_keys`')."""
    spec = (external.get(section) or {}).get(name) or {}
    prefix = f"external.{section}.{name}"
    if section == "models":
        return [(f"{prefix}.sae.{layer}", folder, True) for layer, folder in (spec.get("sae") or {}).items()]
    if spec.get("kind") != CORPUS_KIND:
        return []
    keys = [(f"{prefix}.{key}", spec[key], is_folder) for key, is_folder in CORPUS_PATH_KEYS.items() if spec.get(key)]
    return keys + [(f"{prefix}.concepts.{key}", value, False) for key, value in (spec.get("concepts") or {}).items()]


def corpus_cosy_problems(config: Mapping[str, Any]) -> list[str]:
    """A setting on a corpus dataset named where CoSy would run it (:data:`neuroneval.external.own.COSY_SETTING_KEYS`):
    CoSy generates images, which a language model does not read."""
    from neuroneval.external.own import COSY_SETTING_KEYS

    corpora = set(corpus_datasets(external_block(config)))
    settings = config.get("settings") or {}
    problems = []
    for path in COSY_SETTING_KEYS:
        value: Any = config
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        for name in [value] if isinstance(value, str) else list(value or []):
            if (settings.get(name) or {}).get("dataset") in corpora:
                problems.append(f"{'.'.join(path)}: {name!r} is a setting on the corpus dataset "
                                f"{settings[name]['dataset']!r}; CoSy runs the model on generated images, which a "
                                "language model does not read (docs/your_lm.md)")
    return problems
