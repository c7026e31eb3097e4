"""The ``splits`` of a world's params block: how many inputs each named split has."""

from __future__ import annotations

from types import MappingProxyType

from neuroneval.options import Options, OptionsError


def check_splits(owner: Options, name: str) -> None:
    """:class:`~neuroneval.options.OptionsError` unless ``owner.<name>`` maps split names to positive integers;
    stores it read-only (the options stay frozen)."""
    splits = getattr(owner, name)
    valid = hasattr(splits, "items") and all(
        isinstance(split, str) and split and isinstance(size, int) and not isinstance(size, bool) and size >= 1
        for split, size in splits.items())
    if not valid:
        raise OptionsError(f"{type(owner).__name__}.{name} must map split names to positive sizes, got {splits!r}")
    object.__setattr__(owner, name, MappingProxyType(dict(splits)))
