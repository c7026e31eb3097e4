"""One seeded, deterministic training loop shared by the tiny models trained in the DAG."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from neuroneval.options import Options, check_range
from neuroneval.progress import progress_bar


@dataclasses.dataclass(frozen=True)
class TrainingOptions(Options):
    """A ``training:`` block of ``models:`` in params.yaml: AdamW with a one-cycle schedule (:func:`fit`) for
    ``epochs`` passes in batches of ``batch_size``, peak ``learning_rate``, ``weight_decay``, seeded by ``seed``
    (initialisation and batch order). The language and contrastive models take it as it is; the classifiers add
    their held-out fraction (:class:`neuroneval.models.classifier.ClassifierTraining`)."""

    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 5e-3
    weight_decay: float = 0.0
    seed: int = 0

    def validate(self) -> None:
        check_range(self, "epochs", 1, integer=True)
        check_range(self, "batch_size", 1, integer=True)
        check_range(self, "learning_rate", 0, low_open=True)
        check_range(self, "weight_decay", 0)
        check_range(self, "seed", 0, integer=True)


def fit(
    model: nn.Module,
    n_examples: int,
    batch_loss: Callable[[np.ndarray], torch.Tensor],
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    weight_decay: float = 0.0,
    desc: str = "train",
) -> float:
    """Minimise ``batch_loss(example_indices)`` with AdamW and a one-cycle schedule; return the last loss.

    Determinism: ``torch.manual_seed(seed)`` before the first step, deterministic algorithms, and a batch order
    drawn from ``np.random.default_rng(seed)`` — the same seed gives the same weights.

    A non-finite loss (NaN, ±inf: the weights diverged) stops training at once with ``FloatingPointError``
    naming ``desc``, the epoch and the step: nothing trained after it means anything.
    """
    if n_examples < 1 or epochs < 1 or batch_size < 1:
        raise ValueError(f"need n_examples, epochs, batch_size >= 1, got {n_examples}, {epochs}, {batch_size}")
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    steps_per_epoch = int(np.ceil(n_examples / batch_size))
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=learning_rate,
                                                    total_steps=epochs * steps_per_epoch)
    order_rng = np.random.default_rng(seed)
    last_loss = float("nan")
    model.train()
    with progress_bar(total=epochs * steps_per_epoch, desc=desc, unit="step") as progress:
        for epoch in range(1, epochs + 1):
            order = order_rng.permutation(n_examples)
            for start in range(0, n_examples, batch_size):
                loss = batch_loss(order[start : start + batch_size])
                last_loss = float(loss.detach())
                if not math.isfinite(last_loss):
                    step = (epoch - 1) * steps_per_epoch + start // batch_size + 1
                    raise FloatingPointError(
                        f"{desc}: training loss {last_loss} at epoch {epoch} of {epochs} (step {step} of "
                        f"{epochs * steps_per_epoch}) is not finite; lower training.learning_rate?")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
                scheduler.step()
                progress.update(1)
    model.eval()
    return last_loss
