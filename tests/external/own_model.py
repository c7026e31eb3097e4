"""A user's own model for the "your setting" tests: a tiny MLP on sklearn's digits, its factory, and the files
(inputs array, labels, state dict, precomputed tables) a user would bring to the workflow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.datasets import load_digits
from torch import nn

from neuroneval import io
from neuroneval.external.own import class_concept_frame

N_INPUTS = 240
HIDDEN = 12


def digits_mlp(hidden: int = HIDDEN) -> nn.Module:
    """The factory ``own_model:digits_mlp``: 64 pixels → ``hidden`` ReLU units (layer ``act``) → 10 logits."""
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))


def train_digits_mlp(*, seed: int = 0, epochs: int = 60) -> tuple[nn.Module, np.ndarray, np.ndarray]:
    """The MLP trained (full-batch Adam) on all but the last :data:`N_INPUTS` digits, and those held-out inputs
    (pixels scaled to [0, 1], float32) with their labels."""
    digits = load_digits()
    pixels = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int64)
    torch.manual_seed(seed)
    model = digits_mlp()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    features, targets = torch.from_numpy(pixels[:-N_INPUTS]), torch.from_numpy(labels[:-N_INPUTS])
    for _ in range(epochs):
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(features), targets).backward()
        optimizer.step()
    return model.eval(), pixels[-N_INPUTS:], labels[-N_INPUTS:]


def write_user_files(root: Path) -> dict[str, Path]:
    """What a user brings: ``images.npy``/``labels.npy``, the state dict ``mlp.pt``, and the precomputed tables of
    the same model (``tables/softmax.parquet``, ``tables/labels.parquet``, ``tables/known.csv``)."""
    root.mkdir(parents=True, exist_ok=True)
    model, pixels, labels = train_digits_mlp()
    np.save(root / "images.npy", pixels)
    np.save(root / "labels.npy", labels)
    torch.save(model.state_dict(), root / "mlp.pt")
    with torch.no_grad():
        probabilities = torch.softmax(model(torch.from_numpy(pixels)), dim=1).numpy()
    tables = root / "tables"
    ids = np.arange(len(pixels), dtype=np.int64)
    units = {f"p{k}": probabilities[:, k] for k in range(10)}
    io.write_activation_table(tables / "softmax.parquet", pd.DataFrame({"input_id": ids, **units}),
                              metadata={"model": "my_mlp", "layer": "softmax", "dataset": "mine", "pooling": "none",
                                        "dtype": "float32", "unit_concepts": {}})
    concepts = class_concept_frame(labels, [str(k) for k in range(10)])
    io.write_concept_table(tables / "labels.parquet", concepts,
                           metadata={"source": "labels", "dataset": "mine",
                                     "concepts": [c for c in concepts.columns if c != "input_id"]})
    pd.DataFrame({"unit": list(units), "concept": [f"class:{k}" for k in range(10)]}).to_csv(
        tables / "known.csv", index=False)
    return {"root": root, "model": model}
