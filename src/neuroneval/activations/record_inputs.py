"""Inputs of ``neuroneval record``: image folders, NumPy arrays, Python iterables and text corpora, as batches.

Every source yields :class:`InputBatch` es in input-id order. Each batch carries the tensor (or token ids) the
model reads, the ``input_id`` of every row it will produce, a sha256 ``digest`` of its inputs (so a resumed run
can tell that a kept batch was made from the same inputs) and side tables (labels, tokens) that are written
beside the activation table.

- Image folder: image files (``.png``, ``.jpg``, ``.jpeg``, ``.bmp``, ``.gif``, ``.tif``, ``.tiff``, ``.webp``)
  anywhere below the folder, in sorted order of their relative paths; ``input_id`` = position in that order,
  listed in ``inputs.csv`` (``input_id,file``).
- Array: a ``.npy`` file or one array of a ``.npz`` file; row ``i`` is input ``i``, fed as float32 as it is.
- Iterable (library only): a DataLoader or any iterable of tensors or of ``(x, y, …)`` tuples/lists; ``x`` is
  the first element; ``y`` becomes the ``labels`` side table (``input_id,label``) when labels are kept.
- Text: a ``.txt`` file (one document per line, blank lines skipped), a folder of ``.txt`` files (one document per
  file, sorted by name) or a ``datasets`` folder written by ``save_to_disk`` (Arrow files listed in
  ``state.json``; the ``text_column`` column, default ``text``), read with pyarrow. Documents are cut to their
  first ``context_length`` tokens. Every token position of every document is an input; the inputs are numbered
  along the corpus (``input_id`` = the token's position in the concatenation of the cut documents), so ids stay
  sorted and unique. With ``max_positions`` fewer than the corpus' tokens, the kept positions are the first N
  (``position_sampling="first"``) or a uniform sample of N drawn with ``numpy.random.default_rng(seed)``
  (``"random"``, sorted). The ``tokens`` side table lists each kept input: ``input_id, document, position,
  token_id, token, context`` where ``context`` is the decoded text of the up to :data:`CONTEXT_TOKENS` tokens
  before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import torch

from neuroneval.io import ID_COLUMN

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
#: Tokens of left context shown in the ``context`` column of the token table.
CONTEXT_TOKENS = 8
INPUTS_FILE = "inputs.csv"


@dataclass
class InputBatch:
    """One batch: ``model_input`` (a tensor, or for text a dict of ``input_ids``/``attention_mask``), the
    ``input_ids`` of the rows it gives, the sha256 ``digest`` of its inputs, and side tables by name.

    ``token_rows`` (text only) are the (batch row, position) pairs whose activations become table rows.
    """

    model_input: Any
    input_ids: np.ndarray
    digest: str
    side_tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    token_rows: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class InputSource:
    """Batches of one dataset plus what the output records about it: ``description`` (metadata), ``n_batches``
    (``None`` when unknown), ``n_inputs``, and ``files`` to write beside the tables (name → frame)."""

    batches: Callable[[], Iterator[InputBatch]]
    description: dict[str, Any]
    n_batches: int | None
    files: dict[str, pd.DataFrame] = field(default_factory=dict)
    per_token: bool = False


def sha256_file(path: Path, *, chunk: int = 2**20) -> str:
    """The sha256 hex digest of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_files(root: Path, files: Sequence[Path]) -> str:
    """One sha256 over the files (relative path and content digest of each, in the given order)."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(root).as_posix()}\0{sha256_file(path)}\n".encode())
    return digest.hexdigest()


def tensor_digest(*parts: torch.Tensor | np.ndarray) -> str:
    """The sha256 of the arrays' dtypes, shapes and bytes."""
    digest = hashlib.sha256()
    for part in parts:
        array = part.detach().cpu().numpy() if isinstance(part, torch.Tensor) else np.asarray(part)
        array = np.ascontiguousarray(array)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def image_files(folder: str | Path) -> list[Path]:
    """The image files below ``folder`` in sorted order of their relative paths; an error when there are none."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {root} does not exist")
    files = sorted((path for path in root.rglob("*") if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES),
                   key=lambda path: path.relative_to(root).as_posix())
    if not files:
        raise ValueError(f"{root} holds no image files ({', '.join(IMAGE_SUFFIXES)})")
    return files


def image_folder_source(folder: str | Path, preprocess: Callable[[Any], torch.Tensor], *,
                        batch_size: int) -> InputSource:
    """Batches of the preprocessed images of a folder (module docstring); ``inputs.csv`` maps ids to files."""
    from PIL import Image

    root = Path(folder).expanduser()
    files = image_files(root)
    relative = [path.relative_to(root).as_posix() for path in files]

    def batches() -> Iterator[InputBatch]:
        for first in range(0, len(files), batch_size):
            tensors = []
            for path in files[first:first + batch_size]:
                try:
                    with Image.open(path) as image:
                        tensors.append(preprocess(image.convert("RGB")))
                except OSError as error:
                    raise ValueError(f"{path}: not a readable image ({error})") from error
            stacked = torch.stack(tensors)
            ids = np.arange(first, first + len(tensors), dtype=np.int64)
            yield InputBatch(stacked, ids, tensor_digest(stacked))

    return InputSource(batches, {"dataset": str(root), "kind": "image_folder", "n_inputs": len(files),
                                 "sha256": sha256_files(root, files)},
                       -(-len(files) // batch_size),
                       files={INPUTS_FILE: pd.DataFrame({ID_COLUMN: np.arange(len(files)), "file": relative})})


def array_source(path: str | Path, *, batch_size: int, key: str | None = None) -> InputSource:
    """Batches of the rows of a ``.npy`` array or of the array ``key`` of a ``.npz`` file (one array: any key)."""
    source = Path(path).expanduser()
    if not source.is_file():
        raise FileNotFoundError(f"input array {source} does not exist")
    if source.suffix == ".npz":
        with np.load(source) as archive:
            names = list(archive.files)
            if key is None and len(names) != 1:
                raise ValueError(f"{source} holds arrays {names}; name one with --array-key")
            if (key or names[0]) not in names:
                raise ValueError(f"{source} has no array {key!r}; it holds {names}")
            values = archive[key or names[0]]
    elif source.suffix == ".npy":
        values = np.load(source, mmap_mode="r")
    else:
        raise ValueError(f"{source}: expected a .npy or .npz file")
    if values.ndim < 1 or len(values) == 0 or not np.issubdtype(values.dtype, np.number):
        raise ValueError(f"{source}: expected a non-empty numeric array with one row per input, got "
                         f"{values.dtype} {values.shape}")

    def batches() -> Iterator[InputBatch]:
        for first in range(0, len(values), batch_size):
            batch = torch.from_numpy(np.array(values[first:first + batch_size], dtype=np.float32))
            yield InputBatch(batch, np.arange(first, first + len(batch), dtype=np.int64), tensor_digest(batch))

    return InputSource(batches, {"dataset": str(source), "kind": "array", "array_key": key,
                                 "n_inputs": len(values), "sha256": sha256_file(source)},
                       -(-len(values) // batch_size))


def iterable_source(items: Iterable[Any], *, keep_labels: bool = False, name: str = "iterable") -> InputSource:
    """Batches of a DataLoader or any re-iterable of tensors or ``(x, y, …)`` tuples (module docstring).

    ``name`` is what the metadata records as the dataset. The batches are hashed as they arrive, so a resumed run
    keeps a finished batch only if the iterable gives the same tensor again.
    """

    def batches() -> Iterator[InputBatch]:
        first = 0
        for position, item in enumerate(items):
            labels = None
            if isinstance(item, (tuple, list)):
                if not item:
                    raise ValueError(f"{name}: batch {position} is an empty tuple")
                x = item[0]
                labels = item[1] if len(item) > 1 else None
            else:
                x = item
            if not isinstance(x, torch.Tensor):
                x = torch.as_tensor(np.asarray(x))
            if x.ndim == 0:
                raise ValueError(f"{name}: batch {position} is a scalar, expected a batch of inputs")
            ids = np.arange(first, first + len(x), dtype=np.int64)
            side = {}
            if keep_labels:
                if labels is None:
                    raise ValueError(f"{name}: batch {position} has no labels (expected (x, y) tuples)")
                label_values = np.asarray(labels.cpu() if isinstance(labels, torch.Tensor) else labels)
                if label_values.shape != (len(x),):
                    raise ValueError(f"{name}: batch {position} has {len(x)} inputs but labels of shape "
                                     f"{label_values.shape} (expected one label per input)")
                side["labels"] = pd.DataFrame({ID_COLUMN: ids, "label": label_values})
            first += len(x)
            yield InputBatch(x, ids, tensor_digest(x), side)

    length = len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    return InputSource(batches, {"dataset": name, "kind": "iterable"}, length)


def read_documents(path: str | Path, *, text_column: str = "text") -> list[str]:
    """Documents of a ``.txt`` file (one per non-blank line), a folder of ``.txt`` files (one per file, sorted) or a
    ``datasets`` ``save_to_disk`` folder (its ``text_column``)."""
    source = Path(path).expanduser()
    if source.is_file():
        lines = source.read_text(encoding="utf-8").splitlines()
        documents = [line for line in lines if line.strip()]
    elif (source / "state.json").is_file():
        documents = _saved_dataset_texts(source, text_column)
    elif (source / "dataset_dict.json").is_file():
        splits = json.loads((source / "dataset_dict.json").read_text()).get("splits", [])
        raise ValueError(f"{source} holds a DatasetDict; give one split's folder, e.g. {source / str(splits[0])}"
                         if splits else f"{source} holds a DatasetDict without splits")
    elif source.is_dir():
        files = sorted(source.glob("*.txt"))
        if not files:
            raise ValueError(f"{source} holds neither .txt files nor a datasets state.json")
        documents = [file.read_text(encoding="utf-8") for file in files]
    else:
        raise FileNotFoundError(f"text input {source} does not exist")
    if not documents:
        raise ValueError(f"{source} holds no documents")
    return documents


def text_files(path: str | Path) -> list[Path]:
    """The files whose bytes a text input's documents come from (hashed into the metadata)."""
    source = Path(path).expanduser()
    if source.is_file():
        return [source]
    if (source / "state.json").is_file():
        return [source / "state.json", *(source / name for name in _saved_dataset_files(source))]
    return sorted(source.glob("*.txt"))


def _saved_dataset_files(folder: Path) -> list[str]:
    """The Arrow files ``state.json`` lists; an indices mapping (a ``select``/``shuffle`` not flattened) is refused."""
    state = json.loads((folder / "state.json").read_text())
    if state.get("_indices_data_files"):
        raise ValueError(f"{folder / 'state.json'} keeps an indices mapping; save the dataset after "
                         "flatten_indices()")
    names = [entry["filename"] for entry in state.get("_data_files", [])]
    if not names:
        raise ValueError(f"{folder / 'state.json'} lists no _data_files")
    return names


def _saved_dataset_texts(folder: Path, text_column: str) -> list[str]:
    """The ``text_column`` of a ``save_to_disk`` folder: its Arrow stream files in ``state.json`` order."""
    import pyarrow as pa

    texts: list[str] = []
    for name in _saved_dataset_files(folder):
        path = folder / name
        if not path.is_file():
            raise FileNotFoundError(f"{path} (listed in {folder / 'state.json'}) does not exist")
        with pa.memory_map(str(path)) as handle:
            table = pa.ipc.open_stream(handle).read_all()
        if text_column not in table.column_names:
            raise ValueError(f"{path}: no column {text_column!r} (columns: {table.column_names}); choose one with "
                             "--text-column")
        texts.extend(str(value) for value in table.column(text_column).to_pylist() if value is not None)
    return texts


def kept_positions(n_tokens: int, max_positions: int | None, sampling: Literal["first", "random"],
                   seed: int) -> np.ndarray:
    """A boolean mask over the corpus' ``n_tokens`` positions: all, the first ``max_positions`` or a seeded sample."""
    keep = np.zeros(n_tokens, dtype=bool)
    if max_positions is None or max_positions >= n_tokens:
        keep[:] = True
    elif sampling == "first":
        keep[:max_positions] = True
    else:
        keep[np.random.default_rng(seed).choice(n_tokens, size=max_positions, replace=False)] = True
    return keep


def text_source(path: str | Path, tokenizer: Any, *, batch_size: int, context_length: int | None,
                max_positions: int | None = None, position_sampling: Literal["first", "random"] = "random",
                seed: int = 0, text_column: str = "text") -> InputSource:
    """Per-token batches of a text corpus (module docstring): ``batch_size`` documents per batch, right-padded;
    ``context_length=None`` leaves documents uncut."""
    if context_length is not None and context_length < 1:
        raise ValueError(f"context_length must be >= 1 or None (documents uncut), got {context_length}")
    if max_positions is not None and max_positions < 1:
        raise ValueError(f"max_positions must be >= 1, got {max_positions}")
    source = Path(path).expanduser()
    documents = read_documents(source, text_column=text_column)
    token_ids = [np.asarray(tokenizer(text)["input_ids"][:context_length], dtype=np.int64) for text in documents]
    lengths = np.array([ids.size for ids in token_ids], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    keep = kept_positions(int(offsets[-1]), max_positions, position_sampling, seed)
    used = [doc for doc in range(len(documents)) if lengths[doc] and keep[offsets[doc]:offsets[doc + 1]].any()]
    pad_id = tokenizer.pad_token_id if getattr(tokenizer, "pad_token_id", None) is not None else 0

    def batches() -> Iterator[InputBatch]:
        for first in range(0, len(used), batch_size):
            docs = used[first:first + batch_size]
            width = int(lengths[docs].max())
            input_ids = torch.full((len(docs), width), pad_id, dtype=torch.long)
            attention = torch.zeros((len(docs), width), dtype=torch.long)
            rows, positions = [], []
            for row, doc in enumerate(docs):
                input_ids[row, :lengths[doc]] = torch.from_numpy(token_ids[doc])
                attention[row, :lengths[doc]] = 1
                here = np.flatnonzero(keep[offsets[doc]:offsets[doc + 1]])
                rows.append(np.full(here.size, row))
                positions.append(here)
            row_index, position_index = np.concatenate(rows), np.concatenate(positions)
            doc_index = np.asarray(docs)[row_index]
            ids = offsets[doc_index] + position_index
            tokens = input_ids[row_index, position_index].numpy()
            side = {"tokens": pd.DataFrame({
                ID_COLUMN: ids, "document": doc_index, "position": position_index, "token_id": tokens,
                "token": [str(token) for token in tokenizer.convert_ids_to_tokens(tokens.tolist())],
                "context": [tokenizer.decode(token_ids[doc][max(0, position - CONTEXT_TOKENS):position].tolist())
                            for doc, position in zip(doc_index, position_index, strict=True)],
            })}
            yield InputBatch({"input_ids": input_ids, "attention_mask": attention}, ids.astype(np.int64),
                             tensor_digest(input_ids, attention, ids), side, (row_index, position_index))

    files = text_files(source)
    description = {"dataset": str(source), "kind": "text", "n_documents": len(documents),
                   "n_tokens": int(offsets[-1]), "n_inputs": int(keep.sum()), "text_column": text_column,
                   "sha256": sha256_files(source if source.is_dir() else source.parent, files)}
    return InputSource(batches, description, -(-len(used) // batch_size), per_token=True)
