"""transformers language models: a one-layer GPT-2 and a byte-level BPE tokenizer saved locally, loaded offline."""

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file
from transformers import GPT2Config, GPT2LMHeadModel

from neuroneval.models.loaders import load_model

from .helpers import save_tiny_bpe_tokenizer


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[GPT2LMHeadModel, Path]:
    model_dir = tmp_path_factory.mktemp("gpt2")
    vocab_size = save_tiny_bpe_tokenizer(model_dir)
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=vocab_size, n_positions=32, n_embd=32, n_layer=1, n_head=2,
                        bos_token_id=vocab_size - 1, eos_token_id=vocab_size - 1)
    model = GPT2LMHeadModel(config).eval()
    model.save_pretrained(model_dir)
    return model, model_dir


def test_gpt2_round_trip(gpt2_dir: tuple[GPT2LMHeadModel, Path]) -> None:
    original, model_dir = gpt2_dir
    loaded = load_model({"family": "transformers_lm", "model_dir": str(model_dir)})
    input_ids = loaded.preprocess(" the cat the")
    assert input_ids.tolist() == loaded.tokenizer(" the cat the")["input_ids"]
    assert loaded.tokenizer.convert_ids_to_tokens(input_ids.tolist())[0] == "Ġthe"
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(input_ids[None]).logits, original(input_ids[None]).logits,
                                   rtol=0, atol=0)
    assert not loaded.module.training
    assert loaded.layers == ("transformer.ln_f", "lm_head", "transformer.h.0")


def test_gpt2_hub_layout_without_lm_head(gpt2_dir: tuple[GPT2LMHeadModel, Path], tmp_path: Path) -> None:
    """The released GPT-2 files hold the base model (``h.0…``, ``wte``) only; the head is tied to ``wte``."""
    original, model_dir = gpt2_dir
    hub_layout = tmp_path / "hub_layout"
    original.transformer.save_pretrained(hub_layout)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (hub_layout / name).write_bytes((model_dir / name).read_bytes())
    config = json.loads((hub_layout / "config.json").read_text())
    (hub_layout / "config.json").write_text(json.dumps({**config, "architectures": ["GPT2LMHeadModel"]}))
    loaded = load_model({"family": "transformers_lm", "model_dir": hub_layout})
    input_ids = loaded.preprocess(" the the")[None]
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(input_ids).logits, original(input_ids).logits, rtol=0, atol=0)


def test_gpt2_tokenizer_from_vocab_and_merges_files(gpt2_dir: tuple[GPT2LMHeadModel, Path], tmp_path: Path) -> None:
    """Older snapshots carry only vocab.json + merges.txt; they must give the same ids as tokenizer.json."""
    _, model_dir = gpt2_dir
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    for name in ("config.json", "model.safetensors"):
        (legacy / name).write_bytes((model_dir / name).read_bytes())
    bpe = json.loads((model_dir / "tokenizer.json").read_text())["model"]
    (legacy / "vocab.json").write_text(json.dumps(bpe["vocab"]))
    (legacy / "merges.txt").write_text("#version: 0.2\n" + "".join(f"{first} {second}\n"
                                                                    for first, second in bpe["merges"]))
    reference = load_model({"family": "transformers_lm", "model_dir": model_dir})
    loaded = load_model({"family": "transformers_lm", "model_dir": legacy})
    text = " the cat, the hat"
    assert loaded.preprocess(text).tolist() == reference.preprocess(text).tolist()
    assert len(loaded.tokenizer) == len(reference.tokenizer)


def test_gpt2_errors_name_the_directory(gpt2_dir: tuple[GPT2LMHeadModel, Path], tmp_path: Path) -> None:
    _, model_dir = gpt2_dir
    with pytest.raises(FileNotFoundError, match="is not a saved model directory"):
        load_model({"family": "transformers_lm", "model_dir": tmp_path})
    wider = tmp_path / "wider"
    wider.mkdir()
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json"):
        (wider / name).write_bytes((model_dir / name).read_bytes())
    config = json.loads((model_dir / "config.json").read_text())
    (wider / "config.json").write_text(json.dumps({**config, "n_embd": 64}))
    with pytest.raises(ValueError, match=r"language model in .*wider"):
        load_model({"family": "transformers_lm", "model_dir": wider})
    partial = tmp_path / "partial"
    partial.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        (partial / name).write_bytes((model_dir / name).read_bytes())
    tensors = load_file(model_dir / "model.safetensors")
    del tensors["transformer.h.0.ln_1.weight"]
    save_file(tensors, partial / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"weights in .*partial do not match .*transformer.h.0.ln_1.weight"):
        load_model({"family": "transformers_lm", "model_dir": partial})
    no_tokenizer = tmp_path / "no_tokenizer"
    no_tokenizer.mkdir()
    for name in ("model.safetensors", "config.json"):
        (no_tokenizer / name).write_bytes((model_dir / name).read_bytes())
    with pytest.raises(FileNotFoundError, match=r"no usable tokenizer files in .*no_tokenizer"):
        load_model({"family": "transformers_lm", "model_dir": no_tokenizer})
