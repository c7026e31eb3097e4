"""The text world's generative next-token distribution (ideal units) and the collocations that make it identifiable.

Oracles: the exact distribution must (1) sum to 1 over the lexicon at every position, (2) be calibrated —
summed over positions it predicts each word's count (law of large numbers, checked with a binomial bound), and
(3) agree with a brute-force per-position transcription of the generative story for a handful of positions.
"""

import numpy as np
import pytest

from neuroneval.activations.lm import ideal_next_token_table, most_common_tokens
from neuroneval.meta import meta_auprc
from neuroneval.metrics import score
from neuroneval.worlds.text import build_text_world, ideal_next_token_probabilities
from neuroneval.worlds.text_grammar import (
    N_KEY_NOUNS,
    NO_PREVIOUS,
    P_THE,
    PREPOSITIONS,
    SLOT_INDEX,
    SLOT_LITERAL,
    WORD_CLASSES,
    build_grammar,
    word_distribution,
)

KNOBS = {"vocab_size": 300, "n_topics": 4, "doc_length": 64, "collocation_strength": 0.8, "n_successors": 2}


@pytest.fixture(scope="module")
def world():
    train = build_text_world(200, seed=3, split="train", **KNOBS)
    return build_text_world(300, seed=3, split="probe", vocabulary=train.vocabulary, **KNOBS)


def _grammar(world):
    params = world.params
    return build_grammar(seed=params["seed"], vocab_size=params["vocab_size"], n_topics=params["n_topics"],
                         zipf_exponent=params["zipf_exponent"], topic_spread=params["topic_spread"],
                         collocation_strength=params["collocation_strength"], n_successors=params["n_successors"])


def _full_distribution(world, grammar):
    doc = np.searchsorted(world.doc_offsets, np.arange(world.n_tokens), side="right") - 1
    return word_distribution(grammar, words=world.lexicon_ids, slots=world.slot_of_token, topics=world.topic_of_token,
                             previous=world.previous_word, key_nouns=world.key_nouns[doc],
                             columns=np.arange(len(grammar.lexicon)), burstiness=world.params["burstiness"])


def test_distribution_sums_to_one_and_is_calibrated(world) -> None:
    grammar = _grammar(world)
    full = _full_distribution(world, grammar).astype(np.float64)
    np.testing.assert_allclose(full.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(full[np.arange(world.n_tokens), world.lexicon_ids] > 0), "the word drawn had probability 0"
    expected = full.sum(axis=0)
    observed = np.bincount(world.lexicon_ids, minlength=len(grammar.lexicon))
    frequent = expected > 50
    # each count is a sum of independent Bernoullis with these probabilities: |obs - exp| <= 5 sd
    sd = np.sqrt((full * (1 - full)).sum(axis=0))
    assert np.all(np.abs(observed - expected)[frequent] <= 5 * sd[frequent] + 1)


def _brute_force(grammar, world, index: int) -> dict[int, float]:
    """P(word | latent state) of one word, transcribed from the generative story word by word."""
    slot = int(world.slot_of_token[index])
    lexicon = list(grammar.lexicon)
    if slot == SLOT_LITERAL:
        return {int(world.lexicon_ids[index]): 1.0}
    if slot == SLOT_INDEX["DET"]:
        return {lexicon.index("the"): P_THE, lexicon.index("a"): 1 - P_THE}
    if slot == SLOT_INDEX["PREP"]:
        return {lexicon.index(word): 1 / len(PREPOSITIONS) for word in PREPOSITIONS}
    name = next(name for name, code in SLOT_INDEX.items() if code == slot)
    class_index = [c for c, _, _ in WORD_CLASSES].index(name)
    offset, size = grammar.class_offsets[name], grammar.class_sizes[name]
    topic = int(world.topic_of_token[index])
    cdf = grammar.stacked_cdfs[name][topic] - topic
    zipf = np.diff(np.concatenate([[0.0], cdf]))
    previous = int(world.previous_word[index])
    strength = grammar.collocation_strength if previous != NO_PREVIOUS else 0.0
    burst = world.params["burstiness"] if name == "NOUN" else 0.0
    out: dict[int, float] = {}
    for k in range(size):
        out[offset + k] = (1 - burst) * (1 - strength) * zipf[k]
    if previous != NO_PREVIOUS:
        weights = np.diff(np.concatenate([[0.0], grammar.successor_cdf[previous, class_index]]))
        for k, weight in zip(grammar.successors[previous, class_index], weights, strict=True):
            out[offset + int(k)] += (1 - burst) * strength * weight
    if burst:
        doc = int(np.searchsorted(world.doc_offsets, index, side="right") - 1)
        for noun in world.key_nouns[doc]:
            out[int(noun)] += burst / N_KEY_NOUNS
    return out


def test_distribution_matches_a_brute_force_transcription(world) -> None:
    grammar = _grammar(world)
    full = _full_distribution(world, grammar)
    rng = np.random.default_rng(0)
    for slot in [SLOT_LITERAL, *SLOT_INDEX.values()]:
        candidates = np.flatnonzero(world.slot_of_token == slot)
        for index in rng.choice(candidates, size=min(5, candidates.size), replace=False):
            expected = np.zeros(len(grammar.lexicon))
            for word, probability in _brute_force(grammar, world, int(index)).items():
                expected[word] += probability
            np.testing.assert_allclose(full[index], expected, atol=1e-6, err_msg=f"slot {slot}, word {index}")


def test_collocations_make_next_token_units_identifiable() -> None:
    """With topics only, P(next = w) has one shape per topic and word class: the ideal unit of w correlates with
    its topic-mates' one-hots as much as with its own. Collocations give each word its own contexts."""
    results = {}
    for strength in (0.0, 0.8):
        knobs = {**KNOBS, "collocation_strength": strength}
        train = build_text_world(100, seed=3, split="train", **knobs)
        probe = build_text_world(600, seed=3, split="probe", vocabulary=train.vocabulary, **knobs)
        units = most_common_tokens(probe.token_ids, 60)
        positions = np.arange(probe.n_tokens - 1)
        ideal = ideal_next_token_probabilities(probe, positions, units)
        concepts = (probe.token_ids[positions + 1][:, None] == units[None, :]).astype(np.float32)
        results[strength] = meta_auprc(score("correlation", ideal, concepts), np.eye(units.size, dtype=bool))
    assert results[0.8] >= 0.8 > 0.5 >= results[0.0], results


def test_ideal_table_has_the_units_and_positions_of_the_model_tables(world) -> None:
    frame, metadata = ideal_next_token_table(world, n_units=30, max_positions=500, seed=1)
    assert metadata["model"] == "ideal" and metadata["ideal_source"] == "generative_probability"
    units = most_common_tokens(world.token_ids, 30)
    assert list(frame.columns[1:]) == [f"tok:{world.vocabulary[u]}" for u in units]
    assert metadata["unit_concepts"]["tok:the"] == ["next:the"]
    positions = frame["input_id"].to_numpy()
    assert positions.size == 500 and np.all(np.diff(positions) > 0)
    direct = ideal_next_token_probabilities(world, positions, units)
    np.testing.assert_array_equal(frame.iloc[:, 1:].to_numpy(), direct)


def test_zero_collocation_strength_ignores_the_previous_word() -> None:
    knobs = {**KNOBS, "collocation_strength": 0.0}
    first = build_text_world(50, seed=4, split="train", **knobs)
    other = build_text_world(50, seed=4, split="train", **{**knobs, "n_successors": 5})
    np.testing.assert_array_equal(first.token_ids, other.token_ids)
    with pytest.raises(ValueError, match="collocation_strength"):
        build_text_world(5, seed=0, split="train", collocation_strength=1.5)
