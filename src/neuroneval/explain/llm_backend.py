"""LLM explainers and simulators through any OpenAI-compatible chat server (vLLM, llama.cpp, Ollama, …).

:class:`OpenAICompatibleChat` posts ``{"model", "messages", "temperature", "max_tokens"}`` to
``<base_url>/v1/chat/completions`` with the standard library only and returns ``choices[0].message.content``.
Nothing depends on log-probabilities, which many servers and hosted APIs no longer return: the simulator asks
for a predicted activation 0–10 per input in plain text and parses it (paper 001 App. B.2's simulation, with
a language model as the simulator as in Bills et al. 2023).

* :class:`LLMExplainer`: shows the unit's top-activating inputs (``probing.contexts``) with activations scaled
  to 0–10 and asks for a short description; the reply's ``Explanation:`` line (else its first line) is the
  explanation (kind ``text``).
* :class:`LLMSimulator`: shows an explanation and a numbered batch of inputs and asks for lines ``<i>: <0-10>``;
  missing or malformed lines are an error naming them, after ``retries`` further attempts.
* :func:`llm_explanations`: the explainer's replies parsed into the explanation contract (a concept of the
  setting when the reply names one, :func:`concept_or_text`; else text), the workflow's ``llm`` method; LM units'
  contexts are the text before each position (:func:`position_contexts`).

The default workflow uses only the offline methods; these run only when a user points ``base_url`` at a server.
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import ipaddress
import json
import os
import random
import re
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from neuroneval.explain.base import ProbingData, as_activations, check_rows
from neuroneval.explain.explanation import Concept, Explanation, Text, explanation_frame, to_text
from neuroneval.explain.options import LLMOptions
from neuroneval.progress import progress_bar

EXPLAINER_SYSTEM = ("You explain what a single neuron of a neural network responds to. You see inputs with the "
                    "neuron's activation on a 0-10 scale. Answer with one line: 'Explanation: <a short phrase>'.")
SIMULATOR_SYSTEM = ("You predict how strongly a neuron activates on inputs, given an explanation of the neuron. "
                    "For every numbered input answer one line '<number>: <activation from 0 to 10>' and nothing "
                    "else.")


class LLMError(RuntimeError):
    """The chat server failed, or its reply could not be parsed."""


class LLMRequestError(LLMError):
    """The request failed (unreachable server, HTTP error, refused redirect, deadline); the client has already
    retried it where a retry can help, so :class:`LLMExplainer`/:class:`LLMSimulator` do not retry it again."""


class ChatBackend(Protocol):
    """Anything that turns chat messages into the assistant's reply text."""

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


#: HTTP statuses worth another attempt (rate limit, server-side failures); any other error status is final.
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})
#: Redirects the client follows, and only within the origin of ``base_url``: 307/308 keep a POST a POST.
FOLLOWED_REDIRECTS = frozenset({307, 308})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
MAX_REDIRECTS = 5
#: Exponential backoff before retry ``k`` (0-based): ``min(BACKOFF_CAP_S, BACKOFF_BASE_S·2^k)·(1 + u)/2``, u ~ U[0, 1).
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 30.0
#: The longest ``Retry-After`` wait honoured; a server asking for more is retried after this long.
RETRY_AFTER_CAP_S = 60.0


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` names this machine: ``localhost`` (or a name under ``.localhost``), 127.0.0.0/8 or ::1."""
    if not host:
        return False
    name = host.lower().rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def url_origin(url: str) -> tuple[str, str, int]:
    """The origin of an http(s) URL: (scheme, lower-case host, port with the scheme's default filled in)."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or (443 if scheme == "https" else 80)


def backoff_seconds(retry: int, uniform: float) -> float:
    """The wait before retry ``retry`` (0-based) without ``Retry-After``: exponential backoff with jitter,
    ``d·(1 + u)/2`` with ``d = min(BACKOFF_CAP_S, BACKOFF_BASE_S·2^retry)`` and ``u`` uniform in [0, 1), so the
    waits grow 1, 2, 4 … s (capped at 30 s) and concurrent clients spread over the upper half of each step."""
    return min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0 ** retry) * (1.0 + uniform) / 2.0


def retry_after_seconds(value: str | None, *, date: str | None = None, now: float | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, capped at :data:`RETRY_AFTER_CAP_S` (``None`` when absent or
    unreadable). Delay-seconds are read as they are; an HTTP date is read against the reply's ``Date`` header
    when it has one (so the two clocks need not agree), else against ``now`` (Unix seconds)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return min(float(text), RETRY_AFTER_CAP_S)
    try:
        when = email.utils.parsedate_to_datetime(text).timestamp()
        reference = email.utils.parsedate_to_datetime(date).timestamp() if date else now
    except (TypeError, ValueError, IndexError):
        return None
    if reference is None:
        return None
    return min(max(when - reference, 0.0), RETRY_AFTER_CAP_S)


class _Deadline(Exception):
    """The whole-request deadline passed."""


class OpenAICompatibleChat:
    """A client of ``POST <base_url>/v1/chat/completions`` (``base_url`` may already end in ``/v1``).

    Security and robustness (docs/explain.md §4):

    * an API key (``LLMOptions.api_key_env``) is sent only over ``https://``, or over ``http://`` to a loopback
      host (``localhost``, 127.0.0.0/8, ::1); anything else is refused when the client is built;
    * redirects are never followed automatically: a 307/308 within the origin of ``base_url`` is followed (with
      the key, the same POST); a redirect to another origin, or a 301/302/303 (which would turn the POST into a
      GET), is an error naming the target, so neither the key nor the prompt ever leaves the configured server;
    * a failed request is retried (at most ``LLMOptions.retries`` times) only on HTTP 429, 500, 502, 503, 504
      and on a refused/reset connection, after :func:`retry_after_seconds` when the server sends
      ``Retry-After``, else after :func:`backoff_seconds`; 400/401/403/404 and the like fail at once;
    * ``LLMOptions.timeout_s`` is one deadline for the whole call: connecting, every read, and the waits and
      attempts of the retries; a server that trickles its reply is cut off when it passes.

    Environment proxies (``HTTPS_PROXY``) are not used. ``sleep``, ``clock`` (monotonic seconds), ``wall_clock``
    (Unix seconds) and ``uniform`` (a U[0, 1) draw, the backoff's jitter) can be replaced, e.g. by tests.
    """

    def __init__(self, options: LLMOptions | None = None, *, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, wall_clock: Callable[[], float] = time.time,
                 uniform: Callable[[], float] = random.random) -> None:
        self.options = options or LLMOptions()
        base = self.options.base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self._sleep, self._clock, self._wall_clock, self._uniform = sleep, clock, wall_clock, uniform
        scheme, host, _ = url_origin(self.url)
        if self.options.api_key_env is not None and scheme != "https" and not is_loopback(host):
            raise LLMError(f"LLMOptions.base_url {self.options.base_url!r} is plain http:// to a host that is not "
                           f"loopback; the API key of {self.options.api_key_env} (LLMOptions.api_key_env) is sent "
                           "only over https:// or to localhost/127.0.0.0/8/::1")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.options.api_key_env is not None:
            key = os.environ.get(self.options.api_key_env)
            if not key:
                raise LLMError(f"environment variable {self.options.api_key_env} (LLMOptions.api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        """The assistant's reply to ``messages``; :class:`LLMRequestError` when the request fails (after the
        retries worth making) and :class:`LLMError` when the reply lacks ``choices[0].message.content``."""
        deadline = self._clock() + self.options.timeout_s
        headers = self._headers()
        body = json.dumps({"model": self.options.model, "messages": list(messages),
                           "temperature": self.options.temperature, "max_tokens": self.options.max_tokens})
        for retry in range(self.options.retries + 1):
            try:
                status, reply_headers, data = self._post(body.encode("utf-8"), headers, deadline)
            except _Deadline:
                raise LLMRequestError(
                    f"{self.url} did not answer within {self.options.timeout_s} s (LLMOptions.timeout_s, one "
                    "deadline over connecting, reading and retrying)") from None
            except (ConnectionError, http.client.IncompleteRead, http.client.BadStatusLine) as error:
                failure, wait = f"cannot reach {self.url}: {error!r}", backoff_seconds(retry, self._uniform())
            except OSError as error:
                raise LLMRequestError(f"cannot reach {self.url}: {error}") from error
            else:
                if 200 <= status < 300:
                    return self._content(data)
                failure = f"{self.url} answered HTTP {status}: {data[:300].decode('utf-8', 'replace')}"
                if status not in RETRYABLE_STATUSES:
                    raise LLMRequestError(failure)
                asked = retry_after_seconds(reply_headers.get("Retry-After"), date=reply_headers.get("Date"),
                                            now=self._wall_clock())
                wait = backoff_seconds(retry, self._uniform()) if asked is None else asked
            if retry == self.options.retries:
                raise LLMRequestError(f"{failure} (attempt {retry + 1} of {self.options.retries + 1}, "
                                      "LLMOptions.retries)")
            if self._clock() + wait >= deadline:
                raise LLMRequestError(f"{failure}; the next attempt, in {wait:.3g} s, would pass the "
                                      f"{self.options.timeout_s} s deadline (LLMOptions.timeout_s)")
            self._sleep(wait)
        raise AssertionError("unreachable")

    def _content(self, data: bytes) -> str:
        try:
            payload = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise LLMError(f"{self.url} did not answer JSON: {error}") from error
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise LLMError(f"{self.url} answered without choices[0].message.content: {str(payload)[:300]}") from error
        if not isinstance(content, str):
            raise LLMError(f"{self.url} answered a non-text message content: {content!r}")
        return content

    def _post(self, body: bytes, headers: dict[str, str], deadline: float) -> tuple[int, Any, bytes]:
        """One attempt: POST to :attr:`url`, following same-origin 307/308 redirects; (status, headers, body)."""
        url = self.url
        for _ in range(MAX_REDIRECTS + 1):
            status, reply_headers, data = self._exchange(url, body, headers, deadline)
            if status not in REDIRECT_STATUSES:
                return status, reply_headers, data
            location = reply_headers.get("Location")
            if not location:
                raise LLMRequestError(f"{url} answered HTTP {status} without a Location")
            target = urllib.parse.urljoin(url, location)
            if url_origin(target) != url_origin(self.url):
                raise LLMRequestError(
                    f"{url} redirects (HTTP {status}) to {target}, another origin; not followed, so the API key and "
                    "the prompt stay with LLMOptions.base_url: point base_url at the server that answers")
            if status not in FOLLOWED_REDIRECTS:
                raise LLMRequestError(f"{url} redirects (HTTP {status}) to {target}; only 307/308 redirects keep "
                                      "the POST, point LLMOptions.base_url at the server that answers")
            url = target
        raise LLMRequestError(f"{self.url}: more than {MAX_REDIRECTS} redirects")

    def _exchange(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> tuple[int, Any, bytes]:
        """One HTTP exchange that ends by ``deadline``: a watchdog shuts the socket down when it passes."""
        remaining = deadline - self._clock()
        if remaining <= 0:
            raise _Deadline
        parts = urllib.parse.urlsplit(url)
        connection_type = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        connection = connection_type(parts.hostname or "", parts.port, timeout=remaining)
        watchdog = threading.Timer(remaining, _shut_down, args=(connection,))
        watchdog.daemon = True
        watchdog.start()
        try:
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request("POST", path, body=body, headers=headers)
            response = connection.getresponse()
            chunks = []
            while chunk := response.read1(1 << 16):
                chunks.append(chunk)
                if self._clock() >= deadline:
                    raise _Deadline
            return response.status, response.headers, b"".join(chunks)
        except (OSError, http.client.HTTPException):
            if self._clock() >= deadline or watchdog.finished.is_set():
                raise _Deadline from None
            raise
        finally:
            watchdog.cancel()
            connection.close()


def _shut_down(connection: http.client.HTTPConnection) -> None:
    """Wake a read blocked on ``connection``'s socket (the deadline passed)."""
    if connection.sock is not None:
        with contextlib.suppress(OSError):
            connection.sock.shutdown(socket.SHUT_RDWR)


def scale_to_ten(values: np.ndarray) -> np.ndarray:
    """Activations on the 0–10 integer scale of the prompts: ``round(10·max(a, 0)/max(a))`` (0 if max ≤ 0)."""
    values = np.asarray(values, dtype=np.float64)
    top = values.max() if values.size else 0.0
    if top <= 0:
        return np.zeros(values.shape, dtype=np.int64)
    return np.rint(10.0 * np.clip(values, 0.0, None) / top).astype(np.int64)


def explainer_messages(contexts: Sequence[str], activations: np.ndarray) -> list[dict[str, str]]:
    """The explainer prompt: each top input on one line as ``<activation 0-10> | <input>``."""
    scaled = scale_to_ten(activations)
    lines = [f"{level} | {' '.join(str(text).split())}" for level, text in zip(scaled, contexts, strict=True)]
    user = "Top-activating inputs (activation | input):\n" + "\n".join(lines) + "\nWhat does the neuron respond to?"
    return [{"role": "system", "content": EXPLAINER_SYSTEM}, {"role": "user", "content": user}]


def parse_explanation(reply: str) -> str:
    """The text after ``Explanation:`` (case-insensitive), else the first non-empty line; quotes/period trimmed."""
    match = re.search(r"explanation\s*:\s*(.+)", reply, flags=re.IGNORECASE)
    line = match.group(1) if match else next((ln for ln in reply.splitlines() if ln.strip()), "")
    text = line.strip().strip("\"'`*. ")
    if not text:
        raise LLMError(f"no explanation in the reply {reply[:200]!r}")
    return text


def simulator_messages(explanation: str, contexts: Sequence[str]) -> list[dict[str, str]]:
    """The simulator prompt: the explanation, then the inputs numbered from 1."""
    lines = [f"{number}. {' '.join(str(text).split())}" for number, text in enumerate(contexts, start=1)]
    user = (f"Neuron explanation: {explanation}\nInputs:\n" + "\n".join(lines)
            + f"\nAnswer {len(lines)} lines '<number>: <activation 0-10>'.")
    return [{"role": "system", "content": SIMULATOR_SYSTEM}, {"role": "user", "content": user}]


def parse_predictions(reply: str, n: int) -> np.ndarray:
    """Predicted activations 1..n from lines ``<i>: <value>`` (also ``<i>. value``, ``<i> - value``), clipped to
    [0, 10]; an input without a line, or with two different values, is an error naming it."""
    found: dict[int, float] = {}
    for number, value in re.findall(r"(?m)^\s*(?:input\s*)?(\d+)\s*[:.)=-]\s*(-?\d+(?:\.\d+)?)", reply):
        index = int(number)
        if 1 <= index <= n:
            if index in found and found[index] != float(value):
                raise LLMError(f"input {index} got two predictions in the reply {reply[:200]!r}")
            found[index] = float(value)
    missing = [i for i in range(1, n + 1) if i not in found]
    if missing:
        raise LLMError(f"no prediction for input(s) {missing[:10]} in the reply {reply[:200]!r}")
    return np.clip(np.array([found[i] for i in range(1, n + 1)], dtype=np.float64), 0.0, 10.0)


def _with_retries(options: LLMOptions, attempt: Any, *args: Any) -> Any:
    """``attempt(*args)``, asked again up to ``options.retries`` times when its reply cannot be parsed; a failed
    request (:class:`LLMRequestError`) is final here, since the client already retried what was worth it."""
    last: LLMError | None = None
    for _ in range(options.retries + 1):
        try:
            return attempt(*args)
        except LLMRequestError:
            raise
        except LLMError as error:
            last = error
    assert last is not None
    raise last


class LLMExplainer:
    """:class:`neuroneval.explain.base.Explainer` that asks a chat model to describe top-activating inputs."""

    name = "llm"

    def __init__(self, backend: ChatBackend, options: LLMOptions | None = None) -> None:
        self.backend = backend
        self.options = options or LLMOptions()

    def explain(self, activations: Any, probing: ProbingData, *,
                unit_names: Sequence[str] | None = None) -> pd.DataFrame:
        matrix, names = as_activations(activations, unit_names)
        check_rows(matrix, probing)
        contexts = probing.require("contexts", "the LLM explainer")
        top = np.argsort(-matrix, axis=0, kind="stable")[:min(self.options.top_k, matrix.shape[0])]
        explanations = []
        for unit in progress_bar(range(len(names)), desc="LLM explanations", unit="unit"):
            rows = top[:, unit]
            messages = explainer_messages([contexts[i] for i in rows], matrix[rows, unit])
            text = _with_retries(self.options, self._ask, messages)
            explanations.append(Text(text))
        return explanation_frame(names, explanations)

    def _ask(self, messages: list[dict[str, str]]) -> str:
        return parse_explanation(self.backend.complete(messages))


class LLMSimulator:
    """:class:`neuroneval.explain.base.Simulator` that asks a chat model for a 0–10 activation per input."""

    def __init__(self, backend: ChatBackend, options: LLMOptions | None = None) -> None:
        self.backend = backend
        self.options = options or LLMOptions()

    def simulate(self, explanation: Explanation | str, probing: ProbingData,
                 inputs: Sequence[int] | None = None) -> np.ndarray:
        contexts = probing.require("contexts", "the LLM simulator")
        rows = np.arange(len(contexts)) if inputs is None else np.asarray(inputs, dtype=np.int64)
        text = explanation if isinstance(explanation, str) else to_text(explanation)
        predictions = np.empty(rows.size, dtype=np.float64)
        for start in range(0, rows.size, self.options.batch_size):
            batch = [contexts[i] for i in rows[start:start + self.options.batch_size]]
            messages = simulator_messages(text, batch)
            predictions[start:start + len(batch)] = _with_retries(self.options, self._ask, messages, len(batch))
        return predictions

    def _ask(self, messages: list[dict[str, str]], n: int) -> np.ndarray:
        return parse_predictions(self.backend.complete(messages), n)


def _normalised(text: str) -> str:
    """Lower-case words of a name or reply, joined by single spaces (``class:Red_Circle`` → ``class red circle``)."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def concept_or_text(reply: str, concept_names: Sequence[str]) -> Explanation:
    """The explanation contract of an LLM reply: the :class:`Concept` it names when the reply is one of the
    setting's concepts (its full name, ``class:zebra``, or its value, ``zebra``; case, ``_`` and punctuation
    ignored), else :class:`Text`."""
    wanted = _normalised(reply)
    for name in concept_names:
        if wanted and wanted in (_normalised(name), _normalised(name.partition(":")[2])):
            return Concept(name)
    return Text(reply)


def position_contexts(token_ids: np.ndarray, doc_offsets: np.ndarray, vocabulary: Sequence[str],
                      positions: np.ndarray, n_tokens: int) -> list[str]:
    """The text an LM unit sees at each stream position: the last ``n_tokens`` tokens of its document up to and
    including the position (next-token units predict the token after it), decoded with ``vocabulary``."""
    positions = np.asarray(positions, dtype=np.int64)
    if positions.size and (positions.min() < 0 or positions.max() >= len(token_ids)):
        raise ValueError(f"positions run outside the {len(token_ids)} tokens of the text")
    starts = np.asarray(doc_offsets)[np.searchsorted(doc_offsets, positions, side="right") - 1]
    first = np.maximum(starts, positions - n_tokens + 1)
    return [" ".join(vocabulary[token] for token in token_ids[begin:end + 1])
            for begin, end in zip(first, positions, strict=True)]


def llm_explanations(activations: Any, probing: ProbingData, options: LLMOptions, *,
                     unit_names: Sequence[str] | None = None, backend: ChatBackend | None = None) -> pd.DataFrame:
    """:class:`LLMExplainer` on ``probing.contexts`` through ``backend`` (default: the OpenAI-compatible server of
    ``options``), each reply parsed into a concept of ``probing.concept_names`` or a text (:func:`concept_or_text`)."""
    frame = LLMExplainer(backend or OpenAICompatibleChat(options), options).explain(
        activations, probing, unit_names=unit_names)
    parsed = [concept_or_text(text, probing.concept_names) for text in frame["explanation"]]
    return explanation_frame(frame["unit"].tolist(), parsed)
