"""A tiny CLIP/SigLIP-style image–text model (open_clip ``CLIP`` with a custom config) trained on captions.

It stands in for SigLIP ViT-SO400M in paper 000 (App. F): its image–text similarities give the pseudo-labels
``c = σ(a·(cos − b))`` for concept prompts. Trained with the sigmoid (SigLIP) loss on the vision world's captions;
the text side uses a word-level tokenizer over the captions' vocabulary (saved beside the checkpoint).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import open_clip
import torch
from open_clip.loss import SigLipLoss

from neuroneval.io import write_json, write_torch
from neuroneval.models.cnn import images_to_tensor
from neuroneval.models.training import TrainingOptions, fit

SPECIALS = ("<pad>", "<unk>")


class CaptionTokenizer:
    """Word-level tokenizer: lower-cased whitespace words; ids 0 = pad, 1 = unknown, the largest id = end.

    open_clip's text tower pools the token with the largest id (``argmax`` pooling), so every sequence ends with
    the end token, which has the largest id of the vocabulary. Calling the tokenizer on a list of texts returns
    an (N, context_length) LongTensor, like open_clip's own tokenizers.
    """

    def __init__(self, words: Sequence[str], context_length: int) -> None:
        self.words = list(words)
        self.context_length = context_length
        self.index = {word: position + len(SPECIALS) for position, word in enumerate(self.words)}
        self.end_id = len(SPECIALS) + len(self.words)

    @classmethod
    def from_texts(cls, texts: Sequence[str], context_length: int) -> CaptionTokenizer:
        """Vocabulary = the sorted distinct words of ``texts``."""
        return cls(sorted({word for text in texts for word in text.lower().split()}), context_length)

    @property
    def vocab_size(self) -> int:
        return self.end_id + 1

    def __call__(self, texts: Sequence[str]) -> torch.Tensor:
        tokens = np.zeros((len(texts), self.context_length), dtype=np.int64)
        for row, text in enumerate(texts):
            ids = [self.index.get(word, 1) for word in text.lower().split()][: self.context_length - 1]
            tokens[row, : len(ids)] = ids
            tokens[row, len(ids)] = self.end_id
        return torch.from_numpy(tokens)


def build_clip(config: Mapping[str, Any], vocab_size: int) -> open_clip.CLIP:
    """open_clip ``CLIP`` from a small config: ``embed_dim``, ``vision`` and ``text`` sub-configs, ``logit_bias``."""
    text_cfg = {**config["text"], "vocab_size": vocab_size}
    return open_clip.CLIP(embed_dim=config["embed_dim"], vision_cfg=dict(config["vision"]), text_cfg=text_cfg,
                          init_logit_bias=config.get("logit_bias", -10.0), output_dict=True)


def train_clip(
    images: np.ndarray,
    captions: Sequence[str],
    config: Mapping[str, Any],
    training: TrainingOptions,
    *,
    desc: str = "train tiny CLIP",
) -> tuple[open_clip.CLIP, CaptionTokenizer, dict[str, float]]:
    """Train with the sigmoid loss of SigLIP (every image–caption pair is a binary match / non-match); ``desc``
    names the training in its progress bar and errors."""
    if len(images) != len(captions):
        raise ValueError(f"images ({len(images)}) and captions ({len(captions)}) differ in length")
    tokenizer = CaptionTokenizer.from_texts(captions, config["text"]["context_length"])
    tokens = tokenizer(captions)
    torch.manual_seed(training.seed)
    model = build_clip(config, tokenizer.vocab_size)
    loss_fn = SigLipLoss()

    def batch_loss(batch: np.ndarray) -> torch.Tensor:
        out = model(images_to_tensor(images[batch]), tokens[batch])
        return loss_fn(out["image_features"], out["text_features"], out["logit_scale"], out["logit_bias"])

    started = time.perf_counter()
    last_loss = fit(model, len(images), batch_loss, epochs=training.epochs, batch_size=training.batch_size,
                    learning_rate=training.learning_rate, weight_decay=training.weight_decay, seed=training.seed,
                    desc=desc)
    report = {"final_train_loss": last_loss, "train_images": len(images),
              "train_seconds": round(time.perf_counter() - started, 1)}
    return model, tokenizer, report


@torch.no_grad()
def embed_images(model: open_clip.CLIP, images: np.ndarray, *, batch_size: int = 512) -> np.ndarray:
    """L2-normalised image embeddings, (N, embed_dim) float32."""
    model.eval()
    parts = [model.encode_image(images_to_tensor(images[start : start + batch_size]), normalize=True)
             for start in range(0, len(images), batch_size)]
    return torch.cat(parts).numpy().astype(np.float32)


@torch.no_grad()
def embed_texts(model: open_clip.CLIP, tokenizer: CaptionTokenizer, texts: Sequence[str]) -> np.ndarray:
    """L2-normalised text embeddings, (len(texts), embed_dim) float32."""
    model.eval()
    return model.encode_text(tokenizer(texts), normalize=True).numpy().astype(np.float32)


def save_clip(model: open_clip.CLIP, tokenizer: CaptionTokenizer, path: str | Path, *,
              config: Mapping[str, Any], report: Mapping[str, Any]) -> None:
    """Weights + config + vocabulary in ``path`` (torch.save) and a JSON card beside it."""
    path = Path(path)
    payload = {"config": dict(config), "words": tokenizer.words, "state_dict": model.state_dict()}
    write_torch(path, payload)
    write_json(path.with_suffix(".json"), {"architecture": "tiny_clip", "config": dict(config),
                                           "vocab_size": tokenizer.vocab_size, **report})


def load_clip(path: str | Path) -> tuple[open_clip.CLIP, CaptionTokenizer, dict]:
    """Load what :func:`save_clip` wrote (model in eval mode), with its tokenizer and card."""
    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    config = payload["config"]
    tokenizer = CaptionTokenizer(payload["words"], config["text"]["context_length"])
    model = build_clip(config, tokenizer.vocab_size)
    model.load_state_dict(payload["state_dict"])
    model.eval()
    return model, tokenizer, json.loads(path.with_suffix(".json").read_text())
