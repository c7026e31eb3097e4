"""Undefined cases of the metrics: their documented values and the once-per-call warning.

Every kernel that meets an undefined quantity (0/0, zero variance, log 0, a class with no members) replaces
it by the value documented in :func:`neuroneval.metrics.score` and records a short note. The engine emits
each distinct note once per call as a :class:`NeuronEvalWarning`, so a (1400 × 1400) score matrix with
hundreds of empty concepts produces one warning, not hundreds.
"""

from __future__ import annotations

import warnings
from typing import Any

from neuroneval.metrics.backend import Backend


class NeuronEvalWarning(UserWarning):
    """An undefined metric value was replaced by its documented convention (see ``score``)."""


class Notes:
    """Collects edge-case notes during one ``score``/``score_pairs`` call and warns once per note."""

    def __init__(self, metric: str) -> None:
        self.metric = metric
        self._messages: dict[str, None] = {}

    def messages(self) -> list[str]:
        """The notes recorded so far, in order."""
        return list(self._messages)

    def add(self, message: str) -> None:
        self._messages.setdefault(message, None)

    def check(self, be: Backend, condition: Any, message: str) -> bool:
        """Record ``message`` when any element of ``condition`` is true; returns whether it was."""
        hit = be.any(condition)
        if hit:
            self.add(message)
        return hit

    def emit(self, stacklevel: int = 3) -> None:
        for message in self._messages:
            warnings.warn(f"{self.metric}: {message}", NeuronEvalWarning, stacklevel=stacklevel)


def safe_divide(be: Backend, numerator: Any, denominator: Any, fill: float) -> Any:
    """``numerator / denominator`` with ``fill`` where the denominator is 0 (no floating-point warning)."""
    zero = denominator == 0
    safe = be.where(zero, 1.0, denominator)
    return be.where(zero, fill, numerator / safe)
