"""Small helpers shared by the sanity tests: metric parameters and derived engine seeds."""

from __future__ import annotations

from typing import Any

import numpy as np

from neuroneval.metrics import get_spec


def metric_params(metric: str, **candidates: Any) -> dict[str, Any]:
    """The subset of ``candidates`` (e.g. ``alpha``, ``lam``) that ``metric`` accepts, ``None`` values dropped.

    Metric-specific parameters are read from the registry (``MetricSpec.params``), so a caller can pass
    ``alpha``/``lam`` for every metric and each gets only what it takes.
    """
    accepted = set(get_spec(metric).params)
    return {name: value for name, value in candidates.items() if name in accepted and value is not None}


def derived_seed(*entropy: int) -> int:
    """A non-negative 32-bit seed derived from integers (``numpy.random.SeedSequence``), order-sensitive."""
    return int(np.random.SeedSequence([int(value) for value in entropy]).generate_state(1)[0])
