"""The generative grammar of the embedded text world: lexicon, topics, sentence templates, one document.

The language has a closed class of English function words and four open classes of pseudo-words (nouns,
verbs ending in ``-s``, adjectives, adverbs ending in ``-ly``). Each topic ranks every open-class word anew —
the shared global rank plus log-normal noise — and draws words from a Zipf law over its own ranking, so every
topic is Zipfian, topics prefer measurably different words, and the corpus as a whole keeps a Zipfian
rank-frequency curve. Sentences follow a few templates (``the <adj> <noun> <verb>s the <noun> .``), one topic
per sentence drawn from the document's Dirichlet topic mixture; a document also repeats a few key nouns of
its main topic (burstiness). A next-token model can therefore beat unigram frequency three ways: syntax
(which word class comes next), topic (which words of that class), and copying (which nouns this document
already used).

Everything here works in *lexicon ids* (positions in :attr:`Grammar.lexicon`); the world maps them to the
vocabulary of its tokenizer.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

EOS = "<eos>"
UNK = "<unk>"
FUNCTION_WORDS = ("the", "a", "of", "and", "it", "that", "is", "in", "on", "with", "to", "from", ".", ",")
PREPOSITIONS = ("in", "on", "with", "to", "from")
P_THE = 0.7  # a determiner slot is "the" with this probability, else "a"

# Open word classes: template slot, share of the content vocabulary, suffix(es) of the pseudo-words.
WORD_CLASSES = (
    ("NOUN", 0.45, ("",)),
    ("VERB", 0.20, ("s",)),
    ("ADJ", 0.25, ("ic", "al", "ous", "y")),
    ("ADV", 0.10, ("ly",)),
)
# Sentence templates and their relative frequencies; upper-case entries are slots, the rest literal words.
TEMPLATES = (
    ("DET ADJ NOUN VERB DET NOUN .", 3.0),
    ("DET NOUN VERB ADV .", 2.0),
    ("DET NOUN of DET NOUN VERB DET ADJ NOUN .", 2.0),
    ("DET NOUN and DET NOUN VERB PREP DET NOUN .", 2.0),
    ("it VERB DET ADJ NOUN , and DET NOUN VERB .", 1.0),
    ("DET ADJ NOUN VERB that DET NOUN VERB ADV .", 1.0),
    ("ADV , DET NOUN VERB PREP DET ADJ NOUN .", 1.0),
    ("DET NOUN is ADJ .", 2.0),
)
N_KEY_NOUNS = 4  # nouns a document keeps coming back to (burstiness)

_CONSONANTS = tuple("bdfgklmnprstvz")
_VOWELS = tuple("aeiou")
_PAD = np.iinfo(np.int32).min
_SLOT_CODES = {"DET": -1, "PREP": -2, "NOUN": -3, "VERB": -4, "ADJ": -5, "ADV": -6}


@dataclass(frozen=True)
class Grammar:
    """Lexicon, per-topic word distributions and templates of one text world (see the module docstring).

    Attributes
    ----------
    lexicon
        Every word type the generator can emit: ``<eos>`` (id 0), the function words, then the open classes in
        :data:`WORD_CLASSES` order, each in global-rank order (its most common word first).
    word_class
        Class name of each lexicon entry (``"EOS"``, ``"FUNCTION"``, ``"NOUN"``, ...).
    class_offsets, class_sizes
        ``{slot: first lexicon id}`` and ``{slot: number of words}`` of each open class.
    stacked_cdfs
        ``{slot: (n_topics, size) float64}`` cumulative word distribution of each topic plus the topic index
        (row ``k`` runs from ``k`` to ``k + 1``), so draws for many topics take one ``searchsorted``.
    template_slots
        (n_templates, max_length) int32: lexicon ids of literal words, negative slot codes, padding.
    template_lengths, template_cdf
        Words per template and the cumulative template distribution.
    """

    lexicon: tuple[str, ...]
    word_class: tuple[str, ...]
    class_offsets: dict[str, int]
    class_sizes: dict[str, int]
    stacked_cdfs: dict[str, np.ndarray]
    template_slots: np.ndarray
    template_lengths: np.ndarray
    template_cdf: np.ndarray

    @property
    def n_topics(self) -> int:
        return next(iter(self.stacked_cdfs.values())).shape[0]

    @property
    def mean_sentence_length(self) -> float:
        weights = np.diff(np.concatenate([[0.0], self.template_cdf]))
        return float(weights @ self.template_lengths)


def _pseudo_words(rng: np.random.Generator, count: int, suffixes: tuple[str, ...], taken: set[str]) -> list[str]:
    """``count`` new distinct pronounceable words (1–3 consonant-vowel syllables, maybe a final consonant)."""
    words: list[str] = []
    while len(words) < count:
        n_syllables = int(rng.choice([1, 2, 3], p=[0.15, 0.55, 0.30]))
        stem = "".join(_CONSONANTS[rng.integers(len(_CONSONANTS))] + _VOWELS[rng.integers(len(_VOWELS))]
                       for _ in range(n_syllables))
        if rng.random() < 0.3:
            stem += _CONSONANTS[rng.integers(len(_CONSONANTS))]
        word = stem + suffixes[rng.integers(len(suffixes))]
        if word not in taken:
            taken.add(word)
            words.append(word)
    return words


def _class_sizes(vocab_size: int) -> dict[str, int]:
    sizes = {slot: max(1, round(share * vocab_size)) for slot, share, _ in WORD_CLASSES}
    sizes["NOUN"] += vocab_size - sum(sizes.values())
    return sizes


def _topic_cdfs(rng: np.random.Generator, size: int, n_topics: int, zipf_exponent: float,
                topic_spread: float) -> np.ndarray:
    """Stacked (n_topics, size) cumulative Zipf laws, each over a noisy re-ranking of the global ranking."""
    log_rank = np.log1p(np.arange(size, dtype=np.float64))
    scores = log_rank[None, :] + topic_spread * rng.standard_normal((n_topics, size))
    topic_rank = np.argsort(np.argsort(scores, axis=1, kind="stable"), axis=1, kind="stable")
    weights = (topic_rank + 1.0) ** -zipf_exponent
    cdf = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    cdf[:, -1] = 1.0
    return cdf + np.arange(n_topics)[:, None]


@functools.lru_cache(maxsize=8)
def build_grammar(*, seed: int, vocab_size: int, n_topics: int, zipf_exponent: float,
                  topic_spread: float) -> Grammar:
    """The grammar of a text world; a pure function of its arguments (cached, treat as read-only).

    ``vocab_size`` counts the open-class words (nouns 45 %, verbs 20 %, adjectives 25 %, adverbs 10 %).
    """
    if vocab_size < len(WORD_CLASSES):
        raise ValueError(f"vocab_size must be >= {len(WORD_CLASSES)}, got {vocab_size}")
    lexicon_rng = np.random.default_rng([seed, 0x1E71C0])
    topic_rng = np.random.default_rng([seed, 0x70B1C5])
    lexicon = [EOS, *FUNCTION_WORDS]
    word_class = ["EOS"] + ["FUNCTION"] * len(FUNCTION_WORDS)
    taken = set(lexicon)
    offsets, sizes, cdfs = {}, _class_sizes(vocab_size), {}
    for slot, _, suffixes in WORD_CLASSES:
        offsets[slot] = len(lexicon)
        lexicon.extend(_pseudo_words(lexicon_rng, sizes[slot], suffixes, taken))
        word_class.extend([slot] * sizes[slot])
        cdfs[slot] = _topic_cdfs(topic_rng, sizes[slot], n_topics, zipf_exponent, topic_spread)

    lexicon_id = {word: index for index, word in enumerate(lexicon)}
    parsed = [[_SLOT_CODES.get(token, lexicon_id.get(token)) for token in text.split()] for text, _ in TEMPLATES]
    lengths = np.array([len(tokens) for tokens in parsed], dtype=np.int64)
    slots = np.full((len(parsed), lengths.max()), _PAD, dtype=np.int32)
    for row, tokens in enumerate(parsed):
        slots[row, : len(tokens)] = tokens
    weights = np.array([weight for _, weight in TEMPLATES])
    template_cdf = np.cumsum(weights / weights.sum())
    template_cdf[-1] = 1.0
    return Grammar(tuple(lexicon), tuple(word_class), offsets, sizes, cdfs, slots, lengths, template_cdf)


def _inverse_cdf(stacked_cdf: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Column drawn from row ``rows[i]`` of a stacked (R, V) cumulative table with ``uniforms[i]`` in [0, 1).

    ``stacked_cdf`` is ``cdf + arange(R)[:, None]``, so one ``searchsorted`` serves every row at once.
    """
    n_columns = stacked_cdf.shape[1]
    flat = np.searchsorted(stacked_cdf.ravel(), rows + uniforms, side="right")
    return np.clip(flat - rows * n_columns, 0, n_columns - 1)


def sample_documents(grammar: Grammar, rngs: Sequence[np.random.Generator], *, doc_length: float,
                     topic_concentration: float, burstiness: float) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                             np.ndarray]:
    """Draw one document from each generator of ``rngs``.

    Returns the lexicon ids of all documents concatenated (int32, each ending in ``<eos>``), the topic of each
    word (int16; ``<eos>`` gets the document's main topic), the document lengths (int64) and the topic mixtures
    (D, n_topics). Each generator makes its draws in a fixed order (mixture, sentence count, templates,
    sentence topics, key nouns, two uniforms per word), so a document depends on its own generator only and
    the result is the same in any batching.
    """
    n_topics = grammar.n_topics
    expected_sentences = max(doc_length / grammar.mean_sentence_length - 1.0, 0.0)
    last_template = len(grammar.template_cdf) - 1
    mixtures = np.empty((len(rngs), n_topics))
    templates, sentence_topics, key_uniforms, main_topics, choices, repeats = [], [], [], [], [], []
    for doc, rng in enumerate(rngs):
        mixture = rng.dirichlet(np.full(n_topics, topic_concentration))
        mixtures[doc] = mixture
        n_sentences = 1 + int(rng.poisson(expected_sentences))
        doc_templates = np.minimum(np.searchsorted(grammar.template_cdf, rng.random(n_sentences), side="right"),
                                   last_template)
        topic_cdf = np.cumsum(mixture)
        sentence_topics.append(np.minimum(
            np.searchsorted(topic_cdf, rng.random(n_sentences) * topic_cdf[-1], side="right"), n_topics - 1))
        templates.append(doc_templates)
        key_uniforms.append(rng.random(N_KEY_NOUNS))
        main_topics.append(int(np.argmax(mixture)))
        choice, repeat = rng.random((2, int(grammar.template_lengths[doc_templates].sum())))
        choices.append(choice)
        repeats.append(repeat)

    main_topic = np.array(main_topics, dtype=np.int64)
    key_nouns = _inverse_cdf(grammar.stacked_cdfs["NOUN"], np.repeat(main_topic, N_KEY_NOUNS),
                             np.concatenate(key_uniforms)).reshape(len(rngs), N_KEY_NOUNS)
    sentence_templates = np.concatenate(templates)
    slots = grammar.template_slots[sentence_templates]
    words = slots[slots != _PAD]
    sentence_lengths = grammar.template_lengths[sentence_templates]
    topics = np.repeat(np.concatenate(sentence_topics), sentence_lengths)
    doc_lengths = np.array([choice.size for choice in choices], dtype=np.int64)
    doc_of_word = np.repeat(np.arange(len(rngs)), doc_lengths)
    choice, repeat = np.concatenate(choices), np.concatenate(repeats)

    determiners = words == _SLOT_CODES["DET"]
    words[determiners] = np.where(choice[determiners] < P_THE, grammar.lexicon.index("the"),
                                  grammar.lexicon.index("a"))
    prepositions = words == _SLOT_CODES["PREP"]
    preposition_ids = np.array([grammar.lexicon.index(word) for word in PREPOSITIONS], dtype=np.int32)
    words[prepositions] = preposition_ids[(choice[prepositions] * len(PREPOSITIONS)).astype(np.int64)]
    for slot, _, _ in WORD_CLASSES:
        positions = np.flatnonzero(words == _SLOT_CODES[slot])
        drawn = _inverse_cdf(grammar.stacked_cdfs[slot], topics[positions], choice[positions])
        if slot == "NOUN":
            bursty = positions[repeat[positions] < burstiness]
            key_index = np.minimum((repeat[bursty] / burstiness * N_KEY_NOUNS).astype(np.int64), N_KEY_NOUNS - 1)
            drawn[repeat[positions] < burstiness] = key_nouns[doc_of_word[bursty], key_index]
        words[positions] = grammar.class_offsets[slot] + drawn

    ends = np.cumsum(doc_lengths)
    words = np.insert(words, ends, 0).astype(np.int32)
    topics = np.insert(topics, ends, main_topic).astype(np.int16)
    return words, topics, doc_lengths + 1, mixtures
