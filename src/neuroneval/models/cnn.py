"""A tiny convolutional classifier for the embedded vision world, trained on the CPU in the DAG.

It stands in for the paper's ImageNet/Places classifiers (000 App. F): its softmax units are "final layer
neurons" with known concepts (their classes), and ``block3`` is a hidden layer whose spatially pooled channels
get IoU-chosen ground truth.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from neuroneval.io import atomic_path, write_json


@dataclass(frozen=True)
class CNNConfig:
    """Architecture of :class:`TinyCNN`: input size, number of classes and base channel width."""

    n_classes: int
    width: int = 32
    image_size: int = 32


class TinyCNN(nn.Module):
    """Three conv blocks (``block1``–``block3``), global average pooling and a linear classifier ``fc``."""

    def __init__(self, config: CNNConfig) -> None:
        super().__init__()
        width = config.width
        self.config = config
        self.block1 = _conv_block(3, width, pool=True)
        self.block2 = _conv_block(width, 2 * width, pool=True)
        self.block3 = _conv_block(2 * width, 4 * width, pool=False)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, config.n_classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        features = self.block3(self.block2(self.block1(images)))
        return self.fc(torch.flatten(self.pool(features), 1))


def _conv_block(in_channels: int, out_channels: int, *, pool: bool) -> nn.Sequential:
    layers: list[nn.Module] = [
        nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True),
    ]
    if pool:
        layers.append(nn.MaxPool2d(2))
    return nn.Sequential(*layers)


def images_to_tensor(images: np.ndarray) -> torch.Tensor:
    """(N, H, W, 3) uint8 images -> (N, 3, H, W) float32 tensor in [-1, 1]."""
    if images.ndim != 4 or images.shape[-1] != 3 or images.dtype != np.uint8:
        raise ValueError(f"images must be (N, H, W, 3) uint8, got shape {images.shape} dtype {images.dtype}")
    tensor = torch.from_numpy(np.ascontiguousarray(images)).permute(0, 3, 1, 2).float()
    return tensor / 127.5 - 1.0


def train_classifier(
    images: np.ndarray,
    targets: np.ndarray,
    config: CNNConfig,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    holdout_fraction: float,
    seed: int,
) -> tuple[TinyCNN, dict[str, float]]:
    """Train :class:`TinyCNN` with Adam and cross-entropy; return the model and its training report.

    The last ``holdout_fraction`` of the (already shuffled, i.i.d.) images is held out and its accuracy
    reported next to the chance level ``max_c P(c)`` of the training targets. Determinism: fixed seeds,
    deterministic algorithms, a seeded batch order.
    """
    if len(images) != len(targets):
        raise ValueError(f"images ({len(images)}) and targets ({len(targets)}) differ in length")
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    n_holdout = max(1, round(holdout_fraction * len(images)))
    train_x, holdout_x = images[:-n_holdout], images[-n_holdout:]
    train_y = torch.from_numpy(targets[:-n_holdout].astype(np.int64))
    holdout_y = targets[-n_holdout:].astype(np.int64)
    model = TinyCNN(config)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    steps_per_epoch = int(np.ceil(len(train_x) / batch_size))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=learning_rate, total_steps=epochs * steps_per_epoch
    )
    order_rng = np.random.default_rng(seed)
    loss_fn = nn.CrossEntropyLoss()
    started = time.perf_counter()
    progress = tqdm(total=epochs * steps_per_epoch, desc="train TinyCNN", unit="step", mininterval=2.0)
    model.train()
    last_loss = float("nan")
    for _ in range(epochs):
        order = order_rng.permutation(len(train_x))
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            logits = model(images_to_tensor(train_x[batch]))
            loss = loss_fn(logits, train_y[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            scheduler.step()
            last_loss = float(loss.detach())
            progress.update(1)
    progress.close()
    predictions = predict_classes(model, holdout_x, batch_size=512)
    class_counts = np.bincount(targets[:-n_holdout], minlength=config.n_classes)
    report = {
        "holdout_accuracy": float(np.mean(predictions == holdout_y)),
        "chance_accuracy": float(class_counts.max() / class_counts.sum()),
        "final_train_loss": last_loss,
        "train_images": len(train_x),
        "holdout_images": n_holdout,
        "train_seconds": time.perf_counter() - started,
    }
    return model, report


@torch.no_grad()
def predict_classes(model: nn.Module, images: np.ndarray, *, batch_size: int) -> np.ndarray:
    """Arg-max class of each image."""
    model.eval()
    outputs = [model(images_to_tensor(images[start : start + batch_size])).argmax(1).numpy()
               for start in range(0, len(images), batch_size)]
    return np.concatenate(outputs)


def save_checkpoint(model: TinyCNN, path: str | Path, *, report: dict, class_names: list[str]) -> None:
    """Write the weights (``path``) and a JSON card beside it (config, class names, training report)."""
    path = Path(path)
    with atomic_path(path) as tmp_path:
        torch.save({"config": asdict(model.config), "state_dict": model.state_dict()}, tmp_path)
    card = {"architecture": "TinyCNN", "config": asdict(model.config), "class_names": class_names, **report}
    write_json(path.with_suffix(".json"), card)


def load_checkpoint(path: str | Path) -> tuple[TinyCNN, dict]:
    """Load a :class:`TinyCNN` saved by :func:`save_checkpoint` (in eval mode) and its JSON card."""
    path = Path(path)
    payload = torch.load(path, map_location="cpu", weights_only=True)
    model = TinyCNN(CNNConfig(**payload["config"]))
    model.load_state_dict(payload["state_dict"])
    model.eval()
    card = json.loads(path.with_suffix(".json").read_text())
    return model, card
