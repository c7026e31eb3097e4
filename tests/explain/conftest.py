"""Synthetic probing data with planted truth, shared by the method tests; the fake chat server of the LLM tests."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from neuroneval.explain import ProbingData
from tests.explain.fake_chat import serve_fake_chat


@pytest.fixture
def server() -> Iterator[str]:
    """Base URL of a :class:`tests.explain.fake_chat.FakeChat` server on 127.0.0.1, stopped after the test."""
    with serve_fake_chat() as url:
        yield url


@pytest.fixture(scope="session")
def binary_world() -> tuple[np.ndarray, list[str]]:
    """2,000 inputs × 24 independent 0/1 concepts with 3–12 % positives."""
    rng = np.random.default_rng(7)
    rates = np.linspace(0.03, 0.12, 24)
    concepts = (rng.random((2000, 24)) < rates).astype(np.float64)
    return concepts, [f"c{t}" for t in range(24)]


@pytest.fixture(scope="session")
def probing(binary_world) -> ProbingData:
    concepts, names = binary_world
    return ProbingData.build(concepts, names)
