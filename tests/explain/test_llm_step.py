"""The opt-in ``llm`` method of the explanation benchmark: the ``explain_setting`` step against the fake chat server
on 127.0.0.1 (``server`` fixture), the reply parsed into the contract, and the LM contexts it shows."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from neuroneval import io
from neuroneval.explain import Concept, LLMOptions, Text, read_explanations
from neuroneval.explain.llm_backend import LLMError, concept_or_text, position_contexts
from neuroneval.explain_catalogue import method_options, method_tables
from neuroneval.pipeline.explain_steps import explain_setting
from tests.explain.fake_chat import FakeChat

WORDS = ["zebra", "cat", "dog", "tree"]
NAMES = ["c:zebra", "c:cat", "c:dog"]
SETTING = {"dataset": "vision_probe", "units": [{"model": "m", "layer": "out"}],
           "concepts": {"source": "labels", "prefixes": ["c:"]}}


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """120 inputs, each captioned with one of four words; units 0-2 fire on a concept's word, unit 3 on 'tree'
    (no concept of the setting)."""
    root = tmp_path_factory.mktemp("llm_toy")
    rng = np.random.default_rng(0)
    chosen = rng.integers(0, len(WORDS), 120)
    ids = np.arange(120) * 2
    labels = np.stack([(chosen == t).astype(np.float32) for t in range(len(NAMES))], axis=1)
    activations = np.stack([(chosen == k) * 4.0 + rng.random(120) for k in range(len(WORDS))], axis=1)
    units = [f"u{k}" for k in range(len(WORDS))]
    io.write_activation_table(root / "out.parquet", pd.DataFrame(
        {"input_id": ids, **{unit: activations[:, k] for k, unit in enumerate(units)}}),
        metadata={"model": "m", "layer": "out", "dataset": "vision_probe"})
    io.write_concept_table(root / "labels.parquet", pd.DataFrame(
        {"input_id": ids, **{name: labels[:, t] for t, name in enumerate(NAMES)}}), metadata={"source": "labels"})
    (root / "world").mkdir()
    pd.DataFrame({"input_id": ids, "caption": [f"a photo of a {WORDS[w]}" for w in chosen]}).to_csv(
        root / "world" / "captions.csv", index=False)
    return root


def _job(toy: Path, llm: dict) -> SimpleNamespace:
    explain = {"methods": {"llm": llm}, "max_length": 3, "random_seed": 0}
    return SimpleNamespace(
        input=SimpleNamespace(activations=[str(toy / "out.parquet")], concepts=str(toy / "labels.parquet"),
                              world=str(toy / "world")),
        output=SimpleNamespace(explanations=str(toy / "explanations" / "llm.csv")),
        params=SimpleNamespace(setting=SETTING, spec={"methods": ["llm"]}, options=method_options(explain, "llm"),
                               holdout_fraction=0.25, seed=0, batch_size=64, pooling="mean"),
        wildcards=SimpleNamespace(setting="toy_setting", method="llm"), threads=1)


def test_the_llm_step_shows_top_captions_and_writes_concepts_or_text(toy: Path, server: str) -> None:
    explain_setting(_job(toy, {"base_url": server, "model": "tiny", "top_k": 5, "max_tokens": 32}))
    frame = read_explanations(toy / "explanations" / "llm.csv")
    assert frame["unit"].tolist() == ["u0", "u1", "u2", "u3"]
    assert frame["explanation"].tolist() == [*NAMES, "tree"]
    assert frame["kind"].tolist() == ["concept", "concept", "concept", "text"]
    assert len(FakeChat.requests) == 4
    for word, request in zip(WORDS, FakeChat.requests, strict=True):
        body = request["body"]
        assert request["path"] == "/v1/chat/completions"
        assert body["model"] == "tiny" and body["max_tokens"] == 32
        lines = re.findall(r"(?m)^\d+ \| .*$", body["messages"][-1]["content"])
        assert len(lines) == 5 and all(line.endswith(f"a photo of a {word}") for line in lines)
    assert method_tables("llm") == (1,)


def test_an_unreachable_server_names_the_url_and_the_setting(toy: Path) -> None:
    with pytest.raises(LLMError, match=r"toy_setting.*http://127\.0\.0\.1:9.*cannot reach"):
        explain_setting(_job(toy, {"base_url": "http://127.0.0.1:9", "timeout_s": 2, "retries": 0}))


def test_replies_become_a_concept_only_when_they_name_one() -> None:
    names = ["class:red_circle", "next:the", "attr:has_wing_color::blue"]
    assert concept_or_text("Red circle", names) == Concept("class:red_circle")
    assert concept_or_text("class:red_circle", names) == Concept("class:red_circle")
    assert concept_or_text("the", names) == Concept("next:the")
    assert concept_or_text("has wing color blue", names) == Concept("attr:has_wing_color::blue")
    assert concept_or_text("red circles and squares", names) == Text("red circles and squares")


def test_lm_contexts_stop_at_the_document_start() -> None:
    vocabulary = ["<eos>", "<unk>", "a", "b", "c"]
    tokens = np.array([2, 3, 4, 0, 4, 3, 2, 0])
    offsets = np.array([0, 4, 8])
    assert position_contexts(tokens, offsets, vocabulary, np.array([1, 2, 5, 6]), 2) == [
        "a b", "b c", "c b", "b a"]
    assert position_contexts(tokens, offsets, vocabulary, np.array([4]), 16) == ["c"]
    with pytest.raises(ValueError, match="outside"):
        position_contexts(tokens, offsets, vocabulary, np.array([8]), 2)
    assert LLMOptions.from_params({"context_tokens": 4}).context_tokens == 4
