"""Record a model's units on a dataset into activation tables, in bounded memory, resumable after a kill.

:func:`record` runs a :class:`~neuroneval.activations.record_models.RecordModel` over the batches of an
:class:`~neuroneval.activations.record_inputs.InputSource` with a forward hook on each requested layer and writes,
into the output folder,

- ``<layer>.parquet``: an activation table (docs/design.md §2.1), unit ``<layer>.<i>`` = channel ``i`` of the
  layer's output. Vision and array inputs give one row per input: conv outputs (N, C, H, W) and token outputs
  (N, T, D) are pooled (``mean``/``max``) as in :func:`neuroneval.activations.extract.pool`. Text inputs give one
  row per kept token: the layer's output (N, T, D) at that (document, position), e.g. the hidden neurons of an MLP
  (``transformer.h.0.mlp.act``) or the residual stream (``transformer.h.0``, the first element of a block's
  output tuple). ``logits``/``softmax`` are the model's output (its ``.logits`` for ``transformers`` outputs).
- ``<layer>.sae.parquet`` with an SAE (:mod:`neuroneval.activations.sae`): features ``<layer>.sae.<j>`` of the
  recorded (pooled or per-token) activations.
- side files: ``inputs.csv`` (image folders), ``tokens.csv`` (text: ``input_id, document, position, token_id,
  token, context``), ``labels.csv`` (``(x, y)`` iterables, when labels are kept).

Each table's metadata holds the model (spec, sha256 of its files), layer, dataset (path, kind, sha256 of its files),
``pooling`` (``per_token`` for text), the SAE config and file hashes, the options and ``neuroneval_version``.

Memory and resuming: each batch is validated and written at once as Parquet shards (one per table) and side-table
CSV shards into ``.record-<key>/`` in the output folder, then marked done with the sha256 of its inputs. ``<key>``
is the sha256 of the model and dataset descriptions and the options, so a rerun with the same arguments finds the
folder, skips every batch whose mark is there with the same input digest, and computes the rest. The tables are
then assembled shard by shard (one Parquet row group each) into temporary files renamed into place, and the
folder is removed. Nothing holds more than one batch of activations.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch import nn

from neuroneval import __version__, io
from neuroneval.activations.extract import OUTPUT_LAYERS, POOLINGS, Pooling, pool
from neuroneval.activations.record_inputs import (
    InputBatch,
    InputSource,
    array_source,
    image_folder_source,
    sha256_file,
    text_source,
)
from neuroneval.activations.record_models import RecordModel, load_record_model
from neuroneval.activations.sae import SAE_CONFIG_FILE, SAE_WEIGHTS_FILE, SparseAutoencoder, load_sae
from neuroneval.options import Options, OptionsError, check_choice, check_range
from neuroneval.progress import progress_bar

SIDE_TABLES = ("tokens", "labels")
INPUT_KINDS = ("images", "array", "text")

InputKind = Literal["images", "array", "text"]


@dataclass(frozen=True)
class RecordOptions(Options):
    """How :func:`record` runs (``RecordOptions.from_params(mapping)`` for the workflow).

    ``layers``: module names (``model.named_modules()``) or ``logits``/``softmax``; ``pooling``: ``mean``/``max``
    for non-text inputs; ``batch_size``: inputs (documents for text) per batch and shard; ``device``: where the
    model runs; ``max_positions``, ``position_sampling``, ``seed``, ``context_length`` (default: the model's
    positions, ``n_positions``/``max_position_embeddings`` of its config), ``text_column``: text inputs
    (:mod:`neuroneval.activations.record_inputs`); ``array_key``: the array of a ``.npz``;
    ``keep_labels``: write ``labels.csv`` from ``(x, y)`` batches; ``image_size``: resize images for models without
    their own preprocessing; ``progress``: the bar.
    """

    layers: tuple[str, ...] = ()
    pooling: Pooling = "mean"
    batch_size: int = 32
    device: str = "cpu"
    max_positions: int | None = None
    position_sampling: Literal["first", "random"] = "random"
    seed: int = 0
    context_length: int | None = None
    text_column: str = "text"
    array_key: str | None = None
    keep_labels: bool = False
    image_size: int | None = None
    progress: bool = True

    def validate(self) -> None:
        if not self.layers or isinstance(self.layers, str) or not all(isinstance(name, str) for name in self.layers):
            raise OptionsError(f"RecordOptions.layers must be a non-empty list of layer names, got {self.layers!r}")
        check_choice(self, "pooling", POOLINGS)
        check_choice(self, "position_sampling", ("first", "random"))
        check_range(self, "batch_size", 1, integer=True)
        if self.context_length is not None:
            check_range(self, "context_length", 1, integer=True)
        if self.max_positions is not None:
            check_range(self, "max_positions", 1, integer=True)
        if self.image_size is not None:
            check_range(self, "image_size", 1, integer=True)

    def resume_fields(self) -> dict[str, Any]:
        """The options that change what is computed (not ``device`` or ``progress``)."""
        return {key: value for key, value in asdict(self).items() if key not in ("device", "progress")}


@dataclass
class RecordResult:
    """What :func:`record` wrote: ``tables`` (table name → path), ``side_files`` (name → path), ``n_inputs``, and
    how many batches it ``computed`` and found already done (``resumed``)."""

    tables: dict[str, Path]
    side_files: dict[str, Path]
    n_inputs: int
    computed: int
    resumed: int


def check_layers(module: nn.Module, layers: Sequence[str], *, hookable: bool = True) -> None:
    """Raise ``ValueError`` naming each unknown layer and the closest module names (``difflib``)."""
    import difflib

    names = [name for name, _ in module.named_modules() if name]
    for layer in layers:
        if layer in OUTPUT_LAYERS:
            continue
        if not hookable:
            raise ValueError(f"layer {layer!r}: this model (TorchScript) takes no forward hooks; record "
                             f"{list(OUTPUT_LAYERS)} or save it with torch.export")
        if layer not in names:
            close = difflib.get_close_matches(layer, names, n=5, cutoff=0.5)
            hint = f"closest: {close}" if close else f"first layers: {names[:10]}"
            raise ValueError(f"unknown layer {layer!r}; {hint}")


def record(model: RecordModel | nn.Module, source: InputSource, out_dir: str | os.PathLike, options: RecordOptions, *,
           sae: SparseAutoencoder | None = None) -> RecordResult:
    """Record ``options.layers`` of ``model`` on ``source`` into tables in ``out_dir`` (module docstring).

    An ``nn.Module`` is wrapped with :meth:`RecordModel.from_module`. With ``sae``, exactly one layer may be
    recorded; its features are written beside it. A rerun with the same model, inputs and options resumes.
    """
    if isinstance(model, nn.Module):
        model = RecordModel.from_module(model)
    check_layers(model.module, options.layers, hookable=model.hookable)
    if sae is not None and len(options.layers) != 1:
        raise ValueError(f"an SAE reads one layer; got layers {list(options.layers)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sae_description = None if sae is None else {
        "folder": str(sae.source), "config": sae.config, "architecture": sae.architecture,
        "sha256": {name: sha256_file(sae.source / name) for name in (SAE_CONFIG_FILE, SAE_WEIGHTS_FILE)}}
    run = {"model": model.description, "dataset": source.description, "options": options.resume_fields(),
           "sae": sae_description}
    key = hashlib.sha256(json.dumps(run, sort_keys=True, default=str).encode()).hexdigest()
    shards = out / f".record-{key[:16]}"
    shards.mkdir(exist_ok=True)
    table_names = [*options.layers, *([f"{options.layers[0]}.sae"] if sae is not None else [])]
    n_batches, n_inputs, computed = _record_batches(model, source, shards, table_names, options, sae)
    metadata = {"model": model.description, "dataset": source.description, "dtype": "float32", "unit_concepts": {},
                "pooling": "per_token" if source.per_token else options.pooling, "options": options.resume_fields(),
                "n_inputs": n_inputs, "kind": "activation", "neuroneval_version": __version__}
    tables = {}
    for name in table_names:
        extra = {"sae": sae_description} if name != options.layers[0] and sae_description is not None else {}
        tables[name] = _assemble_table(out / f"{name}.parquet", [shards / f"{name}-{i:06d}.parquet"
                                                                for i in range(n_batches)],
                                       {**metadata, "layer": name, **extra})
    side_files = {name: io.write_csv(out / name, frame) for name, frame in source.files.items()}
    for name in SIDE_TABLES:
        parts = [shards / f"{name}-{i:06d}.csv" for i in range(n_batches)]
        if parts[0].is_file():
            side_files[f"{name}.csv"] = _concatenate_csv(out / f"{name}.csv", parts)
    shutil.rmtree(shards)
    return RecordResult(tables, side_files, n_inputs, computed, n_batches - computed)


def _record_batches(model: RecordModel, source: InputSource, shards: Path, table_names: list[str],
                    options: RecordOptions, sae: SparseAutoencoder | None) -> tuple[int, int, int]:
    """Write each batch's shards and mark (``batch-<i>.json`` with its input digest) unless a mark with the same
    digest is there already; returns (batches, inputs, batches computed)."""
    model.module.to(options.device)
    encoder = None if sae is None else sae.to(options.device)
    n_batches = n_inputs = computed = 0
    bar = progress_bar(source.batches(), desc="record", total=source.n_batches, unit="batch",
                       enabled=options.progress)
    for index, batch in enumerate(bar):
        mark = shards / f"batch-{index:06d}.json"
        n_batches, n_inputs = index + 1, n_inputs + len(batch.input_ids)
        if mark.is_file() and json.loads(mark.read_text()).get("digest") == batch.digest:
            continue
        values = _run_batch(model, batch, options, source.per_token)
        if encoder is not None:
            values[table_names[-1]] = encoder.encode(values[options.layers[0]]).cpu()
        for name in table_names:
            _write_shard(shards / f"{name}-{index:06d}.parquet", values[name], batch.input_ids, name)
        for name, frame in batch.side_tables.items():
            with io.atomic_path(shards / f"{name}-{index:06d}.csv") as tmp:
                frame.to_csv(tmp, index=False, lineterminator="\n")
        io.write_json(mark, {"digest": batch.digest, "rows": len(batch.input_ids)})
        computed += 1
    if not n_batches:
        raise ValueError(f"{source.description.get('dataset')}: no inputs to record")
    return n_batches, n_inputs, computed


def record_files(model_spec: Mapping[str, Any], inputs: InputKind, inputs_path: str | os.PathLike,
                 out_dir: str | os.PathLike, options: RecordOptions, *,
                 sae_folder: str | os.PathLike | None = None) -> RecordResult:
    """Load the model of ``model_spec`` (:func:`~neuroneval.activations.record_models.load_record_model`), open
    ``inputs_path`` as ``inputs`` (:func:`open_inputs`), read the SAE in ``sae_folder`` if any, and :func:`record`."""
    model = load_record_model(model_spec, image_size=options.image_size)
    source = open_inputs(inputs, inputs_path, model, options)
    return record(model, source, out_dir, options, sae=None if sae_folder is None else load_sae(sae_folder))


def open_inputs(kind: InputKind, path: str | os.PathLike, model: RecordModel, options: RecordOptions) -> InputSource:
    """The :class:`InputSource` of an image folder, an array file or a text corpus, for ``model``."""
    if kind == "images":
        if model.preprocess is None:
            raise ValueError(f"{path}: this model reads text, not images")
        return image_folder_source(path, model.preprocess, batch_size=options.batch_size)
    if kind == "array":
        return array_source(path, batch_size=options.batch_size, key=options.array_key)
    if kind == "text":
        if model.tokenizer is None:
            raise ValueError(f"{path}: text inputs need a text model with a tokenizer (a transformers text model "
                             "or a transformers_lm spec)")
        config = getattr(model.module, "config", None)
        longest = getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
        if longest is not None and (options.context_length or 0) > longest:
            raise ValueError(f"context_length {options.context_length} exceeds the model's {longest} positions")
        return text_source(path, model.tokenizer, batch_size=options.batch_size,
                           context_length=options.context_length or longest, max_positions=options.max_positions,
                           position_sampling=options.position_sampling, seed=options.seed,
                           text_column=options.text_column)
    raise ValueError(f"inputs must be one of {list(INPUT_KINDS)}, got {kind!r}")


@torch.no_grad()
def _run_batch(model: RecordModel, batch: InputBatch, options: RecordOptions,
               per_token: bool) -> dict[str, torch.Tensor]:
    """``{layer: (rows, units) float32 on the CPU}`` of one batch: pooled per input, or per kept token."""
    captured: dict[str, torch.Tensor] = {}
    modules = dict(model.module.named_modules())

    def make_hook(layer: str) -> Callable:
        def hook(_module: nn.Module, _inputs: tuple, output: Any) -> None:
            captured[layer] = _first_tensor(output, layer)

        return hook

    hooked = [layer for layer in options.layers if layer not in OUTPUT_LAYERS]
    handles = [modules[layer].register_forward_hook(make_hook(layer)) for layer in hooked]
    try:
        output = model.forward(_to_device(batch.model_input, options.device))
    finally:
        for handle in handles:
            handle.remove()
    logits = None
    if any(layer in OUTPUT_LAYERS for layer in options.layers):
        logits = _first_tensor(getattr(output, "logits", output), "logits")
    values = {}
    for layer in options.layers:
        if layer == "logits":
            raw = logits
        elif layer == "softmax":
            raw = torch.softmax(logits.double(), dim=-1)
        else:
            raw = captured.get(layer)
            if raw is None:
                raise ValueError(f"layer {layer!r} was not called by the model's forward pass")
        if per_token:
            if raw.ndim != 3:
                raise ValueError(f"layer {layer!r} gives shape {tuple(raw.shape)}; per-token recording needs "
                                 "(documents, positions, units)")
            rows, positions = batch.token_rows
            raw = raw[torch.as_tensor(rows, device=raw.device), torch.as_tensor(positions, device=raw.device)]
        else:
            raw = pool(raw, options.pooling)
        values[layer] = raw.float().cpu()
    return values


def _first_tensor(output: Any, layer: str) -> torch.Tensor:
    """A layer's output tensor: itself, or the first element of a tuple (a transformer block's hidden states)."""
    while isinstance(output, (tuple, list)) and output:
        output = output[0]
    if not isinstance(output, torch.Tensor):
        raise ValueError(f"layer {layer!r} returns {type(output).__name__}, not a tensor")
    return output


def _to_device(value: Any, device: str) -> Any:
    if isinstance(value, dict):
        return {key: item.to(device) for key, item in value.items()}
    return value.to(device)


def _write_shard(path: Path, values: torch.Tensor, input_ids: np.ndarray, name: str) -> None:
    """One batch of a table, validated (finite float32) and written atomically."""
    matrix = values.reshape(len(values), -1).numpy()
    units = [f"{name}.{position}" for position in range(matrix.shape[1])]
    frame = pd.DataFrame(matrix, columns=units, copy=False)
    frame.insert(0, io.ID_COLUMN, np.asarray(input_ids, dtype=np.int64))
    checked = io.validate_table(frame, source=f"{name} (batch {path.stem.rsplit('-', 1)[-1]})")
    with io.atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pandas(checked, preserve_index=False), tmp, compression="zstd")


def _assemble_table(target: Path, parts: list[Path], metadata: dict[str, Any]) -> Path:
    """The shards as one Parquet file (one row group each) with the ``neuroneval`` metadata, written atomically."""
    encoded = json.dumps(metadata, sort_keys=True, default=str).encode()
    first = pq.read_schema(parts[0])
    schema = first.remove_metadata().with_metadata({io.METADATA_KEY: encoded})
    with io.atomic_path(target) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd") as writer:
        for part in parts:
            writer.write_table(pq.read_table(part).replace_schema_metadata(schema.metadata))
    return target


def _concatenate_csv(target: Path, parts: list[Path]) -> Path:
    """The CSV shards as one file (the header once), written atomically."""
    with io.atomic_path(target) as tmp, open(tmp, "wb") as handle:
        for position, part in enumerate(parts):
            lines = part.read_bytes().split(b"\n", 1)
            handle.write(lines[0] + b"\n" if position == 0 else b"")
            handle.write(lines[1] if len(lines) > 1 else b"")
    return target
