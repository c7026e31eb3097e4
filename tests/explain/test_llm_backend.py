"""The OpenAI-compatible backend against a small chat server on 127.0.0.1 (the ``server`` fixture)."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.explain import LLMExplainer, LLMOptions, LLMSimulator, OpenAICompatibleChat, ProbingData
from neuroneval.explain.llm_backend import LLMError, parse_explanation, parse_predictions, scale_to_ten
from tests.explain.fake_chat import FakeChat


def test_chat_request_shape_and_key(server, monkeypatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "secret")
    chat = OpenAICompatibleChat(LLMOptions(base_url=server + "/v1", model="tiny", api_key_env="TEST_LLM_KEY"))
    reply = chat.complete([{"role": "user", "content": "1. zebra\n2. cat"}])
    assert reply == "1: 10\n2: 1"
    request = FakeChat.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "tiny" and request["body"]["temperature"] == 0.0
    assert request["auth"] == "Bearer secret"


def test_explainer_and_simulator_end_to_end(server) -> None:
    rng = np.random.default_rng(0)
    words = np.array(["zebra", "cat", "dog", "horse"])
    chosen = rng.integers(0, 4, 60)
    contexts = [f"a picture of a {w}" for w in words[chosen]]
    activations = np.stack([(chosen == 0) * 5.0 + rng.random(60), rng.random(60)], axis=1)
    probing = ProbingData.build(np.zeros((60, 1)), ["none"], contexts=contexts)
    backend = OpenAICompatibleChat(LLMOptions(base_url=server))
    frame = LLMExplainer(backend, LLMOptions(top_k=5)).explain(activations[:, :1], probing)
    assert frame.loc[0, "explanation"] == "zebra" and frame.loc[0, "kind"] == "text"
    simulator = LLMSimulator(backend, LLMOptions(batch_size=7))
    predicted = simulator.simulate("zebra", probing)
    np.testing.assert_array_equal(predicted, np.where(chosen == 0, 10.0, 1.0))
    assert len(FakeChat.requests) == 1 + int(np.ceil(60 / 7))


def test_unparseable_replies_are_retried_then_reported(server) -> None:
    probing = ProbingData.build(np.zeros((3, 1)), ["none"], contexts=["a zebra", "a cat", "a dog"])
    backend = OpenAICompatibleChat(LLMOptions(base_url=server))
    FakeChat.fail_next = 1
    assert LLMSimulator(backend, LLMOptions(retries=1)).simulate("zebra", probing).tolist() == [10.0, 1.0, 1.0]
    FakeChat.fail_next = 2
    with pytest.raises(LLMError, match="no prediction for input"):
        LLMSimulator(backend, LLMOptions(retries=1)).simulate("zebra", probing)


def test_unreachable_server_is_a_clear_error() -> None:
    backend = OpenAICompatibleChat(LLMOptions(base_url="http://127.0.0.1:9", timeout_s=2))
    with pytest.raises(LLMError, match="cannot reach"):
        backend.complete([{"role": "user", "content": "hi"}])


def test_parsers() -> None:
    assert parse_explanation("Explanation: 'striped animals'.") == "striped animals"
    assert parse_explanation("\nzebras\nmore text") == "zebras"
    np.testing.assert_array_equal(parse_predictions("1: 3\n2. 12\n 3) 0.5\nnoise", 3), [3.0, 10.0, 0.5])
    with pytest.raises(LLMError, match=r"\[2\]"):
        parse_predictions("1: 3\n3: 4", 3)
    np.testing.assert_array_equal(scale_to_ten(np.array([-1.0, 0.0, 2.5, 5.0])), [0, 0, 5, 10])
