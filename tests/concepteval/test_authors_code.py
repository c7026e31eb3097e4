"""Every documented difference from the authors' public code of paper 004 (docs/concepteval.md, § Where we differ
from the authors' public code), pinned on a tiny example: our value against a transcription of their rule, written
here from its description (the rule, not their code).

Their rules, as read in hr-jin/Concept-Explanation-Evaluation (HEAD f97c4a6, evaluators/base.py, itc.py,
faithfulness.py, main.py):

- coherence counts a token in a sample when its lower-cased string is a *substring* of the sample's text;
- UMass averages log[(P(xⁱ, xʲ) + ε)/P(xʲ)] over all ordered pairs i ≠ j; UCI over i < j;
- itc.py filters the pattern with a scalar boolean index (``tokens['\\ufffd' not in tokens]``), which adds an axis
  (shape (1, k)), so the following ``shape[0] == 1`` branch ``np.repeat``s the flattened pattern: every token
  enters twice and pairs of a token with its copy are scored;
- ABL-Loss = CE(y') − CE(y) and ABL-Class = y^j − y'^j per position (Eq. 6/8 print the opposite signs);
- GRAD-Loss = −∇_{h_t}(mean CE over the batch's B·(L−1) positions)·v, the unnormalised concept vector v;
- ABL-Div = KL over the original's top 1000 logits (both distributions renormalised there) at every position,
  the last one (no next token) included;
- positions are weighted by a⁺ = max(a, 0) as mean(a⁺·δ), not normalised by Σ a⁺;
- ABL replaces h by h − a(h)·v (no division by vᵀv).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuroneval.concepteval import (
    CooccurrenceCorpus,
    FaithfulnessOptions,
    LinearConcept,
    ReadabilityOptions,
    position_differences,
    readability,
)
from neuroneval.concepteval.faithfulness import aggregate

EPSILON = 1e-10


def _corpus(documents: list[list[int]], vocab_size: int) -> CooccurrenceCorpus:
    tokens = np.concatenate([np.asarray(doc) for doc in documents])
    offsets = np.cumsum([0, *(len(doc) for doc in documents)])
    return CooccurrenceCorpus.from_tokens(tokens, vocab_size, doc_offsets=offsets)


# token ids 0..4; every document is a corpus unit
DOCUMENTS = [[0, 1, 2], [0, 1], [1, 2, 3], [0, 3], [2, 4], [0, 1, 2, 3]]
VOCAB_SIZE = 5


def _presence(pattern: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """P(x) and P(x, y) by counting documents (brute force)."""
    units = [set(doc) for doc in DOCUMENTS]
    single = np.array([np.mean([x in unit for unit in units]) for x in pattern])
    joint = np.array([[np.mean([x in unit and y in unit for unit in units]) for y in pattern] for x in pattern])
    return single, joint


def _ours(pattern: list[int], measure: str) -> float:
    table = readability(["c"], input_patterns=np.array([pattern]), corpus=_corpus(DOCUMENTS, VOCAB_SIZE),
                        options=ReadabilityOptions(epsilon=EPSILON))
    return float(table.loc[table["measure"] == f"IN-{measure}", "value"].iloc[0])


def test_umass_averages_pairs_i_before_j_where_theirs_averages_every_ordered_pair() -> None:
    pattern = [0, 1, 3]
    single, joint = _presence(pattern)
    terms = np.log((joint + EPSILON) / single[None, :])  # term (i, j) conditions on the j-th token
    ours_rule = np.mean([terms[i, j] for i in range(3) for j in range(3) if i < j])
    their_rule = np.mean([terms[i, j] for i in range(3) for j in range(3) if i != j])
    assert _ours(pattern, "UMass") == pytest.approx(ours_rule, abs=1e-12)
    assert abs(ours_rule - their_rule) > 0.05  # the two averages differ on this pattern
    uci = np.log((joint + EPSILON) / np.outer(single, single))
    assert _ours(pattern, "UCI") == pytest.approx(np.mean([uci[i, j] for i in range(3) for j in range(i + 1, 3)]))


def test_token_presence_is_counted_by_token_id_where_theirs_matches_substrings() -> None:
    vocabulary = ["the", "there", "cat", "sat", "mat"]
    documents = [[1, 2], [0, 3], [1, 4], [2, 3]]  # "there" holds "the" as a substring
    corpus = _corpus(documents, len(vocabulary))
    ours_p, _ = corpus.probabilities(np.array([0]))
    texts = [" ".join(vocabulary[token] for token in doc).lower() for doc in documents]
    their_p = np.mean(["the" in text for text in texts])
    assert ours_p[0] == pytest.approx(0.25) and their_p == pytest.approx(0.75)


def test_their_scalar_boolean_index_duplicates_every_token_and_scores_self_pairs() -> None:
    tokens = np.array(["north", "south", "east"])
    indexed = tokens["\ufffd" not in tokens]  # a Python bool as index: a new axis, not a filter
    assert indexed.shape == (1, 3)
    duplicated = np.repeat(indexed, 2) if indexed.shape[0] == 1 else indexed
    assert duplicated.tolist() == ["north", "north", "south", "south", "east", "east"]
    pattern = [0, 1, 2]
    single, joint = _presence(pattern)
    copies = np.repeat(np.arange(3), 2)
    uci = np.log((joint[np.ix_(copies, copies)] + EPSILON) / np.outer(single[copies], single[copies]))
    their_uci = uci[np.triu_indices(6, 1)].mean()
    self_pair_terms = np.log((single + EPSILON) / single**2)
    assert (self_pair_terms > 0).all()  # a token paired with its copy only raises the mean
    ours = _ours(pattern, "UCI")
    assert ours == pytest.approx(_ours([0, 0, 1, 1, 2, 2], "UCI"))  # a repeated token counts once here
    assert their_uci > ours + 0.05


def _linear_setup() -> tuple[torch.Tensor, torch.Tensor, np.ndarray, LinearConcept, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(2, 4, 3, generator=generator, dtype=torch.float64)
    weights = torch.randn(3, 6, generator=generator, dtype=torch.float64)
    targets = np.array([[1, 4, 2, -1], [5, 0, 3, -1]])
    concept = LinearConcept(np.array([0.6, -1.2, 0.9]), 0.3)
    return hidden, weights, targets, concept, torch.as_tensor(concept.direction, dtype=torch.float64)


def _ablated(hidden: torch.Tensor, concept: LinearConcept, direction: torch.Tensor) -> torch.Tensor:
    activation = hidden @ direction + concept.bias
    return hidden - (activation / (direction @ direction))[..., None] * direction  # Eq. 5 with the bias


def test_ablation_loss_and_class_signs_follow_eq_6_and_8_theirs_are_the_opposite() -> None:
    hidden, weights, targets, concept, direction = _linear_setup()
    measures = ("ABL-Loss", "ABL-TClass", "ABL-PClass")
    ours = position_differences(hidden, lambda h: h @ weights, targets, [concept],
                                FaithfulnessOptions(measures=measures))[0]
    logits, perturbed = hidden @ weights, _ablated(hidden, concept, direction) @ weights
    valid = targets >= 0
    target = torch.as_tensor(np.where(valid, targets, 0))

    def cross_entropy(values: torch.Tensor) -> np.ndarray:
        return (-torch.log_softmax(values, -1).gather(-1, target[..., None])[..., 0]).numpy()

    predicted = logits.argmax(-1)
    their = {"ABL-Loss": cross_entropy(perturbed) - cross_entropy(logits),
             "ABL-TClass": (logits.gather(-1, target[..., None]) - perturbed.gather(-1, target[..., None]))[..., 0],
             "ABL-PClass": (logits.gather(-1, predicted[..., None]) - perturbed.gather(-1, predicted[..., None]))[
                 ..., 0]}
    for row, measure in enumerate(measures):
        np.testing.assert_allclose(ours[row][valid], -np.asarray(their[measure])[valid], rtol=1e-10, atol=1e-12)
        assert np.isnan(ours[row][~valid]).all()


def test_grad_loss_is_the_unit_rate_theirs_is_scaled_by_norm_v_over_the_batch_positions() -> None:
    hidden, weights, targets, concept, direction = _linear_setup()
    ours = position_differences(hidden, lambda h: h @ weights, targets, [concept],
                                FaithfulnessOptions(measures=("GRAD-Loss",)))[0, 0]
    valid = targets >= 0
    states = hidden.clone().requires_grad_(True)
    log_probs = torch.log_softmax(states @ weights, -1)
    losses = -log_probs.gather(-1, torch.as_tensor(np.where(valid, targets, 0))[..., None])[..., 0]
    mean_loss = losses[torch.as_tensor(valid)].mean()  # their loss: the mean over the batch's positions
    (gradient,) = torch.autograd.grad(mean_loss, states)
    theirs = -(gradient @ direction).numpy()
    scale = float(direction.norm()) / valid.sum()
    np.testing.assert_allclose(theirs[valid], ours[valid] * scale, rtol=1e-10, atol=1e-14)


def test_divergence_uses_the_whole_vocabulary_where_theirs_renormalises_the_top_k_and_keeps_the_last_position(
) -> None:
    hidden, weights, targets, concept, direction = _linear_setup()
    ours = position_differences(hidden, lambda h: h @ weights, targets, [concept],
                                FaithfulnessOptions(measures=("ABL-Div",)))[0, 0]
    logits, perturbed = hidden @ weights, _ablated(hidden, concept, direction) @ weights

    def their_div(top_k: int) -> np.ndarray:
        values, indices = torch.topk(logits, top_k, dim=-1)
        p, q = torch.softmax(values, -1), torch.softmax(perturbed.gather(-1, indices), -1)
        return (p * (p.log() - q.log())).sum(-1).numpy()

    valid = targets >= 0
    np.testing.assert_allclose(ours[valid], their_div(6)[valid], rtol=1e-9, atol=1e-12)  # top-k = V: KL (Eq. 7)
    assert np.abs(ours[valid] - their_div(3)[valid]).max() > 1e-3  # top-3 of 6 tokens: another number
    assert np.isnan(ours[~valid]).all() and np.isfinite(their_div(6)[~valid]).all()  # their last position


def test_activation_weighting_is_normalised_theirs_is_the_plain_mean_of_weighted_values() -> None:
    rng = np.random.default_rng(0)
    differences = rng.normal(size=(1, 1, 2, 4))
    activations = rng.normal(size=(2, 4, 1))
    positive = np.maximum(activations[..., 0], 0)
    ours = aggregate(differences, activations, weighting="activation")[0, 0]
    theirs = (differences[0, 0] * positive).mean()
    assert ours == pytest.approx((differences[0, 0] * positive).sum() / positive.sum())
    assert theirs == pytest.approx(ours * positive.mean())


def test_ablation_zeroes_the_activation_theirs_only_for_a_unit_norm_direction() -> None:
    from neuroneval.concepteval import ablate

    hidden, _, _, concept, direction = _linear_setup()
    ours = ablate(hidden, concept)
    activation = hidden @ direction + concept.bias
    theirs = hidden - activation[..., None] * direction  # h − a(h)·v
    np.testing.assert_allclose((ours @ direction + concept.bias).numpy(), 0.0, atol=1e-12)
    left = (theirs @ direction + concept.bias).numpy()
    np.testing.assert_allclose(left, (activation * (1 - direction @ direction)).numpy(), rtol=1e-10)
    assert abs(float(direction @ direction) - 1) > 0.5 and np.abs(left).max() > 0.1
    unit = LinearConcept(concept.direction / np.linalg.norm(concept.direction), concept.bias)
    unit_direction = torch.as_tensor(unit.direction, dtype=torch.float64)
    unit_theirs = hidden - (hidden @ unit_direction + unit.bias)[..., None] * unit_direction
    np.testing.assert_allclose(ablate(hidden, unit).numpy(), unit_theirs.numpy(), atol=1e-12)  # agree at ‖v‖ = 1
