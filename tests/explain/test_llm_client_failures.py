"""The chat client against servers that hang, answer HTTP errors, non-JSON or JSON without the reply, against a
missing API key, and against redirect loops, all on 127.0.0.1 (no network). Each test fails if the client's
matching safeguard is removed: a hung server would hang the call, a bad reply would pass as text."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar

import pytest

from neuroneval.explain import LLMOptions, OpenAICompatibleChat
from neuroneval.explain.llm_backend import MAX_REDIRECTS, LLMError, LLMRequestError
from tests.explain.fake_chat import FakeChat, RedirectingChat, StatusChat, serve_fake_chat

MESSAGES = [{"role": "user", "content": "1. zebra"}]
#: How long the test waits for a call that must give up after ``timeout_s`` = 0.5 s; a call still running then
#: has no working deadline (it would block forever on the silent server). A bound on a hang, not a speed check.
HANG_BOUND_S = 30.0


@contextmanager
def silent_server() -> Iterator[str]:
    """A TCP port on 127.0.0.1 that completes the handshake (the kernel's backlog) but never reads or answers."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.close()


class BodyChat(FakeChat):
    """Answers every POST with HTTP 200 and the raw ``body`` (set before use) as ``content_type``."""

    body: ClassVar[bytes] = b""
    content_type: ClassVar[str] = "application/json"

    def do_POST(self) -> None:
        self.record()
        self.send_response(200)
        self.send_header("Content-Type", BodyChat.content_type)
        self.send_header("Content-Length", str(len(BodyChat.body)))
        self.end_headers()
        self.wfile.write(BodyChat.body)


def complete(url: str, **options) -> str:
    return OpenAICompatibleChat(LLMOptions(base_url=url, **options)).complete(MESSAGES)


def test_a_server_that_never_answers_hits_the_timeout() -> None:
    outcome: dict[str, BaseException] = {}

    def call() -> None:
        try:
            complete(url, timeout_s=0.5, retries=0)
        except BaseException as error:
            outcome["error"] = error

    with silent_server() as url:
        caller = threading.Thread(target=call, daemon=True)
        caller.start()
        caller.join(HANG_BOUND_S)
        assert not caller.is_alive(), "the call to a silent server did not give up: no deadline"
    assert isinstance(outcome.get("error"), LLMRequestError)
    assert "did not answer within 0.5 s" in str(outcome["error"])


@pytest.mark.parametrize("status", [400, 401, 404, 500])
def test_an_http_error_is_an_error_naming_the_status_never_a_reply(status) -> None:
    with serve_fake_chat(StatusChat) as url:
        StatusChat.script = [(status, {})]
        with pytest.raises(LLMRequestError, match=rf"answered HTTP {status}: .*status {status}"):
            complete(url, retries=0)
    assert len(FakeChat.requests) == 1


@pytest.mark.parametrize(("body", "content_type"), [(b"<html>busy</html>", "text/html"), (b"\xff\xfe", "text/plain"),
                                                    (b'{"choices": [', "application/json")])
def test_a_reply_that_is_not_json_is_an_error(body, content_type) -> None:
    BodyChat.body, BodyChat.content_type = body, content_type
    with serve_fake_chat(BodyChat) as url, pytest.raises(LLMError, match="did not answer JSON"):
        complete(url)


@pytest.mark.parametrize("payload", [b"{}", b'{"choices": []}', b'{"choices": [{"text": "hi"}]}',
                                     b'{"choices": [{"message": {"role": "assistant"}}]}', b"[1, 2]"])
def test_json_without_choices_message_content_is_an_error(payload) -> None:
    BodyChat.body, BodyChat.content_type = payload, "application/json"
    with serve_fake_chat(BodyChat) as url, pytest.raises(LLMError, match=r"without choices\[0\]\.message\.content"):
        complete(url)


def test_a_non_text_content_is_an_error() -> None:
    BodyChat.body = b'{"choices": [{"message": {"content": 7}}]}'
    BodyChat.content_type = "application/json"
    with serve_fake_chat(BodyChat) as url, pytest.raises(LLMError, match="non-text message content: 7"):
        complete(url)


def test_a_well_formed_reply_is_returned_verbatim() -> None:
    BodyChat.body = b'{"choices": [{"message": {"role": "assistant", "content": "1: 10"}}]}'
    BodyChat.content_type = "application/json"
    with serve_fake_chat(BodyChat) as url:
        assert complete(url) == "1: 10"


def test_a_missing_api_key_is_an_error_before_any_request(monkeypatch) -> None:
    monkeypatch.delenv("TEST_LLM_MISSING_KEY", raising=False)
    with serve_fake_chat(FakeChat) as url, pytest.raises(LLMError, match=r"TEST_LLM_MISSING_KEY .* is not set"):
        complete(url, api_key_env="TEST_LLM_MISSING_KEY")
    assert FakeChat.requests == []


def test_the_api_key_is_sent_as_a_bearer_token(monkeypatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "secret")
    with serve_fake_chat(FakeChat) as url:
        complete(url, api_key_env="TEST_LLM_KEY")
    assert [request["auth"] for request in FakeChat.requests] == ["Bearer secret"]


def test_a_redirect_loop_within_the_origin_stops_after_max_redirects() -> None:
    with serve_fake_chat(RedirectingChat) as url:
        RedirectingChat.status, RedirectingChat.location = 307, "/v1/chat/completions"
        with pytest.raises(LLMRequestError, match=f"more than {MAX_REDIRECTS} redirects"):
            complete(url, retries=0)
    assert len(FakeChat.requests) == MAX_REDIRECTS + 1


def test_a_redirect_without_location_is_an_error() -> None:
    with serve_fake_chat(RedirectingChat) as url:
        RedirectingChat.status, RedirectingChat.location = 308, ""
        with pytest.raises(LLMRequestError, match="HTTP 308 without a Location"):
            complete(url, retries=0)
