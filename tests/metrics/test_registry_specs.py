"""One registry entry per metric holds everything about it: facts, batched kernel, per-pair reference, typed options.

The engine and the oracle tests read kernels and references from the spec (there is no second table); these tests
check that every entry is complete and that the typed options behave as documented (defaults, validation naming the
field, conversion from keyword parameters and from another options class).
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest

from neuroneval.metrics import (
    DEFAULTS,
    METRICS,
    MetricOptions,
    TopAlphaOptions,
    TopAndRandomOptions,
    WpmiOptions,
    get_spec,
    options_for,
    score,
    score_grid,
    score_pairs,
)
from neuroneval.metrics import reference as reference_module
from neuroneval.metrics.metric_options import COMMON_PARAMS
from neuroneval.options import OptionsError
from tests.metrics.conftest import make_activations, make_concepts, quiet_score


@pytest.mark.parametrize("metric", list(METRICS))
def test_every_registered_metric_has_kernel_reference_and_options(metric: str) -> None:
    spec = METRICS[metric]
    assert callable(spec.kernel) and spec.kernel.__module__.startswith("neuroneval.metrics.")
    oracle = reference_module.per_pair(metric)
    assert callable(oracle) and oracle.__module__ == reference_module.__name__ and oracle.__name__ == spec.reference
    assert isinstance(spec.options, type) and issubclass(spec.options, MetricOptions)
    defaults = spec.options()
    fields = [field.name for field in dataclasses.fields(defaults)]
    assert fields[:len(COMMON_PARAMS)] == list(COMMON_PARAMS)
    assert tuple(fields[len(COMMON_PARAMS):]) == spec.params
    assert all(getattr(defaults, name) == DEFAULTS[name] for name in fields)
    taken = set(inspect.signature(oracle).parameters) - {"a", "c"}
    if spec.is_sampled:  # given the sample, the hyper-parameters of the sampler do not enter
        assert taken == {"sample"}
    else:
        assert taken == set(spec.params) - {"top_alpha"}, "the reference takes the metric's hyper-parameters"
        for name in taken:  # the oracle restates the defaults (it imports nothing of the engine); they agree
            assert inspect.signature(oracle).parameters[name].default == getattr(defaults, name), name


def test_kernels_and_references_are_distinct_per_metric() -> None:
    assert len({spec.kernel for spec in METRICS.values()}) == len(METRICS)
    assert len({spec.reference for spec in METRICS.values()}) == len(METRICS)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    return make_activations(rng, 400), make_concepts(rng, 400)


@pytest.mark.parametrize("metric", [*METRICS, "hmean:auc+wpmi"])
def test_typed_options_give_the_keyword_results(metric: str) -> None:
    activations, concepts = _data()
    spec = get_spec(metric)
    keywords = {"seed": 4, "ties": "reference"}
    keywords |= {name: value for name, value in {"alpha": 0.05, "lam": 0.3, "tr_n_top": 7}.items()
                 if name in spec.params}
    by_keywords = quiet_score(score, metric, activations, concepts, **keywords)
    by_options = quiet_score(score, metric, activations, concepts, options=spec.options(**keywords))
    np.testing.assert_array_equal(by_options, by_keywords)
    pairs = np.array([[0, 1], [3, 2]])
    listed = quiet_score(score_pairs, metric, activations, concepts, pairs, options=spec.options(**keywords))
    np.testing.assert_allclose(listed, by_keywords[pairs[:, 0], pairs[:, 1]], rtol=1e-12, atol=1e-12)


def test_grid_points_replace_the_options_alpha() -> None:
    activations, concepts = _data()
    options = WpmiOptions(lam=0.5, ties="reference")
    grid = quiet_score(score_grid, "wpmi", activations, concepts, None, [{"alpha": 0.02}, {"alpha": 0.2, "lam": 0.0}],
                       options=options)
    np.testing.assert_array_equal(grid[0], quiet_score(score, "wpmi", activations, concepts, alpha=0.02, lam=0.5,
                                                       ties="reference"))
    np.testing.assert_array_equal(grid[1], quiet_score(score, "wpmi", activations, concepts, alpha=0.2, lam=0.0,
                                                       ties="reference"))


def test_options_of_another_class_convert_when_the_metric_takes_what_they_set() -> None:
    activations, concepts = _data()
    common = quiet_score(score, "correlation", activations, concepts, options=TopAlphaOptions(ties="reference"))
    np.testing.assert_array_equal(common, quiet_score(score, "correlation", activations, concepts, ties="reference"))
    with pytest.raises(OptionsError, match=r"takes no parameter\(s\) \['alpha'\]"):
        score("correlation", activations, concepts, options=TopAlphaOptions(alpha=0.1))
    assert options_for("iou", MetricOptions(seed=3)) == TopAlphaOptions(seed=3)


def test_options_and_keywords_are_not_combined() -> None:
    activations, concepts = _data()
    with pytest.raises(TypeError, match="not both"):
        score("iou", activations, concepts, options=TopAlphaOptions(), alpha=0.1)


@pytest.mark.parametrize(("build", "match"), [
    (lambda: TopAlphaOptions(alpha=0.0), r"TopAlphaOptions\.alpha must lie in \(0\.0, 1\.0\]"),
    (lambda: TopAlphaOptions(top_alpha="nearest"), r"TopAlphaOptions\.top_alpha must be one of"),
    (lambda: MetricOptions(ties="random"), r"MetricOptions\.ties must be one of"),
    (lambda: MetricOptions(seed=-1), r"MetricOptions\.seed must lie in"),
    (lambda: MetricOptions(seed=1.5), r"MetricOptions\.seed must be an integer"),
    (lambda: MetricOptions(memory_budget=10), r"MetricOptions\.memory_budget must be"),
    (lambda: TopAndRandomOptions(tr_n_top=1, tr_n_random=0), "at least 2 inputs"),
    (lambda: WpmiOptions(lam=float("nan")), r"WpmiOptions\.lam must be a finite"),
    (lambda: WpmiOptions.from_params({"lamda": 1.0}), "unknown option 'lamda'"),
])
def test_options_name_the_bad_field(build, match) -> None:
    with pytest.raises(OptionsError, match=match):
        build()


def test_options_are_frozen_hashable_and_normalise_numpy_scalars() -> None:
    options = TopAlphaOptions(alpha=np.float32(0.5), seed=np.int64(3))
    assert type(options.alpha) is float and type(options.seed) is int
    assert options == TopAlphaOptions(alpha=0.5, seed=3) and hash(options) == hash(TopAlphaOptions(alpha=0.5, seed=3))
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.alpha = 0.1  # type: ignore[misc]


@pytest.mark.parametrize("metric", ["hmean:auc+inverse_auc", "hmean:auc+wpmi", "hmean:correlation_tr+iou",
                                    "hmean:wpmi+spearman_tr", "hmean:correlation+mad"])
def test_a_combination_takes_the_union_of_its_parts_options(metric: str) -> None:
    spec = get_spec(metric)
    union = {name for part in spec.components for name in METRICS[part].params}
    assert set(spec.params) == union
    assert spec.kernel is None and spec.reference is None
