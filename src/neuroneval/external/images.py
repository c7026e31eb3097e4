"""Batches of preprocessed image files for external models, the device to run them on, and image embeddings.

Images are decoded (PIL, RGB) and preprocessed by the model's own ``preprocess``
(:class:`neuroneval.models.loaders.LoadedModel`) in a ``torch.utils.data.DataLoader`` with ``num_workers``
worker processes, in input-table order, so row ``i`` of every output is input ``i``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.nn import functional
from torch.utils.data import DataLoader, Dataset

from neuroneval.progress import progress_bar


class ImageFiles(Dataset):
    """``dataset[i]`` = ``preprocess(<image file i as a PIL RGB image>)``; a missing file names its path."""

    def __init__(self, paths: Sequence[str | Path], preprocess: Callable[[Any], torch.Tensor]) -> None:
        self.paths = [Path(path) for path in paths]
        self.preprocess = preprocess

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> torch.Tensor:
        from PIL import Image

        path = self.paths[index]
        try:
            with Image.open(path) as image:
                return self.preprocess(image.convert("RGB"))
        except OSError as error:  # missing or unreadable file: say which
            raise OSError(f"cannot read image {path}: {error}") from error


def image_batches(paths: Sequence[str | Path], preprocess: Callable[[Any], torch.Tensor], *, batch_size: int,
                  num_workers: int = 0) -> DataLoader:
    """Ordered batches of preprocessed images (a ``DataLoader``: it has a length, for progress bars)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    if not paths:
        raise ValueError("no images to load")
    return DataLoader(ImageFiles(paths, preprocess), batch_size=batch_size, shuffle=False, num_workers=num_workers)


def resolve_device(device: str) -> torch.device:
    """``auto`` → ``cuda`` when available, else ``cpu``; anything else as given (``cuda`` must be available)."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    resolved = torch.device(device)
    if resolved.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"external.device is {device!r} but CUDA is not available here; use 'cpu' or 'auto'")
    return resolved


@torch.no_grad()
def image_embeddings(model: torch.nn.Module, batches: DataLoader, *, device: torch.device,
                     desc: str = "image embeddings") -> np.ndarray:
    """L2-normalised ``model.encode_image`` of every batch, (N, D) float32 on the CPU."""
    model.eval()
    parts = [functional.normalize(model.encode_image(batch.to(device)).float(), dim=-1).cpu()
             for batch in progress_bar(batches, desc=desc, unit="batch")]
    return torch.cat(parts).numpy().astype(np.float32)
