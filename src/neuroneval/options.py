"""Typed options: frozen dataclasses parsed once from a params mapping, validated, with the bad key named.

Every options class of the library derives from :class:`Options` (meta-evaluation, explanation methods, concept
evaluation, crowd studies), so ``SomeOptions.from_params({"n_boot": 200})``

* rejects a key that is not a field, naming it and the known fields (``OptionsError: BootstrapOptions: unknown
  option 'nboot'; known options are [...]``),
* turns YAML lists into tuples (the options stay hashable and frozen) and nested mappings into nested options
  where the field's type is itself an :class:`Options`,
* runs the class's :meth:`Options.validate`, which raises :class:`OptionsError` naming the field and the value
  it got (the ``check_*`` helpers below phrase those messages alike everywhere).

The workflow validates each ``params.yaml`` block against ``workflow/schemas/params.schema.yaml`` first; these
checks are what a library user who builds options in Python gets.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Mapping
from typing import Any, Self


class OptionsError(ValueError):
    """An option that is unknown or out of range; the message names the class, the key and the value."""


@dataclasses.dataclass(frozen=True)
class Options:
    """Base of the frozen option classes; subclasses override :meth:`validate`."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any] | None = None) -> Self:
        """Options from a params mapping (``None`` or ``{}`` gives the defaults).

        Raises :class:`OptionsError` for a key that is not a field (naming it and the known fields) and for a
        value the class rejects; lists become tuples and mappings become nested options where the field is one.
        """
        params = dict(params or {})
        fields = [field.name for field in dataclasses.fields(cls)]
        unknown = sorted(key for key in params if key not in fields)
        if unknown:
            raise OptionsError(f"{cls.__name__}: unknown option {unknown[0]!r}; known options are {fields}")
        hints = typing.get_type_hints(cls)
        values = {}
        for key, value in params.items():
            hint = hints[key]
            if isinstance(hint, type) and issubclass(hint, Options):
                if not isinstance(value, Mapping | hint):
                    raise OptionsError(f"{cls.__name__}.{key}: expected a mapping, got {value!r}")
                value = value if isinstance(value, hint) else hint.from_params(value)
            elif isinstance(value, list):
                value = tuple(value)
            values[key] = value
        return cls(**values)

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise :class:`OptionsError` naming the field whose value is not allowed (subclasses extend this)."""


def _name(owner: Options | str) -> str:
    return owner if isinstance(owner, str) else type(owner).__name__


def check_choice(owner: Options, name: str, allowed: tuple[str, ...]) -> None:
    """:class:`OptionsError` unless ``owner.<name>`` is one of ``allowed``."""
    value = getattr(owner, name)
    if value not in allowed:
        raise OptionsError(f"{_name(owner)}.{name} must be one of {list(allowed)}, got {value!r}")


def check_range(owner: Options, name: str, low: float | None = None, high: float | None = None, *,
                low_open: bool = False, high_open: bool = False, integer: bool = False) -> None:
    """:class:`OptionsError` unless ``owner.<name>`` is a finite number (an int if ``integer``; never a bool)
    within the bounds (``None``: unbounded on that side; ``*_open``: the bound itself is excluded)."""
    value = getattr(owner, name)
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not math.isfinite(value):
        raise OptionsError(f"{_name(owner)}.{name} must be {'an integer' if integer else 'a finite number'}, "
                           f"got {value!r}")
    too_low = low is not None and (value <= low if low_open else value < low)
    too_high = high is not None and (value >= high if high_open else value > high)
    if too_low or too_high:
        interval = f"{'(' if low_open else '['}{'-inf' if low is None else low}, " \
                   f"{'inf' if high is None else high}{')' if high_open or high is None else ']'}"
        raise OptionsError(f"{_name(owner)}.{name} must lie in {interval}, got {value!r}")


def check_fraction(owner: Options, name: str, *, low_open: bool = True, high_open: bool = False) -> None:
    """:class:`OptionsError` unless ``owner.<name>`` is a number in (0, 1] (bounds as the flags say)."""
    check_range(owner, name, 0.0, 1.0, low_open=low_open, high_open=high_open)


def check_text(owner: Options, name: str, *, optional: bool = False) -> None:
    """:class:`OptionsError` unless ``owner.<name>`` is a non-empty string (or ``None`` where ``optional``)."""
    value = getattr(owner, name)
    if (value is None and optional) or (isinstance(value, str) and value):
        return
    raise OptionsError(f"{_name(owner)}.{name} must be a non-empty string, got {value!r}")
