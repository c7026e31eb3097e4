"""The benchmark's ``top_tokens`` method and the ViT's patch-token maps (issue 15): planted truth, brute force."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from neuroneval.activations.extract import pool, spatial_grid
from neuroneval.activations.lm import CONCEPT_PREFIX
from neuroneval.explain import CaptionOptions, ProbingData, parse
from neuroneval.explain.benchmark import truth_recovered
from neuroneval.explain.tokens import token_explanation, top_token_concept_explanations
from neuroneval.explain_catalogue import EXPLAIN_METHODS, method_tables
from neuroneval.worlds.text import next_token_names

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "zyx"]


def _stream(rng: np.random.Generator, n: int) -> np.ndarray:
    """A token stream over WORDS; "zyx" (id 7) is rare and never a concept of the table."""
    return rng.choice(len(WORDS), size=n, p=[0.25, 0.15, 0.15, 0.15, 0.1, 0.1, 0.09, 0.01])


def _brute_force_top_token(activation: np.ndarray, tokens: list[str], options: CaptionOptions) -> str | None:
    """The lift of every token among the top_k positions by explicit counting (captions module formula)."""
    n, k, s = len(tokens), options.top_k, options.smoothing
    top = sorted(range(n), key=lambda i: (-activation[i], i))[:k]
    best, best_lift = None, -np.inf
    for token in sorted(set(tokens)):
        n_top = sum(tokens[i] == token for i in top)
        n_all = sum(t == token for t in tokens)
        if n_all > options.max_document_frequency * n or n_top < options.min_count:
            continue
        lift = ((n_top + s) / (k + s)) / ((n_all + s) / (n + s))
        if lift > best_lift:
            best, best_lift = token, lift
    return best


def test_next_token_names_are_the_following_tokens() -> None:
    token_ids = np.array([0, 2, 3, 1, 2])
    assert next_token_names(token_ids, WORDS, np.array([0, 2, 3])) == ["next:sat", "next:cat", "next:sat"]
    assert next_token_names(token_ids, WORDS, np.array([0]))[0].startswith(CONCEPT_PREFIX)
    with pytest.raises(ValueError, match="next token"):
        next_token_names(token_ids, WORDS, np.array([4]))


def test_a_unit_that_fires_before_w_is_explained_by_next_w_as_a_brute_force_count() -> None:
    rng = np.random.default_rng(3)
    token_ids = _stream(rng, 3001)
    positions = np.arange(3000)
    tokens = next_token_names(token_ids, WORDS, positions)
    concept_names = [f"next:{word}" for word in WORDS[:7]]
    following = token_ids[positions + 1]
    concepts = (following[:, None] == np.arange(7)[None, :]).astype(float)
    # unit k = a noisy P(next = w_k); unit 7 fires before the rare "zyx" (not a concept: stays text)
    planted = [1, 4, 6, 7]
    units = np.stack([(following == w) * 0.6 + 0.5 * rng.random(len(positions)) for w in planted], axis=1)
    probing = ProbingData.build(concepts, concept_names, tokens=tokens)
    options = CaptionOptions(top_k=40, n_words=1)
    frame = top_token_concept_explanations(units, probing, options, unit_names=[f"tok:{WORDS[w]}" for w in planted])
    assert frame["explanation"].tolist() == [f"next:{WORDS[w]}" for w in planted]
    assert frame["kind"].tolist() == ["concept", "concept", "concept", "text"]
    for column, text in enumerate(frame["explanation"]):
        assert text == _brute_force_top_token(units[:, column], tokens, options)
    assert truth_recovered(parse(frame.loc[0, "explanation"], "concept"), ["next:cat"])
    either = np.isin(following, [1, 4]) * 0.6 + 0.5 * rng.random(len(positions))  # fires before cat or mat
    two = top_token_concept_explanations(either[:, None], probing, CaptionOptions(top_k=40, n_words=2))
    assert two.loc[0, "kind"] == "formula"
    assert set(parse(two.loc[0, "explanation"], "formula").concepts()) == {"next:cat", "next:mat"}


def test_token_explanation_kinds() -> None:
    names = {"next:a", "next:b"}
    assert token_explanation(["next:a"], names).text() == "next:a"
    assert token_explanation(["next:a", "next:b"], names).text() == "next:a OR next:b"
    assert token_explanation(["next:a", "next:z"], names).kind == "text"
    assert token_explanation([], names).text() == "(none)"


def test_top_tokens_is_a_table_1_method() -> None:
    assert "top_tokens" in EXPLAIN_METHODS and method_tables("top_tokens") == (1,)


def test_vit_patch_tokens_lie_on_the_patch_grid_and_pool_to_the_table() -> None:
    """Token 1 + i of a timm ViT is patch (i // side, i % side): a bright top-right patch lights up that map cell;
    the class token is dropped from the maps but kept in the pooled check (as the activation tables pool)."""
    from neuroneval.models.vit import build_tiny_vit

    torch.manual_seed(0)
    model = build_tiny_vit(4, embed_dim=16, depth=1).eval()
    images = torch.zeros(2, 3, 32, 32)
    images[:, :, 0:8, 24:32] = 5.0  # patch row 0, column 3
    outputs = []
    handle = model.patch_embed.register_forward_hook(lambda _m, _i, out: outputs.append(out))
    with torch.no_grad():
        model(images)
    handle.remove()
    patch = outputs[0].numpy()  # (N, 16, D), no class token yet
    maps = spatial_grid(patch, 0)
    assert maps.shape == (2, 16, 4, 4)
    brightest = np.abs(maps - maps.mean(axis=(2, 3), keepdims=True)).sum(axis=1)[0]
    assert np.unravel_index(brightest.argmax(), brightest.shape) == (0, 3)
    tokens = np.random.default_rng(0).random((3, 17, 5)).astype(np.float32)
    grid = spatial_grid(tokens, 1)
    assert np.array_equal(grid[:, :, 2, 1], tokens[:, 1 + 2 * 4 + 1])
    pooled = pool(torch.from_numpy(tokens), "mean").numpy()
    assert np.allclose(pooled * 17, grid.sum(axis=(2, 3)) + tokens[:, 0])
    assert spatial_grid(np.zeros((1, 2, 3, 3))).shape == (1, 2, 3, 3)
    with pytest.raises(ValueError, match="square grid"):
        spatial_grid(tokens, 0)
