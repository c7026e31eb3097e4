"""Edges of the crowd estimator (mutation survivors): σ_S at |S| − ddof = 0 and correlation_matrix's shape check."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from neuroneval.crowd.estimator import correlation_matrix, weighted_std


@pytest.mark.parametrize(("values", "ddof"), [([2.0], 1), ([1.0, 3.0], 2)])
def test_weighted_std_is_nan_without_a_warning_when_no_degree_of_freedom_is_left(values, ddof) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = weighted_std(np.array(values), np.ones(len(values)), ddof=ddof)
    assert np.isnan(result)


def test_weighted_std_with_one_degree_of_freedom_left_is_the_sample_std() -> None:
    values = np.array([1.0, 3.0])
    assert float(weighted_std(values, np.ones(2), ddof=1)) == pytest.approx(np.std(values, ddof=1))


@pytest.mark.parametrize(("activation_rows", "concept_rows"), [(5, 4), (4, 5)])
def test_correlation_matrix_refuses_tables_of_different_lengths(activation_rows, concept_rows) -> None:
    with pytest.raises(ValueError, match="equal n"):
        correlation_matrix(np.zeros((activation_rows, 2)), np.zeros((concept_rows, 3)))
