"""Degenerate units and small top fractions (metrics.unit_checks) against brute-force definitions."""

import warnings

import numpy as np
import pandas as pd
import pytest

from neuroneval.metrics import NeuronEvalWarning
from neuroneval.metrics.unit_checks import (
    DegenerateUnitWarning,
    SmallProbeSetWarning,
    UnitCheckOptions,
    degenerate_units,
    flag_degenerate_rows,
    small_top_fractions,
    warn_small_probe_set,
)
from neuroneval.options import OptionsError


def _varying_inputs_by_loop(column: np.ndarray) -> int:
    """v = min(#inputs off the floor, #inputs off the ceiling), one input at a time."""
    floor, ceiling = min(column), max(column)
    return min(sum(value != floor for value in column), sum(value != ceiling for value in column))


def _matrix() -> np.ndarray:
    rng = np.random.default_rng(3)
    n = 60
    relu = np.maximum(rng.normal(size=(n, 4)), 0)
    dead = np.zeros((n, 2))
    dead[:, 1] = -0.7  # constant, not at zero
    rare = np.zeros((n, 2))
    rare[[5, 17], 0] = [1.0, 2.0]  # active on 2 inputs
    rare[:, 1] = 3.0
    rare[[9], 1] = 1.0  # saturated at its ceiling but on one input
    few = np.zeros((n, 1))
    few[:6, 0] = np.arange(1, 7)  # active on 6 inputs: ok at the default of 5
    return np.hstack([relu, dead, rare, few])


def test_status_follows_the_definition_with_np_ptp_and_a_loop_as_oracle() -> None:
    matrix = _matrix()
    names = [f"u{k}" for k in range(matrix.shape[1])]
    units = degenerate_units(matrix, names)
    expected_varying = [_varying_inputs_by_loop(matrix[:, k]) for k in range(matrix.shape[1])]
    assert units.varying_inputs.tolist() == expected_varying
    np.testing.assert_array_equal(units.constant, np.ptp(matrix, axis=0) == 0)
    assert units.names("constant") == ["u4", "u5"]
    assert units.names("near_dead") == ["u6", "u7"]
    assert units.status == ["ok"] * 4 + ["constant"] * 2 + ["near_dead"] * 2 + ["ok"]
    assert units.names() == ["u4", "u5", "u6", "u7"]
    stricter = degenerate_units(matrix, names, options=UnitCheckOptions(min_varying_inputs=7))
    assert stricter.names("near_dead") == ["u6", "u7", "u8"]
    only_constant = degenerate_units(matrix, names, options=UnitCheckOptions(min_varying_inputs=1))
    assert only_constant.names() == ["u4", "u5"]


def test_a_unit_varying_on_half_a_tiny_probe_set_is_not_near_dead() -> None:
    matrix = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.5, 0.0]])  # 4 inputs: v = 2 and 0
    units = degenerate_units(matrix, ["half", "flat"])
    assert units.varying_threshold == 2
    assert units.status == ["ok", "constant"]


def test_warning_names_the_first_units_and_the_count() -> None:
    matrix = np.hstack([np.zeros((20, 8)), np.arange(20.0)[:, None]])
    units = degenerate_units(matrix, [f"dead{k}" for k in range(8)] + ["alive"])
    with pytest.warns(DegenerateUnitWarning, match=r"8 constant unit\(s\) \(dead0, dead1, dead2, dead3, dead4 and "
                                                   r"3 more\) of 9 over 20 inputs: they are skipped"):
        units.warn("they are skipped")
    assert issubclass(DegenerateUnitWarning, NeuronEvalWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        degenerate_units(np.arange(40.0).reshape(20, 2)).warn("nothing to say")


def test_flag_degenerate_rows_adds_the_column_and_keeps_the_values() -> None:
    matrix = np.column_stack([np.zeros(10), np.arange(10.0)])
    units = degenerate_units(matrix, ["dead", "alive"])
    tidy = pd.DataFrame({"unit": ["dead", "dead", "alive", "alive"], "concept": ["a", "b", "a", "b"],
                         "score": [0.5, 0.1, 0.2, 0.3]})
    with pytest.warns(DegenerateUnitWarning, match=r"\(dead\)"):
        flagged = flag_degenerate_rows(tidy, units, consequence="flagged")
    assert flagged["degenerate"].tolist() == [True, True, False, False]
    pd.testing.assert_frame_equal(flagged[tidy.columns], tidy)


@pytest.mark.parametrize(("bad", "message"), [
    (np.zeros((0, 2)), "no inputs"),
    (np.zeros(5), "must be \\(inputs, units\\)"),
    (np.array([[0.0, np.nan], [1.0, 2.0]]), "unit '1' are not all finite"),
])
def test_bad_activations_are_named(bad: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        degenerate_units(bad)


def test_options_are_checked() -> None:
    with pytest.raises(OptionsError, match="min_varying_inputs"):
        UnitCheckOptions(min_varying_inputs=0)
    with pytest.raises(OptionsError, match="min_top_inputs"):
        UnitCheckOptions.from_params({"min_top_inputs": 2.5})


def test_small_probe_set_warning_fires_below_ten_selected_inputs() -> None:
    # 719 digits: α = 0.005 selects 3.6 inputs, α = 0.05 selects 36
    with pytest.warns(SmallProbeSetWarning, match=r"score: alpha = 0.005 → 3.6 of n = 719 inputs, fewer than 10"):
        assert warn_small_probe_set(719, "alpha", 0.005, where="score") == [0.005]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert warn_small_probe_set(719, "alpha", 0.05, where="score") == []
    grid = [0.0001, 0.005, 0.01, 0.02, 0.5]
    assert small_top_fractions(719, grid) == [f for f in grid if f * 719 < 10]
    assert small_top_fractions(719, grid, options=UnitCheckOptions(min_top_inputs=1)) == [0.0001]
