"""Cost-reduction factors at equal RCE and the cost at which a curve reaches an RCE level."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.crowd import cost_at_rce, cost_reduction_factor


def test_cost_factor_recovers_a_planted_shift():
    costs = np.array([10, 30, 100, 300, 1000, 3000], dtype=float)
    rng = np.random.default_rng(0)
    unit_scale = rng.uniform(0.5, 1.5, 40)
    baseline = unit_scale[None, :] * costs[:, None] ** -0.5
    method = unit_scale[None, :] * (10 * costs[:, None]) ** -0.5
    result = cost_reduction_factor(costs, baseline, method, n_boot=50)
    assert result["factor"] == pytest.approx(10.0, rel=1e-9)
    assert result["ci_low"] == pytest.approx(10.0, rel=1e-9)
    assert result["ci_high"] == pytest.approx(10.0, rel=1e-9)
    assert np.isnan(cost_at_rce(costs, baseline.mean(axis=1), 1.0))  # already below the target at the first cost
    assert np.isnan(cost_at_rce(costs, baseline.mean(axis=1), 1e-3))  # never reached
