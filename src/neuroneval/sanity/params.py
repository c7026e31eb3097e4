"""Small helpers shared by the sanity tests: metric parameters, sampled metrics and derived engine seeds."""

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


def is_sampled(metric: str) -> bool:
    """Whether ``metric`` (or a component of an ``hmean:`` combination) draws a random top-and-random sample.

    Such metrics (``kind == "sampled"`` in the registry, e.g. ``correlation_tr``) give each draw of a sanity
    test its own sample, as in the authors' loop, so they are scored one draw at a time.

    >>> is_sampled("correlation_tr"), is_sampled("hmean:iou+spearman_tr"), is_sampled("iou")
    (True, True, False)
    """
    spec = get_spec(metric)
    return any(get_spec(part).is_sampled for part in (spec.components or (spec.name,)))


def derived_seed(*entropy: int) -> int:
    """A non-negative 32-bit seed derived from integers (``numpy.random.SeedSequence``), order-sensitive."""
    return int(np.random.SeedSequence([int(value) for value in entropy]).generate_state(1)[0])
