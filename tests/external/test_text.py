"""A text corpus and local GPT-2 checkpoints → token stream, next-token concepts and units equal to a direct pass."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

from neuroneval import io
from neuroneval.external.config import dataset_spec, model_spec
from neuroneval.external.text_datasets import read_documents, special_token_ids, token_stream, tokenizer_vocabulary
from neuroneval.pipeline.external_steps import external_lm_activations, external_text_dataset
from tests.external.conftest import run_step
from tests.loaders.helpers import save_tiny_bpe_tokenizer

EXTRACTION = {"n_units": 8, "max_positions": 400, "seed": 0, "batch_size": 4}


@pytest.fixture(scope="module")
def text_tables(params: dict, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("text_tables")
    external = params["external"]
    outputs = {"tokens": root / "tokens.npy", "vocabulary": root / "vocabulary.json",
               "concepts": root / "labels.parquet"}
    run_step(external_text_dataset, output=outputs,
             params={"dataset": dataset_spec(external, "openwebtext"),
                     "tokenizer_model": model_spec(external, "gpt2_small"), "extraction": EXTRACTION},
             wildcards={"text_dataset": "openwebtext"})
    return outputs


def lm_table(params: dict, tables: dict[str, Path], model: str, output: Path) -> tuple:
    run_step(external_lm_activations, input={"tokens": tables["tokens"], "vocabulary": tables["vocabulary"]},
             output={"table": output},
             params={"model": model_spec(params["external"], model), "extraction": EXTRACTION,
                     "runtime": {"device": "cpu"}},
             wildcards={"text_dataset": "openwebtext", "external_lm": model})
    return io.read_activation_table(output)


def test_documents_are_read_in_order_and_joined_with_end_of_text(paper_tree: tuple[Path, dict]) -> None:
    folder = paper_tree[0] / "openwebtext"
    documents = list(read_documents(folder))
    assert len(documents) == 6
    assert documents[0] == (folder / "doc_000.txt").read_text()
    assert documents[-1] == json.loads((folder / "shard.jsonl").read_text().splitlines()[-1])["text"]
    tokenizer = AutoTokenizer.from_pretrained(paper_tree[0] / "checkpoints/gpt2", local_files_only=True)
    expected = []
    for document in documents:
        expected += tokenizer(document)["input_ids"] + [tokenizer.eos_token_id]
    np.testing.assert_array_equal(token_stream(documents, tokenizer, max_tokens=10**6), expected)
    np.testing.assert_array_equal(token_stream(iter(documents), tokenizer, max_tokens=100), expected[:100])
    assert special_token_ids(tokenizer) == [tokenizer.eos_token_id]


def test_bad_corpora_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text('{"text": "fine"}\n{"body": "no text"}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl line 2: expected a JSON object with a 'text' field"):
        list(read_documents(tmp_path / "bad.jsonl"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"no \.txt or \.jsonl files under .*empty"):
        list(read_documents(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match=r"text corpus .*nowhere does not exist"):
        list(read_documents(tmp_path / "nowhere"))


def test_text_concepts_follow_the_contract(paper_tree: tuple[Path, dict], text_tables: dict[str, Path]) -> None:
    concepts, metadata = io.read_concept_table(text_tables["concepts"])
    tokens = np.load(text_tables["tokens"])
    stream = json.loads(text_tables["vocabulary"].read_text())
    assert tokens.size == 600 and stream["tokenizer_model"] == "gpt2_small"
    assert len(concepts) == EXTRACTION["max_positions"] and concepts["input_id"].is_monotonic_increasing
    assert len(metadata["concepts"]) == EXTRACTION["n_units"]
    assert all(name.startswith("next:") for name in metadata["concepts"])
    assert "next:<|endoftext|>" not in metadata["concepts"]  # special tokens are never units
    vocabulary = stream["vocabulary"]
    positions = concepts["input_id"].to_numpy()
    for name in metadata["concepts"]:
        token_id = vocabulary.index(name.removeprefix("next:"))
        np.testing.assert_array_equal(concepts[name], tokens[positions + 1] == token_id)


@pytest.mark.parametrize("model_name", ["gpt2_small", "gpt2_xl"])
def test_next_token_units_equal_a_direct_forward_pass(params: dict, paper_tree: tuple[Path, dict],
                                                      text_tables: dict[str, Path], model_name: str,
                                                      tmp_path: Path) -> None:
    frame, metadata = lm_table(params, text_tables, model_name, tmp_path / "next_token.parquet")
    concepts, concept_metadata = io.read_concept_table(text_tables["concepts"])
    assert frame["input_id"].tolist() == concepts["input_id"].tolist()
    tokens = torch.from_numpy(np.load(text_tables["tokens"]))
    context = 32
    model = paper_tree[1][model_name]
    unit_ids = metadata["unit_token_ids"]
    expected = np.empty((len(frame), len(unit_ids)), dtype=np.float32)
    window_probabilities = {}  # each window of `context` tokens run on its own, once
    with torch.no_grad():
        for row, position in enumerate(frame["input_id"]):
            start = position // context * context
            if start not in window_probabilities:
                window = tokens[start : min(start + context, tokens.numel() - 1)]
                window_probabilities[start] = torch.softmax(model(input_ids=window[None]).logits[0].double(), dim=-1)
            expected[row] = window_probabilities[start][position - start, unit_ids].numpy()
    np.testing.assert_allclose(frame.drop(columns="input_id").to_numpy(), expected, atol=1e-6)
    assert [unit.replace("tok:", "next:") for unit in frame.columns[1:]] == concept_metadata["concepts"]
    assert metadata["unit_concepts"][frame.columns[1]] == [concept_metadata["concepts"][0]]
    assert (metadata["model"], metadata["layer"], metadata["context_length"]) == (model_name, "next_token", 32)


def test_a_model_with_another_vocabulary_is_refused(params: dict, text_tables: dict[str, Path],
                                                   tmp_path: Path) -> None:
    model_dir = tmp_path / "gpt2_other"
    vocab_size = save_tiny_bpe_tokenizer(model_dir)
    GPT2LMHeadModel(GPT2Config(vocab_size=vocab_size + 3, n_positions=32, n_embd=16, n_layer=1,
                               n_head=2)).save_pretrained(model_dir)
    other = {**params, "external": {**params["external"], "models": {
        **params["external"]["models"], "gpt2_other": {"family": "transformers_lm", "model_dir": str(model_dir)}}}}
    with pytest.raises(ValueError, match=r"tokenizer of external\.models\.gpt2_other differs from the one that cut "
                                         r"openwebtext \(external\.models\.gpt2_small\)"):
        lm_table(other, text_tables, "gpt2_other", tmp_path / "x.parquet")
    assert tokenizer_vocabulary(AutoTokenizer.from_pretrained(model_dir), vocab_size + 3)[-1] == \
        f"<unused:{vocab_size + 2}>"
