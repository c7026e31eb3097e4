"""Units of a simulated study and their explanations (Eq. 9–10), on a planted world."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from neuroneval.crowd import select_explanations


def test_explanations_maximise_correlation(world):
    units = select_explanations(
        world.activations, world.labels, unit_ids=world.unit_ids, concept_names=world.concept_names
    )
    for k, unit in enumerate(units.unit_ids):
        column = world.unit_ids.index(unit)
        a = world.activations[:, column]
        rhos = [stats.pearsonr(a, world.labels[:, t])[0] if world.labels[:, t].any() else 0.0 for t in range(48)]
        assert units.concept_names[k] == world.concept_names[int(np.argmax(rhos))]
        assert units.rho_true[k] == pytest.approx(max(rhos), abs=1e-9)
        assert units.rho_true[k] >= 0.1
    subset = select_explanations(world.activations, world.labels, unit_ids=world.unit_ids, max_units=5)
    reversed_subset = select_explanations(
        world.activations[:, ::-1], world.labels, unit_ids=world.unit_ids[::-1], max_units=5
    )
    assert set(subset.unit_ids) == set(reversed_subset.unit_ids)
    with pytest.raises(ValueError, match="binary"):
        select_explanations(world.activations, world.pseudo_labels)
