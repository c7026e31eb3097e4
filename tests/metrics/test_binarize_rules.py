"""``binarize.top_alpha`` dispatches on the rule's value, not its identity or sort order (mutation survivors)."""

from __future__ import annotations

import numpy as np
import pytest

from neuroneval.metrics.backend import NumpyBackend
from neuroneval.metrics.binarize import AT_LEAST_KTH, EXACTLY_K, top_alpha

VALUES = np.array([[0.1, 0.5, 0.5, 0.9, 0.2]])


def runtime_string(text: str) -> str:
    """An equal string built at run time (not the interned literal), as a rule read from params.yaml is."""
    return "".join(list(text))


@pytest.mark.parametrize(("rule", "expected"), [(AT_LEAST_KTH, [0, 1, 1, 1, 0]), (EXACTLY_K, [0, 0, 1, 1, 0])])
def test_a_rule_equal_to_the_constant_but_not_identical_selects_the_same_inputs(rule, expected) -> None:
    rule_read = runtime_string(rule)
    assert rule_read == rule and rule_read is not rule
    np.testing.assert_array_equal(top_alpha(NumpyBackend(), VALUES, 0.4, rule_read), [expected])


@pytest.mark.parametrize("rule", ["", "all", "at_most_k", "exactly", "exactly_k ", "z"])
def test_an_unknown_rule_is_an_error_wherever_it_sorts(rule) -> None:
    with pytest.raises(ValueError, match="top_alpha must be one of"):
        top_alpha(NumpyBackend(), VALUES, 0.6, rule)
