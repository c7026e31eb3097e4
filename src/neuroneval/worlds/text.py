"""The embedded text world: a generated corpus with topics, a Zipfian vocabulary and simple syntax.

It stands in for the OpenWebText subset of paper 000 (settings 7–10, App. F): language models trained on the
``train`` split predict the next token of the ``probe`` split, and their final-layer units for the most common
tokens are explained by the one-hot of the actual next token. :mod:`~neuroneval.worlds.text_grammar` says how
a document is generated; this module tokenizes, stores and reloads the corpus.

Determinism: document ``i`` of split ``s`` draws all its randomness from
``np.random.default_rng([seed, crc32(s), i])``, so a world is a pure function of its parameters and seed, and
documents built alone (``start_index``) or in any chunking are identical. The grammar (lexicon, topics)
depends on ``seed`` and the vocabulary knobs only, so every split speaks the same language.

The tokenizer is word-level: its vocabulary is ``<eos>`` (id 0), ``<unk>`` (id 1), then every word seen at least
``min_count`` times in the training split, most frequent first (ties alphabetical). Documents are
concatenated, each ending in ``<eos>``, as GPT-2 concatenates texts with ``<|endoftext|>``.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from neuroneval import io
from neuroneval.options import Options, check_range
from neuroneval.progress import progress_bar
from neuroneval.worlds.splits import check_splits
from neuroneval.worlds.text_grammar import EOS, N_KEY_NOUNS, UNK, build_grammar, sample_documents, word_distribution

SPLIT_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
EOS_ID = 0
UNK_ID = 1
PROGRESS_MIN_DOCUMENTS = 5_000
CHUNK_DOCUMENTS = 512  # documents sampled per vectorised batch (memory only; the output does not depend on it)
# Default number of documents per split: train ≈ 515k tokens (an epoch of the tiny LMs in 15–30 CPU seconds), probe
# ≈ 260k tokens (paper 000 used 204,800), where each of the 500 most common tokens occurs ≥ 40 times.
DEFAULT_DOCUMENTS = {"train": 4_000, "probe": 2_000}
_ARRAYS = ("token_ids", "doc_offsets", "topic_of_doc", "topic_mixture", "topic_of_token", "lexicon_ids",
           "slot_of_token", "previous_word", "key_nouns")
_GRAMMAR_KNOBS = ("vocab_size", "n_topics", "zipf_exponent", "topic_spread", "collocation_strength", "n_successors")


class WordTokenizer:
    """Whitespace word-level tokenizer over a fixed vocabulary (unknown words map to ``<unk>``).

    Examples
    --------
    >>> tokenizer = WordTokenizer(["<eos>", "<unk>", "the", "."])
    >>> tokenizer.encode("the cat .").tolist()
    [2, 1, 3]
    >>> tokenizer.decode([2, 3, 0])
    'the . <eos>'
    """

    def __init__(self, vocabulary: Sequence[str]) -> None:
        vocabulary = list(vocabulary)
        if vocabulary[:2] != [EOS, UNK]:
            raise ValueError(f"a vocabulary starts with {[EOS, UNK]}, got {vocabulary[:2]}")
        if len(set(vocabulary)) != len(vocabulary):
            raise ValueError("vocabulary entries must be distinct")
        bad = [word for word in vocabulary if not word or any(character.isspace() for character in word)]
        if bad:
            raise ValueError(f"vocabulary words must be non-empty without whitespace, got {bad[:3]!r}")
        self.vocabulary = vocabulary
        self.token_id = {word: index for index, word in enumerate(vocabulary)}

    def __len__(self) -> int:
        return len(self.vocabulary)

    def encode(self, text: str | Sequence[str]) -> np.ndarray:
        """int32 ids of the whitespace-separated words of ``text`` (or of a list of words)."""
        words = text.split() if isinstance(text, str) else text
        return np.array([self.token_id.get(word, UNK_ID) for word in words], dtype=np.int32)

    def decode(self, token_ids: Sequence[int] | np.ndarray) -> str:
        """The words of ``token_ids`` joined by single spaces (``decode(encode(t)) == t`` for in-vocabulary text)."""
        ids = np.asarray(token_ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.vocabulary)):
            raise ValueError(f"token ids must lie in [0, {len(self.vocabulary)}), got {ids.min()}..{ids.max()}")
        return " ".join(self.vocabulary[index] for index in ids.tolist())


@dataclass(frozen=True)
class TextWorld:
    """One split of the embedded text world.

    Attributes
    ----------
    token_ids
        (N,) int32 token ids of all documents concatenated; each document ends with ``<eos>`` (id 0).
    doc_offsets
        (D + 1,) int64: document ``d`` is ``token_ids[doc_offsets[d] : doc_offsets[d + 1]]``.
    vocabulary
        Token strings by id: ``<eos>``, ``<unk>``, then the training-split words, most frequent first.
    topic_of_doc
        (D,) int64 main topic (largest mixture weight) of each document.
    topic_mixture
        (D, n_topics) float32 topic mixture each document was drawn from.
    topic_of_token
        (N,) int16 topic of the sentence each token belongs to (``<eos>``: the document's main topic).
    lexicon_ids, slot_of_token, previous_word, key_nouns
        The latent state behind each token (:class:`~neuroneval.worlds.text_grammar.SampledDocuments`): its
        grammar word id, the slot it filled, the previous content word of its sentence (grammar id, -1 for
        none) and each document's key nouns ``(D, 4)``; :func:`ideal_next_token_probabilities` reads them.
    params
        The parameters the world was built from (keyword arguments of :func:`build_text_world`).
    """

    token_ids: np.ndarray
    doc_offsets: np.ndarray
    vocabulary: list[str]
    topic_of_doc: np.ndarray
    topic_mixture: np.ndarray
    topic_of_token: np.ndarray
    lexicon_ids: np.ndarray
    slot_of_token: np.ndarray
    previous_word: np.ndarray
    key_nouns: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return int(self.token_ids.size)

    @property
    def n_documents(self) -> int:
        return int(self.doc_offsets.size - 1)

    @property
    def tokenizer(self) -> WordTokenizer:
        return WordTokenizer(self.vocabulary)

    def document(self, index: int) -> np.ndarray:
        """Token ids of document ``index`` (counted from the first document of this world)."""
        return self.token_ids[self.doc_offsets[index] : self.doc_offsets[index + 1]]

    def text(self, index: int) -> str:
        """Document ``index`` as text."""
        return self.tokenizer.decode(self.document(index))


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _check_float(name: str, value: Any, minimum: float, *, strict: bool = False, maximum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name} must be a number, got {value!r}")
    too_small = value <= minimum if strict else value < minimum
    if not np.isfinite(value) or too_small or (maximum is not None and value > maximum):
        bounds = f"{'>' if strict else '>='} {minimum}" + ("" if maximum is None else f" and <= {maximum}")
        raise ValueError(f"{name} must be {bounds}, got {value}")
    return float(value)


def split_code(split: str) -> int:
    """The integer that keys a split's random streams (CRC-32 of its name)."""
    if not isinstance(split, str) or not SPLIT_PATTERN.fullmatch(split):
        raise ValueError(
            f"split must be a non-empty string of letters, digits, '_' or '-' (e.g. 'train'), got {split!r}")
    return zlib.crc32(split.encode())


def vocabulary_from_counts(words: Sequence[str], counts: np.ndarray, *, min_count: int = 1) -> list[str]:
    """``<eos>``, ``<unk>``, then ``words`` counted at least ``min_count`` times, most frequent first (ties by word)."""
    kept = [(-int(count), word) for word, count in zip(words, counts, strict=True)
            if count >= min_count and word not in (EOS, UNK)]
    return [EOS, UNK, *(word for _, word in sorted(kept))]


@dataclass(frozen=True)
class TextWorldOptions(Options):
    """The ``world.text`` block of params.yaml: the world's ``seed``, its generation knobs (the keyword parameters
    of :func:`build_text_world`, same names and defaults) and ``splits`` (documents per split name).

    Parsed once by the workflow step and handed to :func:`build_text_world_split`; the builder checks each knob
    and names the one out of range (one home for those checks), these options check the seed and the splits.
    """

    seed: int = 0
    vocab_size: int = 4000
    n_topics: int = 8
    zipf_exponent: float = 1.0
    doc_length: float = 128.0
    topic_concentration: float = 0.1
    topic_spread: float = 1.5
    burstiness: float = 0.2
    collocation_strength: float = 0.0
    n_successors: int = 2
    min_count: int = 1
    splits: Mapping[str, int] = field(default_factory=dict)

    def validate(self) -> None:
        check_range(self, "seed", 0, integer=True)
        check_splits(self, "splits")


def build_text_world_split(options: TextWorldOptions, split: str, n_documents: int, *,
                           vocabulary: Sequence[str] | None = None, progress: bool | None = None) -> TextWorld:
    """Split ``split`` (``n_documents`` documents) of the world that ``options`` describe: :func:`build_text_world`
    with every knob of the options (``vocabulary``: the train split's, for the other splits)."""
    return build_text_world(
        n_documents, seed=options.seed, split=split, vocabulary=vocabulary, vocab_size=options.vocab_size,
        n_topics=options.n_topics, zipf_exponent=options.zipf_exponent, doc_length=options.doc_length,
        topic_concentration=options.topic_concentration, topic_spread=options.topic_spread,
        burstiness=options.burstiness, collocation_strength=options.collocation_strength,
        n_successors=options.n_successors, min_count=options.min_count, progress=progress)


def build_text_world(
    n_documents: int,
    *,
    seed: int,
    split: str,
    vocabulary: Sequence[str] | None = None,
    vocab_size: int = 4000,
    n_topics: int = 8,
    zipf_exponent: float = 1.0,
    doc_length: float = 128.0,
    topic_concentration: float = 0.1,
    topic_spread: float = 1.5,
    burstiness: float = 0.2,
    collocation_strength: float = 0.0,
    n_successors: int = 2,
    min_count: int = 1,
    start_index: int = 0,
    progress: bool | None = None,
) -> TextWorld:
    """Generate and tokenize one split of the embedded text world.

    Parameters
    ----------
    n_documents
        Number of documents (>= 1); their indices are ``start_index .. start_index + n_documents - 1``.
        :data:`DEFAULT_DOCUMENTS` gives the workflow's sizes (train 4,000 ≈ 515k tokens, probe 2,000 ≈ 260k).
    seed
        World seed (>= 0); with ``split`` and the document index it determines each document.
    split
        Split name (``"train"``, ``"probe"``, any ``[A-Za-z0-9_-]+``); different names give independent documents.
    vocabulary
        Tokenizer vocabulary, normally the ``vocabulary`` of the train world. ``None`` builds it from this
        split's own words, which only the ``"train"`` split may do.
    vocab_size
        Open-class word types of the language (nouns, verbs, adjectives, adverbs; default 4000); 14 function
        words, ``<eos>`` and ``<unk>`` come on top.
    n_topics
        Number of topics (default 8).
    zipf_exponent
        Exponent ``s`` of every topic's Zipf law ``p(rank) ∝ rank^-s`` within a word class (default 1.0; the
        corpus rank-frequency slope follows it).
    doc_length
        Mean words per document (default 128); documents hold ``1 + Poisson`` whole sentences.
    topic_concentration
        Dirichlet concentration of the document topic mixtures (default 0.1: most documents keep to one or
        two topics; large values mix all topics evenly).
    topic_spread
        Standard deviation of the log-rank noise that re-ranks the words of each topic (default 1.5; 0 gives
        every topic the same distribution).
    burstiness
        Probability that a noun slot repeats one of the document's four key nouns (default 0.2).
    collocation_strength
        Probability that a content slot takes one of the previous content word's preferred successors
        (default 0: topics only; the workflow's params use 0.8, so that each word has contexts that predict it).
    n_successors
        Preferred successors of each content word per word class (default 2).
    min_count
        Training-split count a word needs to enter a vocabulary built here (default 1).
    start_index
        Index of the first document (default 0); building ``[a, b)`` alone equals documents ``a..b`` of a larger
        world, so large splits can be built in chunks.
    progress
        Show a tqdm progress bar (default ``None``: when ``n_documents >= 5000``).

    Returns
    -------
    TextWorld
        Concatenated token ids, document offsets, vocabulary and the topics behind the text.

    Raises
    ------
    ValueError
        A parameter is out of range or of the wrong kind (the message names it), or ``vocabulary`` is
        missing for a split other than ``"train"``.

    Examples
    --------
    >>> world = build_text_world(4, seed=0, split="train", vocab_size=200, doc_length=20)
    >>> world.vocabulary[:4]
    ['<eos>', '<unk>', 'the', '.']
    >>> int(world.token_ids[world.doc_offsets[1] - 1])
    0
    """
    n_documents = _check_int("n_documents", n_documents, 1)
    seed = _check_int("seed", seed, 0)
    code = split_code(split)
    knobs: dict[str, Any] = {
        "vocab_size": _check_int("vocab_size", vocab_size, 4),
        "n_topics": _check_int("n_topics", n_topics, 1),
        "zipf_exponent": _check_float("zipf_exponent", zipf_exponent, 0.0, strict=True),
        "doc_length": _check_float("doc_length", doc_length, 1.0),
        "topic_concentration": _check_float("topic_concentration", topic_concentration, 0.0, strict=True),
        "topic_spread": _check_float("topic_spread", topic_spread, 0.0),
        "burstiness": _check_float("burstiness", burstiness, 0.0, maximum=1.0),
        "collocation_strength": _check_float("collocation_strength", collocation_strength, 0.0, maximum=1.0),
        "n_successors": _check_int("n_successors", n_successors, 1),
    }
    min_count = _check_int("min_count", min_count, 1)
    start_index = _check_int("start_index", start_index, 0)
    if vocabulary is None and split != "train":
        raise ValueError(f"split {split!r} needs the train world's vocabulary (pass vocabulary=train.vocabulary); "
                         "only the 'train' split builds its own")
    tokenizer = None if vocabulary is None else WordTokenizer(vocabulary)
    grammar = build_grammar(seed=seed, **{name: knobs[name] for name in _GRAMMAR_KNOBS})

    chunks = []
    show = n_documents >= PROGRESS_MIN_DOCUMENTS if progress is None else progress
    with progress_bar(total=n_documents, enabled=show, desc=f"text world {split}", unit="doc") as bar:
        for first in range(start_index, start_index + n_documents, CHUNK_DOCUMENTS):
            indices = range(first, min(first + CHUNK_DOCUMENTS, start_index + n_documents))
            chunk = sample_documents(
                grammar, [np.random.default_rng([seed, code, index]) for index in indices],
                doc_length=knobs["doc_length"], topic_concentration=knobs["topic_concentration"],
                burstiness=knobs["burstiness"])
            chunks.append(chunk)
            bar.update(len(indices))
    lexicon_ids = np.concatenate([chunk.words for chunk in chunks])

    if tokenizer is None:
        counts = np.bincount(lexicon_ids, minlength=len(grammar.lexicon))
        tokenizer = WordTokenizer(vocabulary_from_counts(grammar.lexicon, counts, min_count=min_count))
    to_token = np.array([tokenizer.token_id.get(word, UNK_ID) for word in grammar.lexicon], dtype=np.int32)
    topic_mixture = np.concatenate([chunk.mixtures for chunk in chunks]).astype(np.float32)
    return TextWorld(
        token_ids=to_token[lexicon_ids],
        doc_offsets=np.concatenate([[0], np.cumsum(np.concatenate([chunk.doc_lengths for chunk in chunks]))]
                                   ).astype(np.int64),
        vocabulary=list(tokenizer.vocabulary),
        topic_of_doc=np.argmax(topic_mixture, axis=1).astype(np.int64),
        topic_mixture=topic_mixture,
        topic_of_token=np.concatenate([chunk.topics for chunk in chunks]),
        lexicon_ids=lexicon_ids,
        slot_of_token=np.concatenate([chunk.slots for chunk in chunks]),
        previous_word=np.concatenate([chunk.previous for chunk in chunks]),
        key_nouns=np.concatenate([chunk.key_nouns for chunk in chunks]).reshape(-1, N_KEY_NOUNS),
        params={"n_documents": n_documents, "seed": seed, "split": split, "start_index": start_index,
                "min_count": min_count, **knobs},
    )


def next_token_names(token_ids: np.ndarray, vocabulary: Sequence[str], positions: np.ndarray, *,
                     prefix: str = "next:") -> list[str]:
    """``<prefix><word>`` of the token after each position ``i`` (token ``i + 1``, the position's label): the concept
    a position is positive for, named as :func:`neuroneval.activations.lm.next_token_concepts` names it
    (``CONCEPT_PREFIX``), also for words that are not units."""
    tokens = np.asarray(token_ids, dtype=np.int64)
    positions = np.asarray(positions, dtype=np.int64)
    if positions.size and (positions.min() < 0 or positions.max() + 1 >= tokens.size):
        raise ValueError(f"positions must lie in 0 .. {tokens.size - 2} (each needs a next token)")
    return [f"{prefix}{vocabulary[index]}" for index in tokens[positions + 1].tolist()]


def ideal_next_token_probabilities(world: TextWorld, positions: np.ndarray, token_ids: np.ndarray) -> np.ndarray:
    """The world's ideal next-token units: ``P(token[p + 1] = token_ids[j] | latent state)`` at ``positions``.

    ``(len(positions), len(token_ids))`` float32, from the grammar's exact word distribution
    (:func:`~neuroneval.worlds.text_grammar.word_distribution`) given everything the generator had drawn before
    the next word (its template slot, topic, previous content word, key nouns). No model of the text can
    predict the next token better on average, so these units score the *setting*, not a model: they are the
    ceiling of the next-token settings (``results/ceiling.csv``). A token id outside the grammar's lexicon
    (``<unk>``) gets probability 0.
    """
    positions = np.asarray(positions, dtype=np.int64)
    if positions.ndim != 1 or (positions.size and (positions.min() < 0 or positions.max() >= world.n_tokens - 1)):
        raise ValueError(f"positions must lie in [0, {world.n_tokens - 1})")
    params = world.params
    grammar = build_grammar(seed=params["seed"], **{name: params[name] for name in _GRAMMAR_KNOBS})
    lexicon_id = {word: index for index, word in enumerate(grammar.lexicon)}
    columns = np.array([lexicon_id.get(world.vocabulary[token], -1) for token in np.asarray(token_ids)], dtype=np.int64)
    following = positions + 1
    doc_of_token = np.searchsorted(world.doc_offsets, following, side="right") - 1
    return word_distribution(grammar, words=world.lexicon_ids[following], slots=world.slot_of_token[following],
                             topics=world.topic_of_token[following], previous=world.previous_word[following],
                             key_nouns=world.key_nouns[doc_of_token], columns=columns,
                             burstiness=params["burstiness"])


def _save_array(path: Path, array: np.ndarray) -> None:
    with io.atomic_path(path) as tmp_path, open(tmp_path, "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def save_text_world(world: TextWorld, directory: str | Path) -> None:
    """Write a world into ``directory`` (created if needed), each file atomically.

    Files: one ``<array>.npy`` per array of :class:`TextWorld` (token ids, offsets, topics, latent state)
    and, last, ``world.json`` (vocabulary and build parameters).
    """
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    for name in _ARRAYS:
        _save_array(target / f"{name}.npy", getattr(world, name))
    io.write_json(target / "world.json", {"vocabulary": world.vocabulary, "params": world.params,
                                          "n_tokens": world.n_tokens, "n_documents": world.n_documents})


def load_text_world(directory: str | Path) -> TextWorld:
    """Read a world written by :func:`save_text_world`; raises ``FileNotFoundError`` naming a missing file."""
    source = Path(directory)
    for name in (*(f"{array}.npy" for array in _ARRAYS), "world.json"):
        if not (source / name).exists():
            raise FileNotFoundError(f"{source}: text world file {name} is missing")
    header = json.loads((source / "world.json").read_text())
    arrays = {name: np.load(source / f"{name}.npy", allow_pickle=False) for name in _ARRAYS}
    if arrays["token_ids"].size != header["n_tokens"] or arrays["doc_offsets"][-1] != header["n_tokens"]:
        raise ValueError(f"{source}: token_ids.npy holds {arrays['token_ids'].size} tokens, world.json says "
                         f"{header['n_tokens']}")
    return TextWorld(vocabulary=list(header["vocabulary"]), params=dict(header["params"]), **arrays)
