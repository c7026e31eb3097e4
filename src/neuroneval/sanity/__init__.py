"""Sanity tests of evaluation metrics: the Missing and Extra Labels tests of paper 000 (Sec. 4, App. C–E).

Modules
-------
perturb
    c⁻ (Eq. 9) and c⁺ (Eq. 12) with strengths r₋, r₊ (App. E.1); semantic sub/superclasses (App. E.3).
delta
    Normalised Δs (Eq. 10) with ranges from the metric registry, Decrease Acc (Eq. 11), increase fraction.
experimental
    The tests on a setting's correct (unit, concept) pairs (Sec. 4.3; draws per pair as App. E.5).
theoretical
    The tests on ideal binary neurons at activation frequencies γ (App. C), and the comparison with the
    published Tables C.1–C.4.
analytical
    Closed forms of the expected Δs on ideal neurons (App. D, Tables D.1–D.2, plus Pearson, cosine, AUPRC…).
"""

from neuroneval.sanity.analytical import analytical_table, decrease_probability, expected_delta
from neuroneval.sanity.delta import (
    DEFAULT_EPSILON,
    decrease_accuracy,
    increase_fraction,
    normalized_delta,
    summarize_deltas,
    value_span,
)
from neuroneval.sanity.experimental import experimental_deltas, experimental_draw_deltas, experimental_test
from neuroneval.sanity.perturb import (
    TESTS,
    extra_labels,
    missing_labels,
    perturb_labels,
    semantic_extra_labels,
    semantic_missing_labels,
)
from neuroneval.sanity.theoretical import PAPER_DRAWS, PAPER_GAMMAS, PAPER_N, theoretical_deltas, theoretical_test
from neuroneval.sanity.theoretical_reference import (
    compare_with_reference,
    load_theoretical_reference,
    seed_spread_with_reference,
)

__all__ = [
    "DEFAULT_EPSILON",
    "PAPER_DRAWS",
    "PAPER_GAMMAS",
    "PAPER_N",
    "TESTS",
    "analytical_table",
    "compare_with_reference",
    "decrease_accuracy",
    "decrease_probability",
    "expected_delta",
    "experimental_deltas",
    "experimental_draw_deltas",
    "experimental_test",
    "extra_labels",
    "increase_fraction",
    "load_theoretical_reference",
    "missing_labels",
    "normalized_delta",
    "perturb_labels",
    "seed_spread_with_reference",
    "semantic_extra_labels",
    "semantic_missing_labels",
    "summarize_deltas",
    "theoretical_deltas",
    "theoretical_test",
    "value_span",
]
