"""Typed command-line flags: each reads a flag's text as a bounded number or raises ``ArgumentTypeError``
saying what was expected (argparse prefixes the flag's name). Shared by ``neuroneval.cli`` and its subcommand
parsers (``ratings_cli``)."""

from __future__ import annotations

import argparse
import math


def number_flag(text: str, *, integer: bool, low: float | None = None, high: float | None = None,
            low_open: bool = False, high_open: bool = False) -> int | float:
    """``text`` read as an int (``integer``) or a finite float within the bounds, else ``ArgumentTypeError``
    saying what was expected; argparse prefixes the flag (``argument --n-boot: must be an integer >= 1, got '0'``)."""
    if integer:
        kind = "an integer"
    else:
        kind = "a number" if low is not None and high is not None else "a finite number"
    if low is not None and high is not None:
        expected = f"{kind} in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    elif low is not None:
        expected = f"{kind} {'>' if low_open else '>='} {low:g}"
    else:
        expected = kind
    try:
        value: int | float = int(text) if integer else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}") from None
    inside = math.isfinite(value) and not (
        low is not None and (value <= low if low_open else value < low)) and not (
        high is not None and (value >= high if high_open else value > high))
    if not inside:
        raise argparse.ArgumentTypeError(f"must be {expected}, got {text!r}")
    return value


def positive_int(text: str) -> int:
    """An integer flag >= 1 (``--n-boot``, ``--budget``, ``--raters``, ``--inputs-per-task`` …)."""
    return int(number_flag(text, integer=True, low=1))


def nonnegative_int(text: str) -> int:
    """An integer flag >= 0 (``--seed``)."""
    return int(number_flag(text, integer=True, low=0))


def finite_float(text: str) -> float:
    """A finite number (``--lam``)."""
    return float(number_flag(text, integer=False))


def positive_float(text: str) -> float:
    """A finite number > 0 (``--epsilon``)."""
    return float(number_flag(text, integer=False, low=0, low_open=True))


def fraction_open(text: str) -> float:
    """A number in (0, 1) (``--ci-level``, ``--uniform-prior``)."""
    return float(number_flag(text, integer=False, low=0, high=1, low_open=True, high_open=True))


def fraction_up_to_one(text: str) -> float:
    """A number in (0, 1] (``--alpha``)."""
    return float(number_flag(text, integer=False, low=0, high=1, low_open=True))


def fraction_below_one(text: str) -> float:
    """A number in [0, 1) (``--rater-error``)."""
    return float(number_flag(text, integer=False, low=0, high=1, high_open=True))
