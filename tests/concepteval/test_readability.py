"""Coherence against brute-force counts on a toy corpus (including the self-pair), embeddings by hand, and the
pattern procedures on hand-made activation functions."""

import itertools
import math

import numpy as np
import pytest
import torch

from neuroneval.concepteval import (
    CooccurrenceCorpus,
    LinearConcept,
    PatternOptions,
    ReadabilityOptions,
    input_patterns,
    output_patterns,
    readability,
)

# Five documents over a vocabulary of 8 tokens (token 7 never occurs).
DOCUMENTS = [[1, 2, 3, 1], [2, 3], [1, 4], [2, 5, 5, 3], [6]]
VOCAB = 8
EPS = 1e-10


def corpus() -> CooccurrenceCorpus:
    tokens = np.concatenate(DOCUMENTS)
    offsets = np.concatenate([[0], np.cumsum([len(d) for d in DOCUMENTS])])
    return CooccurrenceCorpus.from_tokens(tokens, VOCAB, doc_offsets=offsets)


def brute_force(pattern: list[int], kind: str) -> float:
    """Mean over pairs i < j of distinct tokens, counting documents by hand."""
    distinct = list(dict.fromkeys(t for t in pattern if t >= 0))
    sets = [set(d) for d in DOCUMENTS]
    p = {t: sum(t in s for s in sets) / len(sets) for t in range(VOCAB)}
    values = []
    for a, b in itertools.combinations(distinct, 2):
        joint = sum(a in s and b in s for s in sets) / len(sets)
        if kind == "UCI" and p[a] > 0 and p[b] > 0:
            values.append(math.log((joint + EPS) / (p[a] * p[b])))
        if kind == "UMass" and p[b] > 0:
            values.append(math.log((joint + EPS) / p[b]))
    return float(np.mean(values)) if values else float("nan")


PATTERNS = [[1, 2, 3, -1], [2, 2, 3, 5], [1, 4, 7, 6], [5, 5, -1, -1]]


@pytest.mark.parametrize("kind", ["UCI", "UMass"])
def test_cooccurrence_coherence_matches_brute_force(kind):
    table = readability(["a", "b", "c", "d"], input_patterns=np.array(PATTERNS), corpus=corpus())
    values = table[table["measure"] == f"IN-{kind}"]["value"].to_numpy()
    expected = [brute_force(pattern, kind) for pattern in PATTERNS]
    np.testing.assert_allclose(values, expected, rtol=1e-12, equal_nan=True)


def test_a_token_is_never_paired_with_itself():
    """[2, 2, 3, 5] scores like [2, 3, 5]; the authors' self-pair would add log((P(2) + ε)/P(2)²) > 0."""
    duplicated = readability(["x"], input_patterns=np.array([[2, 2, 3, 5]]), corpus=corpus())
    distinct = readability(["x"], input_patterns=np.array([[2, 3, 5, -1]]), corpus=corpus())
    np.testing.assert_allclose(duplicated["value"], distinct["value"], rtol=1e-12)
    assert (duplicated["n_pairs"] == 3).all()
    only_self = readability(["x"], input_patterns=np.array([[5, 5, -1, -1]]), corpus=corpus())
    assert only_self["value"].isna().all() and (only_self["n_pairs"] == 0).all()
    p2 = 3 / 5  # the inflated value a self-pair would contribute
    assert math.log((p2 + EPS) / (p2 * p2)) > 0


def test_windows_split_documents():
    windowed = CooccurrenceCorpus.from_tokens(np.array([1, 2, 3, 1, 2]), VOCAB, window=2)
    assert windowed.n_units == 3
    single, joint = windowed.probabilities(np.array([1, 2]))
    np.testing.assert_allclose(single, [2 / 3, 2 / 3])
    np.testing.assert_allclose(joint[0, 1], 1 / 3)


def test_embedding_coherence_by_hand():
    embeddings = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    table = readability(["x"], output_patterns=np.array([[1, 2, 3, 1]]), embeddings=embeddings)
    values = table.set_index("measure")["value"]
    pairs = [(1, 2), (1, 3), (2, 3)]
    distance = -np.mean([np.linalg.norm(embeddings[a] - embeddings[b]) for a, b in pairs])
    cosine = np.mean([embeddings[a] @ embeddings[b] / np.linalg.norm(embeddings[a]) / np.linalg.norm(embeddings[b])
                      for a, b in pairs])
    assert values["OUT-EmbDist"] == pytest.approx(distance)
    assert values["OUT-EmbCos"] == pytest.approx(cosine)


def test_input_patterns_find_activating_and_context_tokens():
    """Concept 0 fires on token 5, more strongly when token 3 came before it: patterns [5, 3]."""

    def activations(windows: np.ndarray) -> np.ndarray:
        windows = np.asarray(windows)
        seen_three = np.maximum.accumulate(windows == 3, axis=1)
        fire = (windows == 5) * (1.0 + 2.0 * seen_three)
        return np.stack([fire, (windows == 6) * 1.0], axis=-1)

    windows = np.array([[3, 1, 5, 2], [1, 5, 2, 2], [6, 2, 2, 4]])
    patterns, scores = input_patterns(windows, activations, VOCAB, PatternOptions(top_k=3, replacement_id=0))
    assert patterns[0].tolist() == [5, 3, -1]
    assert scores[0, 5] == pytest.approx(3.0) and scores[0, 3] == pytest.approx(2.0)
    assert patterns[1].tolist() == [6, -1, -1]
    excluded, _ = input_patterns(windows, activations, VOCAB, PatternOptions(top_k=3, exclude_ids=(5,)))
    assert excluded[0].tolist() == [3, -1, -1]


def test_output_patterns_take_top_logits_of_the_direction():
    weights = torch.eye(4, dtype=torch.float64)[:, [2, 0, 3, 1]]  # logit of token j = h[[2, 0, 3, 1][j]]

    def head(h: torch.Tensor) -> torch.Tensor:
        return h @ weights

    hidden = torch.ones(2, 3, 4, dtype=torch.float64)
    concept = LinearConcept(np.array([0.0, 0.0, 1.0, 0.5]))
    patterns, logits = output_patterns([concept], hidden, head, PatternOptions(top_k=2))
    assert patterns[0].tolist() == [0, 2]  # logits h[2] = 1, h[3] = 0.5, then 0, 0
    assert logits.shape == (1, 4)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="token ids must lie"):
        CooccurrenceCorpus.from_tokens(np.array([1, 9]), VOCAB)
    with pytest.raises(ValueError, match="integer token ids"):
        readability(["x"], input_patterns=np.array([[1.0, 2.0]]), corpus=corpus())
    with pytest.raises(ValueError, match="2 rows for 1 concepts"):
        readability(["x"], input_patterns=np.array([[1, 2], [2, 3]]), corpus=corpus())
    with pytest.raises(ValueError, match="finite"):
        readability(["x"], output_patterns=np.array([[1, 2]]), embeddings=np.array([[np.nan]] * 3))
    with pytest.raises(ValueError, match="'eps'"):
        ReadabilityOptions.from_params({"eps": 1e-12})
