"""Per-unit relative errors of simulated studies (Eq. 11–13): each unit's randomness is its own."""

from __future__ import annotations

import dataclasses

import numpy as np

from neuroneval.crowd import SamplingOptions, SimulationOptions, sampling_errors, select_explanations


def test_unit_results_do_not_depend_on_other_units(world):
    units = select_explanations(world.activations, world.labels, world.pseudo_labels, unit_ids=world.unit_ids)
    order = np.arange(len(units.unit_ids))[::-1][:5]
    subset = dataclasses.replace(
        units,
        unit_ids=tuple(units.unit_ids[k] for k in order),
        concept_names=tuple(units.concept_names[k] for k in order),
        activations=units.activations[:, order],
        labels=units.labels[:, order],
        pseudo_labels=units.pseudo_labels[:, order],
        rho_true=units.rho_true[order],
        unit_keys=units.unit_keys[order],
    )
    options = SamplingOptions(sample_sizes=(20, 50), rater_error=0.1, simulation=SimulationOptions(n_trials=3, seed=4))
    full = sampling_errors(units, options)["errors"]
    part = sampling_errors(subset, options)["errors"]
    np.testing.assert_array_equal(part, full[..., order])
