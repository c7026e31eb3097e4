"""A user-supplied text corpus (an OpenWebText subset in the paper) → one token stream of a model's tokenizer.

``path`` is a ``.txt`` file (one document), a ``.jsonl`` file (one document per line, in its ``text`` field) or a
folder of such files (read in sorted order of their relative paths, recursively). Documents are tokenized in
that order and joined with the tokenizer's end-of-text token (GPT-2's ``<|endoftext|>``) after each one, as GPT-2
saw its training text; the stream stops after ``max_tokens`` tokens (the paper uses 204,800 positions, i.e.
204,801 tokens). Next-token units and concepts of this stream come from :mod:`neuroneval.activations.lm`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

TEXT_SUFFIXES = (".txt", ".jsonl")


def document_files(path: str | Path) -> list[Path]:
    """The corpus files under ``path`` (itself if it is a file), sorted; raises naming ``path`` if none."""
    path = Path(path).expanduser()
    if path.is_file():
        if path.suffix not in TEXT_SUFFIXES:
            raise ValueError(f"text corpus {path} must be a .txt or .jsonl file, or a folder of them")
        return [path]
    if not path.is_dir():
        raise FileNotFoundError(f"text corpus {path} does not exist")
    files = sorted((file for file in path.rglob("*") if file.is_file() and file.suffix in TEXT_SUFFIXES),
                   key=lambda file: file.relative_to(path).as_posix())
    if not files:
        raise FileNotFoundError(f"no .txt or .jsonl files under {path}")
    return files


def read_documents(path: str | Path) -> Iterator[str]:
    """Every document of the corpus at ``path``, in order (see the module docstring)."""
    for file in document_files(path):
        if file.suffix == ".txt":
            yield file.read_text(encoding="utf-8", errors="replace")
            continue
        with file.open(encoding="utf-8") as lines:
            for line_number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    text = record["text"]
                except (json.JSONDecodeError, KeyError, TypeError) as error:
                    raise ValueError(f"{file} line {line_number}: expected a JSON object with a 'text' field") \
                        from error
                yield str(text)


def token_stream(documents: Iterator[str] | Sequence[str], tokenizer: Any, *, max_tokens: int) -> np.ndarray:
    """Token ids of the documents, each followed by the end-of-text token, cut after ``max_tokens`` (int64)."""
    if max_tokens < 2:
        raise ValueError(f"max_tokens must be at least 2 (one position and its next token), got {max_tokens}")
    separator = [] if tokenizer.eos_token_id is None else [int(tokenizer.eos_token_id)]
    parts, count = [], 0
    for document in documents:
        ids = list(tokenizer(document, add_special_tokens=False, verbose=False)["input_ids"]) + separator
        parts.append(np.asarray(ids[: max_tokens - count], dtype=np.int64))
        count += parts[-1].size
        if count >= max_tokens:
            break
    if count < 2:
        raise ValueError("the corpus holds fewer than 2 tokens")
    return np.concatenate(parts)


def tokenizer_vocabulary(tokenizer: Any, size: int) -> list[str]:
    """Token strings by id (``Ġthe``), padded with ``<unused:<id>>`` up to the model's ``size`` (its vocab_size).

    Raises ``ValueError`` when the tokenizer has more tokens than the model.
    """
    count = len(tokenizer)
    if count > size:
        raise ValueError(f"the tokenizer has {count} tokens but the model only {size}")
    tokens = [str(token) for token in tokenizer.convert_ids_to_tokens(list(range(count)))]
    return tokens + [f"<unused:{index}>" for index in range(count, size)]


def special_token_ids(tokenizer: Any) -> list[int]:
    """Ids of the tokenizer's special tokens (never units: they mark document boundaries, not words)."""
    return sorted({int(index) for index in tokenizer.all_special_ids})
