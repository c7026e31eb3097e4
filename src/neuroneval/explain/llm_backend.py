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

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
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


class ChatBackend(Protocol):
    """Anything that turns chat messages into the assistant's reply text."""

    def complete(self, messages: Sequence[dict[str, str]]) -> str: ...


class OpenAICompatibleChat:
    """A client of ``POST <base_url>/v1/chat/completions`` (``base_url`` may already end in ``/v1``)."""

    def __init__(self, options: LLMOptions | None = None) -> None:
        self.options = options or LLMOptions()
        base = self.options.base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if self.options.api_key_env is not None:
            key = os.environ.get(self.options.api_key_env)
            if not key:
                raise LLMError(f"environment variable {self.options.api_key_env} (LLMOptions.api_key_env) is not set")
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        body = json.dumps({"model": self.options.model, "messages": list(messages),
                           "temperature": self.options.temperature, "max_tokens": self.options.max_tokens})
        request = urllib.request.Request(self.url, data=body.encode("utf-8"), headers=self._headers(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.options.timeout_s) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            detail = error.read().decode("utf-8", "replace")[:300]
            raise LLMError(f"{self.url} answered HTTP {error.code}: {detail}") from error
        except (urllib.error.URLError, TimeoutError, OSError) as error:
            raise LLMError(f"cannot reach {self.url}: {error}") from error
        except json.JSONDecodeError as error:
            raise LLMError(f"{self.url} did not answer JSON: {error}") from error
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as error:
            raise LLMError(f"{self.url} answered without choices[0].message.content: {str(payload)[:300]}") from error
        if not isinstance(content, str):
            raise LLMError(f"{self.url} answered a non-text message content: {content!r}")
        return content


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
    last: LLMError | None = None
    for _ in range(options.retries + 1):
        try:
            return attempt(*args)
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
