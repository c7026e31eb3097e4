"""Free text → the concept vocabulary: exact names, formulas, a synonym table, text-embedding similarity.

Explanations written by other tools are words ("Red objects", "class:5", "dogs OR cats", "wheels of a car");
a concept simulator needs concept names of the concept table. :class:`ConceptMatcher` maps a text in four
stages and records which one succeeded (``mapped_by``):

1. ``exact`` — the whole text, normalised by :func:`normalise_name`, equals a normalised concept name, or else
   the normalised label of exactly one concept (the part after its last ``:``: ``red`` for ``colour:red``);
2. ``formula`` — the text parses as a formula (or linear / clustered explanation) of
   :func:`neuroneval.explain.explanation.parse` and every concept it names matches a concept name as in (1);
3. ``synonym`` — the normalised text is a key of the user's synonym table (:attr:`TextMapping.synonyms`), whose
   value is a concept name or a formula of concept names;
4. ``embedding`` — the cosine similarity ``cos(e(t), e(c)) = e(t)·e(c) / (‖e(t)‖ ‖e(c)‖)`` between the text's
   embedding and the embedding of each concept name (its normalised form) is highest for concept ``c*`` and at
   least :attr:`TextMapping.threshold`; the similarity is recorded.

A text that maps to nothing gets a reason, e.g. ``no concept matches 'wheels of a car' (best: vehicle 0.41 <
0.6)``. Embedders are callables ``list[str] -> (n, d) array``; :class:`TransformersEmbedder` mean-pools the last
hidden state of a local ``transformers`` model folder, :class:`OpenClipEmbedder` encodes with a local open_clip
model folder (no hub access for either).
"""

from __future__ import annotations

import csv
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from neuroneval.explain.explanation import (
    And,
    Clustered,
    Concept,
    Explanation,
    Linear,
    Not,
    Or,
    Text,
    parse,
)
from neuroneval.options import Options, OptionsError, check_range

MappedBy = Literal["exact", "formula", "synonym", "embedding"]
#: The stages of :class:`ConceptMatcher`, in the order they are tried.
MAPPED_BY: tuple[str, ...] = ("exact", "formula", "synonym", "embedding")
#: Explanation kinds that are structure, not prose: matched by their names only, never embedded.
STRUCTURED_KINDS: tuple[str, ...] = ("formula", "linear", "clustered")

Embedder = Callable[[list[str]], Any]

_WORD = re.compile(r"[^\W_]+")


def normalise_name(text: str) -> str:
    """The matching key of a concept name or a text: its case-folded runs of letters and digits, joined by single
    spaces — every other character (whitespace, ``_``, ``-``, ``:``, ``/``, quotes, punctuation) separates.

    So ``class:5``, ``Class 5``, ``class_5`` and ``"Class-5."`` share the key ``class 5`` (the rule
    ``neuroneval.explain.llm_backend`` applies to LLM replies, extended to non-ASCII letters).

    >>> normalise_name("Colour:Red"), normalise_name(' "red_dog". '), normalise_name("Café au lait")
    ('colour red', 'red dog', 'café au lait')
    """
    return " ".join(_WORD.findall(text.casefold()))


def read_synonyms(path: str | os.PathLike) -> dict[str, str]:
    """A synonym table from a CSV with the columns ``text,concept`` (other columns are ignored).

    ``concept`` is a concept name or a formula of concept names. Errors name the file, the row (1-based data
    row, the header is row 0) and the column.
    """
    source = str(path)
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header = [name.strip() for name in reader.fieldnames or []]
        missing = [column for column in ("text", "concept") if column not in header]
        if missing:
            raise ValueError(f"{source}: missing column(s) {missing}; a synonym table has the columns text,concept "
                             f"(got {header})")
        table: dict[str, str] = {}
        for row, record in enumerate(reader, start=1):
            record = {(key or "").strip(): value for key, value in record.items()}
            for column in ("text", "concept"):
                if not (record.get(column) or "").strip():
                    raise ValueError(f"{source}, row {row}: column {column!r} is empty")
            table[record["text"]] = record["concept"]
    return table


@dataclass(frozen=True)
class TextMapping(Options):
    """How free text is mapped to concept names (stages 3 and 4 of :class:`ConceptMatcher`; 1 and 2 always run).

    synonyms: a ``text -> concept or formula`` mapping, or the path of a CSV ``text,concept``
    (:func:`read_synonyms`); stored as sorted ``(text, concept)`` pairs. embedding_model: a local model folder,
    open_clip (with ``open_clip_config.json``) or ``transformers`` (:func:`folder_embedder`; ``None``: no
    embedding stage unless ``embedder`` is given). embedder: any callable ``list[str] -> (n, d)`` array (Python
    only; it wins over ``embedding_model``). threshold: the least cosine similarity that maps a text to its
    nearest concept, in [-1, 1] (0.6 by default).
    """

    synonyms: Any = None
    embedding_model: str | None = None
    embedder: Any = field(default=None, compare=False)
    threshold: float = 0.6

    def validate(self) -> None:
        check_range(self, "threshold", -1.0, 1.0)
        synonyms = self.synonyms
        if isinstance(synonyms, str | os.PathLike):
            synonyms = read_synonyms(synonyms)
        if isinstance(synonyms, Mapping):
            synonyms = tuple(sorted((str(text), str(concept)) for text, concept in synonyms.items()))
        if synonyms is not None and not (isinstance(synonyms, tuple) and all(
                isinstance(pair, tuple) and len(pair) == 2 for pair in synonyms)):
            raise OptionsError(f"TextMapping.synonyms must be a mapping text -> concept or the path of a CSV "
                               f"text,concept, got {self.synonyms!r}")
        object.__setattr__(self, "synonyms", synonyms)
        if self.embedding_model is not None and not Path(self.embedding_model).is_dir():
            raise OptionsError(f"TextMapping.embedding_model must be a local model folder, got "
                               f"{self.embedding_model!r} (not a directory)")
        if self.embedder is not None and not callable(self.embedder):
            raise OptionsError(f"TextMapping.embedder must be a callable list[str] -> (n, d) array, "
                               f"got {self.embedder!r}")

    def resolved_embedder(self) -> Embedder | None:
        """``embedder`` if given, else an embedder of the ``embedding_model`` folder (:func:`folder_embedder`),
        else ``None``."""
        if self.embedder is not None:
            return self.embedder
        if self.embedding_model is not None:
            return folder_embedder(self.embedding_model)
        return None


def folder_embedder(folder: str | os.PathLike) -> Embedder:
    """The embedder of a local model folder: :class:`OpenClipEmbedder` when it holds ``open_clip_config.json``
    (the Hugging Face snapshot layout of open_clip models), else :class:`TransformersEmbedder`."""
    if (Path(folder) / "open_clip_config.json").is_file():
        return OpenClipEmbedder(folder)
    return TransformersEmbedder(folder)


class OpenClipEmbedder:
    """L2-normalised open_clip text embeddings ``encode_text(tokenize(t)) / ‖·‖`` of a local model folder.

    The folder holds ``open_clip_config.json`` and the weights (loaded by
    :func:`neuroneval.models.loaders.load_model`, family ``open_clip``, nothing downloaded); the texts go through
    :func:`neuroneval.concepts.pseudo.embed_texts`, the text side of the project's pseudo-labels.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        from neuroneval.models.loaders import load_model

        self.folder = str(folder)
        loaded = load_model({"family": "open_clip", "pretrained": self.folder})
        self.model, self.tokenizer = loaded.module, loaded.tokenizer

    def __call__(self, texts: list[str]) -> np.ndarray:
        from neuroneval.concepts.pseudo import embed_texts

        return embed_texts(self.model, self.tokenizer, list(texts)).astype(np.float64)


class TransformersEmbedder:
    """Mean-pooled last hidden states of a local ``transformers`` model: ``e(t) = Σ_i m_i h_i / Σ_i m_i``.

    ``h_i`` is the last hidden state of token i and ``m_i`` the attention mask (padding excluded). Loads
    ``AutoModel`` and ``AutoTokenizer`` from ``folder`` with ``local_files_only=True``: nothing is downloaded.
    """

    def __init__(self, folder: str | os.PathLike, *, batch_size: int = 64, max_length: int = 64) -> None:
        from transformers import AutoModel, AutoTokenizer

        self.folder = str(folder)
        self.batch_size = batch_size
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(self.folder, local_files_only=True)
        self.model = AutoModel.from_pretrained(self.folder, local_files_only=True)
        self.model.eval()

    def __call__(self, texts: list[str]) -> np.ndarray:
        import torch

        chunks = []
        with torch.no_grad():
            for start in range(0, len(texts), self.batch_size):
                batch = self.tokenizer(list(texts[start:start + self.batch_size]), padding=True, truncation=True,
                                       max_length=self.max_length, return_tensors="pt")
                hidden = self.model(input_ids=batch["input_ids"],
                                    attention_mask=batch["attention_mask"]).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                chunks.append((hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0))
        return torch.cat(chunks).double().numpy() if chunks else np.zeros((0, 0))


@dataclass(frozen=True)
class Match:
    """A text mapped to an explanation of concept names; ``similarity`` only for ``embedding`` (else NaN)."""

    explanation: Explanation
    mapped_by: str
    similarity: float = float("nan")


def rename_concepts(explanation: Explanation, rename: Callable[[str], str]) -> Explanation:
    """The same explanation with every concept name ``n`` replaced by ``rename(n)``."""
    if isinstance(explanation, Concept):
        return Concept(rename(explanation.name))
    if isinstance(explanation, Not):
        return Not(rename_concepts(explanation.operand, rename))
    if isinstance(explanation, And | Or):
        return type(explanation)(rename_concepts(explanation.left, rename), rename_concepts(explanation.right, rename))
    if isinstance(explanation, Linear):
        return Linear(tuple((rename(name), weight) for name, weight in explanation.weights), explanation.bias)
    if isinstance(explanation, Clustered):
        return Clustered(tuple((low, high, rename_concepts(formula, rename))
                               for low, high, formula in explanation.clusters))
    return explanation


class ConceptMatcher:
    """Maps texts to explanations over ``concept_names`` (stages in the module docstring)."""

    def __init__(self, concept_names: Sequence[str], mapping: TextMapping | None = None) -> None:
        self.concept_names = [str(name) for name in concept_names]
        if not self.concept_names:
            raise ValueError("concept_names is empty: there is no vocabulary to map explanations to")
        self.mapping = mapping if mapping is not None else TextMapping()
        self.exact = set(self.concept_names)
        by_key: dict[str, list[str]] = {}
        for name in self.concept_names:
            by_key.setdefault(normalise_name(name), []).append(name)
        by_label: dict[str, list[str]] = {}
        for name in self.concept_names:
            if ":" in name:
                by_label.setdefault(normalise_name(name.rsplit(":", 1)[1]), []).append(name)
        self.by_key = by_key
        self.by_label = by_label
        self.synonyms: dict[str, Explanation] = {}
        for text, target in self.mapping.synonyms or ():
            resolved = self.resolve(target)
            if isinstance(resolved, str):
                raise ValueError(f"synonym table: {text!r} -> {target!r}: {resolved}")
            key = normalise_name(text)
            if key in self.synonyms and self.synonyms[key] != resolved:
                raise ValueError(f"synonym table: {text!r} has the key {key!r} of an earlier text with another "
                                 f"concept ({self.synonyms[key].text()!r} vs {target!r})")
            self.synonyms[key] = resolved
        self._embedder = self.mapping.resolved_embedder()
        self._concept_vectors: np.ndarray | None = None

    def lookup(self, name: str) -> str | None:
        """The concept name that ``name`` denotes: itself if it is one, else the one concept of the same key, else
        the one concept whose label (after its last ``:``) has that key; ``None`` when none or several."""
        if name in self.exact:
            return name
        key = normalise_name(name)
        candidates = self.by_key.get(key) or self.by_label.get(key, [])
        return candidates[0] if len(candidates) == 1 else None

    def resolve(self, text: str, kind: str | None = None) -> Explanation | str:
        """``text`` parsed (kind guessed when ``None``) with every concept name looked up, or the reason it fails."""
        try:
            parsed = parse(text, kind)
        except ValueError as error:
            return f"not a concept name or formula ({error})"
        if isinstance(parsed, Text) or not parsed.concepts():
            return "names no concept"
        unknown = [name for name in parsed.concepts() if self.lookup(name) is None]
        if unknown:
            return f"names unknown concept(s) {unknown}"
        return rename_concepts(parsed, lambda name: self.lookup(name) or name)

    def match_symbolic(self, text: str, kind: str | None = None) -> Match | None:
        """Stages 1–3 (exact, formula, synonym) for one text; ``None`` when none applies."""
        name = self.lookup(text.strip())
        if name is not None and kind in (None, "concept", "text"):
            return Match(Concept(name), "exact")
        resolved = self.resolve(text, None if kind == "text" else kind)
        if not isinstance(resolved, str):
            return Match(resolved, "exact" if isinstance(resolved, Concept) else "formula")
        synonym = self.synonyms.get(normalise_name(text))
        if synonym is not None:
            return Match(synonym, "synonym")
        return None

    def match_all(self, texts: Sequence[str], kinds: Sequence[str | None] | None = None) -> list[Match | str]:
        """A :class:`Match` or the reason of failure for every text; the embedding stage runs once, batched.

        ``kinds`` (the project CSV's ``kind`` column; ``None``: free text) fixes how a text parses; a
        ``formula``, ``linear`` or ``clustered`` text that names an unknown concept is not embedded (its reason
        names the concepts)."""
        kinds = list(kinds) if kinds is not None else [None] * len(texts)
        results: list[Match | str] = [self.match_symbolic(text, kind) for text, kind in zip(texts, kinds, strict=True)]
        for position, (text, kind) in enumerate(zip(texts, kinds, strict=True)):
            if results[position] is None and kind in STRUCTURED_KINDS:
                results[position] = f"{text!r} {self.resolve(text, kind)}"
        pending = [position for position, result in enumerate(results) if result is None]
        if not pending:
            return results
        if self._embedder is None:
            for position in pending:
                results[position] = (f"no concept matches {texts[position]!r} (no concept name, formula or synonym; "
                                     f"no embedding model given)")
            return results
        similarity = self._similarities([texts[position] for position in pending])
        threshold = self.mapping.threshold
        for row, position in enumerate(pending):
            best = int(np.argmax(similarity[row]))
            value = float(similarity[row, best])
            name = self.concept_names[best]
            if value >= threshold:
                results[position] = Match(Concept(name), "embedding", value)
            else:
                results[position] = (f"no concept matches {texts[position]!r} "
                                     f"(best: {name} {value:.2f} < {threshold:g})")
        return results

    def _similarities(self, texts: list[str]) -> np.ndarray:
        """Cosine similarity of each text's embedding to each concept name's embedding, shape (texts, concepts)."""
        if self._concept_vectors is None:
            self._concept_vectors = _unit_rows(self._embed([normalise_name(name) for name in self.concept_names]))
        return _unit_rows(self._embed(texts)) @ self._concept_vectors.T

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._embedder(list(texts)), dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"the embedder returned shape {vectors.shape} for {len(texts)} texts; expected (n, d)")
        return vectors


def _unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms > 0, norms, 1.0)
