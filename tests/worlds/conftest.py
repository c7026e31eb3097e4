"""Shared vision worlds for the world tests (built once per session)."""

import pytest

from neuroneval.worlds import build_vision_world


@pytest.fixture(scope="session")
def large_world():
    """The default world at N = 20,000 probe images: the size the positive-rate contract is stated for."""
    return build_vision_world(20_000, seed=0, split="probe", progress=False)


@pytest.fixture(scope="session")
def small_world():
    """A small default world for structural checks."""
    return build_vision_world(400, seed=3, split="train")
