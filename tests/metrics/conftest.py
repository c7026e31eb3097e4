"""Shared data for the metric-engine tests: ties, constant columns, imbalanced and empty concepts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neuroneval.metrics import METRICS, NeuronEvalWarning


def metric_params(metric: str, alpha: float = 0.03) -> dict[str, float]:
    """Metric-specific parameters used throughout the tests (α where the metric takes it; λ for WPMI)."""
    params: dict[str, float] = {}
    if "alpha" in METRICS[metric].params:
        params["alpha"] = alpha
    if "lam" in METRICS[metric].params:
        params["lam"] = 0.7
    return params


def make_activations(rng: np.random.Generator, n: int) -> np.ndarray:
    """Columns: rounded normal (ties), ReLU (many zeros), constant, binary, heavy ties at the top, float32 noise."""
    columns = [
        np.round(rng.standard_normal(n), 1),
        np.maximum(np.round(rng.standard_normal(n), 2), 0.0),
        np.full(n, 0.7),
        (rng.random(n) < 0.2).astype(float),
        np.minimum(np.round(rng.standard_normal(n), 1), 1.0),
        rng.standard_normal(n).astype(np.float32).astype(float),
    ]
    return np.column_stack(columns)


def make_concepts(rng: np.random.Generator, n: int) -> np.ndarray:
    """Columns: rounded probabilities (ties), binary γ = 0.3, 0.01, 3/n, all 0, all 1, constant 0.3, sigmoid."""
    rare = np.zeros(n)
    rare[rng.choice(n, size=3, replace=False)] = 1.0
    columns = [
        np.round(rng.random(n), 2),
        (rng.random(n) < 0.3).astype(float),
        (rng.random(n) < 0.01).astype(float),
        rare,
        np.zeros(n),
        np.ones(n),
        np.full(n, 0.3),
        np.round(1.0 / (1.0 + np.exp(-3.0 * rng.standard_normal(n) + 4.0)), 3),
    ]
    return np.column_stack(columns)


@pytest.fixture(scope="session")
def tricky_data() -> tuple[np.ndarray, np.ndarray]:
    """(activations (1500, 6), concepts (1500, 8)) exercising every documented edge case."""
    rng = np.random.default_rng(20250611)
    n = 1500
    return make_activations(rng, n), make_concepts(rng, n)


def quiet_score(function, *args, **kwargs):
    """Call a scoring function with the engine's edge-case warnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NeuronEvalWarning)
        return function(*args, **kwargs)


def scored_with_notes(metric: str, activations: np.ndarray, concepts: np.ndarray, **params) -> tuple[np.ndarray,
                                                                                                          list[str]]:
    """The engine's scores of every pair and the messages of the NeuronEvalWarnings it raised on the way."""
    from neuroneval.metrics import NeuronEvalWarning, score

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuronEvalWarning)
        scores = np.asarray(score(metric, activations, concepts, **params))
    return scores, [str(warning.message) for warning in caught if issubclass(warning.category, NeuronEvalWarning)]


def per_pair_matrix(metric: str, activations: np.ndarray, concepts: np.ndarray, **params) -> np.ndarray:
    """The (K, C) scores of the per-pair reference (``neuroneval.metrics.reference``), one loop iteration a pair."""
    from neuroneval.metrics.reference import per_pair

    return np.array([[per_pair(metric)(activations[:, k], concepts[:, t], **params)
                      for t in range(concepts.shape[1])] for k in range(activations.shape[1])])


def warning_notes(function, *args, **kwargs) -> tuple[object, set[str]]:
    """``function(*args, **kwargs)`` and the messages of the NeuronEvalWarnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", NeuronEvalWarning)
        result = function(*args, **kwargs)
    return result, {str(w.message) for w in caught if issubclass(w.category, NeuronEvalWarning)}
