"""``neuroneval record`` and :mod:`neuroneval.activations.record`: recorded tables equal hand-computed forwards.

Oracles: a manual NumPy/torch forward of the same weights (factory models, TorchScript, torch.export, image
folders, DataLoaders), a hand-written forward hook on the same padded batch (per-token LM units), the SAE encoder
written in NumPy from SAELens' formula (ReLU, JumpReLU, TopK), and an uninterrupted run (resume).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.datasets import load_digits
from torch import nn

from neuroneval import io
from neuroneval.activations.record import RecordOptions, record
from neuroneval.activations.record_inputs import array_source, iterable_source, text_source
from neuroneval.activations.record_models import RecordModel, load_record_model
from neuroneval.activations.sae import load_sae
from neuroneval.cli import main

FACTORY = "tests.activations.test_record:digits_mlp"
CNN_FACTORY = "tests.activations.test_record:digits_cnn"
WORDS = ["<eos>", "<unk>", *(f"w{index}" for index in range(30))]


def digits_mlp(hidden: int = 12) -> nn.Module:
    """A 64 → hidden → 10 MLP for sklearn's 8×8 digits (the factory the tests import by path)."""
    return nn.Sequential(OrderedDict(hidden=nn.Linear(64, hidden), act=nn.ReLU(), out=nn.Linear(hidden, 10)))


def digits_cnn(channels: int = 3) -> nn.Module:
    """A small CNN for (3, 8, 8) images: ``conv`` → ReLU ``act`` → mean pool → ``fc``."""
    return nn.Sequential(OrderedDict(conv=nn.Conv2d(3, channels, 3, padding=1), act=nn.ReLU(),
                                     pool=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(), fc=nn.Linear(channels, 10)))


class Interrupting(nn.Module):
    """The MLP behind a forward that raises on call ``raise_at`` (a kill after ``raise_at - 1`` batches)."""

    def __init__(self, raise_at: int | None = None) -> None:
        super().__init__()
        self.net = digits_mlp()
        self.calls = 0
        self.raise_at = raise_at

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        if self.calls == self.raise_at:
            raise RuntimeError("killed")
        return self.net(x)


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> dict:
    """sklearn's digits as a (1797, 64) float32 .npy in [0, 1], labels, and an MLP state dict (seed 1)."""
    root = tmp_path_factory.mktemp("digits")
    data = load_digits()
    features = (data.data / 16.0).astype(np.float32)
    np.save(root / "digits.npy", features)
    torch.manual_seed(1)
    model = digits_mlp()
    torch.save(model.state_dict(), root / "mlp.pt")
    return {"root": root, "x": features, "y": data.target, "state": model.state_dict()}


def manual_mlp(state: dict, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hidden ReLU units, logits) of the MLP, in float64 NumPy."""
    weights = {key: value.double().numpy() for key, value in state.items()}
    hidden = np.maximum(x @ weights["hidden.weight"].T + weights["hidden.bias"], 0)
    return hidden, hidden @ weights["out.weight"].T + weights["out.bias"]


def run_cli(*arguments: str) -> int:
    return main(["record", "--no-progress", *map(str, arguments)])


def values_of(path: Path) -> tuple[np.ndarray, np.ndarray, dict]:
    frame, metadata = io.read_activation_table(path)
    return frame[io.ID_COLUMN].to_numpy(), io.value_matrix(frame), metadata


def test_factory_with_state_dict_equals_a_manual_forward(digits, tmp_path) -> None:
    out = tmp_path / "out"
    assert run_cli("--factory", FACTORY, "--weights", digits["root"] / "mlp.pt", "--array",
                   digits["root"] / "digits.npy", "--layer", "act", "--layer", "logits", "--layer", "softmax",
                   "--batch-size", 500, "--out", out) == 0
    hidden, logits = manual_mlp(digits["state"], digits["x"].astype(np.float64))
    ids, act, metadata = values_of(out / "act.parquet")
    np.testing.assert_array_equal(ids, np.arange(len(digits["x"])))
    np.testing.assert_allclose(act, hidden, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(values_of(out / "logits.parquet")[1], logits, rtol=1e-5, atol=1e-5)
    softmax = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(values_of(out / "softmax.parquet")[1], softmax / softmax.sum(1, keepdims=True),
                               rtol=1e-5, atol=1e-6)
    frame, _ = io.read_activation_table(out / "act.parquet")
    assert list(frame.columns[1:4]) == ["act.0", "act.1", "act.2"]
    assert metadata["layer"] == "act" and metadata["pooling"] == "mean" and metadata["kind"] == "activation"
    assert metadata["model"]["sha256"] == io_sha256(digits["root"] / "mlp.pt")
    assert metadata["dataset"]["sha256"] == io_sha256(digits["root"] / "digits.npy")
    assert metadata["n_inputs"] == len(digits["x"]) and "neuroneval_version" in metadata
    assert not list(out.glob(".record-*")), "the shard folder is removed once the tables are assembled"


def io_sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_torchscript_and_torch_export_give_the_factory_tables(digits, tmp_path) -> None:
    model = digits_mlp()
    model.load_state_dict(digits["state"])
    model.eval()
    torch.jit.save(torch.jit.script(model), tmp_path / "mlp.ts")
    exported = torch.export.export(model, (torch.zeros(2, 64),), dynamic_shapes=({0: torch.export.Dim.DYNAMIC},))
    torch.export.save(exported, tmp_path / "mlp.pt2")
    common = ["--array", digits["root"] / "digits.npy", "--batch-size", 256]
    assert run_cli("--factory", FACTORY, "--weights", digits["root"] / "mlp.pt", *common, "--layer", "act",
                   "--layer", "logits", "--out", tmp_path / "factory") == 0
    assert run_cli("--torchscript", tmp_path / "mlp.ts", *common, "--layer", "logits", "--out",
                   tmp_path / "script") == 0
    assert run_cli("--export", tmp_path / "mlp.pt2", *common, "--layer", "act", "--out", tmp_path / "export") == 0
    np.testing.assert_array_equal(values_of(tmp_path / "script" / "logits.parquet")[1],
                                  values_of(tmp_path / "factory" / "logits.parquet")[1])
    np.testing.assert_allclose(values_of(tmp_path / "export" / "act.parquet")[1],
                               values_of(tmp_path / "factory" / "act.parquet")[1], rtol=1e-6, atol=1e-6)


def test_a_torchscript_layer_is_refused_with_the_reason(digits, tmp_path, capsys) -> None:
    torch.jit.save(torch.jit.script(digits_mlp()), tmp_path / "mlp.ts")
    assert run_cli("--torchscript", tmp_path / "mlp.ts", "--array", digits["root"] / "digits.npy", "--layer",
                   "act", "--out", tmp_path / "out") == 2
    assert "takes no forward hooks" in capsys.readouterr().err


def test_an_x_y_dataloader_is_recorded_with_its_labels(digits, tmp_path) -> None:
    dataset = torch.utils.data.TensorDataset(torch.from_numpy(digits["x"]), torch.from_numpy(digits["y"]))
    loader = torch.utils.data.DataLoader(dataset, batch_size=300, shuffle=False)
    model = digits_mlp()
    model.load_state_dict(digits["state"])
    result = record(model, iterable_source(loader, keep_labels=True, name="digits loader"), tmp_path,
                    RecordOptions(layers=("act",), progress=False))
    assert result.n_inputs == len(digits["x"]) and result.computed == len(loader)
    hidden, _ = manual_mlp(digits["state"], digits["x"].astype(np.float64))
    np.testing.assert_allclose(values_of(result.tables["act"])[1], hidden, rtol=1e-5, atol=1e-5)
    labels = pd.read_csv(result.side_files["labels.csv"])
    np.testing.assert_array_equal(labels["input_id"], np.arange(len(digits["y"])))
    np.testing.assert_array_equal(labels["label"], digits["y"])


def test_an_image_folder_equals_the_manual_forward_of_its_pixels(tmp_path) -> None:
    from PIL import Image

    images = (load_digits().images[:40] * 255 / 16).astype(np.uint8)
    folder = tmp_path / "images"
    for index, image in enumerate(images):
        (folder / f"class{index % 3}").mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(folder / f"class{index % 3}" / f"{index:03d}.png")
    torch.manual_seed(2)
    cnn = digits_cnn()
    torch.save(cnn.state_dict(), tmp_path / "cnn.pt")
    assert run_cli("--factory", CNN_FACTORY, "--weights", tmp_path / "cnn.pt", "--images", folder, "--layer", "act",
                   "--pooling", "max", "--batch-size", 16, "--out", tmp_path / "out") == 0
    inputs = pd.read_csv(tmp_path / "out" / "inputs.csv")
    expected_files = sorted(f"class{index % 3}/{index:03d}.png" for index in range(40))
    assert inputs["file"].tolist() == expected_files and inputs["input_id"].tolist() == list(range(40))
    order = [int(Path(name).stem) for name in expected_files]
    pixels = torch.from_numpy(np.repeat(images[order][:, None], 3, axis=1).astype(np.float32) / 255.0)
    with torch.no_grad():
        expected = torch.relu(cnn.conv(pixels)).amax(dim=(2, 3)).numpy()
    np.testing.assert_allclose(values_of(tmp_path / "out" / "act.parquet")[1], expected, rtol=1e-5, atol=1e-6)


def test_resume_after_a_kill_computes_only_the_rest_and_gives_the_same_bytes(digits, tmp_path) -> None:
    options = RecordOptions(layers=("net.act", "logits"), batch_size=100, progress=False)
    source = array_source(digits["root"] / "digits.npy", batch_size=100)
    n_batches = source.n_batches
    torch.manual_seed(3)
    killed = Interrupting(raise_at=6)
    state = killed.state_dict()
    with pytest.raises(RuntimeError, match="killed"):
        record(killed, source, tmp_path / "resumed", options)
    assert len(list((tmp_path / "resumed").glob(".record-*/batch-*.json"))) == 5
    rerun = Interrupting()
    rerun.load_state_dict(state)
    result = record(rerun, source, tmp_path / "resumed", options)
    assert (result.resumed, result.computed, rerun.calls) == (5, n_batches - 5, n_batches - 5)
    fresh = Interrupting()
    fresh.load_state_dict(state)
    record(fresh, source, tmp_path / "fresh", options)
    for name in ("net.act", "logits"):
        assert (tmp_path / "resumed" / f"{name}.parquet").read_bytes() == (tmp_path / "fresh" / f"{name}.parquet"
                                                                           ).read_bytes()


def test_a_changed_batch_is_recomputed_on_resume(digits, tmp_path) -> None:
    options = RecordOptions(layers=("act",), batch_size=500, progress=False)
    model = digits_mlp()
    batches = [torch.from_numpy(digits["x"][:500]), torch.from_numpy(digits["x"][500:900])]
    with pytest.raises(ValueError, match="batch 1 is a scalar"):
        record(model, iterable_source([batches[0], torch.tensor(1.0)]), tmp_path, options)
    result = record(model, iterable_source([batches[0] * 2, batches[1]]), tmp_path, options)
    assert (result.resumed, result.computed) == (0, 2)
    with torch.no_grad():
        expected = model.act(model.hidden(torch.cat([batches[0] * 2, batches[1]]))).numpy()
    np.testing.assert_allclose(values_of(result.tables["act"])[1], expected, rtol=1e-6, atol=1e-6)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> dict:
    """A 2-layer GPT-2-shaped model with random weights and a local word-level tokenizer, saved, and a corpus."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from neuroneval.models.lm import word_level_tokenizer

    root = tmp_path_factory.mktemp("lm")
    config = GPT2Config(vocab_size=len(WORDS), n_positions=32, n_layer=2, n_embd=16, n_head=2, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(4)
    GPT2LMHeadModel(config).save_pretrained(root / "model")
    word_level_tokenizer(WORDS).save_pretrained(root / "model")
    rng = np.random.default_rng(5)
    lines = [" ".join(rng.choice(WORDS[2:], size=rng.integers(3, 15))) for _ in range(11)]
    (root / "corpus.txt").write_text("\n".join([*lines[:5], "", *lines[5:]]) + "\n")
    return {"root": root, "model": root / "model", "corpus": root / "corpus.txt", "lines": lines}


def hooked_forward(model_dir: Path, lines: list[str], layers: list[str], context_length: int) -> dict:
    """Per-token outputs of ``layers`` by a hand-written hook: one padded batch of all lines, gathered per token."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    ids = [tokenizer(line)["input_ids"][:context_length] for line in lines]
    width = max(map(len, ids))
    input_ids = torch.tensor([row + [0] * (width - len(row)) for row in ids])
    mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in ids])
    seen = {}
    modules = dict(model.named_modules())
    handles = [modules[layer].register_forward_hook(
        lambda _m, _i, output, layer=layer: seen.__setitem__(layer, output[0] if isinstance(output, tuple) else output))
        for layer in layers]
    with torch.no_grad():
        model(input_ids=input_ids, attention_mask=mask)
    for handle in handles:
        handle.remove()
    return {layer: np.concatenate([seen[layer][row, :len(tokens)].numpy() for row, tokens in enumerate(ids)])
            for layer in layers} | {"ids": ids}


def test_lm_hidden_neurons_and_residual_stream_per_token_equal_a_hand_hook(tiny_lm, tmp_path) -> None:
    layers = ["transformer.h.0.mlp.act", "transformer.h.1"]
    assert run_cli("--hf-model", tiny_lm["model"], "--text", tiny_lm["corpus"], "--layer", layers[0], "--layer",
                   layers[1], "--batch-size", 4, "--context-length", 10, "--out", tmp_path / "out") == 0
    expected = hooked_forward(tiny_lm["model"], tiny_lm["lines"], layers, 10)
    for layer in layers:
        ids, values, metadata = values_of(tmp_path / "out" / f"{layer}.parquet")
        np.testing.assert_allclose(values, expected[layer], rtol=1e-5, atol=1e-5)
        assert metadata["pooling"] == "per_token" and metadata["dataset"]["n_documents"] == 11
    assert values_of(tmp_path / "out" / f"{layers[0]}.parquet")[1].shape[1] == 64  # 4 × n_embd hidden neurons
    tokens = pd.read_csv(tmp_path / "out" / "tokens.csv", keep_default_na=False)
    lengths = [len(row) for row in expected["ids"]]
    assert tokens["input_id"].tolist() == list(range(sum(lengths))) and tokens["input_id"].tolist() == ids.tolist()
    assert tokens["document"].tolist() == list(np.repeat(np.arange(11), lengths))
    assert tokens["token_id"].tolist() == [token for row in expected["ids"] for token in row]
    words = tiny_lm["lines"][1].split()
    second = tokens[tokens["document"] == 1]
    assert second["token"].tolist() == words[:10]
    assert second["context"].iloc[3] == " ".join(words[:3]) and second["context"].iloc[0] == ""


@pytest.mark.parametrize("sampling", ["first", "random"])
def test_max_positions_keeps_the_first_or_a_seeded_sample(tiny_lm, sampling) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_lm["model"], local_files_only=True)
    full = text_source(tiny_lm["corpus"], tokenizer, batch_size=3, context_length=10)
    capped = text_source(tiny_lm["corpus"], tokenizer, batch_size=3, context_length=10, max_positions=20,
                         position_sampling=sampling, seed=7)
    all_ids = np.concatenate([batch.input_ids for batch in full.batches()])
    kept = np.concatenate([batch.input_ids for batch in capped.batches()])
    assert kept.size == 20 and np.all(np.diff(kept) > 0) and np.isin(kept, all_ids).all()
    if sampling == "first":
        np.testing.assert_array_equal(kept, all_ids[:20])
    else:
        np.testing.assert_array_equal(kept, np.sort(np.random.default_rng(7).choice(all_ids.size, 20, replace=False)))


def write_sae(folder: Path, architecture: str, d_in: int, d_sae: int, *, seed: int, legacy: bool = False) -> dict:
    """An SAE in SAELens' saved layout with random weights; returns the NumPy weights and config."""
    from safetensors.numpy import save_file

    rng = np.random.default_rng(seed)
    weights = {"W_enc": rng.normal(size=(d_in, d_sae)).astype(np.float32),
               "b_enc": rng.normal(scale=0.5, size=d_sae).astype(np.float32),
               "W_dec": rng.normal(size=(d_sae, d_in)).astype(np.float32),
               "b_dec": rng.normal(scale=0.5, size=d_in).astype(np.float32)}
    config = {"d_in": d_in, "d_sae": d_sae, "dtype": "float32", "device": "cpu", "apply_b_dec_to_input": True,
              "normalize_activations": "none", "reshape_activations": "none", "architecture": architecture,
              "metadata": {"hook_name": "blocks.0.hook_mlp_out"}}
    if architecture == "jumprelu":
        weights["threshold"] = rng.uniform(0.0, 1.0, size=d_sae).astype(np.float32)
    if architecture == "topk":
        config["k"] = 3
    if legacy:
        del config["architecture"]
        config["activation_fn"] = "topk" if architecture == "topk" else "relu"
        config["activation_fn_kwargs"] = {"k": config.pop("k")} if architecture == "topk" else {}
    folder.mkdir(parents=True)
    save_file(weights, str(folder / "sae_weights.safetensors"))
    (folder / "cfg.json").write_text(json.dumps(config))
    return {**weights, "config": config}


def numpy_features(sae: dict, x: np.ndarray, architecture: str) -> np.ndarray:
    """SAELens' encoder in NumPy: h = (x − b_dec) W_enc + b_enc, then ReLU / JumpReLU / TopK."""
    hidden = (x.astype(np.float64) - sae["b_dec"]) @ sae["W_enc"] + sae["b_enc"]
    if architecture == "standard":
        return np.maximum(hidden, 0)
    if architecture == "jumprelu":
        return np.where(hidden > sae["threshold"], np.maximum(hidden, 0), 0)
    k = sae["config"].get("k") or sae["config"]["activation_fn_kwargs"]["k"]
    features = np.zeros_like(hidden)
    top = np.argsort(-hidden, axis=1)[:, :k]
    rows = np.arange(len(hidden))[:, None]
    features[rows, top] = np.maximum(hidden[rows, top], 0)
    return features


@pytest.mark.parametrize(("architecture", "legacy"), [("standard", False), ("jumprelu", False), ("topk", False),
                                                      ("topk", True)])
def test_sae_features_per_token_equal_the_encoder_in_numpy(tiny_lm, tmp_path, architecture, legacy) -> None:
    layer = "transformer.h.0"
    sae = write_sae(tmp_path / "sae", architecture, 16, 40, seed=8, legacy=legacy)
    assert run_cli("--hf-model", tiny_lm["model"], "--text", tiny_lm["corpus"], "--layer", layer, "--sae",
                   tmp_path / "sae", "--batch-size", 5, "--out", tmp_path / "out") == 0
    _, residual, _ = values_of(tmp_path / "out" / f"{layer}.parquet")
    _, features, metadata = values_of(tmp_path / "out" / f"{layer}.sae.parquet")
    assert features.shape == (len(residual), 40)
    np.testing.assert_allclose(features, numpy_features(sae, residual, architecture), rtol=1e-4, atol=1e-4)
    if architecture == "topk":
        assert ((features > 0).sum(axis=1) <= 3).all()
    assert metadata["sae"]["architecture"] == architecture and metadata["layer"] == f"{layer}.sae"
    frame, _ = io.read_activation_table(tmp_path / "out" / f"{layer}.sae.parquet")
    assert frame.columns[1] == f"{layer}.sae.0"


def test_sae_on_pooled_vision_units_and_its_errors(digits, tmp_path) -> None:
    sae = write_sae(tmp_path / "sae", "standard", 12, 20, seed=9)
    model = digits_mlp()
    model.load_state_dict(digits["state"])
    result = record(model, array_source(digits["root"] / "digits.npy", batch_size=400), tmp_path / "out",
                    RecordOptions(layers=("act",), progress=False), sae=load_sae(tmp_path / "sae"))
    hidden, _ = manual_mlp(digits["state"], digits["x"].astype(np.float64))
    np.testing.assert_allclose(values_of(result.tables["act.sae"])[1], numpy_features(sae, hidden, "standard"),
                               rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="reads 12-dimensional activations, the recorded layer gives 10"):
        record(model, array_source(digits["root"] / "digits.npy", batch_size=400), tmp_path / "bad",
               RecordOptions(layers=("out",), progress=False), sae=load_sae(tmp_path / "sae"))
    (tmp_path / "sae" / "cfg.json").write_text(json.dumps({**sae["config"], "architecture": "gated"}))
    with pytest.raises(ValueError, match=r"cfg.json: architecture 'gated' is not supported"):
        load_sae(tmp_path / "sae")
    with pytest.raises(FileNotFoundError, match=r"cfg\.json does not exist"):
        load_sae(tmp_path)


def test_cli_errors_name_the_layer_the_factory_and_the_inputs(digits, tmp_path, capsys) -> None:
    array = ["--array", digits["root"] / "digits.npy", "--out", tmp_path / "out"]
    assert run_cli("--factory", FACTORY, "--layer", "hiden", *array) == 2
    assert "unknown layer 'hiden'; closest: ['hidden']" in capsys.readouterr().err
    assert run_cli("--factory", "tests.activations.test_record:no_such_model", "--layer", "act", *array) == 2
    error = capsys.readouterr().err
    assert "tests.activations.test_record:no_such_model" in error and "does not exist" in error
    assert run_cli("--factory", "no_such_package.models:build", "--layer", "act", *array) == 2
    assert "cannot import the module 'no_such_package.models'" in capsys.readouterr().err
    assert run_cli("--factory", FACTORY, "--weights", tmp_path / "missing.pt", "--layer", "act", *array) == 2
    assert "missing.pt does not exist" in capsys.readouterr().err
    assert run_cli("--factory", FACTORY, "--factory-kwargs", '{"hidden": 5}', "--weights",
                   digits["root"] / "mlp.pt", "--layer", "act", *array) == 2
    assert "mlp.pt do not match" in capsys.readouterr().err
    assert run_cli("--factory", FACTORY, "--layer", "act", "--out", tmp_path / "out") == 2
    assert "give exactly one of --images, --array, --text" in capsys.readouterr().err
    assert run_cli("--layer", "act", *array) == 2
    assert "give exactly one of --factory" in capsys.readouterr().err
    assert run_cli("--factory", FACTORY, "--layer", "act", "--pooling", "median", *array) == 2
    assert "pooling must be one of" in capsys.readouterr().err


def test_in_memory_models_and_loaded_specs_describe_themselves() -> None:
    model = digits_mlp()
    wrapped = RecordModel.from_module(model, name="my mlp")
    assert {key: wrapped.description[key] for key in ("model", "family")} == {"model": "my mlp", "family": "in_memory"}
    with torch.no_grad():
        model.hidden.bias[0] += 1
    assert RecordModel.from_module(model, name="my mlp").description["sha256"] != wrapped.description["sha256"]
    with pytest.raises(ValueError, match="a model spec needs 'family'"):
        load_record_model({"family": "keras"})
    with pytest.raises(FileNotFoundError, match=r"path .*nowhere\.pt2 does not exist"):
        load_record_model({"family": "torch_export", "path": "nowhere.pt2"})


def test_a_text_folder_and_a_saved_dataset_give_the_documents_of_the_text_file(tiny_lm, tmp_path, capsys) -> None:
    import pyarrow as pa

    folder = tmp_path / "docs"
    folder.mkdir()
    for index, line in enumerate(tiny_lm["lines"]):
        (folder / f"doc{index:02d}.txt").write_text(line)
    saved = tmp_path / "saved"
    saved.mkdir()
    halves = [tiny_lm["lines"][:6], tiny_lm["lines"][6:]]
    for position, half in enumerate(halves):
        table = pa.table({"id": list(range(len(half))), "body": half})
        with pa.OSFile(str(saved / f"data-{position:05d}-of-00002.arrow"), "wb") as sink, \
                pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
    (saved / "state.json").write_text(json.dumps({"_data_files": [{"filename": f"data-{position:05d}-of-00002.arrow"}
                                                                  for position in range(2)], "_split": "train"}))
    layer = ["--layer", "transformer.h.0.mlp.act", "--hf-model", tiny_lm["model"]]
    assert run_cli(*layer, "--text", tiny_lm["corpus"], "--out", tmp_path / "file") == 0
    assert run_cli(*layer, "--text", folder, "--out", tmp_path / "folder") == 0
    assert run_cli(*layer, "--text", saved, "--text-column", "body", "--out", tmp_path / "dataset") == 0
    reference = values_of(tmp_path / "file" / "transformer.h.0.mlp.act.parquet")[1]
    for name in ("folder", "dataset"):
        np.testing.assert_array_equal(values_of(tmp_path / name / "transformer.h.0.mlp.act.parquet")[1], reference)
        assert (tmp_path / name / "tokens.csv").read_text() == (tmp_path / "file" / "tokens.csv").read_text()
    assert run_cli(*layer, "--text", saved, "--out", tmp_path / "bad") == 2
    assert "no column 'text'" in capsys.readouterr().err
    assert run_cli(*layer, "--text", folder, "--context-length", 33, "--out", tmp_path / "bad") == 2
    assert "context_length 33 exceeds the model's 32 positions" in capsys.readouterr().err


def test_a_torchvision_spec_and_a_transformers_vision_model_record_images(tmp_path) -> None:
    import torchvision
    from PIL import Image
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    rng = np.random.default_rng(10)
    folder = tmp_path / "images"
    folder.mkdir()
    pictures = rng.integers(0, 256, size=(5, 20, 20, 3), dtype=np.uint8)
    for index, picture in enumerate(pictures):
        Image.fromarray(picture).save(folder / f"{index}.png")
    torch.manual_seed(11)
    resnet = torchvision.models.resnet18(num_classes=3).eval()
    torch.save(resnet.state_dict(), tmp_path / "r18.pth")
    spec = {"family": "torchvision", "arch": "resnet18", "num_classes": 3, "weights_path": str(tmp_path / "r18.pth"),
            "image_transform": {"resize_size": 16, "crop_size": 16}}
    assert run_cli("--model-spec", json.dumps(spec), "--images", folder, "--layer", "layer4", "--layer", "logits",
                   "--out", tmp_path / "resnet") == 0
    preprocess = load_record_model(spec).preprocess
    batch = torch.stack([preprocess(Image.open(folder / f"{index}.png")) for index in range(5)])
    with torch.no_grad():
        logits = resnet(batch).numpy()
    np.testing.assert_allclose(values_of(tmp_path / "resnet" / "logits.parquet")[1], logits, rtol=1e-4, atol=1e-5)
    assert values_of(tmp_path / "resnet" / "layer4.parquet")[1].shape == (5, 512)

    torch.manual_seed(12)
    vit = ViTModel(ViTConfig(image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                             intermediate_size=32)).eval()
    vit.save_pretrained(tmp_path / "vit")
    processor = ViTImageProcessor(size={"height": 16, "width": 16})
    processor.save_pretrained(tmp_path / "vit")
    block = next(name for name, _ in vit.named_modules() if name in ("layers.0", "encoder.layer.0"))
    assert run_cli("--hf-model", tmp_path / "vit", "--hf-modality", "vision", "--images", folder, "--layer", block,
                   "--pooling", "max", "--out", tmp_path / "vit-out") == 0
    pixels = processor(images=[Image.open(folder / f"{index}.png").convert("RGB") for index in range(5)],
                       return_tensors="pt")["pixel_values"]
    seen = {}
    handle = dict(vit.named_modules())[block].register_forward_hook(
        lambda _m, _i, output: seen.__setitem__("out", output[0] if isinstance(output, tuple) else output))
    with torch.no_grad():
        vit(pixel_values=pixels)
    handle.remove()
    np.testing.assert_allclose(values_of(tmp_path / "vit-out" / f"{block}.parquet")[1],
                               seen["out"].amax(dim=1).numpy(), rtol=1e-5, atol=1e-5)


def test_transformers_weights_that_would_be_reinitialised_are_refused(tmp_path, capsys) -> None:
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    config = ViTConfig(image_size=16, patch_size=4, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                       intermediate_size=32)
    ViTModel(config, add_pooling_layer=False).save_pretrained(tmp_path / "vit")
    ViTImageProcessor(size={"height": 16, "width": 16}).save_pretrained(tmp_path / "vit")
    with pytest.raises(ValueError, match=r"do not match ViTModel .*missing_keys.*pooler"):
        load_record_model({"family": "transformers", "model_dir": str(tmp_path / "vit"), "modality": "vision"})
