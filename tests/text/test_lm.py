"""Tiny GPT-2-style language models: training lowers the loss, saving and reloading offline keeps the logits."""

import os
import stat
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import AutoTokenizer

from neuroneval.models.lm import (
    LMTraining,
    build_lm,
    evaluation_windows,
    load_lm,
    load_training_report,
    next_token_loss,
    perplexity,
    save_lm,
    train_lm,
    training_windows,
    unigram_perplexity,
    window_logits,
)
from neuroneval.worlds.text import TextWorld

from .conftest import CONTEXT


def test_training_lowers_the_held_out_loss(tiny_lm, train_world: TextWorld, probe_world: TextWorld) -> None:
    model, report, _ = tiny_lm
    vocabulary_size = len(train_world.vocabulary)
    untrained = build_lm(vocabulary_size, size="tiny", context_length=CONTEXT, seed=0).eval()
    held_out = torch.from_numpy(training_windows(probe_world.token_ids, CONTEXT)[:64])
    with torch.no_grad():
        before, after = float(next_token_loss(untrained, held_out)), float(next_token_loss(model, held_out))
    assert before == pytest.approx(np.log(vocabulary_size), abs=0.3)
    assert after < before - 1.0
    assert report["n_steps"] > 0 and report["final_loss"] < before and report["n_layer"] == 1
    assert report["n_embd"] == 16 and report["train_seconds"] > 0


def test_training_is_deterministic(train_world: TextWorld) -> None:
    tokens = train_world.token_ids[:3000]
    kwargs = {"size": "tiny", "context_length": CONTEXT, "training": LMTraining(batch_size=16, epochs=1, seed=5)}
    first, _ = train_lm(tokens, len(train_world.vocabulary), **kwargs)
    second, _ = train_lm(tokens, len(train_world.vocabulary), **kwargs)
    for (name, a), (_, b) in zip(first.state_dict().items(), second.state_dict().items(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)


def test_save_load_round_trip_gives_identical_logits(tiny_lm, probe_world: TextWorld, tmp_path: Path) -> None:
    model, report, directory = tiny_lm
    loaded = load_lm(directory)
    assert not loaded.training
    inputs = torch.from_numpy(training_windows(probe_world.token_ids, CONTEXT)[:8, :-1])
    with torch.no_grad():
        torch.testing.assert_close(loaded(input_ids=inputs).logits, model(input_ids=inputs).logits, rtol=0, atol=0)
    assert load_training_report(directory) == pytest.approx(report)
    # Saving over an existing model replaces it whole.
    other = build_lm(len(probe_world.vocabulary), size="tiny", context_length=CONTEXT, seed=9)
    save_lm(other, directory.parent / "other")
    save_lm(other, directory.parent / "other")
    assert load_training_report(directory.parent / "other") == {}
    assert not list(directory.parent.glob(".*"))


def test_untied_model_trains_its_own_output_layer_and_reloads_untied(train_world: TextWorld, tmp_path: Path) -> None:
    tokens = train_world.token_ids[:2000]
    tied, _ = train_lm(tokens, len(train_world.vocabulary), size="tiny", context_length=CONTEXT,
                       training=LMTraining(epochs=1, batch_size=8, seed=0))
    untied, report = train_lm(tokens, len(train_world.vocabulary), size="tiny", context_length=CONTEXT,
                              tie_embeddings=False, training=LMTraining(epochs=1, batch_size=8, seed=0))
    assert tied.lm_head.weight.data_ptr() == tied.transformer.wte.weight.data_ptr()
    assert untied.lm_head.weight.data_ptr() != untied.transformer.wte.weight.data_ptr()
    assert not torch.equal(untied.lm_head.weight, untied.transformer.wte.weight)  # both trained, apart
    assert report["tie_embeddings"] is False
    save_lm(untied, tmp_path / "untied", report=report)
    loaded = load_lm(tmp_path / "untied")
    assert not loaded.config.tie_word_embeddings
    torch.testing.assert_close(loaded.lm_head.weight, untied.lm_head.weight, rtol=0, atol=0)
    torch.testing.assert_close(loaded.transformer.wte.weight, untied.transformer.wte.weight, rtol=0, atol=0)


def test_saved_tokenizer_matches_the_world_tokenizer(tiny_lm, probe_world: TextWorld) -> None:
    _, _, directory = tiny_lm
    tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
    text = probe_world.text(0) + " zzzqx"
    assert tokenizer(text)["input_ids"] == probe_world.tokenizer.encode(text).tolist()
    assert tokenizer.decode(probe_world.document(0).tolist()) == probe_world.text(0)


def test_saved_model_loads_through_the_transformers_lm_loader(tiny_lm, probe_world: TextWorld) -> None:
    from neuroneval.models.loaders import load_model

    model, _, directory = tiny_lm
    loaded = load_model({"family": "transformers_lm", "model_dir": str(directory)})
    input_ids = loaded.preprocess(probe_world.text(1))
    assert input_ids.tolist() == probe_world.document(1).tolist()
    with torch.no_grad():
        torch.testing.assert_close(loaded.module(input_ids[None, :CONTEXT]).logits,
                                   model(input_ids=input_ids[None, :CONTEXT]).logits, rtol=0, atol=0)


def test_evaluation_windows_cover_every_position_once() -> None:
    bounds = evaluation_windows(50, 16)
    assert bounds.tolist() == [[0, 16], [16, 32], [32, 48], [48, 49]]
    covered = np.concatenate([np.arange(start, stop) for start, stop in bounds])
    np.testing.assert_array_equal(covered, np.arange(49))


def test_perplexity_is_the_exponentiated_mean_cross_entropy(tiny_lm, probe_world: TextWorld) -> None:
    model, _, _ = tiny_lm
    tokens = probe_world.token_ids[: 5 * CONTEXT + 7]
    losses = []
    with torch.no_grad():
        for start in range(0, tokens.size - 1, CONTEXT):
            stop = min(start + CONTEXT, tokens.size - 1)
            logits = model(input_ids=torch.from_numpy(tokens[start:stop].astype(np.int64))[None]).logits[0]
            losses.append(F.cross_entropy(logits, torch.from_numpy(tokens[start + 1 : stop + 1].astype(np.int64)),
                                          reduction="none"))
    expected = float(torch.exp(torch.cat(losses).double().mean()))
    assert perplexity(model, tokens, context_length=CONTEXT, batch_size=2) == pytest.approx(expected, rel=1e-5)
    positions = np.concatenate([p.ravel() for p, _ in window_logits(model, tokens, context_length=CONTEXT,
                                                                     batch_size=2)])
    np.testing.assert_array_equal(positions, np.arange(tokens.size - 1))


def test_tiny_lm_beats_untrained_and_unigram_is_exact_on_uniform_counts(tiny_lm, train_world, probe_world) -> None:
    model, _, _ = tiny_lm
    vocabulary_size = len(train_world.vocabulary)
    assert perplexity(model, probe_world.token_ids, context_length=CONTEXT) < 0.5 * vocabulary_size
    uniform = np.repeat(np.arange(10), 3)
    assert unigram_perplexity(uniform, uniform, 10) == pytest.approx(10.0)
    with pytest.raises(ValueError, match="token ids must lie"):
        train_lm(np.array([0, 1, 12, 3] * 20), 10, size="tiny", context_length=CONTEXT)
    with pytest.raises(ValueError, match="size must be one of"):
        build_lm(10, size="huge")


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_a_saved_model_folder_has_the_modes_of_any_other_output(tmp_path: Path, umask: int) -> None:
    model = build_lm(12, size="tiny", context_length=CONTEXT, seed=0)
    previous = os.umask(umask)
    try:
        directory = save_lm(model, tmp_path / "lm", vocabulary=["<eos>", "<unk>", *map(str, range(10))],
                            report={"steps": 1})
        save_lm(model, tmp_path / "lm")
        plain_folder, plain_file = tmp_path / "plain", tmp_path / "plain.txt"
        plain_folder.mkdir()
        plain_file.write_text("x")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(directory.stat().st_mode) == stat.S_IMODE(plain_folder.stat().st_mode) == 0o777 & ~umask
    modes = {stat.S_IMODE(path.stat().st_mode) for path in directory.iterdir()}
    assert modes == {stat.S_IMODE(plain_file.stat().st_mode)} == {0o666 & ~umask}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["lm", "plain", "plain.txt"]
