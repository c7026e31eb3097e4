"""Typed options: frozen dataclasses parsed once from a params mapping, validated, with the bad key named.

Every options class of :mod:`neuroneval.concepteval` derives from :class:`Options`, so
``SomeOptions.from_params({"n_boot": 200})`` rejects unknown keys (``"bad option key 'nboot' for
BootstrapOptions; known: ..."``), turns YAML lists into tuples, builds nested options from nested mappings,
and runs the class's own ``validate`` (which raises ``ValueError`` naming the field and the value it got).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T", bound="Options")


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of the frozen option classes; subclasses override :meth:`validate`."""

    @classmethod
    def from_params(cls: type[T], params: Mapping[str, Any] | None) -> T:
        """Options from a params mapping (``None`` or ``{}`` gives the defaults).

        Raises ``ValueError`` for a key that is not a field (naming it and the known fields) and for a value
        the class rejects; lists become tuples and mappings become nested options where the field is one.
        """
        params = dict(params or {})
        fields = {field.name: field for field in dataclasses.fields(cls)}
        unknown = sorted(set(params) - set(fields))
        if unknown:
            raise ValueError(f"bad option key {unknown[0]!r} for {cls.__name__}; known: {sorted(fields)}")
        hints = typing.get_type_hints(cls)
        values = {}
        for key, value in params.items():
            hint = hints[key]
            if isinstance(hint, type) and issubclass(hint, Options):
                if not isinstance(value, Mapping | hint):
                    raise ValueError(f"{cls.__name__}.{key}: expected a mapping, got {value!r}")
                value = value if isinstance(value, hint) else hint.from_params(value)
            elif isinstance(value, list):
                value = tuple(value)
            values[key] = value
        return cls(**values)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field whose value is not allowed (subclasses extend this)."""


def check_choice(owner: Options, name: str, allowed: tuple[str, ...]) -> None:
    """``ValueError`` unless ``owner.<name>`` is one of ``allowed``."""
    value = getattr(owner, name)
    if value not in allowed:
        raise ValueError(f"{type(owner).__name__}.{name} must be one of {list(allowed)}, got {value!r}")


def check_range(owner: Options, name: str, low: float | None = None, high: float | None = None, *,
                low_open: bool = False, high_open: bool = False, integer: bool = False) -> None:
    """``ValueError`` unless ``owner.<name>`` is a number (an int if ``integer``) within the bounds."""
    value = getattr(owner, name)
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"{type(owner).__name__}.{name} must be {'an integer' if integer else 'a number'}, "
                         f"got {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        interval = f"{'(' if low_open else '['}{low}, {high}{')' if high_open else ']'}"
        raise ValueError(f"{type(owner).__name__}.{name} must lie in {interval}, got {value!r}")
