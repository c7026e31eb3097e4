"""Simulation-based readability (SIM-Corr): explain on one set of windows, simulate and score on another; against a
brute-force loop over tokens and positions with scipy's Pearson r, and through a fake OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from scipy import stats

from neuroneval.concepteval.simulation import (
    SIMULATION_MEASURE,
    SimulationOptions,
    position_contexts,
    simulation_readability,
)
from neuroneval.explain import LLMOptions, OpenAICompatibleChat
from neuroneval.options import OptionsError
from tests.explain.fake_chat import FakeChat, serve_fake_chat

VOCAB = 12


def _brute_force(explain_windows, explain_activations, score_windows, score_activations, options):
    """The lift of every token at every concept's top positions by loops, the top tokens, the token match, scipy r."""
    tokens = explain_windows.reshape(-1)
    values = explain_activations.reshape(len(tokens), -1)
    scored = score_windows.reshape(-1)
    truth = score_activations.reshape(len(scored), -1)
    n, s, k = len(tokens), options.smoothing, min(options.top_k, len(tokens))
    result = []
    for concept in range(values.shape[1]):
        top = sorted(range(n), key=lambda i: (-values[i, concept], i))[:k]
        candidates = []
        for token in range(VOCAB):
            in_top = sum(tokens[i] == token for i in top)
            overall = sum(tokens[i] == token for i in range(n))
            if overall > options.max_document_frequency * n or in_top < options.min_count:
                continue
            candidates.append((-((in_top + s) / (k + s)) / ((overall + s) / (n + s)), token))
        chosen = [token for _, token in sorted(candidates)[: options.n_tokens]]
        simulated = np.array([float(token in chosen) for token in scored])
        if simulated.std() == 0 or truth[:, concept].std() == 0:  # no correlation: scores 0
            result.append(0.0)
        else:
            result.append(stats.pearsonr(truth[:, concept], simulated)[0])
    return np.array(result)


@pytest.fixture(scope="module")
def toy():
    """Windows of random tokens; concept 0 fires on tokens 3 and 7, concept 1 on token 5 (weakly), concept 2 is
    noise, concept 3 is constant."""
    rng = np.random.default_rng(0)

    def activations(windows):
        noise = rng.normal(size=(*windows.shape, 4))
        return np.stack([np.isin(windows, [3, 7]) * 2.0 + 0.1 * noise[..., 0],
                         (windows == 5) * 0.5 + 0.5 * noise[..., 1], noise[..., 2],
                         np.ones(windows.shape)], axis=-1)

    explain = rng.integers(0, VOCAB, size=(6, 10))
    score = rng.integers(0, VOCAB, size=(5, 10))
    return explain, activations(explain), score, activations(score)


@pytest.mark.parametrize("params", [{}, {"top_k": 8, "n_tokens": 2, "min_count": 1},
                                    {"top_k": 15, "n_tokens": 3, "smoothing": 0.5, "max_document_frequency": 0.08}])
def test_offline_simulation_matches_brute_force(toy, params) -> None:
    options = SimulationOptions.from_params(params)
    table = simulation_readability(*toy, ["a", "b", "c", "d"], options)
    assert list(table.columns) == ["concept", "measure", "value", "explanation", "n_positions"]
    assert (table["measure"] == SIMULATION_MEASURE).all() and (table["n_positions"] == 50).all()
    np.testing.assert_allclose(table["value"].to_numpy(), _brute_force(*toy, options), atol=1e-12)


def test_planted_concept_is_readable_and_noise_is_not(toy) -> None:
    table = simulation_readability(*toy, ["a", "b", "c", "d"], SimulationOptions(n_tokens=2),
                                   vocabulary=[f"w{i}" for i in range(VOCAB)])
    values = table.set_index("concept")["value"]
    assert values["a"] > 0.95 and abs(values["c"]) < 0.5
    assert set(table.set_index("concept").at["a", "explanation"].split()) == {"w3", "w7"}


def test_shapes_and_options_are_checked(toy) -> None:
    explain, explain_values, score, score_values = toy
    with pytest.raises(ValueError, match="activations \\(B, L, 3\\)"):
        simulation_readability(explain, explain_values, score, score_values, ["a", "b", "c"])
    with pytest.raises(OptionsError, match="backend"):
        SimulationOptions(backend="gpt")
    with pytest.raises(ValueError, match="needs a chat backend"):
        simulation_readability(*toy, list("abcd"), SimulationOptions(backend="llm"))


def test_position_contexts_end_with_the_position_token() -> None:
    contexts = position_contexts(np.array([[0, 1, 2]]), ["a", " b", "c"], 2)
    assert contexts == ["a", "a b", "b c"]


class TokenChat(FakeChat):
    """Explains by the last word of the first '10 |' line; simulates 10 where a line ends in the explained word."""

    def reply(self, prompt: str) -> str:
        if prompt.startswith("Top-activating"):
            top = next(line for line in prompt.splitlines() if line.startswith("10 |")).split()[-1]
            return f"Explanation: {top}"
        word = prompt.splitlines()[0].split(":", 1)[1].strip()
        lines = [line for line in prompt.splitlines() if line[:1].isdigit()]
        return "\n".join(f"{line.split('.')[0]}: {10 if line.split()[-1] == word else 0}" for line in lines)


@pytest.fixture
def server() -> Iterator[str]:
    with serve_fake_chat(TokenChat) as url:
        yield url


def test_llm_backend_explains_and_simulates_through_a_chat_server(toy, server) -> None:
    """The fake LLM names the top position's token and predicts its match, so SIM-Corr is the brute-force score
    of the single top token (n_tokens = 1, no lift filter), here and on a seeded sample of positions."""
    explain, explain_values, score, score_values = toy
    vocabulary = [f"w{i}" for i in range(VOCAB)]
    llm = LLMOptions(base_url=server, batch_size=16)
    options = SimulationOptions(backend="llm", llm=llm, top_k=1, context_tokens=3)
    names = ["a", "b", "c", "d"]
    table = simulation_readability(*toy, names, options, vocabulary=vocabulary, backend=OpenAICompatibleChat(llm))
    flat_tokens, flat_values = explain.reshape(-1), explain_values.reshape(-1, 4)
    scored, truth = score.reshape(-1), score_values.reshape(-1, 4)
    for column, row in enumerate(table.itertuples()):
        top_token = flat_tokens[np.argsort(-flat_values[:, column], kind="stable")[0]]
        assert row.explanation == f"w{top_token}"
        simulated = (scored == top_token).astype(float)
        expected = 0.0 if simulated.std() == 0 or truth[:, column].std() == 0 else stats.pearsonr(
            truth[:, column], simulated)[0]
        assert row.value == pytest.approx(expected, abs=1e-12)
    sampled = simulation_readability(*toy, names, SimulationOptions(backend="llm", llm=llm, top_k=1, max_positions=20,
                                                                    seed=3),
                                     vocabulary=vocabulary, backend=OpenAICompatibleChat(llm))
    assert (sampled["n_positions"] == 20).all()
    rows = np.sort(np.random.default_rng(3).choice(50, size=20, replace=False))
    top_token = flat_tokens[np.argsort(-flat_values[:, 0], kind="stable")[0]]
    assert sampled["value"].iloc[0] == pytest.approx(
        stats.pearsonr(truth[rows, 0], (scored[rows] == top_token).astype(float))[0], abs=1e-12)
