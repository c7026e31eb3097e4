"""Tiny GPT-2-style language models trained on the embedded text world (paper 000 settings 7–10 in miniature).

The models are ``transformers`` ``GPT2LMHeadModel`` s built from a ``GPT2Config`` (never from a hub name), trained
with the project's seeded loop (:func:`neuroneval.models.training.fit`: AdamW, one-cycle schedule), saved with
``save_pretrained`` next to a word-level tokenizer (``tokenizer.json``) and reloaded offline with
``from_pretrained(directory, local_files_only=True)`` — so a saved model also loads through the
``transformers_lm`` family of :func:`neuroneval.models.loaders.load_model`, like a real GPT-2 checkpoint.

Evaluation windows: the token stream is cut into consecutive windows of ``context_length`` tokens and every
position ``i`` (but the last token) predicts token ``i + 1`` from the window's tokens up to ``i``; the last
window may be shorter. :func:`window_logits` yields these, :func:`perplexity` and the next-token activation
tables (:mod:`neuroneval.activations.lm`) read them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

from neuroneval.models.training import TrainingOptions, fit

# Architectures by name: "small" and "large" stand in for GPT-2 small and XL; "tiny" is for tests.
LM_SIZES: dict[str, dict[str, int]] = {
    "tiny": {"n_layer": 1, "n_embd": 16, "n_head": 2},
    "small": {"n_layer": 2, "n_embd": 64, "n_head": 4},
    "large": {"n_layer": 3, "n_embd": 96, "n_head": 4},
}
EOS_TOKEN, UNK_TOKEN = "<eos>", "<unk>"
REPORT_FILE = "training_report.json"


def lm_config(vocab_size: int, *, size: str = "small", context_length: int = 64, eos_token_id: int = 0,
              tie_embeddings: bool = True) -> GPT2Config:
    """The ``GPT2Config`` of a named size (:data:`LM_SIZES`), without dropout.

    ``tie_embeddings`` (default, as GPT-2) shares the input embedding and the output layer; untied, the output
    row of a rare token is trained only as an output: on the text world's train split this lifts the share of
    next-token units whose own token is their top concept by correlation from 0.75 to 0.77 (small LM, 5 epochs)
    and from 0.76 to 0.78 (large LM), at the same cost per step.
    """
    if size not in LM_SIZES:
        raise ValueError(f"size must be one of {sorted(LM_SIZES)}, got {size!r}")
    if vocab_size < 2 or context_length < 2:
        raise ValueError(f"need vocab_size >= 2 and context_length >= 2, got {vocab_size}, {context_length}")
    return GPT2Config(vocab_size=vocab_size, n_positions=context_length, **LM_SIZES[size], resid_pdrop=0.0,
                      embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=eos_token_id, eos_token_id=eos_token_id,
                      tie_word_embeddings=tie_embeddings)


def build_lm(vocab_size: int, *, size: str = "small", context_length: int = 64, seed: int = 0,
             tie_embeddings: bool = True) -> GPT2LMHeadModel:
    """A freshly initialised model (weights drawn after ``torch.manual_seed(seed)``; see :func:`lm_config`)."""
    config = lm_config(vocab_size, size=size, context_length=context_length, tie_embeddings=tie_embeddings)
    torch.manual_seed(seed)
    return GPT2LMHeadModel(config)


def training_windows(token_ids: np.ndarray, context_length: int) -> np.ndarray:
    """(W, context_length + 1) int64 consecutive windows of the stream, each sharing its last token with the next.

    Window ``w`` is ``token_ids[w·L : w·L + L + 1]``: its first ``L`` tokens are the input, the last ``L`` the
    targets, so every token but the first is a target exactly once.
    """
    tokens = np.asarray(token_ids, dtype=np.int64)
    n_windows = (tokens.size - 1) // context_length
    if n_windows < 1:
        raise ValueError(f"need more than {context_length} tokens for one training window, got {tokens.size}")
    starts = np.arange(n_windows) * context_length
    return tokens[starts[:, None] + np.arange(context_length + 1)[None, :]]


def next_token_loss(model: GPT2LMHeadModel, windows: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of predicting ``windows[:, 1:]`` from ``windows[:, :-1]`` (no padding, no shift copy)."""
    hidden = model.transformer(input_ids=windows[:, :-1]).last_hidden_state
    logits = model.lm_head(hidden)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


@dataclasses.dataclass(frozen=True)
class LMTraining(TrainingOptions):
    """The ``training:`` block of a language model in ``models.language``
    (:class:`~neuroneval.models.training.TrainingOptions` with the language models' defaults: 16 windows per step,
    one pass, peak learning rate 5e-3, weight decay 0.01)."""

    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 5e-3
    weight_decay: float = 0.01
    seed: int = 0


def train_lm(
    token_ids: np.ndarray,
    vocab_size: int,
    *,
    size: str = "small",
    context_length: int = 64,
    tie_embeddings: bool = True,
    training: LMTraining | None = None,
    desc: str | None = None,
) -> tuple[GPT2LMHeadModel, dict[str, Any]]:
    """Train a language model of a named size on a token stream; return it (eval mode) and a training report.

    Parameters
    ----------
    token_ids
        The training split's concatenated token ids (``TextWorld.token_ids``), all in ``[0, vocab_size)``.
    vocab_size
        Size of the tokenizer vocabulary (``len(world.vocabulary)``).
    size
        A key of :data:`LM_SIZES` (default ``"small"``).
    context_length
        Tokens per training window and the model's maximum context (default 64).
    tie_embeddings
        Share the input embedding with the output layer (default, as GPT-2; see :func:`lm_config`).
    training
        Optimisation (:class:`LMTraining`; default: its defaults): windows per step, passes over all windows, peak
        AdamW learning rate of the one-cycle schedule, AdamW weight decay, and the seed of initialisation and
        window order (the same seed gives the same weights). On the default train split (≈ 515k tokens, 504
        steps) "small" trains in ≈ 1 minute and "large" in ≈ 3 on two busy CPU cores.

    Returns
    -------
    model, report
        ``report`` holds ``size``, ``n_parameters``, ``n_steps``, ``train_tokens``, ``train_seconds``,
        ``final_loss`` and the optimisation settings.
    """
    training = LMTraining() if training is None else training
    epochs, batch_size, seed = training.epochs, training.batch_size, training.seed
    learning_rate, weight_decay = training.learning_rate, training.weight_decay
    tokens = np.asarray(token_ids)
    if tokens.size and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise ValueError(f"token ids must lie in [0, {vocab_size}), got {tokens.min()}..{tokens.max()}")
    windows = torch.from_numpy(training_windows(tokens, context_length))
    model = build_lm(vocab_size, size=size, context_length=context_length, seed=seed, tie_embeddings=tie_embeddings)
    started = time.perf_counter()
    final_loss = fit(model, len(windows), lambda batch: next_token_loss(model, windows[torch.from_numpy(batch)]),
                     epochs=epochs, batch_size=batch_size, learning_rate=learning_rate, seed=seed,
                     weight_decay=weight_decay, desc=desc or f"lm {size}")
    train_seconds = time.perf_counter() - started
    report = {
        "size": size, **LM_SIZES[size], "vocab_size": vocab_size, "context_length": context_length,
        "tie_embeddings": tie_embeddings,
        "n_parameters": sum(parameter.numel() for parameter in model.parameters()),
        "n_steps": epochs * int(np.ceil(len(windows) / batch_size)), "train_tokens": int(windows[:, 1:].numel()),
        "epochs": epochs, "batch_size": batch_size, "learning_rate": learning_rate, "weight_decay": weight_decay,
        "seed": seed, "train_seconds": round(train_seconds, 2), "final_loss": final_loss,
    }
    return model.eval(), report


def evaluation_windows(n_tokens: int, context_length: int) -> np.ndarray:
    """(n_windows, 2) ``[start, stop)`` of the evaluation windows over positions ``0 .. n_tokens - 2``."""
    if n_tokens < 2:
        raise ValueError(f"need at least 2 tokens to predict a next token, got {n_tokens}")
    starts = np.arange(0, n_tokens - 1, context_length, dtype=np.int64)
    return np.stack([starts, np.minimum(starts + context_length, n_tokens - 1)], axis=1)


@torch.no_grad()
def window_logits(
    model: GPT2LMHeadModel,
    token_ids: np.ndarray,
    *,
    context_length: int,
    batch_size: int = 64,
    windows: Sequence[int] | np.ndarray | None = None,
) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
    """Yield ``(positions, logits)`` per batch of evaluation windows (see :func:`evaluation_windows`).

    ``positions`` (b, l) int64 are the stream positions whose next token ``logits`` (b, l, V) float32 predict;
    ``l`` is ``context_length`` except for a short last window, which comes in a batch of its own. ``windows``
    restricts the run to those window indices (ascending). Windows run on the device of the model's parameters,
    and the logits stay there.
    """
    if context_length > model.config.n_positions:
        raise ValueError(f"context_length {context_length} exceeds the model's n_positions "
                         f"{model.config.n_positions}")
    tokens = torch.from_numpy(np.asarray(token_ids, dtype=np.int64))
    bounds = evaluation_windows(tokens.numel(), context_length)
    selected = np.arange(len(bounds)) if windows is None else np.asarray(windows, dtype=np.int64)
    lengths = bounds[selected, 1] - bounds[selected, 0]
    device = next(model.parameters()).device
    model.eval()
    for same_length in (selected[lengths == context_length], selected[lengths != context_length]):
        for first in range(0, same_length.size, batch_size):
            batch = same_length[first : first + batch_size]
            positions = bounds[batch, 0][:, None] + np.arange(bounds[batch[0], 1] - bounds[batch[0], 0])[None, :]
            yield positions, model(input_ids=tokens[torch.from_numpy(positions)].to(device)).logits.float()


def perplexity(model: GPT2LMHeadModel, token_ids: np.ndarray, *, context_length: int, batch_size: int = 64) -> float:
    """exp(mean next-token cross-entropy) over every position of the stream (windows of ``context_length``)."""
    tokens = torch.from_numpy(np.asarray(token_ids, dtype=np.int64))
    total, count = 0.0, 0
    for positions, logits in window_logits(model, token_ids, context_length=context_length, batch_size=batch_size):
        targets = tokens[torch.from_numpy(positions + 1)].to(logits.device)
        total += float(F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="sum"))
        count += targets.numel()
    return float(np.exp(total / count))


def unigram_perplexity(train_ids: np.ndarray, eval_ids: np.ndarray, vocab_size: int, *,
                       smoothing: float = 1.0) -> float:
    """Perplexity on ``eval_ids[1:]`` of add-``smoothing`` unigram frequencies counted on ``train_ids``.

    The baseline a next-token model must beat: it predicts the same distribution at every position.
    """
    counts = np.bincount(np.asarray(train_ids, dtype=np.int64), minlength=vocab_size) + smoothing
    log_probability = np.log(counts / counts.sum())
    return float(np.exp(-log_probability[np.asarray(eval_ids, dtype=np.int64)[1:]].mean()))


def word_level_tokenizer(vocabulary: Sequence[str]) -> PreTrainedTokenizerFast:
    """A ``transformers`` fast tokenizer equivalent to :class:`neuroneval.worlds.text.WordTokenizer`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocabulary = list(vocabulary)
    if vocabulary[:2] != [EOS_TOKEN, UNK_TOKEN]:
        raise ValueError(f"a vocabulary starts with {[EOS_TOKEN, UNK_TOKEN]}, got {vocabulary[:2]}")
    backend = Tokenizer(models.WordLevel({word: index for index, word in enumerate(vocabulary)},
                                         unk_token=UNK_TOKEN))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with single spaces
    return PreTrainedTokenizerFast(tokenizer_object=backend, eos_token=EOS_TOKEN, bos_token=EOS_TOKEN,
                                   unk_token=UNK_TOKEN, pad_token=EOS_TOKEN)


def save_lm(model: GPT2LMHeadModel, directory: str | os.PathLike, *, vocabulary: Sequence[str] | None = None,
            report: Mapping[str, Any] | None = None) -> Path:
    """Write ``model`` (``save_pretrained``), its tokenizer and training report into ``directory``, atomically.

    Everything is written into a temporary sibling directory that then replaces ``directory`` with the modes of
    any other output (:func:`neuroneval.io.swap_directory`; safetensors alone writes ``0o600`` files in a
    ``0o700`` folder), so a failed save leaves any previous model untouched.
    """
    from neuroneval.io import swap_directory

    target = Path(directory)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        model.save_pretrained(staging)
        if vocabulary is not None:
            word_level_tokenizer(vocabulary).save_pretrained(staging)
        if report is not None:
            (staging / REPORT_FILE).write_text(json.dumps(dict(report), indent=2, sort_keys=True) + "\n")
        swap_directory(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def load_lm(directory: str | os.PathLike) -> GPT2LMHeadModel:
    """Reload a model written by :func:`save_lm` (offline: ``local_files_only=True``), in eval mode."""
    source = Path(directory)
    if not (source / "config.json").exists():
        raise FileNotFoundError(f"{source}: no config.json of a saved language model")
    return GPT2LMHeadModel.from_pretrained(source, local_files_only=True).eval()


def load_training_report(directory: str | os.PathLike) -> dict[str, Any]:
    """The training report saved next to a model (empty when there is none)."""
    path = Path(directory) / REPORT_FILE
    return json.loads(path.read_text()) if path.exists() else {}
