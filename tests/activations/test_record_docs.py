"""docs/record.md's commands run as written, on scikit-learn's digits and a tiny GPT-2 saved locally."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from neuroneval import io

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "record.md"
MYMODELS = '''from collections import OrderedDict

from torch import nn


def digits_cnn(channels=4):
    return nn.Sequential(OrderedDict(conv=nn.Conv2d(3, channels, 3, padding=1), act=nn.ReLU(),
                                     pool=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(), fc=nn.Linear(channels, 10)))
'''


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)


def prepare(folder: Path) -> None:
    """The files the page's commands name: mymodels.py + weights, digits/, tiny-gpt2/, corpus.txt, sae/."""
    from PIL import Image
    from safetensors.numpy import save_file
    from sklearn.datasets import load_digits
    from transformers import GPT2Config, GPT2LMHeadModel

    from neuroneval.models.lm import word_level_tokenizer

    (folder / "mymodels.py").write_text(MYMODELS)
    sys.path.insert(0, str(folder))
    sys.modules.pop("mymodels", None)  # another test's mymodels.py may be imported in this worker already
    try:
        import mymodels

        torch.manual_seed(0)
        torch.save(mymodels.digits_cnn(channels=8).state_dict(), folder / "digits_cnn.pt")
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("mymodels", None)
    (folder / "digits").mkdir()
    for index, image in enumerate(load_digits().images[:60]):
        Image.fromarray((image * 255 / 16).astype(np.uint8)).save(folder / "digits" / f"{index:03d}.png")
    words = ["<eos>", "<unk>", *(f"w{index}" for index in range(40))]
    torch.manual_seed(1)
    GPT2LMHeadModel(GPT2Config(vocab_size=len(words), n_positions=64, n_layer=2, n_embd=16, n_head=2)
                    ).save_pretrained(folder / "tiny-gpt2")
    word_level_tokenizer(words).save_pretrained(folder / "tiny-gpt2")
    rng = np.random.default_rng(2)
    (folder / "corpus.txt").write_text("\n".join(" ".join(rng.choice(words[2:], size=rng.integers(5, 40)))
                                                 for _ in range(40)) + "\n")
    (folder / "sae").mkdir()
    save_file({"W_enc": rng.normal(size=(16, 32)).astype(np.float32), "b_enc": np.zeros(32, np.float32),
               "W_dec": rng.normal(size=(32, 16)).astype(np.float32), "b_dec": np.zeros(16, np.float32),
               "threshold": np.full(32, 0.5, np.float32)}, str(folder / "sae" / "sae_weights.safetensors"))
    (folder / "sae" / "cfg.json").write_text(json.dumps({"architecture": "jumprelu", "d_in": 16, "d_sae": 32,
                                                         "apply_b_dec_to_input": True}))


def test_the_page_commands_run_as_written(tmp_path) -> None:
    prepare(tmp_path)
    environment = {**os.environ, "PYTHONPATH": str(ROOT / "src"),
                   "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    commands = blocks("bash")
    assert len(commands) == 3
    for command in commands:
        completed = subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=tmp_path, env=environment,
                                   capture_output=True, text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr[-2000:]
    for python in blocks("python"):
        (tmp_path / "example.py").write_text(python)
        completed = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, env=environment,
                                   capture_output=True, text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr[-2000:]
    images, _ = io.read_activation_table(tmp_path / "activations" / "digits_cnn" / "act.parquet")
    assert images.shape == (60, 9)
    assert len(pd.read_csv(tmp_path / "activations" / "digits_cnn" / "inputs.csv")) == 60
    tokens = pd.read_csv(tmp_path / "activations" / "tiny-gpt2" / "tokens.csv")
    hidden, metadata = io.read_activation_table(tmp_path / "activations" / "tiny-gpt2" / "transformer.h.0.mlp.act"
                                                ".parquet")
    assert len(tokens) == len(hidden) == 500 and hidden.shape[1] == 1 + 64 and metadata["pooling"] == "per_token"
    features, _ = io.read_activation_table(tmp_path / "activations" / "tiny-gpt2-sae" / "transformer.h.1.sae.parquet")
    assert features.shape[1] == 1 + 32
    labels = pd.read_csv(tmp_path / "activations" / "loader" / "labels.csv")
    assert len(labels) == 1797
