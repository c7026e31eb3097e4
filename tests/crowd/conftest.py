"""Shared fixtures of the simulated-study tests: a planted world and its study tables at a small grid."""

from __future__ import annotations

import pytest

from tests.crowd.synthetic import planted_world, simulated_study_tables

#: A grid small enough for tests that still separates the methods.
SMALL = {
    "sample_sizes": (10, 30, 100, 300, 1000, 3000),
    "costs": (20, 60, 200, 600, 2000),
    "rater_counts": (1, 2, 3, 5),
    "n_trials": 6,
    "n_boot": 100,
}


@pytest.fixture(scope="session")
def world():
    return planted_world(n=4000, n_units=24, seed=11)


@pytest.fixture(scope="session")
def tables(world):
    return simulated_study_tables(
        world.activations,
        world.labels,
        world.pseudo_labels,
        unit_ids=world.unit_ids,
        concept_names=world.concept_names,
        **SMALL,
    )
