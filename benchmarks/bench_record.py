"""``neuroneval record`` throughput: inputs per second of a tiny CNN (pooled) and a tiny LM (per token, + SAE).

Usage: ``python benchmarks/bench_record.py [--images 2048] [--documents 256] [--batch-size 64] [--device cpu]``.

The CNN is :class:`neuroneval.models.cnn.TinyCNN` (width 32, 32 × 32 RGB inputs from a ``.npy`` array), recording
``block3`` (mean-pooled) and ``softmax``. The LM is GPT-2-shaped with :data:`neuroneval.models.lm.LM_SIZES`
``small`` (2 layers, width 64) and a word-level tokenizer, on documents of 128 random words, recording the MLP's
hidden neurons ``transformer.h.1.mlp.act`` at every token and a 1024-feature ReLU SAE on them. Each figure includes
writing the shards and assembling the tables (the whole :func:`neuroneval.activations.record.record` call).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from neuroneval.activations.record import RecordOptions, record
from neuroneval.activations.record_inputs import array_source, text_source
from neuroneval.activations.record_models import RecordModel, load_record_model
from neuroneval.activations.sae import load_sae
from neuroneval.models.cnn import CNNConfig, TinyCNN
from neuroneval.models.lm import build_lm, word_level_tokenizer


def bench_cnn(folder: Path, n_images: int, batch_size: int, device: str) -> float:
    rng = np.random.default_rng(0)
    np.save(folder / "images.npy", rng.normal(size=(n_images, 3, 32, 32)).astype(np.float32))
    torch.manual_seed(0)
    model = RecordModel.from_module(TinyCNN(CNNConfig(n_classes=10, width=32, image_size=32)), name="tiny_cnn")
    options = RecordOptions(layers=("block3", "softmax"), batch_size=batch_size, device=device, progress=False)
    started = time.perf_counter()
    result = record(model, array_source(folder / "images.npy", batch_size=batch_size), folder / "cnn", options)
    return result.n_inputs / (time.perf_counter() - started)


def bench_lm(folder: Path, n_documents: int, batch_size: int, device: str) -> tuple[float, int]:
    from safetensors.numpy import save_file

    words = ["<eos>", "<unk>", *(f"w{index}" for index in range(500))]
    build_lm(len(words), size="small", context_length=128).save_pretrained(folder / "lm")
    word_level_tokenizer(words).save_pretrained(folder / "lm")
    rng = np.random.default_rng(1)
    (folder / "corpus.txt").write_text("\n".join(" ".join(rng.choice(words[2:], size=128))
                                                 for _ in range(n_documents)) + "\n")
    (folder / "sae").mkdir()
    save_file({"W_enc": rng.normal(size=(256, 1024)).astype(np.float32), "b_enc": np.zeros(1024, np.float32),
               "W_dec": rng.normal(size=(1024, 256)).astype(np.float32), "b_dec": np.zeros(256, np.float32)},
              str(folder / "sae" / "sae_weights.safetensors"))
    (folder / "sae" / "cfg.json").write_text(json.dumps({"architecture": "standard", "d_in": 256, "d_sae": 1024}))
    model = load_record_model({"family": "transformers", "model_dir": str(folder / "lm")})
    options = RecordOptions(layers=("transformer.h.1.mlp.act",), batch_size=max(1, batch_size // 8), device=device,
                            context_length=128, progress=False)
    source = text_source(folder / "corpus.txt", model.tokenizer, batch_size=options.batch_size, context_length=128)
    started = time.perf_counter()
    result = record(model, source, folder / "lm_out", options, sae=load_sae(folder / "sae"))
    return result.n_inputs / (time.perf_counter() - started), result.n_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=2048)
    parser.add_argument("--documents", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=64, help="images per batch (documents: an eighth)")
    parser.add_argument("--device", default="cpu")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cnn = bench_cnn(Path(folder), arguments.images, arguments.batch_size, arguments.device)
        print(f"tiny CNN, {arguments.images} images, block3 + softmax: {cnn:,.0f} inputs/s ({arguments.device}, "
              f"{torch.get_num_threads()} threads)")
        lm, tokens = bench_lm(Path(folder), arguments.documents, arguments.batch_size, arguments.device)
        print(f"tiny LM, {tokens} tokens, transformer.h.1.mlp.act (256 units) + SAE (1024 features) per token: "
              f"{lm:,.0f} inputs/s ({arguments.device})")


if __name__ == "__main__":
    main()
