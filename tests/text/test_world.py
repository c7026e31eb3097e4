"""The embedded text world: determinism, Zipfian vocabulary, topical structure, tokenizer, storage, size contract."""

from pathlib import Path

import numpy as np
import pytest

from neuroneval.worlds.text import (
    DEFAULT_DOCUMENTS,
    EOS_ID,
    UNK_ID,
    TextWorld,
    WordTokenizer,
    build_text_world,
    load_text_world,
    save_text_world,
)
from neuroneval.worlds.text_grammar import FUNCTION_WORDS

from .conftest import SMALL


def _assert_same_world(first: TextWorld, second: TextWorld) -> None:
    for name in ("token_ids", "doc_offsets", "topic_of_doc", "topic_mixture", "topic_of_token"):
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name), err_msg=name)
    assert first.vocabulary == second.vocabulary


def test_same_seed_same_corpus_and_other_seeds_or_splits_differ(train_world: TextWorld) -> None:
    again = build_text_world(300, seed=1, split="train", **SMALL)
    _assert_same_world(train_world, again)
    assert train_world.params == again.params
    other_seed = build_text_world(20, seed=2, split="train", vocabulary=train_world.vocabulary, **SMALL)
    other_split = build_text_world(20, seed=1, split="probe", vocabulary=train_world.vocabulary, **SMALL)
    first_document = train_world.document(0)
    for other in (other_seed, other_split):
        assert not np.array_equal(other.document(0), first_document)


def test_chunks_equal_the_whole(train_world: TextWorld) -> None:
    whole = build_text_world(90, seed=1, split="probe", vocabulary=train_world.vocabulary, **SMALL)
    head = build_text_world(35, seed=1, split="probe", vocabulary=train_world.vocabulary, **SMALL)
    tail = build_text_world(55, seed=1, split="probe", vocabulary=train_world.vocabulary, start_index=35, **SMALL)
    np.testing.assert_array_equal(np.concatenate([head.token_ids, tail.token_ids]), whole.token_ids)
    np.testing.assert_array_equal(np.concatenate([head.doc_offsets[:-1], tail.doc_offsets + head.n_tokens]),
                                  whole.doc_offsets)
    np.testing.assert_array_equal(np.concatenate([head.topic_of_token, tail.topic_of_token]), whole.topic_of_token)
    np.testing.assert_array_equal(np.concatenate([head.topic_mixture, tail.topic_mixture]), whole.topic_mixture)
    for index in (0, 34):
        np.testing.assert_array_equal(whole.document(35 + index), tail.document(index))


def test_documents_end_with_eos_and_carry_topics(train_world: TextWorld) -> None:
    ends = train_world.doc_offsets[1:] - 1
    assert np.all(train_world.token_ids[ends] == EOS_ID)
    assert np.count_nonzero(train_world.token_ids == EOS_ID) == train_world.n_documents
    assert train_world.token_ids.dtype == np.int32 and train_world.doc_offsets[-1] == train_world.n_tokens
    assert train_world.topic_of_token.shape == train_world.token_ids.shape
    np.testing.assert_allclose(train_world.topic_mixture.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(train_world.topic_of_doc, train_world.topic_mixture.argmax(axis=1))
    assert np.mean(np.diff(train_world.doc_offsets)) == pytest.approx(SMALL["doc_length"] + 1, rel=0.15)


def _rank_frequency_slope(world: TextWorld, first_rank: int, last_rank: int) -> float:
    counts = np.sort(np.bincount(world.token_ids))[::-1]
    ranks = np.arange(1, counts.size + 1)
    band = slice(first_rank - 1, last_rank)
    return float(np.polyfit(np.log(ranks[band]), np.log(counts[band]), 1)[0])


@pytest.mark.parametrize("exponent", [0.8, 1.0, 1.5])
def test_rank_frequency_is_zipfian_with_the_chosen_exponent(exponent: float) -> None:
    world = build_text_world(500, seed=2, split="train", vocab_size=2000, zipf_exponent=exponent)
    slope = _rank_frequency_slope(world, 20, 500)
    assert slope == pytest.approx(-exponent, abs=0.15)


def _topic_distances(world: TextWorld) -> tuple[float, float]:
    """Mean total-variation distance of open-class word distributions between topics, and within a topic."""
    vocabulary_size = len(world.vocabulary)
    is_content = np.array([word not in FUNCTION_WORDS and not word.startswith("<") for word in world.vocabulary])
    content = is_content[world.token_ids]
    parity = np.arange(world.n_tokens) % 2

    def distribution(selected: np.ndarray) -> np.ndarray:
        counts = np.bincount(world.token_ids[selected], minlength=vocabulary_size).astype(np.float64)
        return counts / counts.sum()

    n_topics = world.params["n_topics"]
    by_topic = [content & (world.topic_of_token == topic) for topic in range(n_topics)]
    between = [0.5 * np.abs(distribution(by_topic[a]) - distribution(by_topic[b])).sum()
               for a in range(n_topics) for b in range(a + 1, n_topics)]
    within = [0.5 * np.abs(distribution(mask & (parity == 0)) - distribution(mask & (parity == 1))).sum()
              for mask in by_topic]
    return float(np.mean(between)), float(np.mean(within))


def test_topics_prefer_different_words_and_spread_zero_removes_that() -> None:
    knobs = {"vocab_size": 300, "n_topics": 4, "doc_length": 64}
    between, within = _topic_distances(build_text_world(600, seed=3, split="train", **knobs))
    assert between > 0.35 and between > 2.5 * within
    between_flat, within_flat = _topic_distances(build_text_world(600, seed=3, split="train", topic_spread=0.0,
                                                                  **knobs))
    assert between_flat < 0.2 and between_flat < 1.2 * within_flat


def test_tokenizer_round_trip_and_vocabulary_order(train_world: TextWorld) -> None:
    tokenizer = train_world.tokenizer
    text = train_world.text(3)
    np.testing.assert_array_equal(tokenizer.encode(text), train_world.document(3))
    assert tokenizer.decode(tokenizer.encode(text)) == text
    assert text.endswith(" <eos>") and "  " not in text
    assert tokenizer.encode("the zzzqx .").tolist() == [tokenizer.token_id["the"], UNK_ID, tokenizer.token_id["."]]
    counts = np.bincount(train_world.token_ids, minlength=len(tokenizer))
    assert train_world.vocabulary[:2] == ["<eos>", "<unk>"]
    assert np.all(np.diff(counts[2:]) <= 0) and counts[2:].min() >= 1 and counts[UNK_ID] == 0
    with pytest.raises(ValueError, match="starts with"):
        WordTokenizer(["the", "<eos>", "<unk>"])
    with pytest.raises(ValueError, match="token ids must lie"):
        tokenizer.decode([len(tokenizer)])


def test_probe_split_needs_the_train_vocabulary_and_bad_knobs_are_named() -> None:
    with pytest.raises(ValueError, match="needs the train world's vocabulary"):
        build_text_world(5, seed=0, split="probe")
    with pytest.raises(ValueError, match="zipf_exponent"):
        build_text_world(5, seed=0, split="train", zipf_exponent=0)
    with pytest.raises(ValueError, match="split must be"):
        build_text_world(5, seed=0, split="tr ain")


def test_save_and_load_round_trip(probe_world: TextWorld, tmp_path: Path) -> None:
    save_text_world(probe_world, tmp_path / "probe")
    loaded = load_text_world(tmp_path / "probe")
    _assert_same_world(probe_world, loaded)
    assert loaded.params == probe_world.params
    assert not list((tmp_path / "probe").glob("*.tmp"))
    (tmp_path / "probe" / "topic_of_token.npy").unlink()
    with pytest.raises(FileNotFoundError, match=r"topic_of_token\.npy"):
        load_text_world(tmp_path / "probe")


def test_default_probe_split_is_large_enough_for_500_token_units() -> None:
    """The setting-7/8 contract: ≥ 200k probe tokens, and each of the top-500 next tokens ≥ 30 times."""
    train = build_text_world(1000, seed=0, split="train")
    probe = build_text_world(DEFAULT_DOCUMENTS["probe"], seed=0, split="probe", vocabulary=train.vocabulary)
    assert probe.n_tokens >= 200_000
    counts = np.bincount(probe.token_ids[1:])
    counts[UNK_ID] = 0
    assert np.sort(counts)[::-1][499] >= 30
