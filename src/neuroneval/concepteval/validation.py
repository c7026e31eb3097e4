"""Input checks shared by the concepteval modules: shapes, finiteness, emptiness, with messages that say
what was expected and what arrived."""

from __future__ import annotations

import numpy as np
import torch


def as_float_array(name: str, values: object, *, ndim: int | None = None, min_rows: int = 1) -> np.ndarray:
    """``values`` as a float64 array, checked: ``ndim`` dimensions, at least ``min_rows`` rows, all finite."""
    array = np.asarray(values.detach().cpu() if isinstance(values, torch.Tensor) else values, dtype=np.float64)
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {array.shape}")
    if array.ndim == 0 or array.shape[0] < min_rows:
        raise ValueError(f"{name}: expected at least {min_rows} row(s), got shape {array.shape}")
    if not np.isfinite(array).all():
        bad = np.argwhere(~np.isfinite(array))[0]
        raise ValueError(f"{name}: non-finite value at index {tuple(int(i) for i in bad)}")
    return array


def check_finite_tensor(name: str, tensor: torch.Tensor) -> None:
    """``ValueError`` if ``tensor`` is empty or holds NaN/inf."""
    if tensor.numel() == 0:
        raise ValueError(f"{name}: empty tensor of shape {tuple(tensor.shape)}")
    if not torch.isfinite(tensor).all():
        bad = torch.nonzero(~torch.isfinite(tensor))[0].tolist()
        raise ValueError(f"{name}: non-finite value at index {tuple(bad)}")
