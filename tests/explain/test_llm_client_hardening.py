"""The chat client's security and robustness against hostile servers on 127.0.0.1 (tests/explain/fake_chat.py):
no API key to another origin or over plain http to a remote host, retries only where they can help, with
backoff and ``Retry-After`` read through an injected clock (no real waiting), and one deadline per request."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.explain import LLMOptions, LLMSimulator, OpenAICompatibleChat, ProbingData
from neuroneval.explain.llm_backend import LLMError
from tests.explain.fake_chat import FakeChat, RedirectingChat, StatusChat, TricklingChat, serve_fake_chat

MESSAGES = [{"role": "user", "content": "1. zebra\n2. cat"}]


class FakeTime:
    """A monotonic clock that only ``sleep`` moves; records every wait."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


def fake_client(base_url: str, fake: FakeTime, *, uniform: float = 0.25, **options) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(LLMOptions(base_url=base_url, **options), sleep=fake.sleep, clock=fake.clock,
                                uniform=lambda: uniform)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_never_carries_the_key(status, monkeypatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "secret")
    with serve_fake_chat(FakeChat) as other, serve_fake_chat(RedirectingChat, reset=False) as redirecting:
        RedirectingChat.status, RedirectingChat.location = status, other + "/v1/chat/completions"
        chat = OpenAICompatibleChat(LLMOptions(base_url=redirecting, api_key_env="TEST_LLM_KEY"))
        with pytest.raises(LLMError, match="another origin"):
            chat.complete(MESSAGES)
        other_port = int(other.rsplit(":", 1)[1])
        assert [r for r in FakeChat.requests if r["port"] == other_port] == []
        assert [r["auth"] for r in FakeChat.requests] == ["Bearer secret"]


def test_a_same_origin_307_is_followed_with_the_key_and_the_post(monkeypatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "secret")
    with serve_fake_chat(RedirectingChat) as redirecting:
        RedirectingChat.status, RedirectingChat.location = 307, "/final/v1/chat/completions"
        chat = OpenAICompatibleChat(LLMOptions(base_url=redirecting, api_key_env="TEST_LLM_KEY"))
        assert chat.complete(MESSAGES) == "1: 10\n2: 1"
    assert [(r["method"], r["path"], r["auth"]) for r in FakeChat.requests] == [
        ("POST", "/v1/chat/completions", "Bearer secret"), ("POST", "/final/v1/chat/completions", "Bearer secret")]
    assert FakeChat.requests[1]["body"]["messages"] == MESSAGES


def test_a_same_origin_302_is_an_error_not_a_get(monkeypatch) -> None:
    with serve_fake_chat(RedirectingChat) as redirecting:
        RedirectingChat.status, RedirectingChat.location = 302, "/final/v1/chat/completions"
        with pytest.raises(LLMError, match=r"HTTP 302.*307/308"):
            OpenAICompatibleChat(LLMOptions(base_url=redirecting)).complete(MESSAGES)
    assert [r["method"] for r in FakeChat.requests] == ["POST"]


@pytest.mark.parametrize("base_url", ["http://example.com", "http://10.0.0.5:8000/v1", "http://127.0.0.1.nip.io"])
def test_a_key_over_plain_http_to_a_remote_host_is_refused(base_url, monkeypatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "secret")
    with pytest.raises(LLMError, match=r"plain http://.*LLMOptions.api_key_env"):
        OpenAICompatibleChat(LLMOptions(base_url=base_url, api_key_env="TEST_LLM_KEY")).complete(MESSAGES)


@pytest.mark.parametrize("base_url", ["https://example.com", "http://localhost:8000", "http://127.0.0.2:8000",
                                      "http://[::1]:8000", "http://LOCALHOST"])
def test_a_key_goes_over_https_or_to_loopback(base_url) -> None:
    OpenAICompatibleChat(LLMOptions(base_url=base_url, api_key_env="TEST_LLM_KEY"))


def test_plain_http_without_a_key_is_allowed() -> None:
    OpenAICompatibleChat(LLMOptions(base_url="http://example.com"))


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_client_errors_are_not_retried(status) -> None:
    fake = FakeTime()
    probing = ProbingData.build(np.zeros((2, 1)), ["none"], contexts=["a zebra", "a cat"])
    with serve_fake_chat(StatusChat) as url:
        StatusChat.script = [(status, {})] * 5
        backend = fake_client(url, fake, retries=2)
        with pytest.raises(LLMError, match=f"HTTP {status}"):
            LLMSimulator(backend, LLMOptions(retries=2)).simulate("zebra", probing)
    assert len(FakeChat.requests) == 1 and fake.waits == []


def test_retryable_statuses_wait_as_retry_after_says_else_back_off() -> None:
    fake = FakeTime()
    with serve_fake_chat(StatusChat) as url:
        StatusChat.script = [(503, {"Retry-After": "7"}), (429, {"Retry-After": "date+3"}), (500, {}),
                             (502, {"Retry-After": "3600"}), (504, {})]
        reply = fake_client(url, fake, retries=5, timeout_s=1000.0).complete(MESSAGES)
    assert reply == "1: 10\n2: 1"
    assert len(FakeChat.requests) == 6
    # Retry-After 7 s; an HTTP date 3 s after the reply's Date; backoff min(30, 2^k)·(1 + 0.25)/2 for retry k = 2;
    # Retry-After 3600 capped at 60 s; backoff for retry k = 4: 16·0.625.
    np.testing.assert_allclose(fake.waits, [7.0, 3.0, 4 * 0.625, 60.0, 16 * 0.625])


def test_retries_stop_after_options_retries_and_the_simulator_does_not_multiply_them() -> None:
    fake = FakeTime()
    probing = ProbingData.build(np.zeros((2, 1)), ["none"], contexts=["a zebra", "a cat"])
    with serve_fake_chat(StatusChat) as url:
        StatusChat.script = [(503, {})] * 10
        with pytest.raises(LLMError, match=r"HTTP 503.*attempt 3 of 3"):
            LLMSimulator(fake_client(url, fake, retries=2), LLMOptions(retries=2)).simulate("zebra", probing)
    assert len(FakeChat.requests) == 3
    np.testing.assert_allclose(fake.waits, [1 * 0.625, 2 * 0.625])


def test_connection_errors_are_retried_with_backoff() -> None:
    fake = FakeTime()
    with pytest.raises(LLMError, match="cannot reach"):
        fake_client("http://127.0.0.1:9", fake, uniform=0.0, retries=3).complete(MESSAGES)
    np.testing.assert_allclose(fake.waits, [0.5, 1.0, 2.0])


def test_a_wait_past_the_deadline_gives_up_at_once() -> None:
    fake = FakeTime()
    with serve_fake_chat(StatusChat) as url:
        StatusChat.script = [(429, {"Retry-After": "50"})]
        with pytest.raises(LLMError, match=r"HTTP 429.*would pass the 20.0 s deadline"):
            fake_client(url, fake, retries=3, timeout_s=20.0).complete(MESSAGES)
    assert fake.waits == [] and len(FakeChat.requests) == 1


def test_a_trickling_server_hits_the_whole_request_deadline() -> None:
    with serve_fake_chat(TricklingChat) as url:
        with pytest.raises(LLMError, match=r"did not answer within 0.5 s"):
            OpenAICompatibleChat(LLMOptions(base_url=url, timeout_s=0.5, retries=0)).complete(MESSAGES)
