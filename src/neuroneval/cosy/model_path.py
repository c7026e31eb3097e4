"""Where a diffusers generator's weights are: a ``model`` named relative to the data root (``external.data_root``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuroneval.cosy.options import GeneratorOptions


def resolve_model_path(model: str, data_root: str | Path) -> str:
    """A diffusers model: a folder under ``data_root`` when one exists there, else the path or hub id as given.

    >>> resolve_model_path("/abs/sdxl", "data/paper_inputs")
    '/abs/sdxl'
    """
    if not model:
        return model
    candidate = Path(data_root).expanduser() / Path(model).expanduser()
    return str(candidate) if not Path(model).is_absolute() and candidate.exists() else model


def with_model_path(options: GeneratorOptions, data_root: str | Path) -> GeneratorOptions:
    """Generator options with a diffusers ``model`` resolved under ``data_root`` (:func:`resolve_model_path`);
    other generators' options unchanged."""
    from neuroneval.cosy.options import DiffusersOptions

    if not isinstance(options, DiffusersOptions):
        return options
    return dataclasses.replace(options, model=resolve_model_path(options.model, data_root))
