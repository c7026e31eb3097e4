"""The generative grammar of the embedded text world: lexicon, topics, sentence templates, one document.

The language has a closed class of English function words and four open classes of pseudo-words (nouns,
verbs ending in ``-s``, adjectives, adverbs ending in ``-ly``). Each topic ranks every open-class word anew —
the shared global rank plus log-normal noise — and draws words from a Zipf law over its own ranking, so every
topic is Zipfian, topics prefer measurably different words, and the corpus as a whole keeps a Zipfian
rank-frequency curve. Sentences follow a few templates (``the <adj> <noun> <verb>s the <noun> .``), one topic
per sentence drawn from the document's Dirichlet topic mixture; a document also repeats a few key nouns of
its main topic (burstiness). Content words also come in collocations: every content word ``u`` has
``n_successors`` preferred words of each open class (with Dirichlet weights), and a content slot whose
previous content word in the sentence is ``u`` takes one of them with probability ``collocation_strength``
(as "prime" predicts "minister"), else a word of its topic's Zipf law. A next-token model can therefore
beat unigram frequency four ways: syntax (which word class comes next), collocation (which word of that
class follows this word), topic (which words of that class), and copying (which nouns this document
already used). Collocations are what make each word's own next-token probability point at that word: with
topics alone, ``P(next = w | context)`` has the same shape for every word of a topic (the identifiability
problem of the first version of this world, measured by ``results/ceiling.csv``).

Every word also records its *generative distribution* — the template slot it filled, its topic, the
previous content word of its sentence and the document's key nouns — so :func:`word_distribution` gives
``P(word | latent state)`` exactly: the ideal next-token units that bound what any model can reach.

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
#: Codes of :attr:`SampledDocuments.slots`: what filled a word's place (a literal of the template, or a slot).
SLOT_LITERAL = 0
SLOT_INDEX = {"DET": 1, "PREP": 2, "NOUN": 3, "VERB": 4, "ADJ": 5, "ADV": 6}
NO_PREVIOUS = -1  # previous content word of the first content slot of a sentence
SUCCESSOR_CONCENTRATION = 1.0  # Dirichlet concentration of each word's successor weights


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
    successors, successor_cdf
        ``(n_lexicon, n_open_classes, n_successors)``: class-relative ids of the preferred successors of each
        content word in each open class (:data:`WORD_CLASSES` order) and their cumulative weights (rows of
        non-content words are unused).
    collocation_strength
        Probability that a content slot with a previous content word takes one of that word's successors.
    """

    lexicon: tuple[str, ...]
    word_class: tuple[str, ...]
    class_offsets: dict[str, int]
    class_sizes: dict[str, int]
    stacked_cdfs: dict[str, np.ndarray]
    template_slots: np.ndarray
    template_lengths: np.ndarray
    template_cdf: np.ndarray
    successors: np.ndarray
    successor_cdf: np.ndarray
    collocation_strength: float

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


def _successor_tables(rng: np.random.Generator, n_lexicon: int, sizes: dict[str, int], zipf_exponent: float,
                      n_successors: int) -> tuple[np.ndarray, np.ndarray]:
    """Preferred successors of every lexicon entry in every open class, drawn from the class's global Zipf law.

    Successors are distinct within a (word, class) cell where the class has enough words; their weights are
    Dirichlet(:data:`SUCCESSOR_CONCENTRATION`). Returns class-relative ids and cumulative weights, both
    ``(n_lexicon, n_classes, n_successors)``.
    """
    ids = np.zeros((n_lexicon, len(WORD_CLASSES), n_successors), dtype=np.int32)
    for column, (slot, _, _) in enumerate(WORD_CLASSES):
        size = sizes[slot]
        keys = np.log(rng.random((n_lexicon, size))) / ((np.arange(size) + 1.0) ** -zipf_exponent)
        # Weighted sampling without replacement (Efraimidis-Spirakis): the largest keys u^(1/w) win.
        take = min(n_successors, size)
        ids[:, column, :take] = np.argsort(-keys, axis=1, kind="stable")[:, :take]
        ids[:, column, take:] = ids[:, column, :1]
    weights = rng.dirichlet(np.full(n_successors, SUCCESSOR_CONCENTRATION), size=(n_lexicon, len(WORD_CLASSES)))
    cdf = np.cumsum(weights, axis=2)
    cdf[..., -1] = 1.0
    return ids, cdf


@functools.lru_cache(maxsize=8)
def build_grammar(*, seed: int, vocab_size: int, n_topics: int, zipf_exponent: float,
                  topic_spread: float, collocation_strength: float = 0.0, n_successors: int = 2) -> Grammar:
    """The grammar of a text world; a pure function of its arguments (cached, treat as read-only).

    ``vocab_size`` counts the open-class words (nouns 45 %, verbs 20 %, adjectives 25 %, adverbs 10 %).
    ``collocation_strength`` (in [0, 1]) and ``n_successors`` (>= 1) set the collocations (module docstring);
    strength 0 gives the topic-only language.
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
    if not 0.0 <= collocation_strength <= 1.0:
        raise ValueError(f"collocation_strength must lie in [0, 1], got {collocation_strength}")
    if n_successors < 1:
        raise ValueError(f"n_successors must be >= 1, got {n_successors}")
    successors, successor_cdf = _successor_tables(np.random.default_rng([seed, 0xC0110C]), len(lexicon), sizes,
                                                  zipf_exponent, n_successors)
    return Grammar(tuple(lexicon), tuple(word_class), offsets, sizes, cdfs, slots, lengths, template_cdf,
                   successors, successor_cdf, float(collocation_strength))


def _inverse_cdf(stacked_cdf: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """Column drawn from row ``rows[i]`` of a stacked (R, V) cumulative table with ``uniforms[i]`` in [0, 1).

    ``stacked_cdf`` is ``cdf + arange(R)[:, None]``, so one ``searchsorted`` serves every row at once.
    """
    n_columns = stacked_cdf.shape[1]
    flat = np.searchsorted(stacked_cdf.ravel(), rows + uniforms, side="right")
    return np.clip(flat - rows * n_columns, 0, n_columns - 1)


@dataclass(frozen=True)
class SampledDocuments:
    """Documents drawn by :func:`sample_documents`, concatenated, with the latent state behind every word.

    Attributes
    ----------
    words
        (N,) int32 lexicon ids; each document ends with ``<eos>`` (id 0).
    topics
        (N,) int16 topic of each word's sentence (``<eos>``: the document's main topic).
    doc_lengths
        (D,) int64 words per document, ``<eos>`` included.
    mixtures
        (D, n_topics) float64 topic mixtures.
    slots
        (N,) int8 what filled each place: :data:`SLOT_LITERAL` (a literal of the template or ``<eos>``) or a
        :data:`SLOT_INDEX` code.
    previous
        (N,) int32 lexicon id of the previous content word in the same sentence (:data:`NO_PREVIOUS` if none).
    key_nouns
        (D, N_KEY_NOUNS) int32 lexicon ids of each document's key nouns.
    """

    words: np.ndarray
    topics: np.ndarray
    doc_lengths: np.ndarray
    mixtures: np.ndarray
    slots: np.ndarray
    previous: np.ndarray
    key_nouns: np.ndarray


def _draw_class_words(grammar: Grammar, slot: str, previous: np.ndarray, topics: np.ndarray,
                      choice: np.ndarray) -> np.ndarray:
    """Class-relative ids drawn for content slots of class ``slot``: a collocation of ``previous`` with
    probability ``collocation_strength`` (when there is a previous word), else the topic's Zipf law.

    One uniform per word decides both: ``choice < λ`` picks a successor by ``choice / λ``, the rest is
    rescaled to a Zipf draw, so a world with λ = 0 draws exactly as the topic-only language.
    """
    strength = grammar.collocation_strength
    has_previous = previous != NO_PREVIOUS
    collocate = has_previous & (choice < strength)
    scaled = np.where(has_previous & ~collocate, (choice - strength) / max(1.0 - strength, 1e-12), choice)
    drawn = _inverse_cdf(grammar.stacked_cdfs[slot], topics, np.clip(scaled, 0.0, np.nextafter(1.0, 0.0)))
    if collocate.any():
        column = [name for name, _, _ in WORD_CLASSES].index(slot)
        rows = previous[collocate]
        cdf = grammar.successor_cdf[rows, column]
        pick = np.minimum((cdf < (choice[collocate] / strength)[:, None]).sum(axis=1), cdf.shape[1] - 1)
        drawn[collocate] = grammar.successors[rows, column, pick]
    return drawn


def sample_documents(grammar: Grammar, rngs: Sequence[np.random.Generator], *, doc_length: float,
                     topic_concentration: float, burstiness: float) -> SampledDocuments:
    """Draw one document from each generator of ``rngs`` (see :class:`SampledDocuments` for what is returned).

    Each generator makes its draws in a fixed order (mixture, sentence count, templates, sentence topics, key
    nouns, two uniforms per word), so a document depends on its own generator only and the result is the same
    in any batching. Content slots are filled left to right within each sentence (all sentences at once),
    since a collocation depends on the previous content word.
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
    key_nouns = (key_nouns + grammar.class_offsets["NOUN"]).astype(np.int32)
    sentence_templates = np.concatenate(templates)
    slots = grammar.template_slots[sentence_templates]
    words = slots[slots != _PAD]
    sentence_lengths = grammar.template_lengths[sentence_templates]
    topics = np.repeat(np.concatenate(sentence_topics), sentence_lengths)
    doc_lengths = np.array([choice.size for choice in choices], dtype=np.int64)
    doc_of_word = np.repeat(np.arange(len(rngs)), doc_lengths)
    sentence_of_word = np.repeat(np.arange(sentence_templates.size), sentence_lengths)
    place = np.arange(words.size) - np.repeat(np.cumsum(sentence_lengths) - sentence_lengths, sentence_lengths)
    choice, repeat = np.concatenate(choices), np.concatenate(repeats)
    slot_codes = np.zeros(words.size, dtype=np.int8)
    for name, code in SLOT_INDEX.items():
        slot_codes[words == _SLOT_CODES[name]] = code

    determiners = words == _SLOT_CODES["DET"]
    words[determiners] = np.where(choice[determiners] < P_THE, grammar.lexicon.index("the"),
                                  grammar.lexicon.index("a"))
    prepositions = words == _SLOT_CODES["PREP"]
    preposition_ids = np.array([grammar.lexicon.index(word) for word in PREPOSITIONS], dtype=np.int32)
    words[prepositions] = preposition_ids[(choice[prepositions] * len(PREPOSITIONS)).astype(np.int64)]

    previous = np.full(words.size, NO_PREVIOUS, dtype=np.int32)
    last_content = np.full(sentence_templates.size, NO_PREVIOUS, dtype=np.int32)
    content_slot_codes = {_SLOT_CODES[slot]: slot for slot, _, _ in WORD_CLASSES}
    for position in range(int(sentence_lengths.max(initial=0))):
        at_position = np.flatnonzero(place == position)
        for code, slot in content_slot_codes.items():
            positions = at_position[words[at_position] == code]
            if positions.size == 0:
                continue
            sentences = sentence_of_word[positions]
            previous[positions] = last_content[sentences]
            drawn = _draw_class_words(grammar, slot, previous[positions], topics[positions], choice[positions])
            lexicon_ids = grammar.class_offsets[slot] + drawn
            if slot == "NOUN":
                bursty = repeat[positions] < burstiness
                key_index = np.minimum((repeat[positions[bursty]] / burstiness * N_KEY_NOUNS).astype(np.int64),
                                       N_KEY_NOUNS - 1)
                lexicon_ids[bursty] = key_nouns[doc_of_word[positions[bursty]], key_index]
            words[positions] = lexicon_ids
            last_content[sentences] = lexicon_ids

    ends = np.cumsum(doc_lengths)
    return SampledDocuments(
        words=np.insert(words, ends, 0).astype(np.int32),
        topics=np.insert(topics, ends, main_topic).astype(np.int16),
        doc_lengths=doc_lengths + 1,
        mixtures=mixtures,
        slots=np.insert(slot_codes, ends, SLOT_LITERAL).astype(np.int8),
        previous=np.insert(previous, ends, NO_PREVIOUS).astype(np.int32),
        key_nouns=key_nouns,
    )


def word_distribution(grammar: Grammar, *, words: np.ndarray, slots: np.ndarray, topics: np.ndarray,
                      previous: np.ndarray, key_nouns: np.ndarray, columns: np.ndarray,
                      burstiness: float) -> np.ndarray:
    """``P(word_i = columns[j] | latent state of word i)`` under the grammar: ``(len(words), len(columns))``.

    The latent state is everything the generator had drawn before the word itself: its template slot, the
    sentence topic, the previous content word of the sentence and the document's key nouns (``key_nouns``:
    ``(len(words), N_KEY_NOUNS)``, the key nouns of each word's document). For a content slot of class ``c``
    with topic ``t``, previous word ``u``, collocation strength ``λ`` (0 without ``u``) and noun burstiness
    ``β`` (0 for other classes)::

        P(w) = β · #{k : key_k = w} / N_KEY_NOUNS + (1 − β) · (λ · S_u,c(w) + (1 − λ) · Z_c,t(w))

    with ``S_u,c`` the successor weights of ``u`` and ``Z_c,t`` topic ``t``'s Zipf law; a determiner is "the"
    with :data:`P_THE`, else "a"; a preposition is uniform over :data:`PREPOSITIONS`; a literal is certain.
    ``columns`` are lexicon ids (``-1``: a column no word can take). Rows sum to 1 over all lexicon ids.
    """
    n_words = words.size
    columns = np.asarray(columns, dtype=np.int64)
    column_of = np.full(len(grammar.lexicon), -1, dtype=np.int64)
    valid = columns >= 0
    column_of[columns[valid]] = np.flatnonzero(valid)
    result = np.zeros((n_words, columns.size), dtype=np.float64)

    def add(rows: np.ndarray, lexicon_ids: np.ndarray, values: np.ndarray) -> None:
        targets = column_of[lexicon_ids]
        hit = targets >= 0
        np.add.at(result, (rows[hit], targets[hit]), values[hit])

    literal = np.flatnonzero(slots == SLOT_LITERAL)
    add(literal, words[literal].astype(np.int64), np.ones(literal.size))
    determiners = np.flatnonzero(slots == SLOT_INDEX["DET"])
    for word, probability in (("the", P_THE), ("a", 1.0 - P_THE)):
        add(determiners, np.full(determiners.size, grammar.lexicon.index(word)), np.full(determiners.size, probability))
    prepositions = np.flatnonzero(slots == SLOT_INDEX["PREP"])
    for word in PREPOSITIONS:
        add(prepositions, np.full(prepositions.size, grammar.lexicon.index(word)),
            np.full(prepositions.size, 1.0 / len(PREPOSITIONS)))
    for class_index, (slot, _, _) in enumerate(WORD_CLASSES):
        rows = np.flatnonzero(slots == SLOT_INDEX[slot])
        if rows.size == 0:
            continue
        offset, size = grammar.class_offsets[slot], grammar.class_sizes[slot]
        burst = burstiness if slot == "NOUN" else 0.0
        has_previous = previous[rows] != NO_PREVIOUS
        strength = np.where(has_previous, grammar.collocation_strength, 0.0)
        in_class = (columns >= offset) & (columns < offset + size)
        pmf = np.diff(grammar.stacked_cdfs[slot] - np.arange(grammar.n_topics)[:, None], axis=1, prepend=0.0)
        dense = np.zeros((grammar.n_topics, columns.size))
        dense[:, in_class] = pmf[:, columns[in_class] - offset]
        result[rows] += ((1.0 - burst) * (1.0 - strength))[:, None] * dense[topics[rows].astype(np.int64)]
        with_previous = rows[has_previous]
        if with_previous.size:
            weights = np.diff(grammar.successor_cdf[previous[with_previous], class_index], axis=1, prepend=0.0)
            successor_ids = offset + grammar.successors[previous[with_previous], class_index].astype(np.int64)
            scale = (1.0 - burst) * grammar.collocation_strength
            for column in range(successor_ids.shape[1]):
                add(with_previous, successor_ids[:, column], scale * weights[:, column])
        if burst > 0.0:
            for column in range(key_nouns.shape[1]):
                add(rows, key_nouns[rows, column].astype(np.int64), np.full(rows.size, burst / key_nouns.shape[1]))
    return result.astype(np.float32)
